//! doris-streamload against the Doris emulator: every outcome class, every fault the
//! emulator injects, 2PC, group commit, formats, compression and key-model operations.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use arrow::array::{Array, Int32Array, Int64Array, StringArray};
use arrow::compute::concat_batches;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use doris_emulator::faults::Fault;
use doris_emulator::wire_stats::HttpFace;
use doris_emulator::{Emulator, EmulatorConfig};
use doris_streamload::*;

struct Env {
    emulator: Emulator,
}

impl Env {
    async fn new(ddl: &str) -> Self {
        let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
        emulator
            .execute(None, &format!("CREATE DATABASE d; {ddl}"))
            .unwrap();
        Self { emulator }
    }

    fn config(&self) -> ClientConfig {
        let mut c = ClientConfig::new(
            format!("http://{}", self.emulator.fe_http_addr())
                .parse()
                .unwrap(),
            Credentials::new("root", ""),
        );
        c.retry.initial_backoff = Duration::from_millis(20);
        c.retry.running_probe_interval = Duration::from_millis(100);
        c
    }

    fn client(&self) -> Arc<StreamLoadClient> {
        Arc::new(StreamLoadClient::new(self.config()).unwrap())
    }

    fn rows(&self, table: &str) -> RecordBatch {
        let t = self.emulator.shared().catalog.table("d", table).unwrap();
        let batches = t.snapshot(None).unwrap();
        concat_batches(&t.arrow_schema, &batches).unwrap()
    }

    fn row_count(&self, table: &str) -> usize {
        self.rows(table).num_rows()
    }

    /// The `TransactionStatus` of the transaction holding `label` in `d`, if any.
    fn label_state(&self, label: &str) -> Option<String> {
        let txns = &self.emulator.shared().txns;
        let id = txns.resolve("d", &doris_emulator::txn::TxnRef::Label(label.into()))?;
        txns.describe(id)
            .map(|(_, state, _, _)| state.as_str().to_owned())
    }
}

/// Polls `done` every 10 ms for up to 10 s (a state reached, not a time slept).
async fn wait_until(mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "the state was not reached in 10 s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

const DUP: &str = "CREATE TABLE d.t (id BIGINT NOT NULL, name VARCHAR(64), n INT) \
                   DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 4";

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("n", DataType::Int32, true),
    ]))
}

fn batch(from: i64, rows: usize) -> RecordBatch {
    let ids: Vec<i64> = (from..from + rows as i64).collect();
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(ids.clone())),
            Arc::new(StringArray::from_iter(ids.iter().map(|i| {
                if i % 7 == 0 {
                    None
                } else {
                    Some(format!("name, \"quoted\" {i}\n"))
                }
            }))),
            Arc::new(Int32Array::from_iter(
                ids.iter().map(|i| (i % 5 != 0).then_some(*i as i32)),
            )),
        ],
    )
    .unwrap()
}

async fn load(
    env: &Env,
    options: &LoadOptions,
    label: &str,
    b: RecordBatch,
) -> Result<LoadReport, StreamLoadError> {
    labeled(&env.client(), options, label, b).await
}

/// `client.load` of one batch into `d.t` under `label`.
async fn labeled(
    client: &StreamLoadClient,
    options: &LoadOptions,
    label: &str,
    b: RecordBatch,
) -> Result<LoadReport, StreamLoadError> {
    client
        .load(
            "d",
            "t",
            options,
            Some(Label::new(label).unwrap()),
            b.schema(),
            vec![b],
        )
        .await
}

fn sorted_ids(b: &RecordBatch) -> Vec<i64> {
    let ids = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    let mut v: Vec<i64> = ids.values().to_vec();
    v.sort_unstable();
    v
}

#[tokio::test]
async fn every_format_and_compression_loads_the_same_rows() {
    let env = Env::new(DUP).await;
    let cases = [
        (Format::Arrow, Compression::None),
        (Format::Parquet, Compression::None),
        (Format::Json, Compression::None),
        (Format::Json, Compression::Gzip),
        (Format::Csv(CsvOptions::default()), Compression::None),
        (Format::Csv(CsvOptions::default()), Compression::Lz4),
    ];
    for (i, (format, compression)) in cases.into_iter().enumerate() {
        let options = LoadOptions {
            format: format.clone(),
            compression,
            ..LoadOptions::default()
        };
        let r = load(
            &env,
            &options,
            &format!("fmt{i}"),
            batch(i as i64 * 1000, 500),
        )
        .await
        .unwrap_or_else(|e| panic!("{format:?} {compression:?}: {e}"));
        assert_eq!(r.status, LoadStatus::Success);
        assert_eq!(r.rows, 500);
        assert_eq!(
            r.response.as_ref().unwrap().number_loaded_rows,
            500,
            "{format:?}"
        );
    }
    let all = env.rows("t");
    assert_eq!(all.num_rows(), 3000);
    // Text formats carried NULLs, quotes, separators and newlines intact.
    let names = all
        .column(1)
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    let ids = all.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    for r in 0..all.num_rows() {
        let id = ids.value(r);
        if id % 7 == 0 {
            assert!(names.is_null(r), "id {id}");
        } else {
            assert_eq!(
                names.value(r),
                format!("name, \"quoted\" {id}\n"),
                "id {id}"
            );
        }
    }
}

#[tokio::test]
async fn the_body_crosses_the_wire_once_and_never_to_the_fe() {
    let env = Env::new(DUP).await;
    let b = batch(0, 50_000);
    let r = load(&env, &LoadOptions::default(), "wire1", b)
        .await
        .unwrap();
    let (fe, be) = env.emulator.http_bytes_received();
    assert!(r.uploaded_bytes > 1_000_000, "{r:?}");
    assert!(fe < 2_000, "the FE received {fe} bytes: more than headers");
    assert!(
        be >= r.uploaded_bytes && be < r.uploaded_bytes + 20_000,
        "BE received {be}, body {}",
        r.uploaded_bytes
    );
    assert_eq!(env.row_count("t"), 50_000);
}

#[tokio::test]
async fn an_early_be_answer_uploads_nothing() {
    let env = Env::new(DUP).await;
    load(&env, &LoadOptions::default(), "dup1", batch(0, 10))
        .await
        .unwrap();
    let (_, be_before) = env.emulator.http_bytes_received();
    // Same label from a "different job": Doris answers before the body.
    let r = load(&env, &LoadOptions::default(), "dup1", batch(0, 20_000))
        .await
        .unwrap();
    assert_eq!(r.status, LoadStatus::AlreadyLoaded);
    assert_eq!(r.uploaded_bytes, 0);
    let (_, be_after) = env.emulator.http_bytes_received();
    assert!(be_after - be_before < 2_000, "{}", be_after - be_before);
    assert_eq!(env.row_count("t"), 10);
}

/// Job `k1`: 10 000 rows in batches of 1 000, loads of ≤ 3 000 rows and ≤ 64 KiB.
async fn run_job(env: &Env, max_in_flight: usize) -> LoadSummary {
    let mut loader = Loader::new(
        env.client(),
        "d",
        "t",
        LoadOptions::default(),
        LoaderConfig {
            max_rows: 3_000,
            max_bytes: 64 * 1024,
            max_in_flight,
            labels: LabelScheme::Deterministic {
                prefix: "job".into(),
                key: "k1".into(),
                partition: 0,
            },
            first_sequence: 0,
        },
    )
    .unwrap();
    for i in 0..10 {
        loader.write(batch(i * 1000, 1000)).await.unwrap();
    }
    loader.finish().await.unwrap()
}

#[tokio::test]
async fn loader_cuts_by_rows_and_bytes_and_keeps_a_ledger() {
    let env = Env::new(DUP).await;
    let summary = run_job(&env, 2).await;
    assert_eq!(summary.rows, 10_000);
    assert_eq!(summary.loaded_rows, 10_000);
    assert!(summary.ledger.len() > 4, "{}", summary.ledger.len());
    for (i, e) in summary.ledger.iter().enumerate() {
        assert_eq!(e.sequence, i as u64);
        assert_eq!(
            e.report.label.as_deref(),
            Some(format!("job_k1_0_{i}").as_str())
        );
        assert!(e.report.rows <= 3_000);
        assert!(
            e.report.encoded_bytes <= 64 * 1024 + 8 * 1024,
            "{:?}",
            e.report
        );
    }
    assert_eq!(sorted_ids(&env.rows("t")), (0..10_000).collect::<Vec<_>>());

    // A rerun of the same job over the same data loads nothing twice.
    let again = run_job(&env, 1).await;
    assert_eq!(again.ledger.len(), summary.ledger.len());
    assert_eq!(again.count(LoadStatus::AlreadyLoaded), summary.ledger.len());
    assert_eq!(again.uploaded_bytes, 0);
    assert_eq!(env.row_count("t"), 10_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loader_never_has_more_than_max_in_flight_loads_at_the_be() {
    for max_in_flight in [1, 2, 3] {
        let env = Env::new(DUP).await;
        // Every load waits 200 ms after its body before the BE answers, so loads the loader
        // lets overlap do overlap at the BE.
        env.emulator
            .faults()
            .arm(Fault::SlowAnswer { ms: 200 }, 1_000);
        let summary = run_job(&env, max_in_flight).await;
        assert_eq!(summary.loaded_rows, 10_000);
        assert!(summary.ledger.len() > 3, "{}", summary.ledger.len());
        assert_eq!(
            env.emulator.wire().be_loads.peak(),
            max_in_flight,
            "loads open at once at the BE with max_in_flight = {max_in_flight}"
        );
    }
}

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
        legacy_label_exists_text: true,
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
async fn an_unreachable_be_is_a_transport_error_and_loads_nothing() {
    let env = Env::new(DUP).await;
    env.emulator.faults().arm(Fault::BeUnreachable, 10);
    let mut config = env.config();
    config.retry.max_attempts = 3;
    config.allowlist.fe_host_any_port = true;
    let client = StreamLoadClient::new(config).unwrap();
    let b = batch(0, 10);
    let e = labeled(&client, &LoadOptions::default(), "unr1", b)
        .await
        .unwrap_err();
    assert!(
        matches!(e, StreamLoadError::Transport { attempts: 3, .. }),
        "{e}"
    );
    assert!(!e.may_have_loaded());
    assert_eq!(env.row_count("t"), 0);
}

#[tokio::test]
async fn a_redirect_outside_the_allowlist_is_refused_before_any_body_byte() {
    let env = Env::new(DUP).await;
    env.emulator.faults().arm(
        Fault::Redirect {
            host: "evil.example".into(),
            port: 8040,
        },
        1,
    );
    let e = load(&env, &LoadOptions::default(), "redir1", batch(0, 10))
        .await
        .unwrap_err();
    match &e {
        StreamLoadError::RedirectRefused { target, .. } => {
            assert!(target.starts_with("http://evil.example:8040/"), "{target}");
            assert!(!target.contains('@'), "userinfo kept: {target}");
        }
        other => panic!("{other}"),
    }
    assert_eq!(env.emulator.http_bytes_received().1, 0);
}

#[tokio::test]
async fn remembered_and_configured_backends_skip_the_fe() {
    let env = Env::new(DUP).await;
    let mut config = env.config();
    config.route = Route::ViaFe {
        remember_backend: true,
    };
    let client = StreamLoadClient::new(config).unwrap();
    for i in 0..3 {
        let b = batch(i * 10, 10);
        labeled(&client, &LoadOptions::default(), &format!("rem{i}"), b)
            .await
            .unwrap();
    }
    let (fe_after_three, _) = env.emulator.http_bytes_received();
    let mut config = env.config();
    config.route = Route::Backends(vec![
        format!("http://{}", env.emulator.be_http_addr())
            .parse()
            .unwrap(),
    ]);
    let direct = StreamLoadClient::new(config).unwrap();
    let b = batch(100, 10);
    labeled(&direct, &LoadOptions::default(), "direct1", b)
        .await
        .unwrap();
    let (fe_final, _) = env.emulator.http_bytes_received();
    assert_eq!(fe_final, fe_after_three, "the direct route touched the FE");
    // One FE redirect plus one /api/backends call served all three remembered loads.
    assert!(fe_after_three < 1_500, "{fe_after_three}");
    let requests: Vec<(HttpFace, String, String)> = env
        .emulator
        .http_requests()
        .into_iter()
        .map(|r| (r.face, r.method, r.path))
        .collect();
    let load = |face| (face, "PUT".to_owned(), "/api/d/t/_stream_load".to_owned());
    let fe_loads = requests
        .iter()
        .filter(|r| **r == load(HttpFace::Fe))
        .count();
    let be_loads = requests
        .iter()
        .filter(|r| **r == load(HttpFace::Be))
        .count();
    let backend_lists = requests
        .iter()
        .filter(|(face, method, path)| {
            *face == HttpFace::Fe && method == "GET" && path == "/api/backends"
        })
        .count();
    assert_eq!(
        (fe_loads, backend_lists, be_loads),
        (1, 1, 4),
        "{requests:?}"
    );
    assert_eq!(env.row_count("t"), 40);
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

#[tokio::test]
async fn group_commit_loads_without_a_label_and_refuses_one() {
    let env = Env::new(DUP).await;
    let options = LoadOptions {
        group_commit: Some(GroupCommit::Sync),
        ..LoadOptions::default()
    };
    let b = batch(0, 100);
    let r = env
        .client()
        .load("d", "t", &options, None, b.schema(), vec![b.clone()])
        .await
        .unwrap();
    assert!(r.response.as_ref().unwrap().group_commit);
    assert!(
        r.label.as_deref().unwrap().starts_with("group_commit_"),
        "{r:?}"
    );
    assert_eq!(env.row_count("t"), 100);
    let e = env
        .client()
        .load(
            "d",
            "t",
            &options,
            Some(Label::new("x").unwrap()),
            b.schema(),
            vec![b],
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&e, StreamLoadError::Config(m) if m.contains("no dedupe")),
        "{e}"
    );
}

#[tokio::test]
async fn group_commit_is_never_retried_after_its_body_was_sent() {
    // (fault, rows the table holds afterwards): committed then the answer lost, or reset
    // before anything committed. Either way the body went out once and is not sent again
    // (group commit has no label that could make a retry safe).
    for (fault, committed) in [(Fault::DropAfterCommit, 100), (Fault::ResetMidBody, 0)] {
        let env = Env::new(DUP).await;
        env.emulator.faults().arm(fault.clone(), 1);
        let options = LoadOptions {
            group_commit: Some(GroupCommit::Sync),
            ..LoadOptions::default()
        };
        let b = batch(0, 100);
        let e = env
            .client()
            .load("d", "t", &options, None, b.schema(), vec![b])
            .await
            .unwrap_err();
        assert!(e.may_have_loaded(), "{fault:?}: {e}");
        let be_loads = env
            .emulator
            .http_requests()
            .iter()
            .filter(|r| r.face == HttpFace::Be && r.method == "PUT")
            .count();
        assert_eq!(be_loads, 1, "{fault:?}: the body was sent again");
        assert_eq!(env.row_count("t"), committed, "{fault:?}");
    }
}

const UNIQ: &str = "CREATE TABLE d.u (id BIGINT NOT NULL, name VARCHAR(64), n INT, seq INT) \
                    UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2 \
                    PROPERTIES (\"enable_unique_key_merge_on_write\" = \"true\", \
                    \"function_column.sequence_col\" = \"seq\")";

fn uniq(ids: &[i64], names: &[&str], ns: &[i32], seqs: &[i32]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("n", DataType::Int32, true),
        Field::new("seq", DataType::Int32, true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(ids.to_vec())),
            Arc::new(StringArray::from(names.to_vec())),
            Arc::new(Int32Array::from(ns.to_vec())),
            Arc::new(Int32Array::from(seqs.to_vec())),
        ],
    )
    .unwrap()
}

fn cell(b: &RecordBatch, id: i64) -> (String, i32) {
    let ids = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    let names = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
    let ns = b.column(2).as_any().downcast_ref::<Int32Array>().unwrap();
    let r = (0..b.num_rows()).find(|r| ids.value(*r) == id).unwrap();
    (names.value(r).to_owned(), ns.value(r))
}

#[tokio::test]
async fn key_model_operations_upsert_sequence_partial_update_and_delete() {
    let env = Env::new(UNIQ).await;
    let client = env.client();
    let go = |options: LoadOptions, b: RecordBatch| {
        let client = client.clone();
        async move {
            client
                .load("d", "u", &options, None, b.schema(), vec![b])
                .await
                .unwrap()
        }
    };
    go(
        LoadOptions::default(),
        uniq(&[1, 2, 3], &["a", "b", "c"], &[10, 20, 30], &[5, 5, 5]),
    )
    .await;
    // Upsert: a newer sequence wins, an older one is ignored.
    go(
        LoadOptions::default(),
        uniq(&[1, 2], &["a2", "b-old"], &[11, 21], &[6, 4]),
    )
    .await;
    let rows = env.rows("u");
    assert_eq!(rows.num_rows(), 3);
    assert_eq!(cell(&rows, 1), ("a2".into(), 11));
    assert_eq!(cell(&rows, 2), ("b".into(), 20));
    // Partial update of `n` only (NDJSON), existing key 3 and new key 4.
    let partial_schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("n", DataType::Int32, true),
    ]));
    let partial = RecordBatch::try_new(
        partial_schema,
        vec![
            Arc::new(Int64Array::from(vec![3, 4])),
            Arc::new(Int32Array::from(vec![33, 44])),
        ],
    )
    .unwrap();
    go(
        LoadOptions {
            format: Format::Json,
            update_mode: UpdateMode::FixedColumns {
                legacy_header: false,
            },
            ..LoadOptions::default()
        },
        partial,
    )
    .await;
    let rows = env.rows("u");
    assert_eq!(cell(&rows, 3), ("c".into(), 33));
    assert_eq!(rows.num_rows(), 4);
    // Delete by key.
    let keys_schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let keys =
        RecordBatch::try_new(keys_schema, vec![Arc::new(Int64Array::from(vec![1, 4]))]).unwrap();
    go(
        LoadOptions {
            merge_type: MergeType::Delete,
            ..LoadOptions::default()
        },
        keys,
    )
    .await;
    assert_eq!(sorted_ids(&env.rows("u")), vec![2, 3]);
}

#[tokio::test]
async fn a_mismatched_schema_stops_the_loader_and_keeps_the_ledger() {
    let env = Env::new(DUP).await;
    let mut loader = Loader::new(
        env.client(),
        "d",
        "t",
        LoadOptions::default(),
        LoaderConfig {
            max_rows: 10,
            ..LoaderConfig::default()
        },
    )
    .unwrap();
    loader.write(batch(0, 25)).await.unwrap();
    let other = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)])),
        vec![Arc::new(Int64Array::from(vec![1]))],
    )
    .unwrap();
    assert!(matches!(
        loader.write(other).await,
        Err(StreamLoadError::Config(_))
    ));
    let summary = loader.finish().await.unwrap();
    assert_eq!(summary.loaded_rows, 25);
    assert!(summary.ledger.iter().all(|e| e.report.rows <= 10));
    // The refused batch loaded nothing: exactly the 25 good rows, once each.
    assert_eq!(sorted_ids(&env.rows("t")), (0..25).collect::<Vec<_>>());
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

/// A one-shot HTTP server on loopback that answers every request with `body_len` bytes of
/// `{` padding (declared in Content-Length, streamed in pieces); returns its address.
async fn oversized_server(body_len: usize, requests: usize) -> std::net::SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        for _ in 0..requests {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let mut head = [0u8; 4096];
            let _ = socket.read(&mut head).await;
            let header = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {body_len}\r\n\r\n"
            );
            if socket.write_all(header.as_bytes()).await.is_err() {
                continue;
            }
            let piece = vec![b' '; 64 * 1024];
            let mut sent = 0;
            while sent < body_len {
                let n = piece.len().min(body_len - sent);
                if socket.write_all(&piece[..n]).await.is_err() {
                    break;
                }
                sent += n;
            }
        }
    });
    addr
}

#[tokio::test]
async fn an_oversized_backends_answer_is_refused_not_buffered() {
    let addr = oversized_server(64 << 20, 4).await;
    let config = ClientConfig::new(
        format!("http://{addr}").parse().unwrap(),
        Credentials::new("root", ""),
    );
    let client = StreamLoadClient::new(config).unwrap();
    let e = client.backends().await.unwrap_err();
    assert!(matches!(e, StreamLoadError::Malformed(_)), "{e}");
    assert!(
        e.to_string().contains("/api/backends") && e.to_string().contains("cap"),
        "{e}"
    );
}

#[tokio::test]
async fn an_oversized_two_phase_answer_is_refused() {
    let addr = oversized_server(8 << 20, 8).await;
    let mut config = ClientConfig::new(
        format!("http://{addr}").parse().unwrap(),
        Credentials::new("root", ""),
    );
    config.retry.max_attempts = 1;
    let client = StreamLoadClient::new(config).unwrap();
    let e = client.commit("d", &TxnRef::Id(7)).await.unwrap_err();
    assert!(e.to_string().contains("cap"), "{e}");
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
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
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

/// A server that answers every request at once (before any body) with `status` and `body`.
async fn answering_server(status: &'static str, body: &'static str) -> std::net::SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut head = [0u8; 8192];
            let _ = socket.read(&mut head).await;
            let answer = format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(answer.as_bytes()).await;
        }
    });
    addr
}

#[tokio::test]
async fn no_error_carries_the_response_body() {
    const MARKER: &str = "Body-Marker-5e1f";
    const BODY: &str = "<html><body>Body-Marker-5e1f: proxy says no</body></html>";
    for status in ["200 OK", "502 Bad Gateway", "401 Unauthorized"] {
        let addr = answering_server(status, BODY).await;
        let mut config = ClientConfig::new(
            format!("http://{addr}").parse().unwrap(),
            Credentials::new("root", ""),
        );
        config.route = Route::Backends(vec![format!("http://{addr}").parse().unwrap()]);
        config.retry.max_attempts = 2;
        let client = StreamLoadClient::new(config).unwrap();
        let b = batch(0, 10);
        let e = client
            .load(
                "d",
                "t",
                &LoadOptions::default(),
                Some(Label::new("body1").unwrap()),
                b.schema(),
                vec![b],
            )
            .await
            .unwrap_err();
        let shown = format!("{e} {e:?}");
        assert!(!shown.contains(MARKER), "{status}: {shown}");
        let e = client.commit("d", &TxnRef::Id(7)).await.unwrap_err();
        let shown = format!("{e} {e:?}");
        assert!(!shown.contains(MARKER), "{status}: {shown}");
    }
}

/// An emulator whose HTTP faces serve TLS with a certificate for `names`, and its CA.
async fn tls_env(names: &[&str]) -> (Env, doris_emulator::tls::TestCa) {
    let ca = doris_emulator::tls::TestCa::new(names).unwrap();
    let config = EmulatorConfig {
        tls: Some((ca.cert_pem.clone(), ca.key_pem.clone())),
        ..EmulatorConfig::default()
    };
    let emulator = Emulator::start(config).await.unwrap();
    emulator
        .execute(None, &format!("CREATE DATABASE d; {DUP}"))
        .unwrap();
    (Env { emulator }, ca)
}

fn https_config(env: &Env, ca_pem: Option<&str>) -> ClientConfig {
    let mut c = ClientConfig::new(
        format!("https://{}", env.emulator.fe_http_addr())
            .parse()
            .unwrap(),
        Credentials::new("root", ""),
    );
    c.ca_bundle_pem = ca_pem.map(|p| p.as_bytes().to_vec());
    c.retry.max_attempts = 2;
    c.retry.initial_backoff = Duration::from_millis(20);
    c
}

#[tokio::test]
async fn a_load_over_tls_verifies_the_fe_and_the_be() {
    let (env, ca) = tls_env(&["127.0.0.1"]).await;
    let client = StreamLoadClient::new(https_config(&env, Some(&ca.ca_pem))).unwrap();
    let r = labeled(&client, &LoadOptions::default(), "tls1", batch(0, 50))
        .await
        .unwrap();
    assert_eq!(r.status, LoadStatus::Success);
    assert_eq!(sorted_ids(&env.rows("t")), (0..50).collect::<Vec<_>>());
    // 2PC over TLS as well (FE, then the BE it redirects to).
    let options = LoadOptions {
        two_phase_commit: true,
        ..LoadOptions::default()
    };
    let r = labeled(&client, &options, "tls2", batch(50, 10))
        .await
        .unwrap();
    client.commit("d", &txn_ref(&r).unwrap()).await.unwrap();
    assert_eq!(env.row_count("t"), 60);
}

#[tokio::test]
async fn a_certificate_from_an_unknown_ca_or_for_another_name_is_refused() {
    // No extra CA: the web PKI roots do not know the test CA.
    let (env, ca) = tls_env(&["127.0.0.1"]).await;
    let client = StreamLoadClient::new(https_config(&env, None)).unwrap();
    let e = labeled(&client, &LoadOptions::default(), "tls3", batch(0, 5))
        .await
        .unwrap_err();
    assert!(matches!(e, StreamLoadError::Transport { .. }), "{e}");
    // Another CA than the one that signed the server's certificate.
    let other = doris_emulator::tls::TestCa::new(&["127.0.0.1"]).unwrap();
    let client = StreamLoadClient::new(https_config(&env, Some(&other.ca_pem))).unwrap();
    assert!(
        labeled(&client, &LoadOptions::default(), "tls4", batch(0, 5))
            .await
            .is_err()
    );
    drop(ca);
    // The right CA, but the certificate names another host than the one connected to.
    let (env, ca) = tls_env(&["doris.example"]).await;
    let client = StreamLoadClient::new(https_config(&env, Some(&ca.ca_pem))).unwrap();
    let e = labeled(&client, &LoadOptions::default(), "tls5", batch(0, 5))
        .await
        .unwrap_err();
    assert!(matches!(e, StreamLoadError::Transport { .. }), "{e}");
    assert_eq!(
        env.row_count("t"),
        0,
        "nothing was sent without a verified link"
    );
}
