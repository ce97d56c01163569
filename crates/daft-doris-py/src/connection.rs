//! `DorisConnection`: where a Doris FE is and who connects, the one connection object every
//! entry point of `daft_doris` takes (reads, writes, the catalog, streaming jobs,
//! `diagnose`).
//!
//! Its keywords are [`doris_connection::ConnectionOptions`]'s names, converted to
//! [`doris_connection::OptionValue`]s (pythonize) and checked by that type's rules, which
//! hold the names, the defaults and the messages; a Rust service reading the same names
//! from its configuration builds the same connection. From the options (plus a read's own
//! links) it builds each crate's endpoint with `from_settings`.
//! The password is kept as Python gave it (a string or a `daft_doris.secrets.SecretRef`)
//! and resolved in the process that connects; a pickle carries the fields as given (the
//! CA certificates as their text, so workers need no file) and refuses a plain password
//! (`daft_doris.secrets`). `repr` shows the host, ports and user only.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::time::Duration;

use doris_connection::{
    AddressAllowlist, ClientIdentity, ConnectionOptions, ConnectionSettings,
    ConnectionSettingsError, Credentials, HostPort, OptionValue, SslMode,
};
use doris_plan::PlanEndpoint;
use doris_read::options::FlightOptions;
use doris_read::{FlightSqlEndpoint, MySqlEndpoint};
use doris_streamload::{ClientConfig, RedirectPolicy};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::args;
use crate::errors::{ErrorClass, raise, read_error};

/// The settings a read adds to its connection (`_with_read_links`), each applied over the
/// connection's own: the read's timeouts, its Flight link and PyMySQL's `mysql_options`.
const READ_LINKS: [&str; 13] = [
    "connect_timeout_seconds",
    "query_timeout_seconds",
    "flight_port",
    "flight_secure",
    "flight_endpoint_rewrite",
    "flight_options",
    "flight_allowed_locations",
    "mysql_ca_pem",
    "mysql_ssl_mode",
    "mysql_server_public_key",
    "mysql_max_packet_bytes",
    "mysql_client_cert_file",
    "mysql_client_key_file",
];

fn config(message: impl Into<String>) -> PyErr {
    raise(ErrorClass::ConfigurationError, message)
}

/// Where a Doris FE is and who connects: its HTTP (Stream Load, `_query_plan`) and MySQL
/// ports, user, password and TLS settings. Every entry point takes it:
/// `write_doris(connection=…)`, `DorisCatalog`, streaming jobs, `diagnose`, and
/// `read_doris(connection=…)` beside 1.1's flat keywords.
///
/// Stream Load follows the FE's redirect to a BE only where the connection allows, by the
/// reference connector 1.1's rule: the FE's host and `redirect_hosts`, each on one of
/// `redirect_ports`. The BEs the FE itself reports at `/api/backends` are trusted too when
/// `trust_reported_backends=True`, or when it is left `None` and neither list is given
/// (where 1.1 refused every redirect); `False` never trusts them. `http_secure=True`
/// speaks HTTPS, always verified (`verify_tls=False` is refused); `tls_ca_file` names a PEM
/// file of CAs trusted besides the web PKI roots (on the MySQL link too), read when the
/// connection is made; `mysql_ssl_mode` is the MySQL link's TLS: `preferred` (default, as
/// MySQL clients: encrypted when offered, not verified), `verify_ca`/`verify_identity`
/// verify the certificate. `tls_client_cert_file` and `tls_client_key_file` (both or
/// neither; PEM, the key unencrypted) are the client certificate every TLS link presents
/// when the server asks for one (mutual TLS); they are read by each process that connects,
/// so they must be readable where tasks run.
///
/// `password` is a string, which stays in this process (pickling refuses it), or a
/// `SecretRef`, resolved in each process that connects. Every field is checked when the
/// connection is made, before any I/O: a bad one is a `ConfigurationError` naming it. The
/// connection compares and hashes by its fields, the password left out.
#[pyclass(frozen, module = "daft_doris.connection", name = "DorisConnection")]
pub(crate) struct DorisConnection {
    /// The fields, checked, with the defaults filled in; the password is kept apart.
    options: ConnectionOptions,
    /// A string or a `SecretRef`.
    password: Py<PyAny>,
    /// The text of `tls_ca_file`, read when the connection was first made.
    ca_pem: Option<String>,
    /// The read's own settings (`READ_LINKS`), empty outside a read.
    read_links: Py<PyDict>,
    /// The endpoints' settings.
    built: Connection,
}

impl Deref for DorisConnection {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        &self.built
    }
}

#[pymethods]
impl DorisConnection {
    /// The keywords are `doris_connection::ConnectionOptions`'s names, checked by its rules.
    #[new]
    #[pyo3(
        signature = (**keywords),
        text_signature = "(*, host, username='root', password='', http_port=8030, mysql_port=9030, http_secure=False, request_timeout_seconds=300.0, redirect_hosts=(), redirect_ports=(), trust_reported_backends=None, redirect_policy='', verify_tls=True, tls_ca_file=None, mysql_ssl_mode='preferred', tls_client_cert_file=None, tls_client_key_file=None)"
    )]
    fn new(py: Python<'_>, keywords: Option<Bound<'_, PyDict>>) -> PyResult<Self> {
        let keywords = match keywords {
            Some(given) => given.copy()?,
            None => PyDict::new(py),
        };
        let take = |name: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
            let value = keywords.get_item(name)?;
            if value.is_some() {
                keywords.del_item(name)?;
            }
            Ok(args::given(value))
        };
        let password = match take("password")? {
            Some(password) => secrets(py)?
                .call_method1("check_secret", (password,))?
                .unbind(),
            None => PyString::new(py, "").into_any().unbind(),
        };
        // A pickle's own keywords: the CA text read where the connection was first made,
        // and a read's links.
        let mut ca_pem = take("_ca_pem")?.map(|pem| pem.extract()).transpose()?;
        let read_links = match take("_read_links")? {
            Some(links) => links.cast_into::<PyDict>()?,
            None => PyDict::new(py),
        };
        let given = args::options("", &keywords)?;
        let options = ConnectionOptions::from_options(given).map_err(|e| match e {
            ConnectionSettingsError::UnknownOption(name) => PyTypeError::new_err(format!(
                "DorisConnection() got an unexpected keyword argument '{name}'"
            )),
            ConnectionSettingsError::MissingOption(name) => PyTypeError::new_err(format!(
                "DorisConnection() missing required keyword argument: '{name}'"
            )),
            other => config(other.to_string()),
        })?;
        if ca_pem.is_none()
            && let Some(path) = &options.tls_ca_file
        {
            ca_pem = crate::checks::read_ca_file("tls_ca_file", &PyString::new(py, path))?;
        }
        let built = Connection::build(&options, ca_pem.clone(), &read_links)?;
        Ok(Self {
            options,
            password,
            ca_pem,
            read_links: read_links.unbind(),
            built,
        })
    }

    /// A field as the signature names it (`host`, `username`, `password`, the ports, …);
    /// lists read back as tuples.
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        if name == "password" {
            return Ok(self.password.clone_ref(py));
        }
        match self.options.options().into_iter().find(|(n, _)| *n == name) {
            Some((_, value)) => Ok(to_python(py, value.as_ref())?.unbind()),
            None => Err(pyo3::exceptions::PyAttributeError::new_err(format!(
                "'DorisConnection' object has no attribute '{name}'"
            ))),
        }
    }

    /// The wait to connect, in seconds (a read made from this connection takes it unless it
    /// gives its own).
    #[getter]
    fn connect_timeout_seconds(&self) -> f64 {
        self.settings.connect_timeout.as_secs_f64()
    }

    /// The wait for an answer, in seconds.
    #[getter]
    fn query_timeout_seconds(&self) -> f64 {
        self.settings.query_timeout.as_secs_f64()
    }

    /// The password, resolved in this process (`daft_doris.secrets.resolve_secret`).
    pub(crate) fn password_value(&self, py: Python<'_>) -> PyResult<String> {
        secrets(py)?
            .call_method1("resolve_secret", (self.password.bind(py),))?
            .extract()
    }

    /// This connection with a read's own settings over its own (the timeouts, the Flight
    /// link, PyMySQL's `mysql_options`); `None` keeps the connection's.
    #[pyo3(signature = (**links))]
    fn _with_read_links(&self, py: Python<'_>, links: Option<Bound<'_, PyDict>>) -> PyResult<Self> {
        let merged = self.read_links.bind(py).copy()?;
        for (key, value) in links.iter().flat_map(|l| l.iter()) {
            let name: String = key.extract()?;
            if !READ_LINKS.contains(&name.as_str()) {
                return Err(PyTypeError::new_err(format!("not a read link: '{name}'")));
            }
            if !value.is_none() {
                merged.set_item(name, value)?;
            }
        }
        let built = Connection::build(&self.options, self.ca_pem.clone(), &merged)?;
        Ok(Self {
            options: self.options.clone(),
            password: self.password.clone_ref(py),
            ca_pem: self.ca_pem.clone(),
            read_links: merged.unbind(),
            built,
        })
    }

    /// Refuses when pickling would carry a secret the user did not choose to send: a plain
    /// password, or a private key as text in `flight_options` (Daft's Ray runner pickles
    /// every task; `daft_doris.secrets`).
    fn check_travels(&self, py: Python<'_>) -> PyResult<()> {
        secrets(py)?.call_method1("check_picklable", (self.password.bind(py),))?;
        if let Some(options) = self.read_links.bind(py).get_item("flight_options")? {
            let pairs: Vec<(String, String)> = options.extract()?;
            FlightOptions::check_travels(pairs.iter().map(|(key, _)| key.as_str()))
                .map_err(connection_rule)?;
        }
        Ok(())
    }

    /// Pickled as its keywords (`check_travels` first).
    fn __getnewargs_ex__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyDict>)> {
        self.check_travels(py)?;
        let keywords = PyDict::new(py);
        for (name, value) in self.options.options() {
            keywords.set_item(name, to_python(py, value.as_ref())?)?;
        }
        keywords.set_item("password", self.password.bind(py))?;
        keywords.set_item("_ca_pem", self.ca_pem.as_deref())?;
        keywords.set_item("_read_links", self.read_links.bind(py).copy()?)?;
        Ok((PyTuple::empty(py), keywords))
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(other) = other.cast::<Self>() else {
            return Ok(false);
        };
        let other = other.get();
        Ok(self.options == other.options
            && self.read_links.bind(py).eq(other.read_links.bind(py))?)
    }

    fn __hash__(&self) -> u64 {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.options.hash(&mut hasher);
        hasher.finish()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let o = &self.options;
        let text = |t: &str| PyString::new(py, t).repr().map(|r| r.to_string());
        Ok(format!(
            "DorisConnection(host={}, username={}, http_port={}, mysql_port={}, http_secure={})",
            text(&o.host)?,
            text(&o.username)?,
            o.http_port,
            o.mysql_port,
            if o.http_secure { "True" } else { "False" },
        ))
    }
}

/// An option's value as Python reads it (a list as a tuple: the connection is immutable).
fn to_python<'py>(py: Python<'py>, value: Option<&OptionValue>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        None | Some(OptionValue::Null) => py.None().into_bound(py),
        Some(OptionValue::Map(map)) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key, to_python(py, Some(item))?)?;
            }
            dict.into_any()
        }
        Some(OptionValue::Bool(b)) => b.into_pyobject(py)?.to_owned().into_any(),
        Some(OptionValue::Int(n)) => n.into_pyobject(py)?.into_any(),
        Some(OptionValue::Float(f)) => f.into_pyobject(py)?.into_any(),
        Some(OptionValue::Text(t)) => PyString::new(py, t).into_any(),
        Some(OptionValue::List(items)) => PyTuple::new(
            py,
            items
                .iter()
                .map(|item| to_python(py, Some(item)))
                .collect::<PyResult<Vec<_>>>()?,
        )?
        .into_any(),
    })
}

/// `daft_doris.secrets`, where a password's forms and their rules live.
fn secrets(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import("daft_doris.secrets")
}

/// A MySQL TLS mode by name.
fn ssl_mode(mode: &Bound<'_, PyAny>) -> PyResult<SslMode> {
    mode.extract::<String>()
        .ok()
        .and_then(|m| SslMode::parse(&m))
        .ok_or_else(|| {
            config(format!(
                "ssl_mode must be one of {}",
                SslMode::NAMES.join(", ")
            ))
        })
}

/// The endpoints' settings of a `DorisConnection`.
#[derive(Debug, Clone)]
pub(crate) struct Connection {
    /// Host, ports, TLS, timeouts and the user (the password is empty here).
    settings: ConnectionSettings,
    /// `host:port` → `host:port` for BE locations the client cannot reach.
    flight_endpoint_rewrite: HashMap<String, String>,
    /// `flight_options`, mapped by doris-read (parallelism, message size, root CAs).
    flight_options: FlightOptions,
    /// Flight locations allowed besides the BEs the FE reports.
    flight_allowed_locations: Vec<HostPort>,
    /// Where Stream Load may follow the FE's redirect (`AddressAllowlist::redirects`).
    redirects: AddressAllowlist,
    /// Which redirect targets are followed (`None`: the client's default).
    redirect_policy: Option<RedirectPolicy>,
    /// The MySQL link's own client certificate (`mysql_options` `ssl_cert`/`ssl_key`),
    /// presented there instead of the connection's.
    mysql_client_identity: Option<ClientIdentity>,
}

impl Connection {
    /// The settings of `options` with a read's `links` over them; the client certificates
    /// are read from their files now.
    fn build(
        options: &ConnectionOptions,
        ca_pem: Option<String>,
        links: &Bound<'_, PyDict>,
    ) -> PyResult<Self> {
        let link = |name: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
            Ok(args::given(links.get_item(name)?))
        };
        let mut settings = options.settings("");
        settings.ca_pem = ca_pem.map(String::into_bytes);
        settings.client_identity = identity_files(
            ("tls_client_cert_file", options.tls_client_cert_file.clone()),
            ("tls_client_key_file", options.tls_client_key_file.clone()),
        )?;
        // A read's links, each over the connection's own.
        if let Some(t) = link("connect_timeout_seconds")? {
            settings.connect_timeout = args::seconds("connect_timeout_seconds", &t)?;
        }
        if let Some(t) = link("query_timeout_seconds")? {
            settings.query_timeout = args::seconds("query_timeout_seconds", &t)?;
        }
        if let Some(port) = link("flight_port")? {
            settings.flight_port = args::port("flight_port", &port)?;
        }
        if let Some(flag) = link("flight_secure")? {
            settings.flight_secure = args::flag("flight_secure", &flag)?;
        }
        if let Some(mode) = link("mysql_ssl_mode")? {
            settings.mysql_ssl_mode = ssl_mode(&mode)?;
        }
        settings.mysql_ca_pem = link("mysql_ca_pem")?
            .map(|pem| pem.extract::<String>())
            .transpose()?
            .map(String::into_bytes);
        settings.mysql_server_public_key_pem = link("mysql_server_public_key")?
            .map(|pem| pem.extract::<String>())
            .transpose()?
            .map(String::into_bytes);
        if let Some(bytes) = link("mysql_max_packet_bytes")? {
            settings.mysql_max_packet_bytes = bytes.extract()?;
        }
        let path = |name: &str| -> PyResult<Option<String>> {
            link(name)?
                .map(|v| {
                    v.extract::<String>()
                        .map_err(|_| config(format!("{name} must be the path of a PEM file")))
                })
                .transpose()
        };
        let mysql_client_identity = identity_files(
            ("mysql_options ssl_cert", path("mysql_client_cert_file")?),
            ("mysql_options ssl_key", path("mysql_client_key_file")?),
        )?;
        settings.http_url().map_err(|e| config(e.to_string()))?;
        let flight_options = link("flight_options")?
            .map(|o| o.extract::<Vec<(String, String)>>())
            .transpose()?
            .unwrap_or_default();
        let flight_options = FlightOptions::parse(flight_options).map_err(read_error)?;
        let flight_endpoint_rewrite = link("flight_endpoint_rewrite")?
            .map(|r| r.extract::<HashMap<String, String>>())
            .transpose()?
            .unwrap_or_default();
        Ok(Self {
            settings,
            flight_endpoint_rewrite,
            flight_options,
            flight_allowed_locations: args::host_ports(
                "flight_allowed_locations",
                link("flight_allowed_locations")?,
            )?,
            redirects: options.redirect_allowlist(),
            redirect_policy: options.redirect_policy,
            mysql_client_identity,
        })
    }

    /// The user.
    pub(crate) fn user(&self) -> &str {
        self.settings.credentials.user()
    }

    /// The settings with `password`.
    pub(crate) fn settings(&self, password: &str) -> ConnectionSettings {
        let mut settings = self.settings.clone();
        settings.credentials = Credentials::new(self.user(), password);
        settings
    }

    /// The MySQL endpoint of the FE.
    pub(crate) fn mysql(&self, password: &str, database: Option<&str>) -> MySqlEndpoint {
        let mut endpoint = MySqlEndpoint::from_settings(&self.settings(password));
        endpoint.database = database.map(str::to_owned);
        if let Some(identity) = &self.mysql_client_identity {
            endpoint.client_identity = Some(identity.clone());
        }
        endpoint
    }

    /// The FE's HTTP face (`_query_plan`, `/api/backends`).
    pub(crate) fn fe_http(&self, password: &str) -> PyResult<PlanEndpoint> {
        PlanEndpoint::from_settings(&self.settings(password)).map_err(|e| config(e.to_string()))
    }

    /// The FE's Flight SQL endpoint; its locations are checked against the BEs the FE's
    /// HTTP face reports.
    pub(crate) fn flight(&self, password: &str) -> PyResult<FlightSqlEndpoint> {
        let mut endpoint = FlightSqlEndpoint::from_settings(&self.settings(password))
            .map_err(|e| config(e.to_string()))?;
        endpoint.rewrite = self.flight_endpoint_rewrite.clone();
        endpoint
            .allowlist
            .targets
            .extend(self.flight_allowed_locations.iter().cloned());
        self.flight_options.apply(&mut endpoint);
        Ok(endpoint)
    }

    /// A Stream Load client configuration for the FE, with the redirect settings.
    pub(crate) fn stream_load(&self, password: &str) -> PyResult<ClientConfig> {
        let mut config = ClientConfig::from_settings(&self.settings(password))
            .map_err(|e| raise(ErrorClass::ConfigurationError, e.to_string()))?;
        config.allowlist = self.redirects.clone();
        config.redirect_policy = self.redirect_policy;
        Ok(config)
    }

    /// The longest wait for an answer.
    pub(crate) fn query_timeout(&self) -> Duration {
        self.settings.query_timeout
    }
}

/// The client certificate and key read from their files
/// (`doris_read::options::read_optional_client_identity`: both or neither), each named as
/// the caller gave it.
fn identity_files(
    (cert_name, cert): (&str, Option<String>),
    (key_name, key): (&str, Option<String>),
) -> PyResult<Option<ClientIdentity>> {
    doris_read::options::read_optional_client_identity(
        (cert_name, cert.as_deref()),
        (key_name, key.as_deref()),
    )
    .map_err(connection_rule)
}

/// A doris-read rule the connection broke: its bare message (the connection serves writes
/// too, so not "invalid read configuration").
fn connection_rule(e: doris_read::ReadError) -> PyErr {
    match e {
        doris_read::ReadError::Config(message) => config(message),
        other => read_error(other),
    }
}
