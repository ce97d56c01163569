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

use std::hash::{Hash, Hasher};
use std::time::Duration;

use doris_connection::{
    ConnectionOptions, ConnectionSettings, ConnectionSettingsError, OptionValue,
};
use doris_plan::PlanEndpoint;
use doris_read::options::{ConnectionLinks, ReadConnection, ReadOverlay};
use doris_read::{FlightSqlEndpoint, MySqlEndpoint};
use doris_streamload::ClientConfig;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::args;
use crate::errors::{ErrorClass, raise, read_error};

/// A read laid over a connection, as a pickle carries it: the read's options as given
/// (`doris_read::options::ReadOptions`' names), whether the user gave the connection
/// (`ReadConnection::Given`), and the text of PyMySQL's `ssl_ca`, read once where the read
/// was made.
type ReadLink = (Py<PyDict>, bool, Option<String>);

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
    /// The read laid over the connection, if any.
    read_link: Option<ReadLink>,
    /// The endpoints' settings, the password left out.
    links: ConnectionLinks,
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
        // and the read laid over it.
        let mut ca_pem = take("_ca_pem")?.map(|pem| pem.extract()).transpose()?;
        let read_link: Option<ReadLink> = take("_read")?.map(|r| r.extract()).transpose()?;
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
            ca_pem = Some(read_ca_file("tls_ca_file", path)?);
        }
        let read = match &read_link {
            Some((links, given, mysql_ca_pem)) => {
                Some(check_read(links.bind(py), *given, mysql_ca_pem.clone())?)
            }
            None => None,
        };
        let links =
            ConnectionLinks::new(&options, ca_pem.clone(), read).map_err(connection_rule)?;
        Ok(Self {
            options,
            password,
            ca_pem,
            read_link,
            links,
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
        self.links.timeouts().0.as_secs_f64()
    }

    /// The wait for an answer, in seconds.
    #[getter]
    fn query_timeout_seconds(&self) -> f64 {
        self.links.timeouts().1.as_secs_f64()
    }

    /// The password, resolved in this process (`daft_doris.secrets.resolve_secret`).
    pub(crate) fn password_value(&self, py: Python<'_>) -> PyResult<String> {
        secrets(py)?
            .call_method1("resolve_secret", (self.password.bind(py),))?
            .extract()
    }

    /// This connection with a read's options laid over its own
    /// (`doris_read::options::ReadOptions::apply`: the timeouts, the Flight link, PyMySQL's
    /// `mysql_options`); `given` says whether the user gave the connection
    /// (`ReadConnection::Given`) or the read's own keywords made it.
    #[pyo3(signature = (*, given, **options))]
    fn _for_read(
        &self,
        py: Python<'_>,
        given: bool,
        options: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let links = options.unwrap_or_else(|| PyDict::new(py));
        let mut overlay = check_read(&links, given, None)?;
        // PyMySQL's ssl_ca is the MySQL link's alone: HTTP and Flight never trust it.
        overlay.mysql_ca_pem = match &overlay.options.mysql.ssl_ca {
            Some(path) => Some(read_ca_file("mysql_options ssl_ca", path)?),
            None => None,
        };
        let mysql_ca_pem = overlay.mysql_ca_pem.clone();
        let built = ConnectionLinks::new(&self.options, self.ca_pem.clone(), Some(overlay))
            .map_err(connection_rule)?;
        Ok(Self {
            options: self.options.clone(),
            password: self.password.clone_ref(py),
            ca_pem: self.ca_pem.clone(),
            read_link: Some((links.unbind(), given, mysql_ca_pem)),
            links: built,
        })
    }

    /// Refuses when pickling would carry a secret the user did not choose to send: a plain
    /// password, or a private key as text in `flight_options` (Daft's Ray runner pickles
    /// every task; `daft_doris.secrets`).
    fn check_travels(&self, py: Python<'_>) -> PyResult<()> {
        secrets(py)?.call_method1("check_picklable", (self.password.bind(py),))?;
        if let Some(read) = self.links.read() {
            read.check_travels().map_err(connection_rule)?;
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
        if let Some((links, given, mysql_ca_pem)) = &self.read_link {
            keywords.set_item("_read", (links.bind(py).copy()?, *given, mysql_ca_pem))?;
        }
        Ok((PyTuple::empty(py), keywords))
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(other) = other.cast::<Self>() else {
            return Ok(false);
        };
        let other = other.get();
        Ok(self.options == other.options
            && match (&self.read_link, &other.read_link) {
                (None, None) => true,
                (Some((a, given_a, ca_a)), Some((b, given_b, ca_b))) => {
                    given_a == given_b && ca_a == ca_b && a.bind(py).eq(b.bind(py))?
                }
                _ => false,
            })
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

/// Python's types for a connection's fields: lists as tuples (the connection is immutable).
struct Frozen;

impl pythonize::PythonizeTypes for Frozen {
    type Map = PyDict;
    type NamedMap = pythonize::PythonizeUnnamedMappingAdapter<PyDict>;
    type List = PyTuple;
}

/// An option's value as Python reads it (pythonize, lists as tuples).
fn to_python<'py>(py: Python<'py>, value: Option<&OptionValue>) -> PyResult<Bound<'py, PyAny>> {
    Ok(pythonize::pythonize_custom::<Frozen, _>(py, &value)?)
}

/// `daft_doris.secrets`, where a password's forms and their rules live.
fn secrets(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import("daft_doris.secrets")
}

impl DorisConnection {
    /// This connection's links, the password resolved in this process
    /// (`daft_doris.secrets.resolve_secret`).
    pub(crate) fn resolve(&self, py: Python<'_>) -> PyResult<Links<'_>> {
        Ok(Links {
            settings: self.links.settings(&self.password_value(py)?),
            connection: self,
        })
    }
}

/// A connection's links with its password resolved: each crate's endpoint of the FE.
pub(crate) struct Links<'a> {
    connection: &'a DorisConnection,
    settings: ConnectionSettings,
}

impl Links<'_> {
    /// The MySQL endpoint of the FE.
    pub(crate) fn mysql(&self) -> MySqlEndpoint {
        self.connection.links.mysql(&self.settings)
    }

    /// The FE's HTTP face (`_query_plan`, `/api/backends`).
    pub(crate) fn fe_http(&self) -> PyResult<PlanEndpoint> {
        PlanEndpoint::from_settings(&self.settings).map_err(|e| config(e.to_string()))
    }

    /// The FE's Flight SQL endpoint, with the read's location rules and ADBC options; its
    /// locations are checked against the BEs the FE's HTTP face reports.
    pub(crate) fn flight(&self) -> PyResult<FlightSqlEndpoint> {
        self.connection
            .links
            .flight(&self.settings)
            .map_err(connection_rule)
    }

    /// A Stream Load client configuration for the FE, with the redirect settings.
    pub(crate) fn stream_load(&self) -> PyResult<ClientConfig> {
        let mut config =
            ClientConfig::from_settings(&self.settings).map_err(|e| config(e.to_string()))?;
        config.allowlist = self.connection.options.redirect_allowlist();
        config.redirect_policy = self.connection.options.redirect_policy;
        Ok(config)
    }

    /// The longest wait for an answer.
    pub(crate) fn query_timeout(&self) -> Duration {
        self.settings.query_timeout
    }
}

/// A read as a pickle carries it, checked (`doris_read::options::ReadOptions`).
fn check_read(
    links: &Bound<'_, PyDict>,
    given: bool,
    mysql_ca_pem: Option<String>,
) -> PyResult<ReadOverlay> {
    Ok(ReadOverlay {
        options: crate::read_options::read_options(links)?,
        origin: match given {
            true => ReadConnection::Given,
            false => ReadConnection::Keywords,
        },
        mysql_ca_pem,
    })
}

/// The PEM text of the CA file at `path`, read now, where the connection is configured
/// (`doris_read::options::read_pem_file`: capped, must hold a certificate); `name` is the
/// argument the path came in.
fn read_ca_file(name: &str, path: &str) -> PyResult<String> {
    doris_read::options::read_pem_file(name, path).map_err(connection_rule)
}

/// A doris-read rule the connection broke: its bare message (the connection serves writes
/// too, so not "invalid read configuration").
fn connection_rule(e: doris_read::ReadError) -> PyErr {
    match e {
        doris_read::ReadError::Config(message) => config(message),
        other => read_error(other),
    }
}
