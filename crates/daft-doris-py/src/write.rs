//! Writes: a writer that loads one Daft micropartition at a time through
//! `doris-streamload`, with the rules of a checked table (`crate::target`) and of the
//! write's spec (`doris_write`); the tasks' reports folded into the summary.

use std::sync::Arc;

use doris_streamload::prepare::BatchRules;
use doris_streamload::{
    Label, LabelScheme, LoadOptions, Loader, LoaderConfig, StreamLoadClient, TxnRef,
};
use doris_write::{PartitionLabels, TaskReport, WriteSpec, WriteSummary};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3_arrow::PyRecordBatchReader;

use crate::connection::{Connection, DorisConnection};
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
        let password = &connection.password_value(connection.py())?;
        let connection: &Connection = &connection;
        let mut spec = write_spec(&options)?;
        let rules = target.map(|t| t.rules.clone()).unwrap_or_default();
        let rules = BatchRules::new(rules).map_err(|e| load_error(&e))?;
        let mut config = connection.stream_load(password)?;
        spec.configure_client(&mut config, connection.query_timeout());
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

    /// Loads one micropartition; returns its task report as a dict.
    ///
    /// `labels` (a keyed write with per-load labels) makes the labels deterministic: a
    /// rerun over the same data with the same settings loads nothing twice; without, they
    /// are random per load. In an atomic run the rows go to the staging table, every one
    /// tagged with the writer's tag; only the tags of attempts that succeed are published.
    #[pyo3(signature = (data, labels=None))]
    fn write<'py>(
        &self,
        py: Python<'py>,
        data: PyRecordBatchReader,
        labels: Option<PyRef<'_, WriteLabels>>,
    ) -> PyResult<Bound<'py, PyDict>> {
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
        report_to_dict(py, &report)
    }

    /// Commits (or aborts) pre-committed loads, each named by `(txn_id, label)` (the label
    /// when Doris gave no id); idempotent. A commit that fails aborts every later load and
    /// raises `DorisPartialCommitError` naming what committed.
    fn settle(
        &self,
        py: Python<'_>,
        txns: Vec<(i64, Option<String>)>,
        commit: bool,
    ) -> PyResult<()> {
        let txns = txns
            .into_iter()
            .map(|(id, label)| match (id, label) {
                (id, _) if id >= 0 => Ok(TxnRef::Id(id)),
                (_, Some(label)) => Label::new(label).map(TxnRef::Label),
                (_, None) => Err(doris_streamload::StreamLoadError::Config(
                    "a pre-committed load without label or transaction id".into(),
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| load_error(&e))?;
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

/// A task report as the dict that travels in Daft's `WriteResult`.
pub(crate) fn report_to_dict<'py>(
    py: Python<'py>,
    report: &TaskReport,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("batches", report.batches)?;
    out.set_item("attempted_rows", report.attempted_rows)?;
    out.set_item("loaded_rows", report.loaded_rows)?;
    out.set_item("filtered_rows", report.filtered_rows)?;
    out.set_item("unselected_rows", report.unselected_rows)?;
    out.set_item("uploaded_bytes", report.uploaded_bytes)?;
    let s = &report.statuses;
    out.set_item(
        "statuses",
        [
            s.success,
            s.publish_timeout,
            s.precommitted,
            s.committed_by_earlier_attempt,
            s.already_loaded,
        ],
    )?;
    let precommitted: Vec<(i64, Option<String>)> = report
        .precommitted
        .iter()
        .map(|t| match t {
            TxnRef::Id(id) => (*id, None),
            TxnRef::Label(l) => (-1, Some(l.to_string())),
        })
        .collect();
    out.set_item("precommitted", precommitted)?;
    out.set_item("tag", report.tag.clone())?;
    out.set_item("columns", report.columns.clone())?;
    Ok(out)
}

/// A task report back from its dict.
pub(crate) fn report_from_dict(item: &Bound<'_, PyAny>) -> PyResult<TaskReport> {
    let get = |key: &str| item.get_item(key);
    let [
        success,
        publish_timeout,
        precommitted,
        committed_by_earlier_attempt,
        already_loaded,
    ]: [u64; 5] = get("statuses")?.extract()?;
    let txns: Vec<(i64, Option<String>)> = get("precommitted")?.extract()?;
    Ok(TaskReport {
        batches: get("batches")?.extract()?,
        attempted_rows: get("attempted_rows")?.extract()?,
        loaded_rows: get("loaded_rows")?.extract()?,
        filtered_rows: get("filtered_rows")?.extract()?,
        unselected_rows: get("unselected_rows")?.extract()?,
        uploaded_bytes: get("uploaded_bytes")?.extract()?,
        statuses: doris_write::StatusCounts {
            success,
            publish_timeout,
            precommitted,
            committed_by_earlier_attempt,
            already_loaded,
        },
        precommitted: txns
            .into_iter()
            .filter_map(|(id, label)| match (id, label) {
                (id, _) if id >= 0 => Some(TxnRef::Id(id)),
                (_, Some(l)) => Label::new(l).ok().map(TxnRef::Label),
                _ => None,
            })
            .collect(),
        tag: get("tag")?.extract()?,
        columns: get("columns")?.extract()?,
    })
}

/// The tasks' reports (dicts).
pub(crate) fn reports(results: &Bound<'_, PyList>) -> PyResult<Vec<TaskReport>> {
    results.iter().map(|r| report_from_dict(&r)).collect()
}

/// A write summary as the dict of the summary row.
pub(crate) fn summary_to_dict<'py>(
    py: Python<'py>,
    summary: &WriteSummary,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("status", summary.status.as_str())?;
    out.set_item("batches", summary.batches)?;
    out.set_item("attempted_rows", summary.attempted_rows)?;
    out.set_item("loaded_rows", summary.loaded_rows)?;
    out.set_item("filtered_rows", summary.filtered_rows)?;
    out.set_item("uploaded_bytes", summary.uploaded_bytes)?;
    out.set_item("already_loaded_batches", summary.already_loaded_batches)?;
    Ok(out)
}

/// The summary of a write of loads from its tasks' reports (`two_phase_committed`: every
/// pre-committed load was committed).
#[pyfunction]
pub(crate) fn summarize_loads<'py>(
    py: Python<'py>,
    results: Bound<'py, PyList>,
    two_phase_committed: bool,
) -> PyResult<Bound<'py, PyDict>> {
    summary_to_dict(
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
