//! Identifier validation and backtick quoting.
//!
//! Doris quotes identifiers with backticks and, like MySQL, writes an embedded backtick
//! twice. Every identifier this crate renders goes through [`quote_ident`], so no name can
//! change the structure of a statement.

use crate::error::{Result, SqlError};

/// Checks that `name` can be used as a Doris identifier of the given `kind`.
///
/// Empty names and names containing NUL are refused: Doris cannot store them and a NUL
/// would truncate the statement in some drivers.
///
/// ```
/// use doris_sql::validate_ident;
/// assert!(validate_ident("column", "score").is_ok());
/// assert!(validate_ident("column", "").is_err());
/// ```
pub fn validate_ident(kind: &'static str, name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(SqlError::InvalidIdentifier {
            kind,
            reason: "it is empty",
        });
    }
    if name.contains('\0') {
        return Err(SqlError::InvalidIdentifier {
            kind,
            reason: "it contains a NUL character",
        });
    }
    Ok(())
}

/// Checks a list of column names a caller chose (a read's projection, a job's INSERT
/// columns): at least one, each a valid identifier ([`validate_ident`]), none repeated.
/// Messages name the rule, never a name.
///
/// ```
/// use doris_sql::check_column_list;
/// assert!(check_column_list(&["id".into(), "name".into()]).is_ok());
/// assert!(check_column_list(&[]).is_err());
/// assert!(check_column_list(&["id".into(), "id".into()]).is_err());
/// ```
pub fn check_column_list(columns: &[String]) -> Result<()> {
    if columns.is_empty() {
        return Err(SqlError::InvalidQuery(
            "columns must name at least one column".into(),
        ));
    }
    for (i, column) in columns.iter().enumerate() {
        validate_ident("column", column)?;
        if columns[..i].contains(column) {
            return Err(SqlError::InvalidQuery(
                "columns must not repeat a name".into(),
            ));
        }
    }
    Ok(())
}

/// Quotes `name` with backticks, doubling embedded backticks, after validating it.
///
/// ```
/// use doris_sql::quote_ident;
/// assert_eq!(quote_ident("column", "event`name").unwrap(), "`event``name`");
/// ```
pub fn quote_ident(kind: &'static str, name: &str) -> Result<String> {
    validate_ident(kind, name)?;
    let mut out = String::with_capacity(name.len() + 2);
    push_quoted_ident(&mut out, name);
    Ok(out)
}

/// Appends an already validated identifier to `out`, quoted.
pub(crate) fn push_quoted_ident(out: &mut String, name: &str) {
    out.push('`');
    for ch in name.chars() {
        if ch == '`' {
            out.push('`');
        }
        out.push(ch);
    }
    out.push('`');
}

/// A physical Doris table: a database and a table name, both validated.
///
/// ```
/// use doris_sql::TableRef;
/// let table = TableRef::new("analytics", "events").unwrap();
/// assert_eq!(table.to_sql(), "`analytics`.`events`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TableRef {
    database: String,
    table: String,
}

impl TableRef {
    /// Validates both names and builds the reference.
    pub fn new(database: impl Into<String>, table: impl Into<String>) -> Result<Self> {
        let database = database.into();
        let table = table.into();
        validate_ident("database", &database)?;
        validate_ident("table", &table)?;
        Ok(Self { database, table })
    }

    /// The database name, unquoted.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// The table name, unquoted.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// `` `db`.`tbl` ``, ready to splice into a statement.
    pub fn to_sql(&self) -> String {
        let mut out = String::new();
        push_quoted_ident(&mut out, &self.database);
        out.push('.');
        push_quoted_ident(&mut out, &self.table);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_plain_and_special_names() {
        assert_eq!(quote_ident("column", "a").unwrap(), "`a`");
        assert_eq!(quote_ident("column", "`").unwrap(), "````");
        assert_eq!(quote_ident("column", "a b.c").unwrap(), "`a b.c`");
        assert_eq!(quote_ident("column", "名字").unwrap(), "`名字`");
        assert_eq!(quote_ident("column", "x'\"\\").unwrap(), "`x'\"\\`");
    }

    #[test]
    fn a_table_ref_keeps_both_names_unquoted() {
        let t = TableRef::new("sales", "order`s").unwrap();
        assert_eq!((t.database(), t.table()), ("sales", "order`s"));
        assert_eq!(t.to_sql(), "`sales`.`order``s`");
    }

    #[test]
    fn refuses_empty_and_nul_names_with_kind() {
        let err = quote_ident("table", "").unwrap_err();
        assert_eq!(err.to_string(), "invalid table identifier: it is empty");
        let err = TableRef::new("db", "a\0b").unwrap_err();
        assert!(matches!(
            err,
            SqlError::InvalidIdentifier { kind: "table", .. }
        ));
        assert!(TableRef::new("", "t").is_err());
    }
}
