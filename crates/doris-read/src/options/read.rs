//! A read's transport settings as named options ([`ReadOptions::from_options`]): the
//! transport, the batch bounds, tablet groups per task, PyMySQL's `mysql_options`, ADBC's
//! `flight_options`, the Flight location settings and the column policies, each checked by
//! its rule before anything is sent.

use std::collections::BTreeMap;

use std::time::Duration;

use doris_connection::{ClientIdentity, ConnectionSettings, HostPort, OptionValue};

use doris_plan::DiscoveryPolicy;

use super::{MySqlOptions, UnreadableColumns};
use crate::error::ReadError;
use crate::{BatchLimits, SplitKind, TaskCounts, TimestampUnits, TransportKind};

fn config(message: impl Into<String>) -> ReadError {
    ReadError::Config(message.into())
}

/// A read's options, checked: how it plans and where its tasks connect.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// The wire.
    pub transport: TransportKind,
    /// One task, or one per tablet group (`_query_plan`).
    pub split: SplitKind,
    /// What a split read does when its planning fails.
    pub discovery_policy: DiscoveryPolicy,
    /// Tasks a split read aims at, and at most.
    pub task_counts: TaskCounts,
    /// The whole-request timeout of `_query_plan` and `/api/backends`.
    pub planning_timeout: Duration,
    /// A trusted SQL fragment ANDed to every task's WHERE (non-blank, trimmed; bound to its
    /// `:name` parameters by `doris_sql::bind_trusted_where`).
    pub unsafe_where_sql: Option<String>,
    /// The batch bounds.
    pub limits: BatchLimits,
    /// Tablet groups one task reads at once (`None`: groups ÷ cores).
    pub queries_per_task: Option<usize>,
    /// PyMySQL's keys, mapped.
    pub mysql: MySqlOptions,
    /// ADBC's keys as given (checked by `FlightOptions::parse` where the `flight` feature
    /// is on), sorted by key.
    pub flight_options: Vec<(String, String)>,
    /// `host:port` → `host:port` for BE locations the client cannot reach.
    pub flight_endpoint_rewrite: BTreeMap<String, String>,
    /// Flight locations allowed besides the BEs the FE reports.
    pub flight_allowed_locations: Vec<HostPort>,
    /// What a table with columns that have no Arrow form does.
    pub unreadable_columns: UnreadableColumns,
    /// The Arrow unit of DATETIME columns.
    pub timestamp_units: TimestampUnits,
    /// The wait to connect (`connect_timeout_seconds`, or PyMySQL's `connect_timeout`).
    pub connect_timeout: Option<Duration>,
    /// The wait for an answer (`query_timeout_seconds`, or PyMySQL's `read_timeout` /
    /// `write_timeout`).
    pub query_timeout: Option<Duration>,
    /// The FE's Arrow Flight SQL port.
    pub flight_port: Option<u16>,
    /// TLS on the Flight links.
    pub flight_secure: Option<bool>,
}

/// How a read's connection came to be, which decides how the read's settings lie over it
/// ([`ReadOptions::apply`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadConnection {
    /// Made of the read's own keywords (the reference connector 1.1's
    /// `read_doris(host=…)`): a timeout left out takes the crates' read default (10 s to
    /// connect, 300 s to answer: a writer's one request timeout is not a read's), and the
    /// TLS mode `mysql_options` asks for is the MySQL link's.
    Keywords,
    /// A connection given (`connection=`, a catalog's): its timeouts stay unless the read
    /// gives its own, and its MySQL TLS mode is the floor of the read's
    /// ([`MySqlOptions::at_least`]).
    Given,
}

impl ReadOptions {
    /// The option names [`ReadOptions::from_options`] reads.
    pub const NAMES: [&'static str; 20] = [
        "transport",
        "split",
        "discovery_policy",
        "target_tasks",
        "max_tasks",
        "planning_timeout_seconds",
        "unsafe_where_sql",
        "connect_timeout_seconds",
        "query_timeout_seconds",
        "flight_port",
        "flight_secure",
        "batch_rows",
        "batch_bytes",
        "queries_per_task",
        "mysql_options",
        "flight_options",
        "flight_endpoint_rewrite",
        "flight_allowed_locations",
        "unreadable_columns",
        "timestamp_units",
    ];

    /// Each option's default by name, as [`ReadOptions::from_options`] reads it, for a read
    /// that makes its own connection ([`ReadConnection::Keywords`]: the timeouts and the
    /// Flight port are the crates' read defaults). An option whose default is nothing (no
    /// cap, no fragment, no mapping) is left out, and so is `transport`, which has none.
    ///
    /// ```
    /// use doris_connection::OptionValue;
    /// use doris_read::options::ReadOptions;
    /// assert!(ReadOptions::defaults().contains(&("split", OptionValue::Text("single".into()))));
    /// ```
    pub fn defaults() -> Vec<(&'static str, OptionValue)> {
        let seconds = |d: Duration| OptionValue::Float(d.as_secs_f64());
        let count = |n: usize| OptionValue::Int(n as i64);
        let text = |t: &str| OptionValue::Text(t.to_owned());
        let limits = BatchLimits::default();
        vec![
            ("batch_rows", count(limits.rows)),
            ("batch_bytes", count(limits.bytes)),
            ("split", text(SplitKind::default().as_str())),
            (
                "discovery_policy",
                text(DiscoveryPolicy::default().as_str()),
            ),
            ("target_tasks", count(TaskCounts::DEFAULT.target)),
            ("max_tasks", count(TaskCounts::DEFAULT.max)),
            (
                "unreadable_columns",
                text(UnreadableColumns::default().name()),
            ),
            ("timestamp_units", text(TimestampUnits::default().name())),
            (
                "planning_timeout_seconds",
                seconds(TaskCounts::DEFAULT_PLANNING_TIMEOUT),
            ),
            (
                "connect_timeout_seconds",
                seconds(ConnectionSettings::DEFAULT_CONNECT_TIMEOUT),
            ),
            (
                "query_timeout_seconds",
                seconds(ConnectionSettings::DEFAULT_QUERY_TIMEOUT),
            ),
            (
                "flight_port",
                OptionValue::Int(ConnectionSettings::DEFAULT_FLIGHT_PORT.into()),
            ),
            ("flight_secure", OptionValue::Bool(false)),
        ]
    }

    /// The options given by name, each checked; one left out (or
    /// [`OptionValue::Null`]) takes its default; `transport` is required.
    ///
    /// ```
    /// use doris_connection::OptionValue;
    /// use doris_read::TransportKind;
    /// use doris_read::options::ReadOptions;
    ///
    /// let read = ReadOptions::from_options([
    ///     ("transport".to_owned(), OptionValue::Text("flight".into())),
    ///     ("batch_rows".to_owned(), OptionValue::Int(1000)),
    /// ])
    /// .unwrap();
    /// assert_eq!((read.transport, read.limits.rows), (TransportKind::Flight, 1000));
    /// let wrong = ReadOptions::from_options([
    ///     ("transport".to_owned(), OptionValue::Text("adbc".into())),
    /// ]);
    /// assert!(wrong.unwrap_err().to_string().contains("transport must be one of"));
    /// ```
    pub fn from_options(
        options: impl IntoIterator<Item = (String, OptionValue)>,
    ) -> Result<Self, ReadError> {
        let mut given: BTreeMap<String, OptionValue> = options
            .into_iter()
            .filter(|(_, value)| *value != OptionValue::Null)
            .collect();
        if let Some(name) = given.keys().find(|n| !Self::NAMES.contains(&n.as_str())) {
            return Err(config(format!("{name:?} is not a read option")));
        }
        let mut take = |name: &str| given.remove(name);
        let transport = text(take("transport").as_ref()).parse::<TransportKind>()?;
        let defaults = BatchLimits::default();
        let count = |name: &str, value: Option<OptionValue>, most: usize| {
            value
                .map(|v| {
                    v.int_in(name, 1, most as i64)
                        .map(|n| n as usize)
                        .map_err(|e| config(e.to_string()))
                })
                .transpose()
        };
        let rows = count("batch_rows", take("batch_rows"), BatchLimits::MAX_ROWS)?;
        let bytes = count("batch_bytes", take("batch_bytes"), BatchLimits::MAX_BYTES)?;
        let limits = BatchLimits::new(
            rows.unwrap_or(defaults.rows),
            bytes.unwrap_or(defaults.bytes),
        )?;
        let queries_per_task = count(
            "queries_per_task",
            take("queries_per_task"),
            TaskCounts::MOST,
        )?;
        let split = match take("split") {
            Some(value) => text(Some(&value)).parse::<SplitKind>()?,
            None => SplitKind::default(),
        };
        let discovery_policy = match take("discovery_policy") {
            Some(value) => text(Some(&value))
                .parse::<DiscoveryPolicy>()
                .map_err(|e| config(e.to_string()))?,
            None => DiscoveryPolicy::default(),
        };
        let task_counts = TaskCounts::new(
            count("target_tasks", take("target_tasks"), TaskCounts::MOST)?,
            count("max_tasks", take("max_tasks"), TaskCounts::MOST)?,
        )?;
        let unsafe_where_sql = match take("unsafe_where_sql") {
            None => None,
            Some(OptionValue::Text(sql)) if !sql.trim().is_empty() => Some(sql.trim().to_owned()),
            Some(_) => {
                return Err(config(
                    "unsafe_where_sql must be a non-blank string or None",
                ));
            }
        };
        let mysql = match take("mysql_options") {
            None => MySqlOptions::default(),
            Some(OptionValue::Map(map)) => MySqlOptions::parse(map)?,
            Some(_) => return Err(config("mysql_options must be a mapping")),
        };
        let flight_options: Vec<(String, String)> =
            strings("flight_options", take("flight_options"))?
                .into_iter()
                .collect();
        #[cfg(feature = "flight")]
        super::FlightOptions::parse(flight_options.clone())?;
        let flight_endpoint_rewrite =
            strings("flight_endpoint_rewrite", take("flight_endpoint_rewrite"))?;
        let flight_allowed_locations = match take("flight_allowed_locations") {
            None => Vec::new(),
            Some(OptionValue::List(items)) => items
                .iter()
                .map(|item| {
                    HostPort::parse(text(Some(item)))
                        .filter(|hp| hp.port != 0)
                        .ok_or_else(|| config("flight_allowed_locations entries must be host:port"))
                })
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(config(
                    "flight_allowed_locations must be a list of host:port strings",
                ));
            }
        };
        let unreadable_columns = match take("unreadable_columns") {
            Some(value) => text(Some(&value)).parse()?,
            None => UnreadableColumns::default(),
        };
        let timestamp_units = match take("timestamp_units") {
            Some(value) => super::timestamp_units(text(Some(&value)))?,
            None => TimestampUnits::default(),
        };
        let rule = |e: doris_connection::ConnectionSettingsError| config(e.to_string());
        let planning_timeout = match take("planning_timeout_seconds") {
            Some(value) => value.seconds("planning_timeout_seconds").map_err(rule)?,
            None => TaskCounts::DEFAULT_PLANNING_TIMEOUT,
        };
        // A timeout is given as an argument or as PyMySQL's key (as 1.1 code passes it),
        // never both.
        let mut timeout = |name: &str, from_mysql: Option<Duration>| match take(name) {
            None => Ok(from_mysql),
            Some(_) if from_mysql.is_some() => Err(config(format!(
                "{name} and its mysql_options key are both given: give one"
            ))),
            Some(value) => value.seconds(name).map(Some).map_err(rule),
        };
        let connect_timeout = timeout("connect_timeout_seconds", mysql.connect_timeout)?;
        let query_timeout = timeout("query_timeout_seconds", mysql.query_timeout)?;
        let flight_port = take("flight_port")
            .map(|v| v.port("flight_port"))
            .transpose()
            .map_err(rule)?;
        let flight_secure = take("flight_secure")
            .map(|v| v.flag("flight_secure"))
            .transpose()
            .map_err(rule)?;
        Ok(Self {
            transport,
            split,
            discovery_policy,
            task_counts,
            planning_timeout,
            unsafe_where_sql,
            limits,
            queries_per_task,
            mysql,
            flight_options,
            flight_endpoint_rewrite,
            flight_allowed_locations,
            unreadable_columns,
            timestamp_units,
            connect_timeout,
            query_timeout,
            flight_port,
            flight_secure,
        })
    }

    /// Refuses options that would carry a secret as text where the options travel to
    /// other processes (a pickled request or task of Daft's Ray runner): a client's private
    /// key given as text in `flight_options` ([`crate::options::FlightOptions::check_travels`]).
    /// Files are the way there: each process that connects reads them.
    pub fn check_travels(&self) -> Result<(), ReadError> {
        #[cfg(feature = "flight")]
        super::FlightOptions::check_travels(
            self.flight_options.iter().map(|(key, _)| key.as_str()),
        )?;
        Ok(())
    }

    /// How a read of these options is split: one task, or ([`SplitKind::Auto`]) one per
    /// group of the tablets the FE's HTTP face `fe` plans, within the planning timeout,
    /// aiming at the target task count, with the discovery policy.
    pub fn split(&self, mut fe: doris_plan::PlanEndpoint) -> crate::Split {
        match self.split {
            SplitKind::Single => crate::Split::Single,
            SplitKind::Auto => {
                fe.timeout = self.planning_timeout;
                crate::Split::Auto {
                    fe,
                    target_tasks: self.task_counts.target,
                    policy: self.discovery_policy,
                }
            }
        }
    }

    /// The trusted fragment (`unsafe_where_sql`) bound to `parameters`
    /// ([`doris_sql::bind_trusted_where`]: every marker bound, every parameter used, each
    /// value a typed literal); parameters without a fragment are refused.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use doris_connection::OptionValue;
    /// use doris_read::options::ReadOptions;
    /// use doris_sql::{Literal, Param};
    ///
    /// let read = ReadOptions::from_options([
    ///     ("transport".to_owned(), OptionValue::Text("mysql".into())),
    ///     ("unsafe_where_sql".to_owned(), OptionValue::Text("score > :min".into())),
    /// ])
    /// .unwrap();
    /// let params = BTreeMap::from([("min".to_owned(), Param::Scalar(Literal::Int64(5)))]);
    /// assert_eq!(read.trusted_where(&params).unwrap().unwrap().sql(), "score > 5");
    /// ```
    pub fn trusted_where(
        &self,
        parameters: &BTreeMap<String, doris_sql::Param>,
    ) -> Result<Option<doris_sql::TrustedWhere>, ReadError> {
        match &self.unsafe_where_sql {
            Some(fragment) => doris_sql::bind_trusted_where(fragment, parameters)
                .map(Some)
                .map_err(ReadError::Statement),
            None if !parameters.is_empty() => {
                Err(config("query_parameters require unsafe_where_sql"))
            }
            None => Ok(None),
        }
    }

    /// Lays the read's own settings over its connection's `settings`: the timeouts, the
    /// Flight port and TLS switch, and the MySQL link's TLS mode, pinned server key and
    /// packet cap (PyMySQL's `ssl_ca` is read by the caller, who sets
    /// [`ConnectionSettings::mysql_ca_pem`]: the file is read once, where the read is
    /// made). `origin` says how the connection came ([`ReadConnection`]); `disabled` under
    /// a given connection's TLS is refused.
    ///
    /// ```
    /// use std::time::Duration;
    /// use doris_connection::{ConnectionSettings, Credentials, OptionValue, SslMode};
    /// use doris_read::options::{ReadConnection, ReadOptions};
    ///
    /// let read = ReadOptions::from_options([
    ///     ("transport".to_owned(), OptionValue::Text("mysql".into())),
    ///     ("query_timeout_seconds".to_owned(), OptionValue::Int(60)),
    /// ])
    /// .unwrap();
    /// let mut fe = ConnectionSettings::new("fe", Credentials::new("root", "")).unwrap()
    ///     .with_request_timeout(Duration::from_secs(900));
    /// fe.mysql_ssl_mode = SslMode::VerifyCa;
    /// read.apply(&mut fe, ReadConnection::Given).unwrap();
    /// assert_eq!((fe.connect_timeout, fe.query_timeout), (Duration::from_secs(30), Duration::from_secs(60)));
    /// assert_eq!(fe.mysql_ssl_mode, SslMode::VerifyCa);
    /// ```
    pub fn apply(
        &self,
        settings: &mut ConnectionSettings,
        origin: ReadConnection,
    ) -> Result<(), ReadError> {
        match origin {
            ReadConnection::Keywords => {
                settings.connect_timeout = self
                    .connect_timeout
                    .unwrap_or(ConnectionSettings::DEFAULT_CONNECT_TIMEOUT);
                settings.query_timeout = self
                    .query_timeout
                    .unwrap_or(ConnectionSettings::DEFAULT_QUERY_TIMEOUT);
                settings.mysql_ssl_mode = self.mysql.ssl_mode.unwrap_or(settings.mysql_ssl_mode);
            }
            ReadConnection::Given => {
                settings.connect_timeout = self.connect_timeout.unwrap_or(settings.connect_timeout);
                settings.query_timeout = self.query_timeout.unwrap_or(settings.query_timeout);
                let floor = settings.mysql_ssl_mode;
                settings.mysql_ssl_mode = self
                    .mysql
                    .clone()
                    .at_least(floor)?
                    .ssl_mode
                    .unwrap_or(floor);
            }
        }
        settings.flight_port = self.flight_port.unwrap_or(settings.flight_port);
        settings.flight_secure = self.flight_secure.unwrap_or(settings.flight_secure);
        if let Some(pem) = &self.mysql.server_public_key {
            settings.mysql_server_public_key_pem = Some(pem.clone().into_bytes());
        }
        if let Some(bytes) = self.mysql.max_packet_bytes {
            settings.mysql_max_packet_bytes = bytes;
        }
        Ok(())
    }

    /// The MySQL link's own client certificate (`mysql_options` `ssl_cert` and `ssl_key`),
    /// read from its files now (by each process that connects).
    pub fn mysql_client_identity(&self) -> Result<Option<ClientIdentity>, ReadError> {
        let (cert, key) = match &self.mysql.ssl_cert_and_key {
            Some((cert, key)) => (Some(cert.as_str()), Some(key.as_str())),
            None => (None, None),
        };
        super::read_optional_client_identity(
            ("mysql_options ssl_cert", cert),
            ("mysql_options ssl_key", key),
        )
    }

    /// The FE's Flight SQL endpoint of `settings` (with [`ReadOptions::apply`] laid over
    /// them) with the read's location rewrite, allowed locations and ADBC options.
    #[cfg(feature = "flight")]
    pub fn flight_endpoint(
        &self,
        settings: &ConnectionSettings,
    ) -> Result<crate::FlightSqlEndpoint, ReadError> {
        let mut endpoint = crate::FlightSqlEndpoint::from_settings(settings)?;
        endpoint.rewrite = self.flight_endpoint_rewrite.clone().into_iter().collect();
        endpoint
            .allowlist
            .targets
            .extend(self.flight_allowed_locations.iter().cloned());
        super::FlightOptions::parse(self.flight_options.clone())?.apply(&mut endpoint);
        Ok(endpoint)
    }
}

/// A string: anything else is the empty string, which every name's rule refuses.
fn text(value: Option<&OptionValue>) -> &str {
    match value {
        Some(OptionValue::Text(text)) => text,
        _ => "",
    }
}

/// A mapping of non-empty strings to strings (`None`: empty).
fn strings(name: &str, value: Option<OptionValue>) -> Result<BTreeMap<String, String>, ReadError> {
    let map = match value {
        None => return Ok(BTreeMap::new()),
        Some(OptionValue::Map(map)) => map,
        Some(_) => return Err(config(format!("{name} must be a mapping"))),
    };
    map.into_iter()
        .map(|(key, item)| {
            if key.is_empty() {
                return Err(config(format!("{name} keys must be non-empty strings")));
            }
            match item {
                OptionValue::Text(item) => Ok((key, item)),
                _ => Err(config(format!("{name} value of '{key}' must be a string"))),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use OptionValue::*;

    fn read(pairs: &[(&str, OptionValue)]) -> Result<ReadOptions, ReadError> {
        ReadOptions::from_options(
            [("transport", Text("flight".into()))]
                .iter()
                .chain(pairs)
                .map(|(k, v)| ((*k).to_owned(), v.clone())),
        )
    }

    /// A read's settings as its tasks use them: its own, and those it lays over a
    /// connection made of its keywords.
    fn in_effect(read: &ReadOptions) -> String {
        let mut settings =
            ConnectionSettings::new("fe", doris_connection::Credentials::new("root", ""))
                .unwrap()
                .with_request_timeout(Duration::from_secs(900));
        read.apply(&mut settings, ReadConnection::Keywords).unwrap();
        let mut read = read.clone();
        (read.connect_timeout, read.query_timeout) = (None, None);
        (read.flight_port, read.flight_secure) = (None, None);
        let applied = (
            settings.connect_timeout,
            settings.query_timeout,
            settings.flight_secure,
        );
        format!("{read:?} {settings:?} {applied:?}")
    }

    #[test]
    fn each_default_given_by_name_is_the_default_left_out() {
        let left_out = in_effect(&read(&[]).unwrap());
        let defaults = ReadOptions::defaults();
        assert_eq!(defaults.len(), 13);
        for (name, value) in defaults {
            assert!(ReadOptions::NAMES.contains(&name), "{name}");
            assert_eq!(
                in_effect(&read(&[(name, value)]).unwrap()),
                left_out,
                "{name}"
            );
        }
    }

    #[test]
    fn each_rule_names_the_option() {
        let map = |k: &str, v: OptionValue| Map([(k.to_owned(), v)].into());
        for (name, value, message) in [
            (
                "batch_bytes",
                Bool(true),
                "batch_bytes must be an integer from 1",
            ),
            (
                "queries_per_task",
                Int(0),
                "queries_per_task must be an integer from 1",
            ),
            (
                "mysql_options",
                Text("ssl_mode=required".into()),
                "mysql_options must be a mapping",
            ),
            (
                "mysql_options",
                map("charset", Text("latin1".into())),
                "charset is fixed",
            ),
            (
                "flight_options",
                map("max_parallel_endpoints", Int(4)),
                "must be a string",
            ),
            (
                "flight_endpoint_rewrite",
                map("a:1", Int(2)),
                "must be a string",
            ),
            (
                "flight_allowed_locations",
                Text("h:1".into()),
                "a list of host:port",
            ),
            (
                "flight_allowed_locations",
                List(vec![Text("h:0".into())]),
                "entries must be host:port",
            ),
            (
                "unreadable_columns",
                Text("drop".into()),
                "unreadable_columns",
            ),
            (
                "timestamp_units",
                Text("ms".into()),
                "timestamp_units must be one of",
            ),
            ("batch_row", Int(1), "\"batch_row\" is not a read option"),
            ("split", Int(2), "split must be one of"),
            (
                "discovery_policy",
                Text("maybe".into()),
                "discovery_policy must be one of",
            ),
            (
                "target_tasks",
                Bool(true),
                "target_tasks must be an integer",
            ),
            (
                "planning_timeout_seconds",
                Text("10".into()),
                "must be a number of seconds",
            ),
            ("unsafe_where_sql", Text("   ".into()), "non-blank"),
            (
                "flight_port",
                Int(70_000),
                "flight_port must be an integer from 1 to 65535",
            ),
            ("flight_secure", Int(1), "flight_secure must be a bool"),
            (
                "connect_timeout_seconds",
                Int(0),
                "connect_timeout_seconds must be more than 0",
            ),
            (
                "query_timeout_seconds",
                Int(5),
                "query_timeout_seconds and its mysql_options key are both given",
            ),
        ] {
            let mysql = map("read_timeout", Int(5));
            let pairs = [(name, value), ("mysql_options", mysql)];
            let pairs = if name == "query_timeout_seconds" {
                &pairs[..]
            } else {
                &pairs[..1]
            };
            let error = read(pairs).unwrap_err().to_string();
            assert!(error.contains(message), "{name}: {error}");
        }
    }

    #[test]
    fn a_given_connections_tls_is_the_floor_and_its_timeouts_stay() {
        use doris_connection::{Credentials, SslMode};
        let fe = || {
            let mut fe = ConnectionSettings::new("fe", Credentials::new("root", ""))
                .unwrap()
                .with_request_timeout(Duration::from_secs(900));
            fe.mysql_ssl_mode = SslMode::Required;
            fe
        };
        let disabled = Map([("ssl_disabled".to_owned(), Bool(true))].into());
        let plain = read(&[("mysql_options", disabled)]).unwrap();
        assert!(plain.apply(&mut fe(), ReadConnection::Given).is_err());
        let mut keywords = fe();
        plain
            .apply(&mut keywords, ReadConnection::Keywords)
            .unwrap();
        assert_eq!(keywords.mysql_ssl_mode, SslMode::Disabled);
        assert_eq!(
            keywords.connect_timeout,
            ConnectionSettings::DEFAULT_CONNECT_TIMEOUT
        );
        let mut given = fe();
        read(&[])
            .unwrap()
            .apply(&mut given, ReadConnection::Given)
            .unwrap();
        assert_eq!(given.query_timeout, Duration::from_secs(900));
        assert_eq!(given.mysql_ssl_mode, SslMode::Required);
    }

    #[test]
    fn options_left_out_take_the_defaults() {
        let read = read(&[("queries_per_task", Null)]).unwrap();
        assert_eq!(read.limits, BatchLimits::default());
        assert_eq!(read.queries_per_task, None);
        assert_eq!(read.unreadable_columns, UnreadableColumns::default());
    }
}
