//! Two-phase commit: commit, abort, leftovers, loaders that fail part way, answers lost on the way back.

use crate::common::*;

#[tokio::test]
async fn two_phase_commit_commit_abort_and_leftovers() {
    let env = Env::new(DUP).await;
    let client = env.client();
    let options = LoadOptions {
        two_phase_commit: true,
        ..LoadOptions::default()
    };
    let mut loader = Loader::new(
        client.clone(),
        "d",
        "t",
        options.clone(),
        LoaderConfig {
            max_rows: 100,
            labels: LabelScheme::Deterministic {
                prefix: "tpc".into(),
                key: "a".into(),
                partition: 1,
            },
            ..LoaderConfig::default()
        },
    )
    .unwrap();
    loader.write(batch(0, 250)).await.unwrap();
    let summary = loader.finish().await.unwrap();
    assert_eq!(summary.count(LoadStatus::Precommitted), 3);
    assert_eq!(env.row_count("t"), 0, "pre-committed rows are invisible");
    let done = client.commit_all("d", &summary).await.unwrap();
    assert_eq!(done, vec![TwoPhaseOutcome::Done; 3]);
    assert_eq!(env.row_count("t"), 250);
    let again = client.commit_all("d", &summary).await.unwrap();
    assert_eq!(again, vec![TwoPhaseOutcome::AlreadyDone; 3]);
    // Aborting a committed transaction is an error, not a silent success.
    let txn = TxnRef::Id(summary.ledger[0].report.txn_id);
    assert!(matches!(
        client.abort("d", &txn).await,
        Err(StreamLoadError::TwoPhase { .. })
    ));

    // Leftovers of a crashed job: abort every pre-committed label of its scheme.
    let scheme = LabelScheme::Deterministic {
        prefix: "tpc".into(),
        key: "crashed".into(),
        partition: 0,
    };
    for seq in 0..2 {
        let b = batch(1000 + seq as i64 * 10, 10);
        client
            .load(
                "d",
                "t",
                &options,
                Some(scheme.label(seq).unwrap()),
                b.schema(),
                vec![b],
            )
            .await
            .unwrap();
    }
    let aborted = client
        .abort_precommitted("d", (0..5).map(|s| scheme.label(s).unwrap()))
        .await
        .unwrap();
    assert_eq!(
        aborted,
        vec![scheme.label(0).unwrap(), scheme.label(1).unwrap()]
    );
    // Doris frees an aborted label: a second abort by label finds nothing.
    assert!(matches!(
        client.abort("d", &TxnRef::Label(scheme.label(0).unwrap())).await,
        Err(StreamLoadError::TwoPhase { message, .. }) if message.contains("not found")
    ));
    assert_eq!(env.row_count("t"), 250);
}

const PARTITIONED: &str = "CREATE TABLE d.t (id BIGINT NOT NULL, name VARCHAR(64), n INT) \
    DUPLICATE KEY(id) PARTITION BY RANGE(id) (PARTITION p0 VALUES LESS THAN (\"1000\")) \
    DISTRIBUTED BY HASH(id) BUCKETS 1";

/// Labels and states of the transactions on `d.t`.
fn txn_states(env: &Env) -> Vec<(String, String)> {
    env.emulator
        .shared()
        .txns
        .list("d")
        .into_iter()
        .filter(|(_, table, _, _)| table == "t")
        .map(|(_, _, label, state)| (label, state.as_str().to_owned()))
        .collect()
}

fn two_phase() -> LoadOptions {
    LoadOptions {
        two_phase_commit: true,
        ..LoadOptions::default()
    }
}

#[tokio::test]
async fn a_failed_two_phase_loader_aborts_every_load_it_pre_committed() {
    let env = Env::new(PARTITIONED).await;
    let loader = Loader::new(
        env.client(),
        "d",
        "t",
        two_phase(),
        LoaderConfig {
            max_rows: 2,
            labels: LabelScheme::Random {
                prefix: "fail3".into(),
            },
            ..LoaderConfig::default()
        },
    )
    .unwrap();
    // Loads [0, 1] and [2, 3] pre-commit; [5000, 5001] has no partition and is refused.
    let err = loader
        .load_all([batch(0, 4), batch(5000, 2)])
        .await
        .unwrap_err();
    assert!(
        matches!(err.error, StreamLoadError::Rejected { .. }),
        "{err}"
    );
    assert_eq!(err.summary.count(LoadStatus::Precommitted), 2);
    assert_eq!(err.aborted.len(), 2, "{err}");
    assert!(err.left_precommitted.is_empty(), "{err}");
    let states = txn_states(&env);
    assert!(
        states.iter().all(|(_, s)| s == "ABORTED"),
        "nothing may stay pre-committed: {states:?}"
    );
    for label in &err.aborted {
        assert!(
            states.contains(&(label.clone(), "ABORTED".into())),
            "{label}: {states:?}"
        );
    }
    assert_eq!(env.row_count("t"), 0);
}

#[tokio::test]
async fn a_rerun_adopts_the_pre_committed_loads_of_a_run_killed_before_its_commit() {
    let env = Env::new(DUP).await;
    let scheme = LabelScheme::Deterministic {
        prefix: "adopt".into(),
        key: "job7".into(),
        partition: 0,
    };
    let run = || {
        Loader::new(
            env.client(),
            "d",
            "t",
            two_phase(),
            LoaderConfig {
                max_rows: 4,
                labels: scheme.clone(),
                ..LoaderConfig::default()
            },
        )
        .unwrap()
    };
    // The first run pre-commits its loads, then dies before committing them.
    let first = run().load_all([batch(0, 10)]).await.unwrap();
    assert_eq!(first.count(LoadStatus::Precommitted), 3);
    // The rerun of the same job (same labels, same rows) adopts them, sends nothing again,
    // and commits them.
    let rerun = run().load_all([batch(0, 10)]).await.unwrap();
    assert_eq!(rerun.count(LoadStatus::Precommitted), 3);
    assert_eq!(rerun.uploaded_bytes, 0);
    env.client().commit_all("d", &rerun).await.unwrap();
    assert_eq!(env.row_count("t"), 10);
    let states = txn_states(&env);
    assert!(
        states.iter().all(|(_, s)| s == "VISIBLE"),
        "nothing may stay pre-committed: {states:?}"
    );
}

#[tokio::test]
async fn a_pre_committed_load_whose_counters_do_not_add_up_is_aborted_not_left() {
    let env = Env::new(DUP).await;
    let loader = Loader::new(
        env.client(),
        "d",
        "t",
        two_phase(),
        LoaderConfig {
            max_rows: 5,
            labels: LabelScheme::Random {
                prefix: "miscount".into(),
            },
            ..LoaderConfig::default()
        },
    )
    .unwrap();
    // The first load pre-commits, then its answer's counters are off by one.
    env.emulator.faults().arm(Fault::MiscountedAnswer, 1);
    let err = loader.load_all([batch(0, 10)]).await.unwrap_err();
    assert!(
        matches!(err.error, StreamLoadError::CounterMismatch { .. }),
        "{err}"
    );
    let states = txn_states(&env);
    assert!(
        states.iter().all(|(_, s)| s == "ABORTED"),
        "nothing may stay pre-committed: {states:?}"
    );
    assert_eq!(err.aborted.len(), states.len(), "{err}");
    assert_eq!(env.row_count("t"), 0);
}

#[tokio::test]
async fn a_commit_that_fails_part_way_aborts_the_rest_and_names_what_committed() {
    let env = Env::new(DUP).await;
    let client = env.client();
    let mut txns = Vec::new();
    for (i, from) in [0i64, 100, 200].into_iter().enumerate() {
        let b = batch(from, 10);
        let r = labeled(&client, &two_phase(), &format!("part{i}"), b)
            .await
            .unwrap();
        assert_eq!(r.status, LoadStatus::Precommitted);
        txns.push(txn_ref(&r).unwrap());
    }
    // The second transaction is aborted behind the writer's back (as a pre-commit timeout
    // would): its commit fails, so the third must be aborted, not left pre-committed.
    client.abort("d", &txns[1]).await.unwrap();
    let err = client.commit_or_abort_all("d", &txns).await.unwrap_err();
    let StreamLoadError::PartialCommit {
        committed,
        aborted,
        left,
        ..
    } = &err
    else {
        panic!("{err}");
    };
    assert_eq!(committed, &vec![txns[0].describe()]);
    assert_eq!(aborted, &vec![txns[1].describe(), txns[2].describe()]);
    assert!(left.is_empty());
    assert!(err.to_string().contains(&txns[0].describe()), "{err}");
    assert_eq!(env.row_count("t"), 10);
    let states = txn_states(&env);
    assert!(
        !states.iter().any(|(_, s)| s == "PRECOMMITTED"),
        "{states:?}"
    );
}

#[tokio::test]
async fn a_two_phase_load_known_only_by_label_is_committed_by_label() {
    // The older `Label Already Exists` wording carries no txn id: the report's txn id is
    // -1, and the transaction is named by its label.
    let report = LoadReport {
        label: Some("only_label".into()),
        txn_id: -1,
        status: LoadStatus::Precommitted,
        rows: 1,
        encoded_bytes: 0,
        uploaded_bytes: 0,
        attempts: 1,
        elapsed: Duration::ZERO,
        response: None,
    };
    assert_eq!(
        txn_ref(&report).unwrap(),
        TxnRef::Label(Label::new("only_label").unwrap())
    );
    let env = Env::new(DUP).await;
    let client = env.client();
    labeled(&client, &two_phase(), "only_label", batch(0, 10))
        .await
        .unwrap();
    let done = client
        .commit_or_abort_all("d", &[txn_ref(&report).unwrap()])
        .await
        .unwrap();
    assert_eq!(done, vec![TwoPhaseOutcome::Done]);
    assert_eq!(env.row_count("t"), 10);
}

/// A server that reads each request's head, then closes the connection without a word
/// (as when the FE dies after applying a commit). Counts the requests it saw.
async fn silent_server() -> (
    std::net::SocketAddr,
    std::sync::Arc<std::sync::atomic::AtomicU32>,
) {
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counter = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut head = [0u8; 8192];
            let _ = socket.read(&mut head).await;
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(socket);
        }
    });
    (addr, seen)
}

#[tokio::test]
async fn a_commit_that_reached_doris_without_an_answer_is_ambiguous_and_one_that_never_left_is_not()
{
    let (addr, seen) = silent_server().await;
    let mut config = ClientConfig::new(
        format!("http://{addr}").parse().unwrap(),
        Credentials::new("root", ""),
    );
    config.retry.max_attempts = 3;
    config.retry.initial_backoff = Duration::from_millis(5);
    let client = StreamLoadClient::new(config).unwrap();
    // The commit may have been applied: the caller must not read this as "not committed".
    match client.commit("d", &TxnRef::Id(7)).await.unwrap_err() {
        StreamLoadError::Ambiguous {
            label, attempts, ..
        } => {
            assert_eq!((label.as_str(), attempts), ("transaction [7]", 3));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        seen.load(std::sync::atomic::Ordering::SeqCst) >= 3,
        "retried under the schedule"
    );

    // Nothing listens: no request left, so the transaction is certainly untouched.
    // Bound and never listening: a connection is refused, and no other process can take
    // the port while the test holds it.
    let closed = tokio::net::TcpSocket::new_v4().unwrap();
    closed.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = closed.local_addr().unwrap().port();
    let mut config = ClientConfig::new(
        format!("http://127.0.0.1:{port}").parse().unwrap(),
        Credentials::new("root", ""),
    );
    config.retry.max_attempts = 2;
    config.retry.initial_backoff = Duration::from_millis(5);
    let client = StreamLoadClient::new(config).unwrap();
    let e = client.abort("d", &TxnRef::Id(7)).await.unwrap_err();
    assert!(
        matches!(e, StreamLoadError::Transport { attempts: 2, .. }),
        "{e:?}"
    );
}

#[tokio::test]
async fn a_commit_whose_outcome_is_unknown_is_never_aborted() {
    let (addr, seen) = silent_server().await;
    let mut config = ClientConfig::new(
        format!("http://{addr}").parse().unwrap(),
        Credentials::new("root", ""),
    );
    config.retry.max_attempts = 2;
    config.retry.initial_backoff = Duration::from_millis(5);
    let client = StreamLoadClient::new(config).unwrap();
    let txns = [TxnRef::Id(7), TxnRef::Id(8)];
    let err = client.commit_or_abort_all("d", &txns).await.unwrap_err();
    let StreamLoadError::PartialCommit {
        committed,
        aborted,
        left,
        ..
    } = &err
    else {
        panic!("{err}");
    };
    assert!(committed.is_empty() && aborted.is_empty(), "{err}");
    // The first may have committed (its commit reached the server): listed as left, and
    // never sent an abort; the second was only ever aborted (and that went unanswered too).
    assert_eq!(left, &vec![txns[0].describe(), txns[1].describe()]);
    assert_eq!(
        seen.load(std::sync::atomic::Ordering::SeqCst),
        4,
        "two commit attempts for the first, two abort attempts for the second, none else"
    );
}
