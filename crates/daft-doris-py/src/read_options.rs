//! A read's transport settings (`_native.ReadOptions`): the keywords converted to named
//! options and checked by `doris_read::options::ReadOptions` (the transport, the batch
//! bounds, the MySQL and Flight options, the Flight location settings), read back here.

use doris_connection::OptionValue;
use doris_connection::SslMode;
use doris_read::options::{MySqlOptions, UnreadableColumns};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyMapping};

use crate::args;
use crate::errors::{ErrorClass, raise, read_error};

fn config(message: impl Into<String>) -> PyErr {
    raise(ErrorClass::ConfigurationError, message.into())
}

/// A read's checked transport settings.
#[pyclass(frozen, get_all, module = "daft_doris._native")]
#[derive(Debug, Clone)]
pub(crate) struct ReadOptions {
    /// `"mysql"` or `"flight"`.
    transport: String,
    batch_rows: usize,
    batch_bytes: u64,
    /// Tablet groups one Daft task reads at once (`None`: groups ÷ cores).
    queries_per_task: Option<usize>,
    /// The MySQL link's TLS mode (lower case; `None`: the crates' default).
    mysql_ssl_mode: Option<String>,
    /// `mysql_options["ssl_ca"]`: a CA file path, read where the source is made.
    mysql_ssl_ca: Option<String>,
    /// `mysql_options["server_public_key"]`: the server's public key (PEM), pinned.
    mysql_server_public_key: Option<String>,
    /// `mysql_options` `ssl_cert` and `ssl_key`: the MySQL link's client certificate and
    /// key files, read where the connection is made.
    mysql_ssl_cert: Option<String>,
    mysql_ssl_key: Option<String>,
    /// `flight_options`, checked (`doris_read::options::FlightOptions`), sorted by key:
    /// the connection maps them again where the endpoint is made.
    flight_options: Vec<(String, String)>,
    /// `host:port` → `host:port` for BE locations the client cannot reach, sorted.
    flight_endpoint_rewrite: Vec<(String, String)>,
    /// Flight locations allowed besides the BEs the FE reports.
    flight_allowed_locations: Vec<String>,
    /// `mysql_options` `connect_timeout` (seconds).
    mysql_connect_timeout_seconds: Option<f64>,
    /// `mysql_options` `read_timeout` / `write_timeout` (seconds): the query timeout.
    mysql_query_timeout_seconds: Option<f64>,
    /// `mysql_options` `max_allowed_packet` (bytes).
    mysql_max_packet_bytes: Option<usize>,
    /// The Arrow unit of DATETIME columns (`doris_read::TimestampUnits` by name).
    timestamp_units: String,
    /// What a table with columns that have no Arrow form does (`"error"` or `"omit"`,
    /// `doris_read::options::UnreadableColumns`).
    unreadable_columns: String,
}

#[pymethods]
impl ReadOptions {
    /// Checks every setting (`doris_read::options::ReadOptions::from_options`); a bad one is
    /// a `ConfigurationError` naming it and the rule.
    #[new]
    #[pyo3(signature = (**options))]
    fn new(py: Python<'_>, options: Option<Bound<'_, PyDict>>) -> PyResult<Self> {
        let options = match options {
            Some(given) => given.copy()?,
            None => PyDict::new(py),
        };
        // PyMySQL's keys are converted with their own names in messages.
        let mysql = options.get_item("mysql_options")?;
        options.del_item("mysql_options").ok();
        let mut given = args::options("", &options)?;
        if let Some(mysql) = args::given(mysql) {
            let pairs = mysql_pairs(&mysql)?;
            given.push((
                "mysql_options".into(),
                OptionValue::Map(pairs.into_iter().collect()),
            ));
        }
        let read = doris_read::options::ReadOptions::from_options(given).map_err(read_error)?;
        let mysql = read.mysql;
        Ok(Self {
            transport: read.transport.as_str().to_owned(),
            batch_rows: read.limits.rows,
            batch_bytes: read.limits.bytes as u64,
            queries_per_task: read.queries_per_task,
            mysql_ssl_mode: mysql.ssl_mode.map(|m| m.name().to_owned()),
            mysql_ssl_ca: mysql.ssl_ca,
            mysql_server_public_key: mysql.server_public_key,
            mysql_ssl_cert: mysql.ssl_cert_and_key.as_ref().map(|(c, _)| c.clone()),
            mysql_ssl_key: mysql.ssl_cert_and_key.map(|(_, k)| k),
            mysql_connect_timeout_seconds: mysql.connect_timeout.map(|d| d.as_secs_f64()),
            mysql_query_timeout_seconds: mysql.query_timeout.map(|d| d.as_secs_f64()),
            mysql_max_packet_bytes: mysql.max_packet_bytes,
            flight_options: read.flight_options,
            flight_endpoint_rewrite: read.flight_endpoint_rewrite.into_iter().collect(),
            flight_allowed_locations: read
                .flight_allowed_locations
                .iter()
                .map(ToString::to_string)
                .collect(),
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

/// The TLS mode a read made through a connection whose MySQL link settled on `floor`
/// takes with `mysql_options` (`doris_read::options::MySqlOptions::at_least`): never
/// weaker than `floor`; `disabled` under TLS is a `ConfigurationError`.
#[pyfunction]
pub(crate) fn mysql_ssl_mode_at_least(
    mysql_options: Option<Bound<'_, PyAny>>,
    floor: &str,
) -> PyResult<String> {
    let floor = SslMode::parse(floor).ok_or_else(|| {
        config(format!(
            "ssl_mode must be one of {}",
            SslMode::NAMES.join(", ")
        ))
    })?;
    let options = mysql_options_of(mysql_options)?
        .at_least(floor)
        .map_err(read_error)?;
    Ok(options
        .ssl_mode
        .map_or(floor.name(), SslMode::name)
        .to_owned())
}

/// `mysql_options` (a mapping) as named options, each named `mysql_options <key>` in
/// errors.
fn mysql_pairs(value: &Bound<'_, PyAny>) -> PyResult<Vec<(String, OptionValue)>> {
    let given = PyDict::new(value.py());
    given.update(
        value
            .cast::<PyMapping>()
            .map_err(|_| config("mysql_options must be a mapping"))?,
    )?;
    args::options("mysql_options ", &given)
}

/// `mysql_options` (a mapping, or `None`) as doris-read maps PyMySQL's keys.
fn mysql_options_of(mysql_options: Option<Bound<'_, PyAny>>) -> PyResult<MySqlOptions> {
    let pairs = match args::given(mysql_options) {
        None => Vec::new(),
        Some(value) => mysql_pairs(&value)?,
    };
    MySqlOptions::parse(pairs).map_err(read_error)
}
