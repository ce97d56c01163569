//! A connection's links: its named options ([`ConnectionOptions`]) with the files they
//! name read, and a read's own options laid over them ([`ReadOptions::apply`]). What
//! `daft_doris.DorisConnection` holds; a Rust service with the same options builds the same
//! links.

use doris_connection::{ClientIdentity, ConnectionOptions, ConnectionSettings, Credentials};

use super::{ReadConnection, ReadOptions};
use crate::MySqlEndpoint;
use crate::error::ReadError;

/// A read laid over a connection ([`ConnectionLinks::new`]).
#[derive(Debug, Clone)]
pub struct ReadOverlay {
    /// The read's options.
    pub options: ReadOptions,
    /// How the read's connection came to be.
    pub origin: ReadConnection,
    /// The text of PyMySQL's `ssl_ca` (`mysql_options`), read once where the read was made
    /// ([`super::read_pem_file`]): trusted on the MySQL link alone.
    pub mysql_ca_pem: Option<String>,
}

/// The settings every endpoint of a connection is built from, the password left out.
///
/// ```
/// use doris_connection::{ConnectionOptions, OptionValue};
/// use doris_read::options::{ConnectionLinks, ReadConnection, ReadOptions, ReadOverlay};
///
/// let options = ConnectionOptions::new("fe.example").unwrap();
/// let read = ReadOptions::from_options([
///     ("transport".to_owned(), OptionValue::Text("mysql".into())),
///     ("query_timeout_seconds".to_owned(), OptionValue::Int(20)),
/// ])
/// .unwrap();
/// let overlay = ReadOverlay { options: read, origin: ReadConnection::Keywords, mysql_ca_pem: None };
/// let links = ConnectionLinks::new(&options, None, Some(overlay)).unwrap();
/// let fe = links.settings("s3cr3t");
/// assert_eq!(fe.query_timeout.as_secs(), 20);
/// assert_eq!(links.mysql(&fe).port, 9030);
/// ```
#[derive(Debug, Clone)]
pub struct ConnectionLinks {
    /// Host, ports, TLS, timeouts and the user (the password is empty here).
    settings: ConnectionSettings,
    /// The read laid over the connection (its Flight location rules and ADBC options).
    read: Option<ReadOptions>,
    /// The MySQL link's own client certificate (`mysql_options` `ssl_cert`/`ssl_key`),
    /// presented there instead of the connection's.
    mysql_client_identity: Option<ClientIdentity>,
}

impl ConnectionLinks {
    /// The links of `options`, whose CA file (`tls_ca_file`) holds `ca_pem` (read where
    /// the connection was first made, so that a copy sent to another process needs no
    /// file), with the client certificate files read now and `read` laid over them. A
    /// rule broken is [`ReadError::Config`] with its message.
    pub fn new(
        options: &ConnectionOptions,
        ca_pem: Option<String>,
        read: Option<ReadOverlay>,
    ) -> Result<Self, ReadError> {
        let rule = |e: doris_connection::ConnectionSettingsError| ReadError::Config(e.to_string());
        let mut settings = options.settings("").map_err(rule)?;
        settings.ca_pem = ca_pem.map(String::into_bytes);
        settings.client_identity = super::read_optional_client_identity(
            (
                "tls_client_cert_file",
                options.tls_client_cert_file.as_deref(),
            ),
            (
                "tls_client_key_file",
                options.tls_client_key_file.as_deref(),
            ),
        )?;
        let (read, mysql_client_identity) = match read {
            Some(overlay) => {
                overlay.options.apply(&mut settings, overlay.origin)?;
                settings.mysql_ca_pem = overlay.mysql_ca_pem.map(String::into_bytes);
                let identity = overlay.options.mysql_client_identity()?;
                (Some(overlay.options), identity)
            }
            None => (None, None),
        };
        settings.http_url().map_err(rule)?;
        Ok(Self {
            settings,
            read,
            mysql_client_identity,
        })
    }

    /// The settings with `password`.
    pub fn settings(&self, password: &str) -> ConnectionSettings {
        let mut settings = self.settings.clone();
        settings.credentials = Credentials::new(self.settings.credentials.user(), password);
        settings
    }

    /// The wait to connect and the wait for an answer (the read's where one is laid over
    /// the connection).
    pub fn timeouts(&self) -> (std::time::Duration, std::time::Duration) {
        (self.settings.connect_timeout, self.settings.query_timeout)
    }

    /// The read laid over the connection, if any.
    pub fn read(&self) -> Option<&ReadOptions> {
        self.read.as_ref()
    }

    /// The FE's MySQL endpoint of `settings` ([`ConnectionLinks::settings`]), with the
    /// read's own client certificate where it names one.
    pub fn mysql(&self, settings: &ConnectionSettings) -> MySqlEndpoint {
        let mut endpoint = MySqlEndpoint::from_settings(settings);
        if let Some(identity) = &self.mysql_client_identity {
            endpoint.client_identity = Some(identity.clone());
        }
        endpoint
    }

    /// The FE's Flight SQL endpoint of `settings`, with the read's location rules and ADBC
    /// options ([`ReadOptions::flight_endpoint`]).
    #[cfg(feature = "flight")]
    pub fn flight(
        &self,
        settings: &ConnectionSettings,
    ) -> Result<crate::FlightSqlEndpoint, ReadError> {
        match &self.read {
            Some(read) => read.flight_endpoint(settings),
            None => crate::FlightSqlEndpoint::from_settings(settings),
        }
    }
}
