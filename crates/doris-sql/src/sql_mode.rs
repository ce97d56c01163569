//! The one SQL mode that changes how this crate's literals read: `NO_BACKSLASH_ESCAPES`.
//!
//! Doris's lexer pairs a backslash with the character after it in every mode, so no quote
//! ever ends a literal early; what the mode changes is the value. By default `'a\\b'` is
//! `a\b` and `'\0'` is NUL; under `NO_BACKSLASH_ESCAPES` the same text is `a\\b` and `\0`,
//! and a value that ends in a backslash has no single-quoted spelling at all. In
//! expressions [`push_string_value`](crate::push_string_value) sidesteps the mode
//! (`from_base64('…')`), but where SQL takes only a literal (a comment, a property) the
//! session has to read backslash escapes. So a session that sends statements reads its mode
//! once ([`SQL_MODE_QUERY`]) and, when the mode holds `NO_BACKSLASH_ESCAPES`, sets it again
//! without that one flag ([`backslash_escapes_statement`]); every other flag stays as the
//! server or the user's account gave it.
//!
//! `SELECT @@sql_mode` answers with the flags' names joined by commas
//! (`SqlModeHelper.decode`); `SET sql_mode` takes names or the number
//! (`SqlModeHelper.encode`), and a constant only (`Set statement does't support
//! non-constant expr.`), hence the read first.
//!
//! ```
//! use doris_sql::sql_mode::backslash_escapes_statement;
//! assert_eq!(backslash_escapes_statement("ONLY_FULL_GROUP_BY"), None);
//! assert_eq!(
//!     backslash_escapes_statement("ONLY_FULL_GROUP_BY,NO_BACKSLASH_ESCAPES").as_deref(),
//!     Some("SET sql_mode = 'ONLY_FULL_GROUP_BY'"),
//! );
//! ```

/// The query whose one cell is the session's SQL mode.
pub const SQL_MODE_QUERY: &str = "SELECT @@sql_mode";

/// The flag that turns backslash escapes off inside string literals.
pub const NO_BACKSLASH_ESCAPES: &str = "NO_BACKSLASH_ESCAPES";

/// `NO_BACKSLASH_ESCAPES` as a bit of the numeric mode (Doris's `SqlModeHelper`: `1 << 20`),
/// for a server that answers with the number.
const NO_BACKSLASH_ESCAPES_BIT: u64 = 1 << 20;

/// The `SET sql_mode = …` statement that keeps every flag of `mode` but
/// `NO_BACKSLASH_ESCAPES`, or `None` when `mode` does not hold it (nothing to send).
/// `mode` is the text of `@@sql_mode`: flag names joined by commas, in any case, or the
/// number.
///
/// ```
/// use doris_sql::sql_mode::backslash_escapes_statement;
/// assert_eq!(
///     backslash_escapes_statement(" no_backslash_escapes ").as_deref(),
///     Some("SET sql_mode = ''"),
/// );
/// // A numeric answer keeps its other bits.
/// assert_eq!(
///     backslash_escapes_statement(&((1u64 << 20) | 32).to_string()).as_deref(),
///     Some("SET sql_mode = 32"),
/// );
/// ```
pub fn backslash_escapes_statement(mode: &str) -> Option<String> {
    let mode = mode.trim();
    if !mode.is_empty() && mode.bytes().all(|b| b.is_ascii_digit()) {
        let bits: u64 = mode.parse().ok()?;
        return (bits & NO_BACKSLASH_ESCAPES_BIT != 0)
            .then(|| format!("SET sql_mode = {}", bits & !NO_BACKSLASH_ESCAPES_BIT));
    }
    let flags: Vec<&str> = mode
        .split(',')
        .map(str::trim)
        .filter(|flag| !flag.is_empty())
        .collect();
    if !flags
        .iter()
        .any(|flag| flag.eq_ignore_ascii_case(NO_BACKSLASH_ESCAPES))
    {
        return None;
    }
    let kept: Vec<&str> = flags
        .into_iter()
        .filter(|flag| !flag.eq_ignore_ascii_case(NO_BACKSLASH_ESCAPES))
        .collect();
    let mut sql = String::from("SET sql_mode = ");
    // Flag names are letters and underscores; the literal keeps anything else in it.
    crate::push_string_literal(&mut sql, &kept.join(","));
    Some(sql)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_backslash_flag_is_dropped_and_only_when_present() {
        for (mode, expected) in [
            ("", None),
            ("ONLY_FULL_GROUP_BY", None),
            ("NO_BACKSLASH_ESCAPES_X", None),
            ("1", None),
            ("NO_BACKSLASH_ESCAPES", Some("SET sql_mode = ''")),
            (
                "ANSI,no_backslash_escapes, STRICT_TRANS_TABLES",
                Some("SET sql_mode = 'ANSI,STRICT_TRANS_TABLES'"),
            ),
            ("1048576", Some("SET sql_mode = 0")),
            ("1048609", Some("SET sql_mode = 33")),
        ] {
            assert_eq!(
                backslash_escapes_statement(mode).as_deref(),
                expected,
                "{mode:?}"
            );
        }
    }
}
