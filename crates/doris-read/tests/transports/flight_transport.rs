//! The Flight SQL transport against the emulator's FE and BE Flight faces: the same Arrow
//! data as the MySQL transport, split reads, typed errors, token eviction, session cap.
#![allow(clippy::unwrap_used)]

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::compute::concat_batches;
use arrow::datatypes::Int32Type;
use doris_emulator::{Emulator, EmulatorConfig};
use doris_plan::{DiscoveryPolicy, PlanEndpoint};
use doris_read::{
    BatchLimits, FlightSqlEndpoint, MySqlEndpoint, ReadError, Split, TableReadOptions,
    plan_table_read,
};

use crate::{flight_query, query};

const DDL: &str = "CREATE DATABASE d;
CREATE TABLE d.t (`id` INT NOT NULL, `b` BOOLEAN NULL, `t8` TINYINT NULL, `big` BIGINT NULL,
  `li` LARGEINT NULL, `f` FLOAT NULL, `g` DOUBLE NULL, `dec` DECIMAL(18, 4) NULL, `day` DATE NULL,
  `ts` DATETIME(6) NULL, `ms` DATETIME(3) NULL, `s0` DATETIME NULL, `c` CHAR(3) NULL,
  `v` VARCHAR(10) NULL, `txt` STRING NULL)
DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 4;
CREATE USER 'nobody'@'%' IDENTIFIED BY 'np-secret';";

async fn setup(config: EmulatorConfig) -> (Emulator, MySqlEndpoint, FlightSqlEndpoint) {
    let e = Emulator::start(config).await.unwrap();
    e.execute(None, DDL).unwrap();
    let mysql = MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
    let mut conn = mysql.connect().await.unwrap();
    let mut values = vec![
        "(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"
            .to_owned(),
    ];
    for i in 1..300 {
        values.push(format!(
            "({i}, {b}, {t}, {big}, {li}, {i}.5, {i}.25, {i}.1234, '2024-03-{d:02}', \
             '2024-03-01 01:02:03.{i:06}', '2024-03-01 01:02:03.{ms:03}', '2024-03-01 01:02:{s:02}', \
             'c{c}', 'v\\'{i}', 'text {i}')",
            b = i % 2,
            t = i % 100 - 50,
            big = i64::from(i) * 1_000_000_007,
            li = i64::from(i) * 3,
            d = i % 28 + 1,
            ms = i % 1000,
            s = i % 60,
            c = i % 10,
        ));
    }
    sqlx::raw_sql(&format!("INSERT INTO d.t VALUES {}", values.join(", ")))
        .execute(&mut conn)
        .await
        .unwrap();
    let (fe, _) = e.flight_addrs().unwrap();
    let mut flight = FlightSqlEndpoint::new("127.0.0.1", fe.port(), "root", "");
    // Locations are checked against the BEs the FE's HTTP face reports.
    let http = format!("http://{}", e.fe_http_addr()).parse().unwrap();
    flight.fe_http = Some(doris_plan::PlanEndpoint::new(http, "root", ""));
    (e, mysql, flight)
}

fn sorted(batches: Vec<RecordBatch>, schema: arrow_schema::SchemaRef) -> RecordBatch {
    let all = concat_batches(&schema, &batches).unwrap();
    let ids = all.column(0).as_primitive::<Int32Type>();
    let mut order: Vec<u32> = (0..all.num_rows() as u32).collect();
    order.sort_by_key(|i| ids.value(*i as usize));
    let indices = arrow::array::UInt32Array::from(order);
    let columns = all
        .columns()
        .iter()
        .map(|c| arrow::compute::take(c, &indices, None).unwrap())
        .collect();
    RecordBatch::try_new(schema, columns).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_transports_return_the_same_arrow_data() {
    let (e, mysql, flight) = setup(EmulatorConfig::default()).await;
    let plan = plan_table_read(&mysql, "d", "t", &TableReadOptions::default())
        .await
        .unwrap();
    let sql = plan.tasks[0].clone();
    let limits = BatchLimits {
        rows: 64,
        bytes: 1 << 20,
    };
    let over_mysql = query(&mysql, sql.clone(), plan.schema.clone(), limits)
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let over_flight = flight_query(&flight, sql, plan.schema.clone(), limits)
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert!(over_flight.iter().all(|b| b.num_rows() <= 64));
    let (a, b) = (
        sorted(over_mysql, plan.schema.clone()),
        sorted(over_flight, plan.schema.clone()),
    );
    assert_eq!(a.num_rows(), 300);
    assert_eq!(a, b);
    // Every endpoint was fetched (none left waiting on the BE).
    assert_eq!(e.shared().flight.pending_results(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn split_reads_over_flight_honour_tablet_hints() {
    let (e, mysql, flight) = setup(EmulatorConfig::default()).await;
    let fe = PlanEndpoint::new(
        format!("http://{}", e.fe_http_addr()).parse().unwrap(),
        "root",
        "",
    );
    let options = TableReadOptions {
        columns: Some(vec!["id".into()]),
        split: Split::Auto {
            fe,
            target_tasks: 3,
            policy: DiscoveryPolicy::Error,
        },
        ..TableReadOptions::default()
    };
    let plan = plan_table_read(&mysql, "d", "t", &options).await.unwrap();
    assert!(plan.tasks.len() > 1);
    let mut ids = Vec::new();
    for sql in plan.tasks {
        assert!(sql.contains("TABLET("), "{sql}");
        for b in fetch(&flight, &sql, plan.schema.clone()).await {
            ids.extend(
                b.column(0)
                    .as_primitive::<Int32Type>()
                    .values()
                    .iter()
                    .copied(),
            );
        }
    }
    ids.sort_unstable();
    assert_eq!(ids, (0..300).collect::<Vec<_>>());
}

/// A one-column schema.
fn one_column(name: &str, ty: arrow_schema::DataType, nullable: bool) -> arrow_schema::SchemaRef {
    std::sync::Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
        name, ty, nullable,
    )]))
}

/// The schema of `SELECT id`.
fn id_schema() -> arrow_schema::SchemaRef {
    one_column("id", arrow_schema::DataType::Int32, false)
}

/// Every batch of `sql` over Flight.
async fn fetch(
    flight: &FlightSqlEndpoint,
    sql: &str,
    schema: arrow_schema::SchemaRef,
) -> Vec<RecordBatch> {
    flight_query(flight, sql.into(), schema, BatchLimits::default())
        .await
        .unwrap()
        .collect()
        .await
        .unwrap()
}

/// The rows of `SELECT id FROM d.t` over Flight.
async fn id_rows(flight: &FlightSqlEndpoint) -> usize {
    fetch(flight, "SELECT `id` FROM `d`.`t`", id_schema())
        .await
        .iter()
        .map(RecordBatch::num_rows)
        .sum()
}

async fn flight_error(flight: &FlightSqlEndpoint, sql: &str) -> ReadError {
    let schema = id_schema();
    match flight_query(flight, sql.into(), schema, BatchLimits::default()).await {
        Err(e) => e,
        Ok(stream) => match stream.collect().await {
            Err(e) => e,
            Ok(_) => panic!("{sql} succeeded"),
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_typed_and_never_echo_the_password() {
    let (_e, _mysql, flight) = setup(EmulatorConfig::default()).await;
    let mut wrong = flight.clone();
    wrong.credentials =
        doris_connection::Credentials::new(wrong.credentials.user(), "not-the-pw-42");
    let err = flight_error(&wrong, "SELECT `id` FROM `d`.`t`").await;
    assert!(matches!(err, ReadError::Auth(_)), "{err}");
    assert!(!err.to_string().contains("not-the-pw-42"));
    let err = flight_error(&flight, "SELECT `id` FROM `d`.`missing`").await;
    assert!(matches!(err, ReadError::NotFound(_)), "{err}");
    let mut nobody = FlightSqlEndpoint::new(&flight.host, flight.port, "nobody", "np-secret");
    nobody.connect_timeout = flight.connect_timeout;
    let err = flight_error(&nobody, "SELECT `id` FROM `d`.`t`").await;
    assert!(matches!(err, ReadError::Permission(_)), "{err}");
    let err = flight_error(&flight, "SELECT `id` FROM `d`.`t` WHERE").await;
    assert!(matches!(err, ReadError::Query { .. }), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_stream_cut_midway_is_an_error_never_a_short_result() {
    let (e, _mysql, flight) = setup(EmulatorConfig::default()).await;
    e.faults().arm(
        doris_emulator::faults::Fault::CutFlightStream { rows: 10 },
        1,
    );
    let err = flight_error(&flight, "SELECT `id` FROM `d`.`t`").await;
    assert!(matches!(err, ReadError::Transport(_)), "{err}");
    assert_eq!(e.faults().fired().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_ends_cleanly_but_short_of_the_announced_count_fails() {
    use doris_emulator::faults::Fault;
    let (e, _mysql, flight) = setup(EmulatorConfig::default()).await;
    // The table holds 300 rows; a server that announces 301 and sends 300 is short.
    e.faults().arm(Fault::AnnounceFlightRows { rows: 301 }, 1);
    let err = flight_error(&flight, "SELECT `id` FROM `d`.`t`").await;
    assert!(matches!(err, ReadError::Transport(_)), "{err}");
    assert!(err.to_string().contains("announced 301"), "{err}");
    // The announced count, when right, is accepted; -1 (Doris's "unknown") is not checked.
    e.faults().arm(Fault::AnnounceFlightRows { rows: 300 }, 1);
    let rows = id_rows(&flight).await;
    assert_eq!(rows, 300);
    assert_eq!(e.faults().fired().len(), 2);
}

/// One BE endpoint of several unreachable (the FE names a port where nothing listens for
/// the third of three partitions): the read fails, never returning the rows of the other
/// endpoints as the whole result. The same fault naming the real BE reads every row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_unreachable_endpoint_of_several_fails_the_read() {
    use doris_emulator::faults::Fault;
    let (e, mysql, mut flight) = setup(EmulatorConfig::default()).await;
    // One endpoint per partition: three partitions, three endpoints.
    e.execute(
        None,
        "CREATE TABLE d.p (`id` INT NOT NULL) DUPLICATE KEY(`id`) \
         PARTITION BY RANGE(`id`) (PARTITION p0 VALUES LESS THAN (\"100\"), \
         PARTITION p1 VALUES LESS THAN (\"200\"), PARTITION p2 VALUES LESS THAN (MAXVALUE)) \
         DISTRIBUTED BY HASH(`id`) BUCKETS 2",
    )
    .unwrap();
    let mut conn = mysql.connect().await.unwrap();
    sqlx::raw_sql("INSERT INTO d.p SELECT `id` FROM d.t")
        .execute(&mut conn)
        .await
        .unwrap();
    // Bound and never listening: a connection is refused, and no other process can take
    // the port while the test holds it.
    let reserved = tokio::net::TcpSocket::new_v4().unwrap();
    reserved.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let closed = reserved.local_addr().unwrap().port();
    // Admitted explicitly: the test is about reaching it, not about the allowlist.
    flight
        .allowlist
        .targets
        .push(doris_connection::HostPort::new("127.0.0.1", closed));
    let be = e.be_flight_addrs()[0].port();
    let sql = "SELECT `id` FROM `d`.`p`";
    let arm = |port: u16| {
        e.faults().arm(
            Fault::FlightLocation {
                host: "127.0.0.1".into(),
                port,
                endpoint: Some(2),
            },
            1,
        );
    };
    arm(be);
    let rows: usize = fetch(&flight, sql, id_schema())
        .await
        .iter()
        .map(RecordBatch::num_rows)
        .sum();
    assert_eq!(rows, 300);
    arm(closed);
    let err = flight_error(&flight, sql).await;
    assert!(matches!(err, ReadError::Transport(_)), "{err}");
    assert_eq!(e.faults().fired().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fe_local_statements_are_served_by_the_fe_without_a_location() {
    let (_e, _mysql, flight) = setup(EmulatorConfig::default()).await;
    let status = one_column("StatusResult", arrow_schema::DataType::Int32, false);
    let batches = fetch(&flight, "SET time_zone = 'UTC'", status).await;
    assert_eq!(
        batches[0].column(0).as_primitive::<Int32Type>().values(),
        &[0]
    );
    let databases = one_column("Database", arrow_schema::DataType::Utf8, true);
    let batches = fetch(&flight, "SHOW DATABASES", databases).await;
    let names: Vec<&str> = batches[0]
        .column(0)
        .as_string::<i32>()
        .iter()
        .flatten()
        .collect();
    assert!(names.contains(&"d"), "{names:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_evicted_token_is_replaced_by_one_new_handshake() {
    let (e, _mysql, flight) = setup(EmulatorConfig::default()).await;
    e.shared().flight.evict_on_next_info();
    let batches = fetch(&flight, "SELECT `id` FROM `d`.`t`", id_schema()).await;
    assert_eq!(
        batches.iter().map(RecordBatch::num_rows).sum::<usize>(),
        300
    );
    // The evicted session is gone; only the new one remains.
    assert_eq!(e.shared().flight.sessions(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_cap_refuses_one_more_handshake() {
    let config = EmulatorConfig {
        flight_session_cap: 1,
        ..EmulatorConfig::default()
    };
    let (_e, _mysql, mut flight) = setup(config).await;
    flight.reuse_session = false;
    let sql = "SELECT `id` FROM `d`.`t`";
    let schema = id_schema();
    flight_query(&flight, sql.into(), schema, BatchLimits::default())
        .await
        .unwrap();
    let err = flight_error(&flight, sql).await;
    assert!(
        err.to_string().contains("Reach limit of connections"),
        "{err}"
    );
}

/// A kept FE session (the default) outlives its FE: after the FE restarts on the same
/// address, the session's link is dead, and the next read plans again on a new link and
/// session instead of failing (the request never reached a live FE).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_session_survives_an_fe_restarted_on_its_address() {
    let (first, _mysql, flight) = setup(EmulatorConfig::default()).await;
    assert_eq!(id_rows(&flight).await, 300);
    let (fe, _) = first.flight_addrs().unwrap();
    let http = first.fe_http_addr();
    drop(first);
    // The old faces let go of their ports once they stop.
    let mut freed = false;
    for _ in 0..100 {
        let flight_port = std::net::TcpListener::bind(fe);
        let http_port = std::net::TcpListener::bind(http);
        if flight_port.is_ok() && http_port.is_ok() {
            freed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(freed, "the first FE's ports were never freed");
    // Nothing listens there now: a read fails as a transport failure (the link's, not an
    // answer of the FE's), and the session it kept is not trusted again.
    match flight_query(
        &flight,
        "SELECT `id` FROM `d`.`t`".into(),
        id_schema(),
        BatchLimits::default(),
    )
    .await
    {
        Err(ReadError::Transport(_)) => {}
        Err(other) => panic!("not a transport failure: {other:?}"),
        Ok(_) => panic!("a read from a stopped FE began"),
    }
    let config = EmulatorConfig {
        fe_flight_port: fe.port(),
        fe_http_port: http.port(),
        ..EmulatorConfig::default()
    };
    let (second, _mysql, again) = setup(config).await;
    assert_eq!(id_rows(&again).await, 300, "the restarted FE's rows");
    assert_eq!(
        id_rows(&flight).await,
        300,
        "the first endpoint, same address"
    );
    assert_eq!(second.shared().flight.sessions(), 1, "one new session");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_share_one_session_under_a_session_cap() {
    let config = EmulatorConfig {
        flight_session_cap: 3,
        ..EmulatorConfig::default()
    };
    let (e, _mysql, flight) = setup(config).await;
    let sql = "SELECT `id` FROM `d`.`t`";
    for _ in 0..50 {
        let rows: usize = fetch(&flight, sql, id_schema())
            .await
            .iter()
            .map(RecordBatch::num_rows)
            .sum();
        assert_eq!(rows, 300);
    }
    let concurrent = (0..8).map(|_| {
        let flight = flight.clone();
        tokio::spawn(async move { fetch(&flight, sql, id_schema()).await })
    });
    for read in futures::future::join_all(concurrent).await {
        let rows: usize = read.unwrap().iter().map(RecordBatch::num_rows).sum();
        assert_eq!(rows, 300);
    }
    assert_eq!(e.shared().flight.sessions(), 1, "58 reads, one session");
    // The FE forgets every token (expiry, eviction): the next read handshakes once more.
    e.shared().flight.evict_tokens();
    fetch(&flight, sql, id_schema()).await;
    assert_eq!(e.shared().flight.sessions(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_stream_cancels_every_fetch() {
    use arrow::array::{ArrayRef, Int64Array, StringArray};
    use std::sync::Arc;
    use std::time::Duration;
    // 200,000 rows of ~200 bytes in 4 buckets: several endpoints, each far larger than
    // what HTTP/2 flow control lets a server send ahead of a reader.
    const ROWS: i64 = 200_000;
    let (e, _mysql, mut flight) = setup(EmulatorConfig::default()).await;
    e.execute(
        None,
        "CREATE TABLE d.wide (id BIGINT NOT NULL, pad VARCHAR(255)) \
         DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 4",
    )
    .unwrap();
    let schema = Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("id", arrow_schema::DataType::Int64, false),
        arrow_schema::Field::new("pad", arrow_schema::DataType::Utf8, true),
    ]));
    let pad = "p".repeat(190);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(0..ROWS)),
        Arc::new(StringArray::from_iter_values(
            (0..ROWS).map(|_| pad.as_str()),
        )),
    ];
    e.commit_rows(
        "d",
        "wide",
        vec![RecordBatch::try_new(schema.clone(), columns).unwrap()],
    )
    .unwrap();
    flight.max_parallel = 4;
    let limits = BatchLimits {
        rows: 1000,
        bytes: usize::MAX,
    };
    let mut stream = flight_query(&flight, "SELECT id, pad FROM d.wide".into(), schema, limits)
        .await
        .unwrap();
    assert_eq!(stream.next_batch().await.unwrap().unwrap().num_rows(), 1000);
    let streams = &e.wire().flight_streams;
    // Several fetches are open (flow control holds each server stream mid-result).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while streams.now() < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "fewer than two DoGet streams ever opened: {}",
            streams.peak()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(stream);
    while streams.now() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} DoGet streams still open after the read was dropped",
            streams.now()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The tablet ids the emulator placed on simulated BE `be` (tablet `i` lives on `i mod N`).
fn tablets_of(e: &Emulator, be: usize) -> Vec<u64> {
    let table = e.shared().catalog.table("d", "t").unwrap();
    let n = e.shared().backends.count();
    table
        .tablets
        .iter()
        .enumerate()
        .filter(|(i, _)| i % n == be)
        .map(|(_, t)| t.id)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_several_backends_each_tablet_is_read_from_the_backend_holding_it() {
    let config = EmulatorConfig {
        backends: 3,
        ..EmulatorConfig::default()
    };
    let (e, mysql, flight) = setup(config).await;
    assert_eq!(e.be_flight_addrs().len(), 3);
    // The plan reports every BE: the split planner deals tablets over distinct routings.
    let fe = PlanEndpoint::new(
        format!("http://{}", e.fe_http_addr()).parse().unwrap(),
        "root",
        "",
    );
    let plan = doris_plan::fetch_plan(&fe, "d", "t", "SELECT `id` FROM `d`.`t`")
        .await
        .unwrap();
    let routings: std::collections::BTreeSet<String> =
        plan.tablets.iter().map(|t| t.routings[0].clone()).collect();
    assert_eq!(routings.len(), 3, "{routings:?}");
    let backends = &e.shared().backends;
    let mut all = Vec::new();
    for be in 0..3 {
        let ids = tablets_of(&e, be);
        let hint: Vec<String> = ids.iter().map(u64::to_string).collect();
        let sql = format!("SELECT `id` FROM `d`.`t` TABLET({})", hint.join(", "));
        let before: Vec<u64> = (0..3).map(|b| backends.bytes_sent(b)).collect();
        let rows: Vec<i32> = fetch(&flight, &sql, id_schema())
            .await
            .iter()
            .flat_map(|b| b.column(0).as_primitive::<Int32Type>().values().to_vec())
            .collect();
        let after: Vec<u64> = (0..3).map(|b| backends.bytes_sent(b)).collect();
        // Only the BE holding the hinted tablets sent anything.
        for b in 0..3 {
            assert_eq!(
                after[b] > before[b],
                b == be,
                "BE {b} for tablets of BE {be}"
            );
        }
        // And over MySQL the same BE paces the result the FE relays.
        let over_mysql = query(&mysql, sql.clone(), id_schema(), BatchLimits::default())
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let again: Vec<u64> = (0..3).map(|b| backends.bytes_sent(b)).collect();
        for b in 0..3 {
            assert_eq!(again[b] > after[b], b == be, "MySQL: BE {b}");
        }
        assert_eq!(
            over_mysql.iter().map(RecordBatch::num_rows).sum::<usize>(),
            rows.len()
        );
        all.extend(rows);
    }
    all.sort_unstable();
    assert_eq!(all, (0..300).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backend_bandwidth_paces_the_results_it_sends() {
    let rate = 128 * 1024;
    let config = EmulatorConfig {
        backends: 2,
        be_bandwidth: Some(rate),
        ..EmulatorConfig::default()
    };
    let (e, mysql, flight) = setup(config).await;
    let sql = "SELECT * FROM `d`.`t`";
    let plan = plan_table_read(&mysql, "d", "t", &TableReadOptions::default())
        .await
        .unwrap();
    for transport in ["mysql", "flight"] {
        let before = e.shared().backends.bytes_sent(0);
        let started = std::time::Instant::now();
        let batches = if transport == "mysql" {
            query(
                &mysql,
                sql.into(),
                plan.schema.clone(),
                BatchLimits::default(),
            )
            .await
            .unwrap()
            .collect()
            .await
            .unwrap()
        } else {
            fetch(&flight, sql, plan.schema.clone()).await
        };
        let took = started.elapsed();
        assert_eq!(
            batches.iter().map(RecordBatch::num_rows).sum::<usize>(),
            300
        );
        // A whole-table query is sunk by one BE (the least busy: BE 0 when idle), and no
        // faster than its bucket lets the bytes it sent go.
        let sent = e.shared().backends.bytes_sent(0) - before;
        assert!(sent > 10_000, "{transport}: {sent} bytes");
        assert_eq!(e.shared().backends.bytes_sent(1), 0, "{transport}");
        let floor = std::time::Duration::from_secs_f64(sent as f64 / rate as f64);
        assert!(
            took >= floor.mul_f64(0.95),
            "{transport}: {took:?} < {floor:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_answer_over_the_message_cap_is_refused_not_buffered() {
    use doris_emulator::faults::Fault;
    // An FE that answers the handshake with a 2 MiB message: under a 1 MiB cap the read
    // fails as a transport error naming the FE's handshake and the option that raises the
    // cap (tonic refuses the message from its length prefix, before buffering it); under
    // the default cap (256 MiB) the same answer is read and the token taken from its
    // header.
    let (e, _mysql, mut flight) = setup(EmulatorConfig::default()).await;
    flight.reuse_session = false;
    let oversized = Fault::OversizedHandshake { bytes: 2 << 20 };
    e.faults().arm(oversized.clone(), 1);
    let mut capped = flight.clone();
    capped.max_message_bytes = 1 << 20;
    let error = flight_error(&capped, "SELECT `id` FROM `d`.`t`").await;
    assert!(matches!(error, ReadError::Transport(_)), "{error}");
    let text = error.to_string();
    assert!(text.contains("the FE's handshake"), "{text}");
    assert!(text.contains("with_max_msg_size"), "{text}");
    e.faults().arm(oversized, 1);
    let rows = id_rows(&flight).await;
    assert_eq!(rows, 300);
    let fired = e.faults().fired();
    assert_eq!(fired.len(), 2);
    assert!(fired.iter().all(|f| f.kind == "oversized_handshake"));
}

/// An emulator of `release` whose sessions start in `zone`, with `z.t` (`id` INT and
/// `columns`) holding `values` (inserted over MySQL); its MySQL and Flight endpoints.
async fn zoned_table(
    release: &str,
    zone: &str,
    columns: &str,
    values: &str,
) -> (Emulator, MySqlEndpoint, FlightSqlEndpoint) {
    let mut config = EmulatorConfig::default();
    config.profile.release = release.parse().unwrap();
    config.time_zone = zone.into();
    let e = Emulator::start(config).await.unwrap();
    e.execute(
        None,
        &format!(
            "CREATE DATABASE z; CREATE TABLE z.t (`id` INT NOT NULL, {columns}) \
             DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1;"
        ),
    )
    .unwrap();
    let mysql = MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
    let mut conn = mysql.connect().await.unwrap();
    sqlx::raw_sql(&format!("INSERT INTO z.t VALUES {values}"))
        .execute(&mut conn)
        .await
        .unwrap();
    let (fe, _) = e.flight_addrs().unwrap();
    let mut flight = FlightSqlEndpoint::new("127.0.0.1", fe.port(), "root", "");
    let http = format!("http://{}", e.fe_http_addr()).parse().unwrap();
    flight.fe_http = Some(PlanEndpoint::new(http, "root", ""));
    (e, mysql, flight)
}

/// The one-task read of all of `z.t`: its statement and schema.
async fn whole_table(mysql: &MySqlEndpoint) -> (String, arrow_schema::SchemaRef) {
    let plan = plan_table_read(mysql, "z", "t", &TableReadOptions::default())
        .await
        .unwrap();
    (plan.tasks[0].clone(), plan.schema)
}

/// Every batch of a read, or its first error.
async fn read_all(
    stream: Result<doris_read::BatchStream, ReadError>,
) -> Result<Vec<RecordBatch>, ReadError> {
    stream?.collect().await
}

/// DATETIME and IPV4 as Doris sends them over Flight (a zoned instant in the session's time
/// zone and the address bits, docs/value-inventory.md), read back exactly: a Flight and a
/// MySQL read of the same rows agree value for value and equal what was written, under
/// releases with the zoned and the naive form and servers in zones east, west and on a
/// half-hour offset; a DATETIME inside a DST gap, which Flight's zoned form cannot say, is
/// refused over Flight naming MySQL, and read exactly over MySQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datetime_and_ipv4_read_exactly_over_both_transports_in_any_server_zone() {
    use arrow::datatypes::TimestampMicrosecondType;
    let written = [
        "2024-01-02 03:04:05.123456",
        "1969-12-31 23:59:59.999999",
        "2024-11-03 01:30:00.000000",
        "9999-12-31 23:59:59.999999",
        "0001-01-01 00:00:00.000000",
    ];
    let micros = |text: &str| {
        chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f")
            .unwrap()
            .and_utc()
            .timestamp_micros()
    };
    for (release, zone) in [
        ("3.0.4", "Asia/Shanghai"),
        ("4.0.6", "America/New_York"),
        ("4.1.0", "+05:30"),
        ("4.1.3", "Asia/Shanghai"),
    ] {
        let values: Vec<String> = written
            .iter()
            .enumerate()
            .map(|(i, ts)| format!("({i}, '{ts}', '192.168.{i}.1')"))
            .chain(["(9, NULL, NULL)".to_owned()])
            .collect();
        let (_e, mysql, flight) = zoned_table(
            release,
            zone,
            "`ts` DATETIME(6) NULL, `ip` IPV4 NULL",
            &values.join(", "),
        )
        .await;
        let (sql, schema) = whole_table(&mysql).await;
        let over_mysql =
            read_all(query(&mysql, sql.clone(), schema.clone(), BatchLimits::default()).await)
                .await;
        let over_flight =
            read_all(flight_query(&flight, sql, schema.clone(), BatchLimits::default()).await)
                .await;
        let (a, b) = (
            sorted(over_mysql.unwrap(), schema.clone()),
            sorted(over_flight.unwrap(), schema.clone()),
        );
        assert_eq!(a, b, "{release} in {zone}");
        let ts = b.column(1).as_primitive::<TimestampMicrosecondType>();
        let ip = b.column(2).as_string::<i32>();
        for (i, text) in written.iter().enumerate() {
            assert_eq!(ts.value(i), micros(text), "{release} in {zone}: {text}");
            assert_eq!(ip.value(i), format!("192.168.{i}.1"), "{release} in {zone}");
        }
        assert!(ts.is_null(written.len()) && ip.is_null(written.len()));
    }

    // A wall clock New York's clocks skipped: exact over MySQL, refused over Flight.
    let (_e, mysql, flight) = zoned_table(
        "4.1.0",
        "America/New_York",
        "`ts` DATETIME(6) NULL",
        "(1, '2024-03-10 02:30:00.250000')",
    )
    .await;
    let (sql, schema) = whole_table(&mysql).await;
    let exact = read_all(query(&mysql, sql.clone(), schema.clone(), BatchLimits::default()).await)
        .await
        .unwrap();
    let refused = read_all(flight_query(&flight, sql, schema, BatchLimits::default()).await)
        .await
        .unwrap_err();
    let ts = exact[0]
        .column(1)
        .as_primitive::<TimestampMicrosecondType>();
    assert_eq!(ts.value(0), micros("2024-03-10 02:30:00.250000"));
    let text = refused.to_string();
    assert!(
        matches!(refused, ReadError::Decode { .. })
            && text.contains("ts")
            && text.contains("MySQL"),
        "{text}"
    );
}
