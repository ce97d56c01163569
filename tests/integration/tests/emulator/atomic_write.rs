//! doris-streamload's `atomic_write` example (a Rust service's exactly-once load, no
//! Python) against the Doris emulator: a rerun with the same key writes nothing, also after
//! Doris forgot the key's label; a COMMIT whose answer is lost, held or dropped before it
//! commits is settled by the key's state, never written twice.
#![allow(clippy::unwrap_used)]

#[allow(dead_code)]
#[path = "../../../../crates/doris-write/examples/atomic_write.rs"]
mod example;

use doris_emulator::faults::Fault;
use doris_emulator::txn::Retention;
use doris_emulator::{Emulator, EmulatorConfig};
use doris_write::atomic::CommittedBy;
use example::Outcome;

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

/// Whether Doris (the emulator) still knows `label` in database `demo`.
fn label_known(e: &Emulator, label: &str) -> bool {
    e.shared()
        .txns
        .list("demo")
        .iter()
        .any(|(_, _, l, _)| l == label)
}

async fn emulator(label_num_threshold: usize) -> Emulator {
    let e = Emulator::start(EmulatorConfig {
        retention: Retention {
            label_num_threshold,
            ..Retention::default()
        },
        ..EmulatorConfig::default()
    })
    .await
    .unwrap();
    e.execute(
        None,
        "CREATE DATABASE demo; CREATE TABLE demo.events (`id` BIGINT NOT NULL, `name` VARCHAR(32) NULL) \
         DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2; \
         CREATE TABLE demo.other (`id` BIGINT NOT NULL) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1",
    )
    .unwrap();
    e
}

fn target<'a>(e: &Emulator, fe: &'a str) -> example::Target<'a> {
    example::Target {
        fe_http: fe,
        mysql: ("127.0.0.1", e.query_addr().port()),
        user: "root",
        database: "demo",
        table: "events",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rerun_writes_nothing_also_after_doris_forgot_the_label() {
    let e = emulator(3).await;
    let fe = format!("http://{}", e.fe_http_addr());
    let target = target(&e, &fe);
    let rows = || vec![example::sample(0, 300)];
    assert_eq!(
        example::run(&target, "k1", rows()).await.unwrap(),
        Outcome::Committed
    );
    // The same key again (Daft's contract: a no-op), recognised by its label.
    assert_eq!(
        example::run(&target, "k1", rows()).await.unwrap(),
        Outcome::AlreadyCommitted {
            by: CommittedBy::Label
        }
    );
    // Unrelated loads push the key's label out of Doris's memory (label_num_threshold 3).
    let endpoint = doris_read::MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
    let mut session = doris_mysql::Session::open(&endpoint).await.unwrap();
    for i in 0..6 {
        session
            .execute(&format!(
                "/* fixture */ INSERT INTO demo.other VALUES ({i})"
            ))
            .await
            .unwrap();
    }
    assert!(!label_known(&e, "svc_k1"), "the label is forgotten");
    // The rerun finds the key in the commit ledger and writes nothing.
    assert_eq!(
        example::run(&target, "k1", rows()).await.unwrap(),
        Outcome::AlreadyCommitted {
            by: CommittedBy::Ledger { rows: Some(300) }
        }
    );
    assert_eq!(ids(&e), (0..300).collect::<Vec<_>>());
    let mut tables = e.shared().catalog.table_names("demo").unwrap();
    tables.sort();
    assert_eq!(
        tables,
        ["daft_doris_commits", "events", "other"],
        "no staging table is left"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_commit_answer_is_settled_by_the_key_never_written_twice() {
    let e = emulator(2000).await;
    let fe = format!("http://{}", e.fe_http_addr());
    let target = target(&e, &fe);
    // Committed, answer lost: the label says it committed.
    e.faults().arm(Fault::DropAfterTxnCommit, 1);
    assert_eq!(
        example::run(&target, "k2", vec![example::sample(0, 100)])
            .await
            .unwrap(),
        Outcome::Committed
    );
    // Lost before it committed: the transaction rolled back with the session, the label
    // is free, the publish runs again.
    e.faults().arm(Fault::DropBeforeTxnCommit, 1);
    assert_eq!(
        example::run(&target, "k3", vec![example::sample(100, 100)])
            .await
            .unwrap(),
        Outcome::Committed
    );
    // The answer is lost while the transaction still runs: the writer waits for the
    // label to settle.
    e.faults().arm(Fault::HoldTxnCommit { ms: 700 }, 1);
    assert_eq!(
        example::run(&target, "k4", vec![example::sample(200, 100)])
            .await
            .unwrap(),
        Outcome::Committed
    );
    let fired: Vec<_> = e.faults().fired().iter().map(|f| f.kind).collect();
    assert_eq!(
        fired,
        [
            "drop_after_txn_commit",
            "drop_before_txn_commit",
            "hold_txn_commit"
        ]
    );
    for key in ["k2", "k3", "k4"] {
        assert!(matches!(
            example::run(&target, key, vec![example::sample(0, 5)])
                .await
                .unwrap(),
            Outcome::AlreadyCommitted { .. }
        ));
    }
    assert_eq!(ids(&e), (0..300).collect::<Vec<_>>());
}

/// A publish slower than the session's request timeout still gets its answer: the
/// publishing transaction waits `AtomicPolicy::publish_timeout`, not the request timeout
/// (with the request timeout, the COMMIT would count as unanswered and be settled by
/// polling the label, its row count unknown).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publish_slower_than_the_request_timeout_is_answered() {
    use std::time::Duration;

    use doris_write::atomic::{AtomicPolicy, AtomicWrite, Begun, CommitRecord, key_label};

    let e = emulator(2000).await;
    let mut endpoint =
        doris_read::MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
    endpoint.read_timeout = Duration::from_millis(500);
    let schema = doris_read::fetch_table_schema(&endpoint, "demo", "events")
        .await
        .unwrap();
    let mut session = doris_mysql::Session::open(&endpoint).await.unwrap();
    let policy = AtomicPolicy {
        publish_timeout: Duration::from_secs(30),
        poll_interval: Duration::from_millis(50),
        ..AtomicPolicy::default()
    };
    let begun = AtomicWrite::begin(
        &mut session,
        "demo",
        &schema,
        key_label("svc", "slow").unwrap(),
        CommitRecord::default(),
        policy,
    )
    .await
    .unwrap();
    let Begun::Fresh(run) = begun else {
        panic!("a new key")
    };
    // Stage two rows the way a task does, with an INSERT into the staging table.
    session
        .execute(&format!(
            "/* fixture */ INSERT INTO demo.{} (`__dd_load`, `id`, `name`) VALUES (1, 1, 'a'), (1, 2, 'b')",
            run.staging_table()
        ))
        .await
        .unwrap();
    e.faults().arm(Fault::SlowTxnCommit { ms: 1500 }, 1);
    let published = run
        .publish(
            &mut session,
            &["id".into(), "name".into()],
            &[("1".into(), 2)],
        )
        .await
        .unwrap();
    assert!(published.by_this_run);
    assert_eq!(published.rows, Some(2), "the INSERT's own answer arrived");
    assert_eq!(e.faults().fired().len(), 1);
    assert_eq!(ids(&e), [1, 2]);
}

/// A run of key `key` with two rows (ids 1, 2) staged under tag `1`, on a session.
async fn staged_run(
    e: &Emulator,
    key: &str,
) -> (doris_mysql::Session, doris_write::atomic::AtomicWrite) {
    match staged_run_of(e, key, false).await {
        (session, Some(run)) => (session, run),
        (_, None) => panic!("a new key"),
    }
}

/// [`staged_run`] of an overwrite (`overwrite`) or not; `None` when the key had committed.
async fn staged_run_of(
    e: &Emulator,
    key: &str,
    overwrite: bool,
) -> (
    doris_mysql::Session,
    Option<doris_write::atomic::AtomicWrite>,
) {
    use doris_write::atomic::{AtomicPolicy, AtomicWrite, Begun, CommitRecord, key_label};
    let endpoint = doris_read::MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
    let schema = doris_read::fetch_table_schema(&endpoint, "demo", "events")
        .await
        .unwrap();
    let mut session = doris_mysql::Session::open(&endpoint).await.unwrap();
    let policy = AtomicPolicy {
        poll_interval: std::time::Duration::from_millis(20),
        ..AtomicPolicy::default()
    };
    let Begun::Fresh(run) = AtomicWrite::begin_write(
        &mut session,
        "demo",
        &schema,
        key_label("svc", key).unwrap(),
        CommitRecord::default(),
        policy,
        overwrite,
    )
    .await
    .unwrap() else {
        return (session, None);
    };
    session
        .execute(&format!(
            "/* fixture */ INSERT INTO demo.{} (`__dd_load`, `id`, `name`) VALUES (1, 1, 'a'), (1, 2, 'b')",
            run.staging_table()
        ))
        .await
        .unwrap();
    (session, Some(run.with_overwrite(overwrite)))
}

/// Doris commits an `INSERT OVERWRITE`'s label once the rows are in temporary partitions and
/// swaps the partitions after; when the FE fails between the two, the label says committed
/// while the table holds its old rows. The overwrite is then checked against the table and
/// reported as not applied (never as done, and never recorded in the ledger), whether the
/// statement got an error or no answer; a lost answer after a real swap is done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overwrite_whose_partitions_were_not_swapped_is_never_reported_done() {
    use doris_streamload::StreamLoadError;

    let e = emulator(2000).await;
    let endpoint = doris_read::MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
    let mut admin = doris_mysql::Session::open(&endpoint).await.unwrap();
    admin
        .execute("/* fixture */ INSERT INTO demo.events VALUES (7, 'old'), (8, 'old'), (9, 'old')")
        .await
        .unwrap();
    let columns = ["id".to_owned(), "name".to_owned()];
    for (key, answered) in [("ow-lost", false), ("ow-refused", true)] {
        let (mut session, run) = staged_run(&e, key).await;
        e.faults().arm(Fault::OverwriteSwapFails { answered }, 1);
        let err = run
            .with_overwrite(true)
            .publish(&mut session, &columns, &[("1".into(), 2)])
            .await
            .unwrap_err();
        assert!(
            matches!(err, StreamLoadError::OverwriteNotApplied { .. }),
            "{key}: {err}"
        );
        assert_eq!(ids(&e), [7, 8, 9], "{key}: the old rows are still there");
        let records = admin
            .query(&format!(
                "/* fixture */ SELECT key_label FROM demo.daft_doris_commits WHERE key_label = '{}'",
                doris_write::atomic::key_label("svc", key).unwrap()
            ))
            .await
            .unwrap();
        assert!(records.rows.is_empty(), "{key}: no ledger record");
        // The rerun of the key: the label committed without a record, so the run begins
        // again, finds the table without its rows and refuses (never done, never
        // overwriting again what may have been written since).
        let (mut session, rerun) = staged_run_of(&e, key, true).await;
        let rerun = rerun.unwrap_or_else(|| panic!("{key}: a not-applied overwrite is not done"));
        let err = rerun
            .publish(&mut session, &columns, &[("1".into(), 2)])
            .await
            .unwrap_err();
        assert!(
            matches!(err, StreamLoadError::OverwriteNotApplied { .. })
                && err.to_string().contains("earlier run"),
            "{key}: {err}"
        );
        assert_eq!(
            ids(&e),
            [7, 8, 9],
            "{key}: the table untouched by the rerun"
        );
    }
    // A key whose overwrite reached the table but whose record was never written: its
    // rerun finds the table holding its rows and records the key, and is then done.
    let label = doris_write::atomic::key_label("svc", "ow-unrecorded").unwrap();
    admin
        .execute(&format!(
            "/* fixture */ INSERT OVERWRITE TABLE demo.events WITH LABEL {label} VALUES (1, 'a'), (2, 'b')"
        ))
        .await
        .unwrap();
    let (mut session, rerun) = staged_run_of(&e, "ow-unrecorded", true).await;
    let published = rerun
        .unwrap()
        .publish(&mut session, &columns, &[("1".into(), 2)])
        .await
        .unwrap();
    assert!(!published.by_this_run, "{published:?}");
    assert_eq!(ids(&e), [1, 2]);
    let (_, done) = staged_run_of(&e, "ow-unrecorded", true).await;
    assert!(done.is_none(), "recorded, so done");
    admin
        .execute("/* fixture */ INSERT OVERWRITE TABLE demo.events VALUES (7, 'old'), (8, 'old'), (9, 'old')")
        .await
        .unwrap();
    // The swap happened and only the answer was lost: the table holds the rows, done.
    let (mut session, run) = staged_run(&e, "ow-done").await;
    e.faults().arm(Fault::DropAfterInsertCommit, 1);
    let published = run
        .with_overwrite(true)
        .publish(&mut session, &columns, &[("1".into(), 2)])
        .await
        .unwrap();
    assert!(published.by_this_run && published.rows.is_none());
    assert_eq!(ids(&e), [1, 2]);
}

/// A lost answer at each statement of the publishing transaction before its COMMIT (`SET
/// insert_timeout`, `BEGIN`, the rows' INSERT, the ledger's INSERT): the session's end rolls
/// the transaction back, the publish tries again on a new connection, and the rows land
/// once, with one ledger record; a rerun of the key writes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_answer_at_any_statement_of_the_publish_writes_the_rows_once() {
    use doris_write::atomic::{AtomicPolicy, AtomicWrite, Begun, CommitRecord, key_label};

    let e = emulator(2000).await;
    let endpoint = doris_read::MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
    let schema = doris_read::fetch_table_schema(&endpoint, "demo", "events")
        .await
        .unwrap();
    let columns = ["id".to_owned(), "name".to_owned()];
    for (key, prefix) in [
        ("lost-set", "SET insert_timeout"),
        ("lost-begin", "BEGIN WITH LABEL"),
        ("lost-rows", "INSERT INTO `demo`.`events`"),
        ("lost-record", "INSERT INTO `demo`.`daft_doris_commits`"),
    ] {
        e.execute(None, "TRUNCATE TABLE demo.events").unwrap();
        let (mut session, run) = staged_run(&e, key).await;
        let fired = e.faults().fired().len();
        e.faults().arm(
            Fault::DropStatement {
                prefix: prefix.into(),
                containing: None,
            },
            1,
        );
        let published = run
            .publish(&mut session, &columns, &[("1".into(), 2)])
            .await
            .unwrap();
        assert_eq!(
            e.faults().fired().len(),
            fired + 1,
            "{prefix}: the fault fired"
        );
        assert!(published.by_this_run, "{prefix}");
        assert_eq!(ids(&e), [1, 2], "{prefix}: the rows, once");
        let label = key_label("svc", key).unwrap();
        let records = session
            .query(&format!(
                "/* fixture */ SELECT key_label FROM demo.daft_doris_commits WHERE key_label = '{label}'"
            ))
            .await
            .unwrap();
        assert_eq!(records.rows.len(), 1, "{prefix}: one ledger record");
        let again = AtomicWrite::begin(
            &mut session,
            "demo",
            &schema,
            label,
            CommitRecord::default(),
            AtomicPolicy::default(),
        )
        .await
        .unwrap();
        assert!(
            matches!(again, Begun::AlreadyCommitted { .. }),
            "{prefix}: the rerun writes nothing"
        );
        assert_eq!(ids(&e), [1, 2], "{prefix}");
    }
}
