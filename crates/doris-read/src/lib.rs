//! # doris-read
//!
//! Reading Doris tables into Arrow record batches, from Rust alone: the MySQL text
//! protocol (sqlx, COM_QUERY only) or Arrow Flight SQL (arrow-flight, `DoGet` on every
//! endpoint at its own location).
//!
//! - [`mysql::connect::MySqlEndpoint`] connects with options Doris accepts (sqlx's default
//!   connect statement is refused by Doris) and sets the session time zone with a literal.
//! - [`mysql::stream::query`] streams a result as batches bounded by rows and bytes, decoding
//!   text cells straight into Arrow builders ([`decode::RowDecoder`]); dropping the stream
//!   closes the connection without draining the result.
//! - [`flight::query`] runs a query over Flight SQL: basic → bearer handshake with the FE,
//!   `GetFlightInfo`, then `DoGet` on each endpoint (a BE) with bounded parallelism, batches
//!   cast safely to the planned schema; the same [`BatchStream`] as the MySQL transport.
//! - [`Transport`] is either of them behind one entry point: [`Transport::query`] for one
//!   SELECT, [`Transport::query_all`] for a task's statements read at once; a user's
//!   `"mysql"` / `"flight"` parses into a [`TransportKind`].
//! - [`merge()`] reads several queries' streams at once as one (a read task that holds
//!   several tablet groups keeps every BE sending however few tasks the engine runs).
//! - [`schema::discover`] reads `DESC` into an Arrow schema; a column whose type has no
//!   Arrow form fails only when a read selects it.
//! - [`table::plan_table_read`] plans a table read: projection, the filter's pushable
//!   conjuncts (the rest returned as a residual), the limit when nothing stays residual,
//!   and one SELECT per task, split by tablets through `doris-plan` when asked;
//!   [`table::plan_read_of_schema`] does the same from a schema already discovered (no
//!   second `DESC`).
//! - [`options`] maps the option names Python connectors take (PyMySQL's `connect()`
//!   keywords, the ADBC Flight SQL driver's keys) onto these clients, refusing by name
//!   what they cannot honour; [`TaskCounts`] holds a split read's task limits.
//! - [`catalog`] lists, creates and drops databases and tables over a MySQL session (what
//!   an engine's catalog calls).
//! - [`diagnose`] checks every link a read or write will use, from the client's network,
//!   and names the setting that fixes each failure.
//!
//! Doris 4.0 streaming jobs are the `doris-jobs` crate's: it runs their statements over
//! this crate's [`mysql::session::Session`].
//!
//! ## Features
//!
//! - `flight` (default): the Arrow Flight SQL transport ([`flight`],
//!   [`Transport::Flight`], [`options::FlightOptions`]), which pulls arrow-flight, tonic and
//!   prost. A MySQL-only service sets `default-features = false`. The MySQL protocol has
//!   no feature of its own: schema discovery and the catalog run over it whichever
//!   transport reads the rows.

pub mod catalog;
pub mod decode;
pub mod diagnose;
pub mod error;
mod feed;
#[cfg(feature = "flight")]
pub mod flight;
pub mod merge;
pub mod mysql;
pub mod options;
pub mod schema;
pub mod table;
pub mod transport;

pub use doris_connection::{ConnectionSettings, Credentials, SslMode};
pub use error::ReadError;
#[cfg(feature = "flight")]
pub use flight::FlightSqlEndpoint;
pub use merge::{merge, start_merged};
pub use mysql::connect::MySqlEndpoint;
pub use mysql::stream::{BatchLimits, BatchStream, query};
pub use schema::{ReadColumn, TableLayout, discover, fetch_table_schema};
pub use table::{
    ReadPlan, Split, SplitKind, TableReadOptions, TaskCounts, plan_read_of_schema, plan_table_read,
};
pub use transport::{Transport, TransportKind};
