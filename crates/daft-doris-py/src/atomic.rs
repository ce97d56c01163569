//! Atomic, idempotent writes: the Python sink's `start`, `finalize` and cleanup steps, over
//! `doris_write::atomic` (every decision), `doris_write` (the spec and
//! the tasks' reports) and `doris_mysql`'s SQL session.

use doris_mysql::Session;
use doris_streamload::StreamLoadError;
use doris_write::WriteSummary;
use doris_write::atomic::{self, Begun, CommittedBy};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::args;
use crate::connection::{DorisConnection, Links};
use crate::errors::{ErrorClass, load_error, raise, write_metadata_error};
use crate::runtime::block_on;
use crate::write::reports;
use crate::write_options::write_spec;

/// A statement session on the FE's MySQL port.
async fn open(links: &Links<'_>) -> Result<Session, StreamLoadError> {
    let endpoint = links.mysql();
    Session::open(&endpoint)
        .await
        .map_err(|e| StreamLoadError::Sql {
            step: "connect to the FE's MySQL port",
            message: e.to_string(),
        })
}

fn config(message: &str) -> PyErr {
    raise(ErrorClass::ConfigurationError, message)
}

/// An atomic write's run, as `atomic_begin` found or started it: the key, its label, and
/// either the staging table its tasks load into or how the key had committed before.
/// Plain data, so the sink that holds it pickles to Ray workers.
#[pyclass(frozen, get_all, module = "daft_doris._native")]
#[derive(Debug, Clone)]
pub(crate) struct AtomicRun {
    /// The write's idempotence key (a new random one when the write named none).
    key: String,
    /// The key's label.
    label: String,
    /// The run's staging table (`None` when the key had committed before).
    staging: Option<String>,
    /// How the key had committed before (`"label"` or `"ledger"`; `None` for a fresh run).
    committed_by: Option<&'static str>,
}

#[pymethods]
impl AtomicRun {
    /// A run as its fields say (how a pickle rebuilds it).
    #[new]
    #[pyo3(signature = (key, label, staging=None, committed_by=None))]
    fn new(
        key: String,
        label: String,
        staging: Option<String>,
        committed_by: Option<String>,
    ) -> PyResult<Self> {
        let committed_by = match committed_by.as_deref() {
            None => None,
            Some("label") => Some("label"),
            Some("ledger") => Some("ledger"),
            Some(_) => return Err(config("committed_by must be label or ledger")),
        };
        if staging.is_some() == committed_by.is_some() {
            return Err(config(
                "a run has either a staging table or the way its key committed",
            ));
        }
        Ok(Self {
            key,
            label,
            staging,
            committed_by,
        })
    }

    /// Whether the key had committed before: the write loads and publishes nothing.
    #[getter]
    fn committed(&self) -> bool {
        self.committed_by.is_some()
    }

    fn __getnewargs__(&self) -> (String, String, Option<String>, Option<&'static str>) {
        (
            self.key.clone(),
            self.label.clone(),
            self.staging.clone(),
            self.committed_by,
        )
    }

    fn __repr__(&self) -> String {
        format!("{self:?}")
    }
}

impl AtomicRun {
    /// The fresh run's staging table (a committed run has none to publish or drop).
    fn staging(&self) -> PyResult<&str> {
        self.staging
            .as_deref()
            .ok_or_else(|| config("the key had committed before: the run has no staging table"))
    }
}

/// Starts an atomic write of `options` (`DorisWriteOptions` fields): the run, with its
/// staging table made, or the key's earlier commit. A write without an idempotence key
/// runs under a new random key.
#[pyfunction]
pub(crate) fn atomic_begin(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    database: &str,
    table: &str,
    options: Bound<'_, PyDict>,
) -> PyResult<AtomicRun> {
    let links = connection.resolve(py)?;
    let spec = write_spec(&options)?;
    let key = spec.atomic_key();
    let endpoint = links.mysql();
    let target = block_on(py, || {
        doris_read::fetch_table_schema(&endpoint, database, table)
    })
    .map_err(write_metadata_error)?;
    let begun = block_on(py, || async {
        let mut session = open(&links).await?;
        spec.begin_atomic(&mut session, database, &target, &key)
            .await
    })
    .map_err(|e| load_error(&e))?;
    Ok(match begun {
        Begun::AlreadyCommitted { label, by } => AtomicRun {
            key,
            label: label.to_string(),
            staging: None,
            committed_by: Some(match by {
                CommittedBy::Label => "label",
                CommittedBy::Ledger { .. } => "ledger",
            }),
        },
        Begun::Fresh(run) => AtomicRun {
            key,
            label: run.label().to_string(),
            staging: Some(run.staging_table().to_owned()),
            committed_by: None,
        },
    })
}

/// Publishes the attempts the tasks' reports (`results`) name, in one transaction under
/// the key's label; returns the write's summary row. `table_columns` are published when
/// no task loaded a row (an overwrite still empties the table by them).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn atomic_publish<'py>(
    py: Python<'py>,
    connection: PyRef<'_, DorisConnection>,
    database: &str,
    table: &str,
    options: Bound<'py, PyDict>,
    run: PyRef<'_, AtomicRun>,
    results: Bound<'py, PyList>,
    table_columns: Vec<String>,
) -> PyResult<Py<PyAny>> {
    let links = connection.resolve(py)?;
    let spec = write_spec(&options)?;
    let run = spec
        .resume_atomic(database, table, &run.key, run.staging()?)
        .map_err(|e| load_error(&e))?;
    let tasks = reports(&results)?;
    let tags = WriteSummary::attempts_to_publish(&tasks);
    let columns = WriteSummary::published_columns(&tasks, &table_columns);
    let published = block_on(py, || async {
        let mut session = open(&links).await?;
        run.publish(&mut session, &columns, &tags).await
    })
    .map_err(|e| load_error(&e))?;
    let out = args::to_python(py, &WriteSummary::of_atomic(&tasks, Some(&published)))?;
    out.bind(py)
        .set_item("staging_left", published.staging_left)?;
    Ok(out)
}

/// The summary row of an atomic write whose key had committed before.
#[pyfunction]
pub(crate) fn atomic_summary(py: Python<'_>, results: Bound<'_, PyList>) -> PyResult<Py<PyAny>> {
    args::to_python(py, &WriteSummary::of_atomic(&reports(&results)?, None))
}

/// Drops a failed run's staging table (best effort is the caller's choice).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn atomic_discard(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    database: &str,
    table: &str,
    options: Bound<'_, PyDict>,
    run: PyRef<'_, AtomicRun>,
) -> PyResult<()> {
    let links = connection.resolve(py)?;
    let run = write_spec(&options)?
        .resume_atomic(database, table, &run.key, run.staging()?)
        .map_err(|e| load_error(&e))?;
    block_on(py, || async {
        let mut session = open(&links).await?;
        run.discard(&mut session).await
    })
    .map_err(|e| load_error(&e))
}

/// Drops the staging tables of `database` older than `older_than_seconds`; returns their
/// names.
#[pyfunction]
pub(crate) fn atomic_cleanup(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    database: &str,
    older_than_seconds: f64,
) -> PyResult<Vec<String>> {
    let links = connection.resolve(py)?;
    let age =
        std::time::Duration::try_from_secs_f64(older_than_seconds.max(0.0)).unwrap_or_default();
    block_on(py, || async {
        let mut session = open(&links).await?;
        atomic::cleanup(&mut session, database, age).await
    })
    .map_err(|e| load_error(&e))
}

/// Deletes the commit ledger's records of `database` older than `older_than_seconds`;
/// returns how many.
#[pyfunction]
pub(crate) fn atomic_cleanup_ledger(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    database: &str,
    ledger: &str,
    older_than_seconds: f64,
) -> PyResult<u64> {
    let links = connection.resolve(py)?;
    let age =
        std::time::Duration::try_from_secs_f64(older_than_seconds.max(0.0)).unwrap_or_default();
    block_on(py, || async {
        let mut session = open(&links).await?;
        atomic::cleanup_ledger(&mut session, database, ledger, age).await
    })
    .map_err(|e| load_error(&e))
}
