//! A read's options: the keywords converted to named options and checked by
//! `doris_read::options::ReadOptions` (for `_native.ReadRequest`, and for the connection,
//! which lays them over its own: `DorisConnection._for_read`).

use doris_read::options::UnreadableColumns;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::args;
use crate::errors::read_error;

/// The read options of `options` (keywords named by `doris_read::options::ReadOptions::NAMES`,
/// `None` where left out), checked.
pub(crate) fn read_options(
    options: &Bound<'_, PyDict>,
) -> PyResult<doris_read::options::ReadOptions> {
    let given = args::options("", options)?;
    doris_read::options::ReadOptions::from_options(given).map_err(read_error)
}

/// Refuses a read of a table whose columns in `unreadable` (`(name, Doris type, reason)`,
/// as `describe_table` lists them) have no Arrow form, unless `policy` is `"omit"`
/// (`doris_read::options::UnreadableColumns::check`): a `SchemaError` naming them.
#[pyfunction]
pub(crate) fn check_unreadable_columns(
    policy: &str,
    unreadable: Vec<(String, String, String)>,
) -> PyResult<()> {
    policy
        .parse::<UnreadableColumns>()
        .and_then(|p| p.check(&unreadable))
        .map_err(read_error)
}
