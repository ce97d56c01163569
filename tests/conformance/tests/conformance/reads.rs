//! Reads as doris-read relies on them: the same rows over MySQL and over Flight SQL
//! (`DoGet` at each endpoint's location), `TABLET(…)` hints that partition a table, and
//! Doris's error codes for a missing table and bad credentials.

use arrow::array::{Array, AsArray};
use arrow::compute::concat_batches;
use arrow::datatypes::Int64Type;
use arrow::record_batch::RecordBatch;
use doris_plan::fetch_plan;
use doris_read::{BatchLimits, ReadError, TimestampUnits, Transport, discover, discover_in};
use doris_streamload::{LoadOptions, StreamLoadClient};

use crate::common::{Target, load, rows, with_table};

const ROWS: usize = 500;

/// `t` holding `ROWS` rows, loaded with Stream Load.
async fn loaded() -> (Target, crate::common::Scratch) {
    let (target, db) = with_table().await;
    let client = StreamLoadClient::new(target.stream_load()).unwrap();
    load(
        &client,
        &db.name,
        &LoadOptions::default(),
        None,
        rows(0, ROWS),
    )
    .await
    .unwrap();
    (target, db)
}

/// The batches as one, ordered by `id`.
fn by_id(batches: Vec<RecordBatch>) -> RecordBatch {
    let schema = batches[0].schema();
    let all = concat_batches(&schema, &batches).unwrap();
    let ids = all.column(0).as_primitive::<Int64Type>();
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

fn limits() -> BatchLimits {
    BatchLimits {
        rows: 128,
        bytes: 1 << 20,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mysql_and_flight_return_the_rows_stream_load_wrote() {
    let (target, db) = loaded().await;
    // DATETIME(3) in milliseconds, the unit the rows were written in.
    let layout = discover_in(&target.mysql(), &db.name, "t", TimestampUnits::ByPrecision)
        .await
        .unwrap();
    let schema = layout.arrow_schema(None).unwrap();
    let sql = format!(
        "SELECT `id`, `name`, `amount`, `ts`, `d` FROM `{}`.`t`",
        db.name
    );
    let over_mysql = Transport::MySql(target.mysql())
        .read([sql.clone()], schema.clone(), limits())
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert!(over_mysql.iter().all(|b| b.num_rows() <= 128));
    let over_mysql = by_id(over_mysql);
    assert_eq!(over_mysql.num_rows(), ROWS);
    // What was written comes back: every fifth name null, the rest `n<id>`.
    let expected = rows(0, ROWS);
    for column in 0..expected.num_columns() {
        assert_eq!(
            over_mysql.column(column).to_data(),
            expected.column(column).to_data(),
            "column {column}"
        );
    }
    let Some(endpoint) = target.flight() else {
        eprintln!("conformance: DORIS_TEST_FLIGHT_PORT unset, the Flight read was skipped");
        target.drop_scratch(db).await;
        return;
    };
    let over_flight = Transport::Flight(endpoint)
        .read([sql], schema, limits())
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(by_id(over_flight), over_mysql);
    target.drop_scratch(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tablet_hints_partition_the_table_exactly() {
    let (target, db) = loaded().await;
    let layout = discover(&target.mysql(), &db.name, "t").await.unwrap();
    let schema = layout.arrow_schema(Some(&["id".to_owned()])).unwrap();
    let scan = format!("SELECT `id` FROM `{}`.`t`", db.name);
    let plan = fetch_plan(&target.plan(), &db.name, "t", &scan)
        .await
        .unwrap();
    let mut ids = Vec::new();
    for tablet in &plan.tablets {
        let sql = format!("SELECT `id` FROM `{}`.`t` TABLET({})", db.name, tablet.id);
        let batches = Transport::MySql(target.mysql())
            .read([sql], schema.clone(), limits())
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        for b in batches {
            let column = b.column(0).as_primitive::<Int64Type>();
            assert_eq!(column.null_count(), 0);
            ids.extend(column.values().iter().copied());
        }
    }
    ids.sort_unstable();
    // Each row in exactly one tablet: no row lost, none read twice.
    assert_eq!(ids, (0..ROWS as i64).collect::<Vec<_>>());
    target.drop_scratch(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_table_and_wrong_credentials_are_typed() {
    let (target, db) = with_table().await;
    let e = discover(&target.mysql(), &db.name, "nope")
        .await
        .unwrap_err();
    assert!(matches!(e, ReadError::NotFound(_)), "{e}");
    let mut wrong = target.mysql();
    wrong.credentials =
        doris_connection::Credentials::new(wrong.credentials.user(), "Conformance-Wrong-Pw-9");
    let e = discover(&wrong, &db.name, "t").await.unwrap_err();
    assert!(matches!(e, ReadError::Auth(_)), "{e}");
    assert!(!format!("{e} {e:?}").contains("Conformance-Wrong-Pw-9"));
    target.drop_scratch(db).await;
}
