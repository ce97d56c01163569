//! Streaming jobs: create, alter, pause, resume and drop a Doris 4.0 streaming job, and its
//! `jobs()` / `tasks()` rows, through `doris_read::jobs` (statements built by `doris-sql`).
//! Requests arrive as typed arguments (an [`Insert`] and `(key, value)` properties); rows
//! travel back as one pyarrow record batch (`doris_read::jobs::jobs_batch`).

use doris_sql::{CreateStreamingJob, JobControl, Properties, S3Insert, S3Offset, TableRef};
use pyo3::prelude::*;
use pyo3_arrow::{PyRecordBatch, PySchema};

use crate::connection::Connection;
use crate::errors::{ErrorClass, raise, read_error};
use crate::runtime::block_on;

/// What a job's tasks run: `INSERT INTO database.table [(columns)] SELECT * FROM S3(uri,
/// format, source_properties…)`, checked when made (`daft_doris._native.S3Insert`). Its
/// properties may carry S3 credentials: `repr` shows only the target table.
#[pyclass(frozen, name = "S3Insert", module = "daft_doris._native")]
pub(crate) struct Insert(S3Insert);

#[pymethods]
impl Insert {
    #[new]
    #[pyo3(signature = (database, table, uri, format, columns=None, source_properties=Vec::new()))]
    fn new(
        database: &str,
        table: &str,
        uri: String,
        format: String,
        columns: Option<Vec<String>>,
        source_properties: Vec<(String, String)>,
    ) -> PyResult<Self> {
        let table = TableRef::new(database, table)
            .map_err(|e| raise(ErrorClass::ConfigurationError, e.to_string()))?;
        let mut insert = S3Insert::new(table, uri, format);
        insert.columns = columns;
        for (k, v) in source_properties {
            insert = insert.property(k, v);
        }
        Ok(Self(insert))
    }

    fn __repr__(&self) -> String {
        format!(
            "S3Insert(table={}.{})",
            self.0.table.database(),
            self.0.table.table()
        )
    }
}

/// The job's properties: the pairs given, then `offset` (the key of the last file to
/// skip) in the form Doris takes (`S3Offset::property_value`).
fn properties(pairs: Vec<(String, String)>, offset: Option<String>) -> PyResult<Properties> {
    let mut out = Properties::default();
    for (k, v) in pairs {
        out.set(k, v);
    }
    if let Some(end_file) = offset {
        if end_file.is_empty() {
            return Err(raise(
                ErrorClass::ConfigurationError,
                "offset must be the key of the last file to skip",
            ));
        }
        out.set("offset", S3Offset { end_file }.property_value());
    }
    Ok(out)
}

/// `CREATE JOB name [PROPERTIES (…)] [COMMENT …] ON STREAMING DO INSERT …`.
#[pyfunction]
#[pyo3(signature = (connection, password, name, insert, properties=Vec::new(), comment=None, offset=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn job_create(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    name: String,
    insert: PyRef<'_, Insert>,
    properties: Vec<(String, String)>,
    comment: Option<String>,
    offset: Option<String>,
) -> PyResult<()> {
    let conn: &Connection = &connection;
    let mut job = CreateStreamingJob::new(name, insert.0.clone());
    job.properties = self::properties(properties, offset)?;
    job.comment = comment;
    let endpoint = conn.mysql(password, None);
    block_on(py, || async move {
        doris_read::jobs::create_job(&endpoint, &job).await
    })
    .map_err(read_error)
}

/// `ALTER JOB name [PROPERTIES (…)] [INSERT …]`.
#[pyfunction]
#[pyo3(signature = (connection, password, name, properties, insert=None, offset=None))]
pub(crate) fn job_alter(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    name: &str,
    properties: Vec<(String, String)>,
    insert: Option<PyRef<'_, Insert>>,
    offset: Option<String>,
) -> PyResult<()> {
    let conn: &Connection = &connection;
    let props = self::properties(properties, offset)?;
    let insert = insert.map(|i| i.0.clone());
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

/// The columns of `job_list` (`doris_read::jobs::jobs_schema`) as a pyarrow schema.
#[pyfunction]
pub(crate) fn jobs_schema(py: Python<'_>) -> PyResult<Py<PyAny>> {
    Ok(PySchema::new(doris_read::jobs::jobs_schema())
        .into_pyarrow(py)?
        .unbind())
}

/// The columns of `task_list` (`doris_read::jobs::tasks_schema`) as a pyarrow schema.
#[pyfunction]
pub(crate) fn tasks_schema(py: Python<'_>) -> PyResult<Py<PyAny>> {
    Ok(PySchema::new(doris_read::jobs::tasks_schema())
        .into_pyarrow(py)?
        .unbind())
}

/// Rows fetched over the FE's MySQL port as one pyarrow record batch.
fn rows_batch<F, Fut>(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    fetch: F,
) -> PyResult<Py<PyAny>>
where
    F: FnOnce(doris_read::MySqlEndpoint) -> Fut + Send,
    Fut: std::future::Future<Output = Result<arrow::array::RecordBatch, doris_read::ReadError>>,
{
    let conn: &Connection = &connection;
    let endpoint = conn.mysql(password, None);
    let batch = block_on(py, || fetch(endpoint)).map_err(read_error)?;
    Ok(PyRecordBatch::new(batch).into_pyarrow(py)?.unbind())
}

/// The streaming jobs (or the one named) as one pyarrow record batch.
#[pyfunction]
#[pyo3(signature = (connection, password, name=None))]
pub(crate) fn job_list(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    name: Option<String>,
) -> PyResult<Py<PyAny>> {
    rows_batch(py, connection, password, |endpoint| async move {
        let rows = doris_read::jobs::list_jobs(&endpoint, name.as_deref()).await?;
        doris_read::jobs::jobs_batch(&rows)
    })
}

/// The tasks Doris shows (of the job named, or of every job) as one pyarrow record batch.
#[pyfunction]
#[pyo3(signature = (connection, password, name=None))]
pub(crate) fn task_list(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    name: Option<String>,
) -> PyResult<Py<PyAny>> {
    rows_batch(py, connection, password, |endpoint| async move {
        let rows = doris_read::jobs::list_tasks(&endpoint, name.as_deref()).await?;
        doris_read::jobs::tasks_batch(&rows)
    })
}
