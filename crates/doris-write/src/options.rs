//! A write described by named options, as a configuration or `daft_doris`'s
//! `DorisWriteOptions` gives it: [`WriteSpec::from_options`]. A value of the wrong type is
//! read as one the option's rule refuses, so it is named by the same message as a wrong
//! value (never shown).

use std::collections::BTreeMap;

use doris_connection::OptionValue;
use doris_sql::WriteOperation;
use doris_streamload::StreamLoadError;

use crate::atomic::CommitRecord;
use crate::{WriteDisposition, WriteSpec, parse_format};

fn config(message: impl Into<String>) -> StreamLoadError {
    StreamLoadError::Config(message.into())
}

impl WriteSpec {
    /// The option names [`WriteSpec::from_options`] reads (`DorisWriteOptions`' keys).
    pub const OPTION_NAMES: [&'static str; 16] = [
        "operation",
        "format",
        "batch_rows",
        "batch_bytes",
        "label_prefix",
        "idempotence_key",
        "max_filter_ratio",
        "strict_mode",
        "request_timeout_seconds",
        "load_timeout_seconds",
        "load_properties",
        "two_phase_commit",
        "max_retries",
        "atomic",
        "write_mode",
        "commit_ledger",
    ];

    /// The spec of the options given by name, checked ([`WriteSpec::check`]); one left
    /// out keeps [`WriteSpec::new`]'s default, a name not in
    /// [`WriteSpec::OPTION_NAMES`] is refused. [`OptionValue::Null`] is "none" where an
    /// option has one (`format`, `idempotence_key`, the timeouts, `load_properties`,
    /// `atomic`, `commit_ledger`: no ledger, the label alone).
    ///
    /// ```
    /// use doris_connection::OptionValue;
    /// use doris_write::WriteSpec;
    ///
    /// let spec = WriteSpec::from_options([
    ///     ("operation".to_owned(), OptionValue::Text("upsert".into())),
    ///     ("batch_rows".to_owned(), OptionValue::Int(10)),
    /// ])
    /// .unwrap();
    /// assert_eq!(spec.batch_rows, 10);
    /// let wrong = WriteSpec::from_options([("batch_rows".to_owned(), OptionValue::Bool(true))]);
    /// assert!(wrong.unwrap_err().to_string().contains("batch_rows must be an integer"));
    /// ```
    pub fn from_options(
        options: impl IntoIterator<Item = (String, OptionValue)>,
    ) -> Result<Self, StreamLoadError> {
        let mut given: BTreeMap<String, OptionValue> = options.into_iter().collect();
        if let Some(name) = given
            .keys()
            .find(|name| !Self::OPTION_NAMES.contains(&name.as_str()))
        {
            return Err(config(format!("{name:?} is not a write option")));
        }
        let operation = match given.remove("operation") {
            Some(value) => text(&value).parse::<WriteOperation>().map_err(config)?,
            None => WriteOperation::Load,
        };
        let mut spec = WriteSpec::new(operation);
        for (name, value) in &given {
            spec.set(name, value)?;
        }
        spec.check()?;
        Ok(spec)
    }

    /// Each option's default by name, as [`WriteSpec::from_options`] reads it (a
    /// configuration's documentation, another language's signature): [`WriteSpec::new`]'s
    /// for a load. An option whose default is nothing (no format, key, timeout, property or
    /// mode forced) is left out.
    ///
    /// ```
    /// use doris_connection::OptionValue;
    /// use doris_write::WriteSpec;
    /// assert!(WriteSpec::option_defaults().contains(&("max_retries", OptionValue::Int(4))));
    /// ```
    pub fn option_defaults() -> Vec<(&'static str, OptionValue)> {
        let spec = WriteSpec::new(WriteOperation::Load);
        let text = |t: &str| OptionValue::Text(t.to_owned());
        let mut defaults = vec![
            ("operation", text(spec.operation.as_str())),
            ("batch_rows", OptionValue::Int(spec.batch_rows as i64)),
            ("batch_bytes", OptionValue::Int(spec.batch_bytes as i64)),
            ("label_prefix", text(&spec.label_prefix)),
            (
                "max_filter_ratio",
                OptionValue::Float(spec.max_filter_ratio),
            ),
            ("strict_mode", OptionValue::Bool(spec.strict_mode)),
            ("two_phase_commit", OptionValue::Bool(spec.two_phase_commit)),
            ("max_retries", OptionValue::Int(spec.max_retries.into())),
            ("write_mode", text(WriteDisposition::default().as_str())),
        ];
        if let CommitRecord::Ledger(name) = &spec.commit_record {
            defaults.push(("commit_ledger", text(name)));
        }
        defaults
    }

    /// Sets the option `name` (not `operation`) from `value`, unchecked but for its type.
    fn set(&mut self, name: &str, value: &OptionValue) -> Result<(), StreamLoadError> {
        let null = *value == OptionValue::Null;
        match name {
            "format" => self.format = parse_format((!null).then(|| text(value)))?,
            "batch_rows" => self.batch_rows = usize::try_from(integer(value)).unwrap_or(0),
            "batch_bytes" => self.batch_bytes = u64::try_from(integer(value)).unwrap_or(0),
            "label_prefix" => self.label_prefix = text(value).to_owned(),
            "idempotence_key" => self.idempotence_key = (!null).then(|| text(value).to_owned()),
            "max_filter_ratio" => {
                self.max_filter_ratio = match value {
                    OptionValue::Int(n) => *n as f64,
                    OptionValue::Float(f) => *f,
                    _ => f64::NAN,
                }
            }
            "strict_mode" => self.strict_mode = flag(name, value)?,
            "request_timeout_seconds" => self.timeout = seconds(name, value)?,
            "load_timeout_seconds" => self.load_timeout = seconds(name, value)?,
            "load_properties" => self.load_properties = properties(value)?,
            "two_phase_commit" => self.two_phase_commit = flag(name, value)?,
            "max_retries" => self.max_retries = u32::try_from(integer(value)).unwrap_or(u32::MAX),
            "atomic" => self.atomic = (!null).then(|| flag(name, value)).transpose()?,
            "write_mode" => {
                self.overwrite = text(value).parse::<WriteDisposition>()?.overwrites();
            }
            "commit_ledger" => {
                self.commit_record = match value {
                    OptionValue::Null => CommitRecord::LabelOnly,
                    other => CommitRecord::Ledger(text(other).to_owned()),
                }
            }
            _ => unreachable!("names are checked against OPTION_NAMES"),
        }
        Ok(())
    }
}

/// A string: anything else is the empty string, which every name's rule refuses.
fn text(value: &OptionValue) -> &str {
    match value {
        OptionValue::Text(text) => text,
        _ => "",
    }
}

/// An integer: anything else is -1, which every count's rule refuses.
fn integer(value: &OptionValue) -> i64 {
    match value {
        OptionValue::Int(n) => *n,
        _ => -1,
    }
}

fn flag(name: &str, value: &OptionValue) -> Result<bool, StreamLoadError> {
    value.flag(name).map_err(|e| config(e.to_string()))
}

/// `None`, or a timeout by [`OptionValue::seconds`]'s rule.
fn seconds(
    name: &str,
    value: &OptionValue,
) -> Result<Option<std::time::Duration>, StreamLoadError> {
    if *value == OptionValue::Null {
        return Ok(None);
    }
    value
        .seconds(name)
        .map(Some)
        .map_err(|e| config(e.to_string()))
}

/// `load_properties`: a mapping of strings to strings, or `(key, value)` pairs, keys not
/// empty; `None` is none.
fn properties(value: &OptionValue) -> Result<BTreeMap<String, String>, StreamLoadError> {
    let pairs: Vec<(String, &OptionValue)> = match value {
        OptionValue::Null => Vec::new(),
        OptionValue::Map(map) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
        OptionValue::List(items) => items
            .iter()
            .map(|item| match item {
                OptionValue::List(pair) if pair.len() == 2 => match &pair[0] {
                    OptionValue::Text(key) => Ok((key.clone(), &pair[1])),
                    _ => Err(config("load_properties keys must be non-empty strings")),
                },
                _ => Err(config("load_properties must be (key, value) pairs")),
            })
            .collect::<Result<_, _>>()?,
        _ => {
            return Err(config(
                "load_properties must be a mapping of strings or (key, value) pairs",
            ));
        }
    };
    let mut out = BTreeMap::new();
    for (key, item) in pairs {
        if key.is_empty() {
            return Err(config("load_properties keys must be non-empty strings"));
        }
        let OptionValue::Text(item) = item else {
            return Err(config("load_properties values must be strings"));
        };
        out.insert(key, item.clone());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use OptionValue::*;

    fn spec(pairs: &[(&str, OptionValue)]) -> Result<WriteSpec, StreamLoadError> {
        WriteSpec::from_options(pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())))
    }

    #[test]
    fn each_default_given_by_name_is_the_default_left_out() {
        let left_out = spec(&[]).unwrap();
        let defaults = WriteSpec::option_defaults();
        assert_eq!(defaults.len(), 10);
        for (name, value) in defaults {
            assert!(WriteSpec::OPTION_NAMES.contains(&name), "{name}");
            assert_eq!(spec(&[(name, value)]).unwrap(), left_out, "{name}");
        }
    }

    #[test]
    fn a_value_of_the_wrong_type_is_named_by_the_options_rule() {
        for (name, value, message) in [
            (
                "batch_rows",
                Bool(true),
                "batch_rows must be an integer from 1 to 1000000",
            ),
            ("batch_bytes", Text("64M".into()), "batch_bytes"),
            (
                "max_retries",
                Int(21),
                "max_retries must be an integer from 0 to 20",
            ),
            ("strict_mode", Int(1), "strict_mode must be a bool"),
            ("max_filter_ratio", Bool(true), "max_filter_ratio"),
            (
                "request_timeout_seconds",
                Int(0),
                "request_timeout_seconds must be more than 0",
            ),
            ("label_prefix", Int(7), "label_prefix"),
            (
                "load_properties",
                Map([("timeout".into(), Int(5))].into()),
                "values must be strings",
            ),
            (
                "load_properties",
                Text("columns=id".into()),
                "must be a mapping",
            ),
            (
                "load_properties",
                Map([(String::new(), Text("x".into()))].into()),
                "non-empty",
            ),
            (
                "write_mode",
                Text("replace".into()),
                "write_mode must be one of",
            ),
            ("commit_ledger", Text(String::new()), "commit_ledger"),
            ("batch_row", Int(1), "\"batch_row\" is not a write option"),
        ] {
            let error = spec(&[(name, value)]).unwrap_err().to_string();
            assert!(error.contains(message), "{name}: {error}");
        }
    }

    #[test]
    fn null_is_none_where_an_option_has_one() {
        let spec = spec(&[
            ("commit_ledger", Null),
            ("request_timeout_seconds", Null),
            (
                "load_properties",
                List(vec![List(vec![
                    Text("where".into()),
                    Text("id < 3".into()),
                ])]),
            ),
        ])
        .unwrap();
        assert_eq!(spec.commit_record, CommitRecord::LabelOnly);
        assert_eq!(spec.timeout, None);
        assert_eq!(spec.load_properties["where"], "id < 3");
    }
}
