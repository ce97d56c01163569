//! Stream Load labels: validated against Doris's grammar, deterministic or random.
//!
//! Doris accepts labels matching `^[-_A-Za-z0-9:]{1,128}$` (`FeNameFormat.checkLabel`) and
//! keeps each one unique per database among running and successful transactions. A label
//! is therefore the idempotence key of a load: the same rows under the same label are
//! loaded at most once.

use std::fmt;

use crate::error::StreamLoadError;

/// Doris's longest label.
pub const MAX_LABEL_LEN: usize = 128;

/// A label Doris accepts (serialized as its text, checked when read back).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Label(String);

impl TryFrom<String> for Label {
    type Error = StreamLoadError;

    fn try_from(text: String) -> Result<Self, StreamLoadError> {
        Self::new(text)
    }
}

impl From<Label> for String {
    fn from(label: Label) -> String {
        label.0
    }
}

fn label_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':')
}

impl Label {
    /// Checks `text` against Doris's label grammar.
    pub fn new(text: impl Into<String>) -> Result<Self, StreamLoadError> {
        let text = text.into();
        if text.is_empty() || text.len() > MAX_LABEL_LEN {
            return Err(StreamLoadError::Config(format!(
                "a Doris label has 1 to {MAX_LABEL_LEN} characters, this one has {}",
                text.len()
            )));
        }
        if let Some(bad) = text.chars().find(|c| !label_char(*c)) {
            return Err(StreamLoadError::Config(format!(
                "a Doris label may only hold letters, digits, '-', '_' and ':', not {bad:?}"
            )));
        }
        Ok(Self(text))
    }

    /// `prefix_<32 random hex digits>`.
    pub fn random(prefix: &str) -> Result<Self, StreamLoadError> {
        Self::new(format!("{prefix}_{}", uuid::Uuid::new_v4().simple()))
    }

    /// The label text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How a [`crate::Loader`] names its loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelScheme {
    /// `prefix_key_partition_sequence`: the same job rerun over the same data produces the
    /// same labels, so Doris refuses to load any batch twice. `key` identifies the job run
    /// (e.g. a pipeline run id), `partition` the writer (e.g. a Daft partition index).
    Deterministic {
        /// Label prefix.
        prefix: String,
        /// Idempotence key of the job.
        key: String,
        /// Writer partition.
        partition: u32,
    },
    /// `prefix_<random hex>` for every load (retries still reuse the load's label).
    Random {
        /// Label prefix.
        prefix: String,
    },
}

impl LabelScheme {
    /// The label of the load with this sequence number.
    pub fn label(&self, sequence: u64) -> Result<Label, StreamLoadError> {
        match self {
            Self::Deterministic {
                prefix,
                key,
                partition,
            } => Label::new(format!("{prefix}_{key}_{partition}_{sequence}")),
            Self::Random { prefix } => Label::random(prefix),
        }
    }

    /// Checks up front that every label this scheme can produce is valid.
    pub fn validate(&self) -> Result<(), StreamLoadError> {
        self.label(u64::MAX).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar_and_length() {
        assert!(Label::new("etl:2026-11-29_run-1").is_ok());
        assert!(Label::new("").is_err());
        assert!(Label::new("a b").is_err());
        assert!(Label::new("é").is_err());
        assert!(Label::new("x".repeat(128)).is_ok());
        assert!(Label::new("x".repeat(129)).is_err());
    }

    #[test]
    fn deterministic_labels_repeat_and_random_ones_do_not() {
        let scheme = LabelScheme::Deterministic {
            prefix: "daft".into(),
            key: "run42".into(),
            partition: 3,
        };
        assert_eq!(scheme.label(7).unwrap().as_str(), "daft_run42_3_7");
        assert_eq!(scheme.label(7).unwrap(), scheme.label(7).unwrap());
        assert!(scheme.validate().is_ok());
        let random = LabelScheme::Random {
            prefix: "daft".into(),
        };
        assert_ne!(random.label(1).unwrap(), random.label(1).unwrap());
        let too_long = LabelScheme::Deterministic {
            prefix: "p".repeat(110),
            key: "k".into(),
            partition: 0,
        };
        assert!(too_long.validate().is_err());
    }
}
