//! `streamload_bench`: doris-streamload against `curl` uploading the same bytes.
//!
//! Starts the `doris-emulator` binary as its own process (`DORIS_EMULATOR_BIN`, or the
//! binary next to this example's folder), builds `--rows` rows × 8 mixed columns, encodes
//! them once as the Arrow IPC body the client itself would send, then alternates, `--runs`
//! times: `curl --location-trusted -H Expect:100-continue -T body` through the FE (the
//! loopback limit for Stream Load, body pre-encoded), and `StreamLoadClient::load` of the
//! record batches (encoding while sending, one load). Because the emulator runs in another
//! process, this process's peak RSS above its baseline (the source batches) is the client's
//! own memory: it is measured with `/proc/self/clear_refs` and `VmHWM`. Prints one JSON
//! line with medians, min and max, the ratio curl time / our time (≥ 1 means faster than
//! curl) and the client's peak memory. Run it in release mode: `cargo xtask bench`.

use std::process::Command;
use std::time::Instant;

use std::io::BufRead;

use doris_bench_data::{DDL, arg, mixed_batches};
use doris_streamload::{
    ClientConfig, Compression, Credentials, Format, Label, LoadOptions, StreamLoadClient, encode,
};

/// `VmRSS` and `VmHWM` of this process, in bytes.
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Resets `VmHWM` to the current RSS.
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the emulator binary with the benchmark table; returns it and its FE address.
fn start_emulator() -> Result<(Child, String), Box<dyn std::error::Error>> {
    let bin = match std::env::var_os("DORIS_EMULATOR_BIN") {
        Some(p) => std::path::PathBuf::from(p),
        None => std::env::current_exe()?
            .parent()
            .and_then(|examples| examples.parent())
            .map(|dir| dir.join("doris-emulator"))
            .ok_or("cannot locate doris-emulator")?,
    };
    let init = std::env::temp_dir().join(format!("streamload-bench-{}.sql", std::process::id()));
    std::fs::write(&init, DDL)?;
    let mut child = Child(
        Command::new(&bin)
            .args([
                "--fe-http-port",
                "0",
                "--be-http-port",
                "0",
                "--query-port",
                "0",
            ])
            .arg("--init-sql")
            .arg(&init)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?,
    );
    let stdout = child.0.stdout.take().ok_or("no stdout")?;
    let mut line = String::new();
    std::io::BufReader::new(stdout).read_line(&mut line)?;
    let ports: serde_json::Value = serde_json::from_str(&line)?;
    let fe = format!(
        "http://{}:{}",
        ports["host"].as_str().unwrap_or("127.0.0.1"),
        ports["fe_http_port"]
    );
    Ok((child, fe))
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
    let one_batch_mb = encode(
        &schema,
        &batches[..1],
        &Format::Arrow,
        Compression::None,
        None,
        std::io::sink(),
    )?
    .0
    .encoded_bytes as f64
        / 1e6;
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
    let body_len = body.len();
    drop(body);
    let (_emulator, fe) = start_emulator()?;
    let client =
        StreamLoadClient::new(ClientConfig::new(fe.parse()?, Credentials::new("root", "")))?;
    let options = LoadOptions::default();
    let (mut curl_s, mut ours_s, mut peaks) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs {
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

        reset_peak();
        let (baseline, _) = memory();
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
        let (_, peak) = memory();
        peaks.push(peak.saturating_sub(baseline) as f64 / 1e6);
        if report.response.map(|r| r.number_loaded_rows) != Some(rows as u64) {
            return Err("our load did not load every row".into());
        }
    }
    let _ = std::fs::remove_file(&path);
    let (curl, curl_min, curl_max) = stats(curl_s);
    let (ours, ours_min, ours_max) = stats(ours_s);
    let (peak, _, peak_max) = stats(peaks);
    let mb = body_len as f64 / 1e6;
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
            "client_peak_rss_above_source_mb": {"median": round(peak), "max": round(peak_max)},
            "one_input_batch_ipc_mb": round(one_batch_mb),
        })
    );
    Ok(())
}
