//! `unreadable_columns`: what a read of a table does when some of its columns have no Arrow
//! form (HLL, BITMAP, QUANTILE_STATE, AGG_STATE).

use std::str::FromStr;

use crate::error::ReadError;

/// What a read of a table with columns that have no Arrow form does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnreadableColumns {
    /// The read fails before anything is read, naming the columns (the reference connector
    /// 1.1's behaviour, and the default).
    #[default]
    Error,
    /// The columns are left out of the table's schema; a read that selects one fails.
    Omit,
}

impl UnreadableColumns {
    /// The names, as the option takes them.
    pub const NAMES: [&'static str; 2] = ["error", "omit"];

    /// The name of this choice.
    pub fn name(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Omit => "omit",
        }
    }

    /// Whether a read of `database.table` may go on when `unreadable` lists its columns
    /// with no Arrow form (`(name, Doris type, reason)`): under [`Self::Error`] the first
    /// one is [`ReadError::UnsupportedColumn`], its reason naming the others and the way
    /// to leave them out.
    pub fn check(self, unreadable: &[(String, String, String)]) -> Result<(), ReadError> {
        let (Self::Error, Some((column, doris_type, reason))) = (self, unreadable.first()) else {
            return Ok(());
        };
        let all = unreadable
            .iter()
            .map(|(name, ty, _)| format!("{name} ({ty})"))
            .collect::<Vec<_>>()
            .join(", ");
        Err(ReadError::UnsupportedColumn {
            column: column.clone(),
            doris_type: doris_type.clone(),
            reason: format!(
                "{reason}; the table's columns with no Arrow form are {all}: read with \
                 unreadable_columns=\"omit\" to leave them out"
            ),
        })
    }
}

impl FromStr for UnreadableColumns {
    type Err = ReadError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "error" => Ok(Self::Error),
            "omit" => Ok(Self::Omit),
            _ => Err(ReadError::Config(format!(
                "unreadable_columns must be one of {}",
                Self::NAMES.join(", ")
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn error_names_every_column_and_omit_lets_the_read_go_on() {
        let columns = [
            (
                "bits".to_owned(),
                "bitmap".to_owned(),
                "BITMAP has no Arrow form".to_owned(),
            ),
            (
                "h".to_owned(),
                "hll".to_owned(),
                "HLL has no Arrow form".to_owned(),
            ),
        ];
        let e = UnreadableColumns::default().check(&columns).unwrap_err();
        assert!(matches!(e, ReadError::UnsupportedColumn { .. }), "{e}");
        let text = e.to_string();
        assert!(
            text.contains("bits (bitmap), h (hll)") && text.contains("\"omit\""),
            "{text}"
        );
        assert!(UnreadableColumns::Omit.check(&columns).is_ok());
        assert!(UnreadableColumns::Error.check(&[]).is_ok());
        assert_eq!(
            "omit".parse::<UnreadableColumns>().unwrap(),
            UnreadableColumns::Omit
        );
        assert!("Omit".parse::<UnreadableColumns>().is_err());
    }
}
