//! doris-streamload's `atomic_write` example (a Rust service's exactly-once load, no
//! Python) against the Doris emulator: a rerun with the same key writes nothing, a new key
//! a second copy, a lost answer to the publishing INSERT is settled by the label.
#![allow(clippy::unwrap_used)]

#[allow(dead_code)]
#[path = "../../../crates/doris-streamload/examples/atomic_write.rs"]
mod example;

use doris_emulator::faults::Fault;
use doris_emulator::{Emulator, EmulatorConfig};

fn ids(e: &Emulator) -> Vec<i64> {
    use arrow::array::AsArray;
    let t = e.shared().catalog.table("demo", "events").unwrap();
    let mut out: Vec<i64> = t
        .snapshot(None)
        .unwrap()
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_primitive::<arrow::datatypes::Int64Type>()
                .values()
                .to_vec()
        })
        .collect();
    out.sort_unstable();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rust_service_writes_exactly_once_per_key() {
    let e = Emulator::start(EmulatorConfig::default()).await.unwrap();
    e.execute(
        None,
        "CREATE DATABASE demo; CREATE TABLE demo.events (`id` BIGINT NOT NULL, `name` VARCHAR(32) NULL) \
         UNIQUE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2 \
         PROPERTIES (\"enable_unique_key_merge_on_write\" = \"true\")",
    )
    .unwrap();
    let fe = format!("http://{}", e.fe_http_addr());
    let target = example::Target {
        fe_http: &fe,
        mysql: ("127.0.0.1", e.query_addr().port()),
        user: "root",
        database: "demo",
        table: "events",
    };
    assert!(
        example::run(&target, "k1", vec![example::sample(0, 300)])
            .await
            .unwrap()
    );
    // The same key again, other rows even: Daft's contract, a no-op.
    assert!(
        !example::run(&target, "k1", vec![example::sample(0, 300)])
            .await
            .unwrap()
    );
    assert_eq!(ids(&e), (0..300).collect::<Vec<_>>());
    // The publishing INSERT commits but its answer is lost: the label says it committed.
    e.faults().arm(Fault::DropAfterInsertCommit, 1);
    assert!(
        example::run(&target, "k2", vec![example::sample(300, 100)])
            .await
            .unwrap()
    );
    assert_eq!(e.faults().fired().len(), 1);
    assert!(
        !example::run(&target, "k2", vec![example::sample(300, 100)])
            .await
            .unwrap()
    );
    assert_eq!(ids(&e), (0..400).collect::<Vec<_>>());
    // No staging table is left.
    let tables = e.shared().catalog.table_names("demo").unwrap();
    assert_eq!(tables, vec!["events".to_owned()]);
}
