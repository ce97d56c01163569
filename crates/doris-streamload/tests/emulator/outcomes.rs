//! Typed outcomes and label resolution: lost answers, resets, publish timeouts, running labels, bad credentials, rejected rows.

use crate::common::*;

#[tokio::test]
async fn a_lost_answer_after_commit_resolves_to_exactly_one_copy() {
    for fault in [
        Fault::DropAfterCommit,
        Fault::MalformedResponse,
        Fault::TruncatedResponse,
    ] {
        let env = Env::new(DUP).await;
        env.emulator.faults().arm(fault.clone(), 1);
        let r = load(&env, &LoadOptions::default(), "lost1", batch(0, 1000))
            .await
            .unwrap_or_else(|e| panic!("{fault:?}: {e}"));
        assert_eq!(r.status, LoadStatus::CommittedByEarlierAttempt, "{fault:?}");
        assert_eq!(r.attempts, 2);
        assert_eq!(r.rows, 1000);
        assert_eq!(env.row_count("t"), 1000, "{fault:?}");
        assert!(env.emulator.faults().fired()[0].committed);
    }
}

#[tokio::test]
async fn the_older_label_exists_wording_without_a_txn_id_resolves_the_same() {
    let emulator = Emulator::start(EmulatorConfig {
        profile: doris_emulator::DorisProfile {
            legacy_label_exists_text: true,
            ..Default::default()
        },
        ..EmulatorConfig::default()
    })
    .await
    .unwrap();
    emulator
        .execute(None, &format!("CREATE DATABASE d; {DUP}"))
        .unwrap();
    let env = Env { emulator };
    env.emulator.faults().arm(Fault::DropAfterCommit, 1);
    let r = load(&env, &LoadOptions::default(), "old1", batch(0, 100))
        .await
        .unwrap();
    assert_eq!(r.status, LoadStatus::CommittedByEarlierAttempt);
    assert_eq!(env.row_count("t"), 100);
    // A rerun of a finished label loads nothing and says so.
    let r = load(&env, &LoadOptions::default(), "old1", batch(0, 100))
        .await
        .unwrap();
    assert_eq!(r.status, LoadStatus::AlreadyLoaded);
    assert_eq!(env.row_count("t"), 100);
}

#[tokio::test]
async fn a_reset_mid_body_is_retried_under_the_same_label() {
    let env = Env::new(DUP).await;
    env.emulator.faults().arm(Fault::ResetMidBody, 1);
    let r = load(&env, &LoadOptions::default(), "reset1", batch(0, 40_000))
        .await
        .unwrap();
    assert_eq!(r.status, LoadStatus::Success);
    assert_eq!(r.attempts, 2);
    assert_eq!(r.label.as_deref(), Some("reset1"));
    assert_eq!(env.row_count("t"), 40_000);
}

#[tokio::test]
async fn publish_timeout_is_committed_and_visible_later() {
    let env = Env::new(DUP).await;
    env.emulator.faults().arm(
        Fault::PublishTimeout {
            visible_after_ms: 300,
        },
        1,
    );
    let r = load(&env, &LoadOptions::default(), "pt1", batch(0, 100))
        .await
        .unwrap();
    assert_eq!(r.status, LoadStatus::PublishTimeout);
    assert!(r.status.is_committed());
    wait_until(|| env.row_count("t") == 100).await;
}

#[tokio::test]
async fn a_running_label_is_probed_until_it_finishes() {
    let env = Env::new(DUP).await;
    // Another writer holds the label RUNNING for a while.
    env.emulator.faults().arm(Fault::HoldRunning { ms: 800 }, 1);
    let first = {
        let client = env.client();
        let b = batch(0, 100);
        tokio::spawn(async move { labeled(&client, &LoadOptions::default(), "run1", b).await })
    };
    wait_until(|| env.label_state("run1").as_deref() == Some("PREPARE")).await;
    let b = batch(0, 100);
    let second = labeled(&env.client(), &LoadOptions::default(), "run1", b)
        .await
        .unwrap();
    // The second call returned only once the label had committed: it probed, it did not
    // take RUNNING for loaded.
    assert_eq!(env.label_state("run1").as_deref(), Some("VISIBLE"));
    // The probes saw RUNNING, then FINISHED: nothing was sent twice.
    assert_eq!(second.status, LoadStatus::AlreadyLoaded);
    assert_eq!(second.uploaded_bytes, 0);
    assert_eq!(first.await.unwrap().unwrap().status, LoadStatus::Success);
    assert_eq!(env.row_count("t"), 100);
}

#[tokio::test]
async fn a_label_still_running_when_retries_stop_is_ambiguous() {
    let env = Env::new(DUP).await;
    // The first load holds its label RUNNING for 3 s, then commits; the second gives up
    // probing after 1 s. Its outcome is unknown (the rows may commit), not "someone else's".
    env.emulator
        .faults()
        .arm(Fault::HoldRunning { ms: 3000 }, 1);
    let first = {
        let client = env.client();
        let b = batch(0, 100);
        tokio::spawn(async move { labeled(&client, &LoadOptions::default(), "amb1", b).await })
    };
    wait_until(|| env.label_state("amb1").as_deref() == Some("PREPARE")).await;
    let mut config = env.config();
    config.retry.max_total = Duration::from_secs(1);
    config.retry.running_probe_interval = Duration::from_millis(200);
    let impatient = StreamLoadClient::new(config).unwrap();
    let e = labeled(&impatient, &LoadOptions::default(), "amb1", batch(0, 100))
        .await
        .unwrap_err();
    assert!(matches!(e, StreamLoadError::Ambiguous { .. }), "{e}");
    assert!(e.to_string().contains("amb1"), "{e}");
    // And indeed it commits: the rows are there once.
    assert_eq!(first.await.unwrap().unwrap().status, LoadStatus::Success);
    assert_eq!(env.row_count("t"), 100);
}

#[tokio::test]
async fn bad_credentials_are_an_auth_error_without_the_password() {
    let env = Env::new(DUP).await;
    env.emulator
        .execute(None, "CREATE USER 'writer' IDENTIFIED BY 'right-pw'")
        .unwrap();
    let mut config = env.config();
    config.credentials = Credentials::new("writer", "Wr0ng-Secret-pw");
    let client = StreamLoadClient::new(config).unwrap();
    let b = batch(0, 10);
    let e = client
        .load("d", "t", &LoadOptions::default(), None, b.schema(), vec![b])
        .await
        .unwrap_err();
    assert!(matches!(e, StreamLoadError::Auth { .. }), "{e}");
    let shown = format!("{e} {e:?} {client:?}");
    assert!(!shown.contains("Wr0ng-Secret-pw"), "{shown}");
    // Nor its Authorization form (base64 of user:password), nor the bare base64.
    use base64::Engine as _;
    for encoded in [
        base64::engine::general_purpose::STANDARD.encode("writer:Wr0ng-Secret-pw"),
        base64::engine::general_purpose::STANDARD.encode("Wr0ng-Secret-pw"),
    ] {
        assert!(!shown.contains(&encoded), "{shown}");
        assert!(!shown.contains(encoded.trim_end_matches('=')), "{shown}");
    }
}

#[tokio::test]
async fn rejected_rows_come_back_typed_with_the_error_log() {
    let env = Env::new(DUP).await;
    let mut config = env.config();
    config.error_log_lines = 5;
    let client = StreamLoadClient::new(config).unwrap();
    // `id` is NOT NULL in the table; send NULLs from a nullable column.
    let nullable = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)]));
    let b = RecordBatch::try_new(
        nullable.clone(),
        vec![Arc::new(Int64Array::from(vec![Some(1), None, Some(3)]))],
    )
    .unwrap();
    let e = client
        .load(
            "d",
            "t",
            &LoadOptions::default(),
            Some(Label::new("rej1").unwrap()),
            nullable.clone(),
            vec![b.clone()],
        )
        .await
        .unwrap_err();
    match &e {
        StreamLoadError::Rejected {
            message,
            error_url,
            error_log_head,
            ..
        } => {
            assert!(message.contains("too many filtered rows"), "{message}");
            assert!(error_url.is_some());
            assert!(
                error_log_head.iter().any(|l| l.contains("is not nullable")),
                "{error_log_head:?}"
            );
        }
        other => panic!("{other}"),
    }
    assert!(!e.may_have_loaded());
    // The label is free again; with a filter ratio the good rows load.
    let options = LoadOptions {
        max_filter_ratio: 0.5,
        ..LoadOptions::default()
    };
    let r = client
        .load(
            "d",
            "t",
            &options,
            Some(Label::new("rej1").unwrap()),
            nullable,
            vec![b],
        )
        .await
        .unwrap();
    let resp = r.response.unwrap();
    assert_eq!((resp.number_loaded_rows, resp.number_filtered_rows), (2, 1));
    // A missing table is a rejection too.
    let b = batch(0, 1);
    let e = env
        .client()
        .load(
            "d",
            "nope",
            &LoadOptions::default(),
            None,
            b.schema(),
            vec![b],
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&e, StreamLoadError::Rejected { message, .. } if message.contains("unknown table")),
        "{e}"
    );
}
