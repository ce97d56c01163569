//! Connecting to the FE (or any MySQL-protocol server) the way Doris accepts.

use std::fmt;
use std::time::Duration;

use futures::FutureExt as _;
use secrecy::{ExposeSecret, SecretString};
use sqlx::Connection;
use sqlx::mysql::{MySqlConnectOptions, MySqlConnection};

use crate::error::ReadError;

/// Where and how to connect over the MySQL protocol. `Debug` hides the password.
#[derive(Clone)]
pub struct MySqlEndpoint {
    /// FE host.
    pub host: String,
    /// FE query port (Doris default 9030).
    pub port: u16,
    /// User.
    pub user: String,
    /// Password.
    pub password: SecretString,
    /// Database to connect to, if any.
    pub database: Option<String>,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Longest wait for the next row of a result (an idle timeout, so a long result that
    /// keeps flowing never times out).
    pub read_timeout: Duration,
    /// `SET time_zone` sent after connecting (literal; default `+00:00`).
    pub time_zone: Option<String>,
}

impl fmt::Debug for MySqlEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MySqlEndpoint")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("password", &"[REDACTED]")
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
        Self {
            host: host.into(),
            port,
            user: user.into(),
            password: SecretString::from(password.into()),
            database: None,
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(300),
            time_zone: Some("+00:00".into()),
        }
    }

    /// sqlx options that send nothing Doris rejects on connect: no `sql_mode` subquery
    /// (Doris: `Set statement does't support non-constant expr.`), no time zone, no
    /// `SET NAMES`.
    pub fn options(&self) -> MySqlConnectOptions {
        let mut o = MySqlConnectOptions::new()
            .host(&self.host)
            .port(self.port)
            .username(&self.user)
            .pipes_as_concat(false)
            .no_engine_substitution(false)
            .timezone(None)
            .set_names(false)
            .statement_cache_capacity(0);
        // An empty password must be sent as no password (an empty auth response); sqlx
        // would otherwise scramble the empty string.
        let password = self.password.expose_secret();
        if !password.is_empty() {
            o = o.password(password);
        }
        if let Some(db) = &self.database {
            o = o.database(db);
        }
        o
    }

    /// Connects, then sets the session time zone with a literal.
    pub async fn connect(&self) -> Result<MySqlConnection, ReadError> {
        if self.host.is_empty() {
            return Err(ReadError::Config("host must not be empty".into()));
        }
        // A malformed greeting can make sqlx's packet decoder panic (it slices past the
        // end): that is the server's fault, reported as a transport error, never a panic.
        let options = self.options();
        let connecting =
            std::panic::AssertUnwindSafe(MySqlConnection::connect_with(&options)).catch_unwind();
        let mut conn = tokio::time::timeout(self.connect_timeout, connecting)
            .await
            .map_err(|_| {
                ReadError::Timeout(format!(
                    "connecting to {}:{} took longer than {} s",
                    self.host,
                    self.port,
                    self.connect_timeout.as_secs()
                ))
            })?
            .map_err(|_| {
                ReadError::Transport(format!(
                    "the server at {}:{} sent a malformed handshake",
                    self.host, self.port
                ))
            })?
            .map_err(ReadError::from_sqlx)?;
        if let Some(tz) = &self.time_zone {
            if !tz
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | ':' | '/' | '_'))
            {
                return Err(ReadError::Config(format!("time zone {tz:?} is not valid")));
            }
            sqlx::raw_sql(&format!("SET time_zone = '{tz}'"))
                .execute(&mut conn)
                .await
                .map_err(ReadError::from_sqlx)?;
        }
        Ok(conn)
    }
}
