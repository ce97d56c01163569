//! `mysql_options`: PyMySQL's `connect()` keywords, as code written for PyMySQL-based
//! connectors passes them, mapped onto [`crate::MySqlEndpoint`].
//!
//! The TLS keywords keep PyMySQL's meaning, one way stricter: where PyMySQL asks for TLS,
//! the link requires it (PyMySQL falls back to plain text when the server offers none).
//!
//! | keys | here |
//! |---|---|
//! | `ssl_disabled=True` | [`SslMode::Disabled`] |
//! | `ssl_ca`, `ssl_verify_cert`, `ssl_verify_identity` | `verify_identity` with `ssl_verify_identity=True`, else `verify_ca` with `ssl_verify_cert=True`, else `required` |
//! | `ssl={"ca": …, "check_hostname": …}` | with `ca`: `verify_identity` (`check_hostname=False`: `verify_ca`); without: `required` |
//! | `ssl_mode` | the mode by name (at least as strong as the keys above ask) |
//! | `ssl_cert`, `ssl_key` (or `ssl={"cert": …, "key": …}`) | the client certificate chain and its unencrypted key (PEM files, both or neither), presented when the server asks for one ([`crate::MySqlEndpoint::client_identity`]); they ask for TLS (`required`) unless another key asks for more |
//! | `charset` | `utf8mb4` or `utf8` only (the connector reads UTF-8) |
//! | `connect_timeout`, `read_timeout`, `write_timeout` | seconds: the link's connect timeout, and its query timeout (the larger of the two) ([`MySqlOptions::connect_timeout`], [`MySqlOptions::query_timeout`]) |
//! | `autocommit` | `True` only (a read runs in autocommit mode) |
//! | `max_allowed_packet` | bytes: the largest packet (row) the server may send, as MySQL's client reads it (1 KiB to 1 GiB; default 64 MiB) ([`MySqlOptions::max_packet_bytes`]) |
//!
//! The settings a read takes as arguments of its own (host, port, user, password,
//! database, timeouts, …) are refused naming the argument; keys this transport cannot honour
//! (an encrypted key, compression, `init_command`, …) are refused saying why.

use std::collections::BTreeMap;

use doris_connection::{ConnectionSettings, SslMode};

use super::{OptionValue, refuse_keys};
use crate::error::ReadError;

/// Keys a read sets through arguments of its own, each with what to use instead.
const RESERVED: &[(&str, &str)] = &[
    ("binary_prefix", "the connector decodes text rows itself"),
    ("conv", "the connector decodes text rows itself"),
    ("cursorclass", "the connector decodes text rows itself"),
    ("database", "use database"),
    ("db", "use database"),
    ("defer_connect", "the connector connects when a task runs"),
    ("host", "use host"),
    ("password", "use password"),
    ("passwd", "use password"),
    ("port", "use mysql_port"),
    ("read_default_file", "pass the settings as arguments"),
    ("read_default_group", "pass the settings as arguments"),
    (
        "unix_socket",
        "Doris is reached over TCP: use host and mysql_port",
    ),
    ("use_unicode", "text is always UTF-8"),
    ("user", "use username"),
];

const ENCRYPTED_KEY: &str = "an encrypted client key is not read: give ssl_key an unencrypted PEM key \
     (openssl pkey -in key.pem -out plain.pem)";

/// PyMySQL keys this transport cannot honour, each with the reason.
const REFUSED: &[(&str, &str)] = &[
    (
        "init_command",
        "statements run on every connection are not pushed down safely \
         (use unsafe_where_sql for a trusted filter)",
    ),
    ("sql_mode", "session variables are not set from options"),
    ("compress", "Doris's MySQL protocol offers no compression"),
    ("local_infile", "a read loads no local file"),
    ("ssl_key_password", ENCRYPTED_KEY),
    (
        "auth_plugin_map",
        "Doris authenticates with mysql_native_password",
    ),
    (
        "client_flag",
        "the connector sets the protocol flags itself",
    ),
    ("program_name", "no connection attributes are sent"),
    (
        "bind_address",
        "the operating system chooses the local address",
    ),
    ("named_pipe", "Doris is reached over TCP"),
];

/// How a PEM public key begins (what `openssl pkey -pubout` writes).
const PUBLIC_KEY_PEM: &str = "-----BEGIN PUBLIC KEY-----";

/// The keys [`MySqlOptions::parse`] maps.
const SUPPORTED: &[&str] = &[
    "ssl",
    "ssl_mode",
    "ssl_ca",
    "ssl_verify_cert",
    "ssl_verify_identity",
    "ssl_disabled",
    "ssl_cert",
    "ssl_key",
    "charset",
    "server_public_key",
    "connect_timeout",
    "read_timeout",
    "write_timeout",
    "autocommit",
    "max_allowed_packet",
];

/// What `mysql_options` ask of the MySQL link.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MySqlOptions {
    /// The TLS mode the options ask for (`None`: the connection's own setting).
    pub ssl_mode: Option<SslMode>,
    /// A CA file (PEM) to trust, read with [`super::read_pem_file`] where the read is
    /// configured.
    pub ssl_ca: Option<String>,
    /// PyMySQL's `server_public_key`: the server's RSA public key (PEM text), pinned
    /// ([`crate::MySqlEndpoint::server_public_key_pem`]).
    pub server_public_key: Option<String>,
    /// A client certificate chain file and its key file (PEM), read with
    /// [`super::read_client_identity`] where the read is configured.
    pub ssl_cert_and_key: Option<(String, String)>,
    /// PyMySQL's `connect_timeout` (seconds): the link's connect timeout.
    pub connect_timeout: Option<std::time::Duration>,
    /// PyMySQL's `read_timeout` and `write_timeout` (seconds; the larger when both are
    /// given): how long the link waits for a statement's answer (the query timeout).
    pub query_timeout: Option<std::time::Duration>,
    /// `max_allowed_packet` (bytes): the largest packet the server may send
    /// ([`crate::MySqlEndpoint::max_packet_bytes`]).
    pub max_packet_bytes: Option<usize>,
}

impl MySqlOptions {
    /// Maps PyMySQL keywords; the first problem found is a [`ReadError::Config`] naming
    /// the key (`None` values count as not given, except for keys refused outright).
    pub fn parse(
        pairs: impl IntoIterator<Item = (String, OptionValue)>,
    ) -> Result<Self, ReadError> {
        let mut options: BTreeMap<String, OptionValue> = pairs.into_iter().collect();
        refuse_keys("mysql_options", &options, RESERVED, REFUSED)?;
        let unknown: Vec<&str> = options
            .keys()
            .map(String::as_str)
            .filter(|k| !SUPPORTED.contains(k))
            .collect();
        if !unknown.is_empty() {
            return Err(config(format!(
                "mysql_options {} are not supported by the native MySQL transport \
                 (supported: {})",
                unknown.join(", "),
                SUPPORTED.join(", ")
            )));
        }
        options.retain(|_, v| *v != OptionValue::Null);
        // PyMySQL's timeouts, in seconds, onto the link's own; `autocommit=True` is how a
        // read runs anyway, `False` would hold a transaction open for nothing.
        let connect_timeout = seconds(&mut options, "connect_timeout")?;
        let query_timeout = match (
            seconds(&mut options, "read_timeout")?,
            seconds(&mut options, "write_timeout")?,
        ) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let max_packet_bytes = match options.remove("max_allowed_packet") {
            None => None,
            Some(OptionValue::Int(n))
                if usize::try_from(n).is_ok_and(|n| {
                    (1024..=ConnectionSettings::MAX_MYSQL_MAX_PACKET_BYTES).contains(&n)
                }) =>
            {
                usize::try_from(n).ok()
            }
            Some(_) => {
                return Err(config(format!(
                    "mysql_options max_allowed_packet must be a number of bytes from 1024 to {}",
                    ConnectionSettings::MAX_MYSQL_MAX_PACKET_BYTES
                )));
            }
        };
        if let Some(autocommit) = flag(&mut options, "autocommit")?
            && !autocommit
        {
            return Err(config(
                "mysql_options autocommit=False is refused: a read runs in autocommit mode, \
                 and a transaction held open would only keep locks"
                    .into(),
            ));
        }
        if let Some(charset) = options.remove("charset")
            && !matches!(&charset, OptionValue::Text(c) if c == "utf8mb4" || c == "utf8")
        {
            return Err(config("mysql_options charset is fixed to utf8mb4".into()));
        }
        let named = match options.remove("ssl_mode") {
            None => None,
            Some(OptionValue::Text(mode)) if SslMode::parse(&mode).is_some() => {
                SslMode::parse(&mode)
            }
            Some(_) => {
                return Err(config(format!(
                    "ssl_mode must be one of {}",
                    SslMode::NAMES.join(", ")
                )));
            }
        };
        let server_public_key = match options.remove("server_public_key") {
            None => None,
            Some(OptionValue::Text(pem)) if pem.trim_start().starts_with(PUBLIC_KEY_PEM) => {
                Some(pem)
            }
            Some(_) => {
                return Err(config(format!(
                    "mysql_options server_public_key must be the server's public key in PEM \
                     ({PUBLIC_KEY_PEM} …), as PyMySQL takes it"
                )));
            }
        };
        let disabled = flag(&mut options, "ssl_disabled")?;
        let verify_cert = flag(&mut options, "ssl_verify_cert")?;
        let verify_identity = flag(&mut options, "ssl_verify_identity")?;
        let ca = match options.remove("ssl_ca") {
            None => None,
            Some(value) => Some(path("mysql_options ssl_ca", value)?),
        };
        let cert_and_key = cert_and_key(
            "mysql_options ssl_cert and ssl_key",
            options.remove("ssl_cert"),
            options.remove("ssl_key"),
        )?;
        let ssl = match options.remove("ssl") {
            None => None,
            Some(OptionValue::Map(map)) => Some(ssl_mapping(map)?),
            Some(other) => {
                return Err(config(format!(
                    "mysql_options ssl must be a mapping such as {{\"ca\": path}}, not {} \
                     (an ssl.SSLContext cannot travel to the workers; use ssl_mode and ssl_ca)",
                    other.kind()
                )));
            }
        };
        let keywords = ca.is_some()
            || verify_cert.is_some()
            || verify_identity.is_some()
            || cert_and_key.is_some();
        if keywords && ssl.is_some() {
            return Err(config(
                "mysql_options sets both ssl and ssl_ca/ssl_cert/ssl_key/ssl_verify_*: use one \
                 of them"
                    .into(),
            ));
        }
        let derived = if keywords {
            Some(if verify_identity == Some(true) {
                SslMode::VerifyIdentity
            } else if verify_cert == Some(true) {
                SslMode::VerifyCa
            } else {
                SslMode::Required
            })
        } else {
            ssl.as_ref().map(|s| s.mode)
        };
        let ssl_cert_and_key =
            cert_and_key.or_else(|| ssl.as_ref().and_then(|s| s.cert_and_key.clone()));
        let ssl_ca = ca.or_else(|| ssl.and_then(|s| s.ca));
        let derived = match (disabled, derived) {
            (Some(true), Some(_)) => {
                return Err(config(
                    "mysql_options ssl_disabled=True contradicts its other TLS keys".into(),
                ));
            }
            (Some(true), None) => Some(SslMode::Disabled),
            (_, derived) => derived,
        };
        // A named mode may be stronger than the keys ask (`verify_identity` with an
        // `ssl_ca`), never weaker, and only `disabled` goes with `ssl_disabled=True`.
        let strength = |m: SslMode| SslMode::NAMES.iter().position(|n| *n == m.name());
        let ssl_mode = match (named, derived) {
            (Some(named), Some(derived))
                if (derived == SslMode::Disabled) != (named == SslMode::Disabled)
                    || strength(named) < strength(derived) =>
            {
                return Err(config(format!(
                    "mysql_options ssl_mode {} contradicts its other TLS keys, which ask for {}",
                    named.name(),
                    derived.name()
                )));
            }
            (named, derived) => named.or(derived),
        };
        Ok(Self {
            ssl_mode,
            ssl_ca,
            server_public_key,
            ssl_cert_and_key,
            connect_timeout,
            query_timeout,
            max_packet_bytes,
        })
    }
    /// These options under a connection whose MySQL link already settled on `floor` (a
    /// catalog's read): the mode they ask for is raised to `floor` when weaker (an `ssl_ca`
    /// alone, PyMySQL's `required`, stays `verify_identity` under such a connection), and
    /// `disabled` under any TLS is refused: a read option never lowers the connection's TLS.
    pub fn at_least(mut self, floor: SslMode) -> Result<Self, ReadError> {
        if self.ssl_mode == Some(SslMode::Disabled) && floor != SslMode::Disabled {
            return Err(config(format!(
                "mysql_options cannot lower the connection's TLS mode ({}) to disabled",
                floor.name()
            )));
        }
        self.ssl_mode = Some(self.ssl_mode.map_or(floor, |asked| asked.at_least(floor)));
        Ok(self)
    }
}

/// A PyMySQL timeout in seconds (a positive number, at most a day), removed from
/// `options`.
fn seconds(
    options: &mut BTreeMap<String, OptionValue>,
    key: &str,
) -> Result<Option<std::time::Duration>, ReadError> {
    let value = match options.remove(key) {
        None => return Ok(None),
        Some(OptionValue::Int(n)) => n as f64,
        Some(OptionValue::Float(x)) => x,
        Some(_) => {
            return Err(config(format!(
                "mysql_options {key} must be a number of seconds"
            )));
        }
    };
    if !(value > 0.0 && value <= 86_400.0) {
        return Err(config(format!(
            "mysql_options {key} must be a positive number of seconds, at most a day"
        )));
    }
    Ok(Some(std::time::Duration::from_secs_f64(value)))
}

/// PyMySQL's `ssl={…}`, read.
struct SslMapping {
    mode: SslMode,
    ca: Option<String>,
    cert_and_key: Option<(String, String)>,
}

/// A client certificate file and its key file: both or neither.
fn cert_and_key(
    what: &str,
    cert: Option<OptionValue>,
    key: Option<OptionValue>,
) -> Result<Option<(String, String)>, ReadError> {
    match (cert, key) {
        (None, None) => Ok(None),
        (Some(cert), Some(key)) => Ok(Some((path(what, cert)?, path(what, key)?))),
        _ => Err(config(format!("{what} go together: give both or neither"))),
    }
}

fn ssl_mapping(mut map: BTreeMap<String, OptionValue>) -> Result<SslMapping, ReadError> {
    map.retain(|_, v| *v != OptionValue::Null);
    let why = |key: &str| -> Option<&'static str> {
        Some(match key {
            "password" => ENCRYPTED_KEY,
            "capath" => "name one PEM file as ca",
            "cipher" => "the TLS library chooses the ciphers",
            "verify_mode" => "use check_hostname, or ssl_mode",
            _ => return None,
        })
    };
    if let Some((key, reason)) = map.keys().find_map(|k| why(k).map(|w| (k, w))) {
        return Err(config(format!(
            "mysql_options ssl {key} is refused: {reason}"
        )));
    }
    if let Some(key) = map
        .keys()
        .find(|k| !["ca", "check_hostname", "cert", "key"].contains(&k.as_str()))
    {
        return Err(config(format!(
            "mysql_options ssl {key} is not supported (supported: ca, check_hostname, cert, key)"
        )));
    }
    let check_hostname = flag(&mut map, "check_hostname")?;
    let ca = match map.remove("ca") {
        None => None,
        Some(value) => Some(path("mysql_options ssl ca", value)?),
    };
    let cert_and_key = cert_and_key(
        "mysql_options ssl cert and key",
        map.remove("cert"),
        map.remove("key"),
    )?;
    let mode = match (&ca, check_hostname) {
        (None, _) => SslMode::Required,
        (Some(_), Some(false)) => SslMode::VerifyCa,
        (Some(_), _) => SslMode::VerifyIdentity,
    };
    Ok(SslMapping {
        mode,
        ca,
        cert_and_key,
    })
}

/// A boolean key (absent: `None`).
fn flag(map: &mut BTreeMap<String, OptionValue>, key: &str) -> Result<Option<bool>, ReadError> {
    match map.remove(key) {
        None => Ok(None),
        Some(OptionValue::Bool(b)) => Ok(Some(b)),
        Some(_) => Err(config(format!("mysql_options {key} must be a boolean"))),
    }
}

/// A file path (a non-empty string).
fn path(what: &str, value: OptionValue) -> Result<String, ReadError> {
    match value {
        OptionValue::Text(p) if !p.is_empty() => Ok(p),
        _ => Err(config(format!("{what} must be the path of a PEM file"))),
    }
}

fn config(message: String) -> ReadError {
    ReadError::Config(message)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn parse(pairs: &[(&str, OptionValue)]) -> Result<MySqlOptions, ReadError> {
        MySqlOptions::parse(pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())))
    }

    fn text(s: &str) -> OptionValue {
        OptionValue::Text(s.into())
    }

    #[test]
    fn a_client_certificate_is_taken_as_pymysql_passes_it() {
        let given = parse(&[("ssl_cert", text("/c.pem")), ("ssl_key", text("/k.pem"))]).unwrap();
        let files = Some(("/c.pem".to_owned(), "/k.pem".to_owned()));
        assert_eq!(given.ssl_cert_and_key, files);
        // A certificate asks for TLS, as PyMySQL's ssl_cert does.
        assert_eq!(given.ssl_mode, Some(SslMode::Required));
        let mapped = parse(&[(
            "ssl",
            ssl(&[
                ("cert", text("/c.pem")),
                ("key", text("/k.pem")),
                ("ca", text("/ca.pem")),
            ]),
        )])
        .unwrap();
        assert_eq!(mapped.ssl_cert_and_key, files);
        assert_eq!(mapped.ssl_mode, Some(SslMode::VerifyIdentity));
        let with_ca = parse(&[
            ("ssl_cert", text("/c.pem")),
            ("ssl_key", text("/k.pem")),
            ("ssl_ca", text("/ca.pem")),
            ("ssl_verify_identity", OptionValue::Bool(true)),
        ])
        .unwrap();
        assert_eq!(with_ca.ssl_mode, Some(SslMode::VerifyIdentity));
    }

    #[test]
    fn options_never_lower_a_connections_tls_mode() {
        use SslMode::*;
        let under = |pairs: &[(&str, OptionValue)], floor| {
            parse(pairs).unwrap().at_least(floor).map(|o| o.ssl_mode)
        };
        // An ssl_ca alone is PyMySQL's `required`; under verify_identity it verifies.
        assert_eq!(
            under(&[("ssl_ca", text("/ca.pem"))], VerifyIdentity).unwrap(),
            Some(VerifyIdentity)
        );
        assert_eq!(under(&[], VerifyCa).unwrap(), Some(VerifyCa));
        assert_eq!(
            under(&[("ssl_mode", text("verify_identity"))], Required).unwrap(),
            Some(VerifyIdentity)
        );
        assert_eq!(
            under(&[("ssl_mode", text("required"))], VerifyCa).unwrap(),
            Some(VerifyCa)
        );
        for disabled in [
            vec![("ssl_disabled", OptionValue::Bool(true))],
            vec![("ssl_mode", text("disabled"))],
        ] {
            let e = under(&disabled, Preferred).unwrap_err().to_string();
            assert!(
                e.contains("cannot lower the connection's TLS mode (preferred)"),
                "{e}"
            );
        }
        assert_eq!(
            under(&[("ssl_disabled", OptionValue::Bool(true))], Disabled).unwrap(),
            Some(Disabled)
        );
    }

    #[test]
    fn a_pinned_server_key_is_taken_as_pymysql_passes_it() {
        let pem = "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----\n";
        let options = parse(&[("server_public_key", text(pem))]).unwrap();
        assert_eq!(options.server_public_key.as_deref(), Some(pem));
        assert_eq!(options.ssl_mode, None);
        for bad in [text("ssh-rsa AAAA"), OptionValue::Int(3), text("")] {
            let e = parse(&[("server_public_key", bad)]).unwrap_err();
            assert!(e.to_string().contains("server_public_key must be"), "{e}");
            assert!(!e.to_string().contains("AAAA"), "{e}");
        }
    }

    fn ssl(pairs: &[(&str, OptionValue)]) -> OptionValue {
        OptionValue::Map(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn pymysql_tls_keywords_keep_their_meaning() {
        use OptionValue::Bool;
        let mode = |pairs: &[(&str, OptionValue)]| parse(pairs).unwrap().ssl_mode;
        assert_eq!(mode(&[]), None);
        assert_eq!(
            mode(&[("ssl_ca", text("/ca.pem"))]),
            Some(SslMode::Required)
        );
        assert_eq!(
            mode(&[("ssl_ca", text("/ca.pem")), ("ssl_verify_cert", Bool(true))]),
            Some(SslMode::VerifyCa)
        );
        assert_eq!(
            mode(&[("ssl_verify_identity", Bool(true))]),
            Some(SslMode::VerifyIdentity)
        );
        assert_eq!(
            mode(&[("ssl", ssl(&[("ca", text("/ca.pem"))]))]),
            Some(SslMode::VerifyIdentity)
        );
        assert_eq!(
            mode(&[(
                "ssl",
                ssl(&[("ca", text("/ca.pem")), ("check_hostname", Bool(false))])
            )]),
            Some(SslMode::VerifyCa)
        );
        assert_eq!(mode(&[("ssl", ssl(&[]))]), Some(SslMode::Required));
        assert_eq!(
            mode(&[("ssl_disabled", Bool(true))]),
            Some(SslMode::Disabled)
        );
        assert_eq!(
            mode(&[("ssl_mode", text("VERIFY_CA"))]),
            Some(SslMode::VerifyCa)
        );
        // A named mode stronger than the keys ask is kept.
        assert_eq!(
            mode(&[
                ("ssl_mode", text("verify_identity")),
                ("ssl_ca", text("/ca.pem"))
            ]),
            Some(SslMode::VerifyIdentity)
        );
        // None is "not given", as PyMySQL's defaults are.
        assert_eq!(
            mode(&[
                ("ssl_ca", OptionValue::Null),
                ("charset", OptionValue::Null)
            ]),
            None
        );
        let ca = parse(&[("ssl", ssl(&[("ca", text("/etc/ca.pem"))]))]).unwrap();
        assert_eq!(ca.ssl_ca.as_deref(), Some("/etc/ca.pem"));
    }

    #[test]
    fn contradictions_and_unsupported_keys_are_refused_by_name() {
        use OptionValue::{Bool, Int};
        let refused = |pairs: &[(&str, OptionValue)], needle: &str| {
            let e = parse(pairs).unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
            assert!(!e.contains("/secret"), "{e}");
        };
        refused(
            &[
                ("ssl_mode", text("required")),
                ("ssl_verify_cert", Bool(true)),
            ],
            "ssl_mode required contradicts",
        );
        refused(
            &[("ssl_disabled", Bool(true)), ("ssl_ca", text("/secret"))],
            "ssl_disabled=True contradicts",
        );
        refused(
            &[
                ("ssl_mode", text("verify_ca")),
                ("ssl_verify_identity", Bool(true)),
            ],
            "ssl_mode verify_ca contradicts",
        );
        refused(
            &[
                ("ssl_mode", text("preferred")),
                ("ssl_disabled", Bool(true)),
            ],
            "ssl_mode preferred contradicts",
        );
        refused(
            &[("ssl", ssl(&[])), ("ssl_ca", text("/secret"))],
            "both ssl and ssl_ca",
        );
        refused(&[("ssl_cert", text("/secret"))], "give both or neither");
        refused(
            &[("ssl", ssl(&[("key", text("/secret"))]))],
            "ssl cert and key go together",
        );
        refused(
            &[("ssl_key_password", text("/secret"))],
            "an encrypted client key is not read",
        );
        refused(
            &[("ssl_cert", text("")), ("ssl_key", text("/secret"))],
            "must be the path of a PEM file",
        );
        refused(
            &[("ssl", ssl(&[("server_hostname", text("/secret"))]))],
            "ssl server_hostname is not supported",
        );
        refused(&[("ssl", text("/secret"))], "ssl must be a mapping");
        refused(&[("compress", Bool(true))], "compress is refused");
        refused(
            &[("init_command", text("/secret"))],
            "init_command is refused",
        );
        refused(
            &[("charset", text("latin1"))],
            "charset is fixed to utf8mb4",
        );
        refused(
            &[("ssl_mode", text("sometimes"))],
            "ssl_mode must be one of",
        );
        refused(
            &[("ssl_ca", text(""))],
            "ssl_ca must be the path of a PEM file",
        );
        refused(
            &[("ssl_verify_cert", Int(1))],
            "ssl_verify_cert must be a boolean",
        );
        refused(&[("frobnicate", Int(1))], "frobnicate are not supported");
        // The settings with arguments of their own name the argument, all at once.
        refused(
            &[("port", Int(5)), ("user", text("/secret"))],
            "port (use mysql_port), user (use username)",
        );
    }

    #[test]
    fn pymysql_timeouts_autocommit_and_packet_cap_are_honoured_as_1_1_passes_them() {
        use OptionValue::{Bool, Float, Int};
        use std::time::Duration;
        let parse = |pairs: &[(&str, OptionValue)]| {
            MySqlOptions::parse(pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())))
        };
        let given = parse(&[
            ("connect_timeout", Int(7)),
            ("read_timeout", Float(30.5)),
            ("write_timeout", Int(60)),
            ("autocommit", Bool(true)),
        ])
        .unwrap();
        assert_eq!(given.connect_timeout, Some(Duration::from_secs(7)));
        assert_eq!(given.query_timeout, Some(Duration::from_secs(60)));
        let read_only = parse(&[("read_timeout", Float(2.5))]).unwrap();
        assert_eq!(read_only.query_timeout, Some(Duration::from_millis(2500)));
        let capped = parse(&[("max_allowed_packet", Int(16 << 20))]).unwrap();
        assert_eq!(capped.max_packet_bytes, Some(16 << 20));
        for (pairs, message) in [
            (
                vec![("max_allowed_packet", Int(1023))],
                "max_allowed_packet must be a number of bytes from 1024",
            ),
            (
                vec![("max_allowed_packet", Int((1 << 30) + 1))],
                "max_allowed_packet must be a number of bytes from 1024",
            ),
            (
                vec![("max_allowed_packet", Float(1e6))],
                "max_allowed_packet must be a number of bytes",
            ),
            (
                vec![("autocommit", Bool(false))],
                "autocommit=False is refused",
            ),
            (
                vec![("connect_timeout", Int(0))],
                "connect_timeout must be a positive number",
            ),
            (
                vec![("read_timeout", Bool(true))],
                "read_timeout must be a number of seconds",
            ),
        ] {
            let e = parse(&pairs).unwrap_err().to_string();
            assert!(e.contains(message), "{e}");
        }
    }
}
