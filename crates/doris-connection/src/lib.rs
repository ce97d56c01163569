//! # doris-connection
//!
//! Where an Apache Doris cluster is and how to reach it, as plain data (no networking, no
//! async runtime, no Python). The client crates of this workspace build their endpoints
//! from these types: `doris_read::MySqlEndpoint::from_settings`,
//! `doris_read::FlightSqlEndpoint::from_settings`, `doris_plan::PlanEndpoint::from_settings`,
//! `doris_streamload::ClientConfig::from_settings`.
//!
//! | module | what it holds | entry points |
//! |---|---|---|
//! | settings | an FE's host, ports, TLS, credentials and timeouts, with Doris's defaults; the host rule | [`ConnectionSettings`], [`SslMode`], [`check_host`] |
//! | credentials | a user and a redacted password; HTTP Basic authorization | [`Credentials`] |
//! | identity | a client certificate and its redacted key (mutual TLS) | [`ClientIdentity`] |
//! | options | a connection as named options (a configuration file's, `daft_doris.DorisConnection`'s keywords), each checked by its rule | [`ConnectionOptions`], [`OptionValue`], [`RedirectPolicy`] |
//! | secret | where a password comes from: an environment variable or a file read where it is used, or the value | [`SecretRef`], [`SecretError`] |
//! | hosts | the servers a client may follow the FE to; the `/api/backends` parser | [`AddressAllowlist`], [`HostPort`], [`parse_backends`] |
//!
//! ```
//! use std::time::Duration;
//! use doris_connection::{AddressAllowlist, ConnectionSettings, Credentials, HostPort};
//!
//! // One description of the FE, every link's settings in it.
//! let fe = ConnectionSettings::new("fe.example", Credentials::new("loader", "s3cr3t"))
//!     .unwrap()
//!     .with_request_timeout(Duration::from_secs(120));
//! assert_eq!(fe.connect_timeout, Duration::from_secs(30));
//! assert!(!format!("{fe:?}").contains("s3cr3t"));
//!
//! // The BEs the FE reports are where its redirects may lead, and nowhere else.
//! let backends = doris_connection::parse_backends(
//!     br#"{"code":0,"data":{"backends":[{"ip":"10.0.0.7","http_port":8040,"is_alive":true}]}}"#,
//! )
//! .unwrap();
//! assert_eq!(backends, [HostPort::new("10.0.0.7", 8040)]);
//! ```
//!
//! ## Secrets
//!
//! [`Credentials`] keep the password in a [`secrecy::SecretString`] (the crate is
//! re-exported as [`secrecy`]); `Debug` prints it as `[REDACTED]`, and no error of this
//! crate holds it. [`SecretRef`] names where a password comes from (an environment variable
//! or a file, read in each process that connects, or the value itself), so a task sent to
//! another process can carry the name instead of the value.

mod credentials;
mod hosts;
mod identity;
mod options;
mod secret;
mod settings;

/// The secret type [`Credentials`] hands out ([`Credentials::basic_authorization`]).
pub use secrecy;

pub use credentials::Credentials;
pub use doris_sql::ErrorKind;
pub use hosts::{AddressAllowlist, BackendsAnswerError, HostPort, parse_backends};
pub use identity::{ClientIdentity, IdentityError};
pub use options::{ConnectionOptions, OptionValue, RedirectPolicy};
pub use secret::{MAX_SECRET_FILE_BYTES, SecretError, SecretRef};
pub use settings::{ConnectionSettings, ConnectionSettingsError, SslMode, check_host};

/// The README's example, run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
