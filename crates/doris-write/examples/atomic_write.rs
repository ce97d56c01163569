//! `atomic_write`: an exactly-once load of Arrow batches from a Rust service, no Python.
//!
//! The whole write is one Doris transaction labelled by an idempotence key
//! (`doris_write::atomic`): rows are staged through Stream Load, then published with
//! the key's record in the commit ledger, in one transaction. Running it again with the
//! same key writes nothing, also after Doris forgot the key's label (it keeps finished
//! labels 3 days, and only the newest 2,000 per database).
//!
//! ```text
//! cargo run -p doris-write --example atomic_write -- \
//!     http://127.0.0.1:8030 127.0.0.1:9030 root demo events nightly-2026-12-01
//! ```
//!
//! The SQL steps need a MySQL-protocol session: `doris-mysql`'s `Session` is one (sqlx,
//! with the connect options Doris accepts). This crate itself pulls no SQL client.

use std::sync::Arc;
use std::time::Duration;

use arrow::array::{Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use doris_mysql::Session;
use doris_read::MySqlEndpoint;
use doris_sql::WriteOperation;
use doris_streamload::{ClientConfig, Credentials, StreamLoadError};
use doris_write::atomic::CommittedBy;
use doris_write::{WriteRun, WriteSpec, WriteStatus};

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

/// What a run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// This run committed the key's rows.
    Committed,
    /// The key committed before; nothing was written. `by` tells whether Doris still knew
    /// the label or the commit ledger remembered it.
    AlreadyCommitted {
        /// How the earlier commit was recognised.
        by: CommittedBy,
    },
}

/// Writes `batches` into `target` exactly once for `key`.
pub async fn run(
    target: &Target<'_>,
    key: &str,
    batches: Vec<RecordBatch>,
) -> Result<Outcome, Box<dyn std::error::Error>> {
    let endpoint = MySqlEndpoint::new(target.mysql.0, target.mysql.1, target.user, "");
    // The table and the server's release, described once: the write is checked against
    // both before its first byte.
    let (described, release) =
        doris_read::fetch_table_schema_and_release(&endpoint, target.database, target.table)
            .await?;
    let mut spec = WriteSpec::new(WriteOperation::Load);
    spec.label_prefix = "svc".into();
    spec.idempotence_key = Some(key.into());
    let client = ClientConfig::new(target.fe_http.parse()?, Credentials::new(target.user, ""));
    let mut write = WriteRun::new(
        spec,
        target.database,
        target.table,
        client,
        Duration::from_secs(300),
    );
    // The SQL steps (the atomic begin, publish and clean-up) run over a MySQL session,
    // opened only when a step needs one.
    let open = || async {
        Session::open(&endpoint)
            .await
            .map_err(|e| StreamLoadError::Sql {
                step: "connect to the FE's MySQL port",
                message: e.to_string(),
            })
    };
    let schema = batches[0].schema();
    write
        .start(&described, release, Some(&schema), false, open)
        .await?;
    if let Some(by) = write.committed_before() {
        return Ok(Outcome::AlreadyCommitted { by });
    }
    // One task attempt, one writer (one tag). A service that loads from several workers
    // ships `write.state()` to each, makes a writer per attempt there
    // (`WriteRun::resume`), and finishes with the reports of the attempts that succeeded.
    let target = write.state().target.clone().unwrap_or_default();
    let writer = write.task(&target)?.ok_or("a committed key has no task")?;
    let report = match write.write(&writer, &schema, batches).await {
        Ok(report) => report,
        Err(failure) => {
            // Nothing of a failed run is visible; its staging table is dropped.
            write.abort(open).await?;
            return Err(failure.into());
        }
    };
    let summary = write.finish(&[report], open).await?;
    Ok(match summary.status {
        WriteStatus::AlreadyCommitted => Outcome::AlreadyCommitted {
            by: CommittedBy::Label,
        },
        _ => Outcome::Committed,
    })
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
    // The first run commits; the second, with the same key, writes nothing.
    for _ in 0..2 {
        match run(&target, key, vec![sample(0, 1000)]).await? {
            Outcome::Committed => println!("committed"),
            Outcome::AlreadyCommitted { by } => println!("already committed ({by:?})"),
        }
    }
    Ok(())
}
