//! The FE a call talks to, as a typed Python object (`daft_doris._native.Connection`).
//!
//! The Python layer builds one per process from its picklable `Endpoint` and passes it to
//! every native call. It converts Python's arguments into a
//! [`doris_connection::ConnectionSettings`] (where the defaults and the timeout rules live) plus
//! the transport-specific settings, and builds each crate's endpoint from them. It holds no
//! password (that arrives beside it, resolved in the process that uses it) and prints only
//! the host, ports and user.

use std::collections::HashMap;
use std::time::Duration;

use doris_connection::{
    AddressAllowlist, ClientIdentity, ConnectionSettings, Credentials, HostPort, SslMode,
};
use doris_plan::PlanEndpoint;
use doris_read::options::FlightOptions;
use doris_read::{FlightSqlEndpoint, MySqlEndpoint};
use doris_streamload::{ClientConfig, RedirectPolicy};
use pyo3::prelude::*;

use crate::args;
use crate::errors::{ErrorClass, load_error, raise, read_error};

/// Where the FE is, how to reach it safely and how long to wait for it.
#[pyclass(frozen, module = "daft_doris._native")]
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

#[pymethods]
impl Connection {
    /// Checks every setting; a bad one is a `ConfigurationError` naming it.
    #[new]
    #[pyo3(signature = (
        *,
        host,
        mysql_port = None,
        user = None,
        http_port = None,
        http_secure = None,
        connect_timeout_seconds = None,
        query_timeout_seconds = None,
        flight_port = None,
        flight_secure = None,
        flight_endpoint_rewrite = HashMap::new(),
        flight_options = None,
        flight_allowed_locations = None,
        ca_pem = None,
        mysql_ca_pem = None,
        mysql_ssl_mode = None,
        mysql_server_public_key = None,
        mysql_max_packet_bytes = None,
        request_timeout_seconds = None,
        redirect_hosts = None,
        redirect_ports = None,
        trust_reported_backends = None,
        redirect_policy = None,
        verify_tls = None,
        client_cert_file = None,
        client_key_file = None,
        mysql_client_cert_file = None,
        mysql_client_key_file = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        host: Bound<'_, PyAny>,
        mysql_port: Option<Bound<'_, PyAny>>,
        user: Option<Bound<'_, PyAny>>,
        http_port: Option<Bound<'_, PyAny>>,
        http_secure: Option<Bound<'_, PyAny>>,
        connect_timeout_seconds: Option<Bound<'_, PyAny>>,
        query_timeout_seconds: Option<Bound<'_, PyAny>>,
        flight_port: Option<Bound<'_, PyAny>>,
        flight_secure: Option<Bound<'_, PyAny>>,
        flight_endpoint_rewrite: HashMap<String, String>,
        flight_options: Option<Vec<(String, String)>>,
        flight_allowed_locations: Option<Bound<'_, PyAny>>,
        ca_pem: Option<String>,
        mysql_ca_pem: Option<String>,
        mysql_ssl_mode: Option<Bound<'_, PyAny>>,
        mysql_server_public_key: Option<String>,
        mysql_max_packet_bytes: Option<usize>,
        request_timeout_seconds: Option<Bound<'_, PyAny>>,
        redirect_hosts: Option<Bound<'_, PyAny>>,
        redirect_ports: Option<Bound<'_, PyAny>>,
        trust_reported_backends: Option<Bound<'_, PyAny>>,
        redirect_policy: Option<Bound<'_, PyAny>>,
        verify_tls: Option<Bound<'_, PyAny>>,
        client_cert_file: Option<Bound<'_, PyAny>>,
        client_key_file: Option<Bound<'_, PyAny>>,
        mysql_client_cert_file: Option<Bound<'_, PyAny>>,
        mysql_client_key_file: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let host = args::host(&host)?;
        // `None` keeps the default of `ConnectionSettings`, as for every setting below.
        let user: String = match args::given(user) {
            Some(user) => user.extract().map_err(|_| {
                raise(
                    ErrorClass::ConfigurationError,
                    "username must be a non-empty string",
                )
            })?,
            None => ConnectionSettings::DEFAULT_USER.to_owned(),
        };
        let mut settings = ConnectionSettings::new(host, Credentials::new(user, ""))
            .map_err(|e| raise(ErrorClass::ConfigurationError, e.to_string()))?;
        if let Some(port) = args::given(mysql_port) {
            settings.mysql_port = args::port("mysql_port", &port)?;
        }
        if let Some(port) = args::given(http_port) {
            settings.http_port = args::port("http_port", &port)?;
        }
        if let Some(port) = args::given(flight_port) {
            settings.flight_port = args::port("flight_port", &port)?;
        }
        if let Some(flag) = args::given(http_secure) {
            settings.http_secure = args::flag("http_secure", &flag)?;
        }
        if let Some(flag) = args::given(flight_secure) {
            settings.flight_secure = args::flag("flight_secure", &flag)?;
        }
        match args::given(request_timeout_seconds) {
            // The writer's one timeout.
            Some(request) => {
                settings = settings
                    .with_request_timeout(args::seconds("request_timeout_seconds", &request)?);
            }
            None => {
                if let Some(t) = args::given(connect_timeout_seconds) {
                    settings.connect_timeout = args::seconds("connect_timeout_seconds", &t)?;
                }
                if let Some(t) = args::given(query_timeout_seconds) {
                    settings.query_timeout = args::seconds("query_timeout_seconds", &t)?;
                }
            }
        }
        if let Some(verify) = args::given(verify_tls)
            && !args::flag("verify_tls", &verify)?
        {
            return Err(raise(
                ErrorClass::ConfigurationError,
                "verify_tls=False is not supported: TLS is always verified",
            ));
        }
        if let Some(mode) = args::given(mysql_ssl_mode) {
            settings.mysql_ssl_mode = mode
                .extract::<String>()
                .ok()
                .and_then(|m| SslMode::parse(&m))
                .ok_or_else(|| {
                    raise(
                        ErrorClass::ConfigurationError,
                        format!("ssl_mode must be one of {}", SslMode::NAMES.join(", ")),
                    )
                })?;
        }
        settings.ca_pem = ca_pem.map(String::into_bytes);
        settings.mysql_ca_pem = mysql_ca_pem.map(String::into_bytes);
        if let Some(bytes) = mysql_max_packet_bytes {
            settings.mysql_max_packet_bytes = bytes;
        }
        settings.client_identity = identity_files(
            ("tls_client_cert_file", client_cert_file),
            ("tls_client_key_file", client_key_file),
        )?;
        let mysql_client_identity = identity_files(
            ("mysql_options ssl_cert", mysql_client_cert_file),
            ("mysql_options ssl_key", mysql_client_key_file),
        )?;
        settings.mysql_server_public_key_pem = mysql_server_public_key.map(String::into_bytes);
        settings
            .http_url()
            .map_err(|e| raise(ErrorClass::ConfigurationError, e.to_string()))?;
        let trust_reported_backends = args::given(trust_reported_backends)
            .map(|flag| args::flag("trust_reported_backends", &flag))
            .transpose()?;
        let redirects = redirect_allowlist(
            &settings.host,
            redirect_hosts,
            redirect_ports,
            trust_reported_backends,
        )?;
        let redirect_policy = match args::given(redirect_policy) {
            None => None,
            // The empty string leaves the header out, as `None` does.
            Some(policy) if policy.extract::<String>().is_ok_and(|p| p.is_empty()) => None,
            Some(policy) => {
                Some(args::named::<RedirectPolicy>(&policy).map_err(|e| load_error(&e))?)
            }
        };
        let flight_options =
            FlightOptions::parse(flight_options.unwrap_or_default()).map_err(read_error)?;
        Ok(Self {
            settings,
            flight_endpoint_rewrite,
            flight_options,
            flight_allowed_locations: args::host_ports(
                "flight_allowed_locations",
                flight_allowed_locations,
            )?,
            redirects,
            redirect_policy,
            mysql_client_identity,
        })
    }

    /// The wait to connect, in seconds (a read made from this connection takes it).
    #[getter]
    fn connect_timeout_seconds(&self) -> f64 {
        self.settings.connect_timeout.as_secs_f64()
    }

    /// The wait for an answer, in seconds.
    #[getter]
    fn query_timeout_seconds(&self) -> f64 {
        self.settings.query_timeout.as_secs_f64()
    }

    /// The MySQL link's TLS mode.
    #[getter]
    fn mysql_ssl_mode(&self) -> &'static str {
        self.settings.mysql_ssl_mode.name()
    }

    fn __repr__(&self) -> String {
        let s = &self.settings;
        format!(
            "Connection(host={:?}, mysql_port={}, http_port={}, flight_port={}, user={:?})",
            s.host,
            s.mysql_port,
            s.http_port,
            s.flight_port,
            s.credentials.user()
        )
    }
}

/// The client certificate and key read from their files (`doris_read::options::
/// read_client_identity`), each named as the caller gave it; both or neither.
fn identity_files(
    (cert_name, cert): (&str, Option<Bound<'_, PyAny>>),
    (key_name, key): (&str, Option<Bound<'_, PyAny>>),
) -> PyResult<Option<ClientIdentity>> {
    let path = |name: &str, value: &Bound<'_, PyAny>| -> PyResult<String> {
        value.extract::<String>().map_err(|_| {
            raise(
                ErrorClass::ConfigurationError,
                format!("{name} must be the path of a PEM file"),
            )
        })
    };
    match (args::given(cert), args::given(key)) {
        (None, None) => Ok(None),
        (Some(cert), Some(key)) => doris_read::options::read_client_identity(
            cert_name,
            &path(cert_name, &cert)?,
            key_name,
            &path(key_name, &key)?,
        )
        .map(Some)
        .map_err(|e| match e {
            doris_read::ReadError::Config(message) => {
                raise(ErrorClass::ConfigurationError, message)
            }
            other => read_error(other),
        }),
        _ => Err(raise(
            ErrorClass::ConfigurationError,
            format!("{cert_name} and {key_name} go together: give both or neither"),
        )),
    }
}

/// The Stream Load redirect allowlist of `redirect_hosts` and `redirect_ports` (lists or
/// tuples; `None` is empty), by doris-connection's rule.
fn redirect_allowlist(
    fe_host: &str,
    hosts: Option<Bound<'_, PyAny>>,
    ports: Option<Bound<'_, PyAny>>,
    trust_reported_backends: Option<bool>,
) -> PyResult<AddressAllowlist> {
    let hosts = match args::given(hosts) {
        Some(h) => args::items("redirect_hosts", &h)?
            .iter()
            .map(args::host)
            .collect::<PyResult<Vec<_>>>()?,
        None => Vec::new(),
    };
    let ports = match args::given(ports) {
        Some(p) => args::items("redirect_ports", &p)?
            .iter()
            .map(|p| args::port("redirect_ports", p))
            .collect::<PyResult<Vec<_>>>()?,
        None => Vec::new(),
    };
    Ok(AddressAllowlist::redirects(
        fe_host,
        &hosts,
        &ports,
        trust_reported_backends,
    ))
}

impl Connection {
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
        PlanEndpoint::from_settings(&self.settings(password))
            .map_err(|e| raise(ErrorClass::ConfigurationError, e.to_string()))
    }

    /// The FE's Flight SQL endpoint; its locations are checked against the BEs the FE's
    /// HTTP face reports.
    pub(crate) fn flight(&self, password: &str) -> PyResult<FlightSqlEndpoint> {
        let mut endpoint = FlightSqlEndpoint::from_settings(&self.settings(password))
            .map_err(|e| raise(ErrorClass::ConfigurationError, e.to_string()))?;
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
