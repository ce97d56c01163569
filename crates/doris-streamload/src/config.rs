//! How the client reaches Doris: FE address, credentials, TLS, redirect allowlist, routes,
//! timeouts and retry bounds.

use std::time::Duration;

use secrecy::ExposeSecret;
use url::Url;

use crate::error::StreamLoadError;

/// A Doris user and password, shared with the other crates of the workspace
/// ([`doris_connection::Credentials`]): `Debug` never shows the password.
pub use doris_connection::{ClientIdentity, ConnectionSettings, Credentials};

/// The `Authorization` header for `credentials`, marked sensitive so `http` never prints it.
pub(crate) fn basic_header(credentials: &Credentials) -> http::HeaderValue {
    let value = credentials.basic_authorization();
    let mut header = http::HeaderValue::from_str(value.expose_secret())
        .unwrap_or(http::HeaderValue::from_static(""));
    header.set_sensitive(true);
    header
}

pub use doris_connection::HostPort;

/// Where the FE's 307 may send the body: the allowlist Flight `DoGet` locations use too
/// ([`doris_connection::AddressAllowlist`]). A redirect is followed only to `http` or `https`
/// (never `http` when the FE was reached over `https`) and to an allowed host and port.
pub type RedirectAllowlist = doris_connection::AddressAllowlist;

/// The FE's `redirect-policy` header: which BE address the 307 names (declared with the
/// connection's options, `doris_connection::ConnectionOptions`).
pub use doris_connection::RedirectPolicy;

/// How a load reaches a BE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Ask the FE for a BE (the 307) before every load. With `remember_backend`, the BE of
    /// the last redirect is used directly for later loads until it fails before the body.
    ViaFe {
        /// Reuse the last BE for the next loads.
        remember_backend: bool,
    },
    /// Send every load straight to these BE base URLs (`http://be:8040`), round robin.
    Backends(Vec<Url>),
}

/// Bounds of the retries under the same label.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Attempts per load, the first included.
    pub max_attempts: u32,
    /// First backoff; doubled after each attempt.
    pub initial_backoff: Duration,
    /// Largest backoff.
    pub max_backoff: Duration,
    /// Total time a load may spend retrying. Keep it far below Doris's label retention
    /// (`streaming_label_keep_max_second`, 12 h by default), or a late retry could be
    /// accepted as a new load.
    pub max_total: Duration,
    /// How long to wait before probing a label that Doris reports as `RUNNING`.
    pub running_probe_interval: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(5),
            max_total: Duration::from_secs(600),
            running_probe_interval: Duration::from_secs(1),
        }
    }
}

/// Everything a [`crate::StreamLoadClient`] needs.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// FE HTTP base URL, e.g. `http://fe:8030` (userinfo, path and query are refused).
    pub fe: Url,
    /// Credentials.
    pub credentials: Credentials,
    /// How loads reach a BE.
    pub route: Route,
    /// Where redirects may go.
    pub allowlist: RedirectAllowlist,
    /// `redirect-policy` header for the FE.
    pub redirect_policy: Option<RedirectPolicy>,
    /// Extra trusted CA certificates (PEM), added to the built-in web PKI roots.
    pub ca_bundle_pem: Option<Vec<u8>>,
    /// The client certificate and key presented to an FE or BE that asks for one (mutual
    /// TLS on `https` links).
    pub client_identity: Option<doris_connection::ClientIdentity>,
    /// TCP (and TLS) connect timeout.
    pub connect_timeout: Duration,
    /// The longest wait for Doris to answer: a load's headers (the BE's `100 Continue`,
    /// the FE's redirect), a load after its last body byte (Doris commits and publishes
    /// before it answers, so a load's Stream Load `timeout` is the natural value), and a
    /// request without a body (`/api/backends`, two-phase commit and abort, error logs).
    /// It does not bound the upload: see `upload_stall_timeout`.
    pub answer_timeout: Duration,
    /// The longest a load's body may go without the connection taking a byte of it (a BE
    /// that stopped reading). A body that keeps moving takes as long as it needs.
    pub upload_stall_timeout: Duration,
    /// Retry bounds.
    pub retry: RetryPolicy,
    /// Fetch this many lines of the error log into [`StreamLoadError::Rejected`] (0: none).
    pub error_log_lines: usize,
}

impl ClientConfig {
    /// A configuration with defaults: via the FE, no remembered BE, reported BEs allowed,
    /// 10 s connect timeout, 10 min for an answer, 60 s for an upload stall, 5 attempts.
    pub fn new(fe: Url, credentials: Credentials) -> Self {
        Self {
            fe,
            credentials,
            route: Route::ViaFe {
                remember_backend: false,
            },
            allowlist: RedirectAllowlist::default(),
            redirect_policy: None,
            ca_bundle_pem: None,
            client_identity: None,
            connect_timeout: Duration::from_secs(10),
            answer_timeout: Duration::from_secs(600),
            upload_stall_timeout: Duration::from_secs(60),
            retry: RetryPolicy::default(),
            error_log_lines: 0,
        }
    }

    /// A configuration for the FE `settings` describe: its HTTP URL, credentials, trusted
    /// CAs, client identity and connect timeout, and its `query_timeout` as the wait for an
    /// answer (the other fields keep [`ClientConfig::new`]'s defaults).
    pub fn from_settings(settings: &ConnectionSettings) -> Result<Self, StreamLoadError> {
        let fe = settings
            .http_url()
            .map_err(|e| StreamLoadError::Config(e.to_string()))?;
        let mut config = Self::new(fe, settings.credentials.clone());
        config.ca_bundle_pem = settings.ca_pem.clone();
        config.client_identity = settings.client_identity.clone();
        config.connect_timeout = settings.connect_timeout;
        config.answer_timeout = settings.query_timeout;
        Ok(config)
    }

    /// Checks the URLs before anything is sent.
    pub(crate) fn validate(&self) -> Result<(), StreamLoadError> {
        let mut urls = vec![("FE", &self.fe)];
        if let Route::Backends(list) = &self.route {
            if list.is_empty() {
                return Err(StreamLoadError::Config(
                    "the backend route needs at least one BE URL".into(),
                ));
            }
            urls.extend(list.iter().map(|u| ("BE", u)));
        }
        for (what, url) in urls {
            if !matches!(url.scheme(), "http" | "https") {
                return Err(StreamLoadError::Config(format!(
                    "{what} URL scheme must be http or https, not {}",
                    url.scheme()
                )));
            }
            if !url.username().is_empty() || url.password().is_some() {
                return Err(StreamLoadError::Config(format!(
                    "{what} URL must not carry credentials; use Credentials"
                )));
            }
            if url.host_str().is_none() {
                return Err(StreamLoadError::Config(format!("{what} URL has no host")));
            }
            if url.path() != "/" && !url.path().is_empty() || url.query().is_some() {
                return Err(StreamLoadError::Config(format!(
                    "{what} URL must be a base URL (scheme, host, port), without path or query"
                )));
            }
        }
        if self.retry.max_attempts == 0 {
            return Err(StreamLoadError::Config(
                "retry.max_attempts must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

/// Host and port of a URL (default ports filled in), IPv6 without brackets.
pub(crate) fn host_port(url: &Url) -> Option<(String, u16)> {
    let host = match url.host()? {
        url::Host::Ipv6(a) => a.to_string(),
        other => other.to_string(),
    };
    Some((host, url.port_or_known_default()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_from_settings_takes_the_http_link_and_timeouts() {
        let mut settings =
            ConnectionSettings::new("fe.example", Credentials::new("loader", "pw")).unwrap();
        settings.http_port = 8443;
        settings.http_secure = true;
        let settings = settings.with_request_timeout(Duration::from_secs(5));
        let config = ClientConfig::from_settings(&settings).unwrap();
        assert_eq!(config.fe.as_str(), "https://fe.example:8443/");
        assert_eq!(config.connect_timeout, Duration::from_secs(5));
        assert_eq!(config.answer_timeout, Duration::from_secs(5));
        assert_eq!(config.credentials.user(), "loader");
        assert!(config.validate().is_ok());
    }

    #[test]
    fn debug_never_shows_the_password() {
        let c = Credentials::new("loader", "s3cr3t-pw");
        let shown = format!("{c:?}");
        assert!(!shown.contains("s3cr3t-pw"), "{shown}");
        assert!(shown.contains("loader"));
        assert!(basic_header(&c).is_sensitive());
    }

    #[test]
    fn urls_with_credentials_or_paths_are_refused() {
        let creds = Credentials::new("root", "");
        for bad in [
            "http://u:p@fe:8030",
            "ftp://fe:8030",
            "http://fe:8030/api",
            "http://fe:8030/?x=1",
        ] {
            let cfg = ClientConfig::new(Url::parse(bad).unwrap(), creds.clone());
            assert!(
                matches!(cfg.validate(), Err(StreamLoadError::Config(_))),
                "{bad}"
            );
        }
        let ok = ClientConfig::new(Url::parse("http://fe:8030").unwrap(), creds);
        assert!(ok.validate().is_ok());
    }
}
