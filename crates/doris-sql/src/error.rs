//! The one error type of this crate, and the kinds every crate of the workspace sorts its
//! errors into.
//!
//! Errors name the problem and the offending identifier or position, but never echo a
//! literal value, a parameter value or a trusted SQL fragment: those can carry secrets or
//! personal data, and errors end up in logs.

/// What kind of failure an error is, the same vocabulary for every crate of the workspace
/// (`SqlError::kind`, `doris_connection`'s errors, `doris_plan::PlanError::kind`,
/// `doris_read::ReadError::kind`, `doris_streamload::StreamLoadError::kind`, …), so a
/// caller decides what to do without matching each crate's variants: fix the input, fix
/// the credentials or grants, retry later, or settle an outcome that may have taken effect.
///
/// ```
/// use doris_sql::{ErrorKind, TableRef};
/// let error = TableRef::new("db", "").unwrap_err();
/// assert_eq!(error.kind(), ErrorKind::Configuration);
/// assert_eq!(ErrorKind::NotFound.to_string(), "not_found");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The caller's input or settings cannot be used (a name, a value, an option, an
    /// address the allowlist refuses); nothing reached the server, or nothing it could act on.
    Configuration,
    /// The server refused the credentials.
    Authentication,
    /// The credentials lack a privilege the operation needs.
    Permission,
    /// A database, table, column or job does not exist.
    NotFound,
    /// The data or the server cannot do what was asked: a type with no mapping, a value a
    /// column cannot hold, metadata that cannot be understood, a release that lacks a
    /// behaviour the operation relies on.
    Incompatible,
    /// The link failed, or the server's answer was broken (a read fails whole; a write
    /// says in its own error what is known of its outcome).
    Transport,
    /// No answer in time.
    Timeout,
    /// The server answered with a refusal: the request did not take effect.
    Rejected,
    /// The outcome is unknown: the request may or may not have taken effect (rerun a
    /// write with the same label or key to settle it).
    Ambiguous,
}

impl ErrorKind {
    /// The kind's name, lower case with `_` (`not_found`): the `kind` attribute of the
    /// Python binding's exceptions.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Configuration => "configuration",
            ErrorKind::Authentication => "authentication",
            ErrorKind::Permission => "permission",
            ErrorKind::NotFound => "not_found",
            ErrorKind::Incompatible => "incompatible",
            ErrorKind::Transport => "transport",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Rejected => "rejected",
            ErrorKind::Ambiguous => "ambiguous",
        }
    }

    /// Every kind, in declaration order.
    pub const ALL: [ErrorKind; 9] = [
        ErrorKind::Configuration,
        ErrorKind::Authentication,
        ErrorKind::Permission,
        ErrorKind::NotFound,
        ErrorKind::Incompatible,
        ErrorKind::Transport,
        ErrorKind::Timeout,
        ErrorKind::Rejected,
        ErrorKind::Ambiguous,
    ];
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything that can go wrong in `doris-sql`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SqlError {
    /// An identifier (database, table or column name) cannot be used.
    #[error("invalid {kind} identifier: {reason}")]
    InvalidIdentifier {
        /// What the identifier names: `database`, `table`, `column`, ...
        kind: &'static str,
        /// Why it was refused.
        reason: &'static str,
    },

    /// A literal value cannot be rendered faithfully as Doris SQL.
    #[error("invalid {kind} literal: {reason}")]
    InvalidLiteral {
        /// The literal's type, e.g. `decimal` or `datetime`.
        kind: &'static str,
        /// Why it was refused (never the value itself).
        reason: String,
    },

    /// The trusted WHERE fragment or its `:name` parameters are inconsistent.
    #[error("invalid unsafe_where_sql: {0}")]
    InvalidTrustedFragment(String),

    /// The SELECT being built is not well formed (e.g. no columns, a bad tablet id).
    #[error("invalid query: {0}")]
    InvalidQuery(String),

    /// A Doris type spelling could not be parsed.
    #[error("cannot parse Doris type at byte {position}: {reason}")]
    TypeParse {
        /// Byte offset in the type text where parsing failed.
        position: usize,
        /// What was expected there.
        reason: String,
    },

    /// A Doris type has no Arrow representation in this crate's mapping.
    #[error("Doris type {doris_type} has no Arrow mapping: {reason}")]
    UnsupportedType {
        /// The Doris type as Doris spells it.
        doris_type: String,
        /// Why it cannot be mapped.
        reason: &'static str,
    },

    /// `SHOW CREATE TABLE` text or `DESC` rows could not be understood.
    #[error("cannot parse table metadata: {0}")]
    MetadataParse(String),

    /// Files staged for a streaming job would sort at or below its offset, so the job
    /// would never load them (`doris_jobs::feed::StagePlan::check_after`).
    #[error("{0}")]
    StagingOrder(String),

    /// The predicate IR (usually received as JSON) is malformed.
    #[error("invalid predicate IR: {0}")]
    InvalidIr(String),
}

impl SqlError {
    /// The error's [`ErrorKind`]: a type with no Arrow mapping, a type spelling or table
    /// metadata that cannot be understood is [`ErrorKind::Incompatible`]; every other error
    /// is about the caller's input ([`ErrorKind::Configuration`]).
    pub fn kind(&self) -> ErrorKind {
        match self {
            SqlError::TypeParse { .. }
            | SqlError::UnsupportedType { .. }
            | SqlError::MetadataParse(_) => ErrorKind::Incompatible,
            SqlError::InvalidIdentifier { .. }
            | SqlError::InvalidLiteral { .. }
            | SqlError::InvalidTrustedFragment(_)
            | SqlError::InvalidQuery(_)
            | SqlError::StagingOrder(_)
            | SqlError::InvalidIr(_) => ErrorKind::Configuration,
        }
    }
}

/// The result type of this crate.
pub type Result<T, E = SqlError> = std::result::Result<T, E>;
