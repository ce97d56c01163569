//! `ingest-bench`: how fast the emulator ingests an Arrow-format Stream Load.
//!
//! Builds one Arrow IPC stream of `--rows` rows × 8 mixed columns (integers, decimal, date,
//! datetime(6), short and long strings, booleans, 10 % nulls), starts the emulator in
//! process, and uploads the body `--runs` times with `curl` straight to the BE (a new label
//! each time, the table truncated between runs). Prints one JSON line: the body size and
//! the median, min and max ingest rate in MB/s and rows/s. Run it in release mode
//! (`cargo xtask bench`).

use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Int32Array, Int64Array, StringArray,
    TimestampMicrosecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use arrow::record_batch::RecordBatch;
use doris_emulator::{Emulator, EmulatorConfig};

const DDL: &str = "CREATE DATABASE bench; CREATE TABLE bench.t (
  `id` BIGINT NOT NULL, `qty` INT NULL, `amount` DECIMAL(18, 4) NULL, `dt` DATE NULL,
  `ts` DATETIME(6) NULL, `code` VARCHAR(16) NULL, `note` STRING NULL, `flag` BOOLEAN NULL
) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 8";

fn arrow_body(rows: usize) -> Result<Vec<u8>, arrow::error::ArrowError> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("qty", DataType::Int32, true),
        Field::new("amount", DataType::Decimal128(18, 4), true),
        Field::new("dt", DataType::Date32, true),
        Field::new("ts", DataType::Timestamp(TimeUnit::Microsecond, None), true),
        Field::new("code", DataType::Utf8, true),
        Field::new("note", DataType::Utf8, true),
        Field::new("flag", DataType::Boolean, true),
    ]));
    let mut body = Vec::new();
    let mut writer = arrow::ipc::writer::StreamWriter::try_new(&mut body, &schema)?;
    let batch_rows = 65_536;
    let mut start = 0;
    while start < rows {
        let n = batch_rows.min(rows - start);
        let ids: Vec<i64> = (start..start + n).map(|i| i as i64).collect();
        let null = |i: &i64| i % 10 == 7;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(ids.clone())),
            Arc::new(Int32Array::from_iter(
                ids.iter().map(|i| (!null(i)).then_some((i % 1000) as i32)),
            )),
            Arc::new(
                Decimal128Array::from_iter(
                    ids.iter()
                        .map(|i| (!null(i)).then_some(i128::from(*i) * 12_345)),
                )
                .with_precision_and_scale(18, 4)?,
            ),
            Arc::new(Date32Array::from_iter(
                ids.iter()
                    .map(|i| (!null(i)).then_some(19_000 + (i % 365) as i32)),
            )),
            Arc::new(TimestampMicrosecondArray::from_iter(ids.iter().map(|i| {
                (!null(i)).then_some(1_700_000_000_000_000 + i * 1_001)
            }))),
            Arc::new(StringArray::from_iter(
                ids.iter()
                    .map(|i| (!null(i)).then(|| format!("c{:07}", i % 5000))),
            )),
            Arc::new(StringArray::from_iter(ids.iter().map(|i| {
                (!null(i)).then(|| {
                    format!(
                        "note {i}: a longer free-text value that repeats {}",
                        "x".repeat((i % 60) as usize)
                    )
                })
            }))),
            Arc::new(BooleanArray::from_iter(
                ids.iter().map(|i| (!null(i)).then_some(i % 2 == 0)),
            )),
        ];
        writer.write(&RecordBatch::try_new(schema.clone(), columns)?)?;
        start += n;
    }
    writer.finish()?;
    drop(writer);
    Ok(body)
}

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> ExitCode {
    let (rows, runs) = (arg("--rows", 1_000_000), arg("--runs", 5).max(1));
    let body = match arrow_body(rows) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("ingest-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let path = std::env::temp_dir().join(format!("ingest-bench-{}.arrow", std::process::id()));
    if let Err(e) = std::fs::write(&path, &body) {
        eprintln!("ingest-bench: {e}");
        return ExitCode::FAILURE;
    }
    let emulator = match Emulator::start(EmulatorConfig::default()).await {
        Ok(e) => e,
        Err(e) => {
            eprintln!("ingest-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = emulator.execute(None, DDL) {
        eprintln!("ingest-bench: {e}");
        return ExitCode::FAILURE;
    }
    let url = format!(
        "http://{}/api/bench/t/_stream_load",
        emulator.be_http_addr()
    );
    let mut seconds = Vec::new();
    for run in 0..runs {
        let _ = emulator.execute(Some("bench"), "TRUNCATE TABLE t");
        let label = format!("label:bench_{run}");
        let (path, url) = (path.clone(), url.clone());
        let started = Instant::now();
        let out = tokio::task::spawn_blocking(move || {
            Command::new("curl")
                .args([
                    "-sS",
                    "-u",
                    "root:",
                    "-H",
                    "format:arrow",
                    "-H",
                    "Expect:100-continue",
                    "-H",
                    &label,
                    "-T",
                ])
                .arg(&path)
                .arg(&url)
                .output()
        })
        .await;
        let elapsed = started.elapsed().as_secs_f64();
        let Ok(Ok(out)) = out else {
            eprintln!("ingest-bench: curl did not run");
            return ExitCode::FAILURE;
        };
        let text = String::from_utf8_lossy(&out.stdout);
        if !text.contains("\"Status\": \"Success\"")
            || !text.contains(&format!("\"NumberLoadedRows\": {rows},"))
        {
            eprintln!("ingest-bench: the load did not succeed: {text}");
            return ExitCode::FAILURE;
        }
        seconds.push(elapsed);
    }
    let _ = std::fs::remove_file(&path);
    seconds.sort_by(f64::total_cmp);
    let mb = body.len() as f64 / 1e6;
    let median = seconds[seconds.len() / 2];
    println!(
        "{}",
        serde_json::json!({
            "workload": "emulator Arrow Stream Load ingest (DUPLICATE, 8 columns)",
            "rows": rows,
            "runs": runs,
            "body_mb": (mb * 10.0).round() / 10.0,
            "mb_per_s": {"median": (mb / median).round(), "min": (mb / seconds[seconds.len() - 1]).round(), "max": (mb / seconds[0]).round()},
            "rows_per_s_median": (rows as f64 / median).round(),
        })
    );
    ExitCode::SUCCESS
}
