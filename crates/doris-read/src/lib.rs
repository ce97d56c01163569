//! # doris-read
//!
//! Reading Doris tables into Arrow record batches, from Rust alone: the MySQL text
//! protocol (sqlx, COM_QUERY only) or Arrow Flight SQL (arrow-flight, `DoGet` on every
//! endpoint at its own location).
//!
//! - [`Transport`] is the wire a read takes, [`Transport::MySql`] (a [`MySqlEndpoint`] of
//!   the `doris-mysql` crate: options Doris accepts, its authentication guard, the session
//!   time zone set with a literal) or
//!   [`Transport::Flight`] (a [`FlightSqlEndpoint`]: basic → bearer handshake with the FE,
//!   `GetFlightInfo`, then `DoGet` on each endpoint at its own location with bounded
//!   parallelism, batches cast safely to the planned schema). A user's `"mysql"` /
//!   `"flight"` parses into a [`TransportKind`].
//! - [`Transport::read`] is the one entry point of a read: one SELECT, or a read task's
//!   several (one per group of tablets, started at once so a task keeps several BEs
//!   sending), streamed as one [`BatchStream`] of batches bounded by rows and bytes
//!   ([`BatchLimits`]). MySQL text cells are decoded straight into Arrow builders
//!   ([`decode::RowDecoder`]). A stream that ends without an error holds every row; the
//!   first error of any statement ends it; dropping it closes every connection without
//!   draining the results.
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
//! A read from plan to batches:
//!
//! ```no_run
//! # async fn run() -> Result<(), doris_read::ReadError> {
//! use doris_read::{BatchLimits, MySqlEndpoint, TableReadOptions, Transport, plan_table_read};
//!
//! let mysql = MySqlEndpoint::new("fe.example.com", 9030, "reader", "secret");
//! // Columns, the pushable part of the filter and the limit go into the SQL; one task here
//! // (`Split::Auto` plans one per group of tablets through the FE's `_query_plan`).
//! let plan = plan_table_read(&mysql, "demo", "events", &TableReadOptions::default()).await?;
//! let transport = Transport::MySql(mysql);
//! let mut rows = 0;
//! for task in &plan.tasks {
//!     let mut batches = transport
//!         .read([task.as_str()], plan.schema.clone(), BatchLimits::default())
//!         .await?;
//!     while let Some(batch) = batches.next_batch().await {
//!         rows += batch?.num_rows();
//!     }
//! }
//! println!("{rows} rows");
//! # Ok(()) }
//! ```
//!
//! Doris 4.0 streaming jobs are the `doris-jobs` crate's; the MySQL link itself (connect,
//! guard, a statement [`Session`](doris_mysql::Session)) is `doris-mysql`'s, which this
//! crate reads rows over.
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
mod merge;
pub mod mysql;
pub mod options;
pub mod schema;
pub mod table;
pub mod transport;

pub use doris_connection::{ConnectionSettings, Credentials, SslMode};
pub use doris_mysql::MySqlEndpoint;
pub use doris_sql::ErrorKind;
pub use doris_sql::TimestampUnits;
pub use error::ReadError;
#[cfg(feature = "flight")]
pub use flight::FlightSqlEndpoint;
pub use mysql::stream::{BatchLimits, BatchStream};
pub use schema::{
    ReadColumn, TableLayout, discover, discover_in, fetch_table_schema,
    fetch_table_schema_and_release,
};
pub use table::{
    Count, CountMode, ReadPlan, Split, SplitKind, TableReadOptions, TaskCounts,
    plan_read_of_schema, plan_table_read,
};
pub use transport::{Transport, TransportKind};
