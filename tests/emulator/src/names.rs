//! Doris's rules for the names of databases, tables and labels (`FeNameFormat` in
//! fe-common), with Doris's refusals. The default configuration is emulated:
//! `enable_unicode_name_support = false`, `table_name_length_limit = 64`.

use crate::error::EmulatorError;

/// `FeNameFormat`'s table name rule (no leading `_` or digit).
pub const TABLE_NAME_REGEX: &str = "^[a-zA-Z][a-zA-Z0-9-_]*$";
/// `Config.table_name_length_limit`'s default.
pub const TABLE_NAME_LENGTH_LIMIT: usize = 64;
/// `FeNameFormat`'s database name rule (64 characters at most).
pub const DATABASE_NAME_REGEX: &str = "^[a-zA-Z][a-zA-Z0-9-_]{0,63}$";
/// `FeNameFormat.checkLabel`'s rule.
pub const LABEL_REGEX: &str = "^[-_A-Za-z0-9:]{1,128}$";

/// A letter, then letters, digits, `-` and `_`.
fn common_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// `CREATE TABLE`'s check of the new name: `Incorrect table name '…'. Table name regex
/// is '…'` (ERR_WRONG_TABLE_NAME), also for a name over the length limit.
pub fn check_table_name(name: &str) -> Result<(), EmulatorError> {
    if common_name(name) && name.len() <= TABLE_NAME_LENGTH_LIMIT {
        return Ok(());
    }
    Err(EmulatorError::Analysis(format!(
        "Incorrect table name '{name}'. Table name regex is '{TABLE_NAME_REGEX}'"
    )))
}

/// `CREATE DATABASE`'s check of the new name: `Incorrect database name '…'`
/// (ERR_WRONG_DB_NAME).
pub fn check_database_name(name: &str) -> Result<(), EmulatorError> {
    if common_name(name) && name.len() <= 64 {
        return Ok(());
    }
    Err(EmulatorError::Analysis(format!(
        "Incorrect database name '{name}'"
    )))
}

/// Whether Doris's label rule accepts `label`.
pub fn valid_label(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= 128
        && label
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b':'))
}

/// The text of Doris's refusal of a label (`FeNameFormat.checkLabel`).
pub fn label_format_error(label: &str) -> String {
    format!("Label format error. regex: {LABEL_REGEX}, label: {label}")
}

/// A label written in SQL (`BEGIN WITH LABEL <l>`, `INSERT … WITH LABEL <l>`), where
/// Doris's grammar takes an identifier: unquoted, `(LETTER | DIGIT | '_')+` and not all
/// digits (that is a number). A backquoted label keeps its backticks, which the label rule
/// then refuses. `Err` is Doris's message: a syntax error, or the label rule's refusal.
pub fn sql_label(token: &str) -> Result<&str, String> {
    if token.starts_with('`') {
        return Err(label_format_error(token));
    }
    if let Some(bad) = token
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
    {
        return Err(format!(
            "\nextraneous input '{bad}' expecting {{<EOF>, ';'}}(line 1, pos 0)"
        ));
    }
    if token.is_empty() || token.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "\nmismatched input '{token}' expecting {{<EOF>, ';'}}(line 1, pos 0)"
        ));
    }
    if !valid_label(token) {
        return Err(label_format_error(token));
    }
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_doris_refuses() {
        for ok in ["t", "T1", "a-b_c", &"x".repeat(64)] {
            assert!(check_table_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "_t",
            "_dd_stage_1",
            "1t",
            "t.x",
            "t t",
            "é",
            &"x".repeat(65),
        ] {
            let e = check_table_name(bad).unwrap_err().to_string();
            assert!(e.contains("Incorrect table name"), "{e}");
        }
        assert!(check_database_name("demo").is_ok());
        assert!(check_database_name("_demo").is_err());
        assert!(check_database_name(&"d".repeat(65)).is_err());
        assert!(valid_label("a-b:c_1") && !valid_label("a.b") && !valid_label(""));
        assert_eq!(
            sql_label("daft_doris_2026_2D12"),
            Ok("daft_doris_2026_2D12")
        );
        assert!(
            sql_label("p_2026-12-04")
                .unwrap_err()
                .contains("extraneous input '-'")
        );
        assert!(sql_label("`x`").unwrap_err().contains("Label format error"));
        assert!(sql_label("123").unwrap_err().contains("mismatched input"));
        assert!(
            sql_label(&"x".repeat(129))
                .unwrap_err()
                .contains("Label format error")
        );
    }
}
