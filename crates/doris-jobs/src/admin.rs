//! Running streaming jobs over the FE's MySQL port (feature `admin`, on by default): create,
//! alter, pause, resume and drop a job, and read the `jobs("type"="insert")` /
//! `tasks("type"="insert")` rows as typed values or Arrow batches. Each call opens a
//! [`Session`] of `doris-mysql` (its TLS, authentication guard and timeouts); S3
//! credentials inside the statements are never part of an error or a log line.
//!
//! ```no_run
//! # async fn demo() -> Result<(), doris_jobs::admin::JobError> {
//! use doris_jobs::{CreateStreamingJob, JobControl, S3Insert, admin};
//! use doris_mysql::MySqlEndpoint;
//! use doris_sql::TableRef;
//! let fe = MySqlEndpoint::new("127.0.0.1", 9030, "root", "");
//! let insert = S3Insert::new(TableRef::new("db", "events").unwrap(), "s3://bucket/in/*.csv", "csv");
//! admin::create_job(&fe, &CreateStreamingJob::new("ingest", insert)).await?;
//! let job = admin::job(&fe, "ingest").await?.expect("created");
//! println!("{:?} at {:?}", job.status, job.current_offset);
//! admin::control_job(&fe, JobControl::Pause, "ingest").await?;
//! # Ok(()) }
//! ```
//!
//! [`wait_for_file`] waits until a job has loaded a file (e.g. the last one staged for it).

mod batches;
mod error;

pub use batches::{jobs_batch, jobs_schema, tasks_batch, tasks_schema};
pub use error::JobError;

use std::time::{Duration, Instant};

use doris_mysql::{MySqlEndpoint, Session};

use crate::feed::{FeedProgress, feed_progress};
use crate::sql::{
    CreateStreamingJob, JobControl, JobRow, Properties, S3Insert, TaskRow, alter_job_sql,
    job_control_sql, parse_job_row, parse_task_row,
};

/// Runs one statement that returns no rows, on a session of its own.
async fn execute(endpoint: &MySqlEndpoint, sql: &str) -> Result<(), JobError> {
    Session::open(endpoint).await?.execute(sql).await?;
    Ok(())
}

/// Runs a query and returns its rows as `(column, text)` pairs.
async fn named_rows(
    endpoint: &MySqlEndpoint,
    sql: &str,
) -> Result<Vec<Vec<(String, Option<String>)>>, JobError> {
    let answer = Session::open(endpoint).await?.query(sql).await?;
    Ok(answer
        .rows
        .into_iter()
        .map(|row| answer.columns.iter().cloned().zip(row).collect())
        .collect())
}

fn config(e: doris_sql::SqlError) -> JobError {
    JobError::Statement(e)
}

/// `CREATE JOB … ON STREAMING DO INSERT …`.
pub async fn create_job(
    endpoint: &MySqlEndpoint,
    job: &CreateStreamingJob,
) -> Result<(), JobError> {
    execute(endpoint, &job.to_sql().map_err(config)?).await
}

/// `ALTER JOB` (Doris accepts it only while the job is PAUSED).
pub async fn alter_job(
    endpoint: &MySqlEndpoint,
    name: &str,
    properties: &Properties,
    insert: Option<&S3Insert>,
) -> Result<(), JobError> {
    let sql = alter_job_sql(name, properties, insert).map_err(config)?;
    execute(endpoint, &sql).await
}

/// `PAUSE JOB`, `RESUME JOB` or `DROP JOB [IF EXISTS]`.
pub async fn control_job(
    endpoint: &MySqlEndpoint,
    control: JobControl,
    name: &str,
) -> Result<(), JobError> {
    let sql = job_control_sql(control, name).map_err(config)?;
    execute(endpoint, &sql).await
}

fn name_filter(column: &str, name: Option<&str>) -> Result<String, JobError> {
    Ok(match name {
        Some(name) => {
            doris_sql::validate_ident("job", name).map_err(config)?;
            let mut sql = format!(" AND {column} = ");
            doris_sql::push_string_literal(&mut sql, name);
            sql
        }
        None => String::new(),
    })
}

/// The streaming jobs (`jobs("type"="insert")` with `ExecuteType = 'STREAMING'`), or only
/// the one named.
pub async fn list_jobs(
    endpoint: &MySqlEndpoint,
    name: Option<&str>,
) -> Result<Vec<JobRow>, JobError> {
    let sql = format!(
        "SELECT * FROM jobs(\"type\"=\"insert\") WHERE ExecuteType = 'STREAMING'{}",
        name_filter("Name", name)?
    );
    named_rows(endpoint, &sql)
        .await?
        .iter()
        .map(|row| parse_job_row(row).map_err(JobError::Row))
        .collect()
}

/// One job by name (`None`: no such job).
pub async fn job(endpoint: &MySqlEndpoint, name: &str) -> Result<Option<JobRow>, JobError> {
    Ok(list_jobs(endpoint, Some(name)).await?.into_iter().next())
}

/// The tasks Doris shows (`tasks("type"="insert")`: the running task and recent history of
/// each job; none for a paused job), or only those of the job named.
pub async fn list_tasks(
    endpoint: &MySqlEndpoint,
    name: Option<&str>,
) -> Result<Vec<TaskRow>, JobError> {
    let filter = name_filter("JobName", name)?;
    let sql = format!(
        "SELECT * FROM tasks(\"type\"=\"insert\"){}",
        filter.replacen(" AND", " WHERE", 1)
    );
    named_rows(endpoint, &sql)
        .await?
        .iter()
        .map(|row| parse_task_row(row).map_err(JobError::Row))
        .collect()
}

/// How long [`wait_for_file`]'s callers wait by default (a streaming job picks up new
/// files every few seconds; five minutes covers a backlog).
pub const DEFAULT_WAIT: std::time::Duration = std::time::Duration::from_secs(300);
/// How often [`wait_for_file`]'s callers ask by default.
pub const DEFAULT_POLL: std::time::Duration = std::time::Duration::from_millis(500);

/// Waits until the job `name` has loaded `last_key` (its offset, the last file loaded, sorts
/// at or after it; `None`: nothing to wait for), asking every `poll`, and returns the
/// job's row then. A job PAUSED before that is [`JobError::Paused`]; one that has not
/// got there after `timeout` is [`JobError::Timeout`]; an unknown job is
/// [`JobError::NotFound`].
pub async fn wait_for_file(
    endpoint: &MySqlEndpoint,
    name: &str,
    last_key: Option<&str>,
    timeout: Duration,
    poll: Duration,
) -> Result<JobRow, JobError> {
    let deadline = Instant::now() + timeout;
    loop {
        let row = job(endpoint, name)
            .await?
            .ok_or_else(|| JobError::NotFound(name.to_owned()))?;
        match feed_progress(&row, last_key) {
            FeedProgress::Loaded => return Ok(row),
            FeedProgress::Paused { reason } => {
                return Err(JobError::Paused {
                    job: name.to_owned(),
                    reason,
                });
            }
            FeedProgress::Waiting if Instant::now() >= deadline => {
                let offset = row.current_offset.map(|o| o.end_file);
                return Err(JobError::Timeout(format!(
                    "streaming job {name} did not reach {:?} within {} s (offset {offset:?})",
                    last_key.unwrap_or_default(),
                    timeout.as_secs_f64()
                )));
            }
            FeedProgress::Waiting => tokio::time::sleep(poll).await,
        }
    }
}
