//! A read's transport settings (`_native.ReadOptions`), checked once, here, when
//! `read_doris` makes its source: the transport, the batch bounds, the MySQL and Flight
//! option mappings and the Flight location settings, every one as Python passed it.

use std::collections::BTreeMap;

use doris_read::{BatchLimits, FlightSqlEndpoint, SslMode};
use pyo3::prelude::*;
use pyo3::types::{PyMapping, PyString};

use crate::args;
use crate::errors::{ErrorClass, raise, read_error};

/// Connection settings `mysql_options` must not set, each with what says it instead (a
/// `read_doris` argument, or the connector itself).
const MYSQL_RESERVED: &[(&str, &str)] = &[
    ("autocommit", "the connector reads in autocommit mode"),
    ("binary_prefix", "the connector decodes text rows itself"),
    ("connect_timeout", "use connect_timeout_seconds"),
    ("conv", "the connector decodes text rows itself"),
    ("cursorclass", "the connector decodes text rows itself"),
    ("database", "use database"),
    ("db", "use database"),
    ("defer_connect", "the connector connects when a task runs"),
    ("host", "use host"),
    ("password", "use password"),
    ("passwd", "use password"),
    ("port", "use mysql_port"),
    ("read_default_file", "pass the settings as arguments"),
    ("read_default_group", "pass the settings as arguments"),
    ("read_timeout", "use query_timeout_seconds"),
    (
        "unix_socket",
        "Doris is reached over TCP: use host and mysql_port",
    ),
    ("use_unicode", "text is always UTF-8"),
    ("user", "use username"),
    ("write_timeout", "use query_timeout_seconds"),
];
/// The `flight_options` the native Flight transport knows.
const FLIGHT_OPTIONS: &[&str] = &["max_parallel_endpoints"];

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
    /// Flight endpoints fetched at once (`None`: the crates' default).
    flight_max_parallel: Option<usize>,
    /// `host:port` → `host:port` for BE locations the client cannot reach, sorted.
    flight_endpoint_rewrite: Vec<(String, String)>,
    /// Flight locations allowed besides the BEs the FE reports.
    flight_allowed_locations: Vec<String>,
}

#[pymethods]
impl ReadOptions {
    /// Checks every setting; a bad one is a `ConfigurationError` naming it and the rule.
    #[new]
    #[pyo3(signature = (
        *,
        transport,
        batch_rows,
        batch_bytes,
        queries_per_task = None,
        mysql_options = None,
        flight_options = None,
        flight_endpoint_rewrite = None,
        flight_allowed_locations = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        transport: Bound<'_, PyAny>,
        batch_rows: Bound<'_, PyAny>,
        batch_bytes: Bound<'_, PyAny>,
        queries_per_task: Option<Bound<'_, PyAny>>,
        mysql_options: Option<Bound<'_, PyAny>>,
        flight_options: Option<Bound<'_, PyAny>>,
        flight_endpoint_rewrite: Option<Bound<'_, PyAny>>,
        flight_allowed_locations: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let transport =
            args::choice("transport", &transport, &doris_read::TransportKind::NAMES)?.to_owned();
        // The bounds are doris-read's (`BatchLimits`).
        let limits = BatchLimits::new(
            args::int_in("batch_rows", &batch_rows, 1, BatchLimits::MAX_ROWS as i64)? as usize,
            args::int_in(
                "batch_bytes",
                &batch_bytes,
                1,
                BatchLimits::MAX_BYTES as i64,
            )? as usize,
        )
        .map_err(read_error)?;
        let (batch_rows, batch_bytes) = (limits.rows, limits.bytes as u64);
        let queries_per_task = args::given(queries_per_task)
            .map(|q| args::int_in("queries_per_task", &q, 1, args::MAX_TASKS))
            .transpose()?
            .map(|q| q as usize);
        let mut mysql = mapping("mysql_options", args::given(mysql_options))?;
        let reserved: Vec<String> = MYSQL_RESERVED
            .iter()
            .filter(|(k, _)| mysql.contains_key(*k))
            .map(|(k, instead)| format!("{k} ({instead})"))
            .collect();
        if !reserved.is_empty() {
            return Err(config(format!(
                "mysql_options must not set {}",
                reserved.join(", ")
            )));
        }
        if mysql.contains_key("init_command") {
            return Err(config(
                "mysql_options init_command is refused: statements run on every connection are \
                 not pushed down safely (use unsafe_where_sql for a trusted filter)",
            ));
        }
        if let Some(charset) = mysql.remove("charset")
            && !matches!(text(&charset).as_deref(), Some("utf8mb4" | "utf8"))
        {
            return Err(config("mysql_options charset is fixed to utf8mb4"));
        }
        let mysql_ssl_mode = match mysql.remove("ssl_mode") {
            None => None,
            Some(mode) => Some(
                text(&mode)
                    .filter(|m| SslMode::parse(m).is_some())
                    .map(|m| m.to_ascii_lowercase())
                    .ok_or_else(|| {
                        config(format!(
                            "ssl_mode must be one of {}",
                            SslMode::NAMES.join(", ")
                        ))
                    })?,
            ),
        };
        let mysql_ssl_ca =
            match mysql.remove("ssl_ca") {
                None => None,
                Some(path) if path.is_none() => None,
                Some(path) => Some(text(&path).filter(|p| !p.is_empty()).ok_or_else(|| {
                    config("mysql_options ssl_ca must be the path of a PEM file")
                })?),
            };
        if !mysql.is_empty() {
            let names: Vec<&str> = mysql.keys().map(String::as_str).collect();
            return Err(config(format!(
                "mysql_options {} are not supported by the native MySQL transport \
                 (supported: ssl_mode, ssl_ca, charset)",
                names.join(", ")
            )));
        }
        let flight = strings("flight_options", args::given(flight_options))?;
        let unknown: Vec<&str> = flight
            .keys()
            .map(String::as_str)
            .filter(|k| !FLIGHT_OPTIONS.contains(k))
            .collect();
        if !unknown.is_empty() {
            return Err(config(format!(
                "flight_options {} are not supported (supported: {})",
                unknown.join(", "),
                FLIGHT_OPTIONS.join(", ")
            )));
        }
        let most = FlightSqlEndpoint::MOST_PARALLEL;
        let flight_max_parallel = match flight.get("max_parallel_endpoints") {
            None => None,
            Some(n) => Some(
                Some(n)
                    .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|n| (1..=most).contains(n))
                    .ok_or_else(|| {
                        config(format!(
                            "flight_options max_parallel_endpoints must be an integer from 1 to {most}"
                        ))
                    })?,
            ),
        };
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
            mysql_ssl_mode,
            mysql_ssl_ca,
            flight_max_parallel,
            flight_endpoint_rewrite,
            flight_allowed_locations,
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "ReadOptions(transport={:?}, batch_rows={}, batch_bytes={})",
            self.transport, self.batch_rows, self.batch_bytes
        )
    }
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
