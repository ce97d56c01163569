//! `cargo xtask fuzz`: the doris-sql fuzz targets from their kept seeds, for a bounded time.

use crate::run::{cargo, root, step};

/// The fuzz targets of `crates/doris-sql/fuzz`.
pub(crate) const FUZZ_TARGETS: [&str; 3] = ["doris_type", "show_create", "trusted_where"];

/// `cargo fuzz <verb>` in the fuzz crate, with its build folder and environment.
fn cargo_fuzz(verb: &str) -> std::process::Command {
    // Sanitizer flags would invalidate the shared build folder: fuzz builds get their own.
    let fuzz_target_dir = format!("{}-fuzz", crate::run::shared_target().display());
    let mut cmd = cargo();
    cmd.current_dir(root().join("crates/doris-sql/fuzz"))
        // cargo-fuzz passes nightly -Z flags; the machine's one toolchain is stable.
        .env("RUSTC_BOOTSTRAP", "1")
        .env("CARGO_TARGET_DIR", fuzz_target_dir)
        // The fuzz crate is a workspace of its own: no clippy-driver (from
        // `.cargo/config.toml`) under the sanitizer flags; an empty value means none.
        .env("RUSTC_WORKSPACE_WRAPPER", "")
        .arg("fuzz")
        .arg(verb);
    cmd
}

/// Builds every fuzz target (as `cargo fuzz run` would), its output in a log file shown
/// only on failure: `cargo xtask ci` runs it beside the soak, which mostly waits.
pub(crate) fn build_targets() -> Result<(), String> {
    let log = std::env::temp_dir().join("daft-doris-fuzz-build.log");
    let file = std::fs::File::create(&log)
        .map_err(|e| format!("fuzz: cannot create {}: {e}", log.display()))?;
    let copy = file
        .try_clone()
        .map_err(|e| format!("fuzz: cannot write {}: {e}", log.display()))?;
    let mut cmd = cargo_fuzz("build");
    cmd.stdout(copy).stderr(file);
    let started = std::time::Instant::now();
    let status = cmd
        .status()
        .map_err(|e| format!("fuzz build: could not start: {e}"))?;
    crate::run::finished("fuzz: build every target (beside the soak)", started);
    if status.success() {
        Ok(())
    } else {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        Err(format!(
            "the fuzz targets did not build ({status}):\n{text}"
        ))
    }
}

pub(crate) fn fuzz(seconds: Option<&str>) -> Result<(), String> {
    let seconds: u32 = seconds
        .unwrap_or("30")
        .parse()
        .map_err(|_| "fuzz takes a number of seconds per target".to_owned())?;
    let fuzz_dir = root().join("crates/doris-sql/fuzz");
    for target in FUZZ_TARGETS {
        // New inputs go to a scratch corpus; the kept seeds (`fuzz/seeds/<target>`, in the
        // repository) are read only, so a run never changes the checkout.
        let scratch =
            std::env::temp_dir().join(format!("daft-doris-fuzz-{target}-{}", std::process::id()));
        std::fs::create_dir_all(&scratch)
            .map_err(|e| format!("fuzz: cannot create {}: {e}", scratch.display()))?;
        let seeds = fuzz_dir.join("seeds").join(target);
        let mut cmd = cargo_fuzz("run");
        cmd.arg(target)
            .arg(&scratch)
            .arg(&seeds)
            // A fixed seed: a run of one commit explores the same inputs every time, so CI
            // does not pass or fail by luck (a longer run by hand reaches further).
            .args([
                "--",
                &format!("-max_total_time={seconds}"),
                "-seed=20261201",
            ]);
        // libFuzzer reports every new input; the log is kept aside and its end shown.
        let log = std::env::temp_dir().join(format!("daft-doris-fuzz-{target}.log"));
        let file = std::fs::File::create(&log)
            .map_err(|e| format!("fuzz: cannot create {}: {e}", log.display()))?;
        let copy = file
            .try_clone()
            .map_err(|e| format!("fuzz: cannot write {}: {e}", log.display()))?;
        cmd.stdout(copy).stderr(file);
        let result = step(&format!("fuzz {target} for {seconds}s"), cmd);
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let shown = if result.is_ok() { 3 } else { 80 };
        for line in &lines[lines.len().saturating_sub(shown)..] {
            println!("    {line}");
        }
        let _ = std::fs::remove_dir_all(&scratch);
        result?;
    }
    Ok(())
}
