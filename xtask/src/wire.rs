//! The wire-inventory check: every request shape the crates sent to an emulator during the
//! run is listed in docs/wire-inventory.md.
//!
//! `cargo xtask ci` runs itself with `DORIS_EMULATOR_WIRE_LOG` naming a fresh folder, so
//! every emulator the run starts (in-process in a Rust test, or a process for pytest, the
//! conformance suite, the soak, the demo and the bench) appends the shapes it receives
//! there (`tests/emulator/src/wire_log.rs` says what a shape keeps). Then this check reads
//! them and keeps the crates' own: MySQL statements from a client that names no
//! `_client_name` (sqlx; PyMySQL and libmariadb name themselves, a test's set-up SQL is
//! marked `/* fixture */`), HTTP requests and Flight calls whose `User-Agent` is one of the
//! crates' (`doris-…`). Every such shape must be a line of the inventory's `shapes` block;
//! a line no run produced is reported (a rarely taken path), not failed.
//!
//! Emulators started by the emulator's own tests (`tests/emulator/tests`, its unit tests)
//! are left out: they send what a test of the emulator needs, not what the crates send; so
//! are those of doris-read's transport tests (`transports`, `statement_logging`), which
//! hand the transports' raw query functions SQL of their own (a transport runs the
//! statement it is given; what the crates build for a read reaches the log through every
//! other suite).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The variable that names the wire log's folder (read by the emulator).
pub(crate) const ENV: &str = "DORIS_EMULATOR_WIRE_LOG";

/// Program names of the test binaries whose emulators are left out (see above).
const EMULATOR_TESTS: [&str; 5] = [
    "corpus-",
    "faces-",
    "doris_emulator-",
    "transports-",
    "statement_logging-",
];

/// The inventory's machine-read list: the fenced block with the info string `shapes`.
fn inventory_shapes(text: &str) -> Result<BTreeSet<String>, String> {
    let start = text
        .find("```shapes\n")
        .ok_or("docs/wire-inventory.md has no ```shapes block")?
        + "```shapes\n".len();
    let end = text[start..]
        .find("```")
        .ok_or("the ```shapes block of docs/wire-inventory.md never ends")?;
    Ok(text[start..start + end]
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .map(str::to_owned)
        .collect())
}

/// Whether a logged client is one of the crates.
fn is_crates(face: &str, client: &str) -> bool {
    match face {
        "mysql" | "mysql-prepare" => client == "unnamed",
        _ => client.starts_with("doris-"),
    }
}

/// The crates' shapes in the logs of `dir`: `face shape` → the log files that hold it.
fn logged_shapes(dir: &Path) -> Result<BTreeMap<String, BTreeSet<String>>, String> {
    let mut shapes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !name.ends_with(".tsv") || EMULATOR_TESTS.iter().any(|p| name.starts_with(p)) {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{name}: {e}"))?;
        for line in text.lines() {
            let mut fields = line.splitn(3, '\t');
            let (Some(client), Some(face), Some(shape)) =
                (fields.next(), fields.next(), fields.next())
            else {
                return Err(format!("{name}: not a wire-log line: {line}"));
            };
            if is_crates(face, client) {
                shapes
                    .entry(format!("{face} {shape}"))
                    .or_default()
                    .insert(name.clone());
            }
        }
    }
    Ok(shapes)
}

/// Compares the logs in `dir` with the inventory; fails on a shape it lacks.
pub(crate) fn check(dir: &Path) -> Result<(), String> {
    let inventory = crate::root().join("docs/wire-inventory.md");
    let text =
        std::fs::read_to_string(&inventory).map_err(|e| format!("{}: {e}", inventory.display()))?;
    let listed = inventory_shapes(&text)?;
    let logged = logged_shapes(dir)?;
    let unknown: Vec<String> = logged
        .iter()
        .filter(|(shape, _)| !listed.contains(*shape))
        .map(|(shape, files)| {
            let first = files.iter().next().map_or("", String::as_str);
            format!("  {shape}    (seen by {first})")
        })
        .collect();
    let unseen: Vec<&String> = listed.iter().filter(|s| !logged.contains_key(*s)).collect();
    println!(
        "wire inventory: {} shapes sent by the crates, {} listed, {} not seen in this run",
        logged.len(),
        listed.len(),
        unseen.len()
    );
    for shape in &unseen {
        println!("  not seen: {shape}");
    }
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the crates sent {} request shapes docs/wire-inventory.md does not list \
             (add each to its table and its `shapes` block, with the releases that accept \
             it, or stop sending it):\n{}",
            unknown.len(),
            unknown.join("\n")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shapes_block_is_read_line_by_line() {
        let text = "intro\n```shapes\n// a comment\nmysql SELECT @@?\n\nfe-http GET /api/backends?is_alive\n```\nafter";
        let shapes = inventory_shapes(text).unwrap();
        assert_eq!(shapes.len(), 2);
        assert!(shapes.contains("mysql SELECT @@?"));
    }

    #[test]
    fn only_the_crates_clients_count() {
        assert!(is_crates("mysql", "unnamed"));
        assert!(!is_crates("mysql", "pymysql"));
        assert!(!is_crates("mysql", "fixture"));
        assert!(is_crates("fe-http", "doris-streamload"));
        assert!(!is_crates("fe-http", "curl"));
        assert!(!is_crates("fe-flight", "grpc-go"));
    }

    #[test]
    fn an_unlisted_shape_fails_and_a_listed_one_passes() {
        let dir = std::env::temp_dir().join(format!("wire-check-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("doris-emulator-1.tsv"),
            "unnamed\tmysql\tDROP EVERYTHING\npymysql\tmysql\tANYTHING\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("faces-abc-2.tsv"),
            "unnamed\tmysql\tEMULATOR TEST\n",
        )
        .unwrap();
        let logged = logged_shapes(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            logged.keys().collect::<Vec<_>>(),
            vec!["mysql DROP EVERYTHING"]
        );
    }
}
