//! Streaming jobs: create, alter, pause, resume and drop a Doris 4.0 streaming job, and its
//! `jobs()` / `tasks()` rows, through `doris_jobs::admin` (statements built by `doris-jobs`).
//! Arguments arrive as Python passed them and are checked by `doris-jobs` (the S3 source,
//! the job settings, the staged file names); rows travel back as one pyarrow record batch
//! (`doris_jobs::admin::jobs_batch`).

use std::time::SystemTime;

use doris_connection::OptionValue;
use doris_jobs::admin::JobError;
use doris_jobs::{
    CreateStreamingJob, JobControl, JobSettings, MAX_ROWS_PER_FILE, S3Insert, S3Source, StagePlan,
};
use doris_sql::TableRef;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::{PyRecordBatch, PySchema};

use crate::args;
use crate::connection::DorisConnection;
use crate::errors::{ErrorClass, job_error, raise, sql_error};
use crate::runtime::{block_on, block_on_interruptible};

fn config(message: impl Into<String>) -> PyErr {
    raise(ErrorClass::ConfigurationError, message.into())
}

/// `(key, text)` pairs of a mapping or of a list of pairs (`None`: none), read by
/// `doris_jobs::property_pairs`; `what` names the argument in errors.
fn pairs(what: &str, value: Option<Bound<'_, PyAny>>) -> PyResult<Vec<(String, String)>> {
    let value = match args::given(value) {
        None => OptionValue::Null,
        Some(value) => args::option(what, &value)?,
    };
    doris_jobs::property_pairs(what, &value).map_err(sql_error)
}

/// The S3 source `uri`, `format` and `properties` (a mapping or `(key, value)` pairs)
/// checked as `doris_jobs::S3Source` does; returns the properties as `(key, text)` pairs and the bucket.
#[pyfunction]
#[pyo3(signature = (uri, format, properties=None))]
pub(crate) fn check_s3_source(
    uri: &Bound<'_, PyAny>,
    format: &Bound<'_, PyAny>,
    properties: Option<Bound<'_, PyAny>>,
) -> PyResult<(Vec<(String, String)>, String)> {
    let source = source(uri, format, properties)?;
    Ok((source.properties().to_vec(), source.bucket().to_owned()))
}

fn source(
    uri: &Bound<'_, PyAny>,
    format: &Bound<'_, PyAny>,
    properties: Option<Bound<'_, PyAny>>,
) -> PyResult<S3Source> {
    let uri: String = uri
        .extract()
        .map_err(|_| config("the source uri must start with s3://"))?;
    let format: String = format.extract().unwrap_or_default();
    S3Source::new(&uri, &format, pairs("properties", properties)?).map_err(sql_error)
}

/// `pairs` with the value of every credential key (`doris_jobs::is_secret_key`) shown as
/// `***` (for `repr`).
#[pyfunction]
pub(crate) fn redact_properties(pairs: Vec<(String, String)>) -> Vec<(String, String)> {
    pairs
        .into_iter()
        .map(|(k, v)| {
            let shown = if doris_jobs::is_secret_key(&k) {
                "***".to_owned()
            } else {
                v
            };
            (k, shown)
        })
        .collect()
}

/// A job name, checked as Doris quoting takes it (`doris_sql::validate_ident`).
#[pyfunction]
pub(crate) fn check_job_name(name: &Bound<'_, PyAny>) -> PyResult<String> {
    let name = args::identifier("job name", name)?;
    doris_sql::validate_ident("job", &name).map_err(sql_error)?;
    Ok(name)
}

/// What a job's tasks run: `INSERT INTO database.table [(columns)] SELECT * FROM S3(uri,
/// format, source_properties…)`, checked when made (`daft_doris._native.S3Insert`). Its
/// properties may carry S3 credentials: `repr` shows only the target table.
#[pyclass(frozen, name = "S3Insert", module = "daft_doris._native")]
pub(crate) struct Insert(S3Insert);

#[pymethods]
impl Insert {
    #[new]
    #[pyo3(signature = (database, table, uri, format, columns=None, source_properties=None))]
    fn new(
        database: &Bound<'_, PyAny>,
        table: &Bound<'_, PyAny>,
        uri: &Bound<'_, PyAny>,
        format: &Bound<'_, PyAny>,
        columns: Option<Bound<'_, PyAny>>,
        source_properties: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let table = TableRef::new(
            &args::identifier("database", database)?,
            &args::identifier("table name", table)?,
        )
        .map_err(sql_error)?;
        let columns = match args::given(columns) {
            Some(columns) => crate::checks::check_columns(&columns)?,
            None => None,
        };
        let insert = source(uri, format, source_properties)?
            .insert(table, columns)
            .map_err(sql_error)?;
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

/// The job settings given by name (`JobSettings::NAMES`), checked
/// (`doris_jobs::JobSettings::from_options`).
fn settings(settings: Option<Bound<'_, PyDict>>) -> PyResult<JobSettings> {
    let given = match settings {
        Some(settings) => args::options("", &settings)?,
        None => Vec::new(),
    };
    JobSettings::from_options(given).map_err(sql_error)
}

/// `CREATE JOB name [PROPERTIES (…)] ON STREAMING [COMMENT …] DO INSERT …`; `settings` are
/// `JobSettings::NAMES`.
#[pyfunction]
#[pyo3(signature = (connection, name, insert, *, comment=None, **settings))]
pub(crate) fn job_create(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    name: &Bound<'_, PyAny>,
    insert: PyRef<'_, Insert>,
    comment: Option<String>,
    settings: Option<Bound<'_, PyDict>>,
) -> PyResult<()> {
    let mut job = CreateStreamingJob::new(check_job_name(name)?, insert.0.clone());
    job.properties = self::settings(settings)?.properties().map_err(sql_error)?;
    job.comment = comment;
    let endpoint = connection.resolve(py)?.mysql();
    block_on(py, || async move {
        doris_jobs::admin::create_job(&endpoint, &job).await
    })
    .map_err(job_error)
}

/// `ALTER JOB name [PROPERTIES (…)] [INSERT …]` (`doris_jobs::alter_job_sql` refuses one
/// with neither); `settings` are `JobSettings::NAMES`.
#[pyfunction]
#[pyo3(signature = (connection, name, *, insert=None, **settings))]
pub(crate) fn job_alter(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    name: &Bound<'_, PyAny>,
    insert: Option<PyRef<'_, Insert>>,
    settings: Option<Bound<'_, PyDict>>,
) -> PyResult<()> {
    let name = check_job_name(name)?;
    let props = self::settings(settings)?.properties().map_err(sql_error)?;
    let insert = insert.map(|i| i.0.clone());
    let endpoint = connection.resolve(py)?.mysql();
    block_on(py, || async move {
        doris_jobs::admin::alter_job(&endpoint, &name, &props, insert.as_ref()).await
    })
    .map_err(job_error)
}

/// Where `StreamingJob.stage` writes and what it names the files
/// (`daft_doris._native.StagePlan`, over `doris_jobs::StagePlan`), stamped when made.
#[pyclass(frozen, name = "StagePlan", module = "daft_doris._native")]
pub(crate) struct Stage {
    plan: StagePlan,
    /// Rows per file.
    #[pyo3(get)]
    rows_per_file: u64,
    /// `parquet`, `csv` or `json`.
    #[pyo3(get)]
    file_format: String,
}

#[pymethods]
impl Stage {
    /// Checks each setting; a bad one is a `ConfigurationError` naming it and the rule.
    #[new]
    #[pyo3(signature = (*, destination, prefix, file_format, rows_per_file))]
    fn new(
        destination: &Bound<'_, PyAny>,
        prefix: &Bound<'_, PyAny>,
        file_format: &Bound<'_, PyAny>,
        rows_per_file: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let destination: String = destination.extract().unwrap_or_default();
        let prefix: String = prefix
            .extract()
            .map_err(|_| config("prefix must be a file name prefix without '/'"))?;
        let file_format: String = file_format.extract().unwrap_or_default();
        let rows_per_file = args::rule("rows_per_file", rows_per_file, |v, n| {
            v.int_in(n, 1, MAX_ROWS_PER_FILE as i64)
        })? as u64;
        let plan = StagePlan::new(&destination, &prefix, &file_format, SystemTime::now())
            .map_err(sql_error)?;
        Ok(Self {
            plan,
            rows_per_file,
            file_format,
        })
    }

    /// The bucket.
    #[getter]
    fn bucket(&self) -> String {
        self.plan.bucket().to_owned()
    }

    /// The key (within the bucket) of the `n`th file.
    fn key(&self, n: usize) -> String {
        self.plan.key(n)
    }

    /// Raises `StagingOrderError` if the first file would sort at or below `offset`.
    #[pyo3(signature = (offset))]
    fn check_after(&self, offset: Option<&str>) -> PyResult<()> {
        self.plan.check_after(offset).map_err(sql_error)
    }
}

/// Waits until the job `name` has loaded `last_key` (`doris_jobs::admin::wait_for_file`)
/// and returns its row as a one-row pyarrow record batch. Ctrl-C interrupts the wait.
#[pyfunction]
#[pyo3(signature = (connection, name, last_key, *, timeout_seconds, poll_seconds))]
pub(crate) fn job_wait(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    name: &Bound<'_, PyAny>,
    last_key: Option<String>,
    timeout_seconds: &Bound<'_, PyAny>,
    poll_seconds: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let name = check_job_name(name)?;
    let timeout = args::rule("timeout_seconds", timeout_seconds, OptionValue::seconds)?;
    let poll = args::rule("poll_seconds", poll_seconds, OptionValue::seconds)?;
    let links = connection.resolve(py)?;
    let endpoint = links.mysql();
    let batch = block_on_interruptible(py, || async move {
        let row =
            doris_jobs::admin::wait_for_file(&endpoint, &name, last_key.as_deref(), timeout, poll)
                .await
                .map_err(job_error)?;
        doris_jobs::admin::jobs_batch(&[row]).map_err(job_error)
    })?;
    Ok(PyRecordBatch::new(batch).into_pyarrow(py)?.unbind())
}

/// `PAUSE JOB`, `RESUME JOB` or `DROP JOB [IF EXISTS]`.
#[pyfunction]
#[pyo3(signature = (connection, action, name, if_exists=false))]
pub(crate) fn job_control(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    action: &str,
    name: &str,
    if_exists: bool,
) -> PyResult<()> {
    let links = connection.resolve(py)?;
    let control = action
        .parse::<JobControl>()
        .map_err(sql_error)?
        .with_if_exists(if_exists);
    let endpoint = links.mysql();
    let name = name.to_owned();
    block_on(py, || async move {
        doris_jobs::admin::control_job(&endpoint, control, &name).await
    })
    .map_err(job_error)
}

/// The columns of `job_list` (`doris_jobs::admin::jobs_schema`) as a pyarrow schema.
#[pyfunction]
pub(crate) fn jobs_schema(py: Python<'_>) -> PyResult<Py<PyAny>> {
    Ok(PySchema::new(doris_jobs::admin::jobs_schema())
        .into_pyarrow(py)?
        .unbind())
}

/// The columns of `task_list` (`doris_jobs::admin::tasks_schema`) as a pyarrow schema.
#[pyfunction]
pub(crate) fn tasks_schema(py: Python<'_>) -> PyResult<Py<PyAny>> {
    Ok(PySchema::new(doris_jobs::admin::tasks_schema())
        .into_pyarrow(py)?
        .unbind())
}

/// Rows fetched over the FE's MySQL port as one pyarrow record batch.
fn rows_batch<F, Fut>(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    fetch: F,
) -> PyResult<Py<PyAny>>
where
    F: FnOnce(doris_mysql::MySqlEndpoint) -> Fut + Send,
    Fut: std::future::Future<Output = Result<arrow::array::RecordBatch, JobError>>,
{
    let links = connection.resolve(py)?;
    let endpoint = links.mysql();
    let batch = block_on(py, || fetch(endpoint)).map_err(job_error)?;
    Ok(PyRecordBatch::new(batch).into_pyarrow(py)?.unbind())
}

/// The streaming jobs (or the one named) as one pyarrow record batch.
#[pyfunction]
#[pyo3(signature = (connection, name=None))]
pub(crate) fn job_list(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    name: Option<String>,
) -> PyResult<Py<PyAny>> {
    rows_batch(py, connection, |endpoint| async move {
        let rows = doris_jobs::admin::list_jobs(&endpoint, name.as_deref()).await?;
        doris_jobs::admin::jobs_batch(&rows)
    })
}

/// The tasks Doris shows (of the job named, or of every job) as one pyarrow record batch.
#[pyfunction]
#[pyo3(signature = (connection, name=None))]
pub(crate) fn task_list(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    name: Option<String>,
) -> PyResult<Py<PyAny>> {
    rows_batch(py, connection, |endpoint| async move {
        let rows = doris_jobs::admin::list_tasks(&endpoint, name.as_deref()).await?;
        doris_jobs::admin::tasks_batch(&rows)
    })
}
