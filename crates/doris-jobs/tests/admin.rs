//! Streaming jobs through `doris_jobs::admin` against the emulator's job runner: offsets move
//! with the data in lexicographic batches, `jobs()`/`tasks()` parse into types, ALTER only
//! while PAUSED, and a restart from the data directory goes on without loading a file twice.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use doris_emulator::{Emulator, EmulatorConfig};
use doris_jobs::admin as jobs;
use doris_jobs::admin::JobError;
use doris_jobs::{CreateStreamingJob, JobControl, JobStatus, Properties, S3Insert};
use doris_mysql::{MySqlEndpoint, MySqlError};
use doris_sql::TableRef;

const DDL: &str = "CREATE DATABASE d;
CREATE TABLE d.t (`id` INT NOT NULL, `v` VARCHAR(10) NULL) DUPLICATE KEY(`id`)
DISTRIBUTED BY HASH(`id`) BUCKETS 2;";

fn temp_dir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("streaming-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_file(root: &Path, key: &str, ids: std::ops::Range<i32>) {
    let path = root.join("bkt").join(key);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let text: String = ids.map(|i| format!("{i},v{i}\n")).collect();
    std::fs::write(path, text).unwrap();
}

async fn start(root: &Path, data: &Path) -> (Emulator, MySqlEndpoint) {
    let config = EmulatorConfig {
        s3_root: Some(root.to_owned()),
        data_dir: Some(data.to_owned()),
        ..EmulatorConfig::default()
    };
    let e = Emulator::start(config).await.unwrap();
    if !e.restored() {
        e.execute(None, DDL).unwrap();
    }
    let fe = MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
    (e, fe)
}

async fn wait_for_offset(fe: &MySqlEndpoint, name: &str, key: &str) -> doris_jobs::JobRow {
    let mut last = None;
    for _ in 0..100 {
        let job = jobs::job(fe, name).await.unwrap().unwrap();
        if job
            .current_offset
            .as_ref()
            .is_some_and(|o| o.end_file == key)
        {
            return job;
        }
        last = Some(job);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the job never reached {key}: {last:?}");
}

fn rows(e: &Emulator) -> usize {
    e.shared()
        .catalog
        .table("d", "t")
        .unwrap()
        .rows_per_tablet()
        .unwrap()
        .iter()
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_load_batches_in_order_and_survive_a_restart() {
    let (root, data) = (temp_dir("s3"), temp_dir("data"));
    for (n, key) in ["in/p-1.csv", "in/p-2.csv", "in/p-3.csv"]
        .iter()
        .enumerate()
    {
        let n = n as i32;
        write_file(&root, key, n * 10..n * 10 + 10);
    }
    write_file(&root, "in/ignored.txt", 0..5);
    let (e, fe) = start(&root, &data).await;
    let insert = S3Insert::new(
        TableRef::new("d", "t").unwrap(),
        "s3://bkt/in/p-*.csv",
        "csv",
    )
    .property("column_separator", ",")
    .property("s3.secret_key", "sk-never-shown");
    let job = CreateStreamingJob::new("ingest", insert)
        .property("s3.max_batch_files", "2")
        .property("max_interval", "1");
    jobs::create_job(&fe, &job).await.unwrap();
    let row = wait_for_offset(&fe, "ingest", "in/p-3.csv").await;
    assert_eq!(row.status, JobStatus::Running);
    assert_eq!(row.succeed_task_count, 2, "two files, then one");
    assert_eq!(
        (
            row.load_statistic.scanned_rows,
            row.load_statistic.file_number
        ),
        (30, 3)
    );
    assert_eq!(row.end_offset.unwrap().end_file, "in/p-3.csv");
    assert_eq!(row.properties["s3.max_batch_files"], "2");
    assert!(
        row.execute_sql
            .starts_with("INSERT INTO `d`.`t` SELECT * FROM S3(")
    );
    assert_eq!(rows(&e), 30);
    let tasks = jobs::list_tasks(&fe, Some("ingest")).await.unwrap();
    let done: Vec<_> = tasks.iter().filter(|t| t.status == "SUCCESS").collect();
    assert_eq!(done.len(), 2);
    assert_eq!(
        done[0].running_offset,
        r#"{"endFile":"in/p-2.csv","startFile":"in/p-1.csv"}"#
    );
    assert_eq!(done[1].load_statistic.scanned_rows, 10);

    // ALTER is refused while RUNNING, accepted while PAUSED; the offset stays.
    let mut props = Properties::default();
    props.set("s3.max_batch_files", "10");
    let refused = jobs::alter_job(&fe, "ingest", &props, None)
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, JobError::MySql(MySqlError::Query { message, .. }) if message.contains("Only PAUSED job can be altered")),
        "{refused:?}"
    );
    assert!(!refused.to_string().contains("sk-never-shown"));
    jobs::control_job(&fe, JobControl::Pause, "ingest")
        .await
        .unwrap();
    assert!(
        jobs::list_tasks(&fe, Some("ingest"))
            .await
            .unwrap()
            .is_empty()
    );
    jobs::alter_job(&fe, "ingest", &props, None).await.unwrap();
    let paused = jobs::job(&fe, "ingest").await.unwrap().unwrap();
    assert_eq!(paused.status, JobStatus::Paused);
    assert_eq!(paused.current_offset.unwrap().end_file, "in/p-3.csv");

    // Restart from the data directory: the table, the job and its offset come back.
    e.shut_down().await;
    let (e, fe) = start(&root, &data).await;
    assert!(e.restored());
    assert_eq!(rows(&e), 30);
    let again = jobs::job(&fe, "ingest").await.unwrap().unwrap();
    assert_eq!(again.status, JobStatus::Paused);
    assert_eq!(again.properties["s3.max_batch_files"], "10");
    write_file(&root, "in/p-4.csv", 30..35);
    jobs::control_job(&fe, JobControl::Resume, "ingest")
        .await
        .unwrap();
    let row = wait_for_offset(&fe, "ingest", "in/p-4.csv").await;
    assert_eq!(rows(&e), 35, "p-1..p-3 are not loaded again");
    assert_eq!(row.load_statistic.scanned_rows, 35);
    jobs::control_job(&fe, JobControl::Drop { if_exists: false }, "ingest")
        .await
        .unwrap();
    assert!(jobs::list_jobs(&fe, None).await.unwrap().is_empty());
    jobs::control_job(&fe, JobControl::Drop { if_exists: true }, "ingest")
        .await
        .unwrap();
    let missing = jobs::control_job(&fe, JobControl::Pause, "ingest")
        .await
        .unwrap_err();
    assert!(missing.to_string().contains("job not exist"), "{missing}");
    let _ = std::fs::remove_dir_all(root);
    let _ = std::fs::remove_dir_all(data);
}
