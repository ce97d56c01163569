//! [`Transport`]: the wire a read takes, and [`Transport::read`], the one entry point
//! of a read whichever wire it takes.
//!
//! ```no_run
//! # async fn run() -> Result<(), doris_read::ReadError> {
//! use doris_read::{BatchLimits, MySqlEndpoint, Transport, TransportKind};
//! # let schema: arrow_schema::SchemaRef = unimplemented!();
//! let kind: TransportKind = "mysql".parse()?;
//! assert_eq!(kind, TransportKind::MySql);
//! let transport = Transport::MySql(MySqlEndpoint::new("fe", 9030, "root", ""));
//! let batches = transport
//!     .read(["SELECT `id` FROM `d`.`t`"], schema, BatchLimits::default())
//!     .await?
//!     .collect()
//!     .await?;
//! # Ok(()) }
//! ```

use std::str::FromStr;

use arrow_schema::SchemaRef;
use futures::future::BoxFuture;

use crate::error::ReadError;
#[cfg(feature = "flight")]
use crate::flight::{self, FlightSqlEndpoint};
use crate::merge::start_merged;
use crate::mysql::stream::{self, BatchLimits, BatchStream};
use doris_mysql::MySqlEndpoint;

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
    /// The MySQL text protocol (COM_QUERY, text rows decoded into Arrow builders).
    MySql(MySqlEndpoint),
    /// Arrow Flight SQL (`GetFlightInfo` on the FE, `DoGet` on every endpoint; the `flight`
    /// feature).
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

    /// Reads `statements` (one SELECT, or a read task's several, e.g. one per group of
    /// tablets) as one stream of batches following `schema` and `limits`: every statement
    /// starts at once and their batches arrive as they come. The first statement that
    /// fails to start fails the read, and an error in any of them ends the stream (the
    /// others are cancelled), so a stream that ends without an error holds every row the
    /// server sent for every statement. Dropping the stream cancels them all. At least one
    /// statement is needed.
    pub async fn read<S: Into<String>>(
        &self,
        statements: impl IntoIterator<Item = S>,
        schema: SchemaRef,
        limits: BatchLimits,
    ) -> Result<BatchStream, ReadError> {
        let statements: Vec<String> = statements.into_iter().map(Into::into).collect();
        if statements.is_empty() {
            return Err(ReadError::Config(
                "a read needs at least one statement".into(),
            ));
        }
        let starts: Vec<_> = statements
            .into_iter()
            .map(|sql| self.read_one(sql, schema.clone(), limits))
            .collect();
        start_merged(starts).await
    }

    /// One statement's stream, started. Boxed as `Send`, so that `read`'s future is `Send`
    /// (spawnable) for every caller, which the compiler cannot prove through the merge's
    /// generic iterator otherwise.
    fn read_one(
        &self,
        sql: String,
        schema: SchemaRef,
        limits: BatchLimits,
    ) -> BoxFuture<'_, Result<BatchStream, ReadError>> {
        match self {
            Self::MySql(endpoint) => Box::pin(stream::query(endpoint, sql, schema, limits)),
            #[cfg(feature = "flight")]
            Self::Flight(endpoint) => Box::pin(flight::query(endpoint, sql, schema, limits)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read can be spawned on a multi-threaded runtime, on either transport (a compile-time
    /// check: this does not build if `read`'s future is not `Send`).
    #[allow(dead_code)]
    fn reads_are_send(transport: &'static Transport, schema: SchemaRef) {
        fn send<T: Send>(_: T) {}
        send(transport.read(["SELECT 1"], schema, BatchLimits::default()));
    }

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
