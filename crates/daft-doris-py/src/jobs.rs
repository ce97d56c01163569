//! Streaming jobs: create, alter, pause, resume and drop a Doris 4.0 streaming job, and its
//! `jobs()` / `tasks()` rows, through `doris_read::jobs` (statements built by `doris-sql`).
//! Rows travel back as JSON text.

use std::collections::BTreeMap;

use doris_sql::{CreateStreamingJob, JobControl, JobRow, Properties, S3Insert, TableRef, TaskRow};
use pyo3::prelude::*;
use serde::Deserialize;
use serde_json::json;

use crate::connection::Connection;
use crate::errors::{ErrorClass, raise, read_error};
use crate::read::parse_json;
use crate::runtime::block_on;

/// What a task runs: `INSERT INTO db.table [(columns)] SELECT * FROM S3(source)`. No
/// `Debug`: its properties carry S3 credentials (`S3Insert`'s `Debug` redacts them).
#[derive(Deserialize)]
struct InsertSpec {
    database: String,
    table: String,
    #[serde(default)]
    columns: Option<Vec<String>>,
    uri: String,
    format: String,
    /// Further S3 properties (endpoint, region, credentials, CSV options), in order.
    #[serde(default)]
    source_properties: Vec<(String, String)>,
}

impl InsertSpec {
    fn build(self) -> PyResult<S3Insert> {
        let table = TableRef::new(&self.database, &self.table)
            .map_err(|e| raise(ErrorClass::ConfigurationError, e.to_string()))?;
        let mut insert = S3Insert::new(table, self.uri, self.format);
        insert.columns = self.columns;
        for (k, v) in self.source_properties {
            insert = insert.property(k, v);
        }
        Ok(insert)
    }
}

/// `CREATE JOB` request (no `Debug`, as [`InsertSpec`]).
#[derive(Deserialize)]
struct CreateSpec {
    name: String,
    #[serde(default)]
    properties: Vec<(String, String)>,
    #[serde(default)]
    comment: Option<String>,
    insert: InsertSpec,
}

fn properties(pairs: Vec<(String, String)>) -> Properties {
    let mut out = Properties::default();
    for (k, v) in pairs {
        out.set(k, v);
    }
    out
}

/// Creates a streaming job from a JSON request.
#[pyfunction]
pub(crate) fn job_create(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    spec: &str,
) -> PyResult<()> {
    let conn: &Connection = &connection;
    let spec: CreateSpec = parse_json("job", spec)?;
    let mut job = CreateStreamingJob::new(spec.name, spec.insert.build()?);
    job.properties = properties(spec.properties);
    job.comment = spec.comment;
    let endpoint = conn.mysql(password, None);
    block_on(py, || async move {
        doris_read::jobs::create_job(&endpoint, &job).await
    })
    .map_err(read_error)
}

/// `ALTER JOB name [PROPERTIES (…)] [INSERT …]`.
#[pyfunction]
#[pyo3(signature = (connection, password, name, properties_json, insert_json=None))]
pub(crate) fn job_alter(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    name: &str,
    properties_json: &str,
    insert_json: Option<&str>,
) -> PyResult<()> {
    let conn: &Connection = &connection;
    let props = properties(parse_json("properties", properties_json)?);
    let insert = match insert_json {
        Some(text) => Some(parse_json::<InsertSpec>("insert", text)?.build()?),
        None => None,
    };
    let endpoint = conn.mysql(password, None);
    let name = name.to_owned();
    block_on(py, || async move {
        doris_read::jobs::alter_job(&endpoint, &name, &props, insert.as_ref()).await
    })
    .map_err(read_error)
}

/// `PAUSE JOB`, `RESUME JOB` or `DROP JOB [IF EXISTS]`.
#[pyfunction]
#[pyo3(signature = (connection, password, action, name, if_exists=false))]
pub(crate) fn job_control(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    action: &str,
    name: &str,
    if_exists: bool,
) -> PyResult<()> {
    let conn: &Connection = &connection;
    let control = match action {
        "pause" => JobControl::Pause,
        "resume" => JobControl::Resume,
        "drop" => JobControl::Drop { if_exists },
        other => {
            return Err(raise(
                ErrorClass::ConfigurationError,
                format!("unknown job action {other:?} (pause, resume or drop)"),
            ));
        }
    };
    let endpoint = conn.mysql(password, None);
    let name = name.to_owned();
    block_on(py, || async move {
        doris_read::jobs::control_job(&endpoint, control, &name).await
    })
    .map_err(read_error)
}

fn statistic_json(stats: &doris_sql::LoadStatistic) -> serde_json::Value {
    json!({
        "scannedRows": stats.scanned_rows,
        "loadBytes": stats.load_bytes,
        "fileNumber": stats.file_number,
        "fileSize": stats.file_size,
    })
}

fn job_json(job: &JobRow) -> serde_json::Value {
    json!({
        "Id": job.id,
        "Name": job.name,
        "Definer": job.definer,
        "ExecuteType": job.execute_type,
        "RecurringStrategy": job.recurring_strategy,
        "Status": job.status.as_str(),
        "ExecuteSql": job.execute_sql,
        "CreateTime": job.create_time,
        "SucceedTaskCount": job.succeed_task_count,
        "FailedTaskCount": job.failed_task_count,
        "CanceledTaskCount": job.canceled_task_count,
        "Comment": job.comment,
        "Properties": job.properties.iter().collect::<BTreeMap<_, _>>(),
        "CurrentOffset": job.current_offset.as_ref().map(|o| o.end_file.clone()),
        "EndOffset": job.end_offset.as_ref().map(|o| o.end_file.clone()),
        "LoadStatistic": statistic_json(&job.load_statistic),
        "ErrorMsg": job.error_msg,
        "JobRuntimeMsg": job.job_runtime_msg,
    })
}

fn task_json(task: &TaskRow) -> serde_json::Value {
    json!({
        "TaskId": task.task_id,
        "JobID": task.job_id,
        "JobName": task.job_name,
        "Label": task.label,
        "Status": task.status,
        "ErrorMsg": task.error_msg,
        "CreateTime": task.create_time,
        "StartTime": task.start_time,
        "FinishTime": task.finish_time,
        "LoadStatistic": statistic_json(&task.load_statistic),
        "User": task.user,
        "RunningOffset": task.running_offset,
    })
}

/// Rows of `jobs()` or `tasks()` as a JSON list of objects.
fn rows_json<R, F, Fut>(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    name: Option<String>,
    fetch: F,
    to_json: fn(&R) -> serde_json::Value,
) -> PyResult<String>
where
    F: FnOnce(doris_read::MySqlEndpoint, Option<String>) -> Fut + Send,
    Fut: std::future::Future<Output = Result<Vec<R>, doris_read::ReadError>>,
    R: Send,
{
    let conn: &Connection = &connection;
    let endpoint = conn.mysql(password, None);
    let rows = block_on(py, || fetch(endpoint, name)).map_err(read_error)?;
    Ok(serde_json::Value::Array(rows.iter().map(to_json).collect()).to_string())
}

/// The streaming jobs (or the one named) as a JSON list of objects.
#[pyfunction]
#[pyo3(signature = (connection, password, name=None))]
pub(crate) fn job_list(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    name: Option<String>,
) -> PyResult<String> {
    rows_json(
        py,
        connection,
        password,
        name,
        |endpoint, name| async move { doris_read::jobs::list_jobs(&endpoint, name.as_deref()).await },
        job_json,
    )
}

/// The tasks Doris shows (of the job named, or of every job) as a JSON list of objects.
#[pyfunction]
#[pyo3(signature = (connection, password, name=None))]
pub(crate) fn task_list(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    name: Option<String>,
) -> PyResult<String> {
    rows_json(
        py,
        connection,
        password,
        name,
        |endpoint, name| async move { doris_read::jobs::list_tasks(&endpoint, name.as_deref()).await },
        task_json,
    )
}
