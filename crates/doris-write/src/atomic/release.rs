//! Which Doris releases can run the atomic write, decided from the server's release
//! ([`doris_sql::release`]) before anything is created or loaded.
//!
//! | release | the atomic write | why |
//! |---|---|---|
//! | before 3.0 | refused | an explicit transaction runs only `INSERT … VALUES` into one table (`INSERT … SELECT` inside `BEGIN` from 3.0; regression suite `insert_p0/transaction`) |
//! | 3.0.0 – 3.0.3 | refused | a committed transaction could stay COMMITTED, never VISIBLE, after an FE restart (apache/doris#44190, merged 2024-11-18; the first 3.0 patch carrying it is taken conservatively as 3.0.4) |
//! | 3.0.4 and later | runs | `SHOW TRANSACTION` needs the global ADMIN privilege on 3.0 (apache/doris#45920), LOAD on the database from 3.1 (#52358, #53997) |
//!
//! A server whose `@@version_comment` names no release (a development build, another
//! server) is refused too: nothing tells which of the rows above holds.

use doris_sql::release::DorisRelease;
use doris_streamload::StreamLoadError;

/// The first release the atomic write runs on.
pub const ATOMIC_WRITE_FLOOR: DorisRelease = DorisRelease::new(3, 0, 4);

/// What the atomic write is called in a refusal.
const FEATURE: &str = "the atomic write (idempotence_key / atomic=True / overwrite)";

/// The release, when the atomic write runs on it; otherwise
/// [`StreamLoadError::UnsupportedRelease`] naming the release, why, and what to use instead.
pub fn check_release(release: Option<DorisRelease>) -> Result<DorisRelease, StreamLoadError> {
    let refuse = |release: String, detail: String| StreamLoadError::UnsupportedRelease {
        release,
        feature: FEATURE,
        detail,
    };
    let Some(release) = release else {
        return Err(refuse(
            "(unknown release)".into(),
            format!(
                "the server's @@version_comment names no Doris release; the atomic write needs \
                 Doris {ATOMIC_WRITE_FLOOR} or later. Use atomic=False (one label per load)"
            ),
        ));
    };
    if release < DorisRelease::new(3, 0, 0) {
        return Err(refuse(
            release.to_string(),
            format!(
                "before 3.0 an explicit transaction runs only INSERT ... VALUES, so the staged \
                 rows cannot be published in one transaction. Use atomic=False (one label per \
                 load, exactly once while Doris keeps the labels) or Doris {ATOMIC_WRITE_FLOOR} \
                 or later"
            ),
        ));
    }
    if release < ATOMIC_WRITE_FLOOR {
        return Err(refuse(
            release.to_string(),
            format!(
                "a committed transaction may never become visible after an FE restart on this \
                 release (apache/doris#44190). Upgrade to Doris {ATOMIC_WRITE_FLOOR} or later, \
                 or use atomic=False"
            ),
        ));
    }
    Ok(release)
}

/// The privilege `SHOW TRANSACTION … WHERE LABEL` needs on `release`, as Doris names it.
pub fn label_lookup_privilege(release: DorisRelease) -> &'static str {
    if release < DorisRelease::new(3, 1, 0) {
        "the global ADMIN privilege (SHOW TRANSACTION on Doris 3.0; LOAD on the database is enough from 3.1)"
    } else {
        "LOAD on the database (SHOW TRANSACTION)"
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn each_line_of_the_table() {
        let refused = |r: Option<DorisRelease>| match check_release(r) {
            Err(StreamLoadError::UnsupportedRelease {
                release, detail, ..
            }) => (release, detail),
            other => panic!("{other:?}"),
        };
        let (release, detail) = refused(Some(DorisRelease::new(2, 1, 10)));
        assert_eq!(release, "2.1.10");
        assert!(detail.contains("INSERT ... VALUES") && detail.contains("atomic=False"));
        let (release, detail) = refused(Some(DorisRelease::new(3, 0, 3)));
        assert_eq!(release, "3.0.3");
        assert!(detail.contains("44190"));
        let (release, _) = refused(None);
        assert_eq!(release, "(unknown release)");
        for ok in [(3, 0, 4), (3, 1, 0), (4, 0, 6), (4, 1, 0)] {
            let r = DorisRelease::new(ok.0, ok.1, ok.2);
            assert_eq!(check_release(Some(r)).unwrap(), r);
        }
        assert!(label_lookup_privilege(DorisRelease::new(3, 0, 9)).starts_with("the global ADMIN"));
        assert!(label_lookup_privilege(DorisRelease::new(3, 1, 0)).starts_with("LOAD"));
    }
}
