//! The FE `_query_plan` and `_schema` endpoints, called with `curl` as the Spark and Flink
//! connectors (and daft-doris's planner) call them.

// Test code: a failed unwrap is a failed test, with the value in the message.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::process::Command;

use doris_emulator::{Emulator, EmulatorConfig};
use serde_json::Value;

const DDL: &str = "
CREATE DATABASE demo;
CREATE TABLE demo.events (
  `dt` DATE NOT NULL,
  `id` BIGINT NOT NULL,
  `amount` DECIMAL(10, 2) NULL,
  `ts` DATETIME(6) NULL
) DUPLICATE KEY(`dt`, `id`)
PARTITION BY RANGE(`dt`)
(PARTITION p1 VALUES [(\"2024-01-01\"), (\"2024-02-01\")),
 PARTITION p2 VALUES [(\"2024-02-01\"), (\"2024-03-01\")),
 PARTITION p3 VALUES [(\"2024-03-01\"), (\"2024-04-01\")))
DISTRIBUTED BY HASH(`id`) BUCKETS 3;
CREATE TABLE demo.cities (`city` VARCHAR(10) NOT NULL, `n` INT NULL)
DUPLICATE KEY(`city`)
PARTITION BY LIST(`city`) (PARTITION p_n VALUES IN (\"oslo\", \"bergen\"), PARTITION p_s VALUES IN (\"rome\"))
DISTRIBUTED BY HASH(`city`) BUCKETS 2;
";

fn plan(e: &Emulator, table: &str, body: &str, user: &str) -> Value {
    let out = Command::new("curl")
        .args([
            "-sS",
            "-u",
            user,
            "-H",
            "Content-Type: application/json",
            "-X",
            "POST",
            "-d",
            body,
        ])
        .arg(format!(
            "http://{}/api/demo/{table}/_query_plan",
            e.fe_http_addr()
        ))
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|err| panic!("{err}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn tablets(v: &Value) -> BTreeSet<u64> {
    v["data"]["partitions"]
        .as_object()
        .unwrap_or_else(|| panic!("no partitions in {v}"))
        .keys()
        .map(|k| k.parse().unwrap())
        .collect()
}

fn sql(s: &str) -> String {
    serde_json::json!({ "sql": s }).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_list_the_tablets_and_prune_partitions() {
    let e = Emulator::start(EmulatorConfig::default()).await.unwrap();
    e.execute(None, DDL).unwrap();
    let table = e.shared().catalog.table("demo", "events").unwrap();
    let ids = |partitions: &[usize]| -> BTreeSet<u64> {
        table
            .tablets
            .iter()
            .filter(|t| partitions.contains(&t.partition))
            .map(|t| t.id)
            .collect()
    };

    let all = plan(
        &e,
        "events",
        &sql("SELECT `id`, `amount` FROM `demo`.`events`"),
        "root:",
    );
    assert_eq!(
        (all["code"].as_i64(), all["msg"].as_str()),
        (Some(0), Some("success"))
    );
    assert_eq!(all["data"]["status"], 200);
    assert_eq!(tablets(&all), ids(&[0, 1, 2]));
    assert_eq!(tablets(&all).len(), 9, "3 partitions x 3 buckets");
    let first = all["data"]["partitions"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()
        .clone();
    assert_eq!(first["routings"], serde_json::json!(["127.0.0.1:9060"]));
    assert_eq!(first["schemaHash"], 0);
    assert_eq!(first["version"], 1);
    assert!(
        all["data"]["opaqued_query_plan"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );

    let cases = [
        (
            "SELECT id FROM demo.events WHERE dt >= '2024-02-01'",
            vec![1, 2],
        ),
        (
            "SELECT id FROM demo.events WHERE dt < '2024-02-01' AND id > 3",
            vec![0],
        ),
        (
            "SELECT id FROM demo.events WHERE `dt` = '2024-02-29'",
            vec![1],
        ),
        (
            "SELECT id FROM demo.events WHERE dt IN ('2024-01-05', '2024-03-09')",
            vec![0, 2],
        ),
        (
            "SELECT id FROM demo.events WHERE dt BETWEEN '2024-02-10' AND '2024-03-10'",
            vec![1, 2],
        ),
        (
            "SELECT id FROM demo.events WHERE dt <= '2024-02-01'",
            vec![0, 1],
        ),
        ("SELECT id FROM demo.events WHERE dt = '2025-01-01'", vec![]),
        // Not provable from the first partition column: nothing is pruned.
        (
            "SELECT id FROM demo.events WHERE dt >= '2024-02-01' OR id = 1",
            vec![0, 1, 2],
        ),
        ("SELECT * FROM events WHERE amount > 3", vec![0, 1, 2]),
        // A WHERE that folds to false plans no scan: no tablet at all.
        ("SELECT id FROM demo.events WHERE 1 = 0", vec![]),
        ("SELECT id FROM demo.events WHERE FALSE", vec![]),
        (
            "SELECT id FROM demo.events WHERE id > 3 AND (1 = 2 OR 'a' > 'b')",
            vec![],
        ),
        ("SELECT id FROM demo.events WHERE NOT TRUE", vec![]),
        // Constant true prunes nothing; a non-constant OR keeps everything.
        ("SELECT id FROM demo.events WHERE 1 = 1", vec![0, 1, 2]),
        (
            "SELECT id FROM demo.events WHERE 1 = 0 OR id = 3",
            vec![0, 1, 2],
        ),
    ];
    for (q, partitions) in cases {
        assert_eq!(
            tablets(&plan(&e, "events", &sql(q), "root:")),
            ids(&partitions),
            "{q}"
        );
    }
    let cities = e.shared().catalog.table("demo", "cities").unwrap();
    let south: BTreeSet<u64> = cities
        .tablets
        .iter()
        .filter(|t| t.partition == 1)
        .map(|t| t.id)
        .collect();
    assert_eq!(
        tablets(&plan(
            &e,
            "cities",
            &sql("SELECT n FROM demo.cities WHERE city = 'rome'"),
            "root:"
        )),
        south
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_errors_use_dorises_envelopes() {
    let e = Emulator::start(EmulatorConfig::default()).await.unwrap();
    e.execute(None, DDL).unwrap();
    let denied = plan(&e, "events", &sql("SELECT id FROM demo.events"), "root:bad");
    assert_eq!(
        (denied["code"].as_i64(), denied["msg"].as_str()),
        (Some(401), Some("Unauthorized"))
    );
    let empty = plan(&e, "events", "{}", "root:");
    assert_eq!(empty["code"], 403);
    assert_eq!(empty["data"], "POST body must contains [sql] root object");
    let malformed = plan(&e, "events", "{not json", "root:");
    assert_eq!(malformed["code"], 403);
    assert!(
        malformed["data"]
            .as_str()
            .unwrap()
            .starts_with("malformed json: ")
    );
    let missing = plan(&e, "nope", &sql("SELECT id FROM demo.nope"), "root:");
    assert_eq!(
        (missing["code"].as_i64(), missing["msg"].as_str()),
        (Some(1), Some("Error"))
    );
    let rejected = |q: &str| {
        let v = plan(&e, "events", &sql(q), "root:");
        assert_eq!(v["code"], 0, "{v}");
        assert_eq!(v["data"]["status"], 400, "{v}");
        v["data"]["exception"].as_str().unwrap().to_owned()
    };
    for q in [
        "SELECT id FROM demo.events ORDER BY id",
        "SELECT id FROM demo.events LIMIT 3",
        "SELECT dt, count(*) FROM demo.events GROUP BY dt",
        "SELECT count(*) FROM demo.events",
    ] {
        assert!(
            rejected(q).starts_with("only support single table filter-prune-scan, but found [ "),
            "{q}"
        );
    }
    assert_eq!(
        rejected("SHOW TABLES"),
        "Select statement needed, but found [SHOW TABLES ]"
    );
    assert_eq!(
        rejected("SELECT id FROM demo.cities"),
        "requested database and table must consistent with sql: request [ demo.events]and sql [demo.cities]"
    );
    assert_eq!(
        rejected("SELECT id FROM demo.events, demo.cities"),
        "Select statement must have only one table"
    );
    assert!(rejected("SELECT nope FROM demo.events").contains("Unknown column 'nope'"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_endpoint_uses_internal_type_names() {
    let e = Emulator::start(EmulatorConfig::default()).await.unwrap();
    e.execute(None, DDL).unwrap();
    let out = Command::new("curl")
        .args(["-sS", "-u", "root:"])
        .arg(format!(
            "http://{}/api/demo/events/_schema",
            e.fe_http_addr()
        ))
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["data"]["status"], 200);
    assert_eq!(v["data"]["keysType"], "DUP_KEYS");
    let props = v["data"]["properties"].as_array().unwrap();
    let types: Vec<&str> = props.iter().map(|p| p["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["DATEV2", "BIGINT", "DECIMAL64", "DATETIMEV2"]);
    assert_eq!(
        (props[2]["precision"].as_u64(), props[2]["scale"].as_u64()),
        (Some(10), Some(2))
    );
    assert_eq!(props[3]["scale"], 6);
}
