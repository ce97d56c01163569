//! # doris-jobs
//!
//! Apache Doris 4.0 streaming jobs (`CREATE JOB … ON STREAMING`) from Rust: a job runs
//! `INSERT INTO <table> SELECT … FROM S3(…)` over the files after its offset, one
//! transaction per task, and commits the offset with the data, so every file is loaded
//! exactly once. docs/streaming-jobs.md describes the feature end to end.
//!
//! | part | what it does | entry points |
//! |---|---|---|
//! | statements | `CREATE JOB`, `ALTER JOB`, `PAUSE`/`RESUME`/`DROP JOB`, with credentials kept out of `Debug` and errors | [`CreateStreamingJob`], [`S3Insert`], [`alter_job_sql`], [`job_control_sql`] |
//! | rows | `jobs("type"="insert")` / `tasks("type"="insert")` rows as typed values, the statement masked | [`parse_job_row`], [`parse_task_row`], [`JobRow`], [`TaskRow`] |
//! | feeding | a checked S3 source, job settings by name, staged file names that sort after the job's offset, load progress | [`S3Source`], [`JobSettings`], [`StagePlan`], [`feed_progress`] |
//! | running them (feature `admin`) | the statements and rows over the FE's MySQL port, waiting for a file, rows as Arrow | [`admin`] |
//!
//! Without the `admin` feature the crate does no I/O (statements and parsers only).
//!
//! ## Feeding a job, end to end (no I/O)
//!
//! ```
//! use std::time::{Duration, UNIX_EPOCH};
//! use doris_jobs::{CreateStreamingJob, JobSettings, S3Source, StagePlan};
//! use doris_sql::TableRef;
//!
//! // What the job reads, checked when made, and the job reading it.
//! let source = S3Source::new("s3://bkt/in/*.parquet", "parquet", [("s3.secret_key", "sk-1")]).unwrap();
//! let insert = source.insert(TableRef::new("db", "events").unwrap(), None).unwrap();
//! let mut job = CreateStreamingJob::new("ingest_events", insert);
//! let settings = JobSettings { max_batch_files: Some(2), ..JobSettings::default() };
//! job.properties = settings.properties().unwrap();
//! let sql = job.to_sql().unwrap();
//! assert!(sql.starts_with("CREATE JOB `ingest_events` PROPERTIES ('s3.max_batch_files' = '2') ON STREAMING"));
//! assert!(!format!("{job:?}").contains("sk-1"));
//!
//! // Files staged for it are named so that they sort after the job's offset.
//! let plan = StagePlan::new("s3://bkt/in", "part-", "parquet", UNIX_EPOCH + Duration::from_secs(1_764_700_000)).unwrap();
//! assert!(plan.check_after(Some("in/part-2025")).is_ok());
//! assert!(plan.check_after(Some("in/zzz")).is_err());
//! ```
//!
//! ## Errors and secrets
//!
//! Statements and parsers return `doris_sql::SqlError`; [`admin`] returns
//! [`admin::JobError`] (the MySQL link's `doris_mysql::MySqlError` kept whole inside). S3 properties whose key names a credential ([`is_secret_key`])
//! are rendered into the statement only: never into `Debug`, an error or a parsed row
//! ([`redact_statement`]).

mod feed;
mod options;
mod sql;

#[cfg(feature = "admin")]
pub mod admin;

pub use feed::{
    FeedProgress, JobSettings, MAX_JOB_SETTING, MAX_PAUSE_REASON, MAX_ROWS_PER_FILE, S3_FORMATS,
    S3Source, STAGE_FORMATS, StagePlan, feed_progress,
};
pub use options::property_pairs;
pub use sql::{
    CreateStreamingJob, JobControl, JobRow, JobStatus, LoadStatistic, NamedRow, Properties,
    S3Insert, S3Offset, TaskRow, alter_job_sql, is_secret_key, job_control_sql, parse_job_row,
    parse_task_row, redact_statement,
};

/// The README's example, run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
