//! The FE a call talks to, as a typed Python object (`daft_doris._native.Connection`).
//!
//! The Python layer builds one per process from its picklable `Endpoint` and passes it to
//! every native call; defaults and checks live here, once. It holds no password (that
//! arrives beside it, resolved in the process that uses it) and prints only the host,
//! ports and user.

use std::collections::HashMap;
use std::time::Duration;

use doris_plan::PlanEndpoint;
use doris_read::{FlightSqlEndpoint, MySqlEndpoint, SslMode};
use doris_sql::HostPort;
use doris_streamload::RedirectPolicy;
use pyo3::prelude::*;
use pyo3::types::PyBool;

use crate::args;
use crate::errors::{ErrorClass, raise};

/// Where the FE is, how to reach it safely and how long to wait for it.
#[pyclass(frozen, module = "daft_doris._native")]
#[derive(Debug, Clone)]
pub(crate) struct Connection {
    pub(crate) host: String,
    pub(crate) mysql_port: u16,
    pub(crate) http_port: u16,
    pub(crate) http_secure: bool,
    pub(crate) user: String,
    pub(crate) connect_timeout: Duration,
    pub(crate) query_timeout: Duration,
    pub(crate) flight_port: u16,
    pub(crate) flight_secure: bool,
    /// `host:port` → `host:port` for BE locations the client cannot reach.
    pub(crate) flight_endpoint_rewrite: HashMap<String, String>,
    pub(crate) flight_max_parallel: usize,
    /// Flight locations allowed besides the BEs the FE reports.
    pub(crate) flight_allowed_locations: Vec<HostPort>,
    /// CA certificates (PEM) trusted on the HTTPS, Flight and MySQL links besides the web
    /// PKI roots.
    pub(crate) ca_pem: Option<Vec<u8>>,
    pub(crate) mysql_ssl_mode: SslMode,
    /// Stream Load redirect targets allowed besides the BEs the FE reports.
    pub(crate) redirect_targets: Vec<HostPort>,
    /// Which redirect targets are followed (`None`: the client's default).
    pub(crate) redirect_policy: Option<RedirectPolicy>,
}

#[pymethods]
impl Connection {
    /// Checks every setting; a bad one is a `ConfigurationError` naming it.
    #[new]
    #[pyo3(signature = (
        *,
        host,
        mysql_port,
        user,
        http_port = None,
        http_secure = None,
        connect_timeout_seconds = None,
        query_timeout_seconds = None,
        flight_port = None,
        flight_secure = None,
        flight_endpoint_rewrite = HashMap::new(),
        flight_max_parallel = 4,
        flight_allowed_locations = None,
        ca_pem = None,
        mysql_ssl_mode = None,
        request_timeout_seconds = None,
        redirect_hosts = None,
        redirect_ports = None,
        redirect_policy = None,
        verify_tls = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        host: Bound<'_, PyAny>,
        mysql_port: Bound<'_, PyAny>,
        user: Bound<'_, PyAny>,
        http_port: Option<Bound<'_, PyAny>>,
        http_secure: Option<Bound<'_, PyAny>>,
        connect_timeout_seconds: Option<Bound<'_, PyAny>>,
        query_timeout_seconds: Option<Bound<'_, PyAny>>,
        flight_port: Option<Bound<'_, PyAny>>,
        flight_secure: Option<Bound<'_, PyAny>>,
        flight_endpoint_rewrite: HashMap<String, String>,
        flight_max_parallel: usize,
        flight_allowed_locations: Option<Bound<'_, PyAny>>,
        ca_pem: Option<String>,
        mysql_ssl_mode: Option<Bound<'_, PyAny>>,
        request_timeout_seconds: Option<Bound<'_, PyAny>>,
        redirect_hosts: Option<Bound<'_, PyAny>>,
        redirect_ports: Option<Bound<'_, PyAny>>,
        redirect_policy: Option<Bound<'_, PyAny>>,
        verify_tls: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let py = host.py();
        let host = args::host(&host)?;
        let user: String = user
            .extract()
            .ok()
            .filter(|u: &String| !u.is_empty())
            .ok_or_else(|| {
                raise(
                    ErrorClass::ConfigurationError,
                    "username must be a non-empty string",
                )
            })?;
        // `None` is the default: 8030 (HTTP), 8070 (Flight), 10 s to connect, 300 s a query.
        let http_port = args::port(
            "http_port",
            &args::or_default(&http_port, 8030u16.into_pyobject(py)?.into_any()),
        )?;
        let flight_port = args::port(
            "flight_port",
            &args::or_default(&flight_port, 8070u16.into_pyobject(py)?.into_any()),
        )?;
        let false_ = || PyBool::new(py, false).to_owned().into_any();
        let http_secure = args::flag("http_secure", &args::or_default(&http_secure, false_()))?;
        let flight_secure =
            args::flag("flight_secure", &args::or_default(&flight_secure, false_()))?;
        let (connect_timeout, query_timeout) = match args::given(request_timeout_seconds) {
            // The writer's one timeout: every request's, and connecting's up to 30 s.
            Some(request) => {
                let t = args::seconds("request_timeout_seconds", &request)?;
                (t.min(Duration::from_secs(30)), t)
            }
            None => (
                args::seconds(
                    "connect_timeout_seconds",
                    &args::or_default(
                        &connect_timeout_seconds,
                        10.0f64.into_pyobject(py)?.into_any(),
                    ),
                )?,
                args::seconds(
                    "query_timeout_seconds",
                    &args::or_default(
                        &query_timeout_seconds,
                        300.0f64.into_pyobject(py)?.into_any(),
                    ),
                )?,
            ),
        };
        if let Some(verify) = args::given(verify_tls)
            && !args::flag("verify_tls", &verify)?
        {
            return Err(raise(
                ErrorClass::ConfigurationError,
                "verify_tls=False is not supported: TLS is always verified",
            ));
        }
        let redirect_targets = redirect_targets(redirect_hosts, redirect_ports)?;
        let redirect_policy = match args::given(redirect_policy) {
            None => None,
            Some(policy) => match args::choice(
                "redirect_policy",
                &policy,
                &["", "direct", "public", "private"],
            )? {
                "direct" => Some(RedirectPolicy::Direct),
                "public" => Some(RedirectPolicy::Public),
                "private" => Some(RedirectPolicy::Private),
                _ => None,
            },
        };
        if !(1..=64).contains(&flight_max_parallel) {
            return Err(raise(
                ErrorClass::ConfigurationError,
                "flight_options max_parallel_endpoints must be an integer from 1 to 64",
            ));
        }
        let allowed = args::host_ports("flight_allowed_locations", flight_allowed_locations)?;
        let mysql_ssl_mode = args::or_default(
            &mysql_ssl_mode,
            "preferred".into_pyobject(py)?.into_any(),
        )
        .extract::<String>()
        .ok()
        .and_then(|m| SslMode::parse(&m))
        .ok_or_else(|| {
            raise(
                ErrorClass::ConfigurationError,
                "ssl_mode must be one of disabled, preferred, required, verify_ca, verify_identity",
            )
        })?;
        let connection = Self {
            host,
            mysql_port: args::port("mysql_port", &mysql_port)?,
            http_port,
            http_secure,
            user,
            connect_timeout,
            query_timeout,
            flight_port,
            flight_secure,
            flight_endpoint_rewrite,
            flight_max_parallel,
            flight_allowed_locations: allowed,
            ca_pem: ca_pem.map(String::into_bytes),
            mysql_ssl_mode,
            redirect_targets,
            redirect_policy,
        };
        connection.http_url()?;
        Ok(connection)
    }

    fn __repr__(&self) -> String {
        format!(
            "Connection(host={:?}, mysql_port={}, http_port={}, flight_port={}, user={:?})",
            self.host, self.mysql_port, self.http_port, self.flight_port, self.user
        )
    }
}

/// Every `host:port` of `hosts` × `ports` (both lists or tuples; `None` is empty).
fn redirect_targets(
    hosts: Option<Bound<'_, PyAny>>,
    ports: Option<Bound<'_, PyAny>>,
) -> PyResult<Vec<HostPort>> {
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
    Ok(hosts
        .iter()
        .flat_map(|h| ports.iter().map(|p| HostPort::new(h.clone(), *p)))
        .collect())
}

impl Connection {
    /// The trusted CA bundle, if one was given.
    pub(crate) fn ca_bundle(&self) -> Option<Vec<u8>> {
        self.ca_pem.clone()
    }

    /// The MySQL endpoint of the FE.
    pub(crate) fn mysql(&self, password: &str, database: Option<&str>) -> MySqlEndpoint {
        let mut endpoint = MySqlEndpoint::new(&self.host, self.mysql_port, &self.user, password);
        endpoint.ssl_mode = self.mysql_ssl_mode;
        endpoint.ssl_ca_pem = self.ca_bundle();
        endpoint.database = database.map(str::to_owned);
        endpoint.connect_timeout = self.connect_timeout;
        endpoint.read_timeout = self.query_timeout;
        endpoint
    }

    /// The FE's Flight SQL endpoint; its locations are checked against the BEs the FE's
    /// HTTP face reports.
    pub(crate) fn flight(&self, password: &str) -> PyResult<FlightSqlEndpoint> {
        let mut endpoint =
            FlightSqlEndpoint::new(&self.host, self.flight_port, &self.user, password);
        endpoint.tls = self.flight_secure;
        endpoint.ca_bundle_pem = self.ca_bundle();
        endpoint.rewrite = self.flight_endpoint_rewrite.clone();
        endpoint
            .allowlist
            .targets
            .extend(self.flight_allowed_locations.iter().cloned());
        let mut http = PlanEndpoint::new(self.http_url()?, &self.user, password);
        http.ca_bundle_pem = self.ca_bundle();
        http.timeout = self.connect_timeout.max(Duration::from_secs(1)) * 3;
        endpoint.fe_http = Some(http);
        endpoint.max_parallel = self.flight_max_parallel;
        endpoint.connect_timeout = self.connect_timeout;
        endpoint.read_timeout = self.query_timeout;
        Ok(endpoint)
    }

    /// The FE's HTTP base URL.
    pub(crate) fn http_url(&self) -> PyResult<url::Url> {
        let scheme = if self.http_secure { "https" } else { "http" };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("{scheme}://{host}:{}", self.http_port)
            .parse()
            .map_err(|_| {
                raise(
                    ErrorClass::ConfigurationError,
                    "the FE host does not form a valid URL",
                )
            })
    }
}
