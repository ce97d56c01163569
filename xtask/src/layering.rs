//! `cargo xtask deps`: the layering rules between the workspace's crates.

use crate::run::cargo;

/// What a crate without I/O never pulls in: no runtime, no network client, no engine.
const NO_IO: &[&str] = &[
    "tokio",
    "reqwest",
    "hyper",
    "sqlx",
    "tonic",
    "arrow-flight",
    "datafusion",
    "mio",
];

/// The layering rules (docs/architecture.md, "Crates and layering"): per library crate, the workspace crates
/// it may use and the crates that must not appear anywhere in its normal dependency tree.
pub(crate) const LAYERING: [(&str, &[&str], &[&str]); 9] = [
    // doris-sql holds the error vocabulary (`ErrorKind`) every crate's errors use.
    ("doris-connection", &["doris-sql"], NO_IO),
    ("doris-sql", &[], NO_IO),
    // The MySQL link: nothing that reads rows into Arrow, plans or loads.
    (
        "doris-mysql",
        &["doris-connection", "doris-sql"],
        &[
            "arrow",
            "tonic",
            "arrow-flight",
            "reqwest",
            "datafusion",
            "doris-plan",
            "doris-read",
            "doris-streamload",
            "doris-write",
        ],
    ),
    (
        "doris-plan",
        &["doris-connection", "doris-sql"],
        &["sqlx", "tonic", "arrow-flight", "datafusion"],
    ),
    (
        "doris-read",
        &["doris-connection", "doris-sql", "doris-mysql", "doris-plan"],
        &["datafusion", "doris-streamload", "doris-write"],
    ),
    (
        "doris-streamload",
        &["doris-connection", "doris-sql"],
        &["sqlx", "tonic", "arrow-flight", "datafusion", "doris-write"],
    ),
    (
        "doris-write",
        &["doris-connection", "doris-sql", "doris-streamload"],
        &["sqlx", "tonic", "arrow-flight", "datafusion"],
    ),
    (
        "doris-jobs",
        &["doris-connection", "doris-sql", "doris-mysql"],
        &[
            "datafusion",
            "doris-plan",
            "doris-read",
            "doris-streamload",
            "doris-write",
            "tonic",
            "arrow-flight",
        ],
    ),
    (
        "daft-doris-py",
        &[
            "doris-connection",
            "doris-sql",
            "doris-mysql",
            "doris-plan",
            "doris-read",
            "doris-streamload",
            "doris-write",
            "doris-jobs",
        ],
        &["datafusion", "doris-emulator"],
    ),
];

/// Workspace crates no library may depend on (test and tool crates).
pub(crate) const NEVER_A_DEPENDENCY: [&str; 3] =
    ["doris-emulator", "daft-doris-integration-tests", "xtask"];

/// Checks [`LAYERING`] with `cargo tree` (normal dependencies only: what a user's build
/// pulls in; dev-dependencies such as the emulator are for tests), then that the Python
/// package resolves its crates as the test build does ([`crate::feature_parity`]).
pub(crate) fn deps() -> Result<(), String> {
    println!("==> deps: layering rules");
    let workspace = [
        "doris-connection",
        "doris-sql",
        "doris-mysql",
        "doris-plan",
        "doris-read",
        "doris-streamload",
        "doris-write",
        "doris-jobs",
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
    if !broken.is_empty() {
        return Err(format!("layering rules broken: {}", broken.join("; ")));
    }
    crate::feature_parity::feature_parity()
}
