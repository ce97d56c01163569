//! `cargo xtask package`: the library crates stay publishable.
//!
//! Three steps:
//!
//! 1. `cargo package` builds each crate's `.crate` file as crates.io would receive it:
//!    metadata present, every dependency with a version (path dependencies carry one
//!    through the workspace), the README included, dev-dependencies on the emulator
//!    stripped. Offline, from the local registry cache, without a build.
//! 2. `cargo publish --dry-run --no-verify` does what a release does before its build: it
//!    checks the crates against the crates.io index, published together.
//! 3. Each crate is type-checked from its packaged source alone: the `.crate` files are
//!    unpacked into a workspace of their own (the unpublished crates patched in by path,
//!    the versions of `Cargo.lock`), and `cargo check -p <crate>` runs once per crate, so
//!    each compiles with only the features its own manifest asks for. A file outside the
//!    crate, or a dependency or feature only the workspace gives, fails here, as it would
//!    in `cargo publish`'s verifying build — which compiled about 470 crates for code
//!    generation (186 s of a cold CI run); a check skips the code generation. doris-read
//!    is checked once more without its default `flight` feature (a MySQL-only user's
//!    build), doris-jobs without its default `admin` feature (statements only, no I/O),
//!    doris-plan without `http` and doris-streamload without `client` (parsers and rules
//!    only). Each crate is documented right after its check (`cargo doc --no-deps`,
//!    broken links and markup are errors), from the same package: rustdoc reuses the
//!    dependencies' metadata the check made, where documenting from the workspace
//!    type-checked every dependency a second time (220 s of a cold CI run).

use std::path::{Path, PathBuf};

use crate::run::{cargo, niced, root, shared_target, step};

/// The crates published separately, in dependency order.
pub(crate) const PUBLISHED: [&str; 8] = [
    "doris-connection",
    "doris-sql",
    "doris-mysql",
    "doris-plan",
    "doris-read",
    "doris-streamload",
    "doris-write",
    "doris-jobs",
];

/// Packages every crate of [`PUBLISHED`], dry-runs their publication, then checks each from
/// its package (at the lowest CPU priority: `cargo xtask ci` runs it beside pytest).
pub(crate) fn package() -> Result<(), String> {
    let mut run = cargo();
    run.args(["package", "--offline", "--no-verify", "--allow-dirty"]);
    for krate in PUBLISHED {
        run.args(["-p", krate]);
    }
    step(
        "package: the published crates as crates.io would receive them",
        niced(&run),
    )?;
    let mut publish = cargo();
    publish.args(["publish", "--dry-run", "--no-verify", "--allow-dirty"]);
    for krate in PUBLISHED {
        publish.args(["-p", krate]);
    }
    step(
        "publish --dry-run: the crates against the crates.io index",
        niced(&publish),
    )?;
    let workspace = unpack_packages(&shared_target().join("package"))?;
    // A build folder of their own: the package workspace shares no compiled unit with the
    // main one (other features, no clippy wrapper), and apart from it these checks never
    // wait for the lock of a cargo command running in the main workspace meanwhile.
    let target = shared_target().join("package-check-target");
    let in_workspace = || {
        let mut command = cargo();
        command
            .current_dir(&workspace)
            .env("CARGO_TARGET_DIR", &target);
        command
    };
    for krate in PUBLISHED {
        let mut check = in_workspace();
        check.args(["check", "--offline", "--quiet", "--lib", "-p", krate]);
        step(
            &format!("{krate}: checked from its package alone"),
            niced(&check),
        )?;
        // Its documentation from the same package, right after its check: rustdoc needs
        // the dependencies' metadata, which the check just made with the same features.
        let mut doc = in_workspace();
        doc.args([
            "doc",
            "--offline",
            "--quiet",
            "--no-deps",
            "--lib",
            "-p",
            krate,
        ]);
        doc.env("RUSTDOCFLAGS", "-D warnings");
        step(
            &format!("{krate}: documented from its package (rustdoc -D warnings)"),
            niced(&doc),
        )?;
    }
    // Each crate's default feature left out, as a user who needs only the rest builds it:
    // doris-read for MySQL only (no arrow-flight, tonic, prost), doris-jobs as statements
    // and parsers (no doris-read, no I/O), doris-plan as the answer parser and the
    // grouping (no reqwest, tokio), doris-streamload as the answer parsers and the
    // exactly-once rules (no arrow, parquet, hyper, reqwest, tokio).
    for (krate, feature) in [
        ("doris-read", "flight"),
        ("doris-jobs", "admin"),
        ("doris-plan", "http"),
        ("doris-streamload", "client"),
    ] {
        let mut without = in_workspace();
        without.args([
            "check",
            "--offline",
            "--quiet",
            "--lib",
            "-p",
            krate,
            "--no-default-features",
        ]);
        step(
            &format!("{krate}: checked without the {feature} feature"),
            niced(&without),
        )?;
    }
    Ok(())
}

/// Unpacks the newest `.crate` of every [`PUBLISHED`] crate from `packages` into a fresh
/// workspace beside it, whose `[patch.crates-io]` points each crate's dependents at the
/// unpacked sibling; returns the workspace's folder.
fn unpack_packages(packages: &Path) -> Result<PathBuf, String> {
    let workspace = packages.with_file_name("package-check");
    let _ = std::fs::remove_dir_all(&workspace);
    std::fs::create_dir_all(&workspace)
        .map_err(|e| format!("cannot create {}: {e}", workspace.display()))?;
    let mut members = Vec::new();
    for krate in PUBLISHED {
        let file = newest_package(packages, krate)?;
        // `-m`: the files get the time they are unpacked, not the archive's fixed one, so
        // cargo sees changed sources as changed (the shared build folder keeps the last
        // run's artifacts for these same paths, which an archive time would leave "fresh").
        let untarred = std::process::Command::new("tar")
            .arg("-xzmf")
            .arg(&file)
            .arg("-C")
            .arg(&workspace)
            .status()
            .map_err(|e| format!("cannot run tar: {e}"))?;
        if !untarred.success() {
            return Err(format!("tar could not unpack {}", file.display()));
        }
        let folder = file
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .ok_or_else(|| format!("no name in {}", file.display()))?;
        members.push((krate, folder));
    }
    std::fs::write(workspace.join("Cargo.toml"), check_manifest(&members))
        .map_err(|e| format!("cannot write the check workspace: {e}"))?;
    std::fs::copy(root().join("Cargo.lock"), workspace.join("Cargo.lock"))
        .map_err(|e| format!("cannot copy Cargo.lock: {e}"))?;
    Ok(workspace)
}

/// The check workspace's manifest: the unpacked crates, each patched in by path.
fn check_manifest(members: &[(&str, String)]) -> String {
    let list: Vec<String> = members.iter().map(|(_, f)| format!("{f:?}")).collect();
    let mut manifest = format!(
        "# Written by `cargo xtask package`: the published crates, unpacked.\n\
         [workspace]\nresolver = \"3\"\nmembers = [{}]\n\n[patch.crates-io]\n",
        list.join(", ")
    );
    for (krate, folder) in members {
        manifest.push_str(&format!("{krate} = {{ path = {folder:?} }}\n"));
    }
    manifest
}

/// The most recently written `<krate>-<version>.crate` in `packages`.
fn newest_package(packages: &Path, krate: &str) -> Result<PathBuf, String> {
    let entries = std::fs::read_dir(packages)
        .map_err(|e| format!("no packages in {}: {e}", packages.display()))?;
    entries
        .flatten()
        .filter(|entry| is_package_of(&entry.file_name().to_string_lossy(), krate))
        .max_by_key(|entry| entry.metadata().and_then(|m| m.modified()).ok())
        .map(|entry| entry.path())
        .ok_or_else(|| format!("cargo package made no {krate} package"))
}

/// Whether a file name is `<krate>-<version>.crate`.
fn is_package_of(file: &str, krate: &str) -> bool {
    file.strip_suffix(".crate")
        .and_then(|rest| rest.strip_prefix(krate))
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::{check_manifest, is_package_of};

    #[test]
    fn only_our_crates_packages_are_taken() {
        assert!(is_package_of("doris-sql-0.1.0.crate", "doris-sql"));
        assert!(is_package_of(
            "doris-streamload-12.0.3.crate",
            "doris-streamload"
        ));
        // crates whose names start like ours, other files and folders, are not.
        assert!(!is_package_of("doris-sqlx-0.1.0.crate", "doris-sql"));
        assert!(!is_package_of("doris-read-ext-0.2.0.crate", "doris-read"));
        assert!(!is_package_of("doris-sql-0.1.0", "doris-sql"));
        assert!(!is_package_of("doris-plan-0.1.0.crate", "doris-sql"));
    }

    #[test]
    fn the_check_workspace_patches_every_crate_in_by_path() {
        let manifest = check_manifest(&[
            ("doris-sql", "doris-sql-0.1.0".into()),
            ("doris-plan", "doris-plan-0.1.0".into()),
        ]);
        assert!(manifest.contains("members = [\"doris-sql-0.1.0\", \"doris-plan-0.1.0\"]"));
        assert!(
            manifest.contains("[patch.crates-io]\ndoris-sql = { path = \"doris-sql-0.1.0\" }\n")
        );
        assert!(manifest.contains("doris-plan = { path = \"doris-plan-0.1.0\" }\n"));
    }
}
