//! The Doris release a server runs, read from `@@version_comment`, so that the crates can
//! choose what a release supports (or refuse, naming the release) before any row moves.
//!
//! Doris answers `SELECT @@version_comment` with `Doris version <build>-<hash>`, where the
//! build is `doris-<major>.<minor>.<patch>[-<tag>]` (`GlobalVariable.versionComment` in
//! the FE; vendors prefix it, e.g. `selectdb-doris-2.1.7`). A development build says
//! `doris-0.0.0-trunk`: its release is not known.
//!
//! ```
//! use doris_sql::release::DorisRelease;
//! let r = DorisRelease::from_version_comment("Doris version doris-3.0.5-rc01-7b7f1e6").unwrap();
//! assert_eq!(r, DorisRelease::new(3, 0, 5));
//! assert!(r >= DorisRelease::new(3, 0, 0) && r < DorisRelease::new(3, 1, 0));
//! assert_eq!("2.1".parse::<DorisRelease>().unwrap(), DorisRelease::new(2, 1, 0));
//! assert_eq!(DorisRelease::from_version_comment("Doris version doris-0.0.0-trunk-1a2b"), None);
//! ```

use std::fmt;
use std::str::FromStr;

use crate::error::SqlError;

/// The statement whose one cell names the server's build (`@@version_comment`).
pub const RELEASE_QUERY: &str = "SELECT @@version_comment";

/// A Doris release, `major.minor.patch`; ordered as releases are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DorisRelease {
    /// Major version (2 in 2.1.7).
    pub major: u16,
    /// Minor version (1 in 2.1.7).
    pub minor: u16,
    /// Patch version (7 in 2.1.7).
    pub patch: u16,
}

impl DorisRelease {
    /// `major.minor.patch`.
    pub const fn new(major: u16, minor: u16, patch: u16) -> Self {
        Self {
            major,
            minor,
            patch,
        }
    }

    /// The release named by a `@@version_comment` text, `None` when the text names none
    /// (another server, or a development build, `0.0.0`). Doris's builds say
    /// `doris-X.Y.Z…`; vendor builds of Doris say `selectdb-…` or `velodb-…` before theirs;
    /// a hotfix's fourth number (`X.Y.Z.W`) is read as the release `X.Y.Z` it patches.
    pub fn from_version_comment(text: &str) -> Option<Self> {
        let lower = text.to_ascii_lowercase();
        let mut starts: Vec<usize> = VENDOR_MARKERS
            .iter()
            .flat_map(|marker| lower.match_indices(marker).map(|(at, m)| at + m.len()))
            .collect();
        starts.sort_unstable();
        let release = starts
            .into_iter()
            .find_map(|at| leading_release(&lower[at..]))?;
        (release != Self::new(0, 0, 0)).then_some(release)
    }
}

/// What stands before the release in the `@@version_comment` of Doris and of the vendor
/// builds of Doris.
const VENDOR_MARKERS: [&str; 3] = ["doris-", "selectdb-", "velodb-"];

/// `major.minor.patch` (and an optional hotfix number, dropped) at the start of `text`,
/// followed by anything but a digit or a dot.
fn leading_release(text: &str) -> Option<DorisRelease> {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let mut parts = text[..end].split('.');
    let mut number = || -> Option<u16> { parts.next()?.parse().ok() };
    let release = DorisRelease::new(number()?, number()?, number()?);
    match parts.next() {
        None => Some(release),
        Some(hotfix) if hotfix.parse::<u16>().is_ok() && parts.next().is_none() => Some(release),
        Some(_) => None,
    }
}

impl fmt::Display for DorisRelease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl FromStr for DorisRelease {
    type Err = SqlError;

    /// `2.1` (patch 0) or `2.1.7`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || SqlError::InvalidQuery("a Doris release is written 2.1 or 2.1.7".into());
        let parts: Vec<&str> = text.trim().split('.').collect();
        let number = |s: &str| s.parse::<u16>().map_err(|_| bad());
        match parts.as_slice() {
            [major, minor] => Ok(Self::new(number(major)?, number(minor)?, 0)),
            [major, minor, patch] => Ok(Self::new(number(major)?, number(minor)?, number(patch)?)),
            _ => Err(bad()),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn version_comments_of_each_line() {
        for (text, want) in [
            ("Doris version doris-2.1.10-rc01-0a5ce1b", Some((2, 1, 10))),
            ("Doris version doris-3.0.3-rc03-43f06a5e26", Some((3, 0, 3))),
            ("Doris version doris-3.1.0-rc02-8c1b2a", Some((3, 1, 0))),
            ("Doris version doris-4.0.6-emulator", Some((4, 0, 6))),
            ("Doris version doris-4.1.0", Some((4, 1, 0))),
            (
                "Doris version selectdb-doris-2.1.7-b1-1234",
                Some((2, 1, 7)),
            ),
            ("Doris version doris-0.0.0-trunk-abc", None),
            ("Doris version doris-2.1-rc01", None),
            ("Doris version doris-2.1.7.1-x", Some((2, 1, 7))),
            ("Doris version selectdb-3.0.4-enterprise", Some((3, 0, 4))),
            ("Doris version velodb-4.0.2.3-a1b2", Some((4, 0, 2))),
            ("Doris version doris-2.1.7.1.9", None),
            ("5.7.99", None),
            ("", None),
        ] {
            let got = DorisRelease::from_version_comment(text);
            assert_eq!(
                got,
                want.map(|(a, b, c)| DorisRelease::new(a, b, c)),
                "{text}"
            );
        }
    }

    #[test]
    fn releases_order_and_parse() {
        assert!(DorisRelease::new(2, 1, 10) > DorisRelease::new(2, 1, 9));
        assert!(DorisRelease::new(3, 0, 0) > DorisRelease::new(2, 9, 99));
        assert_eq!(
            "3.0.4".parse::<DorisRelease>().unwrap().to_string(),
            "3.0.4"
        );
        assert!("3".parse::<DorisRelease>().is_err());
        assert!("3.x".parse::<DorisRelease>().is_err());
        assert!("3.0.4.1".parse::<DorisRelease>().is_err());
    }
}
