//! The transport options a caller passes by name, as connectors for Python take them:
//! `mysql_options` (PyMySQL's `connect()` keywords) and `flight_options` (the ADBC Flight
//! SQL driver's keys). Each key either maps onto this crate's clients with the same meaning
//! ([`MySqlOptions`], [`FlightOptions`]) or is refused with an error that names the key and
//! what replaces it; a value is never shown (a secret may have been pasted into the wrong
//! key).
//!
//! ```
//! use doris_read::options::{FlightOptions, MySqlOptions, OptionValue};
//! use doris_read::SslMode;
//!
//! // PyMySQL's `ssl_verify_identity=True` with a CA file is `verify_identity` here.
//! let mysql = MySqlOptions::parse([
//!     ("ssl_ca".to_owned(), OptionValue::Text("/etc/doris/ca.pem".into())),
//!     ("ssl_verify_identity".to_owned(), OptionValue::Bool(true)),
//! ])
//! .unwrap();
//! assert_eq!(mysql.ssl_mode, Some(SslMode::VerifyIdentity));
//! assert_eq!(mysql.ssl_ca.as_deref(), Some("/etc/doris/ca.pem"));
//!
//! // Settings that have an argument of their own are refused, naming it.
//! let refused = MySqlOptions::parse([("port".to_owned(), OptionValue::Int(9030))]);
//! assert!(refused.unwrap_err().to_string().contains("use mysql_port"));
//!
//! // PyMySQL's timeouts (seconds) are the link's own.
//! let timed = MySqlOptions::parse([("read_timeout".to_owned(), OptionValue::Int(5))]).unwrap();
//! assert_eq!(timed.query_timeout, Some(std::time::Duration::from_secs(5)));
//!
//! // ADBC's message-size option is the Flight client's decoding limit.
//! let flight = FlightOptions::parse([(
//!     "adbc.flight.sql.client_option.with_max_msg_size".to_owned(),
//!     "67108864".to_owned(),
//! )])
//! .unwrap();
//! assert_eq!(flight.max_message_bytes, Some(64 << 20));
//! ```
//!
//! [`read_pem_file`] reads a CA file with a size cap, for the options (and arguments) that
//! name one; [`read_client_identity`] a client certificate and its key.

#[cfg(feature = "flight")]
mod flight;
mod links;
mod mysql;
mod read;
mod unreadable;

use std::collections::BTreeMap;
use std::io::Read as _;

#[cfg(feature = "flight")]
pub use flight::FlightOptions;
#[cfg(feature = "flight")]
pub(crate) use flight::MAX_MESSAGE_SIZE_KEY;
pub use links::{ConnectionLinks, ReadOverlay};
pub use mysql::MySqlOptions;
pub use read::{ReadConnection, ReadOptions};
pub use unreadable::UnreadableColumns;

/// `timestamp_units` by name (`microseconds`, the default, or `by_precision`); another
/// name is [`ReadError::Config`] listing them.
///
/// ```
/// use doris_read::{TimestampUnits, options::timestamp_units};
/// assert_eq!(timestamp_units("by_precision").unwrap(), TimestampUnits::ByPrecision);
/// assert!(timestamp_units("ms").is_err());
/// ```
pub fn timestamp_units(name: &str) -> Result<doris_sql::TimestampUnits, ReadError> {
    doris_sql::TimestampUnits::parse(name).ok_or_else(|| {
        ReadError::Config(format!(
            "timestamp_units must be one of {}",
            doris_sql::TimestampUnits::NAMES.join(", ")
        ))
    })
}

use crate::error::ReadError;

/// One option's value as a caller hands it over (shared with the connection's and the
/// write's options: a Python binding converts `None`, `bool`, `int`, `float`, `str`,
/// lists and `dict`s into these).
pub use doris_connection::OptionValue;

/// Largest PEM file [`read_pem_file`] reads, in bytes.
pub const MAX_PEM_FILE_BYTES: u64 = 1 << 20;

/// The PEM text of the CA file at `path`: at most [`MAX_PEM_FILE_BYTES`], holding at least
/// one certificate. `argument` names where the path came from (`tls_ca_file`,
/// `mysql_options ssl_ca`) in the error, which gives the path and the reason, never the
/// file's content.
pub fn read_pem_file(argument: &str, path: &str) -> Result<String, ReadError> {
    let text = String::from_utf8_lossy(&read_capped(argument, path)?).into_owned();
    if !holds_certificate(&text) {
        return Err(ReadError::Config(format!(
            "{argument} {path} holds no PEM certificate"
        )));
    }
    Ok(text)
}

/// The client certificate chain at `cert_path` and its private key at `key_path` (PEM
/// files, each at most [`MAX_PEM_FILE_BYTES`]), checked: the chain holds a certificate and
/// the key is an unencrypted private key. `cert_argument` and `key_argument` name where
/// the paths came from (`tls_client_cert_file`, `mysql_options ssl_key`); an error gives
/// the path and the reason, never the key's text.
///
/// ```
/// let e = doris_read::options::read_client_identity(
///     "ssl_cert", "/nonexistent/cert.pem", "ssl_key", "/nonexistent/key.pem",
/// )
/// .unwrap_err();
/// assert!(e.to_string().contains("ssl_cert /nonexistent/cert.pem cannot be read"));
/// ```
pub fn read_client_identity(
    cert_argument: &str,
    cert_path: &str,
    key_argument: &str,
    key_path: &str,
) -> Result<doris_connection::ClientIdentity, ReadError> {
    use doris_connection::IdentityError;
    let chain = String::from_utf8_lossy(&read_capped(cert_argument, cert_path)?).into_owned();
    // The file's buffer becomes the key's (no copy is left behind); PEM is ASCII.
    let key = String::from_utf8(read_capped(key_argument, key_path)?).map_err(|_| {
        ReadError::Config(format!("{key_argument} {key_path}: {}", IdentityError::Key))
    })?;
    let identity = doris_connection::ClientIdentity::from_pem(chain, key);
    identity.to_der().map_err(|e| {
        let (argument, path) = match e {
            IdentityError::Certificate => (cert_argument, cert_path),
            _ => (key_argument, key_path),
        };
        ReadError::Config(format!("{argument} {path}: {e}"))
    })?;
    Ok(identity)
}

/// The client certificate and key given as `(argument, path)` pairs, each `None` when not
/// given: both read as [`read_client_identity`] reads them, or neither given (`None`); one
/// without the other is refused, naming both.
///
/// ```
/// use doris_read::options::read_optional_client_identity;
/// assert!(read_optional_client_identity(("cert", None), ("key", None)).unwrap().is_none());
/// let e = read_optional_client_identity(("cert", Some("/c.pem")), ("key", None)).unwrap_err();
/// assert!(e.to_string().contains("cert and key go together: give both or neither"));
/// ```
pub fn read_optional_client_identity(
    (cert_argument, cert_path): (&str, Option<&str>),
    (key_argument, key_path): (&str, Option<&str>),
) -> Result<Option<doris_connection::ClientIdentity>, ReadError> {
    match (cert_path, key_path) {
        (None, None) => Ok(None),
        (Some(cert), Some(key)) => {
            read_client_identity(cert_argument, cert, key_argument, key).map(Some)
        }
        _ => Err(ReadError::Config(format!(
            "{cert_argument} and {key_argument} go together: give both or neither"
        ))),
    }
}

/// The bytes of the file at `path`, at most [`MAX_PEM_FILE_BYTES`]; `argument` names it in
/// an error.
fn read_capped(argument: &str, path: &str) -> Result<Vec<u8>, ReadError> {
    if path.is_empty() {
        return Err(ReadError::Config(format!(
            "{argument} must be the path of a PEM file"
        )));
    }
    let mut data = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_PEM_FILE_BYTES + 1).read_to_end(&mut data))
        .map_err(|e| {
            ReadError::Config(format!(
                "{argument} {path} cannot be read: {}",
                io_reason(&e)
            ))
        })?;
    if data.len() as u64 > MAX_PEM_FILE_BYTES {
        return Err(ReadError::Config(format!(
            "{argument} {path} is larger than {MAX_PEM_FILE_BYTES} bytes"
        )));
    }
    Ok(data)
}

/// Whether `pem` holds a PEM certificate block.
fn holds_certificate(pem: &str) -> bool {
    pem.contains("-----BEGIN CERTIFICATE-----")
}

/// What went wrong opening or reading a file, in the words `strerror` uses.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "Permission denied".into(),
        std::io::ErrorKind::IsADirectory => "Is a directory".into(),
        _ => e.to_string(),
    }
}

/// Refuses the keys of `options` that a read sets through arguments of its own
/// (`reserved`: all of them at once, `<what> must not set k1 (instead), …`) or that the
/// transport cannot honour (`refused`: the first one, `<what> <key> is refused: <why>`).
fn refuse_keys<V>(
    what: &str,
    options: &BTreeMap<String, V>,
    reserved: &[(&str, &str)],
    refused: &[(&str, &str)],
) -> Result<(), ReadError> {
    let listed: Vec<String> = reserved
        .iter()
        .filter(|(key, _)| options.contains_key(*key))
        .map(|(key, instead)| format!("{key} ({instead})"))
        .collect();
    if !listed.is_empty() {
        return Err(ReadError::Config(format!(
            "{what} must not set {}",
            listed.join(", ")
        )));
    }
    match refused.iter().find(|(key, _)| options.contains_key(*key)) {
        Some((key, why)) => Err(ReadError::Config(format!("{what} {key} is refused: {why}"))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_pem_file_is_read_with_a_cap_and_must_hold_a_certificate() {
        let dir = std::env::temp_dir().join(format!("doris-read-pem-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("ca.pem");
        std::fs::write(
            &good,
            "-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let text = read_pem_file("tls_ca_file", good.to_str().unwrap()).unwrap();
        assert!(text.starts_with("-----BEGIN CERTIFICATE-----"));

        let key = dir.join("key.pem");
        std::fs::write(&key, "-----BEGIN PRIVATE KEY-----\nsecret-bytes\n").unwrap();
        let e = read_pem_file("tls_ca_file", key.to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("holds no PEM certificate"), "{e}");
        assert!(!e.to_string().contains("secret-bytes"), "{e}");

        let big = dir.join("big.pem");
        std::fs::write(&big, vec![b'a'; MAX_PEM_FILE_BYTES as usize + 1]).unwrap();
        let e = read_pem_file("tls_ca_file", big.to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("larger than"), "{e}");

        let e = read_pem_file("ssl_ca", dir.join("missing.pem").to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("No such file or directory"), "{e}");
        assert!(read_pem_file("ssl_ca", "").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
