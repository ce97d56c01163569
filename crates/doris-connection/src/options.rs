//! A connection described by named options, as a configuration file or another language's
//! keyword arguments give it: the option names, their defaults and their rules, in one
//! place. `daft_doris.DorisConnection(**keywords)` is this type; a Rust service reading the
//! same names from its configuration builds the same connection.
//!
//! ```
//! use std::time::Duration;
//! use doris_connection::{ConnectionOptions, SslMode};
//!
//! let options: ConnectionOptions = serde_json::from_str(
//!     r#"{"host": "fe.example", "username": "loader", "http_port": 18030,
//!         "request_timeout_seconds": 45, "redirect_hosts": ["be1"],
//!         "mysql_ssl_mode": "verify_ca"}"#,
//! )
//! .unwrap();
//! let fe = options.settings("s3cr3t").unwrap();
//! assert_eq!((fe.http_port, fe.mysql_port), (18030, 9030));
//! assert_eq!(fe.query_timeout, Duration::from_secs(45));
//! assert_eq!(fe.mysql_ssl_mode, SslMode::VerifyCa);
//! // No port listed: the listed host is allowed on none.
//! assert!(!options.redirect_allowlist().allows("be1", 8040, "fe.example", &[]));
//! assert_eq!(fe.credentials.user(), "loader");
//!
//! // Each rule names the option, never the value.
//! let wrong = serde_json::from_str::<ConnectionOptions>(r#"{"host": "fe", "http_port": 0}"#);
//! assert!(wrong.unwrap_err().to_string().contains("http_port must be an integer from 1 to 65535"));
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{AddressAllowlist, ConnectionSettings, ConnectionSettingsError, Credentials, SslMode};

/// A named option's value as a configuration holds it; `Deserialize` reads it from any
/// self-describing format (JSON, TOML, Python objects through `pythonize`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OptionValue {
    /// `null` / `None`: given as nothing (an option that takes it chooses its meaning).
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A number with a fraction.
    Float(f64),
    /// A string.
    Text(String),
    /// A list.
    List(Vec<OptionValue>),
    /// A mapping of names to values.
    Map(BTreeMap<String, OptionValue>),
}

fn invalid(option: &str, rule: impl Into<String>) -> ConnectionSettingsError {
    ConnectionSettingsError::Invalid {
        option: option.to_owned(),
        rule: rule.into(),
    }
}

impl OptionValue {
    /// The kind of value, for an error message (never the value itself).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Null => "None",
            Self::Bool(_) => "a boolean",
            Self::Int(_) => "an integer",
            Self::Float(_) => "a number",
            Self::Text(_) => "a string",
            Self::List(_) => "a list",
            Self::Map(_) => "a mapping",
        }
    }

    /// The value as the text of a Doris property (`PROPERTIES ("key" = "text")`): a
    /// string as it is, a boolean as `true` or `false`, an integer or a finite number in
    /// decimal. `key` names the property in errors.
    ///
    /// ```
    /// use doris_connection::OptionValue;
    /// assert_eq!(OptionValue::Float(0.1).property_text("x").unwrap(), "0.1");
    /// assert_eq!(OptionValue::Bool(false).property_text("x").unwrap(), "false");
    /// assert!(OptionValue::Null.property_text("x").is_err());
    /// ```
    pub fn property_text(&self, key: &str) -> Result<String, ConnectionSettingsError> {
        match self {
            Self::Text(text) => Ok(text.clone()),
            Self::Bool(b) => Ok(b.to_string()),
            Self::Int(n) => Ok(n.to_string()),
            Self::Float(f) if f.is_finite() => Ok(format!("{f:?}")),
            _ => Err(invalid(
                &format!("the value of property {key}"),
                "a string, number or bool",
            )),
        }
    }

    /// An integer from `low` to `high` (a boolean is not one).
    pub fn int_in(
        &self,
        option: &str,
        low: i64,
        high: i64,
    ) -> Result<i64, ConnectionSettingsError> {
        match self {
            Self::Int(n) if (low..=high).contains(n) => Ok(*n),
            _ => Err(invalid(option, format!("an integer from {low} to {high}"))),
        }
    }

    /// A TCP port, 1 to 65535.
    pub fn port(&self, option: &str) -> Result<u16, ConnectionSettingsError> {
        self.int_in(option, 1, 65_535).map(|p| p as u16)
    }

    /// A boolean switch (an integer is not one).
    pub fn flag(&self, option: &str) -> Result<bool, ConnectionSettingsError> {
        match self {
            Self::Bool(b) => Ok(*b),
            _ => Err(invalid(option, "a bool")),
        }
    }

    /// A number of seconds, more than 0 and at most [`ConnectionSettings::MAX_TIMEOUT`].
    pub fn seconds(&self, option: &str) -> Result<Duration, ConnectionSettingsError> {
        let seconds = match self {
            Self::Int(n) => *n as f64,
            Self::Float(f) => *f,
            _ => return Err(invalid(option, "a number of seconds")),
        };
        let most = ConnectionSettings::MAX_TIMEOUT.as_secs();
        if !(seconds.is_finite() && seconds > 0.0 && seconds <= most as f64) {
            return Err(invalid(
                option,
                format!("more than 0 and at most {most} seconds"),
            ));
        }
        Ok(Duration::from_secs_f64(seconds))
    }

    /// A string; `rule` says what it must be when it is not one.
    pub fn text(&self, option: &str, rule: &str) -> Result<&str, ConnectionSettingsError> {
        match self {
            Self::Text(text) => Ok(text),
            _ => Err(invalid(option, rule)),
        }
    }

    /// The items of a list (a lone string is refused, not split).
    pub fn list(&self, option: &str) -> Result<&[OptionValue], ConnectionSettingsError> {
        match self {
            Self::List(items) => Ok(items),
            _ => Err(invalid(option, "a list or tuple")),
        }
    }
}

/// The redirect policy the FE is asked to follow (Stream Load's `redirect-policy`
/// header): which BE address its 307 names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RedirectPolicy {
    /// `direct`
    Direct,
    /// `random-be`
    RandomBe,
    /// `public` (the BE's `tag.public_endpoint`)
    Public,
    /// `private`
    Private,
    /// `public-private`
    PublicPrivate,
}

impl RedirectPolicy {
    /// The names [`FromStr`](std::str::FromStr) accepts: the header's values.
    pub const NAMES: [&'static str; 5] =
        ["direct", "random-be", "public", "private", "public-private"];

    /// The `redirect-policy` header's value, as [`Self::NAMES`] spells it.
    pub fn header_value(self) -> &'static str {
        match self {
            Self::Direct => "direct",
            Self::RandomBe => "random-be",
            Self::Public => "public",
            Self::Private => "private",
            Self::PublicPrivate => "public-private",
        }
    }
}

impl std::str::FromStr for RedirectPolicy {
    type Err = ConnectionSettingsError;

    /// One of [`RedirectPolicy::NAMES`]; anything else is refused naming them (never the
    /// value given).
    ///
    /// ```
    /// use doris_connection::RedirectPolicy;
    /// assert_eq!("public".parse::<RedirectPolicy>().unwrap(), RedirectPolicy::Public);
    /// assert!("nearest".parse::<RedirectPolicy>().is_err());
    /// ```
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        RedirectPolicy::NAMES
            .iter()
            .position(|n| *n == name)
            .map(|i| {
                [
                    Self::Direct,
                    Self::RandomBe,
                    Self::Public,
                    Self::Private,
                    Self::PublicPrivate,
                ][i]
            })
            .ok_or_else(|| {
                invalid(
                    "redirect_policy",
                    format!("one of '{}'", Self::NAMES.join("', '")),
                )
            })
    }
}

/// Where a Doris FE is and who connects, as named options: the FE's host, its HTTP and
/// MySQL ports, the user, TLS (the CA and client certificate files are named here and read
/// by whoever connects), one request timeout, and where Stream Load may follow the FE's
/// redirect. Built by [`ConnectionOptions::new`] with the defaults, or read from named
/// options ([`ConnectionOptions::from_options`], `Deserialize`), each checked as it is
/// read; [`ConnectionOptions::options`] gives them back by the same names.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
#[serde(try_from = "BTreeMap<String, OptionValue>")]
pub struct ConnectionOptions {
    /// The FE's host name or IP address.
    pub host: String,
    /// The user (`root` unless given).
    pub username: String,
    /// The FE's HTTP port.
    pub http_port: u16,
    /// The FE's MySQL port.
    pub mysql_port: u16,
    /// HTTPS on the HTTP links (always verified).
    pub http_secure: bool,
    /// The wait for an answer; connecting waits at most 30 s of it
    /// ([`ConnectionSettings::with_request_timeout`]).
    pub request_timeout: Duration,
    /// Hosts besides the FE's that Stream Load may follow a redirect to.
    pub redirect_hosts: Vec<String>,
    /// The ports those redirects may name.
    pub redirect_ports: Vec<u16>,
    /// Whether the BEs the FE reports are redirect targets too (`None`: when neither list
    /// is given; [`AddressAllowlist::redirects`]).
    pub trust_reported_backends: Option<bool>,
    /// The `redirect-policy` header (`None`: not sent).
    pub redirect_policy: Option<RedirectPolicy>,
    /// TLS on the MySQL link.
    pub mysql_ssl_mode: SslMode,
    /// A PEM file of CAs trusted besides the web PKI roots.
    pub tls_ca_file: Option<String>,
    /// The client certificate (PEM) of mutual TLS; with `tls_client_key_file`.
    pub tls_client_cert_file: Option<String>,
    /// Its unencrypted private key (PEM).
    pub tls_client_key_file: Option<String>,
}

impl ConnectionOptions {
    /// The option names, in the order [`ConnectionOptions::options`] gives them.
    pub const NAMES: [&'static str; 16] = [
        "host",
        "username",
        "http_port",
        "mysql_port",
        "http_secure",
        "request_timeout_seconds",
        "redirect_hosts",
        "redirect_ports",
        "trust_reported_backends",
        "redirect_policy",
        "verify_tls",
        "tls_ca_file",
        "mysql_ssl_mode",
        "tls_client_cert_file",
        "tls_client_key_file",
        // Not an option of this type: the caller's secret, named so that a configuration
        // holding it is not refused as unknown ([`ConnectionOptions::from_options`]
        // leaves it to the caller).
        "password",
    ];

    /// The FE at `host` with every other option at its default.
    pub fn new(host: impl Into<String>) -> Result<Self, ConnectionSettingsError> {
        let host = host.into();
        crate::check_host(&host)?;
        Ok(Self {
            host,
            username: ConnectionSettings::DEFAULT_USER.to_owned(),
            http_port: ConnectionSettings::DEFAULT_HTTP_PORT,
            mysql_port: ConnectionSettings::DEFAULT_MYSQL_PORT,
            http_secure: false,
            request_timeout: ConnectionSettings::DEFAULT_QUERY_TIMEOUT,
            redirect_hosts: Vec::new(),
            redirect_ports: Vec::new(),
            trust_reported_backends: None,
            redirect_policy: None,
            mysql_ssl_mode: SslMode::default(),
            tls_ca_file: None,
            tls_client_cert_file: None,
            tls_client_key_file: None,
        })
    }

    /// The options given by name, each checked; one left out (or given as
    /// [`OptionValue::Null`]) keeps its default. `host` is
    /// required; a name not in [`ConnectionOptions::NAMES`] is refused
    /// ([`ConnectionSettingsError::UnknownOption`]); `password` is skipped (the caller
    /// holds secrets apart); `verify_tls` may only be `true`.
    pub fn from_options(
        options: impl IntoIterator<Item = (String, OptionValue)>,
    ) -> Result<Self, ConnectionSettingsError> {
        let mut given: BTreeMap<String, OptionValue> = options.into_iter().collect();
        let host = given
            .remove("host")
            .ok_or(ConnectionSettingsError::MissingOption("host"))?;
        let host = host.text("host", "a non-empty string")?;
        let mut this = Self::new(host)?;
        for (name, value) in given {
            if value == OptionValue::Null {
                continue;
            }
            this.set(&name, &value)?;
        }
        Ok(this)
    }

    /// Sets the option `name` from `value`, checked.
    fn set(&mut self, name: &str, value: &OptionValue) -> Result<(), ConnectionSettingsError> {
        let path = |option: &str| -> Result<Option<String>, ConnectionSettingsError> {
            Ok(Some(
                value.text(option, "the path of a PEM file")?.to_owned(),
            ))
        };
        match name {
            "username" => match value {
                OptionValue::Text(user) if !user.is_empty() => self.username = user.clone(),
                _ => return Err(ConnectionSettingsError::EmptyUser),
            },
            "http_port" => self.http_port = value.port(name)?,
            "mysql_port" => self.mysql_port = value.port(name)?,
            "http_secure" => self.http_secure = value.flag(name)?,
            "request_timeout_seconds" => self.request_timeout = value.seconds(name)?,
            "redirect_hosts" => {
                self.redirect_hosts = value
                    .list(name)?
                    .iter()
                    .map(|host| {
                        let host = host.text("host", "a non-empty string")?;
                        crate::check_host(host)?;
                        Ok(host.to_owned())
                    })
                    .collect::<Result<_, ConnectionSettingsError>>()?;
            }
            "redirect_ports" => {
                self.redirect_ports = value
                    .list(name)?
                    .iter()
                    .map(|port| port.port(name))
                    .collect::<Result<_, _>>()?;
            }
            "trust_reported_backends" => self.trust_reported_backends = Some(value.flag(name)?),
            "redirect_policy" => {
                // Not a name: refused as a wrong name is, with the choices.
                let policy = value.text(name, "").unwrap_or("?");
                self.redirect_policy = match policy {
                    "" => None,
                    policy => Some(policy.parse()?),
                };
            }
            "verify_tls" => {
                if !value.flag(name)? {
                    return Err(invalid(
                        "verify_tls",
                        "True: TLS is always verified (verify_tls=False is not supported)",
                    ));
                }
            }
            "mysql_ssl_mode" => {
                self.mysql_ssl_mode = match value {
                    OptionValue::Text(mode) => SslMode::parse(mode),
                    _ => None,
                }
                .ok_or_else(|| {
                    invalid("ssl_mode", format!("one of {}", SslMode::NAMES.join(", ")))
                })?;
            }
            "tls_ca_file" => self.tls_ca_file = path(name)?,
            "tls_client_cert_file" => self.tls_client_cert_file = path(name)?,
            "tls_client_key_file" => self.tls_client_key_file = path(name)?,
            "password" => {}
            other => return Err(ConnectionSettingsError::UnknownOption(other.to_owned())),
        }
        Ok(())
    }

    /// Every option by name (as [`ConnectionOptions::from_options`] reads it back), `None`
    /// where one is unset; `password` is left out.
    pub fn options(&self) -> Vec<(&'static str, Option<OptionValue>)> {
        let text = |s: &str| Some(OptionValue::Text(s.to_owned()));
        let path = |p: &Option<String>| p.as_deref().and_then(text);
        let list = |items: Vec<OptionValue>| Some(OptionValue::List(items));
        vec![
            ("host", text(&self.host)),
            ("username", text(&self.username)),
            ("http_port", Some(OptionValue::Int(self.http_port.into()))),
            ("mysql_port", Some(OptionValue::Int(self.mysql_port.into()))),
            ("http_secure", Some(OptionValue::Bool(self.http_secure))),
            (
                "request_timeout_seconds",
                Some(OptionValue::Float(self.request_timeout.as_secs_f64())),
            ),
            (
                "redirect_hosts",
                list(
                    self.redirect_hosts
                        .iter()
                        .map(|h| OptionValue::Text(h.clone()))
                        .collect(),
                ),
            ),
            (
                "redirect_ports",
                list(
                    self.redirect_ports
                        .iter()
                        .map(|p| OptionValue::Int((*p).into()))
                        .collect(),
                ),
            ),
            (
                "trust_reported_backends",
                self.trust_reported_backends.map(OptionValue::Bool),
            ),
            (
                "redirect_policy",
                text(
                    self.redirect_policy
                        .map_or("", RedirectPolicy::header_value),
                ),
            ),
            ("verify_tls", Some(OptionValue::Bool(true))),
            ("tls_ca_file", path(&self.tls_ca_file)),
            ("mysql_ssl_mode", text(self.mysql_ssl_mode.name())),
            ("tls_client_cert_file", path(&self.tls_client_cert_file)),
            ("tls_client_key_file", path(&self.tls_client_key_file)),
        ]
    }

    /// Each option's default by name, as [`ConnectionOptions::from_options`] reads it (a
    /// configuration's documentation, another language's signature). An option whose
    /// default is nothing — no file, no list, no policy, no `host` — is left out.
    ///
    /// ```
    /// use doris_connection::{ConnectionOptions, OptionValue};
    /// let defaults = ConnectionOptions::defaults();
    /// assert!(defaults.contains(&("mysql_port", OptionValue::Int(9030))));
    /// assert!(!defaults.iter().any(|(name, _)| *name == "host"));
    /// ```
    pub fn defaults() -> Vec<(&'static str, OptionValue)> {
        let defaults = Self::new("localhost").expect("a valid host");
        defaults
            .options()
            .into_iter()
            .filter(|(name, _)| *name != "host")
            .filter_map(|(name, value)| match value? {
                OptionValue::Text(t) if t.is_empty() => None,
                OptionValue::List(items) if items.is_empty() => None,
                value => Some((name, value)),
            })
            .collect()
    }

    /// The connection settings of these options, the user's `password` with them. The CA
    /// and client certificate files are not read here (this crate does no I/O): the caller
    /// sets [`ConnectionSettings::ca_pem`] and [`ConnectionSettings::client_identity`] from
    /// them. The host and user are checked again ([`ConnectionSettings::new`]): the
    /// fields are public.
    pub fn settings(
        &self,
        password: impl Into<String>,
    ) -> Result<ConnectionSettings, ConnectionSettingsError> {
        let credentials = Credentials::new(&self.username, password);
        let mut settings = ConnectionSettings::new(&self.host, credentials)?
            .with_request_timeout(self.request_timeout);
        settings.http_port = self.http_port;
        settings.mysql_port = self.mysql_port;
        settings.http_secure = self.http_secure;
        settings.mysql_ssl_mode = self.mysql_ssl_mode;
        settings.check()?;
        Ok(settings)
    }

    /// Where Stream Load may follow the FE's redirect: the FE's host and
    /// `redirect_hosts`, each on one of `redirect_ports`, and the BEs the FE reports as
    /// `trust_reported_backends` says ([`AddressAllowlist::redirects`]).
    pub fn redirect_allowlist(&self) -> AddressAllowlist {
        AddressAllowlist::redirects(
            &self.host,
            &self.redirect_hosts,
            &self.redirect_ports,
            self.trust_reported_backends,
        )
    }
}

impl TryFrom<BTreeMap<String, OptionValue>> for ConnectionOptions {
    type Error = ConnectionSettingsError;

    fn try_from(options: BTreeMap<String, OptionValue>) -> Result<Self, Self::Error> {
        Self::from_options(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(
        pairs: &[(&str, OptionValue)],
    ) -> Result<ConnectionOptions, ConnectionSettingsError> {
        ConnectionOptions::from_options(
            [("host", OptionValue::Text("fe".into()))]
                .iter()
                .chain(pairs)
                .map(|(k, v)| ((*k).to_owned(), v.clone())),
        )
    }

    #[test]
    fn each_default_given_by_name_is_the_default_left_out() {
        let left_out = options(&[]).unwrap();
        let defaults = ConnectionOptions::defaults();
        assert!(defaults.len() >= 6, "{defaults:?}");
        for (name, value) in defaults {
            assert!(ConnectionOptions::NAMES.contains(&name), "{name}");
            assert_eq!(options(&[(name, value)]).unwrap(), left_out, "{name}");
        }
    }

    #[test]
    fn options_read_back_as_they_were_given() {
        use OptionValue::*;
        let given = options(&[
            ("username", Text("loader".into())),
            ("http_port", Int(18030)),
            ("request_timeout_seconds", Int(45)),
            ("redirect_hosts", List(vec![Text("be1".into())])),
            ("redirect_ports", List(vec![Int(8040)])),
            ("trust_reported_backends", Bool(false)),
            ("redirect_policy", Text("random-be".into())),
            ("mysql_ssl_mode", Text("VERIFY_CA".into())),
            ("tls_ca_file", Text("/ca.pem".into())),
            ("password", Text("ignored".into())),
        ])
        .unwrap();
        let again = ConnectionOptions::from_options(
            given
                .options()
                .into_iter()
                .filter_map(|(k, v)| Some((k.to_owned(), v?))),
        )
        .unwrap();
        assert_eq!(again, given);
        assert_eq!(given.redirect_policy, Some(RedirectPolicy::RandomBe));
        let names: Vec<_> = given.options().iter().map(|(k, _)| *k).collect();
        assert_eq!(names, ConnectionOptions::NAMES[..15]);
    }

    #[test]
    fn each_rule_names_the_option_and_never_the_value() {
        use OptionValue::*;
        for (name, value, message) in [
            (
                "http_port",
                Int(0),
                "http_port must be an integer from 1 to 65535",
            ),
            (
                "mysql_port",
                Text("9030".into()),
                "mysql_port must be an integer",
            ),
            ("http_secure", Int(1), "http_secure must be a bool"),
            ("verify_tls", Bool(false), "TLS is always verified"),
            (
                "request_timeout_seconds",
                Int(-1),
                "more than 0 and at most 86400",
            ),
            (
                "request_timeout_seconds",
                Text("5".into()),
                "must be a number of seconds",
            ),
            (
                "redirect_hosts",
                Text("be1".into()),
                "redirect_hosts must be a list or tuple",
            ),
            (
                "redirect_hosts",
                List(vec![Text("be/1".into())]),
                "bare host name",
            ),
            (
                "redirect_ports",
                List(vec![Int(70_000)]),
                "redirect_ports must be an integer",
            ),
            (
                "redirect_policy",
                Text("nearest".into()),
                "redirect_policy must be one of 'direct'",
            ),
            ("redirect_policy", Int(1), "redirect_policy must be one of"),
            (
                "mysql_ssl_mode",
                Text("strict".into()),
                "ssl_mode must be one of",
            ),
            (
                "username",
                Text(String::new()),
                "username must be a non-empty string",
            ),
            (
                "tls_ca_file",
                Int(3),
                "tls_ca_file must be the path of a PEM file",
            ),
            ("host", Text("fe:1".into()), "must not contain a port"),
        ] {
            let error = options(&[(name, value)]).unwrap_err().to_string();
            assert!(error.contains(message), "{name}: {error}");
            assert!(
                !error.contains("9030\"") && !error.contains("nearest"),
                "{error}"
            );
        }
        assert_eq!(
            options(&[("port", OptionValue::Int(1))]).unwrap_err(),
            ConnectionSettingsError::UnknownOption("port".into())
        );
        assert_eq!(
            ConnectionOptions::from_options([]).unwrap_err(),
            ConnectionSettingsError::MissingOption("host")
        );
    }

    #[test]
    fn the_settings_carry_the_options() {
        let fe = options(&[("request_timeout_seconds", OptionValue::Float(900.0))]).unwrap();
        let settings = fe.settings("").unwrap();
        assert_eq!(settings.query_timeout, Duration::from_secs(900));
        assert_eq!(
            settings.connect_timeout,
            ConnectionSettings::MAX_CONNECT_TIMEOUT
        );
        assert!(fe.redirect_allowlist().reported_backends);
    }
}
