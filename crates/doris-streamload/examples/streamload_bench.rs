//! `streamload_bench`: doris-streamload against `curl` uploading the same bytes.
//!
//! Starts the Doris emulator in process, builds `--rows` rows × 8 mixed columns, encodes
//! them once as the Arrow IPC body the client itself would send, then alternates, `--runs`
//! times: `curl --location-trusted -H Expect:100-continue -T body` through the FE (the
//! loopback limit for Stream Load, body pre-encoded), and `StreamLoadClient::load` of the
//! record batches (encoding while sending, one load), the table truncated before each.
//! Prints one JSON line with the medians, min and max, and the ratio curl time / our time
//! (≥ 1 means faster than curl). Run it in release mode: `cargo xtask bench`.

use std::process::Command;
use std::time::Instant;

use doris_emulator::bench_data::{DDL, mixed_batches};
use doris_emulator::{Emulator, EmulatorConfig};
use doris_streamload::{
    ClientConfig, Compression, Credentials, Format, Label, LoadOptions, StreamLoadClient, encode,
};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn stats(mut seconds: Vec<f64>) -> (f64, f64, f64) {
    seconds.sort_by(f64::total_cmp);
    (
        seconds[seconds.len() / 2],
        seconds[0],
        seconds[seconds.len() - 1],
    )
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (rows, runs) = (arg("--rows", 1_000_000), arg("--runs", 5).max(1));
    let batches = mixed_batches(rows)?;
    let schema = batches[0].schema();
    let (_, body) = encode(
        &schema,
        &batches,
        &Format::Arrow,
        Compression::None,
        None,
        Vec::new(),
    )?;
    let path = std::env::temp_dir().join(format!("streamload-bench-{}.arrow", std::process::id()));
    std::fs::write(&path, &body)?;
    let emulator = Emulator::start(EmulatorConfig::default()).await?;
    emulator.execute(None, DDL)?;
    let fe = format!("http://{}", emulator.fe_http_addr());
    let client =
        StreamLoadClient::new(ClientConfig::new(fe.parse()?, Credentials::new("root", "")))?;
    let options = LoadOptions::default();
    let (mut curl_s, mut ours_s) = (Vec::new(), Vec::new());
    for run in 0..runs {
        emulator.execute(Some("bench"), "TRUNCATE TABLE t")?;
        let url = format!("{fe}/api/bench/t/_stream_load");
        let label = format!("label:curl_{run}");
        let path = path.clone();
        let started = Instant::now();
        let out = tokio::task::spawn_blocking(move || {
            Command::new("curl")
                .args([
                    "-sS",
                    "--location-trusted",
                    "-u",
                    "root:",
                    "-H",
                    "format:arrow",
                ])
                .args([
                    "-H",
                    "Expect:100-continue",
                    "-H",
                    &label,
                    "-H",
                    "timezone:UTC",
                    "-T",
                ])
                .arg(&path)
                .arg(&url)
                .output()
        })
        .await??;
        curl_s.push(started.elapsed().as_secs_f64());
        let text = String::from_utf8_lossy(&out.stdout);
        if !text.contains(&format!("\"NumberLoadedRows\": {rows},")) {
            return Err(format!("curl's load did not succeed: {text}").into());
        }

        emulator.execute(Some("bench"), "TRUNCATE TABLE t")?;
        let started = Instant::now();
        let report = client
            .load(
                "bench",
                "t",
                &options,
                Some(Label::new(format!("ours_{run}"))?),
                schema.clone(),
                batches.clone(),
            )
            .await?;
        ours_s.push(started.elapsed().as_secs_f64());
        if report.response.map(|r| r.number_loaded_rows) != Some(rows as u64) {
            return Err("our load did not load every row".into());
        }
    }
    let _ = std::fs::remove_file(&path);
    let (curl, curl_min, curl_max) = stats(curl_s);
    let (ours, ours_min, ours_max) = stats(ours_s);
    let mb = body.len() as f64 / 1e6;
    let round = |x: f64| (x * 100.0).round() / 100.0;
    println!(
        "{}",
        serde_json::json!({
            "workload": "Stream Load of Arrow rows into the emulator (DUPLICATE, 8 columns), via the FE",
            "rows": rows,
            "runs": runs,
            "body_mb": round(mb),
            "curl_s": {"median": round(curl), "min": round(curl_min), "max": round(curl_max)},
            "doris_streamload_s": {"median": round(ours), "min": round(ours_min), "max": round(ours_max)},
            "ratio_curl_time_over_ours": round(curl / ours),
            "target": ">= 0.8",
        })
    );
    Ok(())
}
