//! [`Transport`]: the wire a read takes, with one entry point for both.
//!
//! ```no_run
//! # async fn run() -> Result<(), doris_read::ReadError> {
//! use doris_read::{BatchLimits, MySqlEndpoint, Transport, TransportKind};
//! # let schema: arrow_schema::SchemaRef = unimplemented!();
//! let kind: TransportKind = "mysql".parse()?;
//! assert_eq!(kind, TransportKind::MySql);
//! let transport = Transport::MySql(MySqlEndpoint::new("fe", 9030, "root", ""));
//! let batches = transport
//!     .query("SELECT `id` FROM `d`.`t`".into(), schema, BatchLimits::default())
//!     .await?
//!     .collect()
//!     .await?;
//! # Ok(()) }
//! ```

use std::str::FromStr;

use arrow_schema::SchemaRef;

use crate::error::ReadError;
#[cfg(feature = "flight")]
use crate::flight::{self, FlightSqlEndpoint};
use crate::merge::start_merged;
use crate::mysql::connect::MySqlEndpoint;
use crate::mysql::stream::{self, BatchLimits, BatchStream};

/// Which transport a user names (`"mysql"` or `"flight"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    /// The MySQL text protocol (COM_QUERY).
    MySql,
    /// Arrow Flight SQL: `GetFlightInfo` on the FE, `DoGet` at every endpoint.
    Flight,
}

impl TransportKind {
    /// The names [`FromStr`] accepts.
    pub const NAMES: [&'static str; 2] = ["mysql", "flight"];

    /// `"mysql"` or `"flight"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MySql => "mysql",
            Self::Flight => "flight",
        }
    }
}

impl FromStr for TransportKind {
    type Err = ReadError;

    /// `"mysql"` or `"flight"`; anything else is a [`ReadError::Config`] naming both.
    fn from_str(name: &str) -> Result<Self, ReadError> {
        match name {
            "mysql" => Ok(Self::MySql),
            "flight" => Ok(Self::Flight),
            _ => Err(ReadError::Config(
                "transport must be one of 'mysql', 'flight'".into(),
            )),
        }
    }
}

/// A read's wire and where it connects.
#[derive(Debug, Clone)]
// One value per read task, built once and borrowed: the size difference costs nothing, and
// unboxed variants keep `Transport::Flight(endpoint)` the whole construction.
#[allow(clippy::large_enum_variant)]
pub enum Transport {
    /// The MySQL text protocol ([`stream::query`]).
    MySql(MySqlEndpoint),
    /// Arrow Flight SQL ([`flight::query`]; the `flight` feature).
    #[cfg(feature = "flight")]
    Flight(FlightSqlEndpoint),
}

impl Transport {
    /// Which transport this is.
    pub fn kind(&self) -> TransportKind {
        match self {
            Self::MySql(_) => TransportKind::MySql,
            #[cfg(feature = "flight")]
            Self::Flight(_) => TransportKind::Flight,
        }
    }

    /// Runs one SELECT; its batches follow `schema` and `limits`. A stream that ends
    /// without an error holds every row the server sent.
    pub async fn query(
        &self,
        sql: String,
        schema: SchemaRef,
        limits: BatchLimits,
    ) -> Result<BatchStream, ReadError> {
        match self {
            Self::MySql(endpoint) => stream::query(endpoint, sql, schema, limits).await,
            #[cfg(feature = "flight")]
            Self::Flight(endpoint) => flight::query(endpoint, sql, schema, limits).await,
        }
    }

    /// Starts every statement at once (a read task holding several tablet groups) and
    /// reads them as one stream; the first that fails to start fails the read. At least
    /// one statement is needed.
    pub async fn query_all(
        &self,
        statements: Vec<String>,
        schema: SchemaRef,
        limits: BatchLimits,
    ) -> Result<BatchStream, ReadError> {
        if statements.is_empty() {
            return Err(ReadError::Config(
                "a read task needs at least one statement".into(),
            ));
        }
        start_merged(
            statements
                .into_iter()
                .map(|sql| self.query(sql, schema.clone(), limits)),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_names_parse_and_print_back() {
        for name in TransportKind::NAMES {
            let kind: TransportKind = name.parse().unwrap();
            assert_eq!(kind.as_str(), name);
        }
        for bad in ["MySQL", "flight ", "", "arrow"] {
            let e = bad.parse::<TransportKind>().unwrap_err();
            assert!(matches!(e, ReadError::Config(_)), "{bad}: {e}");
            // The refusal names the choices, never the value given.
            assert!(bad.is_empty() || !e.to_string().contains(bad), "{e}");
        }
    }
}
