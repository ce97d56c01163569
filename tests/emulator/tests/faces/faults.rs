//! Fault injection, observed from a real client (`curl`): each fault does what it says, and
//! afterwards the emulator says what was committed.

// Test code: a failed unwrap is a failed test, with the value in the message.
#![allow(clippy::unwrap_used)]

use std::process::{Command, Output};

use crate::common;
use std::time::{Duration, Instant};

use doris_emulator::faults::Fault;
use doris_emulator::{Emulator, EmulatorConfig};
use serde_json::Value;

const DDL: &str = "CREATE DATABASE demo; CREATE TABLE demo.dup (`id` INT NOT NULL, `v` TEXT NULL) \
                   DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2";

struct Harness {
    emulator: Emulator,
    file: String,
}

async fn harness(name: &str) -> Harness {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    emulator.execute(None, DDL).unwrap();
    let path = std::env::temp_dir().join(format!("doris-faults-{name}-{}.csv", std::process::id()));
    std::fs::write(&path, "1\ta\n2\tb\n3\tc\n").unwrap();
    Harness {
        emulator,
        file: path.to_string_lossy().into_owned(),
    }
}

impl Harness {
    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.emulator.fe_http_addr())
    }

    fn arm(&self, json: &str) {
        let out = curl(&[
            "-sS",
            "-X",
            "POST",
            "-d",
            json,
            &self.url("/_emulator/faults"),
        ]);
        assert!(out.status.success());
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(!report["armed"].as_array().unwrap().is_empty(), "{report}");
    }

    fn load(&self, label: &str) -> Output {
        let url = self.url("/api/demo/dup/_stream_load");
        common::curl_stream_load(&url, &self.file, "root:", &[&format!("label:{label}")])
    }

    fn committed_rows(&self) -> u64 {
        let out = curl(&["-sS", &self.url("/_emulator/tables/demo/dup")]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["rows"].as_u64().unwrap()
    }
}

fn curl(args: &[&str]) -> Output {
    Command::new("curl").args(args).output().unwrap()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drop_after_commit_leaves_one_copy_and_the_retry_finds_it() {
    let h = harness("drop").await;
    h.arm(r#"{"kind": "drop_after_commit"}"#);
    let out = h.load("d1");
    assert!(!out.status.success(), "curl must see the connection drop");
    assert!(out.stdout.is_empty(), "no response bytes at all");
    assert_eq!(
        h.committed_rows(),
        3,
        "the load was committed before the drop"
    );
    let retry = json(&h.load("d1"));
    assert_eq!(retry["Status"], "Label Already Exists");
    assert_eq!(retry["ExistingJobStatus"], "FINISHED");
    assert_eq!(h.committed_rows(), 3, "exactly one copy");
    let fired = h.emulator.faults().fired();
    assert_eq!(fired.len(), 1);
    assert_eq!(
        (fired[0].kind, fired[0].committed),
        ("drop_after_commit", true)
    );
    assert_eq!(fired[0].label.as_deref(), Some("d1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_mid_body_commits_nothing_and_frees_the_label() {
    let h = harness("reset").await;
    h.emulator.faults().arm(Fault::ResetMidBody, 1);
    let out = h.load("r1");
    assert!(!out.status.success(), "curl must see the reset");
    assert_eq!(h.committed_rows(), 0);
    let retry = json(&h.load("r1"));
    assert_eq!(retry["Status"], "Success", "the same label loads on retry");
    assert_eq!(h.committed_rows(), 3);
    assert!(!h.emulator.faults().fired()[0].committed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_timeout_commits_now_and_shows_data_later() {
    let h = harness("publish").await;
    h.arm(r#"{"kind": "publish_timeout", "visible_after_ms": 400}"#);
    let r = json(&h.load("p1"));
    assert_eq!(r["Status"], "Publish Timeout");
    assert_eq!(
        r["Message"],
        "[PUBLISH_TIMEOUT]transaction commit successfully, BUT data will be visible later"
    );
    assert_eq!(h.committed_rows(), 0, "not visible yet");
    assert_eq!(
        json(&h.load("p1"))["ExistingJobStatus"],
        "FINISHED",
        "but committed"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while h.committed_rows() == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(h.committed_rows(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hold_running_makes_the_label_report_running() {
    let h = harness("running").await;
    h.arm(r#"{"kind": "hold_running", "ms": 1500}"#);
    let (url, file) = (h.url("/api/demo/dup/_stream_load"), h.file.clone());
    let first = std::thread::spawn(move || {
        curl(&[
            "-sS",
            "--location-trusted",
            "-u",
            "root:",
            "-H",
            "Expect:100-continue",
            "-H",
            "label:h1",
            "-T",
            &file,
            &url,
        ])
    });
    // Wait until the first load holds the label (a state, not a time).
    let txns = &h.emulator.shared().txns;
    let label = doris_emulator::txn::TxnRef::Label("h1".into());
    let deadline = Instant::now() + Duration::from_secs(10);
    while txns.resolve("demo", &label).is_none() {
        assert!(
            Instant::now() < deadline,
            "the first load never took its label"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let second = json(&h.load("h1"));
    assert_eq!(second["Status"], "Label Already Exists");
    assert_eq!(second["ExistingJobStatus"], "RUNNING");
    let first = json(&first.join().unwrap());
    assert_eq!(first["Status"], "Success");
    assert_eq!(h.committed_rows(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_and_truncated_responses_after_commit() {
    let h = harness("malformed").await;
    h.arm(r#"{"kind": "malformed_response"}"#);
    let out = h.load("m1");
    assert!(serde_json::from_slice::<Value>(&out.stdout).is_err());
    assert!(String::from_utf8_lossy(&out.stdout).contains("502 Bad Gateway"));
    h.arm(r#"{"kind": "truncated_response"}"#);
    let out = h.load("m2");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("{\n    \"TxnId\": ") && serde_json::from_str::<Value>(&text).is_err(),
        "{text}"
    );
    assert_eq!(h.committed_rows(), 6, "both loads committed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirect_faults_and_delay() {
    let h = harness("redirect").await;
    h.arm(r#"{"kind": "redirect", "host": "203.0.113.9", "port": 18040}"#);
    let out = curl(&[
        "-sS",
        "-o",
        "/dev/null",
        "-D",
        "-",
        "-u",
        "root:",
        "-H",
        "Expect:100-continue",
        "-T",
        &h.file,
        &h.url("/api/demo/dup/_stream_load"),
    ]);
    let head = String::from_utf8(out.stdout).unwrap();
    assert!(
        head.to_ascii_lowercase()
            .contains("location: http://root:@203.0.113.9:18040/api/demo/dup/_stream_load?"),
        "{head}"
    );

    h.arm(r#"{"kind": "be_unreachable"}"#);
    let out = h.load("u1");
    assert_eq!(out.status.code(), Some(7), "curl: failed to connect");
    assert_eq!(h.committed_rows(), 0);

    h.arm(r#"{"kind": "delay", "ms": 300}"#);
    let started = Instant::now();
    assert_eq!(json(&h.load("t1"))["Status"], "Success");
    assert!(started.elapsed() >= Duration::from_millis(300));

    let report: Value =
        serde_json::from_slice(&curl(&["-sS", &h.url("/_emulator/faults")]).stdout).unwrap();
    let kinds: Vec<&str> = report["fired"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["redirect", "be_unreachable", "delay"]);
    assert!(report["armed"].as_array().unwrap().is_empty());
    let cleared = curl(&["-sS", "-X", "DELETE", &h.url("/_emulator/faults")]);
    assert_eq!(json(&cleared)["fired"], serde_json::json!([]));
}
