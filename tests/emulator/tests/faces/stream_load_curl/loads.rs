//! CSV loads through the FE's redirect, authentication and `Expect` checks, failures
//! before `100-continue`, strict-mode filtering with its error log, and the emulator binary.

use super::*;

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
