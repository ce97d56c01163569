//! `atomic_write`: an exactly-once load of Arrow batches from a Rust service, no Python.
//!
//! The whole write is one Doris transaction labelled by an idempotence key
//! (`doris_streamload::atomic`): rows are staged through Stream Load, then published with
//! one `INSERT … WITH LABEL`. Running it twice with the same key writes the rows once.
//!
//! ```text
//! cargo run -p doris-streamload --example atomic_write -- \
//!     http://127.0.0.1:8030 127.0.0.1:9030 root demo events nightly-2026-12-01
//! ```
//!
//! The SQL steps need a MySQL-protocol session; this example implements
//! [`SqlSession`] with sqlx (the options Doris accepts on connect are in
//! `doris-read`'s `MySqlEndpoint::options`).

use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use doris_streamload::atomic::{
    AtomicPolicy, AtomicWrite, Begun, SqlFailure, SqlRows, SqlSession, key_label,
};
use doris_streamload::{
    ClientConfig, Credentials, LabelScheme, LoadOptions, Loader, LoaderConfig, StreamLoadClient,
};
use futures::TryStreamExt;
use sqlx::mysql::{MySqlConnectOptions, MySqlConnection};
use sqlx::{Column, Connection, Decode, MySql, Row, ValueRef};

/// sqlx as the atomic writer's SQL session (text protocol only).
pub struct SqlxSession(pub MySqlConnection, MySqlConnectOptions);

impl SqlxSession {
    /// Connects with options Doris accepts (no `sql_mode` subquery, no `SET NAMES`).
    pub async fn connect(
        host: &str,
        port: u16,
        user: &str,
        password: &str,
    ) -> Result<Self, sqlx::Error> {
        let mut options = MySqlConnectOptions::new()
            .host(host)
            .port(port)
            .username(user)
            .pipes_as_concat(false)
            .no_engine_substitution(false)
            .timezone(None)
            .set_names(false)
            .statement_cache_capacity(0);
        if !password.is_empty() {
            options = options.password(password);
        }
        let conn = MySqlConnection::connect_with(&options).await?;
        Ok(Self(conn, options))
    }
}

fn failure(e: sqlx::Error) -> SqlFailure {
    match e {
        // The server answered: the statement did not take effect. Its text is Doris's.
        sqlx::Error::Database(db) => SqlFailure::Refused(db.message().to_owned()),
        other => SqlFailure::Unanswered(other.to_string()),
    }
}

impl SqlSession for SqlxSession {
    async fn execute(&mut self, sql: &str) -> Result<u64, SqlFailure> {
        sqlx::raw_sql(sql)
            .execute(&mut self.0)
            .await
            .map(|r| r.rows_affected())
            .map_err(failure)
    }

    async fn query(&mut self, sql: &str) -> Result<SqlRows, SqlFailure> {
        let mut out = SqlRows::default();
        let mut rows = sqlx::raw_sql(sql).fetch(&mut self.0);
        while let Some(row) = rows.try_next().await.map_err(failure)? {
            if out.columns.is_empty() {
                out.columns = row.columns().iter().map(|c| c.name().to_owned()).collect();
            }
            let mut cells = Vec::with_capacity(row.len());
            for i in 0..row.len() {
                let raw = row.try_get_raw(i).map_err(failure)?;
                cells.push(if raw.is_null() {
                    None
                } else {
                    let bytes = <&[u8] as Decode<MySql>>::decode(raw)
                        .map_err(|e| SqlFailure::Unanswered(e.to_string()))?;
                    Some(String::from_utf8_lossy(bytes).into_owned())
                });
            }
            out.rows.push(cells);
        }
        Ok(out)
    }

    async fn reconnect(&mut self) -> Result<(), SqlFailure> {
        self.0 = MySqlConnection::connect_with(&self.1)
            .await
            .map_err(failure)?;
        Ok(())
    }
}

/// Where and what to write.
pub struct Target<'a> {
    /// The FE's HTTP URL, e.g. `http://127.0.0.1:8030`.
    pub fe_http: &'a str,
    /// The FE's MySQL host and port.
    pub mysql: (&'a str, u16),
    /// User (the password is empty in this example).
    pub user: &'a str,
    /// Database and table (`id BIGINT`, `name VARCHAR`).
    pub database: &'a str,
    /// Table.
    pub table: &'a str,
}

/// Writes `batches` into `target` exactly once for `key`; returns whether this run
/// committed (`false`: the key was committed before).
pub async fn run(
    target: &Target<'_>,
    key: &str,
    batches: Vec<RecordBatch>,
) -> Result<bool, Box<dyn std::error::Error>> {
    let mut session = SqlxSession::connect(target.mysql.0, target.mysql.1, target.user, "").await?;
    let schema = fetch_schema(&mut session, target).await?;
    let label = key_label("svc", key)?;
    let run = match AtomicWrite::begin(
        &mut session,
        target.database,
        &schema,
        label,
        AtomicPolicy::default(),
    )
    .await?
    {
        Begun::AlreadyCommitted { .. } => return Ok(false),
        Begun::Fresh(run) => run,
    };
    let client = Arc::new(StreamLoadClient::new(ClientConfig::new(
        target.fe_http.parse()?,
        Credentials::new(target.user, ""),
    ))?);
    // One task attempt, one tag. A service that loads from several workers gives each
    // attempt its own tag and publishes the tags of the attempts that finished.
    let tag = uuid::Uuid::new_v4().simple().to_string();
    let fields: Vec<String> = batches[0]
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let options = run.load_options(&LoadOptions::default(), &fields, &tag)?;
    let loader = Loader::new(
        client,
        target.database,
        run.staging_table(),
        options,
        LoaderConfig {
            labels: LabelScheme::Random {
                prefix: "svc".into(),
            },
            ..LoaderConfig::default()
        },
    )?;
    let summary = loader.load_all(batches).await?;
    let published = run
        .publish(&mut session, &fields, &[(tag, summary.loaded_rows)])
        .await?;
    Ok(published.by_this_run)
}

/// The target's schema from `SHOW CREATE TABLE` (parsed by doris-sql).
async fn fetch_schema(
    session: &mut SqlxSession,
    target: &Target<'_>,
) -> Result<doris_sql::TableSchema, Box<dyn std::error::Error>> {
    let sql = format!(
        "SHOW CREATE TABLE {}.{}",
        doris_sql::quote_ident("database", target.database)?,
        doris_sql::quote_ident("table", target.table)?
    );
    let rows = session.query(&sql).await.map_err(|f| format!("{f:?}"))?;
    let ddl = rows
        .rows
        .first()
        .and_then(|r| r.get(1).cloned().flatten())
        .ok_or("SHOW CREATE TABLE returned no row")?;
    Ok(doris_sql::parse_show_create(&ddl)?)
}

/// A small batch of `rows` rows starting at `from`.
pub fn sample(from: i64, rows: i64) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    let ids: Vec<i64> = (from..from + rows).collect();
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(ids.clone())),
            Arc::new(StringArray::from_iter(
                ids.iter().map(|i| Some(format!("n{i}"))),
            )),
        ],
    )
    .expect("a valid batch")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [fe_http, mysql, user, database, table, key] = args.as_slice() else {
        eprintln!("usage: atomic_write FE_HTTP_URL MYSQL_HOST:PORT USER DATABASE TABLE KEY");
        std::process::exit(2);
    };
    let (host, port) = mysql.rsplit_once(':').ok_or("MYSQL_HOST:PORT")?;
    let target = Target {
        fe_http,
        mysql: (host, port.parse()?),
        user,
        database,
        table,
    };
    let committed = run(&target, key, vec![sample(0, 1000)]).await?;
    println!(
        "{}",
        if committed {
            "committed"
        } else {
            "already committed"
        }
    );
    Ok(())
}
