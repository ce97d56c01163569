//! Atomic, idempotent writes: the Python sink's `start` and `finalize` steps, over
//! `doris_streamload::atomic` (the coordination) and `doris_read`'s SQL session.

use doris_read::mysql::session::Session;
use doris_read::{MySqlEndpoint, ReadError};
use doris_streamload::StreamLoadError;
use doris_streamload::atomic::{
    self, AtomicPolicy, AtomicWrite, Begun, SqlFailure, SqlRows, SqlSession,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::connection::Connection;
use crate::errors::{load_error, write_metadata_error};
use crate::runtime::block_on;

/// `doris_read`'s session as the coordinator's [`SqlSession`].
struct FeSession(Session, MySqlEndpoint);

fn failure(e: ReadError) -> SqlFailure {
    match e {
        ReadError::Transport(m) | ReadError::Timeout(m) => SqlFailure::Unanswered(m),
        other => SqlFailure::Refused(other.to_string()),
    }
}

impl SqlSession for FeSession {
    async fn execute(&mut self, sql: &str) -> Result<u64, SqlFailure> {
        self.0.execute(sql).await.map_err(failure)
    }

    async fn query(&mut self, sql: &str) -> Result<SqlRows, SqlFailure> {
        let rows = self.0.query(sql).await.map_err(failure)?;
        Ok(SqlRows {
            columns: rows.columns,
            rows: rows.rows,
        })
    }

    async fn reconnect(&mut self) -> Result<(), SqlFailure> {
        self.0 = Session::open(&self.1).await.map_err(failure)?;
        Ok(())
    }
}

async fn open(connection: &Connection, password: &str) -> Result<FeSession, StreamLoadError> {
    let endpoint = connection.mysql(password, None);
    Session::open(&endpoint)
        .await
        .map(|s| FeSession(s, endpoint))
        .map_err(|e| StreamLoadError::Sql {
            step: "connect to the FE's MySQL port",
            message: e.to_string(),
        })
}

fn label(prefix: &str, key: &str) -> PyResult<doris_streamload::Label> {
    atomic::key_label(prefix, key).map_err(|e| load_error(&e))
}

/// The run `atomic_begin` started, from the names the sink kept.
fn resume(
    database: &str,
    table: &str,
    label_prefix: &str,
    key: &str,
    staging: &str,
) -> PyResult<AtomicWrite> {
    AtomicWrite::resume(
        database,
        table,
        label(label_prefix, key)?,
        staging,
        AtomicPolicy::default(),
    )
    .map_err(|e| load_error(&e))
}

/// Starts an atomic write: `{"state": "committed"}` when the key's label is committed
/// already, else `{"state": "fresh", "staging": name}` with the run's staging table made.
#[pyfunction]
pub(crate) fn atomic_begin<'py>(
    py: Python<'py>,
    connection: PyRef<'_, Connection>,
    password: &str,
    database: &str,
    table: &str,
    label_prefix: &str,
    key: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let connection: &Connection = &connection;
    let label = label(label_prefix, key)?;
    let endpoint = connection.mysql(password, None);
    let target = block_on(py, || {
        doris_read::fetch_table_schema(&endpoint, database, table)
    })
    .map_err(write_metadata_error)?;
    let begun = block_on(py, || async {
        let mut session = open(connection, password).await?;
        AtomicWrite::begin(
            &mut session,
            database,
            &target,
            label,
            AtomicPolicy::default(),
        )
        .await
    })
    .map_err(|e| load_error(&e))?;
    let out = PyDict::new(py);
    match begun {
        Begun::AlreadyCommitted { label } => {
            out.set_item("state", "committed")?;
            out.set_item("label", label.to_string())?;
        }
        Begun::Fresh(run) => {
            out.set_item("state", "fresh")?;
            out.set_item("label", run.label().to_string())?;
            out.set_item("staging", run.staging_table())?;
        }
    }
    Ok(out)
}

/// Publishes the attempts in `tags` (`(tag, rows its loads reported)`) in one labelled
/// INSERT; returns `rows` (or None), `by_this_run` and `staging_left`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn atomic_publish<'py>(
    py: Python<'py>,
    connection: PyRef<'_, Connection>,
    password: &str,
    database: &str,
    table: &str,
    label_prefix: &str,
    key: &str,
    staging: &str,
    columns: Vec<String>,
    tags: Vec<(String, u64)>,
    partial_update: bool,
    overwrite: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let connection: &Connection = &connection;
    let run = resume(database, table, label_prefix, key, staging)?
        .with_partial_update(partial_update)
        .with_overwrite(overwrite);
    let published = block_on(py, || async {
        let mut session = open(connection, password).await?;
        run.publish(&mut session, &columns, &tags).await
    })
    .map_err(|e| load_error(&e))?;
    let out = PyDict::new(py);
    out.set_item("label", published.label)?;
    out.set_item("rows", published.rows)?;
    out.set_item("by_this_run", published.by_this_run)?;
    out.set_item("staging_left", published.staging_left)?;
    Ok(out)
}

/// Drops a failed run's staging table (best effort is the caller's choice).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn atomic_discard(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    database: &str,
    table: &str,
    label_prefix: &str,
    key: &str,
    staging: &str,
) -> PyResult<()> {
    let connection: &Connection = &connection;
    let run = resume(database, table, label_prefix, key, staging)?;
    block_on(py, || async {
        let mut session = open(connection, password).await?;
        run.discard(&mut session).await
    })
    .map_err(|e| load_error(&e))
}

/// Drops the staging tables of `database` older than `older_than_seconds`; returns their
/// names.
#[pyfunction]
pub(crate) fn atomic_cleanup(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    database: &str,
    older_than_seconds: f64,
) -> PyResult<Vec<String>> {
    let connection: &Connection = &connection;
    let age =
        std::time::Duration::try_from_secs_f64(older_than_seconds.max(0.0)).unwrap_or_default();
    block_on(py, || async {
        let mut session = open(connection, password).await?;
        atomic::cleanup(&mut session, database, age).await
    })
    .map_err(|e| load_error(&e))
}
