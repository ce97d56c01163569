//! Developer automation for the daft-doris workspace.
//!
//! ```text
//! cargo xtask ci                 fmt, clippy -D warnings, rustdoc -D warnings, Rust tests, ruff, pytest
//! cargo xtask demo               the main job on the embedded default (see README)
//! cargo xtask bench [--quick]    release-mode benchmarks (emulator ingest; doris-streamload vs curl)
//! cargo xtask fuzz [SECONDS]     build and run every doris-sql fuzz target (needs cargo-fuzz)
//! ```
//!
//! Every step runs with the caller's `CARGO_TARGET_DIR`, so CI and a developer's session
//! share one warm build folder outside the checkout.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

/// The fuzz targets of `crates/doris-sql/fuzz`.
const FUZZ_TARGETS: [&str; 3] = ["doris_type", "show_create", "trusted_where"];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("demo") => demo(),
        Some("fuzz") => fuzz(args.get(1).map(String::as_str)),
        Some("bench") => bench(args.iter().any(|a| a == "--quick")),
        _ => {
            eprintln!("usage: cargo xtask <ci | demo | bench [--quick] | fuzz [SECONDS]>");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (the parent of this crate's folder).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

/// Runs one step, printing its name and duration; a failing step stops the run.
fn step(name: &str, mut cmd: Command) -> Result<(), String> {
    println!("==> {name}");
    let started = Instant::now();
    let status = cmd
        .status()
        .map_err(|e| format!("{name}: could not start: {e}"))?;
    println!("<== {name}: {:.1}s", started.elapsed().as_secs_f64());
    if status.success() {
        Ok(())
    } else {
        Err(format!("{name} failed ({status})"))
    }
}

/// Runs a `cargo test` step, echoing its output and adding up its `test result:` lines.
fn counted_step(name: &str, mut cmd: Command) -> Result<(u64, u64), String> {
    use std::io::{BufRead, BufReader};
    println!("==> {name}");
    let started = Instant::now();
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("{name}: could not start: {e}"))?;
    let (mut passed, mut failed) = (0, 0);
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            println!("{line}");
            if let Some(rest) = line.strip_prefix("test result: ") {
                let count = |word: &str| {
                    rest.split(';')
                        .find_map(|part| part.trim().strip_suffix(word))
                        .and_then(|n| n.trim().rsplit(' ').next()?.parse::<u64>().ok())
                        .unwrap_or(0)
                };
                passed += count(" passed");
                failed += count(" failed");
            }
        }
    }
    let status = child.wait().map_err(|e| format!("{name}: {e}"))?;
    println!("<== {name}: {:.1}s", started.elapsed().as_secs_f64());
    if status.success() {
        Ok((passed, failed))
    } else {
        Err(format!(
            "{name} failed ({status}); {passed} passed, {failed} failed"
        ))
    }
}

/// The project's Python: `DAFT_DORIS_PYTHON`, else the venv `.ci/run` creates.
fn python() -> Result<PathBuf, String> {
    let python = std::env::var("DAFT_DORIS_PYTHON").map_or_else(
        |_| PathBuf::from("/var/tmp/daft-doris-venv/bin/python"),
        PathBuf::from,
    );
    if python.exists() {
        Ok(python)
    } else {
        Err(format!(
            "no Python environment at {}: run `bash .ci/run` once (it creates the venv) or set DAFT_DORIS_PYTHON",
            python.display()
        ))
    }
}

/// ruff, then the pytest suite; returns pytest's passed and failed counts.
fn python_tests() -> Result<(u64, u64), String> {
    let python = python()?;
    let mut lint = Command::new(&python);
    lint.current_dir(root())
        .args(["-m", "ruff", "check", "tests/python"]);
    step("ruff check", lint)?;
    let mut format = Command::new(&python);
    format
        .current_dir(root())
        .args(["-m", "ruff", "format", "--check", "tests/python"]);
    step("ruff format --check", format)?;
    let target =
        std::env::var("CARGO_TARGET_DIR").map_or_else(|_| root().join("target"), PathBuf::from);
    let mut pytest = Command::new(&python);
    pytest
        .current_dir(root())
        .env("DORIS_EMULATOR_BIN", target.join("debug/doris-emulator"))
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/python",
        ]);
    println!("==> python tests");
    let started = Instant::now();
    let out = pytest
        .output()
        .map_err(|e| format!("python tests: could not start: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    print!("{text}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    println!("<== python tests: {:.1}s", started.elapsed().as_secs_f64());
    // pytest's summary: "3 passed in 0.4s" or "1 failed, 2 passed in 0.5s".
    let summary = text.lines().last().unwrap_or_default();
    let count = |word: &str| {
        summary
            .split([',', ' '])
            .collect::<Vec<_>>()
            .windows(2)
            .find(|w| w[1] == word)
            .and_then(|w| w[0].parse::<u64>().ok())
            .unwrap_or(0)
    };
    let (passed, failed) = (
        count("passed"),
        count("failed") + count("errors") + count("error"),
    );
    if !out.status.success() {
        return Err(format!(
            "python tests failed: {passed} passed, {failed} failed"
        ));
    }
    Ok((passed, failed))
}

fn ci() -> Result<(), String> {
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--check"]);
    step("rustfmt", fmt)?;
    let mut clippy = cargo();
    clippy.args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]);
    step("clippy", clippy)?;
    let mut doc = cargo();
    doc.args(["doc", "--workspace", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings");
    step("rustdoc (broken links and markup are errors)", doc)?;
    let mut test = cargo();
    test.args(["test", "--workspace"]);
    let (rust_passed, rust_failed) = counted_step("rust tests", test)?;
    let (py_passed, py_failed) = python_tests()?;
    let (passed, failed) = (rust_passed + py_passed, rust_failed + py_failed);
    // One closing line that CI reads, whatever runners produced the counts.
    println!("tests: {passed} passed, {failed} failed");
    if failed > 0 {
        return Err(format!("{failed} tests failed"));
    }
    Ok(())
}

fn demo() -> Result<(), String> {
    // The part of the main job that exists today, end to end on the embedded default:
    // the Doris emulator, a Stream Load with curl, tablet planning through `_query_plan`,
    // the statements doris-sql builds for each read task, and the split read itself over
    // the MySQL protocol (doris-read's `read_table` example). The Python package
    // (`read_doris`/`write_doris`) replaces these steps when it lands.
    let mut build = cargo();
    build.args([
        "build",
        "--quiet",
        "-p",
        "doris-emulator",
        "--bin",
        "doris-emulator",
        "-p",
        "doris-read",
        "--example",
        "read_table",
    ]);
    step("demo: build the Doris emulator and the reader", build)?;
    let target =
        std::env::var("CARGO_TARGET_DIR").map_or_else(|_| root().join("target"), PathBuf::from);
    let dir = std::env::temp_dir().join(format!("daft-doris-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let init = dir.join("init.sql");
    std::fs::write(
        &init,
        "CREATE DATABASE analytics;
         CREATE TABLE analytics.events (
           `event_id` BIGINT NOT NULL, `name` VARCHAR(32) NULL, `score` INT NULL, `dt` DATE NOT NULL
         ) DUPLICATE KEY(`event_id`)
         PARTITION BY RANGE(`dt`) (PARTITION p1 VALUES [(\"2024-01-01\"), (\"2024-02-01\")),
                                   PARTITION p2 VALUES [(\"2024-02-01\"), (\"2024-03-01\")))
         DISTRIBUTED BY HASH(`event_id`) BUCKETS 2;",
    )
    .map_err(|e| e.to_string())?;
    let mut child = Command::new(target.join("debug/doris-emulator"))
        .args([
            "--fe-http-port",
            "0",
            "--be-http-port",
            "0",
            "--query-port",
            "0",
            "--init-sql",
        ])
        .arg(&init)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the emulator: {e}"))?;
    let result = demo_with_emulator(&mut child, &dir, &target);
    let _ = child.kill();
    let _ = child.wait();
    result
}

fn demo_with_emulator(
    child: &mut std::process::Child,
    dir: &Path,
    target: &Path,
) -> Result<(), String> {
    use std::io::BufRead as _;
    let mut line = String::new();
    let stdout = child.stdout.take().ok_or("no emulator output")?;
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    let ports: serde_json::Value =
        serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))?;
    let fe = format!("127.0.0.1:{}", ports["fe_http_port"]);
    println!("Doris emulator: {}", line.trim());

    let csv = dir.join("events.csv");
    std::fs::write(&csv, "1\talice\t91\t2024-01-05\n2\tbob\t70\t2024-01-20\n3\ta_carol\t85\t2024-02-02\n4\tdave\t\\N\t2024-02-14\n")
        .map_err(|e| e.to_string())?;
    let load = Command::new("curl")
        .args([
            "-sS",
            "--location-trusted",
            "-u",
            "root:",
            "-H",
            "Expect:100-continue",
            "-H",
            "label:demo_1",
            "-T",
        ])
        .arg(&csv)
        .arg(format!("http://{fe}/api/analytics/events/_stream_load"))
        .output()
        .map_err(|e| format!("curl: {e}"))?;
    let answer: serde_json::Value =
        serde_json::from_slice(&load.stdout).map_err(|e| e.to_string())?;
    println!(
        "Stream Load (curl, FE 307 -> BE): Status {}, {} rows loaded, txn {}",
        answer["Status"], answer["NumberLoadedRows"], answer["TxnId"]
    );

    // Filter pushdown: what goes to Doris and what stays with the engine.
    use doris_sql::{Expr, Literal, SelectBuilder, TableRef, translate_filter};
    let filter = Expr::col("score")
        .gt_eq(Expr::lit(Literal::Int64(80)))
        .and(Expr::col("name").starts_with("a"))
        .and(Expr::col("dt").gt_eq(Expr::lit(Literal::Date(
            "2024-02-01".parse().map_err(|e| format!("{e}"))?,
        ))));
    let translation = translate_filter(&filter);
    let table = TableRef::new("analytics", "events").map_err(|e| e.to_string())?;
    let planning = SelectBuilder::new(table.clone())
        .columns(["event_id", "name", "score", "dt"])
        .filter(&translation)
        .build()
        .map_err(|e| e.to_string())?;
    println!("planning SQL: {planning}");
    let plan = Command::new("curl")
        .args(["-sS", "-u", "root:", "-X", "POST", "-d"])
        .arg(serde_json::json!({ "sql": planning }).to_string())
        .arg(format!("http://{fe}/api/analytics/events/_query_plan"))
        .output()
        .map_err(|e| format!("curl: {e}"))?;
    let plan: serde_json::Value =
        serde_json::from_slice(&plan.stdout).map_err(|e| e.to_string())?;
    let tablets: Vec<u64> = plan["data"]["partitions"]
        .as_object()
        .ok_or_else(|| format!("no partitions in {plan}"))?
        .keys()
        .filter_map(|k| k.parse().ok())
        .collect();
    println!(
        "_query_plan: {} tablets after partition pruning: {tablets:?}",
        tablets.len()
    );
    for group in tablets.chunks(1) {
        let sql = SelectBuilder::new(table.clone())
            .columns(["event_id", "name", "score", "dt"])
            .tablets(group.iter().copied())
            .filter(&translation)
            .build()
            .map_err(|e| e.to_string())?;
        println!("read task: {sql}");
    }
    // The read itself: schema from DESC, `score >= 80` pushed, tablets planned by the FE,
    // one task per tablet group, rows streamed over the MySQL protocol into Arrow.
    let status = Command::new(target.join("debug/examples/read_table"))
        .args([
            "127.0.0.1",
            &ports["query_port"].to_string(),
            &format!("http://{fe}"),
        ])
        .args(["analytics", "events", "score", "80"])
        .status()
        .map_err(|e| format!("read_table: {e}"))?;
    if !status.success() {
        return Err(format!("read_table failed: {status}"));
    }
    Ok(())
}

fn bench(quick: bool) -> Result<(), String> {
    // Release builds get their own folder so they never evict the debug test build.
    let shared = std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| "/var/tmp/daft-doris-target".to_owned());
    let (rows, runs) = if quick {
        ("200000", "3")
    } else {
        ("1000000", "5")
    };
    let release = format!("{shared}-release");
    // The benchmarks need no SQL engine: building the emulator without DataFusion keeps
    // the release build minutes shorter.
    let mut build = cargo();
    build.env("CARGO_TARGET_DIR", &release).args([
        "build",
        "--release",
        "-p",
        "doris-emulator",
        "--no-default-features",
        "--bin",
        "doris-emulator",
        "--bin",
        "ingest-bench",
    ]);
    step("bench: release build of the emulator", build)?;
    let mut ingest = Command::new(format!("{release}/release/ingest-bench"));
    ingest.args(["--rows", rows, "--runs", runs]);
    step("bench: emulator Arrow ingest", ingest)?;
    let mut client = cargo();
    client
        .env("CARGO_TARGET_DIR", &release)
        .env(
            "DORIS_EMULATOR_BIN",
            format!("{release}/release/doris-emulator"),
        )
        .args([
            "run",
            "--quiet",
            "--release",
            "-p",
            "doris-streamload",
            "--example",
            "streamload_bench",
            "--",
        ])
        .args(["--rows", rows, "--runs", runs]);
    step("bench: doris-streamload vs curl", client)
}

fn fuzz(seconds: Option<&str>) -> Result<(), String> {
    let seconds: u32 = seconds
        .unwrap_or("30")
        .parse()
        .map_err(|_| "fuzz takes a number of seconds per target".to_owned())?;
    let fuzz_dir = root().join("crates/doris-sql/fuzz");
    // Sanitizer flags would invalidate the shared build folder: fuzz builds get their own.
    let shared = std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| "/var/tmp/daft-doris-target".to_owned());
    let fuzz_target_dir = format!("{shared}-fuzz");
    for target in FUZZ_TARGETS {
        let mut cmd = cargo();
        cmd.current_dir(&fuzz_dir)
            // cargo-fuzz passes nightly -Z flags; the machine's one toolchain is stable.
            .env("RUSTC_BOOTSTRAP", "1")
            .env("CARGO_TARGET_DIR", &fuzz_target_dir)
            .args([
                "fuzz",
                "run",
                target,
                "--",
                &format!("-max_total_time={seconds}"),
            ]);
        step(&format!("fuzz {target} for {seconds}s"), cmd)?;
    }
    Ok(())
}
