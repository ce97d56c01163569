//! The key models: UNIQUE with a sequence column, AGGREGATE, partial and flexible partial
//! updates, the delete sign and `merge_type: MERGE`.

use super::*;

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
