//! A read's transport settings as named options ([`ReadOptions::from_options`]): the
//! transport, the batch bounds, tablet groups per task, PyMySQL's `mysql_options`, ADBC's
//! `flight_options`, the Flight location settings and the column policies, each checked by
//! its rule before anything is sent.

use std::collections::BTreeMap;

use doris_connection::{HostPort, OptionValue};

use super::{MySqlOptions, UnreadableColumns};
use crate::error::ReadError;
use crate::{BatchLimits, TaskCounts, TimestampUnits, TransportKind};

fn config(message: impl Into<String>) -> ReadError {
    ReadError::Config(message.into())
}

/// A read's transport settings, checked.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// The wire.
    pub transport: TransportKind,
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
}

impl ReadOptions {
    /// The option names [`ReadOptions::from_options`] reads.
    pub const NAMES: [&'static str; 10] = [
        "transport",
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
        Ok(Self {
            transport,
            limits,
            queries_per_task,
            mysql,
            flight_options,
            flight_endpoint_rewrite,
            flight_allowed_locations,
            unreadable_columns,
            timestamp_units,
        })
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
        ] {
            let error = read(&[(name, value)]).unwrap_err().to_string();
            assert!(error.contains(message), "{name}: {error}");
        }
    }

    #[test]
    fn options_left_out_take_the_defaults() {
        let read = read(&[("queries_per_task", Null)]).unwrap();
        assert_eq!(read.limits, BatchLimits::default());
        assert_eq!(read.queries_per_task, None);
        assert_eq!(read.unreadable_columns, UnreadableColumns::default());
    }
}
