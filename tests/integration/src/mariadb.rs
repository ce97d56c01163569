//! A minimal blocking wrapper over one sqlx MySQL connection, text protocol only.

use std::cell::RefCell;
use std::str::FromStr;

use sqlx::mysql::{MySqlConnectOptions, MySqlConnection};
use sqlx::{Connection, Decode, MySql, Row, ValueRef};

/// The URL of the MariaDB server the tests use.
pub fn mariadb_url() -> String {
    std::env::var("DAFT_DORIS_MARIADB_URL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".to_owned())
}

/// One connection and the runtime that drives it; every call blocks until done.
pub struct MariaDb {
    runtime: tokio::runtime::Runtime,
    conn: RefCell<MySqlConnection>,
}

/// One result row: each cell's text (or bytes), `None` for SQL NULL.
pub type TextRow = Vec<Option<Vec<u8>>>;

/// Connects to the test server; panics with a clear message when it is not reachable.
pub fn mariadb() -> MariaDb {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let url = mariadb_url();
    let options = MySqlConnectOptions::from_str(&url).expect("a valid MariaDB URL");
    let conn = runtime
        .block_on(MySqlConnection::connect_with(&options))
        .unwrap_or_else(|e| panic!("MariaDB is not reachable at {url} ({e}); `.ci/run` starts it"));
    MariaDb {
        runtime,
        conn: RefCell::new(conn),
    }
}

impl MariaDb {
    /// Runs one or more statements through COM_QUERY (no server-side prepare).
    pub fn execute(&self, sql: &str) {
        let mut conn = self.conn.borrow_mut();
        self.runtime
            .block_on(sqlx::raw_sql(sql).execute(&mut *conn))
            .unwrap_or_else(|e| panic!("MariaDB rejected a statement: {e}\n{sql}"));
    }

    /// Runs a query through COM_QUERY and returns every cell as raw text-protocol bytes.
    pub fn query(&self, sql: &str) -> Result<Vec<TextRow>, sqlx::Error> {
        let mut conn = self.conn.borrow_mut();
        let rows = self
            .runtime
            .block_on(sqlx::raw_sql(sql).fetch_all(&mut *conn))?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| {
                        let value = row.try_get_raw(i)?;
                        if value.is_null() {
                            return Ok(None);
                        }
                        let bytes =
                            <&[u8] as Decode<MySql>>::decode(value).map_err(sqlx::Error::Decode)?;
                        Ok(Some(bytes.to_vec()))
                    })
                    .collect()
            })
            .collect()
    }

    /// The single cell of a one-row, one-column result.
    pub fn query_cell(&self, sql: &str) -> Option<Vec<u8>> {
        let rows = self
            .query(sql)
            .unwrap_or_else(|e| panic!("MariaDB rejected a query: {e}\n{sql}"));
        assert_eq!(rows.len(), 1, "expected one row from {sql}");
        assert_eq!(rows[0].len(), 1, "expected one column from {sql}");
        rows[0][0].clone()
    }
}
