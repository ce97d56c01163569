//! `DorisConnection`: where a Doris FE is and who connects, the one connection object every
//! entry point of `daft_doris` takes (reads, writes, the catalog, streaming jobs,
//! `diagnose`), declared here once.
//!
//! It converts Python's arguments into a [`doris_connection::ConnectionSettings`] (where the
//! defaults and the timeout rules live) plus the transport-specific settings, and builds
//! each crate's endpoint from them, as a Rust service builds them from the same settings.
//! The password is kept as Python gave it (a string or a `daft_doris.secrets.SecretRef`)
//! and resolved in the process that connects; a pickle carries the fields as given (the
//! CA certificates as their text, so workers need no file) and refuses a plain password
//! (`daft_doris.secrets`). `repr` shows the host, ports and user only.

use std::collections::HashMap;
use std::ops::Deref;
use std::time::Duration;

use doris_connection::{
    AddressAllowlist, ClientIdentity, ConnectionSettings, Credentials, HostPort, SslMode,
};
use doris_plan::PlanEndpoint;
use doris_read::options::FlightOptions;
use doris_read::{FlightSqlEndpoint, MySqlEndpoint};
use doris_streamload::{ClientConfig, RedirectPolicy};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::args;
use crate::errors::{ErrorClass, load_error, raise, read_error};

/// ADBC's client key as PEM text in `flight_options`: a secret that must not travel.
const MTLS_PRIVATE_KEY: &str = "adbc.flight.sql.client_option.mtls_private_key";

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
    /// The fields as the signature names them, checked, with the defaults filled in (lists
    /// as tuples); the password is kept apart.
    fields: Py<PyDict>,
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
    #[new]
    #[pyo3(
        signature = (
            *,
            host,
            username = None,
            password = None,
            http_port = None,
            mysql_port = None,
            http_secure = None,
            request_timeout_seconds = None,
            redirect_hosts = None,
            redirect_ports = None,
            trust_reported_backends = None,
            redirect_policy = None,
            verify_tls = None,
            tls_ca_file = None,
            mysql_ssl_mode = None,
            tls_client_cert_file = None,
            tls_client_key_file = None,
            **restored,
        ),
        text_signature = "(*, host, username='root', password='', http_port=8030, mysql_port=9030, http_secure=False, request_timeout_seconds=300.0, redirect_hosts=(), redirect_ports=(), trust_reported_backends=None, redirect_policy='', verify_tls=True, tls_ca_file=None, mysql_ssl_mode='preferred', tls_client_cert_file=None, tls_client_key_file=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        host: Bound<'_, PyAny>,
        username: Option<Bound<'_, PyAny>>,
        password: Option<Bound<'_, PyAny>>,
        http_port: Option<Bound<'_, PyAny>>,
        mysql_port: Option<Bound<'_, PyAny>>,
        http_secure: Option<Bound<'_, PyAny>>,
        request_timeout_seconds: Option<Bound<'_, PyAny>>,
        redirect_hosts: Option<Bound<'_, PyAny>>,
        redirect_ports: Option<Bound<'_, PyAny>>,
        trust_reported_backends: Option<Bound<'_, PyAny>>,
        redirect_policy: Option<Bound<'_, PyAny>>,
        verify_tls: Option<Bound<'_, PyAny>>,
        tls_ca_file: Option<Bound<'_, PyAny>>,
        mysql_ssl_mode: Option<Bound<'_, PyAny>>,
        tls_client_cert_file: Option<Bound<'_, PyAny>>,
        tls_client_key_file: Option<Bound<'_, PyAny>>,
        restored: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        // A pickle's own keywords: the CA text read where the connection was first made,
        // and a read's links.
        let (mut ca_pem, mut read_links) = (None, PyDict::new(py));
        if let Some(restored) = restored {
            for (key, value) in restored.iter() {
                match key.extract::<String>()?.as_str() {
                    "_ca_pem" => ca_pem = value.extract::<Option<String>>()?,
                    "_read_links" => read_links = value.cast_into::<PyDict>()?,
                    other => {
                        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                            "DorisConnection() got an unexpected keyword argument '{other}'"
                        )));
                    }
                }
            }
        }
        let password = match args::given(password) {
            Some(password) => secrets(py)?
                .call_method1("check_secret", (password,))?
                .unbind(),
            None => PyString::new(py, "").into_any().unbind(),
        };
        let fields = PyDict::new(py);
        fields.set_item("host", args::host(&host)?)?;
        let username = match args::given(username) {
            Some(user) => user
                .extract::<String>()
                .ok()
                .filter(|u| !u.is_empty())
                .ok_or_else(|| config("username must be a non-empty string"))?,
            None => ConnectionSettings::DEFAULT_USER.to_owned(),
        };
        fields.set_item("username", username)?;
        for (name, value, default) in [
            (
                "http_port",
                http_port,
                ConnectionSettings::DEFAULT_HTTP_PORT,
            ),
            (
                "mysql_port",
                mysql_port,
                ConnectionSettings::DEFAULT_MYSQL_PORT,
            ),
        ] {
            let port = match args::given(value) {
                Some(port) => args::port(name, &port)?,
                None => default,
            };
            fields.set_item(name, port)?;
        }
        for (name, value, default) in [
            ("http_secure", http_secure, false),
            ("verify_tls", verify_tls, true),
        ] {
            let flag = match args::given(value) {
                Some(flag) => args::flag(name, &flag)?,
                None => default,
            };
            fields.set_item(name, flag)?;
        }
        let timeout = match args::given(request_timeout_seconds) {
            Some(t) => args::seconds("request_timeout_seconds", &t)?,
            None => ConnectionSettings::DEFAULT_QUERY_TIMEOUT,
        };
        fields.set_item("request_timeout_seconds", timeout.as_secs_f64())?;
        let hosts = match args::given(redirect_hosts) {
            Some(h) => args::items("redirect_hosts", &h)?
                .iter()
                .map(args::host)
                .collect::<PyResult<Vec<_>>>()?,
            None => Vec::new(),
        };
        fields.set_item("redirect_hosts", PyTuple::new(py, hosts)?)?;
        let ports = match args::given(redirect_ports) {
            Some(p) => args::items("redirect_ports", &p)?
                .iter()
                .map(|p| args::port("redirect_ports", p))
                .collect::<PyResult<Vec<_>>>()?,
            None => Vec::new(),
        };
        fields.set_item("redirect_ports", PyTuple::new(py, ports)?)?;
        let trust = args::given(trust_reported_backends)
            .map(|flag| args::flag("trust_reported_backends", &flag))
            .transpose()?;
        fields.set_item("trust_reported_backends", trust)?;
        let policy = match args::given(redirect_policy) {
            Some(policy) => match policy.extract::<String>() {
                Ok(name) => name,
                // Not a name: refused as a wrong name is, with the choices.
                Err(_) => match "".parse::<RedirectPolicy>() {
                    Err(e) => return Err(load_error(&e)),
                    Ok(_) => String::new(),
                },
            },
            None => String::new(),
        };
        fields.set_item("redirect_policy", policy)?;
        let ssl_mode = match args::given(mysql_ssl_mode) {
            Some(mode) => ssl_mode(&mode)?,
            None => SslMode::default(),
        };
        fields.set_item("mysql_ssl_mode", ssl_mode.name())?;
        for (name, value) in [
            ("tls_ca_file", tls_ca_file),
            ("tls_client_cert_file", tls_client_cert_file),
            ("tls_client_key_file", tls_client_key_file),
        ] {
            let path = args::given(value)
                .map(|path| {
                    path.extract::<String>()
                        .map_err(|_| config(format!("{name} must be the path of a PEM file")))
                })
                .transpose()?;
            fields.set_item(name, path)?;
        }
        if ca_pem.is_none()
            && let Some(path) = fields.get_item("tls_ca_file")?.filter(|p| !p.is_none())
        {
            ca_pem = crate::checks::read_ca_file("tls_ca_file", &path)?;
        }
        let built = Connection::build(&fields, ca_pem.clone(), &read_links)?;
        Ok(Self {
            fields: fields.unbind(),
            password,
            ca_pem,
            read_links: read_links.unbind(),
            built,
        })
    }

    /// A field as the signature names it (`host`, `username`, `password`, the ports, …).
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        if name == "password" {
            return Ok(self.password.clone_ref(py));
        }
        match self.fields.bind(py).get_item(name)? {
            Some(value) => Ok(value.unbind()),
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
                return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "not a read link: '{name}'"
                )));
            }
            if !value.is_none() {
                merged.set_item(name, value)?;
            }
        }
        let built = Connection::build(self.fields.bind(py), self.ca_pem.clone(), &merged)?;
        Ok(Self {
            fields: self.fields.clone_ref(py),
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
            for pair in options.try_iter()? {
                let (key, _): (String, Bound<'_, PyAny>) = pair?.extract()?;
                if key == MTLS_PRIVATE_KEY {
                    return Err(config(format!(
                        "flight_options {MTLS_PRIVATE_KEY} is a private key as text, which \
                         pickling (as Daft's Ray runner does with every task) would send with \
                         the tasks: give the client certificate and key as files, \
                         tls_client_cert_file and tls_client_key_file, read by each process \
                         that connects"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Pickled as its keywords (`check_travels` first).
    fn __getnewargs_ex__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyDict>)> {
        self.check_travels(py)?;
        let kwargs = self.fields.bind(py).copy()?;
        kwargs.set_item("password", self.password.bind(py))?;
        kwargs.set_item("_ca_pem", self.ca_pem.as_deref())?;
        kwargs.set_item("_read_links", self.read_links.bind(py).copy()?)?;
        Ok((PyTuple::empty(py), kwargs))
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(other) = other.cast::<Self>() else {
            return Ok(false);
        };
        let other = other.get();
        Ok(self.fields.bind(py).eq(other.fields.bind(py))?
            && self.read_links.bind(py).eq(other.read_links.bind(py))?)
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        let items = self.fields.bind(py).items();
        items.sort()?;
        PyTuple::new(py, items)?.hash()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let fields = self.fields.bind(py);
        let field = |name: &str| -> PyResult<String> {
            Ok(fields
                .get_item(name)?
                .map(|v| v.repr().map(|r| r.to_string()))
                .transpose()?
                .unwrap_or_default())
        };
        Ok(format!(
            "DorisConnection(host={}, username={}, http_port={}, mysql_port={}, http_secure={})",
            field("host")?,
            field("username")?,
            field("http_port")?,
            field("mysql_port")?,
            field("http_secure")?,
        ))
    }
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
    /// The settings of `fields` (checked by `DorisConnection::new`) with a read's `links`
    /// over them; the client certificates are read from their files now.
    fn build(
        fields: &Bound<'_, PyDict>,
        ca_pem: Option<String>,
        links: &Bound<'_, PyDict>,
    ) -> PyResult<Self> {
        let field = |name: &str| -> PyResult<Bound<'_, PyAny>> {
            fields
                .get_item(name)?
                .ok_or_else(|| config(format!("{name} is missing")))
        };
        let link = |name: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
            Ok(args::given(links.get_item(name)?))
        };
        let user: String = field("username")?.extract()?;
        let mut settings = ConnectionSettings::new(
            field("host")?.extract::<String>()?,
            Credentials::new(user, ""),
        )
        .map_err(|e| config(e.to_string()))?;
        settings.http_port = field("http_port")?.extract()?;
        settings.mysql_port = field("mysql_port")?.extract()?;
        settings.http_secure = field("http_secure")?.extract()?;
        if !field("verify_tls")?.extract::<bool>()? {
            return Err(config(
                "verify_tls=False is not supported: TLS is always verified",
            ));
        }
        settings = settings.with_request_timeout(Duration::from_secs_f64(
            field("request_timeout_seconds")?.extract()?,
        ));
        settings.mysql_ssl_mode = ssl_mode(&field("mysql_ssl_mode")?)?;
        settings.ca_pem = ca_pem.map(String::into_bytes);
        settings.client_identity = identity_files(
            (
                "tls_client_cert_file",
                args::given(Some(field("tls_client_cert_file")?)),
            ),
            (
                "tls_client_key_file",
                args::given(Some(field("tls_client_key_file")?)),
            ),
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
        let mysql_client_identity = identity_files(
            ("mysql_options ssl_cert", link("mysql_client_cert_file")?),
            ("mysql_options ssl_key", link("mysql_client_key_file")?),
        )?;
        settings.http_url().map_err(|e| config(e.to_string()))?;
        let hosts: Vec<String> = field("redirect_hosts")?.extract()?;
        let ports: Vec<u16> = field("redirect_ports")?.extract()?;
        let trust: Option<bool> = field("trust_reported_backends")?.extract()?;
        let redirects = AddressAllowlist::redirects(&settings.host, &hosts, &ports, trust);
        let policy: String = field("redirect_policy")?.extract()?;
        // The empty string leaves the header out.
        let redirect_policy = if policy.is_empty() {
            None
        } else {
            Some(
                policy
                    .parse::<RedirectPolicy>()
                    .map_err(|e| load_error(&e))?,
            )
        };
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
            redirects,
            redirect_policy,
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
    (cert_name, cert): (&str, Option<Bound<'_, PyAny>>),
    (key_name, key): (&str, Option<Bound<'_, PyAny>>),
) -> PyResult<Option<ClientIdentity>> {
    let path = |name: &str, value: Option<Bound<'_, PyAny>>| -> PyResult<Option<String>> {
        value
            .map(|v| {
                v.extract::<String>()
                    .map_err(|_| config(format!("{name} must be the path of a PEM file")))
            })
            .transpose()
    };
    let (cert, key) = (path(cert_name, cert)?, path(key_name, key)?);
    doris_read::options::read_optional_client_identity(
        (cert_name, cert.as_deref()),
        (key_name, key.as_deref()),
    )
    .map_err(|e| match e {
        doris_read::ReadError::Config(message) => config(message),
        other => read_error(other),
    })
}
