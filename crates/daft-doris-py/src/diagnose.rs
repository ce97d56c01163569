//! `daft_doris.diagnose`: conversion only; the checks are `doris_read::diagnose`'s.

use doris_read::diagnose::{Targets, diagnose as run_checks};
use pyo3::prelude::*;

use crate::connection::DorisConnection;
use crate::runtime::block_on;

/// One check as Python sees it: `(check, target, outcome, detail, fix, line)`, `line`
/// being the check printed as one line (`doris_read::diagnose::Check`'s `Display`).
type CheckRow = (String, String, String, String, Option<String>, String);

/// Runs the checks; returns one row per check.
#[pyfunction]
#[pyo3(signature = (connection, database=None, table=None, flight=false))]
pub(crate) fn diagnose(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    database: Option<String>,
    table: Option<String>,
    flight: bool,
) -> PyResult<Vec<CheckRow>> {
    let links = connection.resolve(py)?;
    let mut targets = Targets::new(links.mysql());
    targets.fe_http = Some(links.fe_http()?);
    if flight {
        targets.flight = Some(links.flight()?);
    }
    targets.table = database.zip(table);
    let checks = block_on(py, || async move { run_checks(&targets).await });
    Ok(checks
        .into_iter()
        .map(|c| {
            let line = c.to_string();
            (
                c.check.to_owned(),
                c.target,
                c.outcome.as_str().to_owned(),
                c.detail,
                c.fix,
                line,
            )
        })
        .collect())
}
