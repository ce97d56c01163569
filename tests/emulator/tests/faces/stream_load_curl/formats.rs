//! Formats and load options: Arrow, Parquet, gzip, partitions, nested columns, `columns`
//! mappings, `where`, `json_root`, `jsonpaths`, and headers the emulator refuses by name.

use super::*;

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
    // The BE reads compressed CSV, never compressed JSON (`StreamLoadAction::_on_header`).
    let (json, _) = h.stream_load(
        "dup",
        &h.file("c.json.gz", &gz.finish().unwrap()),
        &["label:f3", "format:json", "compress_type:gz"],
        "root:",
    );
    assert_eq!(json["Status"], "Fail", "{json}");
    assert_message_contains(&json, "compress data of JSON format is not supported.");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(b"20,gz,3\n").unwrap();
    let (json, _) = h.stream_load(
        "dup",
        &h.file("c.csv.gz", &gz.finish().unwrap()),
        &["label:f3", "column_separator:,", "compress_type:gz"],
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
