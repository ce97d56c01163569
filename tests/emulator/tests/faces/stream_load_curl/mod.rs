//! Stream Load conformance, checked with `curl` (a client nobody here wrote) used exactly as
//! the Doris documentation shows it: `curl --location-trusted -u user:pw -H "label:…"
//! -H "Expect:100-continue" -T file http://fe:8030/api/db/tbl/_stream_load`.

// Test code: a failed unwrap is a failed test, with the value in the message.
#![allow(clippy::unwrap_used)]

use std::io::Write as _;
use std::path::PathBuf;
use std::process::Command;

use crate::common;
use std::sync::Arc;

use arrow::array::{Array, AsArray, Int32Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Int32Type, Int64Type, Schema};
use arrow::record_batch::RecordBatch;
use doris_emulator::{Emulator, EmulatorConfig};
use serde_json::Value;

const DDL: &str = "
CREATE DATABASE demo;
USE demo;
CREATE TABLE dup (
  `id` INT NOT NULL,
  `name` VARCHAR(20) NULL,
  `score` BIGINT NULL
) ENGINE=OLAP DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 4;
CREATE TABLE uniq (
  `k` INT NOT NULL,
  `v` VARCHAR(20) NULL,
  `seq` INT NULL
) UNIQUE KEY(`k`) DISTRIBUTED BY HASH(`k`) BUCKETS 2
PROPERTIES (\"enable_unique_key_merge_on_write\" = \"true\", \"function_column.sequence_col\" = \"seq\");
CREATE TABLE agg (
  `k` INT NOT NULL,
  `total` BIGINT SUM NULL,
  `hi` INT MAX NULL,
  `lo` INT MIN NULL,
  `last` VARCHAR(10) REPLACE NULL,
  `last_nn` VARCHAR(10) REPLACE_IF_NOT_NULL NULL
) AGGREGATE KEY(`k`) DISTRIBUTED BY HASH(`k`) BUCKETS 2;
CREATE TABLE parted (
  `dt` DATE NOT NULL,
  `v` INT NULL
) DUPLICATE KEY(`dt`)
PARTITION BY RANGE(`dt`)
(PARTITION p1 VALUES [(\"2024-01-01\"), (\"2024-02-01\")),
 PARTITION p2 VALUES [(\"2024-02-01\"), (\"2024-03-01\")))
DISTRIBUTED BY HASH(`dt`) BUCKETS 2;
CREATE TABLE nested (
  `k` INT NOT NULL,
  `tags` ARRAY<INT> NULL,
  `attrs` MAP<STRING, INT> NULL,
  `info` STRUCT<a:INT, b:VARCHAR(10)> NULL
) DUPLICATE KEY(`k`) DISTRIBUTED BY HASH(`k`) BUCKETS 1;
CREATE USER 'alice'@'%' IDENTIFIED BY 's3cret';
";

struct Harness {
    emulator: Emulator,
    dir: PathBuf,
}

async fn harness(name: &str) -> Harness {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    emulator.execute(None, DDL).unwrap();
    let dir = std::env::temp_dir().join(format!("doris-emulator-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    Harness { emulator, dir }
}

impl Harness {
    fn file(&self, name: &str, bytes: &[u8]) -> String {
        let path = self.dir.join(name);
        std::fs::File::create(&path)
            .unwrap()
            .write_all(bytes)
            .unwrap();
        path.to_string_lossy().into_owned()
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.emulator.fe_http_addr())
    }

    /// `curl --location-trusted` Stream Load; returns the parsed JSON and the raw body.
    fn stream_load(
        &self,
        table: &str,
        file: &str,
        headers: &[&str],
        user: &str,
    ) -> (Value, String) {
        let url = self.url(&format!("/api/demo/{table}/_stream_load"));
        let out = common::curl_stream_load(&url, file, user, headers);
        assert!(
            out.status.success(),
            "curl failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let body = String::from_utf8(out.stdout).unwrap();
        let json: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        (json, body)
    }

    fn rows(&self, table: &str) -> Vec<RecordBatch> {
        self.emulator
            .shared()
            .catalog
            .table("demo", table)
            .unwrap()
            .snapshot(None)
            .unwrap()
    }
}

/// The response's `Message` contains `needle` (the whole response is shown otherwise).
fn assert_message_contains(json: &Value, needle: &str) {
    let message = json["Message"].as_str().unwrap_or_default();
    assert!(message.contains(needle), "{json}");
}

fn row_count(batches: &[RecordBatch]) -> usize {
    batches.iter().map(RecordBatch::num_rows).sum()
}

mod formats;
mod key_models;
mod loads;
mod two_phase;
