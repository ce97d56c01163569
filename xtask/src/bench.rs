//! `cargo xtask bench`: release builds, the Rust-only benchmarks, the end-to-end comparison
//! with the reference connector and the peers, and the simulated-BE scaling benchmark.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::python::{
    ensure_venv, install_python_package, install_requirements, maturin_develop, venv_python,
};
use crate::run::{cargo, root, step};

/// `quick`: reduced sizes on debug builds; `prebuilt`: the debug emulator binary and the
/// package are already built (by `cargo test --workspace` and the pytest step);
/// `scaling_only`: release builds, then only the simulated-BE scaling benchmark.
pub(crate) fn bench(quick: bool, prebuilt: bool, scaling_only: bool) -> Result<(), String> {
    // Full: release builds (their own folder, so they never evict the debug test build),
    // the Rust-only benchmarks, then the end-to-end comparison, written to
    // docs/benchmarks.md. Quick: the end-to-end harness only, on the debug builds the tests
    // use and a reduced size, to keep the harness working (CI runs it; no figures kept).
    let shared = std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| "/var/tmp/daft-doris-target".to_owned());
    let python = ensure_venv()?;
    install_requirements(
        &python,
        "crates/daft-doris-py/benches/requirements.txt",
        "bench: install the peers (ConnectorX, matplotlib)",
    )?;
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
            // `--workspace`: the test build's features, so nothing is rebuilt (see demo.rs).
            build.args(["build", "--workspace", "--bin", "doris-emulator"]);
            step("bench: build the emulator", build)?;
            install_python_package(&python)?;
        }
        format!("{shared}/debug/doris-emulator")
    } else {
        let release = format!("{shared}-release");
        let mut build = cargo();
        // `--workspace`: features resolved as for the whole workspace, which the Python
        // package's build (crates/workspace-hack) matches, so `maturin develop --release`
        // below reuses these crates instead of compiling arrow, tokio, sqlx, … again.
        build.env("CARGO_TARGET_DIR", &release).args([
            "build",
            "--release",
            "--workspace",
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
    // Where the atomic write's time goes (default write, atomic write, the publish's
    // statements alone): a figure of the report.
    let mut breakdown = Command::new(&python);
    breakdown
        .current_dir(root())
        .env("DAFT_PROGRESS_BAR", "0")
        .arg("crates/daft-doris-py/benches/publish_breakdown.py")
        .args(["--emulator-bin", &emulator]);
    if quick {
        breakdown.args(["--rows", "20000", "--runs", "1"]);
    }
    extras.push(json_step(
        "bench: where the atomic write's time goes",
        breakdown,
        &dir,
        "publish_breakdown",
    )?);
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
pub(crate) fn install_release_package(python: &Path, release: &str) -> Result<(), String> {
    maturin_develop(python, Some(release))
}

/// Split reads against single-task reads on 1, 2 and 4 simulated BEs (docs/scaling.md).
pub(crate) fn scaling(python: &Path, emulator: &str, quick: bool) -> Result<(), String> {
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
pub(crate) fn json_step(
    name: &str,
    mut cmd: Command,
    dir: &Path,
    file: &str,
) -> Result<PathBuf, String> {
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
pub(crate) fn ensure_reference_venv() -> Result<PathBuf, String> {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let python = venv_python(
        "DAFT_DORIS_REF_VENV",
        "/var/tmp/daft-doris-ref-venv",
        &[
            format!("{home}/.pyenv/versions/3.12.1/bin/python3.12"),
            "python3.12".to_owned(),
        ],
    )?;
    crate::python::pip_install_once(
        &python,
        &["daft-doris[doris,doris-flight]==1.1", "numpy"],
        "bench: install the reference connector daft-doris 1.1",
    )?;
    Ok(python)
}
