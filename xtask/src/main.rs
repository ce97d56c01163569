//! Developer automation for the daft-doris workspace.
//!
//! ```text
//! cargo xtask ci                 fmt, clippy -D warnings, rustdoc -D warnings, Rust tests, ruff, pytest, bench --quick
//! cargo xtask demo               the main job on the embedded default (see README)
//! cargo xtask bench [--quick]    benchmarks vs the reference connector and the peers (docs/benchmarks.md),
//!                                then split reads on N simulated BEs (docs/scaling.md)
//! cargo xtask bench --scaling    only the simulated-BE scaling benchmark (release builds)
//! cargo xtask fuzz [SECONDS]     build and run every doris-sql fuzz target (needs cargo-fuzz)
//! cargo xtask faults             every emulator fault against every operation → docs/reliability.md
//! cargo xtask conformance        the corpus from Doris's regression suites against the emulator
//! cargo xtask deps               the layering rules: which crates each library may depend on
//! cargo xtask mutants            mutation testing of the injection- and label-critical code
//! ```
//!
//! Every step runs with the caller's `CARGO_TARGET_DIR`, so CI and a developer's session
//! share one warm build folder outside the checkout.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

/// The fuzz targets of `crates/doris-sql/fuzz`.
const FUZZ_TARGETS: [&str; 3] = ["doris_type", "show_create", "trusted_where"];

/// Seconds each fuzz target runs in `cargo xtask ci` (docs/testing.md states the budget).
const CI_FUZZ_SECONDS: &str = "30";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("demo") => demo(),
        Some("fuzz") => fuzz(args.get(1).map(String::as_str)),
        Some("faults") => faults(),
        Some("conformance") => conformance(),
        Some("mutants") => mutants(),
        Some("deps") => deps(),
        Some("bench") => bench(
            args.iter().any(|a| a == "--quick"),
            false,
            args.iter().any(|a| a == "--scaling"),
        ),
        _ => {
            eprintln!(
                "usage: cargo xtask <ci | demo | bench [--quick | --scaling] | fuzz [SECONDS] | faults | conformance | deps | mutants>"
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

/// The workspace root (the parent of this crate's folder). `cargo run` names the folder at
/// run time; the compile-time one is only a fallback, because one build folder serves
/// several checkouts (a CI clone, the developer's tree) and cargo may reuse a binary built
/// in another of them.
fn root() -> PathBuf {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    manifest
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

/// The project's Python: `DAFT_DORIS_PYTHON`, else the venv `.ci/run` creates.
fn python() -> Result<PathBuf, String> {
    let python = std::env::var("DAFT_DORIS_PYTHON").map_or_else(
        |_| PathBuf::from("/var/tmp/daft-doris-venv/bin/python"),
        PathBuf::from,
    );
    if python.exists() {
        Ok(python)
    } else {
        Err(format!(
            "no Python environment at {}: run `bash .ci/run` once (it creates the venv) or set DAFT_DORIS_PYTHON",
            python.display()
        ))
    }
}

/// The Python sources ruff checks.
const PYTHON_SOURCES: [&str; 2] = ["tests/python", "crates/daft-doris-py"];

/// Builds the `daft_doris` package (debug profile, via maturin) into the project's venv.
fn install_python_package(python: &Path) -> Result<(), String> {
    maturin_develop(python, None)
}

/// `maturin develop` of daft_doris into the project's venv: debug in the shared build
/// folder, or release in `release` (its own folder).
fn maturin_develop(python: &Path, release: Option<&str>) -> Result<(), String> {
    let venv = python
        .parent()
        .and_then(Path::parent)
        .ok_or("the project's Python is not inside a virtual environment")?;
    let mut develop = Command::new(python);
    develop
        .current_dir(root().join("crates/daft-doris-py"))
        .env("VIRTUAL_ENV", venv)
        .args(["-m", "maturin", "develop", "--quiet"]);
    let name = match release {
        Some(folder) => {
            develop.env("CARGO_TARGET_DIR", folder).arg("--release");
            "bench: release build of daft_doris into the venv"
        }
        None => "maturin develop (daft_doris into the venv)",
    };
    step(name, develop)
}

/// The fault matrix (`tests/python/fault_matrix.py`), written to docs/reliability.md. It
/// builds what the tests build (same features, so nothing is rebuilt after `ci`).
fn faults() -> Result<(), String> {
    let mut build = cargo();
    build.args(["test", "--workspace", "--no-run"]);
    step("build (as the tests do)", build)?;
    let python = python()?;
    install_python_package(&python)?;
    let target =
        std::env::var("CARGO_TARGET_DIR").map_or_else(|_| root().join("target"), PathBuf::from);
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

/// The conformance corpus (`tests/emulator/corpus/`, statements and answers from Doris's
/// regression suites) against the emulator, printing `accepted / answered as Doris / total`.
/// Built as the workspace tests are (same features), so it rebuilds nothing after `ci`.
fn conformance() -> Result<(), String> {
    let mut run = cargo();
    run.args([
        "test",
        "--workspace",
        "--test",
        "corpus",
        "--",
        "--nocapture",
        "--test-threads",
        "1",
    ]);
    step("conformance corpus (tests/emulator/corpus)", run)
}

/// ruff, then the pytest suite; returns pytest's passed and failed counts.
fn python_tests() -> Result<(u64, u64), String> {
    let python = python()?;
    let mut lint = Command::new(&python);
    lint.current_dir(root())
        .args(["-m", "ruff", "check"])
        .args(PYTHON_SOURCES);
    step("ruff check", lint)?;
    let mut format = Command::new(&python);
    format
        .current_dir(root())
        .args(["-m", "ruff", "format", "--check"])
        .args(PYTHON_SOURCES);
    step("ruff format --check", format)?;
    install_python_package(&python)?;
    let target =
        std::env::var("CARGO_TARGET_DIR").map_or_else(|_| root().join("target"), PathBuf::from);
    let mut pytest = Command::new(&python);
    pytest
        .current_dir(root())
        .env("DORIS_EMULATOR_BIN", target.join("debug/doris-emulator"))
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/python",
        ]);
    println!("==> python tests");
    let started = Instant::now();
    let out = pytest
        .output()
        .map_err(|e| format!("python tests: could not start: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    print!("{text}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    println!("<== python tests: {:.1}s", started.elapsed().as_secs_f64());
    // pytest's summary: "3 passed in 0.4s" or "1 failed, 2 passed in 0.5s".
    let summary = text.lines().last().unwrap_or_default();
    let count = |word: &str| {
        summary
            .split([',', ' '])
            .collect::<Vec<_>>()
            .windows(2)
            .find(|w| w[1] == word)
            .and_then(|w| w[0].parse::<u64>().ok())
            .unwrap_or(0)
    };
    let (passed, failed) = (
        count("passed"),
        count("failed") + count("errors") + count("error"),
    );
    if !out.status.success() {
        return Err(format!(
            "python tests failed: {passed} passed, {failed} failed"
        ));
    }
    Ok((passed, failed))
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
    deps()?;
    let mut doc = cargo();
    doc.args(["doc", "--workspace", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings");
    step("rustdoc (broken links and markup are errors)", doc)?;
    let mut test = cargo();
    test.args(["test", "--workspace"]);
    let (rust_passed, rust_failed) = counted_step("rust tests", test)?;
    // The corpus ran among the Rust tests; again alone, to print its figure.
    conformance()?;
    let (py_passed, py_failed) = python_tests()?;
    // The parsers' fuzz targets, from the kept seeds, for a bounded time each.
    fuzz(Some(CI_FUZZ_SECONDS))?;
    // The benchmark harness, reduced and on debug builds: it must keep working (no timing
    // is asserted; each measurement checks its row count). It reuses the emulator binary
    // and the package the tests just built: `cargo build -p doris-emulator` alone would
    // unify features differently and rebuild DataFusion (~6 min).
    bench(true, true, false)?;
    let (passed, failed) = (rust_passed + py_passed, rust_failed + py_failed);
    // One closing line that CI reads, whatever runners produced the counts.
    println!("tests: {passed} passed, {failed} failed");
    if failed > 0 {
        return Err(format!("{failed} tests failed"));
    }
    Ok(())
}

/// The layering rules (docs/architecture.md, "Crates and layering"): per library crate, the workspace crates
/// it may use and the crates that must not appear anywhere in its normal dependency tree.
const LAYERING: [(&str, &[&str], &[&str]); 5] = [
    (
        "doris-sql",
        &[],
        &[
            "tokio",
            "reqwest",
            "hyper",
            "sqlx",
            "tonic",
            "arrow-flight",
            "datafusion",
            "mio",
        ],
    ),
    (
        "doris-plan",
        &["doris-sql"],
        &["sqlx", "tonic", "arrow-flight", "datafusion"],
    ),
    (
        "doris-read",
        &["doris-sql", "doris-plan"],
        &["datafusion", "doris-streamload"],
    ),
    (
        "doris-streamload",
        &["doris-sql"],
        &["sqlx", "tonic", "arrow-flight", "datafusion"],
    ),
    (
        "daft-doris-py",
        &["doris-sql", "doris-plan", "doris-read", "doris-streamload"],
        &["datafusion", "doris-emulator"],
    ),
];

/// Workspace crates no library may depend on (test and tool crates).
const NEVER_A_DEPENDENCY: [&str; 3] = ["doris-emulator", "daft-doris-integration-tests", "xtask"];

/// Checks [`LAYERING`] with `cargo tree` (normal dependencies only: what a user's build
/// pulls in; dev-dependencies such as the emulator are for tests).
fn deps() -> Result<(), String> {
    println!("==> deps: layering rules");
    let workspace = [
        "doris-sql",
        "doris-plan",
        "doris-read",
        "doris-streamload",
        "daft-doris-py",
    ];
    let mut broken = Vec::new();
    for (krate, allowed, forbidden) in LAYERING {
        let out = cargo()
            .args([
                "tree", "-p", krate, "-e", "normal", "--prefix", "none", "--format", "{p}",
            ])
            .output()
            .map_err(|e| format!("cargo tree: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "cargo tree -p {krate} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let names: std::collections::BTreeSet<&str> = text
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        for name in &names {
            if *name == krate {
                continue;
            }
            if forbidden.contains(name) || NEVER_A_DEPENDENCY.contains(name) {
                broken.push(format!("{krate} depends on {name}"));
            }
            if workspace.contains(name) && !allowed.contains(name) {
                broken.push(format!("{krate} depends on the workspace crate {name}"));
            }
        }
        println!(
            "    {krate}: {} crates in its tree checked (workspace crates allowed: {})",
            names.len(),
            if allowed.is_empty() {
                "none".to_owned()
            } else {
                allowed.join(", ")
            }
        );
    }
    if broken.is_empty() {
        Ok(())
    } else {
        Err(format!("layering rules broken: {}", broken.join("; ")))
    }
}

fn demo() -> Result<(), String> {
    // The main job on the embedded default: the Python package `daft_doris` built into the
    // project's virtual environment (created here on a fresh machine), the Doris emulator
    // with an empty partitioned table, then `write_doris` and a split, filtered
    // `read_doris` (crates/daft-doris-py/examples/demo.py).
    let python = ensure_venv()?;
    let mut build = cargo();
    build.args([
        "build",
        "--quiet",
        "-p",
        "doris-emulator",
        "--bin",
        "doris-emulator",
    ]);
    step("demo: build the Doris emulator", build)?;
    install_python_package(&python)?;
    let target =
        std::env::var("CARGO_TARGET_DIR").map_or_else(|_| root().join("target"), PathBuf::from);
    let dir = std::env::temp_dir().join(format!("daft-doris-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let init = dir.join("init.sql");
    std::fs::write(
        &init,
        "CREATE DATABASE analytics;
         CREATE TABLE analytics.events (
           `event_id` BIGINT NOT NULL, `name` VARCHAR(32) NULL, `score` INT NULL, `dt` DATE NOT NULL
         ) DUPLICATE KEY(`event_id`)
         PARTITION BY RANGE(`dt`) (PARTITION p1 VALUES [(\"2024-01-01\"), (\"2024-02-01\")),
                                   PARTITION p2 VALUES [(\"2024-02-01\"), (\"2024-03-01\")))
         DISTRIBUTED BY HASH(`event_id`) BUCKETS 2;",
    )
    .map_err(|e| e.to_string())?;
    let mut child = Command::new(target.join("debug/doris-emulator"))
        .args([
            "--fe-http-port",
            "0",
            "--be-http-port",
            "0",
            "--query-port",
            "0",
            "--init-sql",
        ])
        .arg(&init)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the emulator: {e}"))?;
    let result = demo_with_emulator(&mut child, &python);
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// The Python of the virtual environment named by `env_var` (else `default`), created
/// with the first of `interpreters` that runs when it does not exist yet.
fn venv_python(env_var: &str, default: &str, interpreters: &[String]) -> Result<PathBuf, String> {
    let venv = std::env::var(env_var).map_or_else(|_| PathBuf::from(default), PathBuf::from);
    let python = venv.join("bin/python");
    if !python.exists() {
        let base = interpreters
            .iter()
            .find(|p| Command::new(p).arg("--version").output().is_ok())
            .ok_or_else(|| format!("none of {} runs here", interpreters.join(", ")))?;
        let mut create = Command::new(base);
        create.arg("-m").arg("venv").arg(&venv);
        step(
            &format!("create the virtual environment {}", venv.display()),
            create,
        )?;
    }
    Ok(python)
}

/// The project's virtual environment with the test and demo requirements, created when
/// missing (`DAFT_DORIS_VENV`, default `/var/tmp/daft-doris-venv`); returns its Python.
fn ensure_venv() -> Result<PathBuf, String> {
    let python = venv_python(
        "DAFT_DORIS_VENV",
        "/var/tmp/daft-doris-venv",
        &["python3.11".to_owned(), "python3".to_owned()],
    )?;
    let mut install = Command::new(&python);
    install
        .current_dir(root())
        .args([
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "-r",
        ])
        .arg("tests/python/requirements.txt");
    step("demo: install the Python requirements", install)?;
    Ok(python)
}

fn demo_with_emulator(child: &mut std::process::Child, python: &Path) -> Result<(), String> {
    use std::io::BufRead as _;
    let mut line = String::new();
    let stdout = child.stdout.take().ok_or("no emulator output")?;
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    println!("Doris emulator: {}", line.trim());
    let mut run = Command::new(python);
    run.current_dir(root())
        .env("DORIS_PORTS", line.trim())
        .env("DAFT_PROGRESS_BAR", "0")
        .arg("crates/daft-doris-py/examples/demo.py");
    step("demo: write_doris, then read_doris", run)
}

/// `quick`: reduced sizes on debug builds; `prebuilt`: the debug emulator binary and the
/// package are already built (by `cargo test --workspace` and the pytest step);
/// `scaling_only`: release builds, then only the simulated-BE scaling benchmark.
fn bench(quick: bool, prebuilt: bool, scaling_only: bool) -> Result<(), String> {
    // Full: release builds (their own folder, so they never evict the debug test build),
    // the Rust-only benchmarks, then the end-to-end comparison, written to
    // docs/benchmarks.md. Quick: the end-to-end harness only, on the debug builds the tests
    // use and a reduced size, to keep the harness working (CI runs it; no figures kept).
    let shared = std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| "/var/tmp/daft-doris-target".to_owned());
    let python = ensure_venv()?;
    let mut peers = Command::new(&python);
    peers
        .current_dir(root())
        .args([
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "-r",
        ])
        .arg("crates/daft-doris-py/benches/requirements.txt");
    step("bench: install the peers (ConnectorX, matplotlib)", peers)?;
    let reference = if scaling_only {
        PathBuf::new()
    } else {
        ensure_reference_venv()?
    };
    let dir = std::env::temp_dir().join(format!("daft-doris-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let mut extras = Vec::new();
    let emulator = if quick {
        if !prebuilt {
            let mut build = cargo();
            build.args(["build", "-p", "doris-emulator", "--bin", "doris-emulator"]);
            step("bench: build the emulator", build)?;
            install_python_package(&python)?;
        }
        format!("{shared}/debug/doris-emulator")
    } else {
        let release = format!("{shared}-release");
        let mut build = cargo();
        build.env("CARGO_TARGET_DIR", &release).args([
            "build",
            "--release",
            "-p",
            "doris-emulator",
            "--bin",
            "doris-emulator",
            "--bin",
            "ingest-bench",
        ]);
        step("bench: release build of the emulator", build)?;
        if scaling_only {
            install_release_package(&python, &release)?;
            let result = scaling(&python, &format!("{release}/release/doris-emulator"), false);
            let _ = std::fs::remove_dir_all(&dir);
            return result;
        }
        let mut ingest = Command::new(format!("{release}/release/ingest-bench"));
        ingest.args(["--rows", "1000000", "--runs", "5"]);
        extras.push(json_step(
            "bench: emulator Arrow ingest",
            ingest,
            &dir,
            "ingest",
        )?);
        let mut client = cargo();
        client
            .env("CARGO_TARGET_DIR", &release)
            .env(
                "DORIS_EMULATOR_BIN",
                format!("{release}/release/doris-emulator"),
            )
            .args([
                "run",
                "--quiet",
                "--release",
                "-p",
                "doris-streamload",
                "--example",
                "streamload_bench",
                "--",
                "--rows",
                "1000000",
                "--runs",
                "5",
            ]);
        extras.push(json_step(
            "bench: doris-streamload vs curl",
            client,
            &dir,
            "streamload",
        )?);
        install_release_package(&python, &release)?;
        format!("{release}/release/doris-emulator")
    };
    let mut run = Command::new(&python);
    run.current_dir(root())
        .env("DAFT_PROGRESS_BAR", "0")
        .arg("crates/daft-doris-py/benches/bench.py")
        .arg("orchestrate")
        .args(["--emulator-bin", &emulator])
        .arg("--ref-python")
        .arg(&reference);
    if quick {
        run.arg("--quick");
    }
    for extra in &extras {
        run.arg("--extra").arg(extra);
    }
    let result = step("bench: daft_doris vs the reference and the peers", run)
        .and_then(|()| scaling(&python, &emulator, quick));
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// `maturin develop --release` of daft_doris into the project's venv (release build folder).
fn install_release_package(python: &Path, release: &str) -> Result<(), String> {
    maturin_develop(python, Some(release))
}

/// Split reads against single-task reads on 1, 2 and 4 simulated BEs (docs/scaling.md).
fn scaling(python: &Path, emulator: &str, quick: bool) -> Result<(), String> {
    let mut run = Command::new(python);
    run.current_dir(root())
        .env("DAFT_PROGRESS_BAR", "0")
        .arg("crates/daft-doris-py/benches/bench.py")
        .arg("scaling")
        .args(["--emulator-bin", emulator]);
    if quick {
        run.arg("--quick");
    }
    step("bench: split reads on simulated BEs", run)
}

/// Runs a benchmark that prints one JSON line last; saves that line to `dir/name.json`.
fn json_step(name: &str, mut cmd: Command, dir: &Path, file: &str) -> Result<PathBuf, String> {
    println!("==> {name}");
    let out = cmd
        .output()
        .map_err(|e| format!("{name}: could not start: {e}"))?;
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    print!("{text}");
    if !out.status.success() {
        return Err(format!("{name} failed ({})", out.status));
    }
    let line = text.lines().last().unwrap_or_default();
    let path = dir.join(format!("{file}.json"));
    std::fs::write(&path, line).map_err(|e| e.to_string())?;
    Ok(path)
}

/// The reference connector's virtual environment (`daft-doris==1.1` needs Python 3.12,
/// from pyenv), created when missing (`DAFT_DORIS_REF_VENV`, default
/// `/var/tmp/daft-doris-ref-venv`); returns its Python.
fn ensure_reference_venv() -> Result<PathBuf, String> {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let python = venv_python(
        "DAFT_DORIS_REF_VENV",
        "/var/tmp/daft-doris-ref-venv",
        &[
            format!("{home}/.pyenv/versions/3.12.1/bin/python3.12"),
            "python3.12".to_owned(),
        ],
    )?;
    let mut install = Command::new(&python);
    install.args([
        "-m",
        "pip",
        "install",
        "-q",
        "--disable-pip-version-check",
        "daft-doris[doris,doris-flight]==1.1",
        "numpy",
    ]);
    step(
        "bench: install the reference connector daft-doris 1.1",
        install,
    )?;
    Ok(python)
}

/// The files `cargo xtask mutants` mutates, by package: what renders values and names into
/// SQL, what decides where credentials go, and the label grammar (docs/testing.md has the
/// last score). Each package's own tests judge its mutants.
const MUTATED: [(&str, &[&str], &[&str]); 2] = [
    (
        "doris-sql",
        &[
            "crates/doris-sql/src/params.rs",
            "crates/doris-sql/src/ident.rs",
            "crates/doris-sql/src/hosts.rs",
        ],
        // All of the crate's tests: unit tests and the property tests.
        &[],
    ),
    (
        "doris-streamload",
        &["crates/doris-streamload/src/label.rs"],
        // Unit tests only: the integration tests start emulators (minutes per mutant).
        &["--lib"],
    ),
];

/// Mutation testing with cargo-mutants (installed into its own build folder when missing):
/// every mutant of [`MUTATED`] is built and tested in place, one at a time.
fn mutants() -> Result<(), String> {
    if !Command::new("cargo")
        .args(["mutants", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        let mut install = cargo();
        install
            .env("CARGO_TARGET_DIR", "/var/tmp/daft-doris-tools")
            .args(["install", "--locked", "--quiet", "cargo-mutants"]);
        step("install cargo-mutants (its own build folder)", install)?;
    }
    for (package, files, test_args) in MUTATED {
        let mut run = cargo();
        run.args([
            "mutants",
            "--in-place",
            "--no-shuffle",
            "--package",
            package,
        ]);
        for file in files {
            run.args(["--file", file]);
        }
        run.arg("--output")
            .arg(std::env::temp_dir().join(format!("mutants-{package}")));
        if !test_args.is_empty() {
            run.arg("--").args(test_args.iter());
        }
        // cargo-mutants exits non-zero when a mutant survives: report, do not stop.
        let _ = step(&format!("mutants of {package}"), run);
    }
    Ok(())
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
        // New inputs go to a scratch corpus; the kept seeds (`fuzz/seeds/<target>`, in the
        // repository) are read only, so a run never changes the checkout.
        let scratch =
            std::env::temp_dir().join(format!("daft-doris-fuzz-{target}-{}", std::process::id()));
        std::fs::create_dir_all(&scratch)
            .map_err(|e| format!("fuzz: cannot create {}: {e}", scratch.display()))?;
        let seeds = fuzz_dir.join("seeds").join(target);
        let mut cmd = cargo();
        cmd.current_dir(&fuzz_dir)
            // cargo-fuzz passes nightly -Z flags; the machine's one toolchain is stable.
            .env("RUSTC_BOOTSTRAP", "1")
            .env("CARGO_TARGET_DIR", &fuzz_target_dir)
            .arg("fuzz")
            .arg("run")
            .arg(target)
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
