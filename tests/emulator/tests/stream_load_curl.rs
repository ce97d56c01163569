//! Stream Load conformance, checked with `curl` (a client nobody here wrote) used exactly as
//! the Doris documentation shows it: `curl --location-trusted -u user:pw -H "label:…"
//! -H "Expect:100-continue" -T file http://fe:8030/api/db/tbl/_stream_load`.

// Test code: a failed unwrap is a failed test, with the value in the message.
#![allow(clippy::unwrap_used)]

use std::io::Write as _;
use std::path::PathBuf;
use std::process::Command;

mod common;
use std::sync::Arc;

use arrow::array::{Array, AsArray, Int32Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Int32Type, Int64Type, Schema};
use arrow::record_batch::RecordBatch;
use doris_emulator::{Emulator, EmulatorConfig};
use serde_json::Value;

const DDL: &str = "
CREATE DATABASE demo;
USE demo;
CREATE TABLE dup (
  `id` INT NOT NULL,
  `name` VARCHAR(20) NULL,
  `score` BIGINT NULL
) ENGINE=OLAP DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 4;
CREATE TABLE uniq (
  `k` INT NOT NULL,
  `v` VARCHAR(20) NULL,
  `seq` INT NULL
) UNIQUE KEY(`k`) DISTRIBUTED BY HASH(`k`) BUCKETS 2
PROPERTIES (\"enable_unique_key_merge_on_write\" = \"true\", \"function_column.sequence_col\" = \"seq\");
CREATE TABLE agg (
  `k` INT NOT NULL,
  `total` BIGINT SUM NULL,
  `hi` INT MAX NULL,
  `lo` INT MIN NULL,
  `last` VARCHAR(10) REPLACE NULL,
  `last_nn` VARCHAR(10) REPLACE_IF_NOT_NULL NULL
) AGGREGATE KEY(`k`) DISTRIBUTED BY HASH(`k`) BUCKETS 2;
CREATE TABLE parted (
  `dt` DATE NOT NULL,
  `v` INT NULL
) DUPLICATE KEY(`dt`)
PARTITION BY RANGE(`dt`)
(PARTITION p1 VALUES [(\"2024-01-01\"), (\"2024-02-01\")),
 PARTITION p2 VALUES [(\"2024-02-01\"), (\"2024-03-01\")))
DISTRIBUTED BY HASH(`dt`) BUCKETS 2;
CREATE TABLE nested (
  `k` INT NOT NULL,
  `tags` ARRAY<INT> NULL,
  `attrs` MAP<STRING, INT> NULL,
  `info` STRUCT<a:INT, b:VARCHAR(10)> NULL
) DUPLICATE KEY(`k`) DISTRIBUTED BY HASH(`k`) BUCKETS 1;
CREATE USER 'alice'@'%' IDENTIFIED BY 's3cret';
";

struct Harness {
    emulator: Emulator,
    dir: PathBuf,
}

async fn harness(name: &str) -> Harness {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    emulator.execute(None, DDL).unwrap();
    let dir = std::env::temp_dir().join(format!("doris-emulator-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    Harness { emulator, dir }
}

impl Harness {
    fn file(&self, name: &str, bytes: &[u8]) -> String {
        let path = self.dir.join(name);
        std::fs::File::create(&path)
            .unwrap()
            .write_all(bytes)
            .unwrap();
        path.to_string_lossy().into_owned()
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.emulator.fe_http_addr())
    }

    /// `curl --location-trusted` Stream Load; returns the parsed JSON and the raw body.
    fn stream_load(
        &self,
        table: &str,
        file: &str,
        headers: &[&str],
        user: &str,
    ) -> (Value, String) {
        let url = self.url(&format!("/api/demo/{table}/_stream_load"));
        let out = common::curl_stream_load(&url, file, user, headers);
        assert!(
            out.status.success(),
            "curl failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let body = String::from_utf8(out.stdout).unwrap();
        let json: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        (json, body)
    }

    fn rows(&self, table: &str) -> Vec<RecordBatch> {
        self.emulator
            .shared()
            .catalog
            .table("demo", table)
            .unwrap()
            .snapshot(None)
            .unwrap()
    }
}

/// The response's `Message` contains `needle` (the whole response is shown otherwise).
fn assert_message_contains(json: &Value, needle: &str) {
    let message = json["Message"].as_str().unwrap_or_default();
    assert!(message.contains(needle), "{json}");
}

fn row_count(batches: &[RecordBatch]) -> usize {
    batches.iter().map(RecordBatch::num_rows).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn csv_load_redirects_loads_and_answers_in_doris_layout() {
    let h = harness("csv").await;
    let csv: &[u8] = b"1\talice\t10\n2\tbob\t\\N\n3\t\\N\t30\n";
    let file = h.file("rows.csv", csv);
    let (json, body) = h.stream_load("dup", &file, &["label:csv_1"], "root:");
    assert_eq!(json["Status"], "Success", "{body}");
    assert_eq!(json["Message"], "OK");
    assert_eq!(json["Label"], "csv_1");
    assert_eq!(json["TwoPhaseCommit"], "false");
    assert_eq!(json["NumberTotalRows"], 3);
    assert_eq!(json["NumberLoadedRows"], 3);
    assert_eq!(json["NumberFilteredRows"], 0);
    assert!(json["TxnId"].as_i64().unwrap() > 0);
    assert_eq!(json["LoadBytes"], csv.len());
    // Layout: 4-space pretty print, Doris's field order, trailing newline, no ErrorURL.
    assert!(body.starts_with("{\n    \"TxnId\": "), "{body}");
    assert!(body.ends_with("}\n"));
    let keys: Vec<&str> = body
        .lines()
        .filter_map(|l| l.trim().strip_prefix('"').and_then(|l| l.split('"').next()))
        .collect();
    assert_eq!(
        keys,
        [
            "TxnId",
            "Label",
            "Comment",
            "TwoPhaseCommit",
            "Status",
            "Message",
            "NumberTotalRows",
            "NumberLoadedRows",
            "NumberFilteredRows",
            "NumberUnselectedRows",
            "LoadBytes",
            "LoadTimeMs",
            "BeginTxnTimeMs",
            "StreamLoadPutTimeMs",
            "ReadDataTimeMs",
            "WriteDataTimeMs",
            "ReceiveDataTimeMs",
            "CommitAndPublishTimeMs"
        ]
    );
    let batches = h.rows("dup");
    assert_eq!(row_count(&batches), 3);
    let names: Vec<Option<String>> = batches
        .iter()
        .flat_map(|b| {
            b.column(1)
                .as_string::<i32>()
                .iter()
                .map(|v| v.map(str::to_owned))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(names.contains(&None) && names.contains(&Some("alice".into())));
    // Rows are spread over the hash buckets by key, deterministically.
    let table = h.emulator.shared().catalog.table("demo", "dup").unwrap();
    assert_eq!(table.tablets.len(), 4);
    assert_eq!(table.rows_per_tablet().unwrap().iter().sum::<usize>(), 3);

    // The same label again: refused before the body, with the original transaction.
    let (again, _) = h.stream_load("dup", &file, &["label:csv_1"], "root:");
    assert_eq!(again["Status"], "Label Already Exists");
    assert_eq!(again["ExistingJobStatus"], "FINISHED");
    assert_eq!(again["TxnId"], -1);
    assert_eq!(
        again["Message"],
        format!(
            "[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [csv_1] has already been used, relate to txn [{}]",
            json["TxnId"]
        )
    );
    assert_eq!(row_count(&h.rows("dup")), 3, "nothing loaded twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fe_checks_auth_and_expect_and_redirects_with_userinfo() {
    let h = harness("fe").await;
    let file = h.file("one.csv", b"1\ta\t1\n");
    let run = |args: &[&str]| {
        let out = Command::new("curl").args(args).output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let url = h.url("/api/demo/dup/_stream_load");
    // Wrong password: HTTP 200 with the FE envelope carrying code 401.
    let denied = run(&[
        "-sS",
        "-w",
        "\n%{http_code}",
        "-u",
        "alice:wrong",
        "-H",
        "Expect:100-continue",
        "-T",
        &file,
        &url,
    ]);
    let (body, code) = denied.rsplit_once('\n').unwrap();
    assert_eq!(code, "200");
    let json: Value = serde_json::from_str(body).unwrap();
    assert_eq!(json["code"], 401);
    assert_eq!(json["msg"], "Unauthorized");
    assert_eq!(
        json["data"],
        "Access denied for user 'alice@127.0.0.1' (using password: YES)"
    );
    assert!(!body.contains("wrong"), "the password must not be echoed");
    // No credentials at all.
    let json: Value = serde_json::from_str(&run(&[
        "-sS",
        "-H",
        "Expect:100-continue",
        "-T",
        &file,
        &url,
    ]))
    .unwrap();
    assert_eq!(json["data"], "Need auth information.");
    // No Expect header: refused, no redirect.
    let body = run(&[
        "-sS",
        "-u",
        "alice:s3cret",
        "-H",
        "Expect:",
        "-T",
        &file,
        &url,
    ]);
    assert_eq!(
        body,
        r#"{"status":"FAILED","msg":"There is no 100-continue header"}"#
    );
    // The redirect itself: 307, userinfo with the raw password, trailing '?'.
    let head = run(&[
        "-sS",
        "-o",
        "/dev/null",
        "-D",
        "-",
        "-u",
        "alice:s3cret",
        "-H",
        "Expect:100-continue",
        "-T",
        &file,
        &url,
    ]);
    assert!(head.starts_with("HTTP/1.1 307"), "{head}");
    let location = head
        .lines()
        .find_map(|l| {
            l.strip_prefix("location: ")
                .or_else(|| l.strip_prefix("Location: "))
        })
        .unwrap()
        .trim();
    assert_eq!(
        location,
        format!(
            "http://alice:s3cret@127.0.0.1:{}/api/demo/dup/_stream_load?",
            h.emulator.be_http_addr().port()
        )
    );
    assert_eq!(row_count(&h.rows("dup")), 0, "the FE never loads anything");
    // Backends list.
    let json: Value =
        serde_json::from_str(&run(&["-sS", &h.url("/api/backends?is_alive=true")])).unwrap();
    assert_eq!(json["code"], 0);
    assert_eq!(
        json["data"]["backends"][0]["http_port"],
        h.emulator.be_http_addr().port()
    );
    assert_eq!(json["data"]["backends"][0]["is_alive"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn early_failures_come_before_100_continue() {
    let h = harness("early").await;
    let file = h.file("one.csv", b"1\ta\t1\n");
    let be = format!(
        "http://{}/api/demo/dup/_stream_load",
        h.emulator.be_http_addr()
    );
    let verbose = |label: &str, user: &str| {
        let out = Command::new("curl")
            .args([
                "-sS",
                "-v",
                "-u",
                user,
                "-H",
                "Expect:100-continue",
                "-H",
                &format!("label:{label}"),
                "-T",
                &file,
                &be,
            ])
            .output()
            .unwrap();
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (ok, trace) = verbose("early_1", "root:");
    assert!(ok.contains("\"Status\": \"Success\""), "{ok}");
    assert!(
        trace.contains("100 Continue"),
        "a load that proceeds gets 100 Continue"
    );
    let (dup, trace) = verbose("early_1", "root:");
    assert!(
        dup.contains("\"Status\": \"Label Already Exists\""),
        "{dup}"
    );
    assert!(
        !trace.contains("100 Continue"),
        "label conflicts are answered before the body:\n{trace}"
    );
    let (bad, trace) = verbose("early_2", "root:nope");
    assert!(
        bad.contains("Access denied for user 'root@127.0.0.1' (using password: YES)"),
        "{bad}"
    );
    assert!(bad.contains("\"Status\": \"Fail\""));
    assert!(!trace.contains("100 Continue"));
    let missing = Command::new("curl")
        .args([
            "-sS",
            "-u",
            "root:",
            "-H",
            "Expect:100-continue",
            "-T",
            &file,
        ])
        .arg(format!(
            "http://{}/api/demo/nope/_stream_load",
            h.emulator.be_http_addr()
        ))
        .output()
        .unwrap();
    let missing = String::from_utf8(missing.stdout).unwrap();
    assert!(
        missing.contains("unknown table, tableName=nope"),
        "{missing}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_mode_filtering_and_error_log() {
    let h = harness("strict").await;
    // Row 2: `x` is not an INT; row 3: NULL id in a NOT NULL column.
    let file = h.file("bad.csv", b"1\ta\t1\n2\tb\tx\n\\N\tc\t3\n4\td\t4\n");
    let (json, _) = h.stream_load("dup", &file, &["label:s1", "strict_mode:true"], "root:");
    assert_eq!(json["Status"], "Fail");
    assert_eq!(
        json["Message"],
        "[DATA_QUALITY_ERROR]too many filtered rows"
    );
    assert_eq!(json["NumberLoadedRows"], 0);
    assert_eq!(json["NumberFilteredRows"], 2);
    let url = json["ErrorURL"].as_str().unwrap();
    let log = Command::new("curl").args(["-sS", url]).output().unwrap();
    let log = String::from_utf8(log.stdout).unwrap();
    assert!(
        log.contains("value is incorrect while strict mode is true"),
        "{log}"
    );
    assert!(
        log.contains("values is null while columns is not nullable"),
        "{log}"
    );
    assert_eq!(row_count(&h.rows("dup")), 0);
    // The failed load freed its label; with a tolerant ratio the good rows load.
    let (json, _) = h.stream_load(
        "dup",
        &file,
        &["label:s1", "strict_mode:true", "max_filter_ratio:0.5"],
        "root:",
    );
    assert_eq!(json["Status"], "Success");
    assert_eq!(json["NumberLoadedRows"], 2);
    // Not strict: the bad INT becomes NULL; the NULL key is still filtered.
    let (json, _) = h.stream_load("dup", &file, &["label:s2", "max_filter_ratio:0.3"], "root:");
    assert_eq!(
        (
            json["NumberLoadedRows"].as_u64(),
            json["NumberFilteredRows"].as_u64()
        ),
        (Some(3), Some(1))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_models_unique_with_sequence_and_aggregate() {
    let h = harness("keys").await;
    let json_rows = h.file(
        "u.json",
        b"{\"k\": 1, \"v\": \"first\", \"seq\": 5}\n{\"k\": 2, \"v\": \"two\", \"seq\": 1}\n{\"k\": 1, \"v\": \"older\", \"seq\": 3}\n",
    );
    let (json, _) = h.stream_load("uniq", &json_rows, &["label:u1", "format:json"], "root:");
    assert_eq!(json["Status"], "Success", "{json}");
    let newer = h.file(
        "u2.json",
        b"{\"k\": 1, \"v\": \"newest\", \"seq\": 9}\n{\"k\": 2, \"v\": \"stale\", \"seq\": 0}\n",
    );
    h.stream_load("uniq", &newer, &["label:u2", "format:json"], "root:");
    let mut got: Vec<(i32, String)> = h
        .rows("uniq")
        .iter()
        .flat_map(|b| {
            let k = b.column(0).as_primitive::<Int32Type>().clone();
            let v = b.column(1).as_string::<i32>().clone();
            (0..b.num_rows())
                .map(move |i| (k.value(i), v.value(i).to_owned()))
                .collect::<Vec<_>>()
        })
        .collect();
    got.sort();
    assert_eq!(got, vec![(1, "newest".into()), (2, "two".into())]);

    let agg = h.file(
        "a.csv",
        b"1\t10\t5\t5\ta\ta\n1\t20\t9\t1\tb\t\\N\n2\t7\t7\t7\tz\tz\n",
    );
    h.stream_load("agg", &agg, &["label:a1"], "root:");
    let more = h.file("a2.csv", b"1\t\\N\t3\t0\t\\N\t\\N\n");
    h.stream_load("agg", &more, &["label:a2"], "root:");
    let batches = h.rows("agg");
    let all = arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
    let k1 = (0..all.num_rows())
        .find(|i| all.column(0).as_primitive::<Int32Type>().value(*i) == 1)
        .unwrap();
    assert_eq!(
        all.column(1).as_primitive::<Int64Type>().value(k1),
        30,
        "SUM ignores NULL"
    );
    assert_eq!(
        all.column(2).as_primitive::<Int32Type>().value(k1),
        9,
        "MAX"
    );
    assert_eq!(
        all.column(3).as_primitive::<Int32Type>().value(k1),
        0,
        "MIN"
    );
    assert!(
        all.column(4).is_null(k1),
        "REPLACE takes the last value, NULL included"
    );
    assert_eq!(
        all.column(5).as_string::<i32>().value(k1),
        "a",
        "REPLACE_IF_NOT_NULL keeps the last non-NULL"
    );
    assert_eq!(all.num_rows(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arrow_parquet_gzip_and_partitions() {
    let h = harness("formats").await;
    let schema = Arc::new(Schema::new(vec![
        Field::new("score", DataType::Int64, true),
        Field::new("id", DataType::Int32, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(vec![Some(1), None])),
            Arc::new(Int32Array::from(vec![10, 11])),
            Arc::new(StringArray::from(vec![Some("x"), Some("y")])),
        ],
    )
    .unwrap();
    let mut ipc = Vec::new();
    {
        let mut w = arrow::ipc::writer::StreamWriter::try_new(&mut ipc, &schema).unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
    }
    let (json, _) = h.stream_load(
        "dup",
        &h.file("b.arrow", &ipc),
        &["label:f1", "format:arrow"],
        "root:",
    );
    assert_eq!(json["Status"], "Success", "{json}");
    let mut pq = Vec::new();
    {
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut pq, schema.clone(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }
    let (json, _) = h.stream_load(
        "dup",
        &h.file("b.parquet", &pq),
        &["label:f2", "format:parquet"],
        "root:",
    );
    assert_eq!(json["Status"], "Success", "{json}");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(b"{\"id\": 20, \"name\": \"gz\", \"score\": 3}\n")
        .unwrap();
    let (json, _) = h.stream_load(
        "dup",
        &h.file("c.json.gz", &gz.finish().unwrap()),
        &["label:f3", "format:json", "compress_type:gz"],
        "root:",
    );
    assert_eq!(json["NumberLoadedRows"], 1, "{json}");
    assert_eq!(row_count(&h.rows("dup")), 5);

    // Range partitions: rows go to their partition; a row outside every range is filtered.
    let (json, _) = h.stream_load(
        "parted",
        &h.file(
            "p.csv",
            b"2024-01-05\t1\n2024-02-10\t2\n2024-01-31\t3\n2025-01-01\t4\n",
        ),
        &["label:p1", "max_filter_ratio:0.5"],
        "root:",
    );
    assert_eq!(
        (
            json["NumberLoadedRows"].as_u64(),
            json["NumberFilteredRows"].as_u64()
        ),
        (Some(3), Some(1))
    );
    let table = h.emulator.shared().catalog.table("demo", "parted").unwrap();
    let per_tablet = table.rows_per_tablet().unwrap();
    let per_partition: Vec<usize> = per_tablet.chunks(2).map(|c| c.iter().sum()).collect();
    assert_eq!(per_partition, vec![2, 1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_phase_commit_through_the_fe() {
    let h = harness("twopc").await;
    let file = h.file("t.csv", b"1\ta\t1\n2\tb\t2\n");
    let (json, _) = h.stream_load(
        "dup",
        &file,
        &["label:tp1", "two_phase_commit:true"],
        "root:",
    );
    assert_eq!(json["Status"], "Success");
    assert_eq!(json["TwoPhaseCommit"], "true");
    let txn = json["TxnId"].as_i64().unwrap();
    assert_eq!(
        row_count(&h.rows("dup")),
        0,
        "pre-committed data is invisible"
    );
    let (again, _) = h.stream_load("dup", &file, &["label:tp1"], "root:");
    assert_eq!(again["ExistingJobStatus"], "PRECOMMITTED");
    let two_pc = |headers: &[&str]| {
        let mut cmd = Command::new("curl");
        cmd.args([
            "-sS",
            "--location-trusted",
            "-u",
            "root:",
            "-X",
            "PUT",
            "-H",
            "Expect:100-continue",
        ]);
        for x in headers {
            cmd.args(["-H", x]);
        }
        let out = cmd
            .arg(h.url("/api/demo/_stream_load_2pc"))
            .output()
            .unwrap();
        serde_json::from_str::<Value>(&String::from_utf8(out.stdout).unwrap()).unwrap()
    };
    let txn_header = format!("txn_id:{txn}");
    let done = two_pc(&[&txn_header, "txn_operation:commit"]);
    assert_eq!(done["status"], "Success");
    assert_eq!(
        done["msg"],
        format!("transaction [{txn}] commit successfully.")
    );
    assert_eq!(row_count(&h.rows("dup")), 2);
    let repeat = two_pc(&[&txn_header, "txn_operation:commit"]);
    assert!(
        repeat["msg"].as_str().unwrap().ends_with(&format!(
            "transaction [{txn}] is already visible, not pre-committed."
        )),
        "{repeat}"
    );
    // Abort by label frees it for a new load.
    let (json, _) = h.stream_load(
        "dup",
        &file,
        &["label:tp2", "two_phase_commit:true"],
        "root:",
    );
    assert_eq!(json["Status"], "Success");
    let aborted = two_pc(&["label:tp2", "txn_operation:abort"]);
    assert_eq!(aborted["msg"], "label [tp2] abort successfully.");
    let (json, _) = h.stream_load("dup", &file, &["label:tp2"], "root:");
    assert_eq!(json["Status"], "Success");
    assert_eq!(row_count(&h.rows("dup")), 4);
    let missing = two_pc(&["txn_id:424242", "txn_operation:commit"]);
    assert!(
        missing["msg"]
            .as_str()
            .unwrap()
            .contains("transaction [424242] not found")
    );
    let bad = two_pc(&[&txn_header, "txn_operation:flip"]);
    assert_eq!(
        bad["msg"],
        "transaction operation should be 'commit' or 'abort'"
    );
}

#[test]
fn binary_prints_ports_and_runs_init_sql() {
    let dir = std::env::temp_dir().join(format!("doris-emulator-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let init = dir.join("init.sql");
    std::fs::write(&init, "CREATE DATABASE d; CREATE TABLE d.t (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1;").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_doris-emulator"))
        .args(["--fe-http-port", "0", "--be-http-port", "0", "--init-sql"])
        .arg(&init)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let ports: Value = serde_json::from_str(&line).unwrap();
    let fe = ports["fe_http_port"].as_u64().unwrap();
    let file = dir.join("x.csv");
    std::fs::write(&file, "7\n").unwrap();
    let out = Command::new("curl")
        .args([
            "-sS",
            "--location-trusted",
            "-u",
            "root:",
            "-H",
            "Expect:100-continue",
            "-T",
        ])
        .arg(&file)
        .arg(format!("http://127.0.0.1:{fe}/api/d/t/_stream_load"))
        .output()
        .unwrap();
    let body = String::from_utf8(out.stdout).unwrap();
    // Stop with SIGTERM, as a service manager would.
    let _ = Command::new("kill").arg(child.id().to_string()).status();
    let status = child.wait().unwrap();
    assert!(body.contains("\"NumberLoadedRows\": 1"), "{body}");
    assert!(
        status.success(),
        "the emulator exits cleanly on SIGTERM: {status}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partial_update_changes_only_the_loaded_columns() {
    let h = harness("partial").await;
    let full = h.file(
        "full.json",
        b"{\"k\": 1, \"v\": \"a\", \"seq\": 1}\n{\"k\": 2, \"v\": \"b\", \"seq\": 1}\n",
    );
    assert_eq!(
        h.stream_load("uniq", &full, &["label:pu0", "format:json"], "root:")
            .0["Status"],
        "Success"
    );
    let patch = h.file(
        "patch.json",
        b"{\"k\": 1, \"v\": \"patched\"}\n{\"k\": 3, \"v\": \"new\"}\n",
    );
    let (json, _) = h.stream_load(
        "uniq",
        &patch,
        &["label:pu1", "format:json", "partial_columns:true"],
        "root:",
    );
    assert_eq!(json["Status"], "Success", "{json}");
    let rows = |h: &Harness| {
        let mut got: Vec<(i32, String, Option<i32>)> = h
            .rows("uniq")
            .iter()
            .flat_map(|b| {
                let k = b.column(0).as_primitive::<Int32Type>().clone();
                let v = b.column(1).as_string::<i32>().clone();
                let s = b.column(2).as_primitive::<Int32Type>().clone();
                (0..b.num_rows())
                    .map(move |i| {
                        (
                            k.value(i),
                            v.value(i).to_owned(),
                            s.is_valid(i).then(|| s.value(i)),
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        got.sort();
        got
    };
    // k=1: only `v` changed (seq kept); k=2 untouched; k=3 appended with NULL for `seq`.
    assert_eq!(
        rows(&h),
        vec![
            (1, "patched".into(), Some(1)),
            (2, "b".into(), Some(1)),
            (3, "new".into(), None)
        ]
    );

    let new_key = h.file("newkey.json", b"{\"k\": 4, \"v\": \"x\"}\n");
    let (json, _) = h.stream_load(
        "uniq",
        &new_key,
        &[
            "label:pu2",
            "format:json",
            "unique_key_update_mode:UPDATE_FIXED_COLUMNS",
            "partial_update_new_key_behavior:ERROR",
        ],
        "root:",
    );
    assert_eq!(json["Status"], "Fail");
    assert!(
        json["Message"]
            .as_str()
            .unwrap()
            .starts_with("[DATA_QUALITY_ERROR]"),
        "{json}"
    );
    assert_eq!(rows(&h).len(), 3, "nothing applied");

    let no_key = h.file("nokey.json", b"{\"v\": \"x\"}\n");
    let (json, _) = h.stream_load(
        "uniq",
        &no_key,
        &["label:pu3", "format:json", "partial_columns:true"],
        "root:",
    );
    assert_message_contains(&json, "requires every key column, `k` is missing");
    let (json, _) = h.stream_load(
        "dup",
        &new_key,
        &["label:pu4", "format:json", "partial_columns:true"],
        "root:",
    );
    assert_message_contains(&json, "only allowed on unique table with merge-on-write");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flexible_partial_update_takes_each_rows_own_columns() {
    let h = harness("flexible").await;
    let full = h.file(
        "full.json",
        b"{\"k\": 1, \"v\": \"a\", \"seq\": 1}\n{\"k\": 2, \"v\": \"b\", \"seq\": 1}\n",
    );
    assert_eq!(
        h.stream_load("uniq", &full, &["label:fx0", "format:json"], "root:")
            .0["Status"],
        "Success"
    );
    // Each line updates the columns it carries, in line order; a new key is appended.
    let patch = h.file(
        "patch.json",
        b"{\"k\": 1, \"v\": \"x\"}\n{\"k\": 2, \"seq\": 5}\n{\"k\": 1, \"seq\": 7}\n{\"k\": 3, \"v\": \"n\"}\n",
    );
    let flexible = "unique_key_update_mode:UPDATE_FLEXIBLE_COLUMNS";
    let (json, _) = h.stream_load(
        "uniq",
        &patch,
        &[
            "label:fx1",
            "format:json",
            "read_json_by_line:true",
            flexible,
        ],
        "root:",
    );
    assert_eq!(json["Status"], "Success", "{json}");
    assert_eq!(json["NumberLoadedRows"].as_u64(), Some(4));
    let mut got: Vec<(i32, Option<String>, Option<i32>)> = Vec::new();
    for b in h.rows("uniq") {
        let k = b.column(0).as_primitive::<Int32Type>();
        let v = b.column(1).as_string::<i32>();
        let s = b.column(2).as_primitive::<Int32Type>();
        got.extend((0..b.num_rows()).map(|i| {
            (
                k.value(i),
                v.is_valid(i).then(|| v.value(i).to_owned()),
                s.is_valid(i).then(|| s.value(i)),
            )
        }));
    }
    got.sort();
    assert_eq!(
        got,
        vec![
            (1, Some("x".into()), Some(7)),
            (2, Some("b".into()), Some(5)),
            (3, Some("n".into()), None)
        ]
    );
    // JSON only, and no header that reshapes rows.
    let csv = h.file("f.csv", b"1\tz\t1\n");
    for (label, headers) in [
        ("fx2", vec!["format:csv", flexible]),
        ("fx3", vec!["format:json", "columns:k,v", flexible]),
    ] {
        let mut all = vec![format!("label:{label}")];
        all.extend(headers.iter().map(|h| h.to_string()));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let body = if label == "fx2" { &csv } else { &patch };
        let (json, _) = h.stream_load("uniq", body, &all, "root:");
        assert_eq!(json["Status"], "Fail", "{json}");
        assert!(
            json["Message"]
                .as_str()
                .unwrap()
                .starts_with("[INVALID_ARGUMENT]flexible partial update"),
            "{json}"
        );
    }
    // Like every partial update, it needs a merge-on-write UNIQUE table.
    let (json, _) = h.stream_load(
        "dup",
        &patch,
        &["label:fx4", "format:json", flexible],
        "root:",
    );
    assert_message_contains(&json, "only allowed on unique table with merge-on-write");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_delete_sign_column_deletes_keys_row_by_row() {
    let h = harness("deletesign").await;
    let full = h.file("full.csv", b"1\ta\t1\n2\tb\t1\n3\tc\t1\n");
    assert_eq!(
        h.stream_load("uniq", &full, &["label:ds0"], "root:").0["Status"],
        "Success"
    );
    // hidden_columns: the sign follows the table's columns.
    let signed = h.file("signed.csv", b"1\ta\t2\t1\n4\td\t1\t0\n");
    let (json, _) = h.stream_load(
        "uniq",
        &signed,
        &["label:ds1", "hidden_columns:__DORIS_DELETE_SIGN__"],
        "root:",
    );
    assert_eq!(json["Status"], "Success", "{json}");
    // The `columns` header may name it too (as CDC writers do), here with JSON.
    let json_body = h.file(
        "signed.json",
        b"{\"k\": 2, \"v\": \"b\", \"seq\": 3, \"__DORIS_DELETE_SIGN__\": 1}\n",
    );
    let (json, _) = h.stream_load(
        "uniq",
        &json_body,
        &[
            "label:ds2",
            "format:json",
            "columns:k,v,seq,__DORIS_DELETE_SIGN__",
        ],
        "root:",
    );
    assert_eq!(json["Status"], "Success", "{json}");
    let mut keys: Vec<i32> = Vec::new();
    for b in h.rows("uniq") {
        let k = b.column(0).as_primitive::<Int32Type>();
        keys.extend((0..b.num_rows()).map(|i| k.value(i)));
    }
    keys.sort();
    assert_eq!(keys, [3, 4]);
    // Only UNIQUE tables have the sign; other hidden columns are not emulated.
    let (json, _) = h.stream_load(
        "dup",
        &signed,
        &["label:ds3", "hidden_columns:__DORIS_DELETE_SIGN__"],
        "root:",
    );
    assert_eq!(json["Status"], "Fail", "{json}");
    assert_message_contains(&json, "only unique tables have a delete sign");
    let (json, _) = h.stream_load(
        "uniq",
        &signed,
        &["label:ds4", "hidden_columns:__DORIS_SEQUENCE_COL__"],
        "root:",
    );
    assert!(
        json["Message"]
            .as_str()
            .unwrap()
            .starts_with("[NOT_IMPLEMENTED_ERROR]"),
        "{json}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_columns_load_from_csv_text_and_json_values() {
    let h = harness("nested").await;
    let rows = |h: &Harness| {
        let mut out: Vec<String> = Vec::new();
        for b in h.rows("nested") {
            let options = arrow::util::display::FormatOptions::default().with_null("NULL");
            let formatters: Vec<_> = b
                .columns()
                .iter()
                .map(|c| {
                    arrow::util::display::ArrayFormatter::try_new(c.as_ref(), &options).unwrap()
                })
                .collect();
            for r in 0..b.num_rows() {
                let cells: Vec<String> =
                    formatters.iter().map(|f| f.value(r).to_string()).collect();
                out.push(cells.join(" | "));
            }
        }
        out.sort();
        out
    };
    // CSV carries Doris's text forms (map keys may be bare).
    let csv = h.file(
        "n.csv",
        b"1\t[1, 2, null]\t{\"x\":1, \"y\":null}\t{\"a\":7, \"b\":\"s\"}\n2\t[]\t{}\t\\N\n",
    );
    let (json, _) = h.stream_load("nested", &csv, &["label:n1"], "root:");
    assert_eq!(json["Status"], "Success", "{json}");
    // JSON carries real arrays and objects.
    let body = h.file(
        "n.json",
        br#"{"k": 3, "tags": [5], "attrs": {"z": 26}, "info": {"a": 1, "b": "t"}}"#,
    );
    let (json, _) = h.stream_load("nested", &body, &["label:n2", "format:json"], "root:");
    assert_eq!(json["Status"], "Success", "{json}");
    assert_eq!(
        rows(&h),
        [
            "1 | [1, 2, NULL] | {x: 1, y: NULL} | {a: 7, b: s}",
            "2 | [] | {} | NULL",
            "3 | [5] | {z: 26} | {a: 1, b: t}",
        ]
    );
    // A value that is not an array of INT: filtered in strict mode, NULL otherwise.
    let bad = h.file("bad.csv", b"4\t[1, oops]\t\\N\t\\N\n");
    let (json, _) = h.stream_load(
        "nested",
        &bad,
        &["label:n3", "strict_mode:true", "max_filter_ratio:1"],
        "root:",
    );
    assert_eq!(json["NumberFilteredRows"].as_u64(), Some(1), "{json}");
    let (json, _) = h.stream_load("nested", &bad, &["label:n4"], "root:");
    assert_eq!(json["Status"], "Success", "{json}");
    assert!(rows(&h).contains(&"4 | NULL | NULL | NULL".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn columns_mappings_compute_columns_from_the_source_fields() {
    let h = harness("mapping").await;
    let csv = h.file("m.csv", b"1\tann\t3\n2\tbob\t4\n");
    let (json, _) = h.stream_load(
        "dup",
        &csv,
        &[
            "label:m1",
            "columns:id, tmp_name, raw, name = concat(upper(tmp_name), ','), score = raw * 10",
        ],
        "root:",
    );
    assert_eq!(json["Status"], "Success", "{json}");
    assert_eq!(json["NumberLoadedRows"].as_u64(), Some(2));
    let body = h.file("m.json", br#"{"id": 3, "n": "cy", "s": 5}"#);
    let (json, _) = h.stream_load(
        "dup",
        &body,
        &["label:m2", "format:json", "columns:id,n,s,name=n,score=s+1"],
        "root:",
    );
    assert_eq!(json["Status"], "Success", "{json}");
    let mut got: Vec<(i32, String, i64)> = Vec::new();
    for b in h.rows("dup") {
        let id = b.column(0).as_primitive::<Int32Type>();
        let name = b.column(1).as_string::<i32>();
        let score = b.column(2).as_primitive::<Int64Type>();
        got.extend(
            (0..b.num_rows()).map(|i| (id.value(i), name.value(i).to_owned(), score.value(i))),
        );
    }
    got.sort();
    assert_eq!(
        got,
        [
            (1, "ANN,".to_owned(), 30),
            (2, "BOB,".to_owned(), 40),
            (3, "cy".to_owned(), 6)
        ]
    );
    let (json, _) = h.stream_load(
        "dup",
        &csv,
        &["label:m3", "columns:id, a, b, name = nosuchfn(a)"],
        "root:",
    );
    assert_eq!(json["Status"], "Fail", "{json}");
    assert_message_contains(&json, "a column mapping is invalid");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn where_leaves_rows_out_as_unselected() {
    let h = harness("where").await;
    let file = h.file("w.csv", b"1\ta\t10\n2\tb\t20\n3\tc\t30\n4\td\t\\N\n");
    let (json, _) = h.stream_load("dup", &file, &["label:w1", "where:score >= 20"], "root:");
    assert_eq!(json["Status"], "Success", "{json}");
    assert_eq!(
        (
            json["NumberTotalRows"].as_u64(),
            json["NumberLoadedRows"].as_u64(),
            json["NumberUnselectedRows"].as_u64()
        ),
        (Some(4), Some(2), Some(2))
    );
    assert_eq!(row_count(&h.rows("dup")), 2);
    let (json, _) = h.stream_load("dup", &file, &["label:w2", "where:nope > 1"], "root:");
    assert_eq!(json["Status"], "Fail");
    assert!(
        json["Message"].as_str().unwrap().starts_with(
            "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = the where predicate is invalid"
        ),
        "{json}"
    );
    assert_eq!(row_count(&h.rows("dup")), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merge_type_merge_deletes_the_rows_its_condition_accepts() {
    let h = harness("merge").await;
    let seed = h.file("seed.csv", b"1\ta\t1\n2\tb\t1\n3\tc\t1\n");
    let (json, _) = h.stream_load("uniq", &seed, &["label:m0"], "root:");
    assert_eq!(json["Status"], "Success", "{json}");
    // Row 1 deletes key 1, row 2 updates key 2, row 3 (v = 'x') deletes key 3, row 4 adds 4.
    let merge = h.file("merge.csv", b"1\tgone\t2\n2\tnew\t2\n3\tx\t2\n4\td\t2\n");
    let (json, _) = h.stream_load(
        "uniq",
        &merge,
        &["label:m1", "merge_type:MERGE", "delete:v = 'x' OR k = 1"],
        "root:",
    );
    assert_eq!(json["Status"], "Success", "{json}");
    assert_eq!(json["NumberLoadedRows"].as_u64(), Some(4));
    let mut rows: Vec<(i32, String)> = Vec::new();
    for batch in h.rows("uniq") {
        let k = batch.column(0).as_primitive::<Int32Type>();
        let v = batch.column(1).as_string::<i32>();
        rows.extend((0..batch.num_rows()).map(|i| (k.value(i), v.value(i).to_owned())));
    }
    rows.sort();
    assert_eq!(rows, [(2, "new".to_owned()), (4, "d".to_owned())]);
    // MERGE needs a condition, the condition needs MERGE, and only UNIQUE tables merge.
    let (json, _) = h.stream_load("uniq", &merge, &["label:m2", "merge_type:MERGE"], "root:");
    assert_message_contains(&json, "needs the delete header");
    let (json, _) = h.stream_load("uniq", &merge, &["label:m3", "delete:k = 1"], "root:");
    assert_message_contains(&json, "applies to merge_type MERGE only");
    let (json, _) = h.stream_load(
        "dup",
        &merge,
        &["label:m4", "merge_type:MERGE", "delete:id = 1"],
        "root:",
    );
    assert_message_contains(&json, "only supported in unique tables");
    let (json, _) = h.stream_load(
        "uniq",
        &merge,
        &["label:m5", "merge_type:MERGE", "delete:nope = 1"],
        "root:",
    );
    assert_eq!(json["Status"], "Fail");
    assert_message_contains(&json, "the delete condition is invalid");
    assert_eq!(row_count(&h.rows("uniq")), 2, "failed loads change nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_root_picks_the_node_that_holds_the_rows() {
    let h = harness("jsonroot").await;
    // The whole body with strip_outer_array: the root must be an array of rows.
    let file = h.file(
        "r.json",
        br#"{"meta": {"n": 2}, "data": {"rows": [{"id": 1, "name": "ann", "score": 7},
                                               {"id": 2, "name": "bob"}]}}"#,
    );
    let (json, _) = h.stream_load(
        "dup",
        &file,
        &[
            "label:jr1",
            "format:json",
            "strip_outer_array:true",
            "json_root:$.data.rows",
        ],
        "root:",
    );
    assert_eq!(json["Status"], "Success", "{json}");
    assert_eq!(json["NumberLoadedRows"].as_u64(), Some(2));
    // Line by line: each line's root is one row; a line without it is filtered.
    let lines = h.file(
        "l.json",
        b"{\"payload\": {\"id\": 3, \"name\": \"cy\"}}\n{\"other\": 1}\n",
    );
    let (json, _) = h.stream_load(
        "dup",
        &lines,
        &[
            "label:jr2",
            "format:json",
            "read_json_by_line:true",
            "json_root:$.payload",
            "max_filter_ratio:0.5",
        ],
        "root:",
    );
    assert_eq!(json["Status"], "Success", "{json}");
    assert_eq!(json["NumberLoadedRows"].as_u64(), Some(1));
    assert_eq!(json["NumberFilteredRows"].as_u64(), Some(1));
    let mut ids: Vec<i32> = Vec::new();
    for batch in h.rows("dup") {
        let id = batch.column(0).as_primitive::<Int32Type>();
        ids.extend((0..batch.num_rows()).map(|i| id.value(i)));
    }
    ids.sort();
    assert_eq!(ids, [1, 2, 3]);
    // A root that is missing fails the load (strip_outer_array) and names the problem.
    let (json, _) = h.stream_load(
        "dup",
        &file,
        &[
            "label:jr3",
            "format:json",
            "strip_outer_array:true",
            "json_root:$.nowhere",
        ],
        "root:",
    );
    assert_eq!(json["Status"], "Fail", "{json}");
    assert_message_contains(&json, "JSON Root not found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonpaths_pick_nested_fields_for_the_columns() {
    let h = harness("jsonpaths").await;
    let file = h.file(
        "j.json",
        br#"[{"data": {"id": 1, "who": {"name": "ann"}}, "points": [5, 50]},
             {"data": {"id": 2}, "points": [6]}]"#,
    );
    let (json, _) = h.stream_load(
        "dup",
        &file,
        &[
            "label:jp1",
            "format:json",
            "strip_outer_array:true",
            r#"jsonpaths:["$.data.id", "$.data.who.name", "$.points[1]"]"#,
        ],
        "root:",
    );
    assert_eq!(json["Status"], "Success", "{json}");
    assert_eq!(json["NumberLoadedRows"].as_u64(), Some(2));
    let mut rows: Vec<(i32, Option<String>, Option<i64>)> = Vec::new();
    for batch in h.rows("dup") {
        let id = batch.column(0).as_primitive::<Int32Type>();
        let name = batch.column(1).as_string::<i32>();
        let score = batch.column(2).as_primitive::<Int64Type>();
        rows.extend((0..batch.num_rows()).map(|i| {
            (
                id.value(i),
                name.is_valid(i).then(|| name.value(i).to_owned()),
                score.is_valid(i).then(|| score.value(i)),
            )
        }));
    }
    rows.sort();
    assert_eq!(rows, [(1, Some("ann".into()), Some(50)), (2, None, None)]);
    let (json, _) = h.stream_load(
        "dup",
        &file,
        &[
            "label:jp2",
            "format:json",
            "strip_outer_array:true",
            "jsonpaths:[\"id\"]",
        ],
        "root:",
    );
    assert_message_contains(&json, "Invalid json path");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_that_change_a_load_but_are_not_emulated_fail_it_by_name() {
    let h = harness("not-emulated").await;
    let file = h.file("rows.csv", b"2024-01-05\t1\n2024-02-05\t2\n");
    for name in doris_emulator::load::NOT_EMULATED_HEADERS {
        let header = format!("{name}:p1");
        let (json, body) = h.stream_load("parted", &file, &[header.as_str()], "root:");
        assert_eq!(json["Status"], "Fail", "{name}: {body}");
        assert_message_contains(&json, &format!("does not emulate the `{name}` header"));
    }
    // Nothing was loaded, and without those headers the same body loads.
    assert_eq!(row_count(&h.rows("parted")), 0);
    let (json, body) = h.stream_load("parted", &file, &[], "root:");
    assert_eq!(json["Status"], "Success", "{body}");
    assert_eq!(row_count(&h.rows("parted")), 2);
}
