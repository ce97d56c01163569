//! The SQL session writes open on the FE's MySQL port (`doris_mysql::Session`), and the
//! atomic writes' housekeeping (`doris_write::atomic::{cleanup, cleanup_ledger}`).

use doris_mysql::Session;
use doris_streamload::StreamLoadError;
use doris_write::atomic;
use pyo3::prelude::*;

use crate::connection::{DorisConnection, Links};
use crate::errors::load_error;
use crate::runtime::block_on;

/// A statement session on the FE's MySQL port.
pub(crate) async fn open(links: &Links<'_>) -> Result<Session, StreamLoadError> {
    let endpoint = links.mysql();
    Session::open(&endpoint)
        .await
        .map_err(|e| StreamLoadError::Sql {
            step: "connect to the FE's MySQL port",
            message: e.to_string(),
        })
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
