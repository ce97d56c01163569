//! Writes: `WriteRun`, one write over `doris_write::WriteRun` (every decision: the table
//! check, the atomic begin and publish, the two-phase settlement, the summary), which the
//! Python sink's `start`, `finalize` and clean-up call; `WriteTask`, one task's writer.

use std::sync::{Arc, OnceLock};

use arrow_schema::SchemaRef;
use doris_read::fetch_table_schema_and_release;
use doris_sql::TableSchema;
use doris_sql::release::DorisRelease;
use doris_write::{CheckedTarget, RunState, TaskFailure, TaskReport, TaskWriter, WriteSpec};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use pyo3_arrow::{PyRecordBatchReader, PySchema};

use crate::args;
use crate::atomic::open;
use crate::connection::{DorisConnection, Links};
use crate::errors::{ErrorClass, load_error, loader_error, raise, write_metadata_error};
use crate::runtime::block_on;

/// The spec of the write `options` (`DorisWriteOptions`, the keys given), checked by
/// `doris_write::WriteSpec::from_options`, which holds every name and rule.
pub(crate) fn write_spec(options: &Bound<'_, PyDict>) -> PyResult<WriteSpec> {
    WriteSpec::from_options(args::options("", options)?).map_err(|e| load_error(&e))
}

/// Checks a write's options (`DorisWriteOptions`) before anything runs; a bad one is a
/// `ConfigurationError` that names it and the rule (never the value).
#[pyfunction]
pub(crate) fn check_write_options(options: Bound<'_, PyDict>) -> PyResult<()> {
    write_spec(&options).map(|_| ())
}

/// One write into `database.table`. It pickles (the sink carries it to Ray workers) as
/// its constructor call with the run's state (`doris_write::RunState`); the per-load
/// labels and pre-committed loads of a process's tasks stay in that process. The password
/// is resolved where the run is first used, not where it is made.
#[pyclass(module = "daft_doris._native")]
pub(crate) struct WriteRun {
    connection: Py<DorisConnection>,
    database: String,
    table: String,
    options: Py<PyDict>,
    spec: WriteSpec,
    /// The state given, until the run is built.
    state: RunState,
    /// The run, built on first use.
    run: OnceLock<doris_write::WriteRun>,
    /// The table as described in this process (the start's, reused by its tasks).
    described: OnceLock<(TableSchema, Option<DorisRelease>)>,
}

#[pymethods]
impl WriteRun {
    /// A write of `options` (`DorisWriteOptions` fields, checked now); `state` resumes a
    /// run (what a pickle carries).
    #[new]
    #[pyo3(signature = (connection, database, table, options, state=None))]
    fn new(
        connection: Bound<'_, DorisConnection>,
        database: String,
        table: String,
        options: Bound<'_, PyDict>,
        state: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let spec = write_spec(&options)?;
        let state: RunState = match state {
            Some(state) => args::from_python("write state", &state)?,
            None => RunState::default(),
        };
        Ok(Self {
            connection: connection.unbind(),
            database,
            table,
            options: options.unbind(),
            spec,
            state,
            run: OnceLock::new(),
            described: OnceLock::new(),
        })
    }

    /// Starts the write (`doris_write::WriteRun::start`): the table described, the write
    /// refused if the engine may retry its tasks (`retried_tasks`) and it is not atomic,
    /// the data's `schema` checked when known, an atomic run begun.
    #[pyo3(signature = (schema, *, retried_tasks))]
    fn start(
        &mut self,
        py: Python<'_>,
        schema: Option<PySchema>,
        retried_tasks: bool,
    ) -> PyResult<()> {
        // The password resolved once for the whole start.
        let links = self.connection.get().resolve(py)?;
        let (described, release) = self.described(py, &links)?.clone();
        let data = schema.map(PySchema::into_inner);
        let mut run = match self.run.take() {
            Some(run) => run,
            None => self.build(&links)?,
        };
        let started = block_on(py, || {
            run.start(&described, release, data.as_deref(), retried_tasks, || {
                open(&links)
            })
        });
        self.run = OnceLock::from(run);
        started.map_err(|e| load_error(&e))
    }

    /// How the write commits (`atomic`, `per_load_labels`, `two_phase` or `plain`).
    #[getter]
    fn mode(&self) -> &'static str {
        self.spec.mode().as_str()
    }

    /// Whether the write's key had committed before: its tasks load nothing.
    #[getter]
    fn committed_before(&self) -> bool {
        self.run_state().committed_before().is_some()
    }

    /// The run's state as its tasks carry it (`doris_write::RunState`).
    #[getter]
    fn state(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        args::to_python(py, self.run_state())
    }

    /// A writer for one task (one attempt).
    fn task(slf: Bound<'_, Self>) -> WriteTask {
        WriteTask {
            run: slf.unbind(),
            writer: OnceLock::new(),
        }
    }

    /// Finishes the write from its tasks' reports (`results`, as `WriteTask.write` gave
    /// them): the summary row, with `staging_left`.
    fn finish(&self, py: Python<'_>, results: Bound<'_, PyList>) -> PyResult<Py<PyAny>> {
        let reports: Vec<TaskReport> = args::from_python("task reports", &results)?;
        let run = self.run(py)?;
        let links = self.connection.get().resolve(py)?;
        let summary =
            block_on(py, || run.finish(&reports, || open(&links))).map_err(|e| load_error(&e))?;
        args::to_python(py, &summary)
    }

    /// Undoes a failed write: this process's pre-committed loads aborted, an atomic run's
    /// staging table dropped.
    fn abort(&self, py: Python<'_>) -> PyResult<()> {
        let run = self.run(py)?;
        let links = self.connection.get().resolve(py)?;
        block_on(py, || run.abort(|| open(&links))).map_err(|e| load_error(&e))
    }

    fn __getnewargs__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let state = self.state(py)?;
        (
            &self.connection,
            &self.database,
            &self.table,
            &self.options,
            state,
        )
            .into_pyobject(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "WriteRun({}.{}, {})",
            self.database,
            self.table,
            self.mode()
        )
    }
}

impl WriteRun {
    /// The run of this process, built on first use (the password resolved then).
    fn run(&self, py: Python<'_>) -> PyResult<&doris_write::WriteRun> {
        if let Some(run) = self.run.get() {
            return Ok(run);
        }
        let run = self.build(&self.connection.get().resolve(py)?)?;
        Ok(self.run.get_or_init(|| run))
    }

    /// The run over `links` (the connection with its password resolved).
    fn build(&self, links: &Links<'_>) -> PyResult<doris_write::WriteRun> {
        Ok(doris_write::WriteRun::resume(
            self.spec.clone(),
            &self.database,
            &self.table,
            links.stream_load()?,
            links.query_timeout(),
            self.state.clone(),
        ))
    }

    /// The run's state: the built run's, or the one given.
    fn run_state(&self) -> &RunState {
        self.run
            .get()
            .map_or(&self.state, doris_write::WriteRun::state)
    }

    /// The table and the server's release, described once per process.
    fn described(
        &self,
        py: Python<'_>,
        links: &Links<'_>,
    ) -> PyResult<&(TableSchema, Option<DorisRelease>)> {
        if let Some(described) = self.described.get() {
            return Ok(described);
        }
        let endpoint = links.mysql();
        let (database, table) = (&self.database, &self.table);
        let described = block_on(py, || {
            fetch_table_schema_and_release(&endpoint, database, table)
        })
        .map_err(write_metadata_error)?;
        Ok(self.described.get_or_init(|| described))
    }

    /// A task's writer, its batches checked by the start's table check or, when the
    /// start did not know the data's schema, by a check of `schema`; `None` when the key
    /// had committed before.
    fn task_writer(&self, py: Python<'_>, schema: &SchemaRef) -> PyResult<Option<TaskWriter>> {
        // Once per task: the password resolved once for the run and the table check.
        let links = self.connection.get().resolve(py)?;
        let run = match self.run.get() {
            Some(run) => run,
            None => {
                let run = self.build(&links)?;
                self.run.get_or_init(|| run)
            }
        };
        let state = run.state();
        let checked;
        let target = match &state.target {
            Some(target) => target,
            None if state.started && state.committed_before().is_none() => {
                let (described, release) = self.described(py, &links)?;
                checked = run
                    .check_target(described, *release, schema)
                    .map_err(|e| load_error(&e))?;
                &checked
            }
            // Refused (not started) or nothing to load: no check needed.
            None => &CheckedTarget::default(),
        };
        run.task(target).map_err(|e| load_error(&e))
    }
}

/// One task's writer of a `WriteRun` (made on the first micropartition with rows).
#[pyclass(frozen, module = "daft_doris._native")]
pub(crate) struct WriteTask {
    run: Py<WriteRun>,
    writer: OnceLock<Option<Arc<TaskWriter>>>,
}

#[pymethods]
impl WriteTask {
    /// Loads one micropartition; returns its report (`doris_write::TaskReport`) as a dict,
    /// or `None` when there was nothing to load (no rows, or the key had committed before).
    fn write(&self, py: Python<'_>, data: PyRecordBatchReader) -> PyResult<Option<Py<PyAny>>> {
        let reader = data.into_reader()?;
        let schema = reader.schema();
        let batches = reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| raise(ErrorClass::TransportError, e.to_string()))?;
        if batches.iter().all(|b| b.num_rows() == 0) {
            return Ok(None);
        }
        let run = self.run.borrow(py);
        let writer = match self.writer.get() {
            Some(writer) => writer,
            None => {
                let writer = run.task_writer(py, &schema)?.map(Arc::new);
                self.writer.get_or_init(|| writer)
            }
        };
        let Some(writer) = writer.clone() else {
            return Ok(None);
        };
        let run = run.run(py)?;
        let report =
            block_on(py, || run.write(&writer, &schema, batches)).map_err(
                |failure| match failure {
                    TaskFailure::Refused(e) => load_error(&e),
                    TaskFailure::Loads(e) => loader_error(&e),
                },
            )?;
        args::to_python(py, &report).map(Some)
    }
}
