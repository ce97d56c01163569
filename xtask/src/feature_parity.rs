//! Part of `cargo xtask deps`: the Python package's build resolves every crate it shares
//! with the workspace's test build with the same features (crates/workspace-hack).
//!
//! `cargo test --workspace` resolves features over every member; `maturin develop` builds
//! `daft-doris-py` alone. A crate with other features there is compiled a second time,
//! with everything that depends on it (397 s of a cold CI run before this rule). The
//! workspace-hack crate asks for the workspace's extra features; this check compares the
//! two resolutions with `cargo tree` and names what the hack must add when they drift
//! (after a dependency update, say).

use std::collections::{BTreeMap, BTreeSet};

use crate::run::cargo;

/// The feature sets of each `name version`, as `cargo tree --format "{p} {f}"` prints
/// them: a crate built for the host (a build script's or a proc macro's dependency) and for
/// the target can have two.
type Resolution = BTreeMap<String, BTreeSet<BTreeSet<String>>>;

/// Fails when a crate of the Python package's tree has other features there than in the
/// workspace's test build.
pub(crate) fn feature_parity() -> Result<(), String> {
    let wheel = resolve(&["-p", "daft-doris-py", "-e", "normal,build"])?;
    let workspace = resolve(&["--workspace", "-e", "normal,build,dev"])?;
    let drift = drift(&wheel, &workspace);
    println!(
        "    daft-doris-py: {} crates resolved with the test build's features ({} differ)",
        wheel.len(),
        drift.len()
    );
    if drift.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the Python package's build would compile these crates again, with other features than \
             the test build's; add the features to crates/workspace-hack/Cargo.toml: {}",
            drift.join("; ")
        ))
    }
}

fn resolve(selection: &[&str]) -> Result<Resolution, String> {
    let out = cargo()
        .arg("tree")
        .args(selection)
        .args(["--prefix", "none", "--format", "{p} {f}"])
        .output()
        .map_err(|e| format!("cargo tree: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo tree {} failed: {}",
            selection.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(parse_tree(&String::from_utf8_lossy(&out.stdout)))
}

/// Parses `cargo tree --prefix none --format "{p} {f}"`: `name vX.Y.Z [(path)] [features]
/// [(*)]` per line.
fn parse_tree(text: &str) -> Resolution {
    let mut resolution = Resolution::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let (Some(name), Some(version)) = (words.next(), words.next()) else {
            continue;
        };
        let features: BTreeSet<String> = words
            // the path of a workspace crate, or `(*)` for a crate listed already
            .filter(|word| !word.starts_with('('))
            .flat_map(|word| word.split(','))
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .collect();
        resolution
            .entry(format!("{name} {version}"))
            .or_default()
            .insert(features);
    }
    resolution
}

/// Each crate of `wheel` with a feature set `workspace` does not resolve, with both.
fn drift(wheel: &Resolution, workspace: &Resolution) -> Vec<String> {
    let show = |sets: &BTreeSet<BTreeSet<String>>| {
        sets.iter()
            .map(|set| format!("[{}]", set.iter().cloned().collect::<Vec<_>>().join(", ")))
            .collect::<Vec<_>>()
            .join(" and ")
    };
    wheel
        .iter()
        .filter_map(|(krate, sets)| match workspace.get(krate) {
            None => Some(format!("{krate}: not in the test build's tree")),
            // A set only the test build has (a host copy the package does not need) costs
            // nothing; a set only the package has is a second compilation.
            Some(theirs) if sets.is_subset(theirs) => None,
            Some(theirs) => Some(format!(
                "{krate}: the test build has {}, the package {}",
                show(theirs),
                show(sets)
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{drift, parse_tree};

    #[test]
    fn the_drift_names_each_crate_and_both_feature_sets() {
        let wheel = parse_tree(
            "arrow v59.3.2 ipc,json\n\
             daft-doris-py v0.1.0 (/w/crates/daft-doris-py) \n\
             tokio v1.54.1 rt,net\n\
             tokio v1.54.1 rt,net (*)\n",
        );
        let workspace = parse_tree(
            "arrow v59.3.2 ipc,json,prettyprint\n\
             daft-doris-py v0.1.0 (/w/crates/daft-doris-py) \n\
             tokio v1.54.1 net,rt\n\
             doris-emulator v0.1.0 (/w/tests/emulator) default,sql\n",
        );
        assert_eq!(
            drift(&wheel, &workspace),
            ["arrow v59.3.2: the test build has [ipc, json, prettyprint], the package [ipc, json]"]
        );
        assert!(drift(&workspace, &workspace).is_empty());
        // The test build's host-only copy of a crate is no drift.
        let host_only = parse_tree("memchr v2.8.3 alloc,default,std\nmemchr v2.8.3 alloc,std\n");
        assert!(drift(&parse_tree("memchr v2.8.3 alloc,default,std\n"), &host_only).is_empty());
    }

    #[test]
    fn host_and_target_feature_sets_are_compared_apart() {
        // `either` for a build script (host) and for the library (target): the same union,
        // yet the target's set differs, so the package would compile it again.
        let wheel = parse_tree("either v1.19.0 default,std\neither v1.19.0 std,use_std\n");
        let workspace =
            parse_tree("either v1.19.0 default,std,use_std\neither v1.19.0 std,use_std\n");
        assert_eq!(
            drift(&wheel, &workspace),
            [
                "either v1.19.0: the test build has [default, std, use_std] and [std, use_std], \
                 the package [default, std] and [std, use_std]"
            ]
        );
    }

    #[test]
    fn a_crate_only_the_package_resolves_is_drift_too() {
        let wheel = parse_tree("pyo3 v0.30.0 abi3\n");
        assert_eq!(
            drift(&wheel, &parse_tree("")),
            ["pyo3 v0.30.0: not in the test build's tree"]
        );
    }
}
