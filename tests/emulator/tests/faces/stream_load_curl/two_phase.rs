//! Two-phase commit through the FE.

use super::*;

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
