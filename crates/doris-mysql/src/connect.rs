//! Connecting to the FE (or any MySQL-protocol server) the way Doris accepts.

use std::fmt;
use std::time::Duration;

use doris_connection::{ClientIdentity, ConnectionSettings, Credentials, SslMode};
use futures::FutureExt as _;
use sqlx::mysql::{MySqlConnectOptions, MySqlConnection, MySqlSslMode};
use sqlx::{ConnectOptions as _, Connection};

use crate::error::MySqlError;
use crate::guard::{CutReason, Guard};

/// The smallest packet cap: a greeting or a column definition must fit.
const MIN_PACKET_BYTES: usize = 1024;

/// Where and how to connect over the MySQL protocol. `Debug` hides the password.
#[derive(Clone)]
pub struct MySqlEndpoint {
    /// FE host.
    pub host: String,
    /// FE query port (Doris default 9030).
    pub port: u16,
    /// The user and password ([`doris_connection::Credentials`]: `Debug` hides the password).
    pub credentials: Credentials,
    /// Database to connect to, if any.
    pub database: Option<String>,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Longest wait for the next row of a result (an idle timeout, so a long result that
    /// keeps flowing never times out).
    pub read_timeout: Duration,
    /// `SET time_zone` sent after connecting (literal; default `+00:00`).
    pub time_zone: Option<String>,
    /// TLS on the MySQL link (default [`SslMode::Preferred`], as MySQL clients).
    pub ssl_mode: SslMode,
    /// CA certificates (PEM): with `verify_identity`, trusted besides the web PKI roots;
    /// with `verify_ca`, the only ones trusted (and required).
    pub ssl_ca_pem: Option<Vec<u8>>,
    /// The server's RSA public key (PEM, `-----BEGIN PUBLIC KEY-----`), pinned: when a
    /// server on an unverified link asks for `caching_sha2_password` full authentication,
    /// the password is encrypted to this key instead of one the server sends (without it,
    /// such a server is refused). MySQL's `--server-public-key-path`.
    pub server_public_key_pem: Option<Vec<u8>>,
    /// The client certificate and key presented when the server asks for one (mutual
    /// TLS; MySQL's `--ssl-cert`/`--ssl-key`). Only a TLS link presents it.
    pub client_identity: Option<ClientIdentity>,
    /// The largest packet (a row, in a result) the server may send; a larger one closes
    /// the link with [`MySqlError::Transport`] naming the cap, before its bytes are read
    /// (MySQL's `max_allowed_packet`; default
    /// [`ConnectionSettings::DEFAULT_MYSQL_MAX_PACKET_BYTES`]).
    pub max_packet_bytes: usize,
}

impl fmt::Debug for MySqlEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MySqlEndpoint")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("credentials", &self.credentials)
            .field("database", &self.database)
            .finish_non_exhaustive()
    }
}

impl MySqlEndpoint {
    /// An endpoint with defaults: 10 s connect timeout, 300 s read timeout, UTC session.
    pub fn new(
        host: impl Into<String>,
        port: u16,
        user: impl Into<String>,
        password: impl Into<String>,
    ) -> Self {
        Self::with_credentials(host, port, Credentials::new(user, password))
    }

    /// The same defaults, with credentials a service already holds.
    pub fn with_credentials(host: impl Into<String>, port: u16, credentials: Credentials) -> Self {
        Self {
            host: host.into(),
            port,
            credentials,
            database: None,
            connect_timeout: ConnectionSettings::DEFAULT_CONNECT_TIMEOUT,
            read_timeout: ConnectionSettings::DEFAULT_QUERY_TIMEOUT,
            time_zone: Some("+00:00".into()),
            ssl_mode: SslMode::default(),
            ssl_ca_pem: None,
            server_public_key_pem: None,
            client_identity: None,
            max_packet_bytes: ConnectionSettings::DEFAULT_MYSQL_MAX_PACKET_BYTES,
        }
    }

    /// The FE's MySQL endpoint as `settings` describe it: host, `mysql_port`, credentials,
    /// TLS mode, trusted CAs, pinned server key and client certificate, connect timeout,
    /// `query_timeout` as the wait for the next row, and the packet cap.
    pub fn from_settings(settings: &ConnectionSettings) -> Self {
        let mut endpoint = Self::with_credentials(
            settings.host.clone(),
            settings.mysql_port,
            settings.credentials.clone(),
        );
        endpoint.ssl_mode = settings.mysql_ssl_mode;
        // The MySQL link's own CA (1.1's `mysql_options["ssl_ca"]`) replaces the
        // connection's there, and nowhere else.
        endpoint.ssl_ca_pem = settings
            .mysql_ca_pem
            .clone()
            .or_else(|| settings.ca_pem.clone());
        endpoint.server_public_key_pem = settings.mysql_server_public_key_pem.clone();
        endpoint.client_identity = settings.client_identity.clone();
        endpoint.connect_timeout = settings.connect_timeout;
        endpoint.read_timeout = settings.query_timeout;
        endpoint.max_packet_bytes = settings.mysql_max_packet_bytes;
        endpoint
    }

    /// sqlx options that send nothing Doris rejects on connect: no `sql_mode` subquery
    /// (Doris: `Set statement does't support non-constant expr.`), no time zone, no
    /// `SET NAMES`. sqlx's statement logging is off: it would log every statement's text
    /// (literals, a job's S3 credentials) at DEBUG, and slow ones at WARN.
    pub fn options(&self) -> MySqlConnectOptions {
        let mut o = MySqlConnectOptions::new()
            .host(&self.host)
            .port(self.port)
            .username(self.credentials.user())
            .pipes_as_concat(false)
            .no_engine_substitution(false)
            .timezone(None)
            .set_names(false)
            .statement_cache_capacity(0)
            .disable_statement_logging()
            .ssl_mode(match self.ssl_mode {
                SslMode::Disabled => MySqlSslMode::Disabled,
                SslMode::Preferred => MySqlSslMode::Preferred,
                SslMode::Required => MySqlSslMode::Required,
                SslMode::VerifyCa => MySqlSslMode::VerifyCa,
                SslMode::VerifyIdentity => MySqlSslMode::VerifyIdentity,
            });
        if let Some(pem) = &self.ssl_ca_pem {
            o = o.ssl_ca_from_pem(pem.clone());
        }
        if let Some(identity) = &self.client_identity {
            use secrecy::ExposeSecret as _;
            o = o
                .ssl_client_cert_from_pem(identity.cert_chain_pem().as_bytes())
                .ssl_client_key_from_pem(identity.key_pem().expose_secret().as_bytes());
        }
        // An empty password must be sent as no password (an empty auth response); sqlx
        // would otherwise scramble the empty string.
        if self.credentials.has_password() {
            o = o.password(self.credentials.expose_password());
        }
        if let Some(db) = &self.database {
            o = o.database(db);
        }
        o
    }

    /// Connects, then sets the session time zone with a literal.
    ///
    /// The link goes through the authentication guard, which owns its TLS, refuses what
    /// would reveal the password to a server nobody verified, and caps the server's
    /// packets at [`MySqlEndpoint::max_packet_bytes`].
    pub async fn connect(&self) -> Result<MySqlConnection, MySqlError> {
        self.connect_watched().await.map(|(conn, _)| conn)
    }

    /// [`MySqlEndpoint::connect`], with the reason the guard may later cut the link for
    /// ([`CutReason::explain`]: the error a caller reports when sqlx loses the link).
    pub async fn connect_watched(&self) -> Result<(MySqlConnection, CutReason), MySqlError> {
        if self.host.is_empty() {
            return Err(MySqlError::Config("host must not be empty".into()));
        }
        if let Some(identity) = &self.client_identity {
            // Checked here, where the message can name it (sqlx's TLS error would not).
            identity
                .to_der()
                .map_err(|e| MySqlError::Config(format!("the MySQL link's TLS: {e}")))?;
        }
        let most = ConnectionSettings::MAX_MYSQL_MAX_PACKET_BYTES;
        if !(MIN_PACKET_BYTES..=most).contains(&self.max_packet_bytes) {
            return Err(MySqlError::Config(format!(
                "max_allowed_packet must be from {MIN_PACKET_BYTES} to {most} bytes"
            )));
        }
        // Every link goes through the guard, which owns its TLS, refuses what would reveal
        // the password (`guard`) and caps the server's packets; sqlx speaks plain MySQL to
        // it on a private Unix socket.
        let guard = Guard::start(self).await?;
        let cut = guard.cut.clone();
        let options = self
            .options()
            .socket(&guard.socket)
            .ssl_mode(MySqlSslMode::Disabled);
        // A malformed greeting can make sqlx's packet decoder panic (it slices past the
        // end): that is the server's fault, reported as a transport error, never a panic.
        let connecting =
            std::panic::AssertUnwindSafe(MySqlConnection::connect_with(&options)).catch_unwind();
        let connected = tokio::time::timeout(self.connect_timeout, connecting)
            .await
            .map_err(|_| {
                MySqlError::Timeout(format!(
                    "connecting to {}:{} took longer than {} s",
                    self.host,
                    self.port,
                    self.connect_timeout.as_secs()
                ))
            })
            .and_then(|caught| {
                caught.map_err(|_| {
                    MySqlError::Transport(format!(
                        "the server at {}:{} sent a malformed handshake",
                        self.host, self.port
                    ))
                })
            })
            .and_then(|result| result.map_err(MySqlError::from_sqlx));
        let mut conn = match connected {
            Ok(conn) => conn,
            // The guard's reason (a refusal, the server's TLS, the server unreachable)
            // says more than sqlx's closed link to the relay.
            Err(e) => return Err(guard.refusal(Duration::from_secs(2)).await.unwrap_or(e)),
        };
        if let Some(tz) = &self.time_zone {
            if !tz
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | ':' | '/' | '_'))
            {
                return Err(MySqlError::Config(format!("time zone {tz:?} is not valid")));
            }
            // Through `Executor::execute` (a boxed `Send` future), not `RawSql::execute`,
            // whose generic future the compiler cannot prove `Send` for every lifetime: a
            // read must be spawnable.
            // Bounded like every statement: a malformed answer that makes sqlx's decoder
            // panic is the server's fault, a transport error here, never a panic.
            let statement = format!("SET time_zone = '{tz}'");
            crate::error::bounded(self.connect_timeout, "setting the time zone", async {
                sqlx::Executor::execute(&mut conn, sqlx::raw_sql(&statement))
                    .await
                    .map_err(|e| cut.explain(e))
            })
            .await?;
        }
        Ok((conn, cut))
    }
}
