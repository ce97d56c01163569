//! The atomic write on each Doris release the emulator plays (`DorisProfile::release`,
//! `--doris-version`): refused before anything is created or loaded where the release
//! cannot run it (`doris_write::atomic::check_release`), run where it can, with the label
//! lookup's privilege named as the release needs it.
#![allow(clippy::unwrap_used)]

use doris_emulator::{DorisProfile, Emulator, EmulatorConfig};
use doris_mysql::Session;
use doris_streamload::StreamLoadError;
use doris_write::atomic::{AtomicPolicy, AtomicWrite, Begun, CommitRecord, key_label};

async fn emulator_of(release: &str) -> Emulator {
    let e = Emulator::start(EmulatorConfig {
        profile: DorisProfile::for_release(release.parse().unwrap()),
        ..EmulatorConfig::default()
    })
    .await
    .unwrap();
    e.execute(
        None,
        "CREATE DATABASE demo; CREATE TABLE demo.events (`id` BIGINT NOT NULL, `name` VARCHAR(32) NULL) \
         DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2",
    )
    .unwrap();
    e
}

async fn session(e: &Emulator, user: &str, password: &str) -> (Session, doris_sql::TableSchema) {
    let endpoint =
        doris_read::MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), user, password);
    let root = doris_read::MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
    let schema = doris_read::fetch_table_schema(&root, "demo", "events")
        .await
        .unwrap();
    (Session::open(&endpoint).await.unwrap(), schema)
}

async fn begin(
    e: &Emulator,
    user: &str,
    password: &str,
    key: &str,
) -> Result<Begun, StreamLoadError> {
    let (mut s, schema) = session(e, user, password).await;
    AtomicWrite::begin(
        &mut s,
        "demo",
        &schema,
        key_label("daft_doris", key).unwrap(),
        CommitRecord::default(),
        AtomicPolicy::default(),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn releases_that_cannot_run_the_atomic_write_refuse_it_before_anything_is_written() {
    for (release, why) in [("2.1.10", "INSERT ... VALUES"), ("3.0.3", "44190")] {
        let e = emulator_of(release).await;
        match begin(&e, "root", "", "2026-12-04").await {
            Err(StreamLoadError::UnsupportedRelease {
                release: named,
                detail,
                ..
            }) => {
                assert_eq!(named, release);
                assert!(
                    detail.contains(why) && detail.contains("atomic=False"),
                    "{detail}"
                );
            }
            other => panic!("{release}: {other:?}"),
        }
        // No staging table, no ledger, no transaction.
        assert_eq!(e.shared().catalog.table_names("demo").unwrap(), ["events"]);
        assert!(e.shared().txns.list("demo").is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_key_with_a_dash_publishes_once_on_every_release_that_runs_it() {
    for release in ["3.0.4", "3.1.0", "4.0.6", "4.1.0"] {
        let e = emulator_of(release).await;
        // A key Doris has never seen: SHOW TRANSACTION answers "does not exist", which is a
        // fresh key, then the (new) ledger decides.
        let Begun::Fresh(run) = begin(&e, "root", "", "2026-12-04").await.unwrap() else {
            panic!("{release}: a new key")
        };
        assert_eq!(run.label().as_str(), "daft_doris_2026_2D12_2D04");
        let (mut s, _) = session(&e, "root", "").await;
        s.execute(&format!(
            "/* fixture */ INSERT INTO demo.{} (`__dd_load`, `id`, `name`) VALUES (7, 1, 'a'), (7, 2, 'b')",
            run.staging_table()
        ))
        .await
        .unwrap();
        let published = run
            .publish(&mut s, &["id".into(), "name".into()], &[("7".into(), 2)])
            .await
            .unwrap();
        assert!(published.by_this_run, "{release}");
        assert_eq!(
            e.shared()
                .catalog
                .table("demo", "events")
                .unwrap()
                .snapshot(None)
                .unwrap()
                .iter()
                .map(|b| b.num_rows())
                .sum::<usize>(),
            2
        );
        match begin(&e, "root", "", "2026-12-04").await.unwrap() {
            Begun::AlreadyCommitted { .. } => {}
            Begun::Fresh(_) => panic!("{release}: the rerun must be a no-op"),
        }
        let tables = e.shared().catalog.table_names("demo").unwrap();
        assert_eq!(tables, ["daft_doris_commits", "events"], "{release}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_label_lookup_needs_admin_on_3_0_and_load_on_the_database_from_3_1() {
    for (release, needed) in [
        ("3.0.4", "the global ADMIN privilege"),
        ("4.1.0", "LOAD on the database"),
    ] {
        let e = emulator_of(release).await;
        // The ledger exists (root's first write makes it), so the writer's first need is
        // the label lookup.
        begin(&e, "root", "", "first").await.unwrap();
        e.execute(
            None,
            "CREATE USER 'w'@'%' IDENTIFIED BY 'pw'; GRANT SELECT_PRIV ON demo.* TO 'w'@'%'",
        )
        .unwrap();
        match begin(&e, "w", "pw", "k").await {
            Err(StreamLoadError::Privilege {
                needed: named,
                message,
            }) => {
                assert!(named.starts_with(needed), "{release}: {named}");
                assert!(
                    message.contains("privilege(s) for this operation"),
                    "{message}"
                );
            }
            other => panic!("{release}: {other:?}"),
        }
    }
}
