//! `soak`: reads and writes side by side against a Doris emulator process for N minutes,
//! with random faults armed all along, then checks that no row was lost or written twice
//! and that no resource grew (`cargo xtask soak --minutes N`; docs/reliability.md).
//!
//! ```text
//! soak [--minutes 2] [--seed N] [--out DIR] [--emulator PATH]
//! ```
//!
//! - Writers (one per mode: a default write with deterministic labels, a two-phase write,
//!   an exactly-once write under an idempotence key) each write numbered units of
//!   `UNIT_ROWS` rows, ids `unit * UNIT_ROWS ..`; a failed unit is retried (same labels,
//!   same key) where that is safe, and otherwise counted as uncertain.
//! - Readers read the whole table over MySQL (one query) and over Flight SQL (split by
//!   tablet, `DoGet` on each BE); every read that succeeds must hold every unit committed
//!   before it began, whole, and no id twice.
//! - A fault is armed every ~1.5 s (dropped answers, reset bodies, cut result streams,
//!   lost or held COMMITs, delays), from a seeded generator.
//! - Every 0.5 s: this process's file descriptors, threads and RSS, the emulator's, and the
//!   emulator's open MySQL sessions, Flight sessions and streams and BE loads.
//!
//! At the end the faults are cleared, the table is read whole and every unit checked:
//! committed units complete and once, uncertain units whole or absent, no id twice; the
//! sessions must close and the resources be flat (the last quarter of the run no higher
//! than the second, within a small slack). It prints one JSON report and, with `--out`,
//! writes `soak.json`, `soak.csv` and `soak.svg` there. The exit code is 1 when a check
//! failed.

#![allow(clippy::unwrap_used)]

#[allow(dead_code, missing_docs)]
#[path = "../../../../crates/doris-streamload/examples/atomic_write.rs"]
mod atomic_example;

use std::collections::HashMap;
use std::io::BufRead as _;
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::Int64Type;
use doris_plan::{DiscoveryPolicy, PlanEndpoint};
use doris_read::{
    BatchLimits, ConnectionSettings, Credentials, FlightSqlEndpoint, MySqlEndpoint, Split,
    TableReadOptions, Transport, plan_table_read,
};
use doris_streamload::{
    ClientConfig, LabelScheme, LoadOptions, Loader, LoaderConfig, StreamLoadClient,
};
use futures::StreamExt as _;
use rand::{Rng as _, SeedableRng as _};

const DB: &str = "soak";
const TABLE: &str = "events";
const UNIT_ROWS: i64 = 200;
const SAMPLE_EVERY: Duration = Duration::from_millis(500);
/// A writer's pause between units (the table grows ~1,000 units a minute, not as fast as
/// the emulator takes them).
const WRITE_PAUSE: Duration = Duration::from_millis(150);
/// Readers check the newest this many units (a filter pushed down): what a read returns
/// stays bounded however long the soak runs.
const READ_WINDOW: i64 = 300;
const FAULT_EVERY: Duration = Duration::from_millis(1500);

/// The faults the soak arms (emulator fault JSON). `publish_timeout` is left out: it
/// makes committed rows visible late by design, which a reader cannot tell from a short
/// read (the fault matrix covers it).
const FAULTS: &[&str] = &[
    r#"{"kind": "drop_after_commit"}"#,
    r#"{"kind": "reset_mid_body"}"#,
    r#"{"kind": "malformed_response"}"#,
    r#"{"kind": "truncated_response"}"#,
    r#"{"kind": "cut_result_stream", "rows": 50}"#,
    r#"{"kind": "cut_flight_stream", "rows": 50}"#,
    r#"{"kind": "drop_before_txn_commit"}"#,
    r#"{"kind": "drop_after_txn_commit"}"#,
    r#"{"kind": "hold_txn_commit", "ms": 300}"#,
    r#"{"kind": "delay", "ms": 200}"#,
];

/// How a unit's write ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Committed,
    /// The write failed in a way that may have loaded it: whole or absent, never partial
    /// or twice.
    Uncertain,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Mode {
    Default,
    TwoPhase,
    Atomic,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::TwoPhase => "two_phase",
            Self::Atomic => "atomic",
        }
    }
}

/// One resource sample.
#[derive(Debug, Clone, Default)]
struct Sample {
    seconds: f64,
    values: Vec<(&'static str, f64)>,
}

/// Counters shared by the workers.
#[derive(Default)]
struct Tally {
    committed: Mutex<Vec<(i64, Mode)>>,
    uncertain: Mutex<Vec<(i64, Mode)>>,
    reads_ok: AtomicU64,
    reads_failed: AtomicU64,
    short_reads: Mutex<Vec<String>>,
    doubled_reads: AtomicU64,
    write_errors: Mutex<HashMap<&'static str, u64>>,
}

struct Ports {
    fe_http: u16,
    query: u16,
    flight: u16,
}

struct Emulator {
    child: Child,
    ports: Ports,
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_emulator(bin: &PathBuf, dir: &std::path::Path) -> Emulator {
    let init = dir.join("init.sql");
    std::fs::write(
        &init,
        format!(
            "CREATE DATABASE {DB}; CREATE TABLE {DB}.{TABLE} (`id` BIGINT NOT NULL, \
             `name` VARCHAR(32) NULL) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 4;"
        ),
    )
    .unwrap();
    let mut child = Command::new(bin)
        .args([
            "--fe-http-port",
            "0",
            "--be-http-port",
            "0",
            "--query-port",
            "0",
            "--fe-flight-port",
            "0",
            "--be-flight-port",
            "0",
            "--init-sql",
        ])
        .arg(&init)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ports: serde_json::Value = serde_json::from_str(&line).unwrap();
    let port = |k: &str| ports[k].as_u64().unwrap() as u16;
    Emulator {
        ports: Ports {
            fe_http: port("fe_http_port"),
            query: port("query_port"),
            flight: port("fe_flight_port"),
        },
        child,
    }
}

/// What every worker needs.
struct Context {
    settings: ConnectionSettings,
    fe_url: String,
    client: Arc<StreamLoadClient>,
    admin: reqwest::Client,
    next_unit: AtomicU64,
    stop: AtomicBool,
    tally: Tally,
}

impl Context {
    async fn admin(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&str>,
    ) -> serde_json::Value {
        let mut request = self.admin.request(method, format!("{}{path}", self.fe_url));
        if let Some(body) = body {
            request = request.body(body.to_owned());
        }
        match request.send().await {
            Ok(answer) => answer
                .text()
                .await
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or(serde_json::Value::Null),
            Err(_) => serde_json::Value::Null,
        }
    }

    fn error(&self, what: &'static str) {
        *self
            .tally
            .write_errors
            .lock()
            .unwrap()
            .entry(what)
            .or_default() += 1;
    }
}

async fn write_unit(ctx: &Context, mode: Mode, unit: i64) -> Outcome {
    let batch = || atomic_example::sample(unit * UNIT_ROWS, UNIT_ROWS);
    match mode {
        Mode::Default => {
            // Deterministic labels: a rerun of the unit is refused by Doris, not doubled.
            for _ in 0..3 {
                let loader = Loader::new(
                    ctx.client.clone(),
                    DB,
                    TABLE,
                    LoadOptions::default(),
                    LoaderConfig {
                        labels: LabelScheme::Deterministic {
                            prefix: "soak".into(),
                            key: format!("u{unit}"),
                            partition: 0,
                        },
                        ..LoaderConfig::default()
                    },
                )
                .unwrap();
                match loader.load_all([batch()]).await {
                    Ok(_) => return Outcome::Committed,
                    Err(_) => ctx.error("default"),
                }
            }
            Outcome::Uncertain
        }
        Mode::TwoPhase => {
            let loader = Loader::new(
                ctx.client.clone(),
                DB,
                TABLE,
                LoadOptions {
                    two_phase_commit: true,
                    ..LoadOptions::default()
                },
                LoaderConfig {
                    labels: LabelScheme::Random {
                        prefix: "soak2pc".into(),
                    },
                    ..LoaderConfig::default()
                },
            )
            .unwrap();
            let summary = match loader.load_all([batch()]).await {
                Ok(summary) => summary,
                Err(_) => {
                    ctx.error("two_phase load");
                    return Outcome::Uncertain;
                }
            };
            match ctx.client.commit_all(DB, &summary).await {
                Ok(_) => Outcome::Committed,
                Err(_) => {
                    ctx.error("two_phase commit");
                    Outcome::Uncertain
                }
            }
        }
        Mode::Atomic => {
            let fe = ctx.fe_url.clone();
            let target = atomic_example::Target {
                fe_http: &fe,
                mysql: ("127.0.0.1", ctx.settings.mysql_port),
                user: "root",
                database: DB,
                table: TABLE,
            };
            // The same key again after a failure: it commits once, whatever the first
            // attempt did.
            for _ in 0..3 {
                match atomic_example::run(&target, &format!("u{unit}"), vec![batch()]).await {
                    Ok(_) => return Outcome::Committed,
                    Err(_) => ctx.error("atomic"),
                }
            }
            Outcome::Uncertain
        }
    }
}

async fn writer(ctx: Arc<Context>, mode: Mode) {
    while !ctx.stop.load(Ordering::SeqCst) {
        let unit = ctx.next_unit.fetch_add(1, Ordering::SeqCst) as i64;
        let outcome = write_unit(&ctx, mode, unit).await;
        let list = match outcome {
            Outcome::Committed => &ctx.tally.committed,
            Outcome::Uncertain => &ctx.tally.uncertain,
        };
        list.lock().unwrap().push((unit, mode));
        tokio::time::sleep(WRITE_PAUSE).await;
    }
}

/// The ids of units `from_unit` and later, read through `transport`, split by tablet or
/// not (the filter is pushed down).
async fn read_ids(
    ctx: &Context,
    transport: &Transport,
    split: bool,
    from_unit: i64,
) -> Result<Vec<i64>, String> {
    let mysql = MySqlEndpoint::from_settings(&ctx.settings);
    let options = TableReadOptions {
        columns: Some(vec!["id".into()]),
        filter: Some(doris_sql::Expr::col("id").gt_eq(doris_sql::Expr::lit(
            doris_sql::Literal::Int64(from_unit * UNIT_ROWS),
        ))),
        split: if split {
            Split::Auto {
                fe: PlanEndpoint::from_settings(&ctx.settings).map_err(|e| e.to_string())?,
                target_tasks: 4,
                policy: DiscoveryPolicy::Error,
            }
        } else {
            Split::Single
        },
        ..TableReadOptions::default()
    };
    let plan = plan_table_read(&mysql, DB, TABLE, &options)
        .await
        .map_err(|e| e.to_string())?;
    let mut ids = Vec::new();
    for sql in plan.tasks {
        let mut stream = transport
            .read([sql], plan.schema.clone(), BatchLimits::default())
            .await
            .map_err(|e| e.to_string())?;
        while let Some(batch) = stream.next().await {
            let batch: RecordBatch = batch.map_err(|e| e.to_string())?;
            ids.extend(batch.column(0).as_primitive::<Int64Type>().values().iter());
        }
    }
    Ok(ids)
}

/// Per unit, how many rows of it `ids` holds; and how many ids appear more than once.
fn per_unit(ids: &[i64]) -> (HashMap<i64, i64>, u64) {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    let doubled = sorted.windows(2).filter(|w| w[0] == w[1]).count() as u64;
    let mut units: HashMap<i64, i64> = HashMap::new();
    sorted.dedup();
    for id in sorted {
        *units.entry(id / UNIT_ROWS).or_default() += 1;
    }
    (units, doubled)
}

async fn reader(ctx: Arc<Context>, flight: bool) {
    let transport = if flight {
        Transport::Flight(FlightSqlEndpoint::from_settings(&ctx.settings).unwrap())
    } else {
        Transport::MySql(MySqlEndpoint::from_settings(&ctx.settings))
    };
    while !ctx.stop.load(Ordering::SeqCst) {
        let from_unit = (ctx.next_unit.load(Ordering::SeqCst) as i64 - READ_WINDOW).max(0);
        let before: Vec<i64> = ctx
            .tally
            .committed
            .lock()
            .unwrap()
            .iter()
            .map(|(u, _)| *u)
            .filter(|u| *u >= from_unit)
            .collect();
        match read_ids(&ctx, &transport, flight, from_unit).await {
            Ok(ids) => {
                ctx.tally.reads_ok.fetch_add(1, Ordering::SeqCst);
                let (units, doubled) = per_unit(&ids);
                ctx.tally
                    .doubled_reads
                    .fetch_add(u64::from(doubled > 0), Ordering::SeqCst);
                for unit in before {
                    let held = units.get(&unit).copied().unwrap_or(0);
                    if held != UNIT_ROWS {
                        ctx.tally.short_reads.lock().unwrap().push(format!(
                            "{} read held {held} of unit {unit}'s {UNIT_ROWS} rows",
                            if flight { "flight" } else { "mysql" }
                        ));
                    }
                }
            }
            Err(_) => {
                ctx.tally.reads_failed.fetch_add(1, Ordering::SeqCst);
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn fault_arming(ctx: Arc<Context>, seed: u64) -> u64 {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut armed = 0;
    while !ctx.stop.load(Ordering::SeqCst) {
        tokio::time::sleep(FAULT_EVERY).await;
        let fault = FAULTS[rng.random_range(0..FAULTS.len())];
        ctx.admin(reqwest::Method::POST, "/_emulator/faults", Some(fault))
            .await;
        armed += 1;
    }
    armed
}

/// `Threads`, `VmRSS` (MiB) and open file descriptors of process `pid`.
fn process(pid: &str) -> (f64, f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| -> f64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count() as f64)
        .unwrap_or(0.0);
    (field("Threads:"), field("VmRSS:") / 1024.0, fds)
}

async fn sample(ctx: &Context, emulator_pid: u32, started: Instant) -> Sample {
    let (threads, rss, fds) = process("self");
    let (e_threads, e_rss, e_fds) = process(&emulator_pid.to_string());
    let wire = ctx
        .admin(reqwest::Method::GET, "/_emulator/wire", None)
        .await;
    let now = |k: &str| wire[k]["now"].as_f64().unwrap_or(0.0);
    Sample {
        seconds: started.elapsed().as_secs_f64(),
        values: vec![
            ("client_fds", fds),
            ("client_threads", threads),
            ("client_rss_mib", rss),
            ("emulator_fds", e_fds),
            ("emulator_threads", e_threads),
            ("emulator_rss_mib", e_rss),
            ("mysql_sessions", now("mysql_connections")),
            (
                "flight_sessions",
                wire["flight_sessions"].as_f64().unwrap_or(0.0),
            ),
            ("flight_streams", now("flight_streams")),
            ("be_loads", now("be_loads")),
        ],
    }
}

async fn sampling(ctx: Arc<Context>, pid: u32, started: Instant, out: Arc<Mutex<Vec<Sample>>>) {
    while !ctx.stop.load(Ordering::SeqCst) {
        let s = sample(&ctx, pid, started).await;
        out.lock().unwrap().push(s);
        tokio::time::sleep(SAMPLE_EVERY).await;
    }
}

/// The highest value of `metric` over the samples in `[from, to)` of the run (fractions).
fn peak(samples: &[Sample], metric: &str, from: f64, to: f64) -> f64 {
    let end = samples.last().map_or(0.0, |s| s.seconds);
    samples
        .iter()
        .filter(|s| s.seconds >= from * end && s.seconds < to * end)
        .filter_map(|s| s.values.iter().find(|(k, _)| *k == metric).map(|(_, v)| *v))
        .fold(0.0, f64::max)
}

/// The growth limits: a resource may not end higher than it was in the run's second
/// quarter by more than this (absolute, and for memory also relative).
const FLAT: &[(&str, f64, f64)] = &[
    ("client_fds", 16.0, 1.0),
    ("client_threads", 8.0, 1.0),
    ("client_rss_mib", 48.0, 1.5),
    ("emulator_fds", 16.0, 1.0),
    ("emulator_threads", 8.0, 1.0),
    ("mysql_sessions", 8.0, 1.0),
    ("flight_sessions", 2.0, 1.0),
    ("flight_streams", 8.0, 1.0),
];

fn svg(samples: &[Sample]) -> String {
    let (w, h, pad) = (900.0, 60.0, 4.0);
    let end = samples.last().map_or(1.0, |s| s.seconds.max(1.0));
    let metrics: Vec<&str> = samples
        .first()
        .map(|s| s.values.iter().map(|(k, _)| *k).collect())
        .unwrap_or_default();
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"11\">\n",
        w + 200.0,
        (h + 20.0) * metrics.len() as f64
    );
    for (row, metric) in metrics.iter().enumerate() {
        let top = row as f64 * (h + 20.0);
        let values: Vec<(f64, f64)> = samples
            .iter()
            .filter_map(|s| {
                s.values
                    .iter()
                    .find(|(k, _)| k == metric)
                    .map(|(_, v)| (s.seconds, *v))
            })
            .collect();
        let max = values.iter().map(|(_, v)| *v).fold(1.0, f64::max);
        let points: Vec<String> = values
            .iter()
            .map(|(t, v)| {
                format!(
                    "{:.1},{:.1}",
                    t / end * w,
                    top + pad + (h - 2.0 * pad) * (1.0 - v / max)
                )
            })
            .collect();
        out.push_str(&format!(
            "<text x=\"{}\" y=\"{}\">{metric} (max {max:.0})</text>\n<polyline fill=\"none\" stroke=\"#1f77b4\" points=\"{}\"/>\n",
            w + 10.0,
            top + h / 2.0,
            points.join(" ")
        ));
    }
    out.push_str("</svg>\n");
    out
}

struct Args {
    minutes: f64,
    seed: u64,
    out: Option<PathBuf>,
    emulator: PathBuf,
}

fn args() -> Args {
    let mut args = Args {
        minutes: 2.0,
        seed: 7,
        out: None,
        emulator: std::env::current_exe()
            .unwrap()
            .with_file_name("doris-emulator"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--minutes" => args.minutes = value.parse().expect("--minutes: a number"),
            "--seed" => args.seed = value.parse().expect("--seed: an integer"),
            "--out" => args.out = Some(value.into()),
            "--emulator" => args.emulator = value.into(),
            other => panic!("unknown flag {other}"),
        }
    }
    args
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() -> ExitCode {
    let args = args();
    let dir = std::env::temp_dir().join(format!("daft-doris-soak-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let emulator = start_emulator(&args.emulator, &dir);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut settings = ConnectionSettings::new("127.0.0.1", Credentials::new("root", "")).unwrap();
    settings.mysql_port = emulator.ports.query;
    settings.http_port = emulator.ports.fe_http;
    settings.flight_port = emulator.ports.flight;
    let fe_url = format!("http://127.0.0.1:{}", emulator.ports.fe_http);
    let client = Arc::new(
        StreamLoadClient::new(ClientConfig::new(
            fe_url.parse().unwrap(),
            Credentials::new("root", ""),
        ))
        .unwrap(),
    );
    let ctx = Arc::new(Context {
        settings,
        fe_url,
        client,
        admin: reqwest::Client::builder().no_proxy().build().unwrap(),
        next_unit: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        tally: Tally::default(),
    });
    let started = Instant::now();
    let samples = Arc::new(Mutex::new(Vec::new()));
    // One task polls every worker (sqlx's futures are not provably `Send`, so they are
    // not spawned); the clients' own tasks run on the runtime's threads.
    let writers = futures::future::join_all(
        [Mode::Default, Mode::TwoPhase, Mode::Atomic].map(|mode| writer(ctx.clone(), mode)),
    );
    let readers =
        futures::future::join_all([false, true].map(|flight| reader(ctx.clone(), flight)));
    let stopper = async {
        tokio::time::sleep(Duration::from_secs_f64(args.minutes * 60.0)).await;
        ctx.stop.store(true, Ordering::SeqCst);
    };
    let (_, _, _, armed, ()) = tokio::join!(
        stopper,
        writers,
        readers,
        fault_arming(ctx.clone(), args.seed),
        sampling(ctx.clone(), emulator.child.id(), started, samples.clone()),
    );
    let fired = ctx
        .admin(reqwest::Method::GET, "/_emulator/faults", None)
        .await["fired"]
        .as_array()
        .map_or(0, Vec::len);
    ctx.admin(reqwest::Method::DELETE, "/_emulator/faults", None)
        .await;

    // Quiet: every session the workers opened must close.
    let mut last = sample(&ctx, emulator.child.id(), started).await;
    for _ in 0..40 {
        let open = |k: &str| {
            last.values
                .iter()
                .find(|(n, _)| *n == k)
                .map_or(0.0, |(_, v)| *v)
        };
        if open("mysql_sessions") == 0.0 && open("flight_streams") == 0.0 && open("be_loads") == 0.0
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
        last = sample(&ctx, emulator.child.id(), started).await;
    }
    let mut failures: Vec<String> = Vec::new();
    for name in ["mysql_sessions", "flight_streams", "be_loads"] {
        let open = last
            .values
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0.0, |(_, v)| *v);
        if open > 0.0 {
            failures.push(format!("{name}: {open} still open after the run"));
        }
    }

    // The table, whole, without faults.
    let mysql = Transport::MySql(MySqlEndpoint::from_settings(&ctx.settings));
    let mut table = Err(String::new());
    for _ in 0..5 {
        table = read_ids(&ctx, &mysql, false, 0).await;
        if table.is_ok() {
            break;
        }
    }
    let ids = table.unwrap_or_else(|e| panic!("the final read failed: {e}"));
    let (units, doubled_rows) = per_unit(&ids);
    let committed = ctx.tally.committed.lock().unwrap().clone();
    let uncertain = ctx.tally.uncertain.lock().unwrap().clone();
    let mut lost_rows = 0;
    for (unit, mode) in &committed {
        let held = units.get(unit).copied().unwrap_or(0);
        if held != UNIT_ROWS {
            lost_rows += UNIT_ROWS - held;
            failures.push(format!(
                "{} unit {unit}: {held} of {UNIT_ROWS} rows",
                mode.name()
            ));
        }
    }
    for (unit, mode) in &uncertain {
        let held = units.get(unit).copied().unwrap_or(0);
        if held != 0 && held != UNIT_ROWS {
            failures.push(format!(
                "{} unit {unit} (uncertain): {held} of {UNIT_ROWS} rows, neither whole nor absent",
                mode.name()
            ));
        }
    }
    let attempted = ctx.next_unit.load(Ordering::SeqCst) as i64;
    let stray = units.keys().filter(|u| **u >= attempted).count();
    if stray > 0 {
        failures.push(format!("{stray} units present that no writer wrote"));
    }
    if doubled_rows > 0 {
        failures.push(format!("{doubled_rows} ids held twice"));
    }
    let short = ctx.tally.short_reads.lock().unwrap().clone();
    failures.extend(short.iter().take(5).cloned());
    let doubled_reads = ctx.tally.doubled_reads.load(Ordering::SeqCst);
    if doubled_reads > 0 {
        failures.push(format!("{doubled_reads} reads saw an id twice"));
    }
    let by_mode = |m: Mode| committed.iter().filter(|(_, mode)| *mode == m).count();
    for mode in [Mode::Default, Mode::TwoPhase, Mode::Atomic] {
        if by_mode(mode) == 0 {
            failures.push(format!("no {} write committed", mode.name()));
        }
    }
    let reads_ok = ctx.tally.reads_ok.load(Ordering::SeqCst);
    if reads_ok == 0 {
        failures.push("no read succeeded".into());
    }
    if fired == 0 {
        failures.push("no fault fired".into());
    }
    let samples = samples.lock().unwrap().clone();
    let mut resources = serde_json::Map::new();
    for (metric, slack, factor) in FLAT {
        let early = peak(&samples, metric, 0.25, 0.5);
        let late = peak(&samples, metric, 0.75, 1.01);
        if late > early * factor + slack {
            failures.push(format!(
                "{metric} grew: peak {early} in the second quarter, {late} in the last"
            ));
        }
        resources.insert(
            (*metric).into(),
            serde_json::json!({"second_quarter_peak": early, "last_quarter_peak": late}),
        );
    }
    resources.insert(
        "emulator_rss_mib".into(),
        serde_json::json!({
            "second_quarter_peak": peak(&samples, "emulator_rss_mib", 0.25, 0.5),
            "last_quarter_peak": peak(&samples, "emulator_rss_mib", 0.75, 1.01),
            "note": "holds the table, which grows with every unit written"
        }),
    );
    let report = serde_json::json!({
        "minutes": args.minutes,
        "seed": args.seed,
        "units": {
            "attempted": attempted,
            "committed": {
                "default": by_mode(Mode::Default),
                "two_phase": by_mode(Mode::TwoPhase),
                "atomic": by_mode(Mode::Atomic),
            },
            "uncertain": uncertain.len(),
            "rows_in_table": ids.len(),
        },
        "write_errors_retried_or_uncertain": *ctx.tally.write_errors.lock().unwrap(),
        "reads": {
            "ok": reads_ok,
            "failed_loudly": ctx.tally.reads_failed.load(Ordering::SeqCst),
            "short": short.len(),
            "with_an_id_twice": doubled_reads,
        },
        "faults": {"armed": armed, "fired": fired},
        "rows": {"lost": lost_rows, "duplicated": doubled_rows},
        "resources": resources,
        "failures": failures,
    });
    let text = serde_json::to_string_pretty(&report).unwrap();
    println!("{text}");
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out).unwrap();
        std::fs::write(out.join("soak.json"), &text).unwrap();
        let mut csv = String::from("seconds");
        if let Some(first) = samples.first() {
            for (k, _) in &first.values {
                csv.push(',');
                csv.push_str(k);
            }
        }
        csv.push('\n');
        for s in &samples {
            csv.push_str(&format!("{:.1}", s.seconds));
            for (_, v) in &s.values {
                csv.push_str(&format!(",{v}"));
            }
            csv.push('\n');
        }
        std::fs::write(out.join("soak.csv"), csv).unwrap();
        std::fs::write(out.join("soak.svg"), svg(&samples)).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
    drop(emulator);
    if report["failures"].as_array().is_some_and(|f| f.is_empty()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_held_twice_or_partly_is_seen() {
        let mut ids: Vec<i64> = (0..UNIT_ROWS).collect();
        ids.push(3);
        ids.extend(UNIT_ROWS..UNIT_ROWS + 10);
        let (units, doubled) = per_unit(&ids);
        assert_eq!(doubled, 1);
        assert_eq!(units[&0], UNIT_ROWS);
        assert_eq!(units[&1], 10);
    }

    #[test]
    fn growth_is_measured_between_the_second_and_the_last_quarter() {
        let samples: Vec<Sample> = (0..100)
            .map(|i| Sample {
                seconds: f64::from(i),
                values: vec![("client_fds", f64::from(20 + i / 10))],
            })
            .collect();
        assert_eq!(peak(&samples, "client_fds", 0.25, 0.5), 24.0);
        assert_eq!(peak(&samples, "client_fds", 0.75, 1.01), 29.0);
    }
}
