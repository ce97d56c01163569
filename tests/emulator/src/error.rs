//! Emulator errors, each carrying the text Doris would show for the same situation.

/// Something a Doris face reports to its client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmulatorError {
    /// `Unknown database 'x'`
    #[error("Unknown database '{0}'")]
    UnknownDatabase(String),
    /// Nereids's unknown-table text.
    #[error("Table [{table}] does not exist in database [{database}].")]
    UnknownTable {
        /// The database searched.
        database: String,
        /// The missing table.
        table: String,
    },
    /// `Can't create database 'x'; database exists`
    #[error("Can't create database '{0}'; database exists")]
    DatabaseExists(String),
    /// `Table 'x' already exists`
    #[error("Table '{0}' already exists")]
    TableExists(String),
    /// `No database selected`
    #[error("No database selected")]
    NoDatabaseSelected,
    /// An analysis error (bad DDL, unknown column, unsupported statement, ...).
    #[error("{0}")]
    Analysis(String),
    /// A data-quality failure while loading.
    #[error("{0}")]
    DataQuality(String),
    /// A lock was poisoned by a panic elsewhere.
    #[error("internal error: a lock was poisoned")]
    Poisoned,
    /// Any other internal failure.
    #[error("internal error: {0}")]
    Internal(String),
}
