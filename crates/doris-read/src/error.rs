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
    Planning(#[source] doris_plan::PlanError),
    /// Metadata could not be understood.
    #[error("malformed metadata: {0}")]
    Metadata(String),
    /// Doris's metadata (`DESC` rows, `SHOW CREATE TABLE`, `jobs()`/`tasks()` rows) could
    /// not be parsed by `doris-sql`.
    #[error("malformed metadata: {0}")]
    MetadataParse(#[source] doris_sql::SqlError),
    /// A statement could not be built from the caller's arguments (a name, literal or
    /// option `doris-sql` refused); nothing was sent.
    #[error("invalid read configuration: {0}")]
    Statement(#[source] doris_sql::SqlError),
    /// The FE named a Flight `DoGet` location the allowlist does not admit; nothing was
    /// sent to it (the bearer token stays with the FE and the admitted BEs).
    #[error(
        "the FE sent a Flight location that is not allowed ({location}): {reason}; allow it \
         with a rewrite or an explicit target"
    )]
    LocationRefused {
        /// `host:port` of the location.
        location: String,
        /// Why it is not admitted.
        reason: String,
    },
}

impl ReadError {
    /// The error's [`ErrorKind`](doris_sql::ErrorKind). A refused query is
    /// [`Rejected`](doris_sql::ErrorKind::Rejected); a column that cannot be read, a
    /// value that cannot be decoded and metadata that cannot be understood are
    /// [`Incompatible`](doris_sql::ErrorKind::Incompatible); a Flight location the
    /// allowlist refuses is [`Configuration`](doris_sql::ErrorKind::Configuration) (allow
    /// it, or nothing is sent); planning errors keep their own kind.
    pub fn kind(&self) -> doris_sql::ErrorKind {
        use doris_sql::ErrorKind;
        match self {
            ReadError::Config(_) | ReadError::LocationRefused { .. } => ErrorKind::Configuration,
            ReadError::Statement(e) => e.kind(),
            ReadError::Auth(_) => ErrorKind::Authentication,
            ReadError::Permission(_) => ErrorKind::Permission,
            ReadError::NotFound(_) => ErrorKind::NotFound,
            ReadError::Query { .. } => ErrorKind::Rejected,
            ReadError::UnsupportedColumn { .. }
            | ReadError::Decode { .. }
            | ReadError::Metadata(_)
            | ReadError::MetadataParse(_) => ErrorKind::Incompatible,
            ReadError::Transport(_) => ErrorKind::Transport,
            ReadError::Timeout(_) => ErrorKind::Timeout,
            ReadError::Planning(e) => e.kind(),
        }
    }
}

pub(crate) use doris_mysql::{bounded, scrub_statement_text};

impl ReadError {
    /// Classifies a sqlx error as [`doris_mysql::MySqlError::from_sqlx`] does.
    pub(crate) fn from_sqlx(e: sqlx::Error) -> Self {
        doris_mysql::MySqlError::from_sqlx(e).into()
    }
}

/// The MySQL link's errors keep their class (an answer over a session's cap is
/// metadata this crate cannot take).
impl From<doris_mysql::MySqlError> for ReadError {
    fn from(e: doris_mysql::MySqlError) -> Self {
        use doris_mysql::MySqlError;
        match e {
            MySqlError::Config(m) => ReadError::Config(m),
            MySqlError::Auth(m) => ReadError::Auth(m),
            MySqlError::Permission(m) => ReadError::Permission(m),
            MySqlError::NotFound(m) => ReadError::NotFound(m),
            MySqlError::Query { code, message } => ReadError::Query { code, message },
            MySqlError::TooLarge(m) => ReadError::Metadata(m),
            MySqlError::Transport(m) => ReadError::Transport(m),
            MySqlError::Timeout(m) => ReadError::Timeout(m),
            // `MySqlError` is non-exhaustive: a class added there reads as a transport
            // failure here until this crate names it.
            other => ReadError::Transport(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planning_texts_lose_the_statement_and_every_quoted_value() {
        use doris_plan::PlanError;
        for e in [
            PlanError::Rejected(
                "errCode = 2, detailMessage = Invalid number 'secret-7' for column `id`".into(),
            ),
            PlanError::Internal(
                "errCode = 2, detailMessage = planner failed\n== SQL ==\nSELECT * FROM t WHERE k = 'secret-7'".into(),
            ),
            PlanError::NotFound("Unknown column 'secret-7' in 'where clause'".into()),
        ] {
            let text = crate::table::from_plan_error(e).to_string();
            assert!(!text.contains("secret-7"), "{text}");
        }
    }

    #[test]
    fn every_read_error_has_the_kind_a_caller_reacts_to() {
        use doris_sql::ErrorKind;
        let planning = |e| ReadError::Planning(e);
        for (error, kind) in [
            (ReadError::Auth("denied".into()), ErrorKind::Authentication),
            (ReadError::Timeout("30 s".into()), ErrorKind::Timeout),
            (
                ReadError::Query {
                    code: 1105,
                    message: "x".into(),
                },
                ErrorKind::Rejected,
            ),
            (
                ReadError::Decode {
                    column: "c".into(),
                    arrow_type: "Int32".into(),
                    reason: "r".into(),
                },
                ErrorKind::Incompatible,
            ),
            (
                ReadError::LocationRefused {
                    location: "10.0.0.9:9060".into(),
                    reason: "not listed".into(),
                },
                ErrorKind::Configuration,
            ),
            // A planning error keeps the plan error's kind.
            (
                planning(doris_plan::PlanError::Permission("no".into())),
                ErrorKind::Permission,
            ),
            (
                planning(doris_plan::PlanError::Internal("lost".into())),
                ErrorKind::Rejected,
            ),
        ] {
            assert_eq!(error.kind(), kind, "{error}");
        }
    }

    #[test]
    fn a_planning_error_keeps_the_plan_error_as_its_source() {
        let e = ReadError::Planning(doris_plan::PlanError::Internal("tablet lost".into()));
        let source = std::error::Error::source(&e).expect("a source");
        let plan = source
            .downcast_ref::<doris_plan::PlanError>()
            .expect("a PlanError");
        assert!(
            matches!(plan, doris_plan::PlanError::Internal(m) if m == "tablet lost"),
            "{plan}"
        );
        assert_eq!(
            e.to_string(),
            "tablet planning failed: the FE failed to plan: tablet lost"
        );
    }
}
