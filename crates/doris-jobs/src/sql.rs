//! Doris 4.0 streaming jobs (`CREATE JOB … ON STREAMING`; docs/streaming-jobs.md): statement
//! builders and parsers for the `jobs("type"="insert")` / `tasks("type"="insert")` rows.
//!
//! A streaming job runs `INSERT INTO <table> SELECT … FROM S3(…)` over the files after its
//! offset, one transaction per task; the offset commits with the data, so every file is
//! loaded exactly once.
//!
//! Secrets: S3 properties whose key names a credential (`s3.secret_key`,
//! `s3.access_key`, `s3.session_token`, and any key containing `secret`, `password` or
//! `token`) are rendered into the statement but never shown by `Debug`, and no error
//! carries a property value.
//!
//! ```
//! use doris_jobs::{CreateStreamingJob, S3Insert};
//! use doris_sql::TableRef;
//! let insert = S3Insert::new(TableRef::new("db", "events").unwrap(), "s3://bucket/in/*.csv", "csv")
//!     .property("s3.secret_key", "sk-123");
//! let job = CreateStreamingJob::new("ingest_events", insert).property("s3.max_batch_files", "2");
//! let sql = job.to_sql().unwrap();
//! assert!(sql.starts_with("CREATE JOB `ingest_events` PROPERTIES ('s3.max_batch_files' = '2') ON STREAMING DO INSERT INTO `db`.`events` SELECT * FROM S3("));
//! assert!(!format!("{job:?}").contains("sk-123"));
//! ```

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use doris_sql::{Result, SqlError, TableRef, push_string_literal, quote_ident};

/// Words that make a property key a credential's, matched in the lower-cased key with
/// `.`, `-` and `_` taken as one separator (`AWS_ACCESS_KEY_ID`, `fs.s3a.access.key`,
/// `azure.account_key`, `gcs.private-key`, …).
const SECRET_KEY_WORDS: &[&str] = &[
    "secret",
    "password",
    "passwd",
    "token",
    "credential",
    "private_key",
    "access_key",
    "account_key",
    "api_key",
    "apikey",
    "sas_",
    "session_key",
];

/// Whether a property key names a credential (its value is never shown).
///
/// ```
/// use doris_jobs::is_secret_key;
/// for key in ["s3.secret_key", "s3.access_key", "AWS_ACCESS_KEY_ID", "fs.s3a.access.key",
///             "azure.account_key", "gcs.private-key", "hive.credentials", "x.password"] {
///     assert!(is_secret_key(key), "{key}");
/// }
/// for key in ["uri", "format", "s3.endpoint", "s3.region", "column_separator"] {
///     assert!(!is_secret_key(key), "{key}");
/// }
/// ```
pub fn is_secret_key(key: &str) -> bool {
    let k: String = key
        .to_ascii_lowercase()
        .chars()
        .map(|c| if matches!(c, '.' | '-') { '_' } else { c })
        .collect();
    SECRET_KEY_WORDS.iter().any(|word| k.contains(word))
}

/// A statement as Doris shows it back (`ExecuteSql` of `jobs()`), with the value of every
/// `'<credential key>' = '<value>'` pair replaced by `'*XXX'` (Doris's own mask), so that
/// rows, `Debug` and DataFrames never carry a secret. Quotes may be `'` or `"`.
///
/// ```
/// use doris_jobs::redact_statement;
/// assert_eq!(
///     redact_statement("S3('uri' = 's3://b/k', 's3.secret_key' = 'sk\\'1', \"s3.access_key\"=\"AK\")"),
///     "S3('uri' = 's3://b/k', 's3.secret_key' = '*XXX', \"s3.access_key\"='*XXX')"
/// );
/// // A doubled quote (as doris-sql writes one) stays inside the masked value.
/// assert_eq!(
///     redact_statement("S3('s3.secret_key' = 'sk''1', 'uri' = 's3://b/k')"),
///     "S3('s3.secret_key' = '*XXX', 'uri' = 's3://b/k')"
/// );
/// ```
pub fn redact_statement(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    // The last quoted text seen, and whether only `=` and spaces followed it since.
    let mut pending_secret = false;
    while let Some(at) = rest.find(['\'', '"']) {
        let (before, from) = rest.split_at(at);
        let quote = from.as_bytes()[0];
        let Some(len) = quoted_len(from, quote) else {
            // An unclosed literal (a statement cut short) that is a credential's value is
            // masked whole; any other is kept as it is.
            out.push_str(before);
            if pending_secret && before.trim() == "=" {
                out.push_str("'*XXX'");
            } else {
                out.push_str(from);
            }
            return out;
        };
        let (text, after) = from.split_at(len);
        let between = before.trim();
        if pending_secret && between == "=" {
            out.push_str(before);
            out.push_str("'*XXX'");
            pending_secret = false;
        } else {
            out.push_str(before);
            out.push_str(text);
            let inner = &text[1..text.len() - 1];
            pending_secret = is_secret_key(inner) && after.trim_start().starts_with('=');
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Length of the quoted literal at the start of `s` (quote, body with `\x` and doubled
/// quotes, closing quote); `None` when it does not close.
fn quoted_len(s: &str, quote: u8) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote && bytes.get(i + 1) == Some(&quote) => i += 2,
            b if b == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Ordered `key = value` properties with a redacting `Debug`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Properties(Vec<(String, String)>);

impl Properties {
    /// Sets `key` (replacing an earlier value).
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) {
        let key = key.into();
        let value = value.into();
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `('k' = 'v', …)`.
    fn push_sql(&self, out: &mut String) -> Result<()> {
        out.push('(');
        for (i, (k, v)) in self.0.iter().enumerate() {
            if k.is_empty() {
                return Err(SqlError::InvalidQuery("a property key is empty".into()));
            }
            if i > 0 {
                out.push_str(", ");
            }
            push_string_literal(out, k);
            out.push_str(" = ");
            push_string_literal(out, v);
        }
        out.push(')');
        Ok(())
    }
}

impl fmt::Debug for Properties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, v)| {
                let shown = if is_secret_key(k) { "[REDACTED]" } else { v };
                (k.as_str(), shown)
            }))
            .finish()
    }
}

/// `INSERT INTO <table> [(cols)] SELECT <list> FROM S3(<properties>)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Insert {
    /// Target table.
    pub table: TableRef,
    /// Target columns (`None`: all, in table order).
    pub columns: Option<Vec<String>>,
    /// The select list, e.g. `*` (trusted text).
    pub select_list: String,
    /// The S3 table function's properties (`uri`, `format`, credentials, …).
    pub source: Properties,
}

impl S3Insert {
    /// `INSERT INTO table SELECT * FROM S3("uri" = uri, "format" = format)`.
    pub fn new(table: TableRef, uri: impl Into<String>, format: impl Into<String>) -> Self {
        let mut source = Properties::default();
        source.set("uri", uri);
        source.set("format", format);
        Self {
            table,
            columns: None,
            select_list: "*".into(),
            source,
        }
    }

    /// Adds an S3 property (endpoint, region, credentials, CSV options, …).
    pub fn property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.source.set(key, value);
        self
    }

    /// Renders the statement.
    pub fn to_sql(&self) -> Result<String> {
        let mut sql = format!("INSERT INTO {}", self.table.to_sql());
        if let Some(columns) = &self.columns {
            if columns.is_empty() {
                return Err(SqlError::InvalidQuery("an empty column list".into()));
            }
            sql.push_str(" (");
            for (i, c) in columns.iter().enumerate() {
                if i > 0 {
                    sql.push_str(", ");
                }
                sql.push_str(&quote_ident("column", c)?);
            }
            sql.push(')');
        }
        if self.select_list.trim().is_empty() {
            return Err(SqlError::InvalidQuery("an empty select list".into()));
        }
        sql.push_str(" SELECT ");
        sql.push_str(&self.select_list);
        sql.push_str(" FROM S3");
        self.source.push_sql(&mut sql)?;
        Ok(sql)
    }
}

/// `CREATE JOB <name> [PROPERTIES (…)] ON STREAMING [COMMENT '…'] DO <insert>`: the order
/// Doris's regression suites run (PROPERTIES before the trigger) with the COMMENT where
/// Doris's grammar puts it for every job (after the trigger).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateStreamingJob {
    /// Job name.
    pub name: String,
    /// Job properties (`s3.max_batch_files`, `s3.max_batch_bytes`, `max_interval`,
    /// `offset`, `session.<var>`, …).
    pub properties: Properties,
    /// Comment.
    pub comment: Option<String>,
    /// What each task runs.
    pub insert: S3Insert,
}

impl CreateStreamingJob {
    /// A job with no properties and no comment.
    pub fn new(name: impl Into<String>, insert: S3Insert) -> Self {
        Self {
            name: name.into(),
            properties: Properties::default(),
            comment: None,
            insert,
        }
    }

    /// Adds a job property.
    pub fn property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.properties.set(key, value);
        self
    }

    /// Renders the statement.
    pub fn to_sql(&self) -> Result<String> {
        let mut sql = format!("CREATE JOB {}", quote_ident("job", &self.name)?);
        if !self.properties.is_empty() {
            sql.push_str(" PROPERTIES ");
            self.properties.push_sql(&mut sql)?;
        }
        sql.push_str(" ON STREAMING");
        if let Some(comment) = &self.comment {
            sql.push_str(" COMMENT ");
            push_string_literal(&mut sql, comment);
        }
        sql.push_str(" DO ");
        sql.push_str(&self.insert.to_sql()?);
        Ok(sql)
    }
}

/// `ALTER JOB <name> [PROPERTIES (…)] [<insert>]` (Doris allows it only while PAUSED).
pub fn alter_job_sql(
    name: &str,
    properties: &Properties,
    insert: Option<&S3Insert>,
) -> Result<String> {
    if properties.is_empty() && insert.is_none() {
        return Err(SqlError::InvalidQuery(
            "ALTER JOB needs properties or a new INSERT".into(),
        ));
    }
    let mut sql = format!("ALTER JOB {}", quote_ident("job", name)?);
    if !properties.is_empty() {
        sql.push_str(" PROPERTIES ");
        properties.push_sql(&mut sql)?;
    }
    if let Some(insert) = insert {
        sql.push(' ');
        sql.push_str(&insert.to_sql()?);
    }
    Ok(sql)
}

/// A job control statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobControl {
    /// `PAUSE JOB`.
    Pause,
    /// `RESUME JOB`.
    Resume,
    /// `DROP JOB`.
    Drop {
        /// `IF EXISTS`.
        if_exists: bool,
    },
}

impl JobControl {
    /// The action names [`FromStr`](std::str::FromStr) reads, in order.
    pub const NAMES: [&str; 3] = ["pause", "resume", "drop"];

    /// This control, `DROP JOB` made `IF EXISTS` when `if_exists` (the others have no
    /// such form and stay as they are).
    pub fn with_if_exists(self, if_exists: bool) -> Self {
        match self {
            JobControl::Drop { .. } => JobControl::Drop { if_exists },
            other => other,
        }
    }
}

/// `pause`, `resume` or `drop` (without `IF EXISTS`: [`JobControl::with_if_exists`]).
///
/// ```
/// use doris_jobs::JobControl;
/// let drop: JobControl = "drop".parse().unwrap();
/// assert_eq!(drop.with_if_exists(true), JobControl::Drop { if_exists: true });
/// assert!("stop".parse::<JobControl>().unwrap_err().to_string().contains("pause, resume, drop"));
/// ```
impl std::str::FromStr for JobControl {
    type Err = SqlError;

    fn from_str(action: &str) -> Result<Self> {
        match action {
            "pause" => Ok(JobControl::Pause),
            "resume" => Ok(JobControl::Resume),
            "drop" => Ok(JobControl::Drop { if_exists: false }),
            _ => Err(SqlError::InvalidQuery(format!(
                "a job action is one of {}",
                JobControl::NAMES.join(", ")
            ))),
        }
    }
}

/// `PAUSE JOB WHERE jobname = '…'`, `RESUME …`, `DROP JOB [IF EXISTS] WHERE …`.
pub fn job_control_sql(control: JobControl, name: &str) -> Result<String> {
    doris_sql::validate_ident("job", name)?;
    let mut sql = String::from(match control {
        JobControl::Pause => "PAUSE JOB",
        JobControl::Resume => "RESUME JOB",
        JobControl::Drop { if_exists: false } => "DROP JOB",
        JobControl::Drop { if_exists: true } => "DROP JOB IF EXISTS",
    });
    sql.push_str(" WHERE jobname = ");
    push_string_literal(&mut sql, name);
    Ok(sql)
}

/// A streaming job's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobStatus {
    /// Created or resumed, not yet running.
    Pending,
    /// Running tasks.
    Running,
    /// Paused by the user or by a failed task.
    Paused,
    /// Finished (not for streaming jobs, which never end).
    Finished,
    /// Stopped.
    Stopped,
}

impl JobStatus {
    /// Parses Doris's spelling.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.to_ascii_uppercase().as_str() {
            "PENDING" => Self::Pending,
            "RUNNING" => Self::Running,
            "PAUSED" => Self::Paused,
            "FINISHED" => Self::Finished,
            "STOPPED" => Self::Stopped,
            _ => return None,
        })
    }

    /// Doris's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Running => "RUNNING",
            Self::Paused => "PAUSED",
            Self::Finished => "FINISHED",
            Self::Stopped => "STOPPED",
        }
    }
}

/// An S3 source offset: the last file fully loaded (`{"endFile": "…"}`; the docs' form
/// `{"fileName": "…"}` is accepted too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Offset {
    /// The last file loaded (a key within the bucket).
    pub end_file: String,
}

impl S3Offset {
    /// Parses the offset JSON; empty text or `{}` is no offset yet.
    pub fn parse(text: &str) -> Result<Option<Self>> {
        let text = text.trim();
        if text.is_empty() || text == "{}" || text.eq_ignore_ascii_case("null") {
            return Ok(None);
        }
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|_| SqlError::MetadataParse("an offset is not JSON".into()))?;
        let file = value
            .get("endFile")
            .or_else(|| value.get("fileName"))
            .and_then(|v| v.as_str())
            .ok_or_else(|| SqlError::MetadataParse("an offset has no endFile".into()))?;
        Ok(Some(Self {
            end_file: file.to_owned(),
        }))
    }

    /// `{"endFile":"…"}`.
    pub fn to_json(&self) -> String {
        serde_json::json!({ "endFile": self.end_file }).to_string()
    }

    /// The value of a job's `offset` property that starts it after this file, in the form
    /// Doris documents for `CREATE JOB … PROPERTIES ("offset" = '{"fileName": "…"}')`.
    pub fn property_value(&self) -> String {
        serde_json::json!({ "fileName": self.end_file }).to_string()
    }
}

/// A task's or job's load statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadStatistic {
    /// Rows scanned.
    #[serde(default)]
    pub scanned_rows: u64,
    /// Bytes loaded.
    #[serde(default)]
    pub load_bytes: u64,
    /// Files read.
    #[serde(default)]
    pub file_number: u64,
    /// Bytes of the files read.
    #[serde(default)]
    pub file_size: u64,
}

impl LoadStatistic {
    /// Parses the JSON; empty text is all zeros.
    pub fn parse(text: &str) -> Result<Self> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        serde_json::from_str(text)
            .map_err(|_| SqlError::MetadataParse("LoadStatistic is not the expected JSON".into()))
    }
}

/// One row of `jobs("type"="insert")`.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRow {
    /// `Id`.
    pub id: i64,
    /// `Name`.
    pub name: String,
    /// `Definer`.
    pub definer: String,
    /// `ExecuteType` (`STREAMING`).
    pub execute_type: String,
    /// `RecurringStrategy` (`\N` for streaming jobs).
    pub recurring_strategy: String,
    /// `Status`.
    pub status: JobStatus,
    /// `ExecuteSql`.
    pub execute_sql: String,
    /// `CreateTime`.
    pub create_time: String,
    /// `SucceedTaskCount`.
    pub succeed_task_count: u64,
    /// `FailedTaskCount`.
    pub failed_task_count: u64,
    /// `CanceledTaskCount`.
    pub canceled_task_count: u64,
    /// `Comment`.
    pub comment: String,
    /// `Properties` (values are strings).
    pub properties: BTreeMap<String, String>,
    /// `CurrentOffset`.
    pub current_offset: Option<S3Offset>,
    /// `EndOffset`.
    pub end_offset: Option<S3Offset>,
    /// `LoadStatistic`.
    pub load_statistic: LoadStatistic,
    /// `ErrorMsg`.
    pub error_msg: String,
    /// `JobRuntimeMsg`.
    pub job_runtime_msg: String,
}

/// One row of `tasks("type"="insert")`.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRow {
    /// `TaskId`.
    pub task_id: i64,
    /// `JobID`.
    pub job_id: i64,
    /// `JobName`.
    pub job_name: String,
    /// `Label`.
    pub label: String,
    /// `Status`.
    pub status: String,
    /// `ErrorMsg`.
    pub error_msg: String,
    /// `CreateTime`.
    pub create_time: String,
    /// `StartTime` (empty until the task reads files).
    pub start_time: String,
    /// `FinishTime`.
    pub finish_time: String,
    /// `LoadStatistic`.
    pub load_statistic: LoadStatistic,
    /// `User`.
    pub user: String,
    /// `RunningOffset`: the files the task loads, as JSON.
    pub running_offset: String,
}

/// Cells of one result row by column name (`None`: SQL NULL).
pub type NamedRow<'a> = &'a [(String, Option<String>)];

fn cell<'a>(row: NamedRow<'a>, name: &str) -> Result<&'a str> {
    row.iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_deref().unwrap_or(""))
        .ok_or_else(|| SqlError::MetadataParse(format!("the row has no {name} column")))
}

/// A column that older versions may not have: empty when missing.
fn optional_cell(row: NamedRow<'_>, name: &str) -> String {
    cell(row, name).map(str::to_owned).unwrap_or_default()
}

fn number<T: std::str::FromStr>(row: NamedRow<'_>, name: &str) -> Result<T> {
    let text = cell(row, name)?.trim();
    let text = if text.is_empty() { "0" } else { text };
    text.parse()
        .map_err(|_| SqlError::MetadataParse(format!("{name} is not a number")))
}

/// Parses a `jobs("type"="insert")` row.
pub fn parse_job_row(row: NamedRow<'_>) -> Result<JobRow> {
    let status_text = cell(row, "Status")?;
    let properties_text = cell(row, "Properties")?.trim();
    let properties = if properties_text.is_empty() {
        BTreeMap::new()
    } else {
        let value: serde_json::Value = serde_json::from_str(properties_text)
            .map_err(|_| SqlError::MetadataParse("Properties is not JSON".into()))?;
        value
            .as_object()
            .ok_or_else(|| SqlError::MetadataParse("Properties is not a JSON object".into()))?
            .iter()
            .map(|(k, v)| {
                let text = if is_secret_key(k) {
                    "*XXX".to_owned()
                } else {
                    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
                };
                (k.clone(), text)
            })
            .collect()
    };
    Ok(JobRow {
        id: number(row, "Id")?,
        name: cell(row, "Name")?.to_owned(),
        definer: cell(row, "Definer")?.to_owned(),
        execute_type: cell(row, "ExecuteType")?.to_owned(),
        recurring_strategy: optional_cell(row, "RecurringStrategy"),
        status: JobStatus::parse(status_text)
            .ok_or_else(|| SqlError::MetadataParse("unknown job Status".into()))?,
        execute_sql: redact_statement(cell(row, "ExecuteSql")?),
        create_time: cell(row, "CreateTime")?.to_owned(),
        succeed_task_count: number(row, "SucceedTaskCount")?,
        failed_task_count: number(row, "FailedTaskCount")?,
        canceled_task_count: number(row, "CanceledTaskCount")?,
        comment: cell(row, "Comment")?.to_owned(),
        properties,
        current_offset: S3Offset::parse(cell(row, "CurrentOffset")?)?,
        end_offset: S3Offset::parse(cell(row, "EndOffset")?)?,
        load_statistic: LoadStatistic::parse(cell(row, "LoadStatistic")?)?,
        error_msg: redact_statement(cell(row, "ErrorMsg")?),
        job_runtime_msg: redact_statement(&optional_cell(row, "JobRuntimeMsg")),
    })
}

/// Parses a `tasks("type"="insert")` row.
pub fn parse_task_row(row: NamedRow<'_>) -> Result<TaskRow> {
    Ok(TaskRow {
        task_id: number(row, "TaskId")?,
        job_id: number(row, "JobID")?,
        job_name: cell(row, "JobName")?.to_owned(),
        label: cell(row, "Label")?.to_owned(),
        status: cell(row, "Status")?.to_owned(),
        error_msg: redact_statement(cell(row, "ErrorMsg")?),
        create_time: optional_cell(row, "CreateTime"),
        start_time: optional_cell(row, "StartTime"),
        finish_time: optional_cell(row, "FinishTime"),
        load_statistic: LoadStatistic::parse(cell(row, "LoadStatistic")?)?,
        user: optional_cell(row, "User"),
        running_offset: cell(row, "RunningOffset")?.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insert() -> S3Insert {
        S3Insert::new(
            TableRef::new("db", "t").unwrap(),
            "s3://bucket/in/part_*.csv",
            "csv",
        )
        .property("column_separator", ",")
        .property("s3.access_key", "AK-1")
        .property("s3.secret_key", "it's secret")
    }

    #[test]
    fn shown_statements_never_carry_a_credential() {
        let sql = insert().to_sql().unwrap();
        assert!(
            sql.contains("AK-1"),
            "the statement itself carries it: {sql}"
        );
        let shown = redact_statement(&sql);
        assert!(
            !shown.contains("AK-1") && !shown.contains("secret'"),
            "{shown}"
        );
        assert!(shown.contains("'s3.secret_key' = '*XXX'"), "{shown}");
        assert!(
            shown.contains("'uri' = 's3://bucket/in/part_*.csv'"),
            "{shown}"
        );
        // A credential's value cut short is masked whole; other unclosed text is kept.
        assert_eq!(
            redact_statement("'s3.secret_key' = 'abc"),
            "'s3.secret_key' = '*XXX'"
        );
        assert_eq!(redact_statement("'uri' = 's3://b/k"), "'uri' = 's3://b/k");
        assert_eq!(redact_statement("no quotes"), "no quotes");
    }

    proptest::proptest! {
        /// Every prefix of a statement (a message cut short anywhere) shows no character
        /// of a credential's value: the value is masked whole, closed or not.
        #[test]
        fn no_prefix_of_a_statement_shows_a_credential(
            secret in "[QZ][QZ0-9]{0,23}",
            plain in "[a-p/:. ]{0,16}",
            key in proptest::sample::select(vec![
                "s3.secret_key", "s3.access_key", "azure.account_key", "AWS_SECRET_ACCESS_KEY",
            ]),
            quote in proptest::sample::select(vec!['\'', '"']),
            space in "[ ]{0,2}",
        ) {
            let q = quote;
            let sql = format!(
                "INSERT INTO t SELECT * FROM S3('uri' = '{plain}', \
                 {q}{key}{q}{space}={space}{q}{secret}{q}, 'format' = 'csv')"
            );
            for cut in 0..=sql.len() {
                let shown = redact_statement(&sql[..cut]);
                proptest::prop_assert!(
                    !shown.contains(['Q', 'Z']),
                    "{:?} shows {:?}",
                    &sql[..cut],
                    shown
                );
            }
        }
    }

    #[test]
    fn job_rows_mask_credential_properties_and_messages() {
        let names = [
            "Id",
            "Name",
            "Definer",
            "ExecuteType",
            "RecurringStrategy",
            "Status",
            "ExecuteSql",
            "CreateTime",
            "SucceedTaskCount",
            "FailedTaskCount",
            "CanceledTaskCount",
            "Comment",
            "Properties",
            "CurrentOffset",
            "EndOffset",
            "LoadStatistic",
            "ErrorMsg",
            "JobRuntimeMsg",
        ];
        let values = [
            "1",
            "j",
            "root",
            "STREAMING",
            "",
            "RUNNING",
            "INSERT INTO t SELECT * FROM S3('s3.secret_key' = 'SK-1')",
            "",
            "0",
            "0",
            "0",
            "",
            r#"{"s3.max_batch_files": "1", "azure.account_key": "AK-2", "gcs.private-key": "PK-3"}"#,
            "",
            "",
            "",
            "failed: 's3.access_key' = 'AK-4' refused",
            "'session_token' = 'TK-5",
        ];
        let cells: Vec<(&str, Option<&str>)> = names
            .iter()
            .zip(values)
            .map(|(n, v)| (*n, Some(v)))
            .collect();
        let row = parse_job_row(&row(&cells)).unwrap();
        let shown = format!("{row:?}");
        for secret in ["SK-1", "AK-2", "PK-3", "AK-4", "TK-5"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert_eq!(row.properties["s3.max_batch_files"], "1");
        assert_eq!(row.properties["azure.account_key"], "*XXX");
    }

    #[test]
    fn create_renders_properties_before_on_streaming_and_escapes_values() {
        let mut job = CreateStreamingJob::new("my job", insert())
            .property("s3.max_batch_files", "1")
            .property("session.insert_max_filter_ratio", "0.5");
        job.comment = Some("nightly".into());
        assert_eq!(
            job.to_sql().unwrap(),
            "CREATE JOB `my job` PROPERTIES ('s3.max_batch_files' = '1', \
             'session.insert_max_filter_ratio' = '0.5') ON STREAMING COMMENT 'nightly' DO \
             INSERT INTO `db`.`t` SELECT * FROM S3('uri' = 's3://bucket/in/part_*.csv', \
             'format' = 'csv', 'column_separator' = ',', 's3.access_key' = 'AK-1', \
             's3.secret_key' = 'it''s secret')"
        );
        let shown = format!("{job:?}");
        // `Debug` escapes the quote (`it\'s secret`): look for the words, not the quote.
        assert!(
            !shown.contains("AK-1") && !shown.contains("s secret"),
            "{shown}"
        );
        assert!(shown.contains("[REDACTED]"));
    }

    #[test]
    fn control_statements() {
        assert_eq!(
            job_control_sql(JobControl::Pause, "j").unwrap(),
            "PAUSE JOB WHERE jobname = 'j'"
        );
        assert_eq!(
            job_control_sql(JobControl::Drop { if_exists: true }, "o'k").unwrap(),
            "DROP JOB IF EXISTS WHERE jobname = 'o''k'"
        );
        assert!(job_control_sql(JobControl::Resume, "").is_err());
        let mut props = Properties::default();
        props.set("max_interval", "5");
        assert_eq!(
            alter_job_sql("j", &props, None).unwrap(),
            "ALTER JOB `j` PROPERTIES ('max_interval' = '5')"
        );
        assert!(
            alter_job_sql("j", &Properties::default(), Some(&insert()))
                .unwrap()
                .starts_with("ALTER JOB `j` INSERT INTO `db`.`t` SELECT * FROM S3(")
        );
        assert!(alter_job_sql("j", &Properties::default(), None).is_err());
    }

    fn row(pairs: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.map(str::to_owned)))
            .collect()
    }

    #[test]
    fn job_and_task_rows_parse_into_types() {
        let job = row(&[
            ("Id", Some("10042")),
            ("Name", Some("j")),
            ("Definer", Some("root")),
            ("ExecuteType", Some("STREAMING")),
            ("RecurringStrategy", Some("\\N")),
            ("Status", Some("RUNNING")),
            ("ExecuteSql", Some("INSERT INTO t SELECT * FROM S3(...)")),
            ("CreateTime", Some("2026-11-29 10:00:00")),
            ("SucceedTaskCount", Some("2")),
            ("FailedTaskCount", Some("0")),
            ("CanceledTaskCount", Some("0")),
            ("Comment", Some("")),
            (
                "Properties",
                Some(r#"{"s3.max_batch_files":"1","max_interval":5}"#),
            ),
            ("CurrentOffset", Some(r#"{"endFile":"in/example_1.csv"}"#)),
            ("EndOffset", Some(r#"{"endFile":"in/example_1.csv"}"#)),
            (
                "LoadStatistic",
                Some(r#"{"scannedRows":20,"loadBytes":425,"fileNumber":2,"fileSize":256}"#),
            ),
            ("ErrorMsg", None),
            ("JobRuntimeMsg", Some("")),
        ]);
        let parsed = parse_job_row(&job).unwrap();
        assert_eq!(parsed.status, JobStatus::Running);
        assert_eq!(parsed.succeed_task_count, 2);
        assert_eq!(parsed.properties["max_interval"], "5");
        assert_eq!(parsed.current_offset.unwrap().end_file, "in/example_1.csv");
        assert_eq!(parsed.load_statistic.scanned_rows, 20);
        assert_eq!(parsed.load_statistic.file_number, 2);
        let task = row(&[
            ("TaskId", Some("7")),
            ("JobID", Some("10042")),
            ("JobName", Some("j")),
            ("Label", Some("10042_7")),
            ("Status", Some("RUNNING")),
            ("ErrorMsg", Some("")),
            ("CreateTime", Some("")),
            ("StartTime", Some("")),
            ("FinishTime", Some("")),
            ("LoadStatistic", Some("")),
            ("User", Some("root")),
            ("RunningOffset", Some("{}")),
        ]);
        let parsed = parse_task_row(&task).unwrap();
        assert_eq!((parsed.task_id, parsed.job_id), (7, 10042));
        assert_eq!(parsed.load_statistic, LoadStatistic::default());
        assert!(parse_job_row(&row(&[("Id", Some("x"))])).is_err());
    }

    #[test]
    fn offsets_accept_both_spellings() {
        assert_eq!(S3Offset::parse("").unwrap(), None);
        assert_eq!(
            S3Offset::parse(
                &S3Offset {
                    end_file: "a/\"b\".csv".into()
                }
                .property_value()
            )
            .unwrap()
            .map(|o| o.end_file),
            Some("a/\"b\".csv".to_owned())
        );
        assert_eq!(
            S3Offset::parse(r#"{"fileName":"a/b.csv"}"#)
                .unwrap()
                .unwrap()
                .end_file,
            "a/b.csv"
        );
        let offset = S3Offset {
            end_file: "x.csv".into(),
        };
        assert_eq!(S3Offset::parse(&offset.to_json()).unwrap(), Some(offset));
        assert!(S3Offset::parse("[1]").is_err());
    }
}
