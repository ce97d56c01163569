//! [`DorisProfile`]: the behaviours that differ between Doris releases, in one place.
//!
//! Each field is one switch whose two or three settings are spellings or protocol choices
//! seen in real releases; the default is the current 2.1.6+/3.x/4.x behaviour. A test that
//! pins an older release sets the fields that release differs in.

use doris_sql::release::DorisRelease;

use crate::mysql::prepared::PrepareProfile;

/// The release-dependent behaviours the emulator can take (`EmulatorConfig::profile`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DorisProfile {
    /// The Doris release emulated (`--doris-version`, default the newest, 4.1): what
    /// `@@version_comment` names, and the behaviours that follow the release (see
    /// [`DorisProfile::for_release`] and docs/wire-inventory.md).
    pub release: DorisRelease,
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
    /// `enable_unicode_name_support` (`--unicode-names`); `None`: the release's default, off
    /// before 4.0 and on from 4.0 (apache/doris#53479), see [`DorisProfile::name_rules`].
    pub unicode_names: Option<bool>,
}

/// The newest release the emulator follows (its default).
pub const NEWEST: DorisRelease = DorisRelease::new(4, 1, 0);

impl DorisProfile {
    /// The profile of `release`: the default behaviours with the release set (the
    /// behaviours that follow the release read it through the methods below).
    pub fn for_release(release: DorisRelease) -> Self {
        Self {
            release,
            ..Self::default()
        }
    }

    /// `SELECT @@version_comment`'s answer.
    pub fn version_comment(&self) -> String {
        format!("Doris version doris-{}-emulator", self.release)
    }

    /// Whether an explicit transaction (`BEGIN` … `COMMIT`) runs `INSERT … SELECT` (from
    /// 3.0; 2.1 runs `INSERT … VALUES` into one table only).
    pub fn insert_select_in_transaction(&self) -> bool {
        self.release >= DorisRelease::new(3, 0, 0)
    }

    /// Whether `SHOW TRANSACTION` needs the global ADMIN privilege (2.1 and 3.0) rather
    /// than LOAD on the database (from 3.1).
    pub fn show_transaction_needs_admin(&self) -> bool {
        self.release < DorisRelease::new(3, 1, 0)
    }

    /// The rules new table and column names follow: from 4.0, unicode support is on by
    /// default and names may hold any character (apache/doris#53479, taken as carried by
    /// 4.0: Doris 4.0.6 creates a table whose name holds a space); before, the regexes of
    /// `FeNameFormat`, unicode letters only when `enable_unicode_name_support` is on.
    pub fn name_rules(&self) -> crate::names::NameRules {
        use crate::names::NameRules;
        let any_era = self.release >= DorisRelease::new(4, 0, 0);
        match (self.unicode_names.unwrap_or(any_era), any_era) {
            (false, _) => NameRules::Latin,
            (true, false) => NameRules::Unicode,
            (true, true) => NameRules::Any,
        }
    }

    /// Whether Flight results carry DATETIME as a time-zone-naive timestamp of the wall clock
    /// (apache/doris#66873 on master, picked to 4.1 as #67027, taken here as 4.1.3 and
    /// later); before, as the instant of the wall clock in the session's zone, zoned
    /// (`flight::wire`).
    pub fn flight_datetime_naive(&self) -> bool {
        self.release >= DorisRelease::new(4, 1, 3)
    }

    /// Whether Stream Load reads `unique_key_update_mode` and
    /// `partial_update_new_key_behavior` (flexible partial update, from 3.1); before, both
    /// headers are ignored.
    pub fn flexible_partial_update(&self) -> bool {
        self.release >= DorisRelease::new(3, 1, 0)
    }
}

impl Default for DorisProfile {
    fn default() -> Self {
        Self {
            release: NEWEST,
            prepare: PrepareProfile::default(),
            type_spelling: doris_sql::Spelling::Lower,
            mysql_deprecate_eof: false,
            legacy_label_exists_text: false,
            json_as_string: false,
            unicode_names: None,
        }
    }
}
