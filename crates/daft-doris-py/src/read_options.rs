//! A read's transport settings (`_native.ReadOptions`), converted and checked once, here,
//! when `read_doris` makes its source: the transport, the batch bounds, the MySQL and
//! Flight options (mapped by `doris_read::options`) and the Flight location settings.

use std::collections::BTreeMap;

use doris_connection::SslMode;
use doris_read::options::{FlightOptions, MySqlOptions, OptionValue, UnreadableColumns};
use doris_read::{BatchLimits, TaskCounts};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyMapping, PyString};

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
    /// Checks every setting; a bad one is a `ConfigurationError` naming it and the rule.
    #[new]
    #[pyo3(signature = (
        *,
        transport,
        batch_rows = None,
        batch_bytes = None,
        queries_per_task = None,
        mysql_options = None,
        flight_options = None,
        flight_endpoint_rewrite = None,
        flight_allowed_locations = None,
        unreadable_columns = None,
        timestamp_units = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        transport: Bound<'_, PyAny>,
        batch_rows: Option<Bound<'_, PyAny>>,
        batch_bytes: Option<Bound<'_, PyAny>>,
        queries_per_task: Option<Bound<'_, PyAny>>,
        mysql_options: Option<Bound<'_, PyAny>>,
        flight_options: Option<Bound<'_, PyAny>>,
        flight_endpoint_rewrite: Option<Bound<'_, PyAny>>,
        flight_allowed_locations: Option<Bound<'_, PyAny>>,
        unreadable_columns: Option<Bound<'_, PyAny>>,
        timestamp_units: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let timestamp_units = match args::given(timestamp_units) {
            Some(v) => {
                doris_read::options::timestamp_units(&v.extract::<String>().unwrap_or_default())
                    .map_err(read_error)?
            }
            None => doris_read::TimestampUnits::default(),
        }
        .name()
        .to_owned();
        let unreadable_columns = match args::given(unreadable_columns) {
            Some(v) => args::named::<UnreadableColumns>(&v).map_err(read_error)?,
            None => UnreadableColumns::default(),
        }
        .name()
        .to_owned();
        let transport = args::named::<doris_read::TransportKind>(&transport)
            .map_err(read_error)?
            .as_str()
            .to_owned();
        // The bounds and their defaults are doris-read's (`BatchLimits`).
        let defaults = BatchLimits::default();
        let batch_rows = match args::given(batch_rows) {
            Some(v) => args::int_in("batch_rows", &v, 1, BatchLimits::MAX_ROWS as i64)? as usize,
            None => defaults.rows,
        };
        let batch_bytes = match args::given(batch_bytes) {
            Some(v) => args::int_in("batch_bytes", &v, 1, BatchLimits::MAX_BYTES as i64)? as usize,
            None => defaults.bytes,
        };
        let limits = BatchLimits::new(batch_rows, batch_bytes).map_err(read_error)?;
        let (batch_rows, batch_bytes) = (limits.rows, limits.bytes as u64);
        let queries_per_task = args::given(queries_per_task)
            .map(|q| args::int_in("queries_per_task", &q, 1, TaskCounts::MOST as i64))
            .transpose()?
            .map(|q| q as usize);
        let mysql = mysql_options_of(mysql_options)?;
        let flight_options: Vec<(String, String)> =
            strings("flight_options", args::given(flight_options))?
                .into_iter()
                .collect();
        FlightOptions::parse(flight_options.clone()).map_err(read_error)?;
        let flight_endpoint_rewrite = strings(
            "flight_endpoint_rewrite",
            args::given(flight_endpoint_rewrite),
        )?
        .into_iter()
        .collect();
        let flight_allowed_locations =
            args::host_ports("flight_allowed_locations", flight_allowed_locations)?
                .iter()
                .map(ToString::to_string)
                .collect();
        Ok(Self {
            transport,
            batch_rows,
            batch_bytes,
            queries_per_task,
            mysql_ssl_mode: mysql.ssl_mode.map(|m| m.name().to_owned()),
            mysql_ssl_ca: mysql.ssl_ca,
            mysql_server_public_key: mysql.server_public_key,
            mysql_ssl_cert: mysql.ssl_cert_and_key.as_ref().map(|(c, _)| c.clone()),
            mysql_ssl_key: mysql.ssl_cert_and_key.map(|(_, k)| k),
            mysql_connect_timeout_seconds: mysql.connect_timeout.map(|d| d.as_secs_f64()),
            mysql_query_timeout_seconds: mysql.query_timeout.map(|d| d.as_secs_f64()),
            mysql_max_packet_bytes: mysql.max_packet_bytes,
            flight_options,
            flight_endpoint_rewrite,
            flight_allowed_locations,
            unreadable_columns,
            timestamp_units,
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "ReadOptions(transport={:?}, batch_rows={}, batch_bytes={})",
            self.transport, self.batch_rows, self.batch_bytes
        )
    }
}

/// One `mysql_options` value as doris-read takes it: `None`, a boolean, an integer, a
/// number, a string (or UTF-8 bytes), or a mapping of those (PyMySQL's `ssl={…}`). Anything else (an
/// `ssl.SSLContext`, say) is refused naming the key, not the value.
fn option_value(key: &str, value: &Bound<'_, PyAny>, depth: usize) -> PyResult<OptionValue> {
    if value.is_none() {
        return Ok(OptionValue::Null);
    }
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(OptionValue::Bool(b.is_true()));
    }
    if value.is_instance_of::<PyInt>() {
        return value
            .extract::<i64>()
            .map(OptionValue::Int)
            .map_err(|_| config(format!("mysql_options {key} is an integer beyond 64 bits")));
    }
    if value.is_instance_of::<PyFloat>() {
        return Ok(OptionValue::Float(value.extract()?));
    }
    if let Some(t) = text(value) {
        return Ok(OptionValue::Text(t));
    }
    // PyMySQL takes `server_public_key` as bytes.
    if let Ok(bytes) = value.cast::<pyo3::types::PyBytes>() {
        return String::from_utf8(bytes.as_bytes().to_vec())
            .map(OptionValue::Text)
            .map_err(|_| config(format!("mysql_options {key} must be UTF-8 text")));
    }
    if depth == 0
        && let Ok(map) = value.cast::<PyDict>()
    {
        let mut out = BTreeMap::new();
        for (k, v) in map.iter() {
            let k = text(&k)
                .ok_or_else(|| config(format!("mysql_options {key} keys must be strings")))?;
            let v = option_value(&format!("{key} {k}"), &v, depth + 1)?;
            out.insert(k, v);
        }
        return Ok(OptionValue::Map(out));
    }
    Err(config(format!(
        "mysql_options {key} must be a string, number, boolean, None or (for ssl) a dict, \
         so that it can travel to the workers"
    )))
}

/// A Python string's text, if `value` is one.
fn text(value: &Bound<'_, PyAny>) -> Option<String> {
    value.cast::<PyString>().ok().map(|s| s.to_string())
}

/// A mapping with non-empty string keys (`None`: empty), its values as given.
fn mapping<'py>(
    name: &str,
    value: Option<Bound<'py, PyAny>>,
) -> PyResult<BTreeMap<String, Bound<'py, PyAny>>> {
    let Some(value) = value else {
        return Ok(BTreeMap::new());
    };
    let map = value
        .cast::<PyMapping>()
        .map_err(|_| config(format!("{name} must be a mapping")))?;
    let mut out = BTreeMap::new();
    for item in map.items()?.iter() {
        let (key, item): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item.extract()?;
        let key = text(&key)
            .filter(|k| !k.is_empty())
            .ok_or_else(|| config(format!("{name} keys must be non-empty strings")))?;
        out.insert(key, item);
    }
    Ok(out)
}

/// A mapping of strings to strings (`None`: empty).
fn strings(name: &str, value: Option<Bound<'_, PyAny>>) -> PyResult<BTreeMap<String, String>> {
    mapping(name, value)?
        .into_iter()
        .map(|(key, item)| {
            text(&item)
                .map(|v| (key.clone(), v))
                .ok_or_else(|| config(format!("{name} value of '{key}' must be a string")))
        })
        .collect()
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

/// `mysql_options` (a mapping, or `None`) as doris-read maps PyMySQL's keys.
fn mysql_options_of(mysql_options: Option<Bound<'_, PyAny>>) -> PyResult<MySqlOptions> {
    let pairs = mapping("mysql_options", args::given(mysql_options))?
        .into_iter()
        .map(|(key, value)| {
            let value = option_value(&key, &value, 0)?;
            Ok((key, value))
        })
        .collect::<PyResult<Vec<_>>>()?;
    MySqlOptions::parse(pairs).map_err(read_error)
}
