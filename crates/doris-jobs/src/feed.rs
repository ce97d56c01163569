//! Feeding a streaming job from files (docs/streaming-jobs.md): the checked pieces a feeder
//! builds on, without I/O.
//!
//! - [`S3Source`]: what a job reads (`S3(uri, format, properties…)`), checked when made, and
//!   the job's `INSERT` from it ([`S3Source::insert`]).
//! - [`JobSettings`]: the job properties set by name (batch bounds, interval, the offset to
//!   start after, session variables), checked, as [`Properties`].
//! - [`StagePlan`]: where staged files go and how they are named, so that successive
//!   stagings sort in time order; a name that would sort at or below the job's offset is
//!   refused before anything is written (Doris would never load it).
//! - [`feed_progress`]: whether a job has loaded the last staged file, is still on its way,
//!   or is paused.
//!
//! ```
//! use std::time::{Duration, UNIX_EPOCH};
//! use doris_jobs::{JobSettings, S3Source, StagePlan};
//! use doris_sql::TableRef;
//!
//! let source = S3Source::new("s3://bkt/in/*.parquet", "parquet", [("s3.region", "eu")]).unwrap();
//! assert_eq!(source.bucket(), "bkt");
//! let insert = source.insert(TableRef::new("db", "events").unwrap(), None).unwrap();
//! assert!(insert.to_sql().unwrap().starts_with("INSERT INTO `db`.`events` SELECT * FROM S3("));
//!
//! let settings = JobSettings { max_batch_files: Some(2), ..JobSettings::default() };
//! assert_eq!(settings.properties().unwrap().get("s3.max_batch_files"), Some("2"));
//!
//! let at = UNIX_EPOCH + Duration::from_micros(1_764_700_000_123_456);
//! let plan = StagePlan::new("s3://bkt/in", "part-", "parquet", at).unwrap();
//! assert_eq!(plan.key(0), "in/part-20251202T182640123456Z-000000.parquet");
//! assert!(plan.check_after(Some("in/part-2025")).is_ok());
//! assert!(plan.check_after(Some("in/zzz")).is_err());
//! ```

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use chrono::{DateTime, Datelike, Timelike};

use doris_sql::{Result, SqlError, TableRef};

use crate::sql::{JobRow, JobStatus, Properties, S3Insert, S3Offset};

/// The file formats a streaming job's `S3(…)` source reads.
pub const S3_FORMATS: &[&str] = &["csv", "csv_with_names", "json", "parquet"];
/// The formats [`StagePlan`] names files for.
pub const STAGE_FORMATS: &[&str] = &["parquet", "csv", "json"];
/// Largest value of a numeric job setting.
pub const MAX_JOB_SETTING: u64 = 1 << 62;
/// Most rows one staged file holds.
pub const MAX_ROWS_PER_FILE: u64 = 1 << 40;
/// Longest pause reason [`feed_progress`] reports (Doris's `ErrorMsg` can be long).
pub const MAX_PAUSE_REASON: usize = 500;

const S3_SCHEMES: &[&str] = &["s3://", "s3a://", "s3n://"];

fn invalid(message: impl Into<String>) -> SqlError {
    SqlError::InvalidQuery(message.into())
}

/// `(bucket, rest)` of an `s3://bucket/rest` uri (also `s3a://`, `s3n://`).
fn split_s3_uri(uri: &str) -> Option<(&str, &str)> {
    let lower = uri.get(..6).unwrap_or(uri).to_ascii_lowercase();
    let scheme = S3_SCHEMES.iter().find(|s| lower.starts_with(**s))?;
    let rest = &uri[scheme.len()..];
    Some(rest.split_once('/').unwrap_or((rest, "")))
}

/// What a streaming job reads: `S3("uri" = …, "format" = …, properties…)`, checked when
/// made. Credentials among the properties never appear in `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct S3Source {
    uri: String,
    format: String,
    properties: Vec<(String, String)>,
}

impl S3Source {
    /// A source reading the files `uri` (`s3://bucket/key-pattern`) matches, in `format`
    /// (one of [`S3_FORMATS`]), with the S3 table function's other `properties`
    /// (`s3.endpoint`, `s3.region`, credentials, CSV options; not `uri` or `format`).
    pub fn new<K, V>(
        uri: &str,
        format: &str,
        properties: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let (bucket, pattern) =
            split_s3_uri(uri).ok_or_else(|| invalid("the source uri must start with s3://"))?;
        if bucket.is_empty() || pattern.is_empty() {
            return Err(invalid("the source uri needs a bucket and a key pattern"));
        }
        if !S3_FORMATS.contains(&format) {
            return Err(invalid(format!(
                "format must be one of {}",
                quoted_list(S3_FORMATS)
            )));
        }
        let mut checked = Vec::new();
        for (key, value) in properties {
            let (key, value) = (key.into(), value.into());
            if key.is_empty() {
                return Err(invalid("a source property key is empty"));
            }
            if key.eq_ignore_ascii_case("uri") || key.eq_ignore_ascii_case("format") {
                return Err(invalid(format!(
                    "give {key} as the source's own field, not in properties"
                )));
            }
            checked.push((key, value));
        }
        Ok(Self {
            uri: uri.to_owned(),
            format: format.to_owned(),
            properties: checked,
        })
    }

    /// The uri, as given.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The format.
    pub fn format(&self) -> &str {
        &self.format
    }

    /// The bucket the uri names.
    pub fn bucket(&self) -> &str {
        split_s3_uri(&self.uri).map_or("", |(bucket, _)| bucket)
    }

    /// The other properties, in order.
    pub fn properties(&self) -> &[(String, String)] {
        &self.properties
    }

    /// `INSERT INTO table [(columns)] SELECT * FROM S3(…)`: `columns`, when given, are
    /// distinct valid column names, at least one.
    pub fn insert(&self, table: TableRef, columns: Option<Vec<String>>) -> Result<S3Insert> {
        if let Some(columns) = &columns {
            doris_sql::check_column_list(columns)?;
        }
        let mut insert = S3Insert::new(table, self.uri.clone(), self.format.clone());
        insert.columns = columns;
        for (k, v) in &self.properties {
            insert = insert.property(k.clone(), v.clone());
        }
        Ok(insert)
    }
}

impl fmt::Debug for S3Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut shown = Properties::default();
        for (k, v) in &self.properties {
            shown.set(k.clone(), v.clone());
        }
        f.debug_struct("S3Source")
            .field("uri", &self.uri)
            .field("format", &self.format)
            .field("properties", &shown)
            .finish()
    }
}

fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The job properties set by name. Each is checked by [`JobSettings::properties`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobSettings {
    /// `s3.max_batch_files`: files per task (1 to [`MAX_JOB_SETTING`]).
    pub max_batch_files: Option<u64>,
    /// `s3.max_batch_bytes`: bytes per task.
    pub max_batch_bytes: Option<u64>,
    /// `max_interval`: seconds between task starts.
    pub max_interval_seconds: Option<u64>,
    /// `offset`: the key of the last file to skip (the job starts after it).
    pub offset: Option<String>,
    /// `session.<name>`: session variables of every task's INSERT (names of letters,
    /// digits and `_`), as text.
    pub session: Vec<(String, String)>,
}

impl JobSettings {
    /// Whether no setting is given.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The settings as job properties, in the order above.
    pub fn properties(&self) -> Result<Properties> {
        let mut out = Properties::default();
        for (key, value) in [
            ("s3.max_batch_files", self.max_batch_files),
            ("s3.max_batch_bytes", self.max_batch_bytes),
            ("max_interval", self.max_interval_seconds),
        ] {
            if let Some(value) = value {
                if !(1..=MAX_JOB_SETTING).contains(&value) {
                    return Err(invalid(format!(
                        "{key} must be an integer from 1 to {MAX_JOB_SETTING}"
                    )));
                }
                out.set(key, value.to_string());
            }
        }
        for (name, value) in &self.session {
            let valid =
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !valid {
                return Err(invalid(
                    "a session variable name must be letters, digits and '_'",
                ));
            }
            out.set(format!("session.{name}"), value.clone());
        }
        if let Some(end_file) = &self.offset {
            if end_file.is_empty() {
                return Err(invalid("offset must be the key of the last file to skip"));
            }
            let offset = S3Offset {
                end_file: end_file.clone(),
            };
            out.set("offset", offset.property_value());
        }
        Ok(out)
    }
}

/// Where a staging's files go and what they are called:
/// `<folder><prefix><UTC stamp>-<n, 6 digits>.<format>` in one bucket. The stamp is the
/// plan's creation time to the microsecond, so successive stagings sort in time order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StagePlan {
    bucket: String,
    folder: String,
    prefix: String,
    stamp: String,
    extension: &'static str,
}

impl StagePlan {
    /// The file name prefix of a staging that names none.
    pub const DEFAULT_PREFIX: &'static str = "part-";
    /// The file format of a staging that names none.
    pub const DEFAULT_FORMAT: &'static str = "parquet";
    /// The most rows one staged file holds unless told otherwise.
    pub const DEFAULT_ROWS_PER_FILE: u64 = 1_000_000;

    /// A plan for files under `destination` (`s3://bucket/folder/`; the folder may be
    /// empty) named with `prefix` (no `/`), in `file_format` (one of [`STAGE_FORMATS`]),
    /// stamped with `created`.
    pub fn new(
        destination: &str,
        prefix: &str,
        file_format: &str,
        created: SystemTime,
    ) -> Result<Self> {
        let (bucket, folder) = split_s3_uri(destination)
            .ok_or_else(|| invalid("destination must be an s3://bucket/folder/ uri"))?;
        if bucket.is_empty() {
            return Err(invalid("destination names no bucket"));
        }
        if prefix.contains('/') {
            return Err(invalid("prefix must be a file name prefix without '/'"));
        }
        let extension = STAGE_FORMATS
            .iter()
            .copied()
            .find(|f| *f == file_format)
            .ok_or_else(|| {
                invalid(format!(
                    "file_format must be one of {}",
                    quoted_list(STAGE_FORMATS)
                ))
            })?;
        let mut folder = folder.to_owned();
        if !folder.is_empty() && !folder.ends_with('/') {
            folder.push('/');
        }
        Ok(Self {
            bucket: bucket.to_owned(),
            folder,
            prefix: prefix.to_owned(),
            stamp: utc_stamp(created)?,
            extension,
        })
    }

    /// The bucket.
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// The key (within the bucket) of the `n`th file.
    pub fn key(&self, n: usize) -> String {
        format!(
            "{}{}{}-{n:06}.{}",
            self.folder, self.prefix, self.stamp, self.extension
        )
    }

    /// Refuses the plan if its first file would sort at or below `offset`, the key of
    /// the last file the job loaded (`None`: it loaded none): the job would never load it.
    pub fn check_after(&self, offset: Option<&str>) -> Result<()> {
        let first = self.key(0);
        match offset {
            Some(offset) if first.as_str() <= offset => Err(SqlError::StagingOrder(format!(
                "staged files named like {first:?} sort at or below the job's offset \
                 {offset:?}: Doris would never load them; use a prefix that sorts later"
            ))),
            _ => Ok(()),
        }
    }
}

/// `YYYYMMDDTHHMMSSffffffZ` of `at`, in UTC.
fn utc_stamp(at: SystemTime) -> Result<String> {
    let micros = at
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_micros()).ok())
        .and_then(DateTime::from_timestamp_micros)
        .ok_or_else(|| invalid("the staging time is out of range"))?;
    Ok(format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}{:06}Z",
        micros.year(),
        micros.month(),
        micros.day(),
        micros.hour(),
        micros.minute(),
        micros.second(),
        micros.timestamp_subsec_micros()
    ))
}

/// Where a job stands with respect to the last file staged for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FeedProgress {
    /// The job's offset has reached the file: it is loaded.
    Loaded,
    /// Not yet, and the job is running (or about to).
    Waiting,
    /// The job is PAUSED (by `PAUSE JOB` or a failed task) before reaching the file.
    Paused {
        /// Doris's `ErrorMsg` (at most [`MAX_PAUSE_REASON`] bytes), or that it was paused.
        reason: String,
    },
}

/// Where `job` stands with respect to `last_key` (`None`: nothing was staged, so
/// nothing is awaited). Keys sort bytewise, as the job lists them.
pub fn feed_progress(job: &JobRow, last_key: Option<&str>) -> FeedProgress {
    let reached = match (last_key, &job.current_offset) {
        (None, _) => true,
        (Some(key), Some(offset)) => offset.end_file.as_str() >= key,
        (Some(_), None) => false,
    };
    if reached {
        return FeedProgress::Loaded;
    }
    if job.status != JobStatus::Paused {
        return FeedProgress::Waiting;
    }
    let reason = if job.error_msg.is_empty() {
        "paused by PAUSE JOB".to_owned()
    } else {
        let mut end = job.error_msg.len().min(MAX_PAUSE_REASON);
        while !job.error_msg.is_char_boundary(end) {
            end -= 1;
        }
        job.error_msg[..end].to_owned()
    };
    FeedProgress::Paused { reason }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use proptest::prelude::*;

    use super::*;

    fn at(micros: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_micros(micros)
    }

    #[test]
    fn sources_are_checked_when_made_and_hide_credentials() {
        let none: [(&str, &str); 0] = [];
        for (uri, format, problem) in [
            ("/local/*.csv", "csv", "must start with s3://"),
            ("https://b/k", "csv", "must start with s3://"),
            ("s3://bucket-only", "csv", "a bucket and a key pattern"),
            ("s3:///k", "csv", "a bucket and a key pattern"),
            ("s3://b/k", "orc", "format must be one of"),
        ] {
            let e = S3Source::new(uri, format, none).unwrap_err();
            assert!(e.to_string().contains(problem), "{uri} {format}: {e}");
        }
        let e = S3Source::new("s3://b/k", "csv", [("URI", "s3://x/y")]).unwrap_err();
        assert!(e.to_string().contains("own field"), "{e}");
        let source = S3Source::new("S3A://b/in/*.csv", "csv", [("s3.secret_key", "sk-9")]).unwrap();
        assert_eq!(source.bucket(), "b");
        assert!(!format!("{source:?}").contains("sk-9"));
    }

    #[test]
    fn insert_columns_must_be_distinct_names() {
        let none: [(&str, &str); 0] = [];
        let source = S3Source::new("s3://b/k", "json", none).unwrap();
        let table = || TableRef::new("d", "t").unwrap();
        for (columns, problem) in [
            (vec![], "at least one"),
            (vec!["a".to_owned(), "a".to_owned()], "repeat"),
            (vec![String::new()], "column"),
        ] {
            let e = source.insert(table(), Some(columns)).unwrap_err();
            assert!(e.to_string().contains(problem), "{e}");
        }
        let sql = source
            .insert(table(), Some(vec!["a".into(), "b".into()]))
            .unwrap()
            .to_sql()
            .unwrap();
        assert!(sql.starts_with("INSERT INTO `d`.`t` (`a`, `b`) SELECT * FROM S3("));
    }

    #[test]
    fn job_settings_are_checked_and_rendered_by_name() {
        let settings = JobSettings {
            max_batch_files: Some(1),
            max_interval_seconds: Some(MAX_JOB_SETTING),
            offset: Some("in/a.csv".into()),
            session: vec![("insert_max_filter_ratio".into(), "0.1".into())],
            ..JobSettings::default()
        };
        let props = settings.properties().unwrap();
        assert_eq!(props.get("s3.max_batch_files"), Some("1"));
        assert_eq!(props.get("session.insert_max_filter_ratio"), Some("0.1"));
        assert_eq!(props.get("offset"), Some(r#"{"fileName":"in/a.csv"}"#));
        assert!(JobSettings::default().is_empty() && !settings.is_empty());
        for bad in [
            JobSettings {
                max_batch_bytes: Some(0),
                ..JobSettings::default()
            },
            JobSettings {
                max_batch_files: Some(MAX_JOB_SETTING + 1),
                ..JobSettings::default()
            },
            JobSettings {
                offset: Some(String::new()),
                ..JobSettings::default()
            },
            JobSettings {
                session: vec![("a; DROP".into(), "1".into())],
                ..JobSettings::default()
            },
        ] {
            assert!(bad.properties().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn stage_plans_refuse_bad_destinations_prefixes_and_formats() {
        for (destination, prefix, format, problem) in [
            ("/tmp/x", "p-", "parquet", "s3://bucket/folder/"),
            ("s3:///in/", "p-", "parquet", "no bucket"),
            ("s3://b/in/", "a/b", "parquet", "without '/'"),
            ("s3://b/in/", "p-", "orc", "file_format"),
        ] {
            let e = StagePlan::new(destination, prefix, format, at(0)).unwrap_err();
            assert!(e.to_string().contains(problem), "{destination}: {e}");
        }
        let plan = StagePlan::new("s3://b", "p-", "csv", at(0)).unwrap();
        assert_eq!(plan.key(7), "p-19700101T000000000000Z-000007.csv");
        assert_eq!(plan.bucket(), "b");
        // The defaults a caller that names none takes are accepted.
        let plan = StagePlan::new(
            "s3://b",
            StagePlan::DEFAULT_PREFIX,
            StagePlan::DEFAULT_FORMAT,
            at(0),
        )
        .unwrap();
        assert_eq!(plan.key(0), "part-19700101T000000000000Z-000000.parquet");
        assert!((1..=MAX_ROWS_PER_FILE).contains(&StagePlan::DEFAULT_ROWS_PER_FILE));
    }

    #[test]
    fn a_plan_that_would_sort_at_or_below_the_offset_is_refused() {
        let plan = StagePlan::new("s3://b/in/", "m-", "json", at(5)).unwrap();
        assert!(plan.check_after(None).is_ok());
        assert!(plan.check_after(Some("in/a")).is_ok());
        let first = plan.key(0);
        assert!(matches!(
            plan.check_after(Some(&first)),
            Err(SqlError::StagingOrder(_))
        ));
        assert!(plan.check_after(Some("in/z")).is_err());
    }

    proptest! {
        /// Later plans name files that sort after every file of earlier plans, whatever
        /// the times (to the microsecond) and file numbers.
        #[test]
        fn later_stagings_sort_after_earlier_ones(
            t in 0u64..4_000_000_000_000_000,
            dt in 1u64..1_000_000_000_000,
            n in 0usize..1_000_000,
            m in 0usize..1_000_000,
        ) {
            let early = StagePlan::new("s3://b/in/", "part-", "parquet", at(t)).unwrap();
            let late = StagePlan::new("s3://b/in/", "part-", "parquet", at(t + dt)).unwrap();
            prop_assert!(late.key(m) > early.key(n));
            prop_assert!(late.check_after(Some(&early.key(n))).is_ok());
            prop_assert_eq!(early.key(n) < early.key(n + 1), true);
        }
    }

    fn job(status: JobStatus, offset: Option<&str>, error_msg: &str) -> JobRow {
        JobRow {
            id: 1,
            name: "j".into(),
            definer: "root".into(),
            execute_type: "STREAMING".into(),
            recurring_strategy: String::new(),
            status,
            execute_sql: String::new(),
            create_time: String::new(),
            succeed_task_count: 0,
            failed_task_count: 0,
            canceled_task_count: 0,
            comment: String::new(),
            properties: Default::default(),
            current_offset: offset.map(|f| S3Offset {
                end_file: f.to_owned(),
            }),
            end_offset: None,
            load_statistic: Default::default(),
            error_msg: error_msg.into(),
            job_runtime_msg: String::new(),
        }
    }

    #[test]
    fn progress_is_loaded_once_the_offset_reaches_the_last_key_even_if_paused_after() {
        use JobStatus::{Paused, Running};
        let last = Some("in/b");
        assert_eq!(
            feed_progress(&job(Running, None, ""), None),
            FeedProgress::Loaded
        );
        assert_eq!(
            feed_progress(&job(Running, None, ""), last),
            FeedProgress::Waiting
        );
        assert_eq!(
            feed_progress(&job(Running, Some("in/a"), ""), last),
            FeedProgress::Waiting
        );
        for offset in ["in/b", "in/c"] {
            assert_eq!(
                feed_progress(&job(Paused, Some(offset), "x"), last),
                FeedProgress::Loaded
            );
        }
        assert_eq!(
            feed_progress(&job(Paused, Some("in/a"), ""), last),
            FeedProgress::Paused {
                reason: "paused by PAUSE JOB".into()
            }
        );
        let long = "é".repeat(400);
        match feed_progress(&job(Paused, None, &long), last) {
            FeedProgress::Paused { reason } => assert!(reason.len() <= MAX_PAUSE_REASON),
            other => panic!("{other:?}"),
        }
    }
}
