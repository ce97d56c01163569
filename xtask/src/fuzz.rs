//! `cargo xtask fuzz`: the fuzz targets (doris-sql's parsers, the FE's `/api/backends` and
//! `_query_plan` answers, Stream Load's load and 2PC answers with the exactly-once step
//! decided after each) from their kept seeds and what earlier runs on this machine found,
//! for a bounded time, with a new random seed each run (printed; `DAFT_DORIS_FUZZ_SEED`
//! replays it).

use crate::run::{cargo, root, step};

/// Where the inputs fuzzing finds are kept between runs on this machine (outside the
/// checkout; `DAFT_DORIS_FUZZ_CORPUS` moves it).
const KEPT_CORPUS: &str = "/var/tmp/daft-doris-fuzz-corpus";

/// The fuzz targets of `fuzz`.
pub(crate) const FUZZ_TARGETS: [&str; 7] = [
    "doris_type",
    "show_create",
    "trusted_where",
    "backends_answer",
    "plan_answer",
    "load_answer",
    "two_phase_answer",
];

/// The flags `cargo fuzz build` gives rustc by default (cargo-fuzz 0.13: libFuzzer's
/// coverage instrumentation, `--cfg fuzzing`, AddressSanitizer, one codegen unit), so the
/// targets build with plain cargo and no cargo-fuzz has to be installed (its build took
/// ~50 s of every cold CI run).
const FUZZ_RUSTFLAGS: &str = "-Cpasses=sancov-module \
    -Cllvm-args=-sanitizer-coverage-level=4 \
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
    -Cllvm-args=-sanitizer-coverage-pc-table \
    -Cllvm-args=-sanitizer-coverage-trace-compares \
    --cfg fuzzing \
    -Cllvm-args=-simplifycfg-branch-fold-threshold=0 \
    -Zsanitizer=address \
    -Cllvm-args=-sanitizer-coverage-stack-depth \
    -Ccodegen-units=1";

/// The fuzz builds' own folder: sanitizer flags would invalidate the shared one.
fn fuzz_target_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(format!("{}-fuzz", crate::run::shared_target().display()))
}

/// The host's target triple (`rustc -vV`): the fuzz build names it, so that build scripts
/// and proc macros are built without the instrumentation.
fn host_triple() -> Result<String, String> {
    let out = std::process::Command::new("rustc")
        .arg("-vV")
        .output()
        .map_err(|e| format!("rustc -vV: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned)
        .ok_or_else(|| "rustc -vV names no host".to_owned())
}

/// `cargo build` of every fuzz target, as `cargo fuzz build` does it.
fn fuzz_build(triple: &str) -> std::process::Command {
    let mut cmd = cargo();
    cmd.current_dir(root().join("fuzz"))
        // The sanitizer flag is unstable; the machine's one toolchain is stable.
        .env("RUSTC_BOOTSTRAP", "1")
        .env(
            "RUSTFLAGS",
            FUZZ_RUSTFLAGS
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        )
        .env("CARGO_TARGET_DIR", fuzz_target_dir())
        // The fuzz crate is a workspace of its own: no clippy-driver (from
        // `.cargo/config.toml`) under the sanitizer flags; an empty value means none.
        .env("RUSTC_WORKSPACE_WRAPPER", "")
        .args(["build", "--release", "--bins", "--target", triple])
        .args(["--config", "profile.release.debug=\"line-tables-only\""]);
    cmd
}

/// Builds every fuzz target, its output in a log file shown only on failure: `cargo xtask
/// ci` runs it beside the soak, which mostly waits.
pub(crate) fn build_targets() -> Result<(), String> {
    let log = std::env::temp_dir().join("daft-doris-fuzz-build.log");
    let file = std::fs::File::create(&log)
        .map_err(|e| format!("fuzz: cannot create {}: {e}", log.display()))?;
    let copy = file
        .try_clone()
        .map_err(|e| format!("fuzz: cannot write {}: {e}", log.display()))?;
    let mut cmd = fuzz_build(&host_triple()?);
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

/// Runs every target for `seconds` (default 30) from its seeds and the kept corpus, one
/// after another (each libFuzzer process takes a core for its whole time; `cargo xtask ci`
/// runs them beside the bench harness and `dist`, which mostly wait). Every target runs;
/// the first failure is the result.
pub(crate) fn fuzz(seconds: Option<&str>) -> Result<(), String> {
    let seconds: u32 = seconds
        .unwrap_or("30")
        .parse()
        .map_err(|_| "fuzz takes a number of seconds per target".to_owned())?;
    let triple = host_triple()?;
    // A no-op when `build_targets` ran (`cargo xtask ci`); by hand, the build.
    step("fuzz: the targets' build", fuzz_build(&triple))?;
    let binaries = fuzz_target_dir().join(&triple).join("release");
    // A new seed each run, so CI explores further every time; printed, and taken from
    // `DAFT_DORIS_FUZZ_SEED` to replay a run.
    let seed = crate::run::seed_from("DAFT_DORIS_FUZZ_SEED");
    println!("fuzz: seed {seed} (replay: DAFT_DORIS_FUZZ_SEED={seed} cargo xtask fuzz {seconds})");
    // What runs find is kept outside the checkout, per machine, and read by the next run.
    let kept_root = std::env::var_os("DAFT_DORIS_FUZZ_CORPUS").map_or_else(
        || std::path::PathBuf::from(KEPT_CORPUS),
        std::path::PathBuf::from,
    );
    let run = Run {
        binaries,
        kept_root,
        seconds,
        seed,
    };
    let results: Vec<Result<(), String>> = FUZZ_TARGETS
        .iter()
        .map(|target| run.target(target))
        .collect();
    results.into_iter().collect()
}

/// What every target's run shares.
struct Run {
    binaries: std::path::PathBuf,
    kept_root: std::path::PathBuf,
    seconds: u32,
    seed: u32,
}

impl Run {
    /// One target for the run's time; the end of its log shown (all of it on a failure).
    fn target(&self, target: &str) -> Result<(), String> {
        let (seconds, seed) = (self.seconds, self.seed);
        // New inputs go to the kept corpus (libFuzzer writes into its first folder); the
        // seeds in the repository (`fuzz/seeds/<target>`) are read only, so a run never
        // changes the checkout. A crash's input goes to a scratch folder (printed).
        let scratch =
            std::env::temp_dir().join(format!("daft-doris-fuzz-{target}-{}", std::process::id()));
        let kept = self.kept_root.join(target);
        for dir in [&scratch, &kept] {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("fuzz: cannot create {}: {e}", dir.display()))?;
        }
        let seeds = root().join("fuzz").join("seeds").join(target);
        let mut cmd = std::process::Command::new(self.binaries.join(target));
        cmd.arg(&kept)
            .arg(&seeds)
            .arg(format!("-artifact_prefix={}/", scratch.display()))
            .args([
                &format!("-max_total_time={seconds}"),
                &format!("-seed={seed}"),
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
        // One print, so two lanes' lines do not interleave.
        let tail: String = lines[lines.len().saturating_sub(shown)..]
            .iter()
            .map(|line| format!("    {target}: {line}\n"))
            .collect();
        print!("{tail}");
        if result.is_ok() {
            let _ = std::fs::remove_dir_all(&scratch);
        }
        result
    }
}
