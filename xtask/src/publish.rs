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
    forget_unpacked_copies()?;
    forget_registry_builds(&crate::run::shared_target().join("debug"))?;
    // Cold, this step compiles about 470 crates (each crate's own feature set, apart from
    // the workspace build): 321 s measured. Without debug info it took 338 s, so the
    // verifying builds keep cargo's defaults.
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

/// Removes the copies of [`PUBLISHED`] crates an earlier dry run unpacked under
/// `$CARGO_HOME/registry/src`. The dry run builds each crate against the others' packages
/// and unpacks those there, but reuses a folder that already exists: after a change to
/// `doris-sql`, `doris-plan` would be verified against the `doris-sql` of the previous run
/// (measured: a removed dependency still "missing" in a stale copy). Nothing of these
/// crates comes from crates.io, so every such folder is a left-over of a dry run.
fn forget_unpacked_copies() -> Result<(), String> {
    let Some(home) = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo")))
    else {
        return Ok(());
    };
    let Ok(registries) = std::fs::read_dir(home.join("registry/src")) else {
        return Ok(());
    };
    for registry in registries.flatten() {
        let Ok(entries) = std::fs::read_dir(registry.path()) else {
            continue;
        };
        for entry in entries.flatten() {
            if is_unpacked_copy(&entry.file_name().to_string_lossy()) {
                std::fs::remove_dir_all(entry.path())
                    .map_err(|e| format!("cannot remove {}: {e}", entry.path().display()))?;
            }
        }
    }
    Ok(())
}

/// Removes the build fingerprints of [`PUBLISHED`] crates built from the dry run's
/// temporary registry. Cargo tracks no source file of a registry crate (its dep-info lists
/// none) and takes its build as fresh while its version and dependencies are the same,
/// so without this `doris-read` was verified against an earlier run's `doris-sql`
/// (measured: `unresolved import doris_sql::session` after it was added). Only those units
/// rebuild; the workspace's own builds of the crates, whose dep-info lists their sources,
/// are kept.
fn forget_registry_builds(profile: &std::path::Path) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(profile.join(".fingerprint")) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = PUBLISHED.iter().any(|krate| {
            name.strip_prefix(krate)
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|hash| hash.chars().all(|c| c.is_ascii_hexdigit()))
        });
        if ours && is_registry_build(&entry.path()) {
            std::fs::remove_dir_all(entry.path())
                .map_err(|e| format!("cannot remove {}: {e}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Whether a unit's fingerprint folder is a registry build: a library dep-info that names
/// no source file.
fn is_registry_build(folder: &std::path::Path) -> bool {
    std::fs::read_dir(folder).is_ok_and(|files| {
        files.flatten().any(|f| {
            f.file_name().to_string_lossy().starts_with("dep-lib-")
                && std::fs::read(f.path()).is_ok_and(|bytes| !bytes.windows(3).any(|w| w == b".rs"))
        })
    })
}

/// Whether a `registry/src` folder name is `<published crate>-<version>`.
fn is_unpacked_copy(folder: &str) -> bool {
    PUBLISHED.iter().any(|krate| {
        folder
            .strip_prefix(krate)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit()))
    })
}

#[cfg(test)]
mod tests {
    use super::{is_registry_build, is_unpacked_copy};

    #[test]
    #[allow(clippy::unwrap_used)]
    fn a_registry_build_is_the_one_whose_dep_info_names_no_source() {
        let root = std::env::temp_dir().join(format!("xtask-fp-{}", std::process::id()));
        let registry = root.join("doris-sql-aa");
        let workspace = root.join("doris-sql-bb");
        std::fs::create_dir_all(&registry).unwrap();
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::write(
            registry.join("dep-lib-doris_sql"),
            [1, 0, 0, 0, 0xff, 1, 0, 0],
        )
        .unwrap();
        std::fs::write(workspace.join("dep-lib-doris_sql"), b"\x01src/lib.rs\x00").unwrap();
        assert!(is_registry_build(&registry));
        assert!(!is_registry_build(&workspace));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn only_our_crates_unpacked_copies_are_forgotten() {
        assert!(is_unpacked_copy("doris-sql-0.1.0"));
        assert!(is_unpacked_copy("doris-streamload-12.0.3"));
        // crates.io crates whose names start like ours, and other folders, stay.
        assert!(!is_unpacked_copy("doris-sqlx-0.1.0"));
        assert!(!is_unpacked_copy("doris-read-ext-0.2.0"));
        assert!(!is_unpacked_copy("serde-1.0.229"));
        assert!(!is_unpacked_copy("doris-plan"));
    }
}
