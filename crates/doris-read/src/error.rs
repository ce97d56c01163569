//! Read errors, one variant per class a caller reacts to differently.
//!
//! No `Display` contains a password. Server messages are kept (they name tables, columns
//! and users), except that a syntax error's echo of the statement (`near '…'`) is cut, so
//! that no literal of a query leaks into logs.

/// Everything that can go wrong while reading.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// Invalid options; nothing was sent.
    #[error("invalid read configuration: {0}")]
    Config(String),
    /// The server refused the credentials.
    #[error("Doris refused the credentials: {0}")]
    Auth(String),
    /// The user lacks a privilege.
    #[error("permission denied: {0}")]
    Permission(String),
    /// The database or table does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// The server rejected the query.
    #[error("query failed (error {code}): {message}")]
    Query {
        /// MySQL error number.
        code: u16,
        /// The server's text, statement echo removed.
        message: String,
    },
    /// A column's type has no Arrow form, and the read selects it.
    #[error("column {column} has type {doris_type}, which cannot be read: {reason}")]
    UnsupportedColumn {
        /// Column name.
        column: String,
        /// Doris type as DESC prints it.
        doris_type: String,
        /// Why.
        reason: String,
    },
    /// A value could not be decoded into its Arrow type.
    #[error("column {column}: cannot decode a value as {arrow_type}: {reason}")]
    Decode {
        /// Column name.
        column: String,
        /// Target Arrow type.
        arrow_type: String,
        /// Why (the value itself is not shown).
        reason: String,
    },
    /// The connection failed or was cut (a result may be incomplete; nothing partial is
    /// returned as complete).
    #[error("transport error: {0}")]
    Transport(String),
    /// An operation took longer than its timeout.
    #[error("timed out: {0}")]
    Timeout(String),
    /// Tablet planning through the FE's `_query_plan` failed (and the discovery policy
    /// does not fall back, or the failure is not one that may fall back).
    #[error("tablet planning failed: {0}")]
    Planning(String),
    /// Metadata could not be understood.
    #[error("malformed metadata: {0}")]
    Metadata(String),
}

/// Cuts the statement echo of a server message.
pub(crate) fn scrub(message: &str) -> String {
    match message.find(" near '") {
        Some(at) => format!("{} near (statement text omitted)", &message[..at]),
        None => message.to_owned(),
    }
}

impl ReadError {
    /// Classifies a sqlx error.
    pub(crate) fn from_sqlx(e: sqlx::Error) -> Self {
        match e {
            sqlx::Error::Database(db) => {
                let code = db
                    .try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
                    .map_or(0, |m| m.number());
                let message = scrub(db.message());
                let lower = message.to_ascii_lowercase();
                match code {
                    1045 => Self::Auth(message),
                    1044 | 1142 | 1143 | 1227 => Self::Permission(message),
                    1049 | 1051 | 1146 => Self::NotFound(message),
                    _ if lower.contains("command denied") || lower.contains("access denied") => {
                        Self::Permission(message)
                    }
                    _ if lower.contains("does not exist")
                        || lower.contains("unknown table")
                        || lower.contains("unknown database") =>
                    {
                        Self::NotFound(message)
                    }
                    _ => Self::Query { code, message },
                }
            }
            sqlx::Error::Io(io) => Self::Transport(io.to_string()),
            sqlx::Error::Tls(t) => Self::Transport(format!("TLS: {t}")),
            sqlx::Error::PoolTimedOut => Self::Timeout("connection pool".into()),
            other => Self::Transport(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_echo_is_cut() {
        assert_eq!(
            scrub("You have an error in your SQL syntax; check the manual near 'secret' at line 1"),
            "You have an error in your SQL syntax; check the manual near (statement text omitted)"
        );
        assert_eq!(scrub("Unknown table 't'"), "Unknown table 't'");
    }
}
