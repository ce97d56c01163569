//! Every statement kind the emulator's MySQL face accepts, each followed by a statement that
//! observes its effect; and statement kinds Doris has that the emulator does not run, each
//! refused with Doris's error shape naming the kind. No statement is accepted as a no-op.
//!
//! The accepted kinds are those of `tests/emulator/src/ddl.rs` (`execute`) and the FE-local
//! statements of `tests/emulator/src/mysql/query.rs`; SELECT/INSERT and streaming jobs have
//! their own tests (`select.rs`, `crates/doris-read/tests/transports/streaming_jobs.rs`).

#![allow(clippy::unwrap_used)]

use crate::common;

use doris_emulator::{Emulator, EmulatorConfig};
use sqlx::Connection;
use sqlx::mysql::{MySqlConnection, MySqlDatabaseError};

async fn connect(e: &Emulator, user: &str, password: &str) -> Result<MySqlConnection, sqlx::Error> {
    MySqlConnection::connect_with(&common::doris_options(
        e.query_addr().port(),
        user,
        password,
    ))
    .await
}

/// Every cell of every row, tab-separated, rows joined by newlines.
async fn answer(conn: &mut MySqlConnection, sql: &str) -> Result<String, String> {
    let rows = sqlx::raw_sql(sql)
        .fetch_all(&mut *conn)
        .await
        .map_err(|e| e.to_string())?;
    Ok(common::text_rows(&rows, "NULL").join("\n"))
}

/// (kind, statement, observation, text the observation's answer holds — or, prefixed
/// with `!`, must not hold).
const ACCEPTED: &[(&str, &str, &str, &str)] = &[
    (
        "CREATE DATABASE",
        "CREATE DATABASE k",
        "SHOW DATABASES",
        "k",
    ),
    (
        "CREATE DATABASE IF NOT EXISTS",
        "CREATE DATABASE IF NOT EXISTS k2",
        "SHOW DATABASES",
        "k2",
    ),
    ("USE", "USE k", "SELECT DATABASE()", "k"),
    (
        "CREATE TABLE",
        "CREATE TABLE t (`a` INT NOT NULL, `b` VARCHAR(8) NULL) DUPLICATE KEY(`a`) DISTRIBUTED BY HASH(`a`) BUCKETS 2",
        "SHOW TABLES",
        "t",
    ),
    (
        "CREATE TABLE IF NOT EXISTS",
        "CREATE TABLE IF NOT EXISTS t (`x` INT NOT NULL) DUPLICATE KEY(`x`) DISTRIBUTED BY HASH(`x`) BUCKETS 1",
        "DESC t",
        "!x",
    ),
    (
        "CREATE TABLE LIKE",
        "CREATE TABLE t2 LIKE t",
        "DESC t2",
        "varchar(8)",
    ),
    (
        "INSERT",
        "INSERT INTO t VALUES (1, 'a'), (2, 'b')",
        "SELECT count(*) FROM t",
        "2",
    ),
    (
        "INSERT OVERWRITE",
        "INSERT OVERWRITE TABLE t SELECT 9, 'z'",
        "SELECT `a` FROM t",
        "9",
    ),
    (
        "INSERT (more rows)",
        "INSERT INTO t VALUES (1, 'a'), (2, NULL), (3, 'c')",
        "SELECT count(*) FROM t",
        "4",
    ),
    (
        "DELETE … WHERE",
        "DELETE FROM t WHERE `a` >= 2 AND `b` = 'c'",
        "SELECT count(*) FROM t",
        "3",
    ),
    (
        "DELETE … WHERE (NULL rows kept)",
        "DELETE FROM t WHERE `b` = 'zzz'",
        "SELECT count(*) FROM t WHERE `b` IS NULL",
        "1",
    ),
    (
        "TRUNCATE TABLE",
        "TRUNCATE TABLE t",
        "SELECT count(*) FROM t",
        "0",
    ),
    ("DROP TABLE", "DROP TABLE t2", "SHOW TABLES", "!t2"),
    (
        "DROP TABLE IF EXISTS",
        "DROP TABLE IF EXISTS t",
        "SHOW TABLES",
        "!t",
    ),
    (
        "SET time_zone",
        "SET time_zone = '+08:00'",
        "SELECT @@time_zone",
        "+08:00",
    ),
    (
        "SET enable_insert_strict",
        "SET enable_insert_strict = false",
        "SELECT @@enable_insert_strict",
        "false",
    ),
    (
        "SET insert_max_filter_ratio",
        "SET insert_max_filter_ratio = 0.25",
        "SELECT @@insert_max_filter_ratio",
        "0.25",
    ),
    (
        "SET enable_unique_key_partial_update",
        "SET enable_unique_key_partial_update = true",
        "SELECT @@enable_unique_key_partial_update",
        "true",
    ),
    (
        "SET sql_mode",
        "SET sql_mode = 'ANSI_QUOTES'",
        "SELECT @@sql_mode",
        "ANSI_QUOTES",
    ),
    (
        "CREATE USER",
        "CREATE USER 'ku' IDENTIFIED BY 'kp'",
        "SHOW DATABASES",
        "k",
    ),
    ("DROP DATABASE", "DROP DATABASE k2", "SHOW DATABASES", "!k2"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_accepted_statement_kind_has_an_effect_a_later_statement_sees() {
    let e = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let mut conn = connect(&e, "root", "").await.unwrap();
    for (kind, statement, observe, expect) in ACCEPTED {
        answer(&mut conn, statement)
            .await
            .unwrap_or_else(|err| panic!("{kind}: {statement}: {err}"));
        let seen = answer(&mut conn, observe).await.unwrap();
        let lines: Vec<&str> = seen.lines().flat_map(|l| l.split('\t')).collect();
        match expect.strip_prefix('!') {
            Some(absent) => assert!(
                !lines.contains(&absent),
                "{kind}: {observe} still shows {absent}: {seen}"
            ),
            None => assert!(
                lines.iter().any(|cell| cell.contains(expect)),
                "{kind}: {observe} does not show {expect}: {seen}"
            ),
        }
    }
    // Users, grants and revokes are seen by the user they name.
    assert!(connect(&e, "ku", "kp").await.is_ok(), "CREATE USER");
    answer(
        &mut conn,
        "CREATE TABLE k.g (`a` INT NOT NULL) DUPLICATE KEY(`a`) DISTRIBUTED BY HASH(`a`) BUCKETS 1",
    )
    .await
    .unwrap();
    let mut ku = connect(&e, "ku", "kp").await.unwrap();
    assert!(
        answer(&mut ku, "SELECT * FROM k.g").await.is_err(),
        "no grant yet"
    );
    answer(&mut conn, "GRANT SELECT_PRIV ON k.* TO 'ku'@'%'")
        .await
        .unwrap();
    assert!(answer(&mut ku, "SELECT * FROM k.g").await.is_ok(), "GRANT");
    answer(&mut conn, "REVOKE SELECT_PRIV ON k.* FROM 'ku'@'%'")
        .await
        .unwrap();
    assert!(
        answer(&mut ku, "SELECT * FROM k.g").await.is_err(),
        "REVOKE"
    );
    answer(&mut conn, "DROP USER 'ku'@'%'").await.unwrap();
    assert!(connect(&e, "ku", "kp").await.is_err(), "DROP USER");
    // A second DROP is an error unless IF EXISTS.
    assert!(answer(&mut conn, "DROP USER ku").await.is_err());
    assert!(answer(&mut conn, "DROP USER IF EXISTS ku").await.is_ok());
    // SET of a variable Doris does not know is Doris's 1193, not a silent no-op.
    let unknown = sqlx::raw_sql("SET no_such_variable = 1")
        .execute(&mut conn)
        .await
        .unwrap_err();
    let db = unknown.as_database_error().unwrap();
    assert_eq!(
        db.try_downcast_ref::<MySqlDatabaseError>()
            .unwrap()
            .number(),
        1193
    );
}

/// Statements Doris runs that the emulator does not, and the kind each refusal names.
const REFUSED: &[(&str, &str)] = &[
    ("ALTER TABLE k.t ADD COLUMN c INT", "ALTER TABLE"),
    ("CREATE VIEW k.v AS SELECT 1", "CREATE VIEW"),
    ("CREATE ROLE r1", "CREATE ROLE"),
    ("DROP ROLE IF EXISTS r1", "DROP ROLE"),
    ("SHOW GRANTS FOR root", "SHOW GRANTS"),
    ("UPDATE k.t SET b = 'x' WHERE a = 1", "UPDATE"),
    ("GRANT 'r1' TO root", "GRANT of roles"),
    ("GRANT GRANT_PRIV ON *.* TO root", "GRANT_PRIV"),
    ("CREATE USER 'h'@'10.0.0.1' IDENTIFIED BY 'p'", "host"),
    (
        "CREATE USER 'd' IDENTIFIED BY 'p' DEFAULT ROLE 'admin'",
        "DEFAULT ROLE",
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statement_kinds_the_emulator_does_not_run_are_refused_in_dorises_shape() {
    let e = Emulator::start(EmulatorConfig::default()).await.unwrap();
    e.execute(
        None,
        "CREATE DATABASE k; CREATE TABLE k.t (`a` INT NOT NULL, `b` VARCHAR(8) NULL) \
         DUPLICATE KEY(`a`) DISTRIBUTED BY HASH(`a`) BUCKETS 1",
    )
    .unwrap();
    let mut conn = connect(&e, "root", "").await.unwrap();
    for (statement, kind) in REFUSED {
        let err = sqlx::raw_sql(statement)
            .execute(&mut conn)
            .await
            .unwrap_err();
        let db = err
            .as_database_error()
            .unwrap_or_else(|| panic!("{statement}: {err}"));
        let number = db
            .try_downcast_ref::<MySqlDatabaseError>()
            .unwrap()
            .number();
        let message = db.message();
        assert_eq!(number, 1105, "{statement}: {message}");
        assert!(
            message.starts_with("errCode = 2, detailMessage = ")
                && message.contains("does not run")
                && message.contains(kind),
            "{statement}: {message}"
        );
    }
    // Nothing changed: the table is as it was.
    assert_eq!(
        answer(&mut conn, "SELECT count(*) FROM k.t").await.unwrap(),
        "0"
    );
    let desc = answer(&mut conn, "DESC k.t").await.unwrap();
    assert!(!desc.contains("\nc\t"), "{desc}");
}
