//! `cargo xtask package`: the four library crates stay publishable.
//!
//! `cargo package` builds each crate's `.crate` file as crates.io would receive it:
//! metadata present, every dependency with a version (path dependencies carry one through
//! the workspace), the README included, dev-dependencies on the emulator stripped. It runs
//! offline from the local registry cache and without the verifying build (the tests built
//! the crates already).

use crate::run::{cargo, step};

/// The crates published separately, in dependency order.
pub(crate) const PUBLISHED: [&str; 4] =
    ["doris-sql", "doris-plan", "doris-read", "doris-streamload"];

/// Packages every crate of [`PUBLISHED`].
pub(crate) fn package() -> Result<(), String> {
    let mut run = cargo();
    run.args(["package", "--offline", "--no-verify", "--allow-dirty"]);
    for krate in PUBLISHED {
        run.args(["-p", krate]);
    }
    step(
        "package: the published crates as crates.io would receive them",
        run,
    )
}
