//! Doris's rules for the names of databases, tables and labels (`FeNameFormat` in
//! fe-common), with Doris's refusals, per era ([`NameRules`]): the regexes of 2.1–3.x with
//! `enable_unicode_name_support` off (their default) or on, and the rules of
//! apache/doris#53479 (4.0 and later, unicode support on by default), under which a table or
//! column name may hold any character, as MySQL's identifiers do.
//! `table_name_length_limit = 64`.

use crate::error::EmulatorError;

/// `FeNameFormat`'s table name rule (no leading `_` or digit).
pub const TABLE_NAME_REGEX: &str = "^[a-zA-Z][a-zA-Z0-9-_]*$";
/// `Config.table_name_length_limit`'s default.
pub const TABLE_NAME_LENGTH_LIMIT: usize = 64;
/// `FeNameFormat`'s database name rule (64 characters at most).
pub const DATABASE_NAME_REGEX: &str = "^[a-zA-Z][a-zA-Z0-9-_]{0,63}$";
/// `FeNameFormat`'s column name rule (a Java regex: `+-/` in the class is the range
/// `+ , - . /`).
pub const COLUMN_NAME_REGEX: &str = "^[_a-zA-Z@0-9\\s/][.a-zA-Z0-9_+-/?@#$%^&*\"\\s,:]{0,255}$";
/// `SchemaChangeHandler.SHADOW_NAME_PREFIX`: a column name Doris keeps for itself.
const SHADOW_NAME_PREFIX: &str = "__doris_shadow_";
/// `FeNameFormat.checkLabel`'s rule.
pub const LABEL_REGEX: &str = "^[-_A-Za-z0-9:]{1,128}$";

/// `FeNameFormat`'s unicode table name rule (`enable_unicode_name_support`).
pub const UNICODE_TABLE_NAME_REGEX: &str = "^[a-zA-Z\\p{L}][a-zA-Z0-9-_\\p{L}]*$";
/// `FeNameFormat`'s unicode column name rule: letters of any script, but no space, quote,
/// comma or colon.
pub const UNICODE_COLUMN_NAME_REGEX: &str =
    "^[_a-zA-Z@0-9\\p{L}][.a-zA-Z0-9_+-/?@#$%^&*\\p{L}]{0,255}$";

/// Which of `FeNameFormat`'s rules new table and column names follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NameRules {
    /// 2.1–3.x, `enable_unicode_name_support` off: ASCII names.
    #[default]
    Latin,
    /// 2.1–3.x with `enable_unicode_name_support` on: letters of any script.
    Unicode,
    /// apache/doris#53479 (4.0 and later, where unicode support is on by default): a table
    /// name is any text that does not end in white space, a column name any text of at
    /// most 256 characters that is not one Doris keeps for itself.
    Any,
}

/// The #53479 table name rule, as its error names it.
pub const ANY_TABLE_NAME_REGEX: &str = "^.*[^\\s]$";
/// The #53479 column name rule, as its error names it.
pub const ANY_COLUMN_NAME_REGEX: &str = "^.{1,256}$";

/// [`check_table_name`] under `rules`.
pub fn check_table_name_under(name: &str, rules: NameRules) -> Result<(), EmulatorError> {
    match rules {
        NameRules::Latin => check_table_name(name, false),
        NameRules::Unicode => check_table_name(name, true),
        NameRules::Any => {
            if name.is_empty() || name.ends_with(char::is_whitespace) {
                return Err(EmulatorError::Analysis(format!(
                    "Incorrect table name '{name}'. Table name regex is '{ANY_TABLE_NAME_REGEX}'"
                )));
            }
            if name.chars().count() > TABLE_NAME_LENGTH_LIMIT {
                return Err(EmulatorError::Analysis(format!(
                    "Table name length exceeds limit, the length of table name '{name}' is {} \
                     which is greater than the configuration 'table_name_length_limit' \
                     ({TABLE_NAME_LENGTH_LIMIT}).",
                    name.chars().count()
                )));
            }
            Ok(())
        }
    }
}

/// [`check_column_name`] under `rules`.
pub fn check_column_name_under(name: &str, rules: NameRules) -> Result<(), EmulatorError> {
    match rules {
        NameRules::Latin => check_column_name(name, false),
        NameRules::Unicode => check_column_name(name, true),
        NameRules::Any => {
            let count = name.chars().count();
            if count == 0 || count > 256 || name.starts_with(SHADOW_NAME_PREFIX) {
                return Err(EmulatorError::Analysis(format!(
                    "Incorrect column name '{name}'. Column regex is '{ANY_COLUMN_NAME_REGEX}'"
                )));
            }
            Ok(())
        }
    }
}

/// A letter, then letters, digits, `-` and `_`; with `unicode`, a letter of any script
/// counts as a letter.
fn common_name(name: &str, unicode: bool) -> bool {
    let letter = |c: char| c.is_ascii_alphabetic() || (unicode && c.is_alphabetic());
    let mut chars = name.chars();
    chars.next().is_some_and(letter)
        && chars.all(|c| letter(c) || c.is_ascii_digit() || c == '-' || c == '_')
}

/// `CREATE TABLE`'s check of the new name: `Incorrect table name '…'. Table name regex
/// is '…'` (ERR_WRONG_TABLE_NAME); a name over the length limit, ERR_TABLE_NAME_LENGTH_LIMIT.
pub fn check_table_name(name: &str, unicode: bool) -> Result<(), EmulatorError> {
    if !common_name(name, unicode) {
        let regex = if unicode {
            UNICODE_TABLE_NAME_REGEX
        } else {
            TABLE_NAME_REGEX
        };
        return Err(EmulatorError::Analysis(format!(
            "Incorrect table name '{name}'. Table name regex is '{regex}'"
        )));
    }
    if name.chars().count() > TABLE_NAME_LENGTH_LIMIT {
        return Err(EmulatorError::Analysis(format!(
            "Table name length exceeds limit, the length of table name '{name}' is {} which is \
             greater than the configuration 'table_name_length_limit' ({TABLE_NAME_LENGTH_LIMIT}).",
            name.chars().count()
        )));
    }
    Ok(())
}

/// Whether `c` may start a column name (`[_a-zA-Z@0-9\s/]`).
fn column_first(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '@' | '/') || java_space(c)
}

/// The symbols both column rules take after the first character (`.`, `_`, the range
/// `+ , - . /`, `?@#$%^&*`).
fn column_symbol(c: char) -> bool {
    matches!(
        c,
        '.' | '_' | '+' | ',' | '-' | '/' | '?' | '@' | '#' | '$' | '%' | '^' | '&' | '*'
    )
}

/// Whether `c` may follow in a column name (`[.a-zA-Z0-9_+-/?@#$%^&*"\s,:]`).
fn column_rest(c: char) -> bool {
    c.is_ascii_alphanumeric() || column_symbol(c) || matches!(c, '"' | ':') || java_space(c)
}

/// Java's `\s`: space, tab, line feed, vertical tab, form feed, carriage return.
fn java_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{0b}' | '\u{0c}' | '\r')
}

/// `CREATE TABLE`'s check of a column name (`FeNameFormat.checkColumnName`):
/// `Incorrect column name '…'. Column regex is '…'` (ERR_WRONG_COLUMN_NAME) for a name the
/// rule refuses or one Doris keeps for itself; a name starting `mv_`/`mva_` has its own text.
pub fn check_column_name(name: &str, unicode: bool) -> Result<(), EmulatorError> {
    let mut chars = name.chars();
    let fits = if unicode {
        // `\p{L}` joins both classes; `\s`, `"`, `,` and `:` leave the second.
        let rest = |c: char| c.is_alphabetic() || c.is_ascii_digit() || column_symbol(c);
        chars
            .next()
            .is_some_and(|c| c.is_alphabetic() || c.is_ascii_digit() || matches!(c, '_' | '@'))
            && chars.clone().count() <= 255
            && chars.all(rest)
    } else {
        chars.next().is_some_and(column_first)
            && chars.clone().count() <= 255
            && chars.all(column_rest)
    };
    if !fits || name.starts_with(SHADOW_NAME_PREFIX) {
        let regex = if unicode {
            UNICODE_COLUMN_NAME_REGEX
        } else {
            COLUMN_NAME_REGEX
        };
        return Err(EmulatorError::Analysis(format!(
            "Incorrect column name '{name}'. Column regex is '{regex}'"
        )));
    }
    if name.starts_with("mv_") || name.starts_with("mva_") {
        return Err(EmulatorError::Analysis(format!(
            "Incorrect column name {name}, column name can't start with 'mv_'/'mva_'"
        )));
    }
    Ok(())
}

/// `CREATE DATABASE`'s check of the new name: `Incorrect database name '…'`
/// (ERR_WRONG_DB_NAME).
pub fn check_database_name(name: &str) -> Result<(), EmulatorError> {
    if common_name(name, false) && name.len() <= 64 {
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

/// Doris's reserved keywords that hold a `_` (newest release: `DorisLexer.g4`'s keywords
/// less `DorisParser.g4`'s `nonReserved`): no identifier, so no label in SQL.
const RESERVED_WITH_UNDERSCORE: [&str; 8] = [
    "ACCOUNT_LOCK",
    "ACCOUNT_UNLOCK",
    "LOW_PRIORITY",
    "NO_USE_MV",
    "SQL_BLOCK_RULE",
    "TOKEN_FILTER",
    "TYPE_CAST",
    "USE_MV",
];

/// A label written in SQL (`BEGIN WITH LABEL <l>`, `INSERT … WITH LABEL <l>`), where
/// Doris's grammar takes an identifier: unquoted, `(LETTER | DIGIT | '_')+`, not all
/// digits (that is a number) and no reserved keyword. A backquoted label keeps its backticks, which the label rule
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
    if token.is_empty()
        || token.bytes().all(|b| b.is_ascii_digit())
        || RESERVED_WITH_UNDERSCORE
            .iter()
            .any(|k| k.eq_ignore_ascii_case(token))
    {
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
            assert!(check_table_name(ok, false).is_ok(), "{ok}");
        }
        for bad in ["", "_t", "_dd_stage_1", "1t", "t.x", "t t", "é"] {
            let e = check_table_name(bad, false).unwrap_err().to_string();
            assert!(e.contains("Incorrect table name"), "{e}");
        }
        let long = check_table_name(&"x".repeat(65), false)
            .unwrap_err()
            .to_string();
        assert!(long.contains("Table name length exceeds limit"), "{long}");
        for ok in [
            "k",
            "_dd_load",
            "__dd_load",
            "a b",
            "a,b:c",
            "x\"y",
            "1st",
            "@v",
            "/p",
            "a.b",
        ] {
            assert!(check_column_name(ok, false).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "a`b",
            "a(b)",
            "é",
            "a'b",
            "__doris_shadow_k",
            "mv_k",
            "mva_k",
            "-a",
        ] {
            assert!(check_column_name(bad, false).is_err(), "{bad}");
        }
        assert!(check_column_name(&"c".repeat(256), false).is_ok());
        assert!(check_column_name(&"c".repeat(257), false).is_err());
        // With enable_unicode_name_support: letters of any script, but no space or quote.
        assert!(
            check_column_name("名前", true).is_ok() && check_column_name("größe", true).is_ok()
        );
        assert!(
            check_column_name("a b", true).is_err() && check_column_name("x\"y", true).is_err()
        );
        assert!(check_table_name("表", true).is_ok() && check_table_name("表", false).is_err());
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
            sql_label("sql_block_RULE")
                .unwrap_err()
                .contains("mismatched input")
        );
        assert!(
            sql_label("current_timestamp").is_ok(),
            "a non-reserved keyword"
        );
        assert!(
            sql_label(&"x".repeat(129))
                .unwrap_err()
                .contains("Label format error")
        );
    }

    /// apache/doris#53479's rules (4.0 and later): names as MySQL takes them.
    #[test]
    fn any_name_rules_take_what_mysql_takes() {
        for ok in ["events 2026", "订单", "a,b(c)", "x"] {
            assert!(check_table_name_under(ok, NameRules::Any).is_ok(), "{ok}");
        }
        for bad in ["", "trailing ", "t\t"] {
            assert!(
                check_table_name_under(bad, NameRules::Any).is_err(),
                "{bad:?}"
            );
        }
        for ok in ["amount (usd), net", "名 前", "mv_x", "a`b"] {
            assert!(check_column_name_under(ok, NameRules::Any).is_ok(), "{ok}");
        }
        assert!(check_column_name_under("__doris_shadow_x", NameRules::Any).is_err());
        assert!(check_column_name_under(&"c".repeat(257), NameRules::Any).is_err());
    }
}
