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
//! One module per job: `writes` (the writers), `reads` (the readers), `faults` (the
//! arming), `resources` (the samples, their peaks and the chart), `emulator` (the process),
//! `verdict` (the checks after the run and the report).
//!
//! At the end the faults are cleared; no transaction may be left PRECOMMITTED unless a
//! failed two-phase write reported it could not abort it; up to 100 committed atomic keys
//! are rerun and must each be recognised, writing nothing (the emulator forgets labels
//! beyond 20 newer transactions, so many are recognised by the ledger alone, and at least
//! one must be); then the table is read whole and every unit checked:
//! committed units complete and once, uncertain units whole or absent, no id twice; the
//! sessions must close and the resources be flat (the last quarter of the run no higher
//! than the second, within a small slack). It prints one JSON report and, with `--out`,
//! writes `soak.json`, `soak.csv` and `soak.svg` there. The exit code is 1 when a check
//! failed.

#![allow(clippy::unwrap_used)]

#[allow(dead_code, missing_docs)]
#[path = "../../../../../crates/doris-write/examples/atomic_write.rs"]
mod atomic_example;
mod emulator;
mod faults;
mod reads;
mod resources;
mod verdict;
mod writes;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use doris_read::{ConnectionSettings, Credentials};
use doris_streamload::{ClientConfig, StreamLoadClient};

use crate::emulator::start_emulator;
use crate::faults::fault_arming;
use crate::reads::reader;
use crate::resources::sampling;
use crate::writes::{Mode, writer};

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

/// Counters shared by the workers.
#[derive(Default)]
struct Tally {
    pub(crate) committed: Mutex<Vec<(i64, Mode)>>,
    pub(crate) uncertain: Mutex<Vec<(i64, Mode)>>,
    pub(crate) reads_ok: AtomicU64,
    pub(crate) reads_failed: AtomicU64,
    pub(crate) short_reads: Mutex<Vec<String>>,
    pub(crate) doubled_reads: AtomicU64,
    pub(crate) write_errors: Mutex<HashMap<&'static str, u64>>,
    /// Two-phase loads a failed write reported left pre-committed (its abort failed too):
    /// the only ones allowed to stay PRECOMMITTED (`TxnRef::describe` texts).
    pub(crate) left_precommitted: Mutex<Vec<String>>,
}

/// What every worker needs.
struct Context {
    pub(crate) settings: ConnectionSettings,
    pub(crate) fe_url: String,
    pub(crate) client: Arc<StreamLoadClient>,
    pub(crate) admin: reqwest::Client,
    pub(crate) next_unit: AtomicU64,
    pub(crate) stop: AtomicBool,
    pub(crate) tally: Tally,
}

impl Context {
    pub(crate) async fn admin(
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

    pub(crate) fn error(&self, what: &'static str) {
        *self
            .tally
            .write_errors
            .lock()
            .unwrap()
            .entry(what)
            .or_default() += 1;
    }
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
    let samples = samples.lock().unwrap().clone();
    let report = verdict::report(
        &ctx,
        &args,
        emulator.child.id(),
        started,
        &samples,
        (armed, fired),
    )
    .await;
    let text = serde_json::to_string_pretty(&report).unwrap();
    println!("{text}");
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out).unwrap();
        std::fs::write(out.join("soak.json"), &text).unwrap();
        resources::write_samples(out, &samples);
    }
    let _ = std::fs::remove_dir_all(&dir);
    drop(emulator);
    if report["failures"].as_array().is_some_and(|f| f.is_empty()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
