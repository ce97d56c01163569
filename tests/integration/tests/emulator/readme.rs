//! The README's Rust example, verbatim from `crates/doris-streamload/examples/quick_start.rs`,
//! run against the Doris emulator: the first run loads the rows, a rerun loads nothing.
#![allow(clippy::unwrap_used)]

#[allow(dead_code)]
#[path = "../../../../crates/doris-streamload/examples/quick_start.rs"]
mod example;

use doris_emulator::{Emulator, EmulatorConfig};
use doris_streamload::LoadStatus;

const README: &str = include_str!("../../../../README.md");
const EXAMPLE: &str = include_str!("../../../../crates/doris-streamload/examples/quick_start.rs");

#[test]
fn the_readme_shows_the_example_verbatim() {
    let shown = EXAMPLE
        .split_once("// README: begin\n")
        .and_then(|(_, rest)| rest.split_once("// README: end\n"))
        .map(|(region, _)| region)
        .expect("the example marks the region the README shows");
    let block = README
        .split_once("```rust\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(block, _)| block)
        .expect("the README has a Rust example");
    assert_eq!(
        block.trim(),
        shown.trim(),
        "README.md's Rust example differs from examples/quick_start.rs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_example_loads_once_however_often_it_runs() {
    let e = Emulator::start(EmulatorConfig::default()).await.unwrap();
    e.execute(
        None,
        "CREATE DATABASE demo; CREATE TABLE demo.events (`id` BIGINT NOT NULL, \
         `name` VARCHAR(8) NULL) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1;",
    )
    .unwrap();
    let port = e.fe_http_addr().port();
    let first = example::load_events(example::sample(), port).await.unwrap();
    assert_eq!((first.status, first.rows), (LoadStatus::Success, 3));
    let again = example::load_events(example::sample(), port).await.unwrap();
    assert_eq!(again.status, LoadStatus::AlreadyLoaded);
    let rows: usize = e
        .shared()
        .catalog
        .table("demo", "events")
        .unwrap()
        .snapshot(None)
        .unwrap()
        .iter()
        .map(|b| b.num_rows())
        .sum();
    assert_eq!(rows, 3, "the rows once");
}
