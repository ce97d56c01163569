//! Writes: a writer that loads one Daft micropartition at a time through
//! `doris-streamload`, with the rules of a checked table (`crate::target`) and of the
//! write's spec (`doris_write`); the tasks' reports folded into the summary.

use std::sync::Arc;

use doris_streamload::prepare::BatchRules;
use doris_streamload::{LabelScheme, LoadOptions, Loader, LoaderConfig, StreamLoadClient, TxnRef};
use doris_write::{PartitionLabels, TaskReport, WriteSpec, WriteSummary};
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

/// Loads micropartitions into one table.
#[pyclass(module = "daft_doris._native")]
pub(crate) struct TableWriter {
    client: Arc<StreamLoadClient>,
    database: String,
    table: String,
    spec: WriteSpec,
    options: LoadOptions,
    rules: BatchRules,
    staging_table: Option<String>,
    /// An atomic run's task attempt: its tag (the rows of an attempt that fails or is
    /// retried carry a tag nobody reports, and are never published).
    tag: Option<String>,
}

#[pymethods]
impl TableWriter {
    /// A writer into `database.table`: `target` is the checked table (`None` for a writer
    /// that only settles two-phase loads); `options` the write's options
    /// (`DorisWriteOptions` fields); `staging_table` the atomic run's staging table (the
    /// writer is then one task attempt, with a tag of its own).
    #[new]
    #[pyo3(signature = (connection, *, database, table, options, target=None, staging_table=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        connection: PyRef<'_, DorisConnection>,
        database: String,
        table: String,
        options: Bound<'_, PyDict>,
        target: Option<PyRef<'_, WriteTarget>>,
        staging_table: Option<String>,
    ) -> PyResult<Self> {
        let links = connection.resolve(connection.py())?;
        let mut spec = write_spec(&options)?;
        let rules = target.map(|t| t.rules.clone()).unwrap_or_default();
        let rules = BatchRules::new(rules).map_err(|e| load_error(&e))?;
        let mut config = links.stream_load()?;
        spec.configure_client(&mut config, links.query_timeout());
        let load_options = spec.load_options().map_err(|e| load_error(&e))?;
        let client = StreamLoadClient::new(config).map_err(|e| load_error(&e))?;
        Ok(Self {
            client: Arc::new(client),
            database,
            table,
            spec,
            options: load_options,
            rules,
            tag: staging_table
                .is_some()
                .then(doris_write::atomic::attempt_tag),
            staging_table,
        })
    }

    /// Loads one micropartition; returns its task report (`doris_write::TaskReport`) as a
    /// dict.
    ///
    /// `labels` (a keyed write with per-load labels) makes the labels deterministic: a
    /// rerun over the same data with the same settings loads nothing twice; without, they
    /// are random per load. In an atomic run the rows go to the staging table, every one
    /// tagged with the writer's tag; only the tags of attempts that succeed are published.
    #[pyo3(signature = (data, labels=None))]
    fn write(
        &self,
        py: Python<'_>,
        data: PyRecordBatchReader,
        labels: Option<PyRef<'_, WriteLabels>>,
    ) -> PyResult<Py<PyAny>> {
        let reader = data.into_reader()?;
        let schema = reader.schema();
        let mut batches = Vec::new();
        for batch in reader {
            let batch = batch.map_err(|e| raise(ErrorClass::TransportError, e.to_string()))?;
            batches.push(self.rules.apply(batch).map_err(|e| load_error(&e))?);
        }
        let scheme = match &labels {
            Some(labels) => labels
                .0
                .scheme(&schema, &batches)
                .map_err(|e| load_error(&e))?,
            None => LabelScheme::Random {
                prefix: self.spec.label_prefix.clone(),
            },
        };
        let config = LoaderConfig {
            max_rows: self.spec.batch_rows,
            max_bytes: self.spec.batch_bytes,
            labels: scheme,
            ..LoaderConfig::default()
        };
        let fields: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
        let client = self.client.clone();
        let (db, mut table, mut options) = (
            self.database.clone(),
            self.table.clone(),
            self.options.clone(),
        );
        if let (Some(tag), Some(staging)) = (&self.tag, &self.staging_table) {
            options = doris_write::atomic::staging_load_options(&options, &fields, tag)
                .map_err(|e| load_error(&e))?;
            table = staging.clone();
        }
        let outcome = block_on(py, move || async move {
            let loader = Loader::new(client, &db, &table, options, config)
                .map_err(|e| Box::new(LoaderFailure::Start(e)))?;
            // A failure waits for the loads in flight and aborts what this micropartition
            // pre-committed (two-phase mode) before it is raised.
            loader
                .load_all(batches)
                .await
                .map_err(|e| Box::new(LoaderFailure::Loads(e)))
        });
        let summary = outcome.map_err(|failure| match *failure {
            LoaderFailure::Start(e) => load_error(&e),
            LoaderFailure::Loads(e) => loader_error(&e),
        })?;
        let mut report = TaskReport::of_loads(&summary).map_err(|e| load_error(&e))?;
        report.tag = self.tag.clone();
        report.columns = fields;
        args::to_python(py, &report)
    }

    /// Commits (or aborts) pre-committed loads (`doris_streamload::TxnRef`s, as the task
    /// reports list them); idempotent. A commit that fails aborts every later load and
    /// raises `DorisPartialCommitError` naming what committed.
    fn settle(&self, py: Python<'_>, txns: Bound<'_, PyList>, commit: bool) -> PyResult<()> {
        let txns: Vec<TxnRef> = args::from_python("pre-committed loads", &txns)?;
        let client = self.client.clone();
        let db = self.database.clone();
        block_on(py, move || async move {
            if commit {
                client.commit_or_abort_all(&db, &txns).await
            } else {
                client.abort_every(&db, &txns).await
            }
        })
        .map(|_| ())
        .map_err(|e| load_error(&e))
    }
}

/// Why a micropartition's loader failed: it could not start, or a load failed (with what
/// had loaded before).
enum LoaderFailure {
    Start(doris_streamload::StreamLoadError),
    Loads(doris_streamload::LoaderError),
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
