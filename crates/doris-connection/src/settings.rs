//! Where a Doris FE is and how to reach it: one settings type, with Doris's defaults,
//! from which every client crate builds its endpoint (`doris_read::MySqlEndpoint`,
//! `doris_read::FlightSqlEndpoint`, `doris_plan::PlanEndpoint`,
//! `doris_streamload::ClientConfig`, each with a `from_settings` constructor).
//!
//! A service describes its FE once, and every link (MySQL, HTTP, Flight SQL) takes the same
//! host, credentials, TLS trust and timeouts from it:
//!
//! ```
//! use std::time::Duration;
//! use doris_connection::{ConnectionSettings, Credentials, SslMode};
//!
//! let fe = ConnectionSettings::new("fe.example", Credentials::new("loader", "s3cr3t"))
//!     .unwrap()
//!     .with_request_timeout(Duration::from_secs(120));
//! assert_eq!((fe.mysql_port, fe.http_port, fe.flight_port), (9030, 8030, 8070));
//! assert_eq!(fe.http_url().unwrap().as_str(), "http://fe.example:8030/");
//! // One request timeout: connecting takes at most 30 s of it.
//! assert_eq!(fe.connect_timeout, Duration::from_secs(30));
//! assert_eq!(fe.query_timeout, Duration::from_secs(120));
//! assert_eq!(fe.mysql_ssl_mode, SslMode::Preferred);
//! assert!(!format!("{fe:?}").contains("s3cr3t"));
//!
//! // A bare host only: a URL, a path or a port is refused, naming the problem.
//! assert!(ConnectionSettings::new("http://fe.example", Credentials::new("root", "")).is_err());
//! ```

use std::fmt;
use std::time::Duration;

use url::Url;

use crate::Credentials;

/// TLS on the MySQL link, as MySQL clients name the modes; ordered by strength
/// (`Disabled < Preferred < … < VerifyIdentity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub enum SslMode {
    /// Plain TCP.
    Disabled,
    /// TLS when the server offers it, certificate not verified (Doris's `enable_ssl`
    /// certificates are self-signed by default).
    #[default]
    Preferred,
    /// TLS or fail; certificate not verified.
    Required,
    /// TLS, certificate chain verified.
    VerifyCa,
    /// TLS, certificate chain and host name verified.
    VerifyIdentity,
}

impl SslMode {
    /// The names [`SslMode::parse`] reads, in order of strength.
    pub const NAMES: [&'static str; 5] = [
        "disabled",
        "preferred",
        "required",
        "verify_ca",
        "verify_identity",
    ];

    /// Reads `disabled | preferred | required | verify_ca | verify_identity` (any case).
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.to_ascii_lowercase().as_str() {
            "disabled" => Self::Disabled,
            "preferred" => Self::Preferred,
            "required" => Self::Required,
            "verify_ca" => Self::VerifyCa,
            "verify_identity" => Self::VerifyIdentity,
            _ => return None,
        })
    }

    /// The stronger of `self` and `floor`: a mode asked for where a connection already
    /// settled one never weakens it.
    #[must_use]
    pub fn at_least(self, floor: Self) -> Self {
        self.max(floor)
    }

    /// The mode's name, as [`SslMode::parse`] reads it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Disabled => "disabled",
            Self::Preferred => "preferred",
            Self::Required => "required",
            Self::VerifyCa => "verify_ca",
            Self::VerifyIdentity => "verify_identity",
        }
    }

    /// Whether the server's certificate is verified (only then may a password travel in
    /// clear text inside the TLS link).
    pub fn verifies(self) -> bool {
        matches!(self, Self::VerifyCa | Self::VerifyIdentity)
    }
}

/// Why connection settings were refused. Nothing was sent anywhere.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectionSettingsError {
    /// The host is empty.
    #[error("host must be a non-empty string")]
    EmptyHost,
    /// The host carries a scheme, path, user info or white space.
    #[error("host must be a bare host name or IP address (no scheme, path or userinfo)")]
    NotABareHost,
    /// The host carries a port (and is not an IPv6 address).
    #[error("host must not contain a port; use the *_port arguments")]
    HostWithPort,
    /// The user name is empty.
    #[error("username must be a non-empty string")]
    EmptyUser,
    /// A port is 0.
    #[error("{0} must be an integer from 1 to 65535")]
    Port(&'static str),
    /// A named option's value breaks its rule (`crate::ConnectionOptions`).
    #[error("{option} must be {rule}")]
    Invalid {
        /// The option's name.
        option: String,
        /// What it must be.
        rule: String,
    },
    /// A name that is no option (`crate::ConnectionOptions::NAMES`).
    #[error("unexpected option '{0}'")]
    UnknownOption(String),
    /// A required option is missing.
    #[error("missing option '{0}'")]
    MissingOption(&'static str),
}

impl ConnectionSettingsError {
    /// Always [`Configuration`](doris_sql::ErrorKind::Configuration): nothing was sent.
    pub fn kind(&self) -> doris_sql::ErrorKind {
        doris_sql::ErrorKind::Configuration
    }
}

/// Where a Doris FE is and how to reach it; `Debug` hides the password.
///
/// The fields are public so a caller sets what differs from the defaults; the ports are
/// Doris's (`9030` MySQL, `8030` HTTP, `8070` Arrow Flight SQL), TLS is off on the HTTP
/// and Flight links and `preferred` on the MySQL link, as MySQL clients do.
#[derive(Clone)]
pub struct ConnectionSettings {
    /// FE host name or IP address (IPv6 without brackets).
    pub host: String,
    /// FE MySQL-protocol port (`query_port`).
    pub mysql_port: u16,
    /// FE HTTP port (`http_port`: Stream Load, `_query_plan`, `/api/backends`).
    pub http_port: u16,
    /// HTTPS on the HTTP links (always verified).
    pub http_secure: bool,
    /// FE Arrow Flight SQL port (`arrow_flight_sql_port`).
    pub flight_port: u16,
    /// TLS on the Flight links (always verified).
    pub flight_secure: bool,
    /// The user and password.
    pub credentials: Credentials,
    /// Longest wait to open a connection.
    pub connect_timeout: Duration,
    /// Longest wait for an answer (a request's, or the next row of a result).
    pub query_timeout: Duration,
    /// CA certificates (PEM) trusted besides the web PKI roots, on every TLS link (on the
    /// MySQL link unless [`ConnectionSettings::mysql_ca_pem`] is set).
    pub ca_pem: Option<Vec<u8>>,
    /// CA certificates (PEM) trusted on the MySQL link instead of `ca_pem` (1.1's
    /// `mysql_options["ssl_ca"]`, which PyMySQL trusts on that link alone): the HTTP and
    /// Flight links never trust them.
    pub mysql_ca_pem: Option<Vec<u8>>,
    /// TLS on the MySQL link.
    pub mysql_ssl_mode: SslMode,
    /// The MySQL server's RSA public key (PEM), pinned: a server on an unverified link that
    /// asks for full authentication gets the password encrypted to this key only (see
    /// `doris_read::MySqlEndpoint::server_public_key_pem`).
    pub mysql_server_public_key_pem: Option<Vec<u8>>,
    /// A client certificate and key for servers that ask for one (mutual TLS). Today the
    /// Stream Load client presents it (`doris_streamload::ClientConfig::from_settings`);
    /// the MySQL, `_query_plan` and Flight links do not yet.
    pub client_identity: Option<crate::ClientIdentity>,
    /// The largest packet the MySQL server may send (one row of a result, its parts
    /// joined): a larger one closes the link with an error naming this cap before its
    /// bytes are read (MySQL's client `max_allowed_packet`; 1.1's
    /// `mysql_options["max_allowed_packet"]`).
    pub mysql_max_packet_bytes: usize,
}

impl ConnectionSettings {
    /// The user a fresh Doris cluster has (`read_doris`'s and `DorisConnection`'s default).
    pub const DEFAULT_USER: &'static str = "root";
    /// Doris's MySQL-protocol port.
    pub const DEFAULT_MYSQL_PORT: u16 = 9030;
    /// Doris's FE HTTP port.
    pub const DEFAULT_HTTP_PORT: u16 = 8030;
    /// Doris's FE Arrow Flight SQL port.
    pub const DEFAULT_FLIGHT_PORT: u16 = 8070;
    /// The default cap of a MySQL packet: 64 MiB (MySQL 8's server `max_allowed_packet`).
    pub const DEFAULT_MYSQL_MAX_PACKET_BYTES: usize = 64 << 20;
    /// The largest MySQL packet cap a caller may set: 1 GiB (MySQL's own limit).
    pub const MAX_MYSQL_MAX_PACKET_BYTES: usize = 1 << 30;
    /// The default wait to connect.
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
    /// The default wait for an answer.
    pub const DEFAULT_QUERY_TIMEOUT: Duration = Duration::from_secs(300);
    /// The longest wait to connect that [`ConnectionSettings::with_request_timeout`] sets.
    pub const MAX_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
    /// The longest timeout a caller may ask for, of any kind (a day): a larger one is a
    /// mistake (milliseconds given as seconds), not a wait anyone means.
    pub const MAX_TIMEOUT: Duration = Duration::from_secs(86_400);

    /// Settings for the FE at `host` with Doris's default ports and timeouts. The host
    /// must be a bare name or IP address and the user non-empty.
    pub fn new(
        host: impl Into<String>,
        credentials: Credentials,
    ) -> Result<Self, ConnectionSettingsError> {
        let host = host.into();
        check_host(&host)?;
        if credentials.user().is_empty() {
            return Err(ConnectionSettingsError::EmptyUser);
        }
        Ok(Self {
            host,
            mysql_port: Self::DEFAULT_MYSQL_PORT,
            http_port: Self::DEFAULT_HTTP_PORT,
            http_secure: false,
            flight_port: Self::DEFAULT_FLIGHT_PORT,
            flight_secure: false,
            credentials,
            connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
            query_timeout: Self::DEFAULT_QUERY_TIMEOUT,
            ca_pem: None,
            mysql_ca_pem: None,
            mysql_ssl_mode: SslMode::default(),
            mysql_server_public_key_pem: None,
            client_identity: None,
            mysql_max_packet_bytes: Self::DEFAULT_MYSQL_MAX_PACKET_BYTES,
        })
    }

    /// One timeout for every request: answers wait `timeout`, connecting waits at most
    /// [`ConnectionSettings::MAX_CONNECT_TIMEOUT`] of it (a writer's
    /// `request_timeout_seconds`).
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.query_timeout = timeout;
        self.connect_timeout = timeout.min(Self::MAX_CONNECT_TIMEOUT);
        self
    }

    /// Checks the ports (0 is refused, naming the argument).
    pub fn check(&self) -> Result<(), ConnectionSettingsError> {
        check_host(&self.host)?;
        for (name, port) in [
            ("mysql_port", self.mysql_port),
            ("http_port", self.http_port),
            ("flight_port", self.flight_port),
        ] {
            if port == 0 {
                return Err(ConnectionSettingsError::Port(name));
            }
        }
        Ok(())
    }

    /// The FE's HTTP base URL (`http[s]://host:http_port/`, an IPv6 host in brackets);
    /// a host set by hand that is not a bare name or address is refused.
    pub fn http_url(&self) -> Result<Url, ConnectionSettingsError> {
        check_host(&self.host)?;
        let scheme = if self.http_secure { "https" } else { "http" };
        Url::parse(&format!(
            "{scheme}://{}:{}",
            self.bracketed_host(),
            self.http_port
        ))
        .map_err(|_| ConnectionSettingsError::NotABareHost)
    }

    /// The whole-request timeout of a `_query_plan` or `/api/backends` call: three connect
    /// timeouts (at least 3 s), so planning fails fast where the FE is unreachable and a
    /// slow plan still has time.
    pub fn planning_timeout(&self) -> Duration {
        self.connect_timeout.max(Duration::from_secs(1)) * 3
    }

    /// The host as a URL authority writes it (an IPv6 address in brackets).
    pub fn bracketed_host(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        }
    }
}

impl fmt::Debug for ConnectionSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectionSettings")
            .field("host", &self.host)
            .field("mysql_port", &self.mysql_port)
            .field("http_port", &self.http_port)
            .field("flight_port", &self.flight_port)
            .field("credentials", &self.credentials)
            .field("mysql_ssl_mode", &self.mysql_ssl_mode)
            .finish_non_exhaustive()
    }
}

/// Checks that `host` is a bare host name or IP address (IPv6 without brackets): no
/// scheme, path, user info, port or white space.
pub fn check_host(host: &str) -> Result<(), ConnectionSettingsError> {
    if host.is_empty() {
        return Err(ConnectionSettingsError::EmptyHost);
    }
    if host.chars().any(|c| c.is_whitespace() || c.is_control())
        || host.contains(['/', '?', '#', '@', '[', ']', '\\', '%'])
    {
        return Err(ConnectionSettingsError::NotABareHost);
    }
    if host.contains(':') && host.parse::<std::net::Ipv6Addr>().is_err() {
        return Err(ConnectionSettingsError::HostWithPort);
    }
    let bracketed = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    };
    if Url::parse(&format!("http://{bracketed}:1")).is_err() {
        return Err(ConnectionSettingsError::NotABareHost);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(host: &str) -> Result<ConnectionSettings, ConnectionSettingsError> {
        ConnectionSettings::new(host, Credentials::new("root", ""))
    }

    #[test]
    fn a_mode_at_least_a_floor_is_never_weaker() {
        use SslMode::*;
        let modes = [Disabled, Preferred, Required, VerifyCa, VerifyIdentity];
        for (i, mode) in modes.into_iter().enumerate() {
            for (j, floor) in modes.into_iter().enumerate() {
                assert_eq!(
                    mode.at_least(floor),
                    modes[i.max(j)],
                    "{mode:?} at least {floor:?}"
                );
            }
        }
    }

    #[test]
    fn hosts_are_bare_names_or_addresses() {
        for good in ["fe", "fe.example.com", "10.0.0.1", "::1", "fe80::1"] {
            assert!(settings(good).is_ok(), "{good}");
        }
        for (bad, error) in [
            ("", ConnectionSettingsError::EmptyHost),
            ("http://fe", ConnectionSettingsError::NotABareHost),
            ("fe/path", ConnectionSettingsError::NotABareHost),
            ("user@fe", ConnectionSettingsError::NotABareHost),
            ("fe name", ConnectionSettingsError::NotABareHost),
            ("[::1]", ConnectionSettingsError::NotABareHost),
            ("fe:9030", ConnectionSettingsError::HostWithPort),
        ] {
            assert_eq!(settings(bad).unwrap_err(), error, "{bad}");
        }
    }

    #[test]
    fn the_http_url_brackets_an_ipv6_host_and_follows_the_tls_switch() {
        let mut fe = settings("::1").unwrap();
        fe.http_port = 18030;
        assert_eq!(fe.http_url().unwrap().as_str(), "http://[::1]:18030/");
        fe.http_secure = true;
        assert_eq!(fe.http_url().unwrap().as_str(), "https://[::1]:18030/");
        fe.host = "fe:1".into();
        assert_eq!(
            fe.http_url().unwrap_err(),
            ConnectionSettingsError::HostWithPort
        );
    }

    #[test]
    fn a_request_timeout_caps_the_connect_timeout_at_thirty_seconds() {
        let short = settings("fe")
            .unwrap()
            .with_request_timeout(Duration::from_secs(5));
        assert_eq!(short.connect_timeout, Duration::from_secs(5));
        assert_eq!(short.planning_timeout(), Duration::from_secs(15));
        let long = settings("fe")
            .unwrap()
            .with_request_timeout(Duration::from_secs(900));
        assert_eq!(long.connect_timeout, Duration::from_secs(30));
        assert_eq!(long.query_timeout, Duration::from_secs(900));
        let tiny = settings("fe")
            .unwrap()
            .with_request_timeout(Duration::from_millis(10));
        assert_eq!(tiny.planning_timeout(), Duration::from_secs(3));
    }

    #[test]
    fn an_empty_user_or_a_zero_port_is_refused_by_name() {
        assert_eq!(
            ConnectionSettings::new("fe", Credentials::new("", "pw")).unwrap_err(),
            ConnectionSettingsError::EmptyUser
        );
        let mut fe = settings("fe").unwrap();
        fe.flight_port = 0;
        assert_eq!(
            fe.check().unwrap_err(),
            ConnectionSettingsError::Port("flight_port")
        );
    }

    #[test]
    fn ssl_modes_parse_by_name_in_any_case() {
        for name in SslMode::NAMES {
            assert_eq!(SslMode::parse(name).map(SslMode::name), Some(name));
            assert_eq!(SslMode::parse(&name.to_uppercase()), SslMode::parse(name));
        }
        assert_eq!(SslMode::parse("verify-full"), None);
        assert!(SslMode::VerifyCa.verifies() && !SslMode::Required.verifies());
    }
}
