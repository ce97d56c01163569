//! The `Loader`: cutting by rows and bytes, the ledger, loads in flight, a refused batch.

use crate::common::*;

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
