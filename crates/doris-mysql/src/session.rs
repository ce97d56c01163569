//! A plain SQL session on the FE's MySQL port: statements and small queries as text
//! (COM_QUERY), for DDL, labelled INSERTs, explicit transactions and `SHOW` statements.
//! Results are read whole, so use it for metadata-sized answers (table data goes through
//! `doris-read`'s transports).
//!
//! [`Session`] is the workspace's [`doris_sql::session::SqlSession`]: the session
//! `doris-write`'s atomic writes drive. It reports a failure as `Refused` only when
//! the server answered the statement with an error; a lost connection, a timeout or a
//! malformed packet is `Unanswered` (the statement may have taken effect).

use std::time::Duration;

use futures::TryStreamExt;
use sqlx::{Column, Decode, MySql, MySqlConnection, Row, ValueRef};

use doris_sql::session::{SqlFailure, SqlRows, SqlSession};

use crate::connect::MySqlEndpoint;
use crate::error::{MySqlError, bounded};
use crate::guard::CutReason;

/// The most rows a session query returns before failing (its answers are metadata).
pub const MAX_SESSION_ROWS: usize = 100_000;
/// The most bytes of cells a session query returns before failing: a hostile server (or a
/// man in the middle of an unverified link) cannot exhaust memory with a few huge rows
/// that each stay under the packet cap.
pub const MAX_SESSION_BYTES: usize = 64 << 20;

/// Rows of a session query: column names (empty when no row came back) and text cells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextRows {
    /// Column names, from the first row.
    pub columns: Vec<String>,
    /// Rows; `None` is SQL NULL; cells that are not UTF-8 are replaced lossily.
    pub rows: Vec<Vec<Option<String>>>,
}

/// One connection, used statement by statement.
#[derive(Debug)]
pub struct Session {
    conn: MySqlConnection,
    cut: CutReason,
    timeout: Duration,
    endpoint: MySqlEndpoint,
}

impl Session {
    /// Connects as [`MySqlEndpoint::connect`] does, then makes the session read backslash
    /// escapes ([`Session::use_backslash_escapes`]); each statement is bounded by the
    /// endpoint's read timeout.
    pub async fn open(endpoint: &MySqlEndpoint) -> Result<Self, MySqlError> {
        let (conn, cut) = endpoint.connect_watched().await?;
        let mut session = Self {
            conn,
            cut,
            timeout: endpoint.read_timeout,
            endpoint: endpoint.clone(),
        };
        session.use_backslash_escapes().await?;
        Ok(session)
    }

    /// Replaces the connection with a new one to the same endpoint (the old one is
    /// dropped, and with it any transaction it had open), set up as [`Session::open`]
    /// sets one up.
    pub async fn reconnect(&mut self) -> Result<(), MySqlError> {
        (self.conn, self.cut) = self.endpoint.connect_watched().await?;
        self.use_backslash_escapes().await
    }

    /// Makes the session read a backslash inside a string literal as an escape, as
    /// `doris_sql` renders literals where SQL takes nothing else (comments, properties):
    /// reads `@@sql_mode` and, when it holds `NO_BACKSLASH_ESCAPES` (the server's or the
    /// account's default), sets the mode again without that one flag
    /// ([`doris_sql::sql_mode`]). One query, and a `SET` only in that mode.
    pub async fn use_backslash_escapes(&mut self) -> Result<(), MySqlError> {
        let answer = self.query(doris_sql::sql_mode::SQL_MODE_QUERY).await?;
        let mode = answer
            .rows
            .into_iter()
            .next()
            .and_then(|row| row.into_iter().next())
            .flatten()
            .unwrap_or_default();
        if let Some(statement) = doris_sql::sql_mode::backslash_escapes_statement(&mode) {
            self.execute(&statement).await?;
        }
        Ok(())
    }

    /// Runs a statement; returns the affected-row count.
    pub async fn execute(&mut self, sql: &str) -> Result<u64, MySqlError> {
        let conn = &mut self.conn;
        let cut = &self.cut;
        bounded(self.timeout, "a statement", async move {
            sqlx::raw_sql(sql)
                .execute(conn)
                .await
                .map(|r| sqlx::mysql::MySqlQueryResult::rows_affected(&r))
                .map_err(|e| cut.explain(e))
        })
        .await
    }

    /// Runs a query and reads its rows as text, within [`MAX_SESSION_ROWS`] and
    /// [`MAX_SESSION_BYTES`].
    pub async fn query(&mut self, sql: &str) -> Result<TextRows, MySqlError> {
        let timeout = self.timeout;
        let conn = &mut self.conn;
        let cut = &self.cut;
        bounded(timeout, "a query", query_text(conn, sql, cut)).await
    }
}

/// Runs `sql` on `conn` and reads its rows as text, failing with [`MySqlError::TooLarge`]
/// past [`MAX_SESSION_ROWS`] rows or [`MAX_SESSION_BYTES`] bytes of cells (counted as they
/// arrive, so no more than the cap is ever held). For metadata answers (`DESC`, `SHOW`,
/// variables); not bounded in time (wrap it in [`bounded`]).
pub async fn query_text(
    conn: &mut MySqlConnection,
    sql: &str,
    cut: &CutReason,
) -> Result<TextRows, MySqlError> {
    query_text_within(conn, sql, cut, MAX_SESSION_BYTES).await
}

/// [`query_text`] with a cap of `max_bytes` bytes of cells.
async fn query_text_within(
    conn: &mut MySqlConnection,
    sql: &str,
    cut: &CutReason,
    max_bytes: usize,
) -> Result<TextRows, MySqlError> {
    let mut out = TextRows::default();
    let mut bytes = 0usize;
    let mut rows = sqlx::raw_sql(sql).fetch(conn);
    while let Some(row) = rows.try_next().await.map_err(|e| cut.explain(e))? {
        if out.rows.len() >= MAX_SESSION_ROWS {
            return Err(MySqlError::TooLarge(format!(
                "a query returned more than {MAX_SESSION_ROWS} rows"
            )));
        }
        if out.columns.is_empty() {
            out.columns = row.columns().iter().map(|c| c.name().to_owned()).collect();
        }
        let mut cells = Vec::with_capacity(row.len());
        for i in 0..row.len() {
            let raw = row.try_get_raw(i).map_err(MySqlError::from_sqlx)?;
            cells.push(if raw.is_null() {
                None
            } else {
                let cell = <&[u8] as Decode<MySql>>::decode(raw)
                    .map_err(|e| MySqlError::Transport(e.to_string()))?;
                bytes = bytes.saturating_add(cell.len());
                if bytes > max_bytes {
                    return Err(MySqlError::TooLarge(format!(
                        "a query's answer holds more than {max_bytes} bytes"
                    )));
                }
                Some(String::from_utf8_lossy(cell).into_owned())
            });
        }
        out.rows.push(cells);
    }
    Ok(out)
}

fn failure(e: MySqlError) -> SqlFailure {
    if e.is_answer() {
        SqlFailure::Refused(e.to_string())
    } else {
        SqlFailure::Unanswered(e.to_string())
    }
}

impl SqlSession for Session {
    async fn execute(&mut self, sql: &str) -> Result<u64, SqlFailure> {
        Session::execute(self, sql).await.map_err(failure)
    }

    async fn query(&mut self, sql: &str) -> Result<SqlRows, SqlFailure> {
        let rows = Session::query(self, sql).await.map_err(failure)?;
        Ok(SqlRows {
            columns: rows.columns,
            rows: rows.rows,
        })
    }

    async fn reconnect(&mut self) -> Result<(), SqlFailure> {
        Session::reconnect(self).await.map_err(failure)
    }

    fn set_timeout(&mut self, timeout: Duration) -> Duration {
        std::mem::replace(&mut self.timeout, timeout)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// An answer larger than the byte cap fails as it arrives, whatever its row count; one
    /// within it is read whole (a `DESC` of a wide table, as schema discovery sends it).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_query_answer_over_the_byte_cap_fails_named() {
        let e = doris_emulator::Emulator::start(doris_emulator::EmulatorConfig::default())
            .await
            .unwrap();
        let columns: Vec<String> = (0..40)
            .map(|i| format!("`column_{i:02}` INT NULL"))
            .collect();
        e.execute(
            None,
            &format!(
                "CREATE DATABASE d; CREATE TABLE d.wide ({}) DUPLICATE KEY(`column_00`) \
                 DISTRIBUTED BY HASH(`column_00`) BUCKETS 1",
                columns.join(", ")
            ),
        )
        .unwrap();
        let endpoint = MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
        let (mut conn, cut) = endpoint.connect_watched().await.unwrap();
        let sql = "DESC `d`.`wide`";
        let whole = query_text_within(&mut conn, sql, &cut, MAX_SESSION_BYTES)
            .await
            .unwrap();
        assert_eq!(whole.rows.len(), 40);
        let size: usize = whole.rows.iter().flatten().flatten().map(String::len).sum();
        let e = query_text_within(&mut conn, sql, &cut, size - 1)
            .await
            .unwrap_err();
        assert!(
            matches!(e, MySqlError::TooLarge(_))
                && e.to_string().contains(&format!("{} bytes", size - 1)),
            "{e}"
        );
        let exact = query_text_within(&mut conn, sql, &cut, size).await.unwrap();
        assert_eq!(exact, whole);
    }
}
