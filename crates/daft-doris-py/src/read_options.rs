//! A read's options: the keywords converted to named options and checked by
//! `doris_read::options::ReadOptions` (for `_native.ReadRequest`, and for the connection,
//! which lays them over its own: `DorisConnection._for_read`).

use doris_connection::OptionValue;
use doris_read::options::UnreadableColumns;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyMapping};

use crate::args;
use crate::errors::{ErrorClass, raise, read_error};

/// The read options of `options` (keywords named by `doris_read::options::ReadOptions::NAMES`,
/// `None` where left out), checked.
pub(crate) fn read_options(
    options: &Bound<'_, PyDict>,
) -> PyResult<doris_read::options::ReadOptions> {
    let options = options.copy()?;
    // PyMySQL's keys are converted with their own names in messages.
    let mysql = options.get_item("mysql_options")?;
    options.del_item("mysql_options").ok();
    let mut given = args::options("", &options)?;
    if let Some(mysql) = args::given(mysql) {
        let map = PyDict::new(mysql.py());
        map.update(mysql.cast::<PyMapping>().map_err(|_| {
            raise(
                ErrorClass::ConfigurationError,
                "mysql_options must be a mapping",
            )
        })?)?;
        let pairs = args::options("mysql_options ", &map)?;
        given.push((
            "mysql_options".into(),
            OptionValue::Map(pairs.into_iter().collect()),
        ));
    }
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
