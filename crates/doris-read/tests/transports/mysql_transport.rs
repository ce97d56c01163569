//! The MySQL transport against the Doris emulator and against MariaDB (a real server).
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Field, Float64Type, Int32Type, Int64Type, Schema,
    TimeUnit, TimestampMicrosecondType,
};
use doris_emulator::faults::Fault;
use doris_emulator::{Emulator, EmulatorConfig};
use doris_read::{BatchLimits, MySqlEndpoint, ReadError, discover};

use crate::query;

const DDL: &str = "
CREATE DATABASE demo;
CREATE TABLE demo.t (
  `id` BIGINT NOT NULL,
  `name` VARCHAR(20) NULL,
  `amount` DECIMAL(20, 6) NULL,
  `ts` DATETIME(3) NULL,
  `d` DATE NULL,
  `ok` BOOLEAN NULL,
  `big` LARGEINT NULL,
  `tags` ARRAY<INT> NULL,
  `h` HLL NULL
) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 4;
CREATE USER 'bob'@'%' IDENTIFIED BY 'pw';
GRANT LOAD_PRIV ON demo.t TO 'bob'@'%';
";

async fn emulator() -> (Emulator, MySqlEndpoint) {
    use arrow::array::{
        ArrayRef, BooleanArray, Date32Array, Decimal128Array, Int64Array, ListArray, StringArray,
        TimestampMillisecondArray, new_null_array,
    };
    let e = Emulator::start(EmulatorConfig::default()).await.unwrap();
    e.execute(None, DDL).unwrap();
    let table = e.shared().catalog.table("demo", "t").unwrap();
    let ids: Vec<i64> = (0..2000).collect();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids.clone())),
        Arc::new(StringArray::from_iter(
            ids.iter().map(|i| Some(format!("n{i}"))),
        )),
        Arc::new(
            Decimal128Array::from_iter(
                ids.iter()
                    .map(|i| Some(i128::from(*i) * 1_000_000 + 500_000)),
            )
            .with_precision_and_scale(20, 6)
            .unwrap(),
        ),
        Arc::new(TimestampMillisecondArray::from_iter(
            ids.iter().map(|i| Some(1_706_702_400_000 + i % 1000)),
        )),
        Arc::new(Date32Array::from_iter(ids.iter().map(|_| Some(19_754)))),
        Arc::new(BooleanArray::from_iter(
            ids.iter().map(|i| Some(i % 2 == 1)),
        )),
        Arc::new(StringArray::from_iter(ids.iter().map(|i| {
            Some(format!(
                "1701411834604692317316873037158841057{:02}",
                i % 100
            ))
        }))),
        Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(
            ids.iter().map(|i| Some(vec![Some(*i as i32), None])),
        )),
        new_null_array(&DataType::Binary, ids.len()),
    ];
    let batch = RecordBatch::try_new(table.arrow_schema.clone(), columns).unwrap();
    e.commit_rows("demo", "t", vec![batch]).unwrap();
    let mut endpoint = MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
    endpoint.database = Some("demo".into());
    (e, endpoint)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_type_reads_from_the_emulator_into_its_arrow_type() {
    let (_e, endpoint) = emulator().await;
    let layout = discover(&endpoint, "demo", "t").await.unwrap();
    // HLL has no Arrow form: fine until a read selects it.
    let names: Vec<String> = layout
        .columns
        .iter()
        .take(8)
        .map(|c| c.name.clone())
        .collect();
    let schema = layout.arrow_schema(Some(&names)).unwrap();
    let e = layout.arrow_schema(None).unwrap_err();
    assert!(
        matches!(&e, ReadError::UnsupportedColumn { column, .. } if column == "h"),
        "{e}"
    );
    let sql = format!(
        "SELECT {} FROM `demo`.`t` WHERE `id` IN (7, 1999) ORDER BY `id`",
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let batches = query(&endpoint, sql, schema, BatchLimits::default())
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let b = &batches[0];
    assert_eq!(b.num_rows(), 2);
    assert_eq!(b.column(0).as_primitive::<Int64Type>().value(1), 1999);
    assert_eq!(b.column(1).as_string::<i32>().value(0), "n7");
    assert_eq!(
        b.column(2).as_primitive::<Decimal128Type>().value(0),
        7_500_000
    );
    // DATETIME(3) as microseconds (every precision reads so by default).
    assert_eq!(
        b.column(3)
            .as_primitive::<TimestampMicrosecondType>()
            .value(0),
        1_706_702_400_007_000
    );
    assert_eq!(b.column(4).as_primitive::<Date32Type>().value(0), 19_754);
    assert!(b.column(5).as_boolean().value(0));
    assert_eq!(
        b.column(6).as_string::<i32>().value(0),
        "170141183460469231731687303715884105707"
    );
    let tags = b.column(7).as_list::<i32>().value(1);
    assert_eq!(tags.as_primitive::<Int32Type>().value(0), 1999);
    assert!(tags.is_null(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_are_bounded_and_early_close_does_not_drain() {
    let (e, endpoint) = emulator().await;
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let limits = BatchLimits {
        rows: 300,
        bytes: usize::MAX,
    };
    let batches = query(&endpoint, "SELECT id FROM t".into(), schema.clone(), limits)
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(
        batches.iter().map(RecordBatch::num_rows).sum::<usize>(),
        2000
    );
    assert!(batches.iter().all(|b| b.num_rows() <= 300));
    let by_bytes = query(
        &endpoint,
        "SELECT id FROM t".into(),
        schema.clone(),
        BatchLimits {
            rows: usize::MAX,
            bytes: 800,
        },
    )
    .await
    .unwrap()
    .collect()
    .await
    .unwrap();
    assert!(by_bytes.len() >= 15, "{}", by_bytes.len());
    drop(e);
}

/// Polls `condition` every 10 ms until it holds or `deadline` passes.
async fn eventually(deadline: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let until = tokio::time::Instant::now() + deadline;
    while tokio::time::Instant::now() < until {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    condition()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn early_close_releases_the_connection_without_draining_the_result() {
    use arrow::array::{ArrayRef, Int64Array, StringArray};
    // 200,000 rows of ~200 bytes: ~40 MB of text rows, far more than the socket buffers
    // hold, so a reader that drained the result before closing would make the server send
    // every row.
    const ROWS: i64 = 200_000;
    let e = Emulator::start(EmulatorConfig::default()).await.unwrap();
    e.execute(
        None,
        "CREATE DATABASE demo; CREATE TABLE demo.wide (id BIGINT NOT NULL, pad VARCHAR(255)) \
         DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1",
    )
    .unwrap();
    let ids: Vec<i64> = (0..ROWS).collect();
    let pad = "p".repeat(190);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids)),
        Arc::new(StringArray::from_iter_values(
            (0..ROWS).map(|_| pad.as_str()),
        )),
    ];
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("pad", DataType::Utf8, true),
    ]));
    e.commit_rows(
        "demo",
        "wide",
        vec![RecordBatch::try_new(schema.clone(), columns).unwrap()],
    )
    .unwrap();
    let mut endpoint = MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
    endpoint.database = Some("demo".into());
    let limits = BatchLimits {
        rows: 300,
        bytes: usize::MAX,
    };
    let mut stream = query(&endpoint, "SELECT id, pad FROM wide".into(), schema, limits)
        .await
        .unwrap();
    assert_eq!(stream.next_batch().await.unwrap().unwrap().num_rows(), 300);
    assert_eq!(e.mysql_open_connections(), 1);
    drop(stream);
    assert!(
        eventually(Duration::from_secs(10), || e.mysql_open_connections() == 0).await,
        "the early-closed read kept its connection open"
    );
    let sent = e.mysql_rows_sent();
    assert!(
        sent < u64::try_from(ROWS).unwrap() / 2,
        "the server wrote {sent} of {ROWS} rows: the result was drained before closing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_stream_is_a_transport_error_not_a_short_result() {
    let (e, endpoint) = emulator().await;
    e.faults().arm(Fault::CutResultStream { rows: 500 }, 1);
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let result = query(
        &endpoint,
        "SELECT id FROM t".into(),
        schema,
        BatchLimits {
            rows: 100,
            bytes: usize::MAX,
        },
    )
    .await
    .unwrap()
    .collect()
    .await;
    assert!(matches!(result, Err(ReadError::Transport(_))), "{result:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_row_after_good_ones_fails_the_read() {
    // The server sends all 2000 rows, then a row with one cell where two were announced
    // (sqlx's row decoder panics on it): the read must fail, not end with 2000 rows.
    let (e, endpoint) = emulator().await;
    e.faults().arm(Fault::ShortMysqlRow, 1);
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    let mut stream = query(
        &endpoint,
        "SELECT id, name FROM t".into(),
        schema,
        BatchLimits {
            rows: 500,
            bytes: usize::MAX,
        },
    )
    .await
    .unwrap();
    let mut rows = 0;
    let error = loop {
        match stream.next_batch().await {
            Some(Ok(b)) => rows += b.num_rows(),
            Some(Err(e)) => break e,
            None => panic!("the read ended after {rows} rows without an error"),
        }
    };
    assert!(matches!(error, ReadError::Transport(_)), "{error}");
    assert!(rows <= 2000);
    assert!(
        stream.next_batch().await.is_none(),
        "nothing after the error"
    );
    assert_eq!(e.faults().fired().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_typed_and_carry_no_password() {
    let (_e, endpoint) = emulator().await;
    let mut bad = endpoint.clone();
    bad.credentials = doris_connection::Credentials::new(bad.credentials.user(), "Secret-Wrong-1");
    let e = discover(&bad, "demo", "t").await.unwrap_err();
    assert!(matches!(e, ReadError::Auth(_)), "{e}");
    assert!(!format!("{e} {bad:?}").contains("Secret-Wrong-1"));
    let e = discover(&endpoint, "demo", "nope").await.unwrap_err();
    assert!(matches!(e, ReadError::NotFound(_)), "{e}");
    let mut bob = MySqlEndpoint::new("127.0.0.1", endpoint.port, "bob", "pw");
    bob.database = Some("demo".into());
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let e = query(
        &bob,
        "SELECT id FROM demo.t".into(),
        schema,
        BatchLimits::default(),
    )
    .await
    .unwrap()
    .collect()
    .await
    .unwrap_err();
    assert!(matches!(e, ReadError::Permission(_)), "{e}");
}

fn mariadb() -> MySqlEndpoint {
    let url = std::env::var("DAFT_DORIS_MARIADB_URL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into());
    let rest = url.trim_start_matches("mysql://");
    let (auth, host) = rest.split_once('@').unwrap_or(("root", rest));
    let (user, password) = auth.split_once(':').unwrap_or((auth, ""));
    let (hostport, db) = host.split_once('/').unwrap_or((host, "test"));
    let (h, p) = hostport.split_once(':').unwrap_or((hostport, "3306"));
    let mut e = MySqlEndpoint::new(h, p.parse().unwrap(), user, password);
    e.database = Some(db.to_owned());
    e
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_types_and_nulls_read_through_the_same_decoder() {
    let endpoint = mariadb();
    let schema = Arc::new(Schema::new(vec![
        Field::new("i", DataType::Int32, true),
        Field::new("b", DataType::Int64, true),
        Field::new("f", DataType::Float64, true),
        Field::new("d", DataType::Decimal128(20, 6), true),
        Field::new("day", DataType::Date32, true),
        Field::new("ts", DataType::Timestamp(TimeUnit::Microsecond, None), true),
        Field::new("s", DataType::Utf8, true),
        Field::new("t", DataType::Duration(TimeUnit::Microsecond), true),
    ]));
    let sql = "SELECT CAST(-5 AS INT), CAST(9223372036854775807 AS SIGNED), 1.25e10, \
               CAST('-12.5' AS DECIMAL(20,6)), DATE '2024-02-29', \
               CAST('2024-01-31 12:00:00.123456' AS DATETIME(6)), 'é\\ttab', TIME '-01:02:03.5' \
               UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL";
    let b = &query(&endpoint, sql.into(), schema, BatchLimits::default())
        .await
        .unwrap()
        .collect()
        .await
        .unwrap()[0];
    assert_eq!(b.num_rows(), 2);
    assert_eq!(b.column(0).as_primitive::<Int32Type>().value(0), -5);
    assert_eq!(b.column(1).as_primitive::<Int64Type>().value(0), i64::MAX);
    assert_eq!(b.column(2).as_primitive::<Float64Type>().value(0), 1.25e10);
    assert_eq!(
        b.column(3).as_primitive::<Decimal128Type>().value(0),
        -12_500_000
    );
    assert_eq!(b.column(4).as_primitive::<Date32Type>().value(0), 19_782);
    assert_eq!(
        b.column(5)
            .as_primitive::<TimestampMicrosecondType>()
            .value(0),
        1_706_702_400_123_456
    );
    assert_eq!(b.column(6).as_string::<i32>().value(0), "é\ttab");
    assert_eq!(
        b.column(7)
            .as_primitive::<arrow::datatypes::DurationMicrosecondType>()
            .value(0),
        -3_723_500_000
    );
    assert!(b.columns().iter().all(|c| c.is_null(1)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_streams_a_million_rows_in_bounded_batches() {
    let endpoint = mariadb();
    let schema = Arc::new(Schema::new(vec![
        Field::new("seq", DataType::Int64, false),
        Field::new("s", DataType::Utf8, false),
    ]));
    let mut stream = query(
        &endpoint,
        "SELECT seq, CONCAT('row-', seq) FROM seq_1_to_1000000".into(),
        schema,
        BatchLimits {
            rows: 65_536,
            bytes: 1 << 20,
        },
    )
    .await
    .unwrap();
    let (mut rows, mut batches, mut sum) = (0usize, 0usize, 0i64);
    while let Some(b) = stream.next_batch().await {
        let b = b.unwrap();
        assert!(b.num_rows() <= 65_536);
        rows += b.num_rows();
        batches += 1;
        sum += b
            .column(0)
            .as_primitive::<Int64Type>()
            .values()
            .iter()
            .sum::<i64>();
    }
    assert_eq!(rows, 1_000_000);
    assert_eq!(sum, 500_000_500_000);
    assert!(batches >= 16, "{batches}: the byte bound did not cut");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_greeting_is_a_transport_error_not_a_panic() {
    use tokio::io::AsyncWriteExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        // A complete packet whose payload stops after the server version: protocol 10,
        // "5.7\0", then one byte of the four-byte connection id.
        let payload = [0x0a, b'5', b'.', b'7', 0x00, 0x01];
        let mut packet = vec![payload.len() as u8, 0, 0, 0];
        packet.extend_from_slice(&payload);
        for _ in 0..4 {
            let (mut socket, _) = listener.accept().await.unwrap();
            let _ = socket.write_all(&packet).await;
            let _ = socket.flush().await;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let mut endpoint = MySqlEndpoint::new("127.0.0.1", port, "root", "");
    endpoint.connect_timeout = Duration::from_secs(5);
    let e = ReadError::from(endpoint.connect().await.unwrap_err());
    assert!(matches!(e, ReadError::Transport(_)), "{e}");
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mysql_link_does_tls_and_verifies_when_asked() {
    use doris_read::SslMode;
    let ca = doris_emulator::tls::TestCa::new(&["127.0.0.1"]).unwrap();
    let e = Emulator::start(EmulatorConfig {
        tls: Some((ca.cert_pem.clone(), ca.key_pem.clone())),
        ..EmulatorConfig::default()
    })
    .await
    .unwrap();
    e.execute(None, DDL).unwrap();
    let mut endpoint = MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "bob", "pw");
    endpoint.database = Some("demo".into());
    endpoint.connect_timeout = Duration::from_secs(5);
    // Verified against the test CA, host name included.
    endpoint.ssl_mode = SslMode::VerifyIdentity;
    endpoint.ssl_ca_pem = Some(ca.ca_pem.clone().into_bytes());
    let schema = discover(&endpoint, "demo", "t").await.unwrap();
    assert!(!schema.columns.is_empty());
    // Without the CA the chain does not verify.
    let mut unknown = endpoint.clone();
    unknown.ssl_ca_pem = None;
    let err = discover(&unknown, "demo", "t").await.unwrap_err();
    assert!(matches!(err, ReadError::Transport(_)), "{err}");
    // A CA that signed nothing here does not verify either.
    let other = doris_emulator::tls::TestCa::new(&["127.0.0.1"]).unwrap();
    let mut wrong = endpoint.clone();
    wrong.ssl_ca_pem = Some(other.ca_pem.into_bytes());
    assert!(discover(&wrong, "demo", "t").await.is_err());
    // Required encrypts without verifying; disabled stays plain; both connect.
    for mode in [SslMode::Required, SslMode::Preferred, SslMode::Disabled] {
        let mut plain = unknown.clone();
        plain.ssl_mode = mode;
        discover(&plain, "demo", "t").await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_query_over_its_row_cap_fails_naming_the_cap() {
    // Session queries read metadata (DESC, SHOW, jobs()): a server that answers one with
    // more rows than the cap is refused, not buffered. MariaDB's sequence tables make the
    // answer (a real server, nobody's emulation).
    use doris_mysql::{MAX_SESSION_ROWS, Session};
    let mut session = Session::open(&mariadb()).await.unwrap();
    let fits = session
        .query(&format!("SELECT seq FROM seq_1_to_{MAX_SESSION_ROWS}"))
        .await
        .unwrap();
    assert_eq!(fits.rows.len(), MAX_SESSION_ROWS);
    let e = session
        .query(&format!(
            "SELECT seq FROM seq_1_to_{}",
            MAX_SESSION_ROWS + 1
        ))
        .await
        .unwrap_err();
    assert!(
        matches!(e, doris_mysql::MySqlError::TooLarge(_)) && e.to_string().contains("100000"),
        "{e}"
    );
    // Through doris-read it is metadata this crate cannot take.
    assert!(matches!(ReadError::from(e), ReadError::Metadata(_)));
}

/// The mode's one cell, as the session reads it.
async fn sql_mode_of(session: &mut doris_mysql::Session) -> String {
    let answer = session.query("SELECT @@sql_mode").await.unwrap();
    answer.rows[0][0].clone().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_reads_backslash_escapes_whatever_mode_the_server_starts_it_in() {
    // An admin set NO_BACKSLASH_ESCAPES for every new session (`SET GLOBAL`, as on Doris):
    // a session the crates open drops that one flag and keeps the rest, on open and on
    // reconnect, so `doris_sql`'s literals (a comment, a property) read back as written.
    use doris_mysql::Session;
    let e = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let endpoint = MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
    let mut admin = Session::open(&endpoint).await.unwrap();
    admin
        .execute("SET GLOBAL sql_mode = 'STRICT_TRANS_TABLES,NO_BACKSLASH_ESCAPES'")
        .await
        .unwrap();
    assert_eq!(
        e.shared().global_sql_mode.lock().unwrap().as_str(),
        "NO_BACKSLASH_ESCAPES,STRICT_TRANS_TABLES"
    );
    let mut session = Session::open(&endpoint).await.unwrap();
    assert_eq!(sql_mode_of(&mut session).await, "STRICT_TRANS_TABLES");
    session.reconnect().await.unwrap();
    assert_eq!(sql_mode_of(&mut session).await, "STRICT_TRANS_TABLES");
    // Doris refuses a mode it does not know, naming the part.
    let err = session
        .execute("SET sql_mode = 'STRICT_TRANS_TABLES,NOPE'")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("'NOPE'"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn literal_only_text_reads_back_once_the_session_reads_backslash_escapes() {
    // A real server's reading: MariaDB, in a session whose mode gained NO_BACKSLASH_ESCAPES.
    // Before `use_backslash_escapes` a backslash reads back doubled (the test can fail);
    // after it, every generated value rendered by `push_string_literal` (the renderer of
    // comments and properties) reads back exactly, and the mode's other flags are kept.
    use doris_mysql::Session;
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::TestRunner;
    async fn read_back(session: &mut Session, value: &str) -> String {
        let mut sql = String::from("SELECT ");
        doris_sql::push_string_literal(&mut sql, value);
        let answer = session.query(&sql).await.unwrap();
        answer.rows[0][0].clone().unwrap()
    }
    let mut session = Session::open(&mariadb()).await.unwrap();
    session
        .execute("SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')")
        .await
        .unwrap();
    let before = sql_mode_of(&mut session).await;
    assert!(before.contains("NO_BACKSLASH_ESCAPES"), "{before}");
    let probe = "C:\\new\\file O'Reilly";
    assert_ne!(read_back(&mut session, probe).await, probe);
    session.use_backslash_escapes().await.unwrap();
    let after = sql_mode_of(&mut session).await;
    let flags = |mode: &str| -> Vec<String> {
        mode.split(',')
            .filter(|flag| !flag.is_empty() && *flag != "NO_BACKSLASH_ESCAPES")
            .map(str::to_owned)
            .collect()
    };
    assert!(!after.contains("NO_BACKSLASH_ESCAPES"), "{after}");
    assert_eq!(flags(&after), flags(&before));
    let pieces = proptest::sample::select(vec![
        "'", "\"", "\\", "\0", "\n", "\r", "\t", "`", "%", "_", "''", "\\'", "--", "/*", ";", " ",
        "a", "Z",
    ]);
    let values = proptest::collection::vec(pieces, 0..12).prop_map(|parts| parts.concat());
    let mut runner = TestRunner::deterministic();
    for _ in 0..300 {
        let value = values.new_tree(&mut runner).unwrap().current();
        assert_eq!(read_back(&mut session, &value).await, value, "{value:?}");
    }
}
