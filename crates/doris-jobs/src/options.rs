//! A job's settings and S3 properties as named options, as a configuration or
//! `daft_doris.streaming`'s keywords give them: [`JobSettings::from_options`],
//! [`property_pairs`]. Every rule names the option, never its value.

use doris_connection::OptionValue;
use doris_sql::{Result, SqlError};

use crate::{JobSettings, MAX_JOB_SETTING};

fn invalid(message: impl Into<String>) -> SqlError {
    SqlError::InvalidQuery(message.into())
}

/// A property value as the text Doris takes ([`OptionValue::property_text`]).
fn property_text(key: &str, value: &OptionValue) -> Result<String> {
    value.property_text(key).map_err(|e| invalid(e.to_string()))
}

/// `(key, text)` pairs of a mapping or of a list of `[key, value]` pairs (`Null`: none),
/// values as [`OptionValue::property_text`] reads them; `what` names the option in errors.
pub fn property_pairs(what: &str, value: &OptionValue) -> Result<Vec<(String, String)>> {
    let pairs: Vec<(&OptionValue, &OptionValue)> = match value {
        OptionValue::Null => Vec::new(),
        OptionValue::Map(map) => {
            return map
                .iter()
                .map(|(key, value)| Ok((key.clone(), property_text(key, value)?)))
                .collect();
        }
        OptionValue::List(items) => items
            .iter()
            .map(|item| match item {
                OptionValue::List(pair) if pair.len() == 2 => Ok((&pair[0], &pair[1])),
                _ => Err(invalid(format!("{what} must be (key, value) pairs"))),
            })
            .collect::<Result<_>>()?,
        _ => {
            return Err(invalid(format!(
                "{what} must be a mapping or (key, value) pairs"
            )));
        }
    };
    pairs
        .into_iter()
        .map(|(key, value)| match key {
            OptionValue::Text(key) => Ok((key.clone(), property_text(key, value)?)),
            _ => Err(invalid(format!("{what} keys must be strings"))),
        })
        .collect()
}

impl JobSettings {
    /// The option names [`JobSettings::from_options`] reads.
    pub const NAMES: [&'static str; 5] = [
        "max_batch_files",
        "max_batch_bytes",
        "max_interval_seconds",
        "offset",
        "session",
    ];

    /// The settings given by name (`Null`: left out), each checked by its rule
    /// ([`JobSettings::properties`] checks the rest).
    ///
    /// ```
    /// use doris_connection::OptionValue;
    /// use doris_jobs::JobSettings;
    ///
    /// let settings = JobSettings::from_options([
    ///     ("max_interval_seconds".to_owned(), OptionValue::Int(5)),
    ///     ("offset".to_owned(), OptionValue::Null),
    /// ])
    /// .unwrap();
    /// assert_eq!((settings.max_interval_seconds, settings.offset), (Some(5), None));
    /// let wrong = JobSettings::from_options([("max_batch_files".to_owned(), OptionValue::Bool(true))]);
    /// assert!(wrong.unwrap_err().to_string().contains("s3.max_batch_files must be an integer"));
    /// ```
    pub fn from_options(options: impl IntoIterator<Item = (String, OptionValue)>) -> Result<Self> {
        let mut settings = Self::default();
        for (name, value) in options {
            if value == OptionValue::Null {
                continue;
            }
            let count = |key: &str| match value {
                OptionValue::Int(n) if n >= 1 && n as u64 <= MAX_JOB_SETTING => Ok(Some(n as u64)),
                _ => Err(invalid(format!(
                    "{key} must be an integer from 1 to {MAX_JOB_SETTING}"
                ))),
            };
            match name.as_str() {
                "max_batch_files" => settings.max_batch_files = count("s3.max_batch_files")?,
                "max_batch_bytes" => settings.max_batch_bytes = count("s3.max_batch_bytes")?,
                "max_interval_seconds" => settings.max_interval_seconds = count("max_interval")?,
                "offset" => match &value {
                    OptionValue::Text(key) => settings.offset = Some(key.clone()),
                    _ => return Err(invalid("offset must be the key of the last file to skip")),
                },
                "session" => settings.session = property_pairs("session", &value)?,
                other => return Err(invalid(format!("{other:?} is not a job setting"))),
            }
        }
        Ok(settings)
    }
}
