//! The one error type of this crate.
//!
//! Errors name the problem and the offending identifier or position, but never echo a
//! literal value, a parameter value or a trusted SQL fragment: those can carry secrets or
//! personal data, and errors end up in logs.

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

/// The result type of this crate.
pub type Result<T, E = SqlError> = std::result::Result<T, E>;
