//! `cargo xtask conformance`: the Doris behaviours the crates rely on.
//!
//! 1. The emulator's corpus (`tests/emulator/corpus`): statements with the answers Doris
//!    gives, from Doris's own regression suites.
//! 2. The conformance suite (`tests/conformance`) through its `DORIS_TEST_*` variables:
//!    against the Doris they name when `DORIS_TEST_HOST` is set, otherwise against an
//!    emulator started here as a separate process, so the path a real Doris takes (ports
//!    from the environment, nothing in process) is the one exercised. `cargo test
//!    --workspace` runs the same suite against an in-process emulator.

use std::process::Command;

use crate::run::{EmulatorProcess, cargo, counted_step, step};

/// The releases besides the newest that the suite also runs against in CI
/// (docs/compatibility.md): 2.1 (no INSERT … SELECT in a transaction, no flexible
/// partial-update headers), 3.0 (no flexible partial-update headers) and 4.0 (no
/// streaming jobs).
const OLDER_RELEASES: [&str; 3] = ["2.1.10", "3.0.4", "4.0.6"];

/// The corpus, then the suite.
pub(crate) fn conformance() -> Result<(), String> {
    let mut corpus = cargo();
    corpus.args([
        "test",
        "--workspace",
        "--test",
        "corpus",
        "--",
        "--nocapture",
        "--test-threads",
        "1",
    ]);
    step("conformance corpus (tests/emulator/corpus)", corpus)?;
    if std::env::var_os("DORIS_TEST_HOST").is_some() {
        return step(
            "conformance suite against DORIS_TEST_HOST",
            suite_command(&[]),
        );
    }
    // The build the tests use (`--workspace`: the same features, so nothing rebuilds).
    let mut build = cargo();
    build.args(["build", "--quiet", "--workspace", "--bin", "doris-emulator"]);
    step("conformance: build the Doris emulator", build)?;
    let emulator = EmulatorProcess::start(&["--fe-flight-port", "0", "--be-flight-port", "0"])?;
    suite_against(&emulator)
}

/// Runs the suite with `DORIS_TEST_*` naming the ports `emulator` serves.
fn suite_against(emulator: &EmulatorProcess) -> Result<(), String> {
    step(
        "conformance suite (tests/conformance) against an emulator process",
        suite_command(&suite_env(emulator)?),
    )
}

/// `DORIS_TEST_*` naming the ports `emulator` serves.
fn suite_env(emulator: &EmulatorProcess) -> Result<[(&'static str, String); 4], String> {
    let line = &emulator.ports;
    let port = |key: &str| -> Result<String, String> {
        port_of(line, key).ok_or_else(|| format!("the emulator printed no {key}: {line}"))
    };
    Ok([
        ("DORIS_TEST_HOST", "127.0.0.1".to_owned()),
        ("DORIS_TEST_HTTP_PORT", port("fe_http_port")?),
        ("DORIS_TEST_QUERY_PORT", port("query_port")?),
        ("DORIS_TEST_FLIGHT_PORT", port("fe_flight_port")?),
    ])
}

/// `cargo test --workspace`, each suite once: the conformance suite is aimed at an emulator
/// process through `DORIS_TEST_*` (the path a real Doris takes; `DORIS_TEST_HOST` already
/// set aims it there instead), and the corpus's figure, which its test leaves in the build
/// folder, is printed afterwards. Returns the passed and failed counts.
pub(crate) fn workspace_tests() -> Result<(u64, u64), String> {
    let mut test = cargo();
    test.args(["test", "--workspace"]);
    let _emulator = if std::env::var_os("DORIS_TEST_HOST").is_some() {
        None
    } else {
        let emulator = EmulatorProcess::start(&["--fe-flight-port", "0", "--be-flight-port", "0"])?;
        for (key, value) in suite_env(&emulator)? {
            test.env(key, value);
        }
        Some(emulator)
    };
    let figure = crate::run::shared_target().join("tmp/corpus-figure.txt");
    let _ = std::fs::remove_file(&figure);
    let mut counts = counted_step(
        "rust tests (the conformance suite against an emulator process)",
        test,
    )?;
    // The suite again against the older releases the crates serve, each an emulator
    // process playing it (`--doris-version`): the suite asserts each release's outcome
    // where releases differ. The test binary is built: nothing compiles again.
    if std::env::var_os("DORIS_TEST_HOST").is_none() {
        for release in OLDER_RELEASES {
            let emulator = EmulatorProcess::start(&[
                "--fe-flight-port",
                "0",
                "--be-flight-port",
                "0",
                "--doris-version",
                release,
            ])?;
            let (passed, failed) = counted_step(
                &format!("the conformance suite against an emulator playing Doris {release}"),
                suite_command(&suite_env(&emulator)?),
            )?;
            counts = (counts.0 + passed, counts.1 + failed);
        }
    }
    match std::fs::read_to_string(&figure) {
        Ok(text) => println!("{text}"),
        Err(e) => {
            return Err(format!(
                "the corpus left no figure in {}: {e}",
                figure.display()
            ));
        }
    }
    Ok(counts)
}

fn suite_command(env: &[(&str, String)]) -> Command {
    let mut run = cargo();
    run.args(["test", "--workspace", "--test", "conformance"]);
    for (key, value) in env {
        run.env(key, value);
    }
    run
}

/// The number after `"key":` in the emulator's one JSON line.
fn port_of(line: &str, key: &str) -> Option<String> {
    let at = line.find(&format!("\"{key}\":"))? + key.len() + 3;
    let digits: String = line[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    (!digits.is_empty()).then_some(digits)
}

#[cfg(test)]
mod tests {
    use super::port_of;

    #[test]
    fn ports_are_read_off_the_emulator_line() {
        let line =
            r#"{"backends":1,"fe_flight_port":35441,"fe_http_port":46195,"query_port":42691}"#;
        assert_eq!(port_of(line, "fe_http_port").as_deref(), Some("46195"));
        assert_eq!(port_of(line, "fe_flight_port").as_deref(), Some("35441"));
        assert_eq!(port_of(line, "be_http_port"), None);
    }
}
