//! Explicit transactions (`BEGIN [WITH LABEL]` … `COMMIT` / `ROLLBACK`) as Doris 2.1+ runs
//! them (regression suite `insert_p0/transaction/txn_insert.groovy`, docs "Transaction"),
//! driven by the `mariadb` client and sqlx.

use doris_emulator::Emulator;
use sqlx::mysql::MySqlConnection;
use sqlx::{Connection, Row};

const TABLES: &str = "
CREATE DATABASE tx;
CREATE DATABASE tx2;
CREATE TABLE tx.src (`k` INT NOT NULL, `v` VARCHAR(10) NULL) DUPLICATE KEY(`k`) DISTRIBUTED BY HASH(`k`) BUCKETS 1;
CREATE TABLE tx.a (`k` INT NOT NULL, `v` VARCHAR(10) NULL) DUPLICATE KEY(`k`) DISTRIBUTED BY HASH(`k`) BUCKETS 2;
CREATE TABLE tx.b (`k` INT NOT NULL, `n` BIGINT NULL) DUPLICATE KEY(`k`) DISTRIBUTED BY HASH(`k`) BUCKETS 1;
CREATE TABLE tx2.c (`k` INT NOT NULL) DUPLICATE KEY(`k`) DISTRIBUTED BY HASH(`k`) BUCKETS 1;
";

async fn emulator() -> Emulator {
    let e = super::emulator().await;
    e.execute(None, TABLES).unwrap();
    let mut conn = connect(&e).await;
    sqlx::raw_sql("INSERT INTO tx.src VALUES (1, 'one'), (2, 'two'), (3, 'three')")
        .execute(&mut conn)
        .await
        .unwrap();
    e
}

async fn connect(e: &Emulator) -> MySqlConnection {
    MySqlConnection::connect_with(&super::common::doris_options(
        e.query_addr().port(),
        "root",
        "",
    ))
    .await
    .unwrap()
}

async fn count(conn: &mut MySqlConnection, table: &str) -> i64 {
    sqlx::raw_sql(&format!("SELECT COUNT(*) FROM {table}"))
        .fetch_one(&mut *conn)
        .await
        .unwrap()
        .try_get_unchecked::<i64, _>(0)
        .unwrap()
}

/// `TransactionStatus` of `label`; `None` for a label Doris does not know, which it
/// answers with an error (`transaction with label <l> does not exist`).
async fn label_status(conn: &mut MySqlConnection, label: &str) -> Option<String> {
    let rows = match sqlx::raw_sql(&format!("SHOW TRANSACTION FROM tx WHERE LABEL = '{label}'"))
        .fetch_all(&mut *conn)
        .await
    {
        Ok(rows) => rows,
        Err(e) if e.to_string().contains("does not exist") => return None,
        Err(e) => panic!("SHOW TRANSACTION: {e}"),
    };
    rows.first().map(|r| {
        r.try_get_unchecked::<String, _>("TransactionStatus")
            .unwrap()
    })
}

async fn run(conn: &mut MySqlConnection, sql: &str) -> Result<u64, String> {
    sqlx::raw_sql(sql)
        .execute(&mut *conn)
        .await
        .map(|r| r.rows_affected())
        .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_makes_every_table_visible_together_at_commit() {
    let e = emulator().await;
    let mut writer = connect(&e).await;
    let mut reader = connect(&e).await;
    run(&mut writer, "BEGIN WITH LABEL txn_1").await.unwrap();
    assert_eq!(
        run(&mut writer, "INSERT INTO tx.a SELECT k, v FROM tx.src").await,
        Ok(3)
    );
    assert_eq!(
        run(
            &mut writer,
            "INSERT INTO tx.b (k, n) SELECT k, COUNT(*) FROM tx.src GROUP BY k"
        )
        .await,
        Ok(3)
    );
    // The same table twice; a statement does not see the transaction's own rows.
    assert_eq!(
        run(&mut writer, "INSERT INTO tx.a SELECT k, v FROM tx.a").await,
        Ok(0)
    );
    assert_eq!(
        run(
            &mut writer,
            "INSERT INTO tx.a SELECT k + 10, v FROM tx.src WHERE k = 1"
        )
        .await,
        Ok(1)
    );
    assert_eq!(
        (
            count(&mut reader, "tx.a").await,
            count(&mut reader, "tx.b").await
        ),
        (0, 0)
    );
    assert_eq!(
        label_status(&mut reader, "txn_1").await.as_deref(),
        Some("PREPARE")
    );
    run(&mut writer, "COMMIT").await.unwrap();
    assert_eq!(
        (
            count(&mut reader, "tx.a").await,
            count(&mut reader, "tx.b").await
        ),
        (4, 3)
    );
    assert_eq!(
        label_status(&mut reader, "txn_1").await.as_deref(),
        Some("VISIBLE")
    );
    // The label is taken: a later INSERT or transaction under it is refused.
    let used = run(
        &mut writer,
        "INSERT INTO tx.b WITH LABEL txn_1 VALUES (9, 9)",
    )
    .await;
    assert!(
        used.unwrap_err()
            .contains("Label [txn_1] has already been used")
    );
    run(&mut writer, "BEGIN WITH LABEL txn_1").await.unwrap();
    let used = run(&mut writer, "INSERT INTO tx.b SELECT k, 1 FROM tx.src").await;
    assert!(
        used.unwrap_err().contains("has already been used"),
        "begin checks the label"
    );
    // Nothing began: COMMIT commits nothing.
    run(&mut writer, "COMMIT").await.unwrap();
    assert_eq!(count(&mut reader, "tx.b").await, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_dml_runs_inside_a_transaction_and_a_refused_statement_does_not_end_it() {
    let e = emulator().await;
    let mut conn = connect(&e).await;
    run(&mut conn, "BEGIN WITH LABEL txn_2").await.unwrap();
    run(
        &mut conn,
        "INSERT INTO tx.a SELECT k, v FROM tx.src WHERE k = 1",
    )
    .await
    .unwrap();
    let refusals = [
        (
            "SELECT * FROM tx.a",
            "only insert, update, delete, commit, rollback is acceptable",
        ),
        (
            "SHOW TABLES FROM tx",
            "only insert, update, delete, commit, rollback is acceptable",
        ),
        (
            "INSERT OVERWRITE TABLE tx.a SELECT k, v FROM tx.src",
            "only insert, update, delete, commit, rollback is acceptable",
        ),
        (
            "INSERT INTO tx.b VALUES (1, 1)",
            "can not insert into values and insert into select at the same time",
        ),
        (
            "INSERT INTO tx.b WITH LABEL other_label SELECT k, 1 FROM tx.src",
            "Transaction insert expect label txn_2, but got other_label",
        ),
        (
            "INSERT INTO tx2.c SELECT k FROM tx.src",
            "must be in the same database, expect db_id=",
        ),
        (
            "INSERT INTO tx.b SELECT k FROM tx.src",
            "Column count doesn't match",
        ),
    ];
    for (sql, text) in refusals {
        let err = run(&mut conn, sql).await.unwrap_err();
        assert!(err.contains(text), "{sql}: {err}");
    }
    // The same label in the INSERT is accepted; a second BEGIN is ignored.
    run(
        &mut conn,
        "INSERT INTO tx.b WITH LABEL txn_2 SELECT k, 2 FROM tx.src",
    )
    .await
    .unwrap();
    run(&mut conn, "BEGIN").await.unwrap();
    run(&mut conn, "COMMIT").await.unwrap();
    assert_eq!(
        (
            count(&mut conn, "tx.a").await,
            count(&mut conn, "tx.b").await
        ),
        (1, 3)
    );
    assert_eq!(count(&mut conn, "tx2.c").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollback_and_a_closed_session_undo_everything_and_free_the_label() {
    let e = emulator().await;
    let mut conn = connect(&e).await;
    run(&mut conn, "BEGIN WITH LABEL txn_3").await.unwrap();
    run(&mut conn, "INSERT INTO tx.a SELECT k, v FROM tx.src")
        .await
        .unwrap();
    run(&mut conn, "ROLLBACK").await.unwrap();
    assert_eq!(count(&mut conn, "tx.a").await, 0);
    assert_eq!(
        label_status(&mut conn, "txn_3").await,
        None,
        "an aborted label is free"
    );
    // A session that ends inside a transaction rolls it back.
    let mut lost = connect(&e).await;
    run(&mut lost, "BEGIN WITH LABEL txn_3").await.unwrap();
    run(&mut lost, "INSERT INTO tx.a SELECT k, v FROM tx.src")
        .await
        .unwrap();
    drop(lost);
    for _ in 0..100 {
        if label_status(&mut conn, "txn_3").await.is_none() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(label_status(&mut conn, "txn_3").await, None);
    assert_eq!(count(&mut conn, "tx.a").await, 0);
    // Constant rows take Doris's batch path: one table per transaction.
    run(&mut conn, "BEGIN WITH LABEL txn_4").await.unwrap();
    run(&mut conn, "INSERT INTO tx.a VALUES (7, 'x')")
        .await
        .unwrap();
    run(&mut conn, "INSERT INTO tx.a SELECT 8, 'y'")
        .await
        .unwrap();
    let err = run(&mut conn, "INSERT INTO tx.b VALUES (1, 1)")
        .await
        .unwrap_err();
    assert!(
        err.contains("Only one table can be inserted in one transaction"),
        "{err}"
    );
    run(&mut conn, "COMMIT").await.unwrap();
    assert_eq!(count(&mut conn, "tx.a").await, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mariadb_client_runs_a_transaction_script() {
    let e = emulator().await;
    let (out, err) = super::mariadb(
        &e,
        "root",
        "",
        "BEGIN WITH LABEL cli_1; INSERT INTO tx.a SELECT k, v FROM tx.src; \
         INSERT INTO tx.b SELECT k, k * 10 FROM tx.src; COMMIT; \
         SELECT COUNT(*) AS a_rows FROM tx.a; SELECT SUM(n) AS b_sum FROM tx.b; \
         SHOW TRANSACTION FROM tx WHERE LABEL = 'cli_1'",
    );
    assert!(err.is_empty(), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(&lines[..4], ["a_rows", "3", "b_sum", "60"], "{out}");
    assert!(
        lines[5].contains("cli_1") && lines[5].contains("VISIBLE"),
        "{out}"
    );
}
