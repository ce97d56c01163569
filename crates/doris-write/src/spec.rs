//! [`WriteSpec`]: what a caller asked of a whole write, checked together, and the Stream
//! Load options and mode it implies.

use std::collections::BTreeMap;
use std::time::Duration;

use doris_sql::WriteOperation;
use doris_sql::release::DorisRelease;

use crate::PartitionLabels;
use crate::atomic::CommitRecord;
use doris_streamload::ClientConfig;
use doris_streamload::StreamLoadError;
use doris_streamload::{CsvOptions, Format, LoadOptions, MergeType, UpdateMode};
use doris_streamload::{Label, LabelScheme};

/// Most rows of one load batch.
pub const MAX_BATCH_ROWS: usize = 1_000_000;
/// Most bytes of one load batch.
pub const MAX_BATCH_BYTES: u64 = 1 << 30;
/// Most retries of one load.
pub const MAX_RETRIES: u32 = 20;
/// Longest label prefix: with the key, the content fingerprint, the occurrence and the
/// sequence number, a label stays within Doris's 128 characters.
pub const MAX_LABEL_PREFIX: usize = 95;
/// Longest idempotence key.
pub const MAX_IDEMPOTENCE_KEY: usize = 64;
/// Longest label prefix and idempotence key together.
pub const MAX_PREFIX_AND_KEY: usize = 80;

/// How a write commits (`docs/consistency.md` compares them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// One Doris transaction for the whole write, under a label from the key, recorded in
    /// the commit ledger ([`crate::atomic`]).
    Atomic,
    /// Load by load, each with a deterministic label from the key and the partition
    /// ([`PartitionLabels`]).
    PerLoadLabels,
    /// Load by load, each pre-committed, all committed at the end.
    TwoPhase,
    /// Load by load, random labels.
    Plain,
}

impl WriteMode {
    /// `"atomic"`, `"per_load_labels"`, `"two_phase"` or `"plain"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Atomic => "atomic",
            Self::PerLoadLabels => "per_load_labels",
            Self::TwoPhase => "two_phase",
            Self::Plain => "plain",
        }
    }
}

/// Whether a write adds rows or replaces the table's (`write_doris`'s `write_mode`:
/// `"append"`, the default, or `"overwrite"`, which sets [`WriteSpec::overwrite`]).
///
/// ```
/// use doris_write::WriteDisposition;
/// assert!("overwrite".parse::<WriteDisposition>().unwrap().overwrites());
/// assert!(!WriteDisposition::default().overwrites());
/// assert!("replace".parse::<WriteDisposition>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriteDisposition {
    /// Add the rows.
    #[default]
    Append,
    /// Replace every row of the table, in one transaction.
    Overwrite,
}

impl WriteDisposition {
    /// The names [`FromStr`](std::str::FromStr) accepts.
    pub const NAMES: [&'static str; 2] = ["append", "overwrite"];

    /// `"append"` or `"overwrite"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Append => "append",
            Self::Overwrite => "overwrite",
        }
    }

    /// Whether the write replaces the table's rows.
    pub fn overwrites(self) -> bool {
        self == Self::Overwrite
    }
}

impl std::str::FromStr for WriteDisposition {
    type Err = StreamLoadError;

    /// `"append"` or `"overwrite"`; anything else is a configuration error naming both
    /// (never the value given).
    fn from_str(name: &str) -> Result<Self, StreamLoadError> {
        match name {
            "append" => Ok(Self::Append),
            "overwrite" => Ok(Self::Overwrite),
            _ => Err(StreamLoadError::Config(
                "write_mode must be one of 'append', 'overwrite'".into(),
            )),
        }
    }
}

/// What a write asked for: every option of `write_doris`, as Rust values.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteSpec {
    /// What the write does with its rows.
    pub operation: WriteOperation,
    /// The Stream Load body (`None`: Arrow).
    pub format: Option<Format>,
    /// Most rows per load.
    pub batch_rows: usize,
    /// Target encoded bytes per load.
    pub batch_bytes: u64,
    /// Every label starts with it.
    pub label_prefix: String,
    /// The write's idempotence key.
    pub idempotence_key: Option<String>,
    /// Doris's `max_filter_ratio`.
    pub max_filter_ratio: f64,
    /// Doris's `strict_mode`.
    pub strict_mode: bool,
    /// The client's wait for each load's answer (the reference connector 1.1's
    /// `request_timeout_seconds`: its socket timeout, nothing sent to Doris); `None`: the
    /// connection's.
    pub timeout: Option<Duration>,
    /// The Stream Load `timeout` header: how long Doris lets each load run (`None`: Doris's
    /// own default, `stream_load_default_timeout_second`).
    pub load_timeout: Option<Duration>,
    /// Further Stream Load properties (headers), checked by [`LoadOptions::set_property`].
    pub load_properties: BTreeMap<String, String>,
    /// Pre-commit every load, commit them all at the end.
    pub two_phase_commit: bool,
    /// Retries of one load.
    pub max_retries: u32,
    /// The atomic mode: `Some` as asked, `None` for the default ([`WriteSpec::mode`]).
    pub atomic: Option<bool>,
    /// Replace every row of the table (atomic, `Load` only).
    pub overwrite: bool,
    /// Where an atomic write remembers its committed key.
    pub commit_record: CommitRecord,
}

impl WriteSpec {
    /// A spec with the defaults of `write_doris`.
    pub fn new(operation: WriteOperation) -> Self {
        Self {
            operation,
            format: None,
            batch_rows: 65_536,
            batch_bytes: 64 * 1024 * 1024,
            label_prefix: "daft_doris".into(),
            idempotence_key: None,
            max_filter_ratio: 0.0,
            strict_mode: true,
            timeout: None,
            load_timeout: None,
            load_properties: BTreeMap::new(),
            two_phase_commit: false,
            max_retries: 4,
            atomic: None,
            overwrite: false,
            commit_record: CommitRecord::default(),
        }
    }

    /// How the write commits. Unless `atomic` says otherwise, a write with an idempotence
    /// key or an overwrite is atomic, except a two-phase write and a delete (which are not
    /// staged); the other keyed writes use per-load labels.
    pub fn mode(&self) -> WriteMode {
        let atomic = self.atomic.unwrap_or(
            (self.idempotence_key.is_some() || self.overwrite)
                && !self.two_phase_commit
                && self.operation != WriteOperation::Delete,
        );
        if atomic {
            WriteMode::Atomic
        } else if self.two_phase_commit {
            WriteMode::TwoPhase
        } else if self.idempotence_key.is_some() {
            WriteMode::PerLoadLabels
        } else {
            WriteMode::Plain
        }
    }

    /// The key an atomic run of this write commits under: the idempotence key, or a new
    /// random one (an atomic write without a key is all-or-nothing, and a rerun of it is a
    /// new write).
    pub fn atomic_key(&self) -> String {
        self.idempotence_key
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string())
    }

    /// Checks every option and their combinations before anything runs; the error names
    /// the option and the rule, never a value.
    pub fn check(&self) -> Result<(), StreamLoadError> {
        let config = |m: &str| Err(StreamLoadError::Config(m.to_owned()));
        if self.operation == WriteOperation::PartialUpdate
            && matches!(self.format, Some(Format::Parquet | Format::Csv(_)))
        {
            return config("partial_update requires format='arrow' or 'json'");
        }
        if !(1..=MAX_BATCH_ROWS).contains(&self.batch_rows) {
            return config("batch_rows must be an integer from 1 to 1000000");
        }
        if !(1..=MAX_BATCH_BYTES).contains(&self.batch_bytes) {
            return config("batch_bytes must be an integer from 1 to 1073741824");
        }
        if !(0.0..=1.0).contains(&self.max_filter_ratio) || self.max_filter_ratio.is_nan() {
            return config("max_filter_ratio must be a number from 0 to 1");
        }
        if self.max_retries > MAX_RETRIES {
            return config("max_retries must be an integer from 0 to 20");
        }
        let atomic = self.mode() == WriteMode::Atomic;
        if self.overwrite && !(atomic && self.operation == WriteOperation::Load) {
            return config(
                "write_mode='overwrite' replaces the table in one atomic transaction: it needs \
                 the atomic mode and operation='load'",
            );
        }
        if atomic && self.operation == WriteOperation::Delete {
            return config(
                "atomic writes support operation='load', 'upsert' and 'partial_update' \
                 (deletes are not staged; see docs/consistency.md)",
            );
        }
        if atomic && self.two_phase_commit {
            return config("atomic writes commit once themselves: two_phase_commit does not apply");
        }
        if let CommitRecord::Ledger(ledger) = &self.commit_record {
            doris_sql::validate_ident("table", ledger)
                .map_err(|e| StreamLoadError::Config(format!("commit_ledger: {e}")))?;
        }
        self.check_labels()?;
        self.load_options().map(|_| ())
    }

    /// Refuses, before anything is written, what the server's Doris `release` cannot run
    /// as asked (`None`: its `@@version_comment` names no release): the atomic mode
    /// ([`crate::atomic::check_release`]); `partial_update_new_key_behavior` and flexible
    /// partial updates, which releases before 3.1 ignore (a partial update would then
    /// append new keys, or reset the columns it does not name); group commit before 2.1.1
    /// (2.1.0 ignores it on a chunked body).
    pub fn check_release(&self, release: Option<DorisRelease>) -> Result<(), StreamLoadError> {
        if self.mode() == WriteMode::Atomic {
            crate::atomic::check_release(release)?;
        }
        let options = self.load_options()?;
        let refuse = |feature: &'static str, floor: DorisRelease, why: &str| {
            StreamLoadError::UnsupportedRelease {
                release: release.map_or_else(|| "(unknown release)".into(), |r| r.to_string()),
                feature,
                detail: format!("it needs Doris {floor} or later: {why}"),
            }
        };
        let flexible = DorisRelease::new(3, 1, 0);
        let below = |floor: DorisRelease| release.is_none_or(|r| r < floor);
        if options.new_key_behavior.is_some() && below(flexible) {
            return Err(refuse(
                "partial_update_new_key_behavior",
                flexible,
                "older releases ignore the header and let strict_mode decide new keys                  (strict_mode=true refuses them, false appends them)",
            ));
        }
        if options.update_mode == UpdateMode::FlexibleColumns && below(flexible) {
            return Err(refuse(
                "unique_key_update_mode=UPDATE_FLEXIBLE_COLUMNS",
                flexible,
                "older releases ignore the header and load full rows, resetting the columns                  a row does not name",
            ));
        }
        let chunked_group_commit = DorisRelease::new(2, 1, 1);
        if options.group_commit.is_some() && below(chunked_group_commit) {
            return Err(refuse(
                "group_commit",
                chunked_group_commit,
                "2.1.0 turns group commit off for a chunked body, which every load sends",
            ));
        }
        Ok(())
    }

    /// Refuses a write whose tasks an engine may retry or run twice (Daft's Ray runner)
    /// unless it is atomic: only the atomic mode publishes the rows of the attempts that
    /// succeeded and no others.
    pub fn check_retried_tasks(&self) -> Result<(), StreamLoadError> {
        if self.mode() == WriteMode::Atomic {
            return Ok(());
        }
        Err(StreamLoadError::Config(
            "Doris Stream Load writes require Daft's native runner, or on Ray atomic=True (or an \
             idempotence key with atomic=True): only the atomic mode keeps its guarantees when \
             Ray retries tasks"
                .into(),
        ))
    }

    /// Every label the write can make fits Doris's grammar.
    fn check_labels(&self) -> Result<(), StreamLoadError> {
        const PREFIX_RULE: &str = "label_prefix must be 1-95 letters, digits, '-' or '_'";
        const KEY_RULE: &str = "idempotence_key must be 1-64 letters, digits, '-', '_' or ':'";
        let starts_alphanumeric =
            |s: &str| s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
        let prefix = &self.label_prefix;
        if !starts_alphanumeric(prefix)
            || prefix.len() > MAX_LABEL_PREFIX
            || prefix.contains(':')
            || Label::new(prefix.as_str()).is_err()
        {
            return Err(StreamLoadError::Config(PREFIX_RULE.into()));
        }
        if let Some(key) = &self.idempotence_key {
            if !starts_alphanumeric(key)
                || key.len() > MAX_IDEMPOTENCE_KEY
                || Label::new(key.as_str()).is_err()
            {
                return Err(StreamLoadError::Config(KEY_RULE.into()));
            }
            if prefix.len() + key.len() > MAX_PREFIX_AND_KEY {
                return Err(StreamLoadError::Config(
                    "label_prefix and idempotence_key together must be at most 80 characters \
                     (labels also carry a content fingerprint and sequence numbers, 128 in all)"
                        .into(),
                ));
            }
            // The longest label of the write: key, fingerprint, occurrence, sequence.
            PartitionLabels::longest_scheme(prefix, key).validate()?;
        }
        if self.mode() == WriteMode::Atomic {
            // The key's label goes into SQL: checked in the form it takes there.
            crate::atomic::key_label(prefix, &self.atomic_key())?;
        }
        LabelScheme::Random {
            prefix: prefix.clone(),
        }
        .validate()
    }

    /// Settles what the write takes from its connection: a write without its own timeout
    /// takes the connection's `default_timeout` (the client's wait for an answer), and the
    /// client retries a load `max_retries` times.
    pub fn configure_client(&mut self, config: &mut ClientConfig, default_timeout: Duration) {
        let timeout = *self.timeout.get_or_insert(default_timeout);
        config.answer_timeout = timeout;
        config.retry.max_attempts = self.max_retries.saturating_add(1);
    }

    /// The Stream Load options of every load: the operation, format and settings, then the
    /// caller's load properties, checked together ([`LoadOptions::validate`]: combinations
    /// Doris refuses, headers the client manages).
    pub fn load_options(&self) -> Result<LoadOptions, StreamLoadError> {
        let mut options = LoadOptions {
            max_filter_ratio: self.max_filter_ratio,
            strict_mode: self.strict_mode,
            two_phase_commit: self.two_phase_commit,
            format: self.format.clone().unwrap_or(Format::Arrow),
            ..LoadOptions::default()
        };
        match self.operation {
            // `partial_columns: true`: every release since 2.0 reads it, where
            // `unique_key_update_mode` is ignored before flexible partial update (3.1) and
            // the load would become a full-row upsert.
            WriteOperation::PartialUpdate => {
                options.update_mode = UpdateMode::FixedColumns {
                    legacy_header: true,
                };
            }
            WriteOperation::Delete => options.merge_type = MergeType::Delete,
            WriteOperation::Load | WriteOperation::Upsert => {}
        }
        for (key, value) in &self.load_properties {
            options.set_property(key, value)?;
        }
        if let Some(t) = self.load_timeout {
            options.timeout = Some(t);
        }
        options.validate()?;
        Ok(options)
    }

    /// The settings that decide how a partition's rows are cut into loads and what each
    /// load does: part of every per-load label's fingerprint, so a rerun with other
    /// settings never finds another load's rows under a label.
    pub(crate) fn load_shape(&self) -> String {
        let format = match &self.format {
            None | Some(Format::Arrow) => "arrow",
            Some(Format::Parquet) => "parquet",
            Some(Format::Json) => "json",
            Some(Format::Csv(_)) => "csv",
        };
        format!(
            "{}|{format}|{}|{}|{:?}",
            self.operation.as_str(),
            self.batch_rows,
            self.batch_bytes,
            self.load_properties
        )
    }
}

/// The format a caller names: `arrow`, `parquet`, `json` or `csv` (`None` for Arrow).
pub fn parse_format(name: Option<&str>) -> Result<Option<Format>, StreamLoadError> {
    Ok(match name {
        None => None,
        Some("arrow") => Some(Format::Arrow),
        Some("parquet") => Some(Format::Parquet),
        Some("json") => Some(Format::Json),
        Some("csv") => Some(Format::Csv(CsvOptions::default())),
        Some(_) => {
            return Err(StreamLoadError::Config(
                "format must be arrow, parquet, json or csv".into(),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_atomic_default_follows_the_key_and_the_operation() {
        let mut spec = WriteSpec::new(WriteOperation::Load);
        assert_eq!(spec.mode(), WriteMode::Plain);
        spec.overwrite = true;
        assert_eq!(spec.mode(), WriteMode::Atomic);
        spec.overwrite = false;
        spec.idempotence_key = Some("k".into());
        assert_eq!(spec.mode(), WriteMode::Atomic);
        spec.operation = WriteOperation::Delete;
        assert_eq!(
            spec.mode(),
            WriteMode::PerLoadLabels,
            "deletes are not staged"
        );
        spec.operation = WriteOperation::Upsert;
        spec.two_phase_commit = true;
        assert_eq!(spec.mode(), WriteMode::TwoPhase);
        spec.atomic = Some(true);
        assert!(spec.check().is_err());
    }

    #[test]
    fn every_rule_is_checked_with_a_message_that_names_the_option() {
        let bad = [
            (
                WriteSpec {
                    batch_rows: 0,
                    ..WriteSpec::new(WriteOperation::Load)
                },
                "batch_rows",
            ),
            (
                WriteSpec {
                    format: Some(Format::Parquet),
                    ..WriteSpec::new(WriteOperation::PartialUpdate)
                },
                "partial_update",
            ),
            (
                WriteSpec {
                    overwrite: true,
                    ..WriteSpec::new(WriteOperation::Upsert)
                },
                "overwrite",
            ),
            (
                WriteSpec {
                    idempotence_key: Some("k k".into()),
                    ..WriteSpec::new(WriteOperation::Load)
                },
                "idempotence_key",
            ),
            (
                WriteSpec {
                    label_prefix: "p".repeat(70),
                    idempotence_key: Some("k".repeat(20)),
                    ..WriteSpec::new(WriteOperation::Load)
                },
                "together",
            ),
            (
                WriteSpec {
                    commit_record: CommitRecord::Ledger(String::new()),
                    ..WriteSpec::new(WriteOperation::Load)
                },
                "commit_ledger",
            ),
            (
                WriteSpec {
                    max_filter_ratio: 1.5,
                    ..WriteSpec::new(WriteOperation::Load)
                },
                "max_filter_ratio",
            ),
        ];
        for (spec, word) in bad {
            let e = spec.check().unwrap_err().to_string();
            assert!(e.contains(word), "{word}: {e}");
        }
        assert!(WriteSpec::new(WriteOperation::Delete).check().is_ok());
    }

    #[test]
    fn the_operation_decides_the_load_options() {
        let partial = WriteSpec::new(WriteOperation::PartialUpdate)
            .load_options()
            .unwrap();
        assert!(matches!(
            partial.update_mode,
            UpdateMode::FixedColumns { .. }
        ));
        let delete = WriteSpec::new(WriteOperation::Delete)
            .load_options()
            .unwrap();
        assert_eq!(delete.merge_type, MergeType::Delete);
        let mut with_props = WriteSpec::new(WriteOperation::Load);
        with_props
            .load_properties
            .insert("label".into(), "mine".into());
        assert!(
            with_props.load_options().is_err(),
            "the client manages labels"
        );
    }

    #[test]
    fn the_request_timeout_stays_in_the_client_and_the_load_timeout_goes_to_doris() {
        let config = || {
            ClientConfig::new(
                "http://fe:8030".parse().unwrap(),
                doris_streamload::Credentials::new("u", ""),
            )
        };
        let mut spec = WriteSpec::new(WriteOperation::Load);
        let mut config_a = config();
        spec.configure_client(&mut config_a, Duration::from_secs(42));
        let config = config();
        assert_eq!(config_a.answer_timeout, Duration::from_secs(42));
        // 1.1's request_timeout_seconds: the client's wait, no Stream Load `timeout`.
        spec.timeout = Some(Duration::from_secs(7));
        assert_eq!(spec.load_options().unwrap().timeout, None);
        spec.load_timeout = Some(Duration::from_secs(900));
        assert_eq!(
            spec.load_options().unwrap().timeout,
            Some(Duration::from_secs(900))
        );
        let mut config = config;
        spec.configure_client(&mut config, Duration::from_secs(42));
        assert_eq!(config.answer_timeout, Duration::from_secs(7));
    }
}
