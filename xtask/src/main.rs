//! Developer automation for the daft-doris workspace.
//!
//! ```text
//! cargo xtask ci                 (every emulator logging what it receives) fmt, the test build (clippy -D warnings in it), deps, tested-by, Rust tests (the conformance suite against an emulator process), ruff, pytest (3.11; rustdoc -D warnings and package beside it; the API tests on 3.12 and 3.13), soak, fuzz, bench --quick, wire-check
//! cargo xtask demo               the main job on the embedded default (see README)
//! cargo xtask dist [--release] [--manylinux 2_28]   the abi3 manylinux wheel (zig for an older glibc) and the sdist, checked; the wheel installed into a fresh venv without Rust, running the main job
//! cargo xtask bench [--quick]    benchmarks vs the reference connector and the peers (docs/benchmarks.md),
//!                                then split reads on N simulated BEs (docs/scaling.md)
//! cargo xtask bench --scaling    only the simulated-BE scaling benchmark (release builds)
//! cargo xtask fuzz [SECONDS]     build and run every fuzz target (doris-sql's parsers; the FE's, Stream Load's and 2PC answers; libFuzzer, no cargo-fuzz needed)
//! cargo xtask faults             every emulator fault against every operation → docs/reliability.md
//! cargo xtask other-pythons     the API's tests on Python 3.12 and 3.13 (where the machine has them)
//! cargo xtask soak [--minutes N] [--out DIR]   reads and writes side by side under random faults (docs/reliability.md)
//! cargo xtask conformance        the corpus from Doris's regression suites, then tests/conformance through DORIS_TEST_* (a real Doris, or an emulator process)
//! cargo xtask deps               the layering rules: which crates each library may depend on
//! cargo xtask tested-by          every test and file a document's *Tested by* line names exists
//! cargo xtask wire-check [DIR]   the request shapes the crates sent (the last ci's wire log) are in docs/wire-inventory.md
//! cargo xtask package            the five library crates packaged as crates.io would receive them, then `cargo publish --dry-run` (each built from its package)
//! cargo xtask mutants            mutation testing of the injection- and label-critical code
//! ```
//!
//! Every step runs with the caller's `CARGO_TARGET_DIR`, so CI and a developer's session
//! share one warm build folder outside the checkout.

mod bench;
mod conformance;
mod demo;
mod dist;
mod feature_parity;
mod fuzz;
mod layering;
mod mutants;
mod publish;
mod python;
mod run;
mod tested_by;
mod wire;

use std::process::{Command, ExitCode};

use crate::bench::bench;
use crate::conformance::conformance;
use crate::demo::demo;
use crate::dist::dist;
use crate::fuzz::fuzz;
use crate::layering::deps;
use crate::mutants::mutants;
use crate::publish::package;
use crate::python::{install_python_package, other_python_tests, python};
use crate::run::{cargo, root, step};
use crate::tested_by::tested_by;

/// Seconds each fuzz target runs in `cargo xtask ci` (docs/testing.md states the budget).
const CI_FUZZ_SECONDS: &str = "15";
/// Minutes of the soak in `cargo xtask ci` (docs/reliability.md has a longer run's figures).
const CI_SOAK_MINUTES: &str = "2";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("demo") => demo(),
        Some("dist") => {
            let release = args.iter().any(|a| a == "--release");
            let manylinux = args
                .iter()
                .position(|a| a == "--manylinux")
                .and_then(|i| args.get(i + 1))
                .map(String::as_str);
            build_as_tests()
                .and_then(|()| python::build_wheel(&dist::wheel_folder(), release, manylinux))
                .and_then(|wheel| dist(&wheel))
        }
        Some("fuzz") => fuzz(args.get(1).map(String::as_str)),
        Some("faults") => faults(),
        Some("other-pythons") => build_as_tests()
            .and_then(|()| python::build_wheel(&dist::wheel_folder(), false, None))
            .and_then(|wheel| other_python_tests(&wheel).map(|_| ())),
        Some("soak") => {
            let flag = |name: &str| {
                args.iter()
                    .position(|a| a == name)
                    .and_then(|i| args.get(i + 1))
                    .map(String::as_str)
            };
            build_as_tests().and_then(|()| soak(flag("--minutes").unwrap_or("2"), flag("--out")))
        }
        Some("conformance") => conformance(),
        Some("mutants") => mutants(),
        Some("deps") => deps(),
        Some("tested-by") => tested_by(),
        Some("wire-check") => wire::check(&args.get(1).map_or_else(
            || crate::run::shared_target().join("tmp/wire-log"),
            std::path::PathBuf::from,
        )),
        Some("package") => package(),
        Some("bench") => bench(
            args.iter().any(|a| a == "--quick"),
            false,
            args.iter().any(|a| a == "--scaling"),
        ),
        _ => {
            eprintln!(
                "usage: cargo xtask <ci | demo | dist [--release] [--manylinux 2_28] | bench [--quick | --scaling] | fuzz [SECONDS] | faults | other-pythons | soak [--minutes N] [--out DIR] | conformance | deps | tested-by | wire-check [DIR] | package | mutants>"
            );
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

/// The fault matrix (`tests/python/fault_matrix.py`), written to docs/reliability.md. It
/// builds what the tests build (same features, so nothing is rebuilt after `ci`).
fn faults() -> Result<(), String> {
    build_as_tests()?;
    let python = python()?;
    install_python_package(&python)?;
    let target = crate::run::shared_target();
    let mut run = Command::new(&python);
    run.current_dir(root())
        .env("DORIS_EMULATOR_BIN", target.join("debug/doris-emulator"))
        .args([
            "tests/python/fault_matrix.py",
            "--write",
            "docs/reliability.md",
        ]);
    step("fault matrix → docs/reliability.md", run)
}

/// Builds what the tests build (same features, so nothing is rebuilt after `ci`).
fn build_as_tests() -> Result<(), String> {
    let mut build = cargo();
    build.args(["test", "--workspace", "--no-run"]);
    step("build (as the tests do)", build)
}

/// The soak (`tests/integration/src/bin/soak/`) for `minutes`, with the emulator
/// binary; both built by the test build. Its report (and with `out` its samples and
/// chart) says what it checked; a failed check fails the step.
fn soak(minutes: &str, out: Option<&str>) -> Result<(), String> {
    let target = crate::run::shared_target();
    // A new fault sequence each run (the seed draws which fault is armed when), printed;
    // `DAFT_DORIS_SOAK_SEED` replays one.
    let seed = crate::run::seed_from("DAFT_DORIS_SOAK_SEED");
    println!(
        "soak: seed {seed} (replay: DAFT_DORIS_SOAK_SEED={seed} cargo xtask soak --minutes {minutes})"
    );
    let mut run = Command::new(target.join("debug/soak"));
    run.current_dir(root())
        .arg("--minutes")
        .arg(minutes)
        .arg("--seed")
        .arg(seed.to_string())
        .arg("--emulator")
        .arg(target.join("debug/doris-emulator"));
    if let Some(out) = out {
        run.args(["--out", out]);
    }
    step(&format!("soak ({minutes} min)"), run)
}

fn ci() -> Result<(), String> {
    // The whole run again with every emulator logging the shapes it receives into a fresh
    // folder (children inherit the variable; see `wire`), checked at the end.
    let Some(wire_log) = std::env::var_os(wire::ENV) else {
        let dir = crate::run::shared_target().join("tmp/wire-log");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let status = Command::new(exe)
            .arg("ci")
            .env(wire::ENV, &dir)
            .status()
            .map_err(|e| format!("cannot run ci: {e}"))?;
        return if status.success() {
            Ok(())
        } else {
            Err(format!("ci failed ({status})"))
        };
    };
    let started = std::time::Instant::now();
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--check"]);
    step("rustfmt", fmt)?;
    // The test build is also the lint: `.cargo/config.toml` compiles the workspace's crates
    // with clippy-driver and `-D warnings`, so a lint fails this step (every target: lib,
    // bins, tests, examples — what `cargo clippy --all-targets` checks).
    let mut build = cargo();
    build.args(["test", "--workspace", "--no-run"]);
    // Meanwhile, pip prepares the other Pythons' venvs, the bench peers and the reference
    // connector (downloads, mostly).
    let environments = std::thread::spawn(python::prepare_environments);
    let built = step("build and clippy (the test build, every target)", build);
    let prepared = environments
        .join()
        .unwrap_or_else(|_| Err("the environment thread panicked".into()));
    built?;
    prepared?;
    deps()?;
    tested_by()?;
    // The published crates are packaged, checked and documented from their packages, in
    // a build folder of their own (check builds: each crate's dependencies' metadata, made
    // once and reused by its rustdoc), at the lowest CPU priority, from here to the end of
    // pytest: beside the Rust tests and pytest, whose emulators and clients mostly wait.
    let packaged = std::thread::spawn(package);
    // Every Rust test once; the conformance suite among them through DORIS_TEST_* against
    // an emulator process, the corpus's figure printed after them.
    let (rust_passed, rust_failed) = conformance::workspace_tests()?;
    let (py_passed, py_failed) = python::python_tests_beside(move || {
        packaged
            .join()
            .unwrap_or_else(|_| Err("the package thread panicked".into()))
    })?;
    // The wheel `dist` checks and installs below, built once.
    let wheel = python::build_wheel(&dist::wheel_folder(), false, None)?;
    // Reads and writes side by side under random faults: no row lost or doubled, no
    // resource growing (the test build made the binaries). The soak's writers and readers
    // mostly wait on the emulator and on their faults, so meanwhile the fuzz targets build
    // (their own folder and flags; measured cold: 110 s) and the public API's tests run
    // again on Python 3.12 and 3.13 (where the machine has them), from that wheel (73 s
    // cold, which ran alone before the soak until 2026-12-07).
    let fuzz_build = std::thread::spawn(fuzz::build_targets);
    let for_other_pythons = wheel.clone();
    let other_pythons = std::thread::spawn(move || other_python_tests(&for_other_pythons));
    let soaked = soak(CI_SOAK_MINUTES, None);
    let built = fuzz_build
        .join()
        .unwrap_or_else(|_| Err("the fuzz build thread panicked".into()));
    let (other_passed, other_failed) = other_pythons
        .join()
        .unwrap_or_else(|_| Err("the other Pythons' thread panicked".into()))?;
    soaked?;
    built?;
    // Then, side by side (none of them waits for another, and only `dist` compiles):
    // - the wheel as a user installs it (`dist`: built on the test build's profile,
    //   installed into a fresh venv without Rust, running the main job; pip, mostly);
    // - the parsers' fuzz targets, from the kept seeds, for a bounded time each, one at a
    //   time (one core: two at once slowed the harness beside them to twice its time);
    // - the benchmark harness, reduced and on debug builds: it must keep working (no
    //   timing is asserted; each measurement checks its row count). It reuses the emulator
    //   binary and the package the tests just built: `cargo build -p doris-emulator` alone
    //   would unify features differently and rebuild DataFusion.
    let distributed = std::thread::spawn(move || dist(&wheel));
    let fuzzing = std::thread::spawn(|| fuzz(Some(CI_FUZZ_SECONDS)));
    let benched = bench(true, true, false);
    let fuzzed = fuzzing
        .join()
        .unwrap_or_else(|_| Err("the fuzz thread panicked".into()));
    let installed = distributed
        .join()
        .unwrap_or_else(|_| Err("the dist thread panicked".into()));
    benched?;
    fuzzed?;
    installed?;
    let (passed, failed) = (
        rust_passed + py_passed + other_passed,
        rust_failed + py_failed + other_failed,
    );
    // Every request shape the crates sent, in docs/wire-inventory.md.
    wire::check(std::path::Path::new(&wire_log))?;
    run::print_step_times();
    // Steps beside one another (the fuzz build during the soak) count twice in the total.
    println!("{:>9.1}  wall clock", started.elapsed().as_secs_f64());
    // One closing line that CI reads, whatever runners produced the counts.
    println!("tests: {passed} passed, {failed} failed");
    if failed > 0 {
        return Err(format!("{failed} tests failed"));
    }
    Ok(())
}
