//! A read's transport settings (`_native.ReadOptions`): the keywords converted to named
//! options and checked by `doris_read::options::ReadOptions` (the transport, batch bounds,
//! timeouts, MySQL and Flight options, Flight location settings), read back here; the
//! connection lays the same options over its own (`DorisConnection._for_read`).

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

/// What a read's planning and tasks take of its checked options.
#[pyclass(frozen, get_all, module = "daft_doris._native")]
#[derive(Debug, Clone)]
pub(crate) struct ReadOptions {
    /// `"mysql"` or `"flight"`.
    transport: String,
    batch_rows: usize,
    batch_bytes: u64,
    /// Tablet groups one Daft task reads at once (`None`: groups ÷ cores).
    queries_per_task: Option<usize>,
    /// The Arrow unit of DATETIME columns (`doris_read::TimestampUnits` by name).
    timestamp_units: String,
    /// What a table with columns that have no Arrow form does (`"error"` or `"omit"`,
    /// `doris_read::options::UnreadableColumns`).
    unreadable_columns: String,
}

#[pymethods]
impl ReadOptions {
    /// The option names (`doris_read::options::ReadOptions::NAMES`).
    #[classattr]
    #[allow(non_snake_case)]
    fn NAMES() -> Vec<&'static str> {
        doris_read::options::ReadOptions::NAMES.to_vec()
    }

    /// Checks every option; a bad one is a `ConfigurationError` naming it and the rule.
    #[new]
    #[pyo3(signature = (**options))]
    fn new(py: Python<'_>, options: Option<Bound<'_, PyDict>>) -> PyResult<Self> {
        let read = read_options(&options.unwrap_or_else(|| PyDict::new(py)))?;
        Ok(Self {
            transport: read.transport.as_str().to_owned(),
            batch_rows: read.limits.rows,
            batch_bytes: read.limits.bytes as u64,
            queries_per_task: read.queries_per_task,
            unreadable_columns: read.unreadable_columns.name().to_owned(),
            timestamp_units: read.timestamp_units.name().to_owned(),
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "ReadOptions(transport={:?}, batch_rows={}, batch_bytes={})",
            self.transport, self.batch_rows, self.batch_bytes
        )
    }
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
