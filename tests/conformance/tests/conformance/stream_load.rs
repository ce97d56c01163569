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
