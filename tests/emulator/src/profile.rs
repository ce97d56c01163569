//! [`DorisProfile`]: the behaviours that differ between Doris releases, in one place.
//!
//! Each field is one switch whose two or three settings are spellings or protocol choices
//! seen in real releases; the default is the current 2.1.6+/3.x/4.x behaviour. A test that
//! pins an older release sets the fields that release differs in.

use crate::mysql::prepared::PrepareProfile;

/// The release-dependent behaviours the emulator can take (`EmulatorConfig::profile`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DorisProfile {
    /// Which Doris generation's COM_STMT_PREPARE the MySQL face speaks (default: 2.1.5 and
    /// later, server-side prepare with binary rows).
    pub prepare: PrepareProfile,
    /// How `DESC` and `SHOW CREATE TABLE` spell types: [`doris_sql::Spelling::Lower`] as
    /// 2.1.6+, 3.x and 4.x do (default), `Upper` as 2.1.0–2.1.5, `Legacy` as 1.x/2.0.
    pub type_spelling: doris_sql::Spelling,
    /// Offer CLIENT_DEPRECATE_EOF on the MySQL face, as Doris master does (PR #67520);
    /// `false` (default): classic EOF packets, as every 2.x/3.x release.
    pub mysql_deprecate_eof: bool,
    /// `Label Already Exists` in the older wording, `Label [l] has already been used.`,
    /// without the `relate to txn [id]` part newer releases add (`false`: the newer one).
    pub legacy_label_exists_text: bool,
    /// JSON/VARIANT result columns described as STRING (254), as older releases did;
    /// `false`: JSON (245), as newer ones do.
    pub json_as_string: bool,
}

impl Default for DorisProfile {
    fn default() -> Self {
        Self {
            prepare: PrepareProfile::default(),
            type_spelling: doris_sql::Spelling::Lower,
            mysql_deprecate_eof: false,
            legacy_label_exists_text: false,
            json_as_string: false,
        }
    }
}
