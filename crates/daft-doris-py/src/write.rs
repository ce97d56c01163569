//! Writes: a writer that loads one Daft micropartition at a time
//! (`doris_write::TaskWriter`, with the rules of a checked table, `crate::target`, and of
//! the write's spec); the tasks' reports folded into the summary.

use std::sync::Arc;

use doris_streamload::TxnRef;
use doris_write::{PartitionLabels, TaskFailure, TaskReport, TaskWriter, WriteSummary};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3_arrow::PyRecordBatchReader;

use crate::args;
use crate::connection::DorisConnection;
use crate::errors::{ErrorClass, load_error, loader_error, raise};
use crate::runtime::block_on;
use crate::target::WriteTarget;
use crate::write_options::write_spec;

/// The per-load labels of one write, shared by its tasks in a process (identical
/// micropartitions are told apart by an occurrence count).
#[pyclass(module = "daft_doris._native")]
pub(crate) struct WriteLabels(Arc<PartitionLabels>);

#[pymethods]
impl WriteLabels {
    /// The labels of a write of `options` (`None` unless it uses per-load labels).
    #[staticmethod]
    fn of(options: Bound<'_, PyDict>) -> PyResult<Option<Self>> {
        Ok(PartitionLabels::of(&write_spec(&options)?).map(|l| Self(Arc::new(l))))
    }
}

/// Loads micropartitions into one table (`doris_write::TaskWriter`).
#[pyclass(module = "daft_doris._native")]
pub(crate) struct TableWriter(Arc<TaskWriter>);

#[pymethods]
impl TableWriter {
    /// A writer into `database.table`: `target` is the checked table (`None` for a writer
    /// that only settles two-phase loads); `options` the write's options
    /// (`DorisWriteOptions` fields); `staging_table` the atomic run's staging table (the
    /// writer is then one task attempt, with a tag of its own).
    #[new]
    #[pyo3(signature = (connection, *, database, table, options, target=None, staging_table=None))]
    fn new(
        connection: PyRef<'_, DorisConnection>,
        database: String,
        table: String,
        options: Bound<'_, PyDict>,
        target: Option<PyRef<'_, WriteTarget>>,
        staging_table: Option<String>,
    ) -> PyResult<Self> {
        let links = connection.resolve(connection.py())?;
        let rules = target.map(|t| t.rules.clone()).unwrap_or_default();
        let writer = TaskWriter::new(
            links.stream_load()?,
            links.query_timeout(),
            database,
            table,
            write_spec(&options)?,
            rules,
            staging_table,
        )
        .map_err(|e| load_error(&e))?;
        Ok(Self(Arc::new(writer)))
    }

    /// Loads one micropartition; returns its task report (`doris_write::TaskReport`) as a
    /// dict. `labels` (a keyed write with per-load labels) makes the labels deterministic:
    /// a rerun over the same data with the same settings loads nothing twice.
    #[pyo3(signature = (data, labels=None))]
    fn write(
        &self,
        py: Python<'_>,
        data: PyRecordBatchReader,
        labels: Option<PyRef<'_, WriteLabels>>,
    ) -> PyResult<Py<PyAny>> {
        let reader = data.into_reader()?;
        let schema = reader.schema();
        let batches = reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| raise(ErrorClass::TransportError, e.to_string()))?;
        let labels = labels.map(|l| l.0.clone());
        let writer = self.0.clone();
        let report = block_on(py, move || async move {
            writer.write(&schema, batches, labels.as_deref()).await
        })
        .map_err(|failure| match failure {
            TaskFailure::Refused(e) => load_error(&e),
            TaskFailure::Loads(e) => loader_error(&e),
        })?;
        args::to_python(py, &report)
    }

    /// Commits (or aborts) pre-committed loads (`doris_streamload::TxnRef`s, as the task
    /// reports list them); idempotent. A commit that fails aborts every later load and
    /// raises `DorisPartialCommitError` naming what committed.
    fn settle(&self, py: Python<'_>, txns: Bound<'_, PyList>, commit: bool) -> PyResult<()> {
        let txns: Vec<TxnRef> = args::from_python("pre-committed loads", &txns)?;
        let writer = self.0.clone();
        block_on(
            py,
            move || async move { writer.settle(&txns, commit).await },
        )
        .map_err(|e| load_error(&e))
    }
}

/// The tasks' reports, as `TableWriter.write` returned them (`doris_write::TaskReport`
/// serialized by pythonize).
pub(crate) fn reports(results: &Bound<'_, PyList>) -> PyResult<Vec<TaskReport>> {
    args::from_python("task reports", results)
}

/// The summary of a write of loads from its tasks' reports (`two_phase_committed`: every
/// pre-committed load was committed).
#[pyfunction]
pub(crate) fn summarize_loads(
    py: Python<'_>,
    results: Bound<'_, PyList>,
    two_phase_committed: bool,
) -> PyResult<Py<PyAny>> {
    args::to_python(
        py,
        &WriteSummary::of_loads(&reports(&results)?, two_phase_committed),
    )
}

/// How the write of `options` commits: `atomic`, `per_load_labels`, `two_phase` or
/// `plain`.
#[pyfunction]
pub(crate) fn commit_mode(options: Bound<'_, PyDict>) -> PyResult<&'static str> {
    Ok(write_spec(&options)?.mode().as_str())
}
