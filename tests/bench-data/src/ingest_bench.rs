//! `ingest-bench`: how fast the emulator ingests an Arrow-format Stream Load.
//!
//! Builds one Arrow IPC stream of `--rows` rows × 8 mixed columns (integers, decimal, date,
//! datetime(6), short and long strings, booleans, 10 % nulls), starts the emulator in
//! process, and uploads the body `--runs` times with `curl` straight to the BE (a new label
//! each time, the table truncated between runs). Prints one JSON line: the body size and
//! the median, min and max ingest rate in MB/s and rows/s. Run it in release mode
//! (`cargo xtask bench`).

use std::process::{Command, ExitCode};
use std::time::Instant;

use doris_bench_data::{DDL, arg, arrow_body};
use doris_emulator::{Emulator, EmulatorConfig};

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
