//! Split reads through `_query_plan` + `TABLET(...)` return exactly the rows of a single
//! read (as multisets), for several partitions, empty tablets, one row and zero rows.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, Int32Array, Int64Array, RecordBatch};
use arrow::datatypes::Int64Type;
use doris_emulator::{Emulator, EmulatorConfig};
use doris_plan::{DiscoveryPolicy, PlanEndpoint};
use doris_read::{BatchLimits, MySqlEndpoint, Split, TableReadOptions, plan_table_read};
use doris_sql::{Expr, Literal};

use crate::query;

const DDL: &str = "CREATE DATABASE d;
CREATE TABLE d.t (`id` BIGINT NOT NULL, `v` INT NULL) DUPLICATE KEY(`id`)
PARTITION BY RANGE(`id`) (PARTITION p0 VALUES LESS THAN (\"100\"), PARTITION p1 VALUES LESS THAN (\"1000\"), PARTITION p2 VALUES LESS THAN (MAXVALUE))
DISTRIBUTED BY HASH(`id`) BUCKETS 3;";

async fn setup(ids: &[i64]) -> (Emulator, MySqlEndpoint, PlanEndpoint) {
    let e = Emulator::start(EmulatorConfig::default()).await.unwrap();
    e.execute(None, DDL).unwrap();
    if !ids.is_empty() {
        let table = e.shared().catalog.table("d", "t").unwrap();
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(ids.to_vec())),
            Arc::new(Int32Array::from_iter(
                ids.iter().map(|i| Some((*i % 7) as i32)),
            )),
        ];
        let batch = RecordBatch::try_new(table.arrow_schema.clone(), columns).unwrap();
        e.commit_rows("d", "t", vec![batch]).unwrap();
    }
    let mut mysql = MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
    mysql.database = Some("d".into());
    let fe = PlanEndpoint::new(
        format!("http://{}", e.fe_http_addr()).parse().unwrap(),
        "root",
        "",
    );
    (e, mysql, fe)
}

async fn read_all(mysql: &MySqlEndpoint, options: &TableReadOptions) -> (Vec<i64>, usize) {
    let plan = plan_table_read(mysql, "d", "t", options).await.unwrap();
    let mut ids = Vec::new();
    for sql in &plan.tasks {
        let batches = query(
            mysql,
            sql.clone(),
            plan.schema.clone(),
            BatchLimits::default(),
        )
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
        for b in batches {
            ids.extend(
                b.column(0)
                    .as_primitive::<Int64Type>()
                    .values()
                    .iter()
                    .copied(),
            );
        }
    }
    ids.sort_unstable();
    (ids, plan.tasks.len())
}

fn auto(fe: &PlanEndpoint, target: usize) -> Split {
    Split::Auto {
        fe: fe.clone(),
        target_tasks: target,
        policy: DiscoveryPolicy::Error,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn split_reads_equal_single_reads() {
    // p2 stays empty; some buckets of p0 hold nothing either.
    let ids: Vec<i64> = (0..3).chain(100..900).collect();
    let (_e, mysql, fe) = setup(&ids).await;
    let single = read_all(&mysql, &TableReadOptions::default()).await;
    assert_eq!(single.0, ids);
    for target in [1, 4, 9, 50] {
        let split = read_all(
            &mysql,
            &TableReadOptions {
                split: auto(&fe, target),
                ..TableReadOptions::default()
            },
        )
        .await;
        assert_eq!(split.0, single.0, "target {target}");
        assert_eq!(split.1, target.min(9), "target {target}");
    }
    // A pushed filter prunes partitions and still matches.
    let filter = Expr::col("id").lt(Expr::lit(Literal::Int64(50)));
    let pruned = read_all(
        &mysql,
        &TableReadOptions {
            filter: Some(filter),
            split: auto(&fe, 8),
            ..TableReadOptions::default()
        },
    )
    .await;
    assert_eq!(pruned.0, vec![0, 1, 2]);
    assert_eq!(pruned.1, 3, "only p0's three tablets are planned");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_row_zero_rows_and_limits() {
    let (_e, mysql, fe) = setup(&[42]).await;
    let one = read_all(
        &mysql,
        &TableReadOptions {
            split: auto(&fe, 8),
            ..TableReadOptions::default()
        },
    )
    .await;
    assert_eq!(one.0, vec![42]);

    let (_e, mysql, fe) = setup(&[]).await;
    let none = read_all(
        &mysql,
        &TableReadOptions {
            split: auto(&fe, 8),
            ..TableReadOptions::default()
        },
    )
    .await;
    assert!(none.0.is_empty());

    let ids: Vec<i64> = (0..2000).collect();
    let (_e, mysql, fe) = setup(&ids).await;
    let plan = plan_table_read(
        &mysql,
        "d",
        "t",
        &TableReadOptions {
            limit: Some(10),
            split: auto(&fe, 4),
            ..TableReadOptions::default()
        },
    )
    .await
    .unwrap();
    assert!(plan.limit_pushed);
    assert!(
        plan.tasks.iter().all(|s| s.ends_with("LIMIT 10")),
        "{:?}",
        plan.tasks
    );
    let limited = read_all(
        &mysql,
        &TableReadOptions {
            limit: Some(10),
            split: auto(&fe, 4),
            ..TableReadOptions::default()
        },
    )
    .await;
    assert!(
        limited.0.len() >= 10 && limited.0.len() <= 40,
        "{}",
        limited.0.len()
    );
    // A residual filter keeps the limit out of the SQL.
    let residual = Expr::col("v").eq(Expr::lit(Literal::Null));
    let plan = plan_table_read(
        &mysql,
        "d",
        "t",
        &TableReadOptions {
            filter: Some(residual),
            limit: Some(10),
            ..TableReadOptions::default()
        },
    )
    .await
    .unwrap();
    assert!(!plan.limit_pushed && plan.residual.is_some());
    assert!(!plan.tasks[0].contains("LIMIT"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filter_that_prunes_every_partition_reads_nothing_not_everything() {
    // Every partition holds rows; the filter's ranges exclude all three partitions, so
    // `_query_plan` lists no tablet. The read must be one zero-row task, not a scan
    // without tablets (which would return every row of the table).
    let ids: Vec<i64> = (0..3).chain(100..200).chain(1000..1010).collect();
    let (e, mysql, fe) = setup(&ids).await;
    let filter = Expr::col("id")
        .lt(Expr::lit(Literal::Int64(50)))
        .and(Expr::col("id").gt(Expr::lit(Literal::Int64(2000))));
    let (read, tasks) = read_all(
        &mysql,
        &TableReadOptions {
            filter: Some(filter),
            split: auto(&fe, 8),
            ..TableReadOptions::default()
        },
    )
    .await;
    assert_eq!(tasks, 1);
    assert!(read.is_empty(), "{} rows read", read.len());
    assert_eq!(e.mysql_rows_sent(), 0, "the server sent rows");
}
