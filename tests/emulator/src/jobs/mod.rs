//! Streaming jobs (Doris 4.0 `CREATE JOB … ON STREAMING`, docs/streaming-jobs.md): the job
//! registry, the job statements of the MySQL face, the rows of the `jobs("type"="insert")`
//! and `tasks("type"="insert")` table functions, and (in [`runner`]) the loop that runs
//! each job's tasks over the files of a local folder standing in for S3 ([`s3`]).
//!
//! Each task loads the next files after the job's offset in one transaction; the offset,
//! the statistics and the data move together under the registry lock, and with a data
//! directory they are written in one snapshot ([`crate::persist`]), so a restart neither
//! loads a file twice nor skips one.

pub mod parse;
pub mod runner;
pub mod s3;

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

use crate::Shared;
use crate::auth::Privilege;
use parse::{InsertSpec, JobStatement};

/// Default `s3.max_batch_files`.
pub const DEFAULT_MAX_BATCH_FILES: u64 = 256;
/// Default `s3.max_batch_bytes` (10 GiB).
pub const DEFAULT_MAX_BATCH_BYTES: u64 = 10 * 1024 * 1024 * 1024;
/// Default `max_interval`, in seconds.
pub const DEFAULT_MAX_INTERVAL_SECONDS: u64 = 10;
/// Finished tasks `tasks()` keeps per job (`max_streaming_task_show_count`).
pub const TASK_SHOW_COUNT: usize = 100;

/// A job's status, spelled as Doris spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    /// Created or resumed; the runner has not started a task yet.
    #[serde(rename = "PENDING")]
    Pending,
    /// Running tasks (or waiting for new files).
    #[serde(rename = "RUNNING")]
    Running,
    /// Paused by `PAUSE JOB` or by a failed task.
    #[serde(rename = "PAUSED")]
    Paused,
}

impl Status {
    /// Doris's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Running => "RUNNING",
            Self::Paused => "PAUSED",
        }
    }
}

/// Cumulative load statistics (`LoadStatistic`), in `doris-sql`'s shape.
pub use doris_jobs::LoadStatistic as Statistic;

fn add_statistic(total: &mut Statistic, more: &Statistic) {
    total.scanned_rows += more.scanned_rows;
    total.load_bytes += more.load_bytes;
    total.file_number += more.file_number;
    total.file_size += more.file_size;
}

fn statistic_json(statistic: &Statistic) -> String {
    serde_json::to_string(statistic).unwrap_or_default()
}

/// One task, running or finished.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// Task id.
    pub id: i64,
    /// The load label of its transaction.
    pub label: String,
    /// `RUNNING`, `SUCCESS`, `FAILED` or `CANCELED`.
    pub status: String,
    /// Why it failed.
    pub error_msg: String,
    /// When it was created.
    pub create_time: String,
    /// When it started loading files (empty while it waits for files).
    pub start_time: String,
    /// When it finished.
    pub finish_time: String,
    /// What it loaded.
    pub statistic: Statistic,
    /// The files it loads: `{"startFile":…,"endFile":…}` (`{}` while it waits).
    pub running_offset: String,
}

/// A streaming job and its progress.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    /// Job id.
    pub id: i64,
    /// Job name.
    pub name: String,
    /// The user who created it (tasks run with this user's privileges).
    pub definer: String,
    /// The database the target table belongs to.
    pub database: String,
    /// The target table.
    pub table: String,
    /// Target columns, when listed.
    pub columns: Option<Vec<String>>,
    /// The INSERT as written (`ExecuteSql`).
    pub execute_sql: String,
    /// The S3 table function's properties.
    pub source: Vec<(String, String)>,
    /// Job properties as given (values as strings).
    pub properties: BTreeMap<String, String>,
    /// `COMMENT`.
    pub comment: String,
    /// `YYYY-MM-DD HH:MM:SS`.
    pub create_time: String,
    /// Status.
    pub status: Status,
    /// The last file loaded (`CurrentOffset`).
    pub offset: Option<String>,
    /// The last file seen in the source (`EndOffset`).
    pub end_offset: Option<String>,
    /// Everything loaded so far.
    pub statistic: Statistic,
    /// Tasks that committed.
    pub succeed_tasks: u64,
    /// Tasks that failed.
    pub failed_tasks: u64,
    /// Tasks canceled by a pause or a drop.
    pub canceled_tasks: u64,
    /// Why the job was paused by a failure.
    pub error_msg: String,
    /// Finished tasks since the job last left PAUSED, oldest first.
    #[serde(skip)]
    pub history: VecDeque<Task>,
    /// The task now running (none while PAUSED).
    #[serde(skip)]
    pub current: Option<Task>,
    /// Bumped by every PAUSE / ALTER / RESUME / DROP: a task started under another
    /// generation is canceled instead of committed.
    #[serde(skip)]
    pub generation: u64,
    /// When the runner looks for new files next.
    #[serde(skip)]
    pub next_poll: Option<Instant>,
}

impl Job {
    /// `s3.max_batch_files`.
    pub fn max_batch_files(&self) -> u64 {
        self.number("s3.max_batch_files", DEFAULT_MAX_BATCH_FILES)
    }

    /// `s3.max_batch_bytes`.
    pub fn max_batch_bytes(&self) -> u64 {
        self.number("s3.max_batch_bytes", DEFAULT_MAX_BATCH_BYTES)
    }

    /// `max_interval`.
    pub fn max_interval(&self) -> Duration {
        Duration::from_secs(self.number("max_interval", DEFAULT_MAX_INTERVAL_SECONDS))
    }

    fn number(&self, key: &str, default: u64) -> u64 {
        self.properties
            .get(key)
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }

    /// A `session.<name>` property.
    pub fn session_var(&self, name: &str) -> Option<&str> {
        self.properties
            .get(&format!("session.{name}"))
            .map(String::as_str)
    }

    /// A source property.
    pub fn source(&self, key: &str) -> Option<&str> {
        self.source
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn offset_json(offset: &Option<String>) -> String {
        offset
            .as_ref()
            .map(|f| serde_json::json!({ "endFile": f }).to_string())
            .unwrap_or_default()
    }
}

/// Every job, by name.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Jobs {
    /// The next job or task id.
    pub next_id: i64,
    /// Jobs by name.
    pub by_name: BTreeMap<String, Job>,
}

impl Jobs {
    /// A new id (jobs and tasks draw from one counter).
    pub fn next_id(&mut self) -> i64 {
        if self.next_id == 0 {
            self.next_id = now_millis();
        }
        self.next_id += 1;
        self.next_id
    }
}

/// The job registry shared by the faces and the runner.
#[derive(Debug, Default)]
pub struct JobRegistry {
    jobs: Mutex<Jobs>,
    wake: tokio::sync::Notify,
}

impl JobRegistry {
    /// Locks the registry (the lock under which a task commits).
    pub fn lock(&self) -> MutexGuard<'_, Jobs> {
        self.jobs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Replaces every job (restore from a snapshot).
    pub fn restore(&self, jobs: Jobs) {
        *self.lock() = jobs;
        self.wake.notify_one();
    }

    /// Wakes the runner (a job was created, resumed or altered).
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Waits until woken or `timeout` passes.
    pub async fn wait(&self, timeout: Duration) {
        let _ = tokio::time::timeout(timeout, self.wake.notified()).await;
    }
}

fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Now as `YYYY-MM-DD HH:MM:SS` (UTC).
pub fn now_text() -> String {
    let secs = now_millis() / 1000;
    arrow::temporal_conversions::timestamp_s_to_datetime(secs)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_default()
}

/// An error to answer a job statement with (the text after `errCode = 2, detailMessage = `).
pub type StatementError = String;

/// Runs a job statement for `user` with `current_db` as the session's database.
pub fn execute(
    shared: &Shared,
    user: &str,
    current_db: Option<&str>,
    sql: &str,
) -> Result<(), StatementError> {
    let statement = parse::parse(sql)?;
    let registry = &shared.jobs;
    let mut jobs = registry.lock();
    match statement {
        JobStatement::Create {
            name,
            properties,
            comment,
            insert,
        } => {
            doris_sql::validate_ident("job", &name).map_err(|e| e.to_string())?;
            if jobs.by_name.contains_key(&name) {
                return Err(format!("job name exist, jobName:{name}"));
            }
            let (database, table, columns) = target(shared, user, current_db, &insert)?;
            let properties = check_properties(properties, None)?;
            check_source(shared, &insert)?;
            let offset = match properties.get("offset") {
                Some(text) => doris_jobs::S3Offset::parse(text)
                    .map_err(|_| "the offset property must be JSON such as {\"endFile\": \"key\"}")?
                    .map(|o| o.end_file),
                None => None,
            };
            let id = jobs.next_id();
            jobs.by_name.insert(
                name.clone(),
                Job {
                    id,
                    name,
                    definer: user.to_owned(),
                    database,
                    table,
                    columns,
                    execute_sql: insert.sql,
                    source: insert.source,
                    properties,
                    comment: comment.unwrap_or_default(),
                    create_time: now_text(),
                    status: Status::Pending,
                    offset,
                    end_offset: None,
                    statistic: Statistic::default(),
                    succeed_tasks: 0,
                    failed_tasks: 0,
                    canceled_tasks: 0,
                    error_msg: String::new(),
                    history: VecDeque::new(),
                    current: None,
                    generation: 0,
                    next_poll: None,
                },
            );
        }
        JobStatement::Alter {
            name,
            properties,
            insert,
        } => {
            let job = find(&mut jobs, &name)?;
            check_load(shared, user, &job.database, &job.table)?;
            if job.status != Status::Paused {
                return Err(format!(
                    "Only PAUSED job can be altered, job {name} is {}",
                    job.status.as_str()
                ));
            }
            let target_change = match &insert {
                Some(insert) => {
                    let change = target(shared, user, current_db, insert)?;
                    check_source(shared, insert)?;
                    Some(change)
                }
                None => None,
            };
            let mut merged = job.properties.clone();
            merged.extend(check_properties(properties, Some(&job.properties))?);
            if merged.contains_key("offset") && merged.get("offset") != job.properties.get("offset")
            {
                let text = &merged["offset"];
                job.offset = doris_jobs::S3Offset::parse(text)
                    .map_err(|_| "the offset property must be JSON such as {\"endFile\": \"key\"}")?
                    .map(|o| o.end_file);
            }
            job.properties = merged;
            if let (Some(insert), Some((database, table, columns))) = (insert, target_change) {
                job.database = database;
                job.table = table;
                job.columns = columns;
                job.execute_sql = insert.sql;
                job.source = insert.source;
            }
            job.generation += 1;
        }
        JobStatement::Pause(name) => {
            let job = find(&mut jobs, &name)?;
            check_load(shared, user, &job.database, &job.table)?;
            if job.status == Status::Paused {
                return Err(format!("job {name} is already PAUSED"));
            }
            pause(job, None);
        }
        JobStatement::Resume(name) => {
            let job = find(&mut jobs, &name)?;
            check_load(shared, user, &job.database, &job.table)?;
            if job.status != Status::Paused {
                return Err(format!(
                    "job {name} can not be resumed: it is {}",
                    job.status.as_str()
                ));
            }
            job.status = Status::Pending;
            job.error_msg.clear();
            job.generation += 1;
            job.next_poll = None;
        }
        JobStatement::Drop { name, if_exists } => match jobs.by_name.get(&name) {
            Some(job) => {
                check_load(shared, user, &job.database, &job.table)?;
                jobs.by_name.remove(&name);
            }
            None if if_exists => return Ok(()),
            None => return Err(format!("job not exist, jobName:{name}")),
        },
    }
    crate::persist::save_locked(shared, &jobs);
    drop(jobs);
    registry.wake();
    Ok(())
}

/// Pauses a job: its running task is canceled, `tasks()` shows nothing until RESUME.
pub fn pause(job: &mut Job, error: Option<String>) {
    job.status = Status::Paused;
    if let Some(mut task) = job.current.take()
        && error.is_none()
    {
        if !task.start_time.is_empty() {
            job.canceled_tasks += 1;
        }
        task.status = "CANCELED".into();
    }
    job.history.clear();
    if let Some(message) = error {
        job.error_msg = message;
        job.failed_tasks += 1;
    }
    job.generation += 1;
}

fn find<'a>(jobs: &'a mut Jobs, name: &str) -> Result<&'a mut Job, StatementError> {
    jobs.by_name
        .get_mut(name)
        .ok_or_else(|| format!("job not exist, jobName:{name}"))
}

fn check_load(shared: &Shared, user: &str, db: &str, table: &str) -> Result<(), StatementError> {
    if shared.users.has(user, db, table, Privilege::Load) {
        Ok(())
    } else {
        Err(format!(
            "LOAD command denied to user '{user}' for table '{db}.{table}'"
        ))
    }
}

/// The INSERT's target table (which must exist, with LOAD granted) and its columns.
fn target(
    shared: &Shared,
    user: &str,
    current_db: Option<&str>,
    insert: &InsertSpec,
) -> Result<(String, String, Option<Vec<String>>), StatementError> {
    let (db, name) = match insert.table.as_slice() {
        [t] => (
            current_db.ok_or("No database selected")?.to_owned(),
            t.clone(),
        ),
        [.., db, t] => (db.clone(), t.clone()),
        [] => return Err("the INSERT names no table".into()),
    };
    let table = shared
        .catalog
        .table(&db, &name)
        .map_err(|_| format!("Table [{name}] does not exist in database [{db}]."))?;
    check_load(shared, user, &db, &name)?;
    if let Some(columns) = &insert.columns {
        for c in columns {
            if table.schema.column(c).is_none() {
                return Err(format!("Unknown column '{c}' in '{name}'"));
            }
        }
    }
    Ok((db, name, insert.columns.clone()))
}

/// Checks job properties; returns them as a map (values as strings).
fn check_properties(
    properties: Vec<(String, String)>,
    _existing: Option<&BTreeMap<String, String>>,
) -> Result<BTreeMap<String, String>, StatementError> {
    let mut out = BTreeMap::new();
    for (key, value) in properties {
        match key.as_str() {
            "s3.max_batch_files" | "s3.max_batch_bytes" | "max_interval" => {
                if !value.parse::<u64>().is_ok_and(|n| n > 0) {
                    return Err(format!("{key} must be a positive integer"));
                }
            }
            "offset" | "compute_group" => {}
            k if k.starts_with("session.") => {}
            other => return Err(format!("Invalid property: {other}")),
        }
        out.insert(key, value);
    }
    Ok(out)
}

/// Checks the S3 source: a `uri` under a bucket the emulator knows and a readable format.
fn check_source(shared: &Shared, insert: &InsertSpec) -> Result<(), StatementError> {
    let uri = insert
        .source
        .iter()
        .find(|(k, _)| k == "uri")
        .map(|(_, v)| v.as_str())
        .ok_or("the S3 table function needs a \"uri\"")?;
    s3::split_uri(uri)?;
    if shared.config.s3_root.is_none() {
        return Err(
            "this emulator has no object store: start it with --s3-root DIR (s3://bucket/key is DIR/bucket/key)"
                .into(),
        );
    }
    runner::load_options(&insert.source)?;
    Ok(())
}

/// Column names of `jobs("type"="insert")`.
pub const JOB_COLUMNS: [&str; 18] = [
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

/// Column names of `tasks("type"="insert")`.
pub const TASK_COLUMNS: [&str; 12] = [
    "TaskId",
    "JobID",
    "JobName",
    "Label",
    "Status",
    "ErrorMsg",
    "CreateTime",
    "StartTime",
    "FinishTime",
    "LoadStatistic",
    "User",
    "RunningOffset",
];

/// The rows of `jobs("type"="insert")` (every value a string).
pub fn job_rows(shared: &Shared) -> Vec<Vec<Option<String>>> {
    let jobs = shared.jobs.lock();
    jobs.by_name
        .values()
        .map(|job| {
            let properties = serde_json::to_string(&job.properties).unwrap_or_default();
            [
                job.id.to_string(),
                job.name.clone(),
                job.definer.clone(),
                "STREAMING".into(),
                "\\N".into(),
                job.status.as_str().into(),
                job.execute_sql.clone(),
                job.create_time.clone(),
                job.succeed_tasks.to_string(),
                job.failed_tasks.to_string(),
                job.canceled_tasks.to_string(),
                job.comment.clone(),
                properties,
                Job::offset_json(&job.offset),
                Job::offset_json(&job.end_offset),
                statistic_json(&job.statistic),
                job.error_msg.clone(),
                String::new(),
            ]
            .into_iter()
            .map(Some)
            .collect()
        })
        .collect()
}

/// The rows of `tasks("type"="insert")`: per job, its finished tasks since it last
/// resumed and the running one (none while PAUSED).
pub fn task_rows(shared: &Shared) -> Vec<Vec<Option<String>>> {
    let jobs = shared.jobs.lock();
    let mut rows = Vec::new();
    for job in jobs.by_name.values() {
        for task in job.history.iter().chain(job.current.iter()) {
            rows.push(
                [
                    task.id.to_string(),
                    job.id.to_string(),
                    job.name.clone(),
                    task.label.clone(),
                    task.status.clone(),
                    task.error_msg.clone(),
                    task.create_time.clone(),
                    task.start_time.clone(),
                    task.finish_time.clone(),
                    statistic_json(&task.statistic),
                    job.definer.clone(),
                    task.running_offset.clone(),
                ]
                .into_iter()
                .map(Some)
                .collect(),
            );
        }
    }
    rows
}

/// Which job table function a `FROM` names: `jobs` or `tasks` with `"type"="insert"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobTable {
    /// `jobs("type"="insert")`.
    Jobs,
    /// `tasks("type"="insert")`.
    Tasks,
}

impl JobTable {
    /// The name the rewritten query reads instead of the table function.
    pub fn table_name(self) -> &'static str {
        match self {
            Self::Jobs => "__doris_jobs_insert",
            Self::Tasks => "__doris_tasks_insert",
        }
    }

    /// Column names.
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            Self::Jobs => &JOB_COLUMNS,
            Self::Tasks => &TASK_COLUMNS,
        }
    }

    /// The current rows.
    pub fn rows(self, shared: &Shared) -> Vec<Vec<Option<String>>> {
        match self {
            Self::Jobs => job_rows(shared),
            Self::Tasks => task_rows(shared),
        }
    }
}

/// Replaces `jobs("type"="insert")` / `tasks("type"="insert")` in a query with plain table
/// names; returns the new SQL and the table functions it used.
pub fn rewrite_table_functions(sql: &str) -> Result<(String, Vec<JobTable>), String> {
    use sqlparser::tokenizer::Token;
    let tokens = crate::tokens::tokenize(sql)?;
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut used = Vec::new();
    let mut i = 0;
    let significant =
        |from: usize| (from..tokens.len()).find(|j| !matches!(tokens[*j], Token::Whitespace(_)));
    while i < tokens.len() {
        let which = match &tokens[i] {
            Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("jobs") => {
                Some(JobTable::Jobs)
            }
            Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("tasks") => {
                Some(JobTable::Tasks)
            }
            _ => None,
        };
        let open = significant(i + 1).filter(|j| tokens[*j] == Token::LParen);
        let after_from = out
            .iter()
            .rev()
            .find(|t| !matches!(t, Token::Whitespace(_)))
            .is_some_and(|t| matches!(t, Token::Word(w) if w.value.eq_ignore_ascii_case("FROM") || w.value.eq_ignore_ascii_case("JOIN")) || *t == Token::Comma);
        if let (Some(which), Some(open), true) = (which, open, after_from) {
            let close = (open..tokens.len())
                .find(|j| tokens[*j] == Token::RParen)
                .ok_or("unclosed table function arguments")?;
            let args: Vec<&Token> = tokens[open + 1..close]
                .iter()
                .filter(|t| !matches!(t, Token::Whitespace(_)))
                .collect();
            let value = |t: &Token| match t {
                Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => {
                    Some(s.to_ascii_lowercase())
                }
                _ => None,
            };
            match args.as_slice() {
                [k, Token::Eq, v] if value(k).as_deref() == Some("type") => {
                    if value(v).as_deref() != Some("insert") {
                        return Err(format!(
                            "the emulator has only \"type\"=\"insert\" jobs, not {}",
                            crate::tokens::render_token(v)
                        ));
                    }
                }
                _ => return Err("jobs()/tasks() need \"type\"=\"insert\"".into()),
            }
            out.push(Token::make_word(which.table_name(), None));
            if !used.contains(&which) {
                used.push(which);
            }
            i = close + 1;
            continue;
        }
        out.push(tokens[i].clone());
        i += 1;
    }
    // DataFusion folds unquoted names to lower case; Doris matches column names without
    // regard to case. Column names of the job tables are quoted in their exact spelling.
    if !used.is_empty() {
        for token in &mut out {
            if let Token::Word(w) = token
                && w.quote_style.is_none()
                && let Some(exact) = used
                    .iter()
                    .flat_map(|t| t.columns().iter())
                    .find(|c| c.eq_ignore_ascii_case(&w.value))
            {
                *token = Token::make_word(exact, Some('`'));
            }
        }
    }
    Ok((crate::tokens::render(&out), used))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_functions_are_rewritten_to_tables() {
        let (sql, used) =
            rewrite_table_functions("SELECT * FROM jobs(\"type\"=\"insert\") WHERE name = 'tasks'")
                .unwrap();
        assert_eq!(
            sql,
            "SELECT * FROM __doris_jobs_insert WHERE `Name` = 'tasks'"
        );
        assert_eq!(used, [JobTable::Jobs]);
        let (sql, used) =
            rewrite_table_functions("select count(*) from tasks('type' = 'insert') t").unwrap();
        assert_eq!(sql, "select count(*) from __doris_tasks_insert t");
        assert_eq!(used, [JobTable::Tasks]);
        assert!(rewrite_table_functions("SELECT * FROM jobs(\"type\"=\"mv\")").is_err());
        let (sql, used) = rewrite_table_functions("SELECT jobs FROM t").unwrap();
        assert_eq!((sql.as_str(), used.len()), ("SELECT jobs FROM t", 0));
    }
}
