//! `cargo xtask package`: the four library crates stay publishable.
//!
//! Two steps:
//!
//! 1. `cargo package` builds each crate's `.crate` file as crates.io would receive it:
//!    metadata present, every dependency with a version (path dependencies carry one
//!    through the workspace), the README included, dev-dependencies on the emulator
//!    stripped. Offline, from the local registry cache, without a build.
//! 2. `cargo publish --dry-run` then does everything a release does but the upload: it
//!    checks the crates against the crates.io index and builds each one from its packaged
//!    source alone (so a file outside the crate, or a dependency only the workspace gives,
//!    fails here). The crates are published together, so each one's unpublished workspace
//!    dependencies resolve to the packages made in the same run.

use crate::run::{cargo, step};

/// The crates published separately, in dependency order.
pub(crate) const PUBLISHED: [&str; 4] =
    ["doris-sql", "doris-plan", "doris-read", "doris-streamload"];

/// Packages every crate of [`PUBLISHED`], then dry-runs their publication.
pub(crate) fn package() -> Result<(), String> {
    let mut run = cargo();
    run.args(["package", "--offline", "--no-verify", "--allow-dirty"]);
    for krate in PUBLISHED {
        run.args(["-p", krate]);
    }
    step(
        "package: the published crates as crates.io would receive them",
        run,
    )?;
    let mut publish = cargo();
    publish.args(["publish", "--dry-run", "--allow-dirty"]);
    for krate in PUBLISHED {
        publish.args(["-p", krate]);
    }
    step(
        "publish --dry-run: each crate built from its packaged source alone",
        publish,
    )
}
