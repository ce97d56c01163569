//! Developer automation for the daft-doris workspace.
//!
//! ```text
//! cargo xtask ci                 fmt check, clippy -D warnings, every Rust test, rustdoc -D warnings
//! cargo xtask demo               the main job on the embedded default (see README)
//! cargo xtask bench [--quick]    release-mode benchmarks (today: the emulator's ingest rate)
//! cargo xtask fuzz [SECONDS]     build and run every doris-sql fuzz target (needs cargo-fuzz)
//! ```
//!
//! Every step runs with the caller's `CARGO_TARGET_DIR`, so CI and a developer's session
//! share one warm build folder outside the checkout.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

/// The fuzz targets of `crates/doris-sql/fuzz`.
const FUZZ_TARGETS: [&str; 3] = ["doris_type", "show_create", "trusted_where"];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("demo") => demo(),
        Some("fuzz") => fuzz(args.get(1).map(String::as_str)),
        Some("bench") => bench(args.iter().any(|a| a == "--quick")),
        _ => {
            eprintln!("usage: cargo xtask <ci | demo | bench [--quick] | fuzz [SECONDS]>");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (the parent of this crate's folder).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

/// Runs one step, printing its name and duration; a failing step stops the run.
fn step(name: &str, mut cmd: Command) -> Result<(), String> {
    println!("==> {name}");
    let started = Instant::now();
    let status = cmd
        .status()
        .map_err(|e| format!("{name}: could not start: {e}"))?;
    println!("<== {name}: {:.1}s", started.elapsed().as_secs_f64());
    if status.success() {
        Ok(())
    } else {
        Err(format!("{name} failed ({status})"))
    }
}

/// Runs a `cargo test` step, echoing its output and adding up its `test result:` lines.
fn counted_step(name: &str, mut cmd: Command) -> Result<(u64, u64), String> {
    use std::io::{BufRead, BufReader};
    println!("==> {name}");
    let started = Instant::now();
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("{name}: could not start: {e}"))?;
    let (mut passed, mut failed) = (0, 0);
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            println!("{line}");
            if let Some(rest) = line.strip_prefix("test result: ") {
                let count = |word: &str| {
                    rest.split(';')
                        .find_map(|part| part.trim().strip_suffix(word))
                        .and_then(|n| n.trim().rsplit(' ').next()?.parse::<u64>().ok())
                        .unwrap_or(0)
                };
                passed += count(" passed");
                failed += count(" failed");
            }
        }
    }
    let status = child.wait().map_err(|e| format!("{name}: {e}"))?;
    println!("<== {name}: {:.1}s", started.elapsed().as_secs_f64());
    if status.success() {
        Ok((passed, failed))
    } else {
        Err(format!(
            "{name} failed ({status}); {passed} passed, {failed} failed"
        ))
    }
}

fn ci() -> Result<(), String> {
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--check"]);
    step("rustfmt", fmt)?;
    let mut clippy = cargo();
    clippy.args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]);
    step("clippy", clippy)?;
    let mut doc = cargo();
    doc.args(["doc", "--workspace", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings");
    step("rustdoc (broken links and markup are errors)", doc)?;
    let mut test = cargo();
    test.args(["test", "--workspace"]);
    let (passed, failed) = counted_step("rust tests", test)?;
    // One closing line that CI reads, whatever runner produced the counts.
    println!("tests: {passed} passed, {failed} failed");
    if failed > 0 {
        return Err(format!("{failed} tests failed"));
    }
    Ok(())
}

fn demo() -> Result<(), String> {
    // Until the emulator and the Python package exist, the demo shows the part of the main
    // job that does exist: how a Daft filter becomes the Doris statement a read task runs.
    let mut example = cargo();
    example.args(["run", "--quiet", "-p", "doris-sql", "--example", "pushdown"]);
    step("demo: doris-sql pushdown", example)
}

fn bench(quick: bool) -> Result<(), String> {
    // Release builds get their own folder so they never evict the debug test build.
    let shared = std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| "/var/tmp/daft-doris-target".to_owned());
    let (rows, runs) = if quick {
        ("200000", "3")
    } else {
        ("1000000", "5")
    };
    let mut ingest = cargo();
    ingest
        .env("CARGO_TARGET_DIR", format!("{shared}-release"))
        .args([
            "run",
            "--quiet",
            "--release",
            "-p",
            "doris-emulator",
            "--bin",
            "ingest-bench",
            "--",
        ])
        .args(["--rows", rows, "--runs", runs]);
    step("bench: emulator Arrow ingest", ingest)
}

fn fuzz(seconds: Option<&str>) -> Result<(), String> {
    let seconds: u32 = seconds
        .unwrap_or("30")
        .parse()
        .map_err(|_| "fuzz takes a number of seconds per target".to_owned())?;
    let fuzz_dir = root().join("crates/doris-sql/fuzz");
    // Sanitizer flags would invalidate the shared build folder: fuzz builds get their own.
    let shared = std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| "/var/tmp/daft-doris-target".to_owned());
    let fuzz_target_dir = format!("{shared}-fuzz");
    for target in FUZZ_TARGETS {
        let mut cmd = cargo();
        cmd.current_dir(&fuzz_dir)
            // cargo-fuzz passes nightly -Z flags; the machine's one toolchain is stable.
            .env("RUSTC_BOOTSTRAP", "1")
            .env("CARGO_TARGET_DIR", &fuzz_target_dir)
            .args([
                "fuzz",
                "run",
                target,
                "--",
                &format!("-max_total_time={seconds}"),
            ]);
        step(&format!("fuzz {target} for {seconds}s"), cmd)?;
    }
    Ok(())
}
