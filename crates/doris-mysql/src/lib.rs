//! # doris-mysql
//!
//! The MySQL-protocol link to an Apache Doris FE, for every crate that talks SQL to Doris
//! (reads' schema discovery, the atomic write, streaming jobs, a catalog): sqlx with the
//! options Doris accepts, behind an authentication guard, and a statement session on top.
//!
//! - [`MySqlEndpoint`] says where and how to connect: host, port, credentials (a
//!   `secrecy` password), TLS mode and CA, a client certificate, timeouts, the session time
//!   zone, the packet cap. [`MySqlEndpoint::connect`] gives a sqlx connection; sqlx's own
//!   connect statement is not sent (Doris refuses its `sql_mode` subquery), the time zone is
//!   set with a literal.
//! - Every link goes through the **guard**, a relay on a private Unix socket that owns the
//!   TCP and TLS link to the server: it parses the connection phase itself, refuses any
//!   greeting it cannot parse and any authentication plugin (in the greeting or in a
//!   switch) that would reveal the password to a server nobody verified, never lets a TLS
//!   mode fall back to plain text, serves only the client it was opened for, and caps every
//!   packet the server sends ([`MySqlEndpoint::max_packet_bytes`]).
//! - [`Session`] runs statements and small queries as text (COM_QUERY), each bounded by the
//!   endpoint's read timeout, its answers capped at [`MAX_SESSION_ROWS`]; it reads backslash
//!   escapes whatever mode the server starts it in ([`Session::use_backslash_escapes`]), as
//!   `doris_sql`'s literals are rendered for. It is the workspace's
//!   [`doris_sql::session::SqlSession`], the session `doris-write`'s atomic write drives.
//! - [`MySqlError`] sorts every failure into the workspace's [`ErrorKind`](doris_sql::ErrorKind);
//!   no error text holds a password, and a server's echo of a statement is cut ([`scrub`]).
//!
//! ```no_run
//! # async fn run() -> Result<(), doris_mysql::MySqlError> {
//! use doris_mysql::{MySqlEndpoint, Session};
//!
//! let fe = MySqlEndpoint::new("fe.example.com", 9030, "admin", "secret");
//! let mut session = Session::open(&fe).await?;
//! session.execute("CREATE DATABASE IF NOT EXISTS `demo`").await?;
//! let tables = session.query("SHOW TABLES FROM `demo`").await?;
//! println!("{} tables", tables.rows.len());
//! # Ok(()) }
//! ```

mod connect;
mod error;
mod greeting;
mod guard;
mod session;

pub use connect::MySqlEndpoint;
pub use doris_connection::{Credentials, SslMode};
pub use error::{MySqlError, bounded, scrub, scrub_statement_text};
pub use guard::CutReason;
pub use session::{MAX_SESSION_BYTES, MAX_SESSION_ROWS, Session, TextRows, query_text};

/// The README's example, compiled as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
