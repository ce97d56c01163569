//! Stream Load as the doris-streamload client relies on it: the FE's redirect and its
//! `Expect` check, labels that load once, two-phase commit by id and by label, and
//! credentials refused before the body.

use doris_conformance::raw_put;
use doris_streamload::{
    Credentials, Label, LoadOptions, LoadStatus, StreamLoadClient, StreamLoadError,
    TwoPhaseOutcome, TxnRef,
};

use crate::common::{count, load, rows, with_table};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fe_redirects_a_load_to_a_be_with_307_and_answers_without_the_body() {
    let (target, db) = with_table().await;
    let path = format!("/api/{}/t/_stream_load", db.name);
    let answer = raw_put(
        &target.fe_http(),
        &path,
        &[
            ("Authorization", target.basic_auth()),
            ("Expect", "100-continue".into()),
            ("label", "conformance_redirect".into()),
            ("Content-Length", "0".into()),
        ],
    )
    .await;
    assert_eq!(answer.status, 307, "{answer:?}");
    let location = answer.header("location").expect("a Location header");
    let url = url::Url::parse(location).expect("an absolute Location");
    assert!(
        ["http", "https"].contains(&url.scheme()),
        "{}",
        url.scheme()
    );
    assert_eq!(url.path(), path);
    // The redirect carries the credentials in its userinfo (clients must strip them).
    assert_eq!(url.username(), target.user());
    // Nothing was loaded: the FE never read a body.
    assert_eq!(count(&target, &db.name).await, 0);
    target.drop_scratch(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_load_without_expect_100_continue_is_refused_by_the_fe() {
    let (target, db) = with_table().await;
    let answer = raw_put(
        &target.fe_http(),
        &format!("/api/{}/t/_stream_load", db.name),
        &[
            ("Authorization", target.basic_auth()),
            ("Content-Length", "0".into()),
        ],
    )
    .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let body: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(body["status"], "FAILED", "{body}");
    assert_eq!(body["msg"], "There is no 100-continue header", "{body}");
    target.drop_scratch(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_loads_once_and_a_second_load_under_it_is_known_as_loaded() {
    let (target, db) = with_table().await;
    let client = StreamLoadClient::new(target.stream_load()).unwrap();
    let label = format!("conformance_once_{}", db.name);
    let options = LoadOptions::default();
    let first = load(&client, &db.name, &options, Some(&label), rows(0, 100))
        .await
        .unwrap();
    assert_eq!(first.status, LoadStatus::Success);
    assert!(first.txn_id > 0, "{first:?}");
    assert_eq!(first.rows, 100);
    let again = load(&client, &db.name, &options, Some(&label), rows(0, 100))
        .await
        .unwrap();
    // Doris answers `Label Already Exists` with `ExistingJobStatus: FINISHED`.
    assert_eq!(again.status, LoadStatus::AlreadyLoaded, "{again:?}");
    assert_eq!(count(&target, &db.name).await, 100);
    target.drop_scratch(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_phase_loads_stay_invisible_until_committed_and_abort_by_label() {
    let (target, db) = with_table().await;
    let client = StreamLoadClient::new(target.stream_load()).unwrap();
    let options = LoadOptions {
        two_phase_commit: true,
        ..LoadOptions::default()
    };
    let kept_label = format!("conformance_2pc_kept_{}", db.name);
    let kept = load(&client, &db.name, &options, Some(&kept_label), rows(0, 50))
        .await
        .unwrap();
    assert_eq!(kept.status, LoadStatus::Precommitted);
    assert_eq!(
        count(&target, &db.name).await,
        0,
        "pre-committed rows are invisible"
    );
    let by_id = TxnRef::Id(kept.txn_id);
    assert_eq!(
        client.commit(&db.name, &by_id).await.unwrap(),
        TwoPhaseOutcome::Done
    );
    assert_eq!(count(&target, &db.name).await, 50);
    assert_eq!(
        client.commit(&db.name, &by_id).await.unwrap(),
        TwoPhaseOutcome::AlreadyDone,
        "a repeated commit is known as done"
    );

    let dropped_label = format!("conformance_2pc_dropped_{}", db.name);
    let dropped = load(
        &client,
        &db.name,
        &options,
        Some(&dropped_label),
        rows(1_000, 50),
    )
    .await
    .unwrap();
    assert_eq!(dropped.status, LoadStatus::Precommitted);
    let by_label = TxnRef::Label(Label::new(&dropped_label).unwrap());
    assert_eq!(
        client.abort(&db.name, &by_label).await.unwrap(),
        TwoPhaseOutcome::Done
    );
    assert_eq!(
        count(&target, &db.name).await,
        50,
        "aborted rows never appear"
    );
    target.drop_scratch(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_credentials_are_refused_as_auth_and_load_nothing() {
    let (target, db) = with_table().await;
    let mut config = target.stream_load();
    config.credentials = Credentials::new(target.user(), "Conformance-Wrong-Pw-7");
    config.retry.max_attempts = 1;
    let client = StreamLoadClient::new(config).unwrap();
    let e = load(
        &client,
        &db.name,
        &LoadOptions::default(),
        None,
        rows(0, 10),
    )
    .await
    .unwrap_err();
    assert!(matches!(e, StreamLoadError::Auth { .. }), "{e}");
    assert!(!format!("{e} {e:?}").contains("Conformance-Wrong-Pw-7"));
    assert_eq!(count(&target, &db.name).await, 0);
    target.drop_scratch(db).await;
}

/// A partial-column update of a merge-on-write UNIQUE table: `partial_columns: true` keeps
/// the columns a row does not name on every release; `unique_key_update_mode:
/// UPDATE_FIXED_COLUMNS` does from 3.1 only (earlier releases ignore the header and load full
/// rows, resetting those columns), which is why doris-write sends `partial_columns`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partial_update_keeps_the_columns_it_does_not_name() {
    use std::sync::Arc;

    use arrow::array::{Int64Array, RecordBatch};
    use arrow::datatypes::{DataType, Field, Schema};
    use doris_streamload::UpdateMode;

    let target = doris_conformance::Target::start().await;
    let db = target.scratch().await;
    let d = &db.name;
    target
        .execute(&format!(
            "/* fixture */ CREATE TABLE `{d}`.`u` (`id` BIGINT NOT NULL, `keep` BIGINT NULL, `score` BIGINT NULL) \
             UNIQUE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1 PROPERTIES \
             (\"replication_num\" = \"1\", \"enable_unique_key_merge_on_write\" = \"true\")"
        ))
        .await;
    target
        .execute(&format!(
            "/* fixture */ INSERT INTO `{d}`.`u` VALUES (1, 10, 100), (2, 20, 200)"
        ))
        .await;
    let client = StreamLoadClient::new(target.stream_load()).unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("score", DataType::Int64, true),
    ]));
    let batch = |score: i64| {
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(vec![1, 2])),
                Arc::new(Int64Array::from(vec![score, score])),
            ],
        )
        .unwrap()
    };
    let keep = || async {
        target
            .scalar(&format!("SELECT SUM(`keep`) FROM `{d}`.`u`"))
            .await
    };
    let flexible_headers = target
        .release()
        .await
        .is_none_or(|r| r >= doris_sql::release::DorisRelease::new(3, 1, 0));
    for (legacy_header, kept) in [(true, true), (false, flexible_headers)] {
        let options = LoadOptions {
            update_mode: UpdateMode::FixedColumns { legacy_header },
            ..LoadOptions::default()
        };
        client
            .load(d, "u", &options, None, schema.clone(), vec![batch(7)])
            .await
            .unwrap();
        let got = keep().await;
        if kept {
            assert_eq!(got.as_deref(), Some("30"), "legacy_header {legacy_header}");
        } else {
            assert_eq!(got, None, "the release loaded full rows: keep was reset");
        }
    }
    target.drop_scratch(db).await;
}
