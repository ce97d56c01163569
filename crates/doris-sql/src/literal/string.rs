//! String values as Doris SQL text: quoted literals and, where a value would read
//! differently in another SQL mode, `from_base64('…')`.

/// Appends `value` as a string expression that reads the same in every SQL mode: a quoted
/// literal ([`push_string_literal`]), or, for a value holding a backslash or NUL (which
/// `NO_BACKSLASH_ESCAPES` would read differently inside a literal), `from_base64('…')` of its
/// bytes, which Doris folds to the same string before planning.
///
/// ```
/// let mut sql = String::new();
/// doris_sql::push_string_value(&mut sql, "a\\b");
/// assert_eq!(sql, "from_base64('YVxi')");
/// sql.clear();
/// doris_sql::push_string_value(&mut sql, "it's");
/// assert_eq!(sql, "'it''s'");
/// ```
pub fn push_string_value(out: &mut String, value: &str) {
    use base64::Engine as _;
    if value.contains(['\\', '\0']) {
        out.push_str("from_base64('");
        out.push_str(&base64::engine::general_purpose::STANDARD.encode(value));
        out.push_str("')");
    } else {
        push_string_literal(out, value);
    }
}

/// Appends `value` as a single-quoted MySQL/Doris string literal (where SQL takes only a
/// literal: a comment, a property; in expressions [`push_string_value`] reads the same in
/// every SQL mode).
///
/// A quote is doubled (`''`), which every SQL mode reads the same way: under
/// `NO_BACKSLASH_ESCAPES` a backslash-escaped quote (`\'`) would end the literal and let the
/// rest of the value be read as SQL. Line feeds and carriage returns go in as they are
/// (valid inside a literal in every mode). A backslash is written `\\` and NUL `\0`, as the
/// default SQL mode reads them: the session must read backslash escapes
/// ([`sql_mode::backslash_escapes_statement`](crate::sql_mode::backslash_escapes_statement);
/// under `NO_BACKSLASH_ESCAPES` such a value would read back with two backslashes, though it
/// never leaves the literal). Every other character (including non-ASCII text) is copied
/// verbatim.
///
/// ```
/// let mut sql = String::from("SELECT ");
/// doris_sql::push_string_literal(&mut sql, "it's \\ 'quoted'\n");
/// assert_eq!(sql, "SELECT 'it''s \\\\ ''quoted''\n'");
/// ```
pub fn push_string_literal(out: &mut String, value: &str) {
    out.reserve(value.len() + 2);
    out.push('\'');
    for ch in value.chars() {
        match ch {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            other => out.push(other),
        }
    }
    out.push('\'');
}
