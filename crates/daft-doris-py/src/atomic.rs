//! Atomic, idempotent writes: the Python sink's `start` and `finalize` steps, over
//! `doris_streamload::atomic` (every decision) and `doris_read`'s SQL session.

use doris_read::mysql::session::Session;
use doris_streamload::StreamLoadError;
use doris_streamload::atomic::{self, AtomicPolicy, AtomicWrite, Begun, CommitRecord, CommittedBy};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::connection::Connection;
use crate::errors::{load_error, write_metadata_error};
use crate::runtime::block_on;

async fn open(connection: &Connection, password: &str) -> Result<Session, StreamLoadError> {
    let endpoint = connection.mysql(password, None);
    Session::open(&endpoint)
        .await
        .map_err(|e| StreamLoadError::Sql {
            step: "connect to the FE's MySQL port",
            message: e.to_string(),
        })
}

/// The commit record a sink names: a ledger table, or `None` for the label only.
fn commit_record(ledger: Option<String>) -> CommitRecord {
    ledger.map_or(CommitRecord::LabelOnly, CommitRecord::Ledger)
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
    ledger: Option<String>,
) -> PyResult<AtomicWrite> {
    AtomicWrite::resume(
        database,
        table,
        label(label_prefix, key)?,
        staging,
        commit_record(ledger),
        AtomicPolicy::default(),
    )
    .map_err(|e| load_error(&e))
}

/// Starts an atomic write: `{"state": "committed", "committed_by": "label" | "ledger"}`
/// when the key committed before, else `{"state": "fresh", "staging": name}` with the
/// run's staging table made. `ledger` names the commit ledger (`None`: the label only).
#[pyfunction]
#[pyo3(signature = (connection, password, database, table, label_prefix, key, ledger))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn atomic_begin<'py>(
    py: Python<'py>,
    connection: PyRef<'_, Connection>,
    password: &str,
    database: &str,
    table: &str,
    label_prefix: &str,
    key: &str,
    ledger: Option<String>,
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
            commit_record(ledger),
            AtomicPolicy::default(),
        )
        .await
    })
    .map_err(|e| load_error(&e))?;
    let out = PyDict::new(py);
    match begun {
        Begun::AlreadyCommitted { label, by } => {
            out.set_item("state", "committed")?;
            out.set_item("label", label.to_string())?;
            out.set_item(
                "committed_by",
                match by {
                    CommittedBy::Label => "label",
                    CommittedBy::Ledger { .. } => "ledger",
                },
            )?;
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
    ledger: Option<String>,
    columns: Vec<String>,
    tags: Vec<(String, u64)>,
    partial_update: bool,
    overwrite: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let connection: &Connection = &connection;
    let run = resume(database, table, label_prefix, key, staging, ledger)?
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
    ledger: Option<String>,
) -> PyResult<()> {
    let connection: &Connection = &connection;
    let run = resume(database, table, label_prefix, key, staging, ledger)?;
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
