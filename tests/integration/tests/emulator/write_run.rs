//! `doris_write::WriteRun` driven as an engine's sink drives it (start, a writer per task,
//! finish or abort), against the Doris emulator: a two-phase write is visible at its
//! finish and not before, commits the loads its reports name wherever their tasks ran and
//! aborts those of attempts the engine dropped; an aborted write leaves no row, no pre-committed load and no
//! staging table; what the run refuses, it refuses before its first byte.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use arrow::array::{Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use doris_emulator::txn::TxnState;
use doris_emulator::{Emulator, EmulatorConfig};
use doris_mysql::Session;
use doris_read::MySqlEndpoint;
use doris_sql::WriteOperation;
use doris_streamload::{ClientConfig, Credentials, StreamLoadError};
use doris_write::{AtomicStage, RunState, TaskReport, WriteRun, WriteSpec, WriteStatus};

async fn emulator() -> Emulator {
    let e = Emulator::start(EmulatorConfig::default()).await.unwrap();
    e.execute(
        None,
        "CREATE DATABASE demo; CREATE TABLE demo.events (`id` BIGINT NOT NULL, `name` VARCHAR(32) NULL) \
         DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2",
    )
    .unwrap();
    e
}

fn rows(e: &Emulator) -> usize {
    let t = e.shared().catalog.table("demo", "events").unwrap();
    t.snapshot(None)
        .unwrap()
        .iter()
        .map(RecordBatch::num_rows)
        .sum()
}

fn states(e: &Emulator) -> Vec<TxnState> {
    e.shared()
        .txns
        .list("demo")
        .into_iter()
        .map(|t| t.3)
        .collect()
}

fn staging_tables(e: &Emulator) -> Vec<String> {
    let names = e.shared().catalog.table_names("demo").unwrap();
    names
        .into_iter()
        .filter(|n| n.starts_with(doris_write::staging::STAGING_PREFIX))
        .collect()
}

fn batch(rows: i64) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(0..rows)),
            Arc::new(StringArray::from_iter(
                (0..rows).map(|i| Some(format!("n{i}"))),
            )),
        ],
    )
    .unwrap()
}

/// A run of `spec` on `demo.events` with `state` (a new run: the default state), not
/// started: what an engine's worker rebuilds from the state it was sent.
fn resumed(e: &Emulator, spec: WriteSpec, state: RunState) -> WriteRun {
    let fe = format!("http://{}", e.fe_http_addr()).parse().unwrap();
    let client = ClientConfig::new(fe, Credentials::new("root", ""));
    WriteRun::resume(
        spec,
        "demo",
        "events",
        client,
        Duration::from_secs(30),
        state,
    )
}

/// A run of `spec` started on `demo.events` for data of `schema`.
async fn started(
    e: &Emulator,
    spec: WriteSpec,
    schema: &SchemaRef,
) -> Result<WriteRun, StreamLoadError> {
    let endpoint = MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
    let (described, release) =
        doris_read::fetch_table_schema_and_release(&endpoint, "demo", "events")
            .await
            .unwrap();
    let mut run = resumed(e, spec, RunState::default());
    run.start(&described, release, Some(schema), false, || session(e))
        .await?;
    Ok(run)
}

async fn session(e: &Emulator) -> Result<Session, StreamLoadError> {
    let endpoint = MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
    Session::open(&endpoint)
        .await
        .map_err(|e| StreamLoadError::Sql {
            step: "connect",
            message: e.to_string(),
        })
}

/// One task of `run` loading `data` (with the start's table check).
async fn one_task(run: &WriteRun, data: &RecordBatch) -> TaskReport {
    let target = run.state().target.as_ref().unwrap();
    let writer = run.task(target).unwrap().unwrap();
    run.write(&writer, &data.schema(), vec![data.clone()])
        .await
        .unwrap()
}

fn spec(configure: impl FnOnce(&mut WriteSpec)) -> WriteSpec {
    let mut spec = WriteSpec::new(WriteOperation::Load);
    spec.batch_rows = 100;
    configure(&mut spec);
    spec
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_phase_write_is_visible_at_its_finish_and_not_before() {
    let e = emulator().await;
    let data = batch(300);
    let run = started(&e, spec(|s| s.two_phase_commit = true), &data.schema())
        .await
        .unwrap();
    let report = one_task(&run, &data).await;
    assert_eq!(report.precommitted.len(), 3, "three loads of 100 rows");
    assert_eq!(rows(&e), 0, "pre-committed loads are not visible");
    let summary = run.finish(&[report], || session(&e)).await.unwrap();
    assert_eq!(
        (summary.status, summary.loaded_rows),
        (WriteStatus::Success, 300)
    );
    assert_eq!(rows(&e), 300);
    assert!(states(&e).iter().all(|s| *s == TxnState::Visible));
    // Finished: nothing is left to abort.
    run.abort(|| session(&e)).await.unwrap();
    assert_eq!(rows(&e), 300);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_phase_finish_commits_what_the_reports_name_wherever_it_ran_and_aborts_dropped_attempts()
 {
    let e = emulator().await;
    let two_phase = || spec(|s| s.two_phase_commit = true);
    let data = batch(200);
    let driver = started(&e, two_phase(), &data.schema()).await.unwrap();
    // A worker's run, rebuilt from the state the driver sent: its loads are pre-committed
    // in another "process" than the one that finishes.
    let worker = resumed(&e, two_phase(), driver.state().clone());
    let kept = one_task(&worker, &data).await;
    // An attempt of the driver's process whose report the engine dropped.
    let dropped = one_task(&driver, &batch(50)).await;
    assert_eq!(
        (kept.precommitted.len(), dropped.precommitted.len()),
        (2, 1)
    );
    let summary = driver
        .finish(std::slice::from_ref(&kept), || session(&e))
        .await
        .unwrap();
    assert_eq!(summary.loaded_rows, 200);
    assert_eq!(rows(&e), 200, "the kept task's rows, and only those");
    let mut seen = states(&e);
    seen.sort_by_key(|s| format!("{s:?}"));
    assert_eq!(
        seen,
        [TxnState::Aborted, TxnState::Visible, TxnState::Visible]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_write_leaves_no_row_no_precommitted_load_and_no_staging_table() {
    let e = emulator().await;
    let data = batch(250);
    let run = started(&e, spec(|s| s.two_phase_commit = true), &data.schema())
        .await
        .unwrap();
    one_task(&run, &data).await;
    assert!(states(&e).contains(&TxnState::Precommitted));
    run.abort(|| session(&e)).await.unwrap();
    assert!(states(&e).iter().all(|s| *s == TxnState::Aborted));

    let atomic = spec(|s| s.idempotence_key = Some("aborted-1".into()));
    let run = started(&e, atomic, &data.schema()).await.unwrap();
    let Some((_, AtomicStage::Staging(staging))) = run.state().atomic.clone() else {
        panic!("a fresh atomic run stages its rows: {:?}", run.state());
    };
    assert_eq!(staging_tables(&e), [staging]);
    one_task(&run, &data).await;
    run.abort(|| session(&e)).await.unwrap();
    assert!(staging_tables(&e).is_empty());
    assert_eq!(rows(&e), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_run_refuses_it_refuses_before_its_first_byte() {
    let e = emulator().await;
    let data = batch(10);
    // A column the table does not have.
    let other = Arc::new(Schema::new(vec![Field::new("nope", DataType::Int64, true)]));
    let refused = started(&e, spec(|_| {}), &other).await.unwrap_err();
    assert!(
        matches!(refused, StreamLoadError::Incompatible(_)),
        "{refused}"
    );
    // Tasks an engine may retry, without the atomic mode.
    let endpoint = MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
    let (described, release) =
        doris_read::fetch_table_schema_and_release(&endpoint, "demo", "events")
            .await
            .unwrap();
    let fe = format!("http://{}", e.fe_http_addr()).parse().unwrap();
    let client = ClientConfig::new(fe, Credentials::new("root", ""));
    let mut run = WriteRun::new(
        spec(|_| {}),
        "demo",
        "events",
        client,
        Duration::from_secs(30),
    );
    // A task before the start.
    assert!(run.task(&Default::default()).is_err());
    let retried = run
        .start(&described, release, Some(&data.schema()), true, || {
            session(&e)
        })
        .await
        .unwrap_err();
    assert!(retried.to_string().contains("native runner"), "{retried}");
    assert_eq!(rows(&e), 0);
    assert!(states(&e).is_empty() && staging_tables(&e).is_empty());
}
