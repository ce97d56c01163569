//! The SQL session that write coordinators drive, as a trait (no I/O here: the crates that
//! speak the MySQL protocol implement it; `doris-mysql`'s `Session` does, over sqlx).
//!
//! A coordinator such as `doris-write`'s atomic write decides from a statement's
//! outcome whether it may have taken effect, so every implementation must report the same
//! facts the same way: [`SqlFailure::Refused`] only when the server *answered* the
//! statement with an error (a MySQL ERR packet: the statement did not take effect), and
//! [`SqlFailure::Unanswered`] for everything else (the connection broke, timed out, TLS
//! failed, a packet was malformed): the statement may or may not have taken effect.
//!
//! ```
//! use doris_sql::session::{SqlFailure, SqlRows};
//! let rows = SqlRows {
//!     columns: vec!["Label".into(), "TransactionStatus".into()],
//!     rows: vec![vec![Some("dd_k".into()), Some("VISIBLE".into())]],
//! };
//! assert_eq!(rows.column("transactionstatus").unwrap().collect::<Vec<_>>(), [Some("VISIBLE")]);
//! assert!(SqlFailure::Unanswered("reset".into()).may_have_taken_effect());
//! assert!(!SqlFailure::Refused("Unknown table".into()).may_have_taken_effect());
//! ```

use std::future::Future;
use std::time::Duration;

use crate::release::{DorisRelease, RELEASE_QUERY};

/// The rows of a statement, as text cells, with the column names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SqlRows {
    /// Column names, in order.
    pub columns: Vec<String>,
    /// Rows; `None` is SQL NULL.
    pub rows: Vec<Vec<Option<String>>>,
}

impl SqlRows {
    /// The cells of the column named `name` (case-insensitive).
    pub fn column(&self, name: &str) -> Option<impl Iterator<Item = Option<&str>>> {
        let at = self
            .columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))?;
        Some(
            self.rows
                .iter()
                .map(move |r| r.get(at).and_then(|c| c.as_deref())),
        )
    }
}

/// How a statement failed, as the [`SqlSession`] saw it (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlFailure {
    /// The server answered with an error: the statement did not take effect. The text is
    /// the server's, without the statement's echo.
    Refused(String),
    /// No answer arrived (the connection broke or timed out): it may have taken effect.
    Unanswered(String),
}

impl SqlFailure {
    /// Whether the statement may have taken effect on the server: only a statement the
    /// server answered with an error certainly did not.
    pub fn may_have_taken_effect(&self) -> bool {
        matches!(self, SqlFailure::Unanswered(_))
    }

    /// The failure's text.
    pub fn message(&self) -> &str {
        match self {
            SqlFailure::Refused(m) | SqlFailure::Unanswered(m) => m,
        }
    }
}

/// A session on the FE's MySQL port. Implementations run statements as plain text
/// (COM_QUERY), report failures as the module docs say, and keep statement text and bound
/// values out of their messages.
///
/// The futures are not required to be `Send` (sqlx's are not provably so): drive the
/// coordinator with `block_on`, on a `LocalSet`, or inside one spawned task that owns it.
pub trait SqlSession {
    /// Runs a statement without rows; returns the affected-row count.
    fn execute(&mut self, sql: &str) -> impl Future<Output = Result<u64, SqlFailure>>;
    /// Runs a query and returns its rows.
    fn query(&mut self, sql: &str) -> impl Future<Output = Result<SqlRows, SqlFailure>>;
    /// Replaces the connection with a new one (after a statement got no answer, the old
    /// connection is unusable; a new one also leaves any transaction the old one had open).
    fn reconnect(&mut self) -> impl Future<Output = Result<(), SqlFailure>>;
    /// Sets how long the session waits for a statement's answer from now on; returns the
    /// previous limit (a coordinator gives a large publish its own, then restores it).
    fn set_timeout(&mut self, timeout: Duration) -> Duration;
    /// The server's Doris release ([`RELEASE_QUERY`]); `Ok(None)` when its answer names
    /// none. An implementation may keep the answer for the connection's life.
    fn release(&mut self) -> impl Future<Output = Result<Option<DorisRelease>, SqlFailure>> {
        async {
            let rows = self.query(RELEASE_QUERY).await?;
            Ok(rows
                .rows
                .first()
                .and_then(|r| r.first().cloned().flatten())
                .and_then(|text| DorisRelease::from_version_comment(&text)))
        }
    }
}
