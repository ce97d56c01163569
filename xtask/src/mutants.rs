//! `cargo xtask mutants`: mutation testing of the injection- and label-critical code.

use std::process::Command;

use crate::run::{cargo, step};

/// The files `cargo xtask mutants` mutates, by package: what renders values and names into
/// SQL, what decides where credentials go, and the label grammar (docs/testing.md has the
/// last score), and the atomic write's decisions. Each package's own tests judge its mutants.
pub(crate) const MUTATED: [(&str, &[&str], &[&str]); 4] = [
    (
        "doris-sql",
        &[
            "crates/doris-sql/src/params.rs",
            "crates/doris-sql/src/ident.rs",
        ],
        // All of the crate's tests: unit tests and the property tests.
        &[],
    ),
    (
        "doris-connection",
        &["crates/doris-connection/src/hosts.rs"],
        &[],
    ),
    (
        "doris-streamload",
        &[
            "crates/doris-streamload/src/label.rs",
            "crates/doris-streamload/src/retry.rs",
        ],
        // Unit tests only (the integration tests start emulators: minutes per mutant).
        &["--lib"],
    ),
    (
        "doris-write",
        &[
            "crates/doris-write/src/atomic/key.rs",
            "crates/doris-write/src/atomic/release.rs",
            // The publish's decisions, judged by its model of Doris's transactions
            // (`atomic/publish/tests.rs`).
            "crates/doris-write/src/atomic/publish.rs",
            "crates/doris-write/src/atomic/record.rs",
        ],
        &["--lib"],
    ),
];

/// Mutation testing with cargo-mutants (installed into its own build folder when missing):
/// every mutant of [`MUTATED`] is built and tested in place, one at a time.
pub(crate) fn mutants() -> Result<(), String> {
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
