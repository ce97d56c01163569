//! What the atomic write relies on (`doris_write::atomic`): labelled INSERTs that run
//! once, `SHOW TRANSACTION` by label, `INSERT OVERWRITE … WITH LABEL`, and explicit
//! transactions (`BEGIN WITH LABEL` … `COMMIT`) that make INSERTs into two tables of one
//! database visible together, refuse other statements without ending, and free their
//! label on `ROLLBACK`.

use doris_mysql::Session;

use crate::common::{count, with_table};
use doris_conformance::{Scratch, TABLE_PROPERTIES, Target};

/// A session on `db` and a second table `t2 (id BIGINT, n BIGINT)` beside `t`, with
/// three rows in `t`.
async fn setup(target: &Target, db: &Scratch) -> Session {
    target
        .execute(&format!(
            "/* fixture */ CREATE TABLE `{d}`.`t2` (`id` BIGINT NOT NULL, `n` BIGINT NULL) \
             DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1 {TABLE_PROPERTIES}",
            d = db.name
        ))
        .await;
    let mut session = Session::open(&target.mysql()).await.unwrap();
    session
        .execute(&format!(
            "/* fixture */ INSERT INTO `{}`.`t` (id, name) VALUES (1, 'a'), (2, 'b'), (3, 'c')",
            db.name
        ))
        .await
        .unwrap();
    session
}

/// `TransactionStatus` of `label` in `db` (`None`: Doris knows no transaction of the label,
/// which it answers with an error, `transaction with label <l> does not exist`).
async fn label_status(session: &mut Session, db: &str, label: &str) -> Option<String> {
    let rows = match session
        .query(&format!(
            "/* fixture */ SHOW TRANSACTION FROM `{db}` WHERE LABEL = '{label}'"
        ))
        .await
    {
        Ok(rows) => rows,
        Err(e)
            if e.to_string()
                .contains(&format!("transaction with label {label} does not exist")) =>
        {
            return None;
        }
        Err(other) => panic!("SHOW TRANSACTION: {other}"),
    };
    let at = rows
        .columns
        .iter()
        .position(|c| c.eq_ignore_ascii_case("TransactionStatus"))?;
    rows.rows.first().and_then(|r| r[at].clone())
}

async fn rows_of(target: &Target, db: &str, table: &str) -> u64 {
    target
        .scalar(&format!("SELECT COUNT(*) FROM `{db}`.`{table}`"))
        .await
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_labelled_insert_runs_once_and_show_transaction_finds_it_by_label() {
    let (target, db) = with_table().await;
    let mut session = setup(&target, &db).await;
    let label = format!("conf_ins_{}", &db.name[12..]);
    let insert = format!(
        "/* fixture */ INSERT INTO `{}`.`t2` WITH LABEL {label} (id, n) SELECT id, id FROM `{}`.`t`",
        db.name, db.name
    );
    assert_eq!(session.execute(&insert).await.unwrap(), 3);
    let again = session.execute(&insert).await.unwrap_err().to_string();
    assert!(again.contains("has already been used"), "{again}");
    assert_eq!(rows_of(&target, &db.name, "t2").await, 3);
    let status = label_status(&mut session, &db.name, &label).await;
    assert!(
        matches!(status.as_deref(), Some("VISIBLE" | "COMMITTED")),
        "{status:?}"
    );
    assert_eq!(
        label_status(&mut session, &db.name, "conf_never_used").await,
        None
    );
    target.drop_scratch(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_explicit_transaction_makes_two_tables_visible_together_under_its_label() {
    let (target, db) = with_table().await;
    let mut session = setup(&target, &db).await;
    let label = format!("conf_txn_{}", &db.name[12..]);
    let d = &db.name;
    session
        .execute(&format!("/* fixture */ BEGIN WITH LABEL {label}"))
        .await
        .unwrap();
    let first = session
        .execute(&format!(
            "/* fixture */ INSERT INTO `{d}`.`t` (id, name) SELECT id + 10, name FROM `{d}`.`t`"
        ))
        .await;
    if !target.transactions_take_insert_select().await {
        // Doris 2.1: INSERT … SELECT is refused inside the transaction, which goes on and
        // rolls back with nothing written (the atomic write refuses this release).
        assert!(first.is_err(), "2.1 runs INSERT … VALUES only inside BEGIN");
        session.execute("/* fixture */ ROLLBACK").await.unwrap();
        assert_eq!(count(&target, d).await, 3);
        assert_eq!(label_status(&mut session, d, &label).await, None);
        target.drop_scratch(db).await;
        return;
    }
    first.unwrap();
    // The second table's row is counted from the first table (an INSERT … SELECT … FROM:
    // constant rows would take Doris's other path, which cannot join this transaction).
    session
        .execute(&format!(
            "/* fixture */ INSERT INTO `{d}`.`t2` (id, n) SELECT 99, COUNT(*) FROM `{d}`.`t`"
        ))
        .await
        .unwrap();
    // Inside the transaction a query is refused, and the transaction goes on.
    let refused = session
        .query(&format!("/* fixture */ SELECT COUNT(*) FROM `{d}`.`t`"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("only insert, update, delete, commit, rollback"),
        "{refused}"
    );
    // Another session sees nothing yet.
    assert_eq!(count(&target, d).await, 3);
    assert_eq!(rows_of(&target, d, "t2").await, 0);
    session.execute("/* fixture */ COMMIT").await.unwrap();
    assert_eq!(count(&target, d).await, 6);
    assert_eq!(
        target
            .scalar(&format!("SELECT n FROM `{d}`.`t2` WHERE id = 99"))
            .await
            .as_deref(),
        Some("3"),
        "a statement reads what was committed before it"
    );
    let status = label_status(&mut session, d, &label).await;
    assert!(
        matches!(status.as_deref(), Some("VISIBLE" | "COMMITTED")),
        "{status:?}"
    );
    // The label is taken for good: the same transaction again is refused at its INSERT.
    session
        .execute(&format!("/* fixture */ BEGIN WITH LABEL {label}"))
        .await
        .unwrap();
    let used = session
        .execute(&format!(
            "/* fixture */ INSERT INTO `{d}`.`t2` (id, n) SELECT id, id FROM `{d}`.`t`"
        ))
        .await
        .unwrap_err()
        .to_string();
    assert!(used.contains("has already been used"), "{used}");
    session.execute("/* fixture */ ROLLBACK").await.unwrap();
    assert_eq!(rows_of(&target, d, "t2").await, 1);
    target.drop_scratch(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolled_back_transaction_changes_nothing_and_frees_its_label() {
    let (target, db) = with_table().await;
    let mut session = setup(&target, &db).await;
    let label = format!("conf_rb_{}", &db.name[12..]);
    let d = &db.name;
    let insert =
        format!("/* fixture */ INSERT INTO `{d}`.`t2` (id, n) SELECT id, id FROM `{d}`.`t`");
    if !target.transactions_take_insert_select().await {
        // Doris 2.1 (see above): the transaction is tried with constant rows instead.
        let values =
            format!("/* fixture */ INSERT INTO `{d}`.`t2` (id, n) VALUES (1, 1), (2, 2), (3, 3)");
        session
            .execute(&format!("/* fixture */ BEGIN WITH LABEL {label}"))
            .await
            .unwrap();
        session.execute(&values).await.unwrap();
        session.execute("/* fixture */ ROLLBACK").await.unwrap();
        assert_eq!(rows_of(&target, d, "t2").await, 0);
        session
            .execute(&format!("/* fixture */ BEGIN WITH LABEL {label}"))
            .await
            .unwrap();
        session.execute(&values).await.unwrap();
        session.execute("/* fixture */ COMMIT").await.unwrap();
        assert_eq!(rows_of(&target, d, "t2").await, 3);
        target.drop_scratch(db).await;
        return;
    }
    session
        .execute(&format!("/* fixture */ BEGIN WITH LABEL {label}"))
        .await
        .unwrap();
    session.execute(&insert).await.unwrap();
    session.execute("/* fixture */ ROLLBACK").await.unwrap();
    assert_eq!(rows_of(&target, d, "t2").await, 0);
    let status = label_status(&mut session, d, &label).await;
    assert!(
        !matches!(status.as_deref(), Some("VISIBLE" | "COMMITTED" | "PREPARE")),
        "{status:?}"
    );
    // The label is free again.
    session
        .execute(&format!("/* fixture */ BEGIN WITH LABEL {label}"))
        .await
        .unwrap();
    session.execute(&insert).await.unwrap();
    session.execute("/* fixture */ COMMIT").await.unwrap();
    assert_eq!(rows_of(&target, d, "t2").await, 3);
    target.drop_scratch(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_overwrite_with_a_label_replaces_the_table_and_takes_the_label() {
    let (target, db) = with_table().await;
    let mut session = setup(&target, &db).await;
    let label = format!("conf_ow_{}", &db.name[12..]);
    let d = &db.name;
    session
        .execute(&format!(
            "/* fixture */ INSERT INTO `{d}`.`t2` (id, n) VALUES (7, 7), (8, 8)"
        ))
        .await
        .unwrap();
    let overwrite = format!(
        "/* fixture */ INSERT OVERWRITE TABLE `{d}`.`t2` WITH LABEL {label} (id, n) SELECT id, id * 2 FROM `{d}`.`t`"
    );
    session.execute(&overwrite).await.unwrap();
    assert_eq!(rows_of(&target, d, "t2").await, 3);
    assert_eq!(
        target
            .scalar(&format!("SELECT SUM(n) FROM `{d}`.`t2`"))
            .await
            .as_deref(),
        Some("12")
    );
    let again = session.execute(&overwrite).await.unwrap_err().to_string();
    assert!(again.contains("has already been used"), "{again}");
    target.drop_scratch(db).await;
}
