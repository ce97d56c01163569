//! Server-side prepared statements on the FE MySQL face (docs/emulator.md), checked
//! with sqlx, whose `query()` always prepares on the server and reads binary rows.

// Test code: a failed unwrap is a failed test, with the value in the message.
#![allow(clippy::unwrap_used)]

use crate::common;

use doris_emulator::mysql::prepared::{POINT_QUERY_ONLY, PrepareProfile};
use doris_emulator::{DorisProfile, Emulator, EmulatorConfig};
use sqlx::mysql::MySqlConnection;
use sqlx::{Column, Connection, Row, TypeInfo};

const DDL: &str = "
CREATE DATABASE demo;
CREATE TABLE demo.t (
  `id` BIGINT NOT NULL,
  `small` SMALLINT NULL,
  `n` INT NULL,
  `name` VARCHAR(20) NULL,
  `f` DOUBLE NULL
) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 3;
";

async fn connect(config: EmulatorConfig) -> (Emulator, MySqlConnection) {
    let e = Emulator::start(config).await.unwrap();
    e.execute(None, DDL).unwrap();
    let url = format!("mysql://root@127.0.0.1:{}/demo", e.query_addr().port());
    let options = common::doris_safe_sqlx(&url);
    let mut conn = MySqlConnection::connect_with(&options).await.unwrap();
    sqlx::raw_sql(
        "INSERT INTO t VALUES (1, -3, 10, 'a''b', 0.5), (2, NULL, 20, NULL, -1.25), \
         (3, 300, -30, 'ccc', 1e10), (4, 4, 40, 'd', NULL)",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    (e, conn)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlx_prepares_binds_and_reads_binary_rows() {
    let (_e, mut conn) = connect(EmulatorConfig::default()).await;
    let rows =
        sqlx::query("SELECT id, small, n, name, f FROM t WHERE id >= ? AND n < ? ORDER BY id")
            .bind(2i64)
            .bind(40i32)
            .fetch_all(&mut conn)
            .await
            .unwrap();
    assert_eq!(rows.len(), 2);
    let types: Vec<&str> = rows[0]
        .columns()
        .iter()
        .map(|c| c.type_info().name())
        .collect();
    // The binary rows carry Doris's column types (VARCHAR travels as STRING).
    assert_eq!(
        [types[0], types[1], types[2], types[4]],
        ["BIGINT", "SMALLINT", "INT", "DOUBLE"]
    );
    assert_eq!(rows[0].get::<i64, _>(0), 2);
    assert_eq!(rows[0].get::<Option<i16>, _>(1), None);
    assert_eq!(rows[0].get::<i32, _>(2), 20);
    assert_eq!(rows[0].get::<Option<String>, _>(3), None);
    assert_eq!(rows[0].get::<f64, _>(4), -1.25);
    assert_eq!(rows[1].get::<i64, _>(0), 3);
    assert_eq!(rows[1].get::<i16, _>(1), 300);
    assert_eq!(rows[1].get::<i32, _>(2), -30);
    assert_eq!(rows[1].get::<String, _>(3), "ccc");
    assert_eq!(rows[1].get::<f64, _>(4), 1e10);

    // A string parameter with a quote in it is a value, not SQL; NULL matches nothing.
    let name: Option<i64> = sqlx::query_scalar("SELECT id FROM t WHERE name = ?")
        .bind("a'b")
        .fetch_optional(&mut conn)
        .await
        .unwrap();
    assert_eq!(name, Some(1));
    let none: Vec<i64> = sqlx::query_scalar("SELECT id FROM t WHERE n = ?")
        .bind(Option::<i32>::None)
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert!(none.is_empty());

    // The same prepared statement again with other values (sqlx caches the statement).
    for (id, n) in [(1i64, 10i32), (4, 40)] {
        let got: i32 = sqlx::query_scalar("SELECT n FROM t WHERE id = ?")
            .bind(id)
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(got, n);
    }

    // An INSERT prepared with parameters writes what was bound.
    sqlx::query("INSERT INTO t (id, n, name) VALUES (?, ?, ?)")
        .bind(9i64)
        .bind(90i32)
        .bind("back\\slash")
        .execute(&mut conn)
        .await
        .unwrap();
    let row = sqlx::query("SELECT n, name FROM t WHERE id = ?")
        .bind(9i64)
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(row.get::<i32, _>(0), 90);
    assert_eq!(row.get::<String, _>(1), "back\\slash");

    // The FE's own statements prepare too; their columns are strings.
    let comment: String = sqlx::query_scalar("SELECT @@version_comment")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert!(comment.starts_with("Doris version"), "{comment}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepare_errors_are_dorises() {
    let (_e, mut conn) = connect(EmulatorConfig::default()).await;
    // Analysis errors surface at prepare time.
    let err = sqlx::query("SELECT * FROM missing WHERE id = ?")
        .bind(1i64)
        .fetch_all(&mut conn)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("1105") && err.contains("errCode = 2"), "{err}");
    // A statement with neither parameters nor columns gets Doris's short PREPARE_OK, which
    // sqlx cannot read (docs/emulator.md, "FE MySQL face"), exactly as against a real FE.
    let err = sqlx::query("SET time_zone = '+00:00'")
        .execute(&mut conn)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("PrepareOk expected 12 bytes but got 10 bytes"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_point_query_profile_refuses_to_prepare() {
    let config = EmulatorConfig {
        profile: DorisProfile {
            prepare: PrepareProfile::PointQueryOnly,
            ..DorisProfile::default()
        },
        ..EmulatorConfig::default()
    };
    let (_e, mut conn) = connect(config).await;
    let err = sqlx::query("SELECT id FROM t WHERE id = ?")
        .bind(1i64)
        .fetch_all(&mut conn)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains(POINT_QUERY_ONLY), "{err}");
    // The text protocol still works on the same connection.
    let rows = sqlx::raw_sql("SELECT id FROM t WHERE id = 1")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
}
