//! `cargo xtask demo`: the main job on the emulator (the README's first command).

use std::path::Path;
use std::process::Command;

use crate::python::{ensure_venv, install_python_package};
use crate::run::{EmulatorProcess, cargo, root, step};

pub(crate) fn demo() -> Result<(), String> {
    // The main job on the embedded default: the Python package `daft_doris` built into the
    // project's virtual environment (created here on a fresh machine), the Doris emulator
    // with an empty partitioned table, then `write_doris` and a split, filtered
    // `read_doris` (crates/daft-doris-py/examples/demo.py).
    let python = ensure_venv()?;
    // `--workspace`, not `-p doris-emulator`: cargo unifies features over the packages it
    // is asked for, so only a workspace build resolves the emulator's dependencies (arrow,
    // DataFusion, tokio, …) with the features the test suite's build gave them; after
    // `bash .ci/run` this step then compiles nothing, and on a fresh machine it builds only
    // the emulator binary and what it depends on.
    let mut build = cargo();
    build.args(["build", "--quiet", "--workspace", "--bin", "doris-emulator"]);
    step("demo: build the Doris emulator", build)?;
    install_python_package(&python)?;
    // The table (crates/daft-doris-py/examples/demo.sql), created by the emulator at start.
    let init = root().join("crates/daft-doris-py/examples/demo.sql");
    EmulatorProcess::start(&[std::ffi::OsStr::new("--init-sql"), init.as_os_str()])
        .and_then(|emulator| demo_with_emulator(&emulator, &python))
}

fn demo_with_emulator(emulator: &EmulatorProcess, python: &Path) -> Result<(), String> {
    println!("Doris emulator: {}", emulator.ports);
    let mut run = Command::new(python);
    run.current_dir(root())
        .env("DORIS_PORTS", &emulator.ports)
        .env("DAFT_PROGRESS_BAR", "0")
        .arg("crates/daft-doris-py/examples/demo.py");
    step("demo: write_doris, then read_doris", run)
}
