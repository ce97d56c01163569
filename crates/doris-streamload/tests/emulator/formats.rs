//! Formats, compression and what crosses the wire.

use crate::common::*;

#[tokio::test]
async fn every_format_and_compression_loads_the_same_rows() {
    let env = Env::new(DUP).await;
    let cases = [
        (Format::Arrow, Compression::None),
        (Format::Parquet, Compression::None),
        (Format::Json, Compression::None),
        (Format::Csv(CsvOptions::default()), Compression::None),
        (Format::Csv(CsvOptions::default()), Compression::Lz4),
    ];
    for (i, (format, compression)) in cases.into_iter().enumerate() {
        let options = LoadOptions {
            format: format.clone(),
            compression,
            ..LoadOptions::default()
        };
        let r = load(
            &env,
            &options,
            &format!("fmt{i}"),
            batch(i as i64 * 1000, 500),
        )
        .await
        .unwrap_or_else(|e| panic!("{format:?} {compression:?}: {e}"));
        assert_eq!(r.status, LoadStatus::Success);
        assert_eq!(r.rows, 500);
        assert_eq!(
            r.response.as_ref().unwrap().number_loaded_rows,
            500,
            "{format:?}"
        );
    }
    let all = env.rows("t");
    assert_eq!(all.num_rows(), 2500);
    // Text formats carried NULLs, quotes, separators and newlines intact.
    let names = all
        .column(1)
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    let ids = all.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    for r in 0..all.num_rows() {
        let id = ids.value(r);
        if id % 7 == 0 {
            assert!(names.is_null(r), "id {id}");
        } else {
            assert_eq!(
                names.value(r),
                format!("name, \"quoted\" {id}\n"),
                "id {id}"
            );
        }
    }
}

#[tokio::test]
async fn the_body_crosses_the_wire_once_and_never_to_the_fe() {
    let env = Env::new(DUP).await;
    let b = batch(0, 50_000);
    let r = load(&env, &LoadOptions::default(), "wire1", b)
        .await
        .unwrap();
    let (fe, be) = env.emulator.http_bytes_received();
    assert!(r.uploaded_bytes > 1_000_000, "{r:?}");
    assert!(fe < 2_000, "the FE received {fe} bytes: more than headers");
    assert!(
        be >= r.uploaded_bytes && be < r.uploaded_bytes + 20_000,
        "BE received {be}, body {}",
        r.uploaded_bytes
    );
    assert_eq!(env.row_count("t"), 50_000);
}

#[tokio::test]
async fn an_early_be_answer_uploads_nothing() {
    let env = Env::new(DUP).await;
    load(&env, &LoadOptions::default(), "dup1", batch(0, 10))
        .await
        .unwrap();
    let (_, be_before) = env.emulator.http_bytes_received();
    // Same label from a "different job": Doris answers before the body.
    let r = load(&env, &LoadOptions::default(), "dup1", batch(0, 20_000))
        .await
        .unwrap();
    assert_eq!(r.status, LoadStatus::AlreadyLoaded);
    assert_eq!(r.uploaded_bytes, 0);
    let (_, be_after) = env.emulator.http_bytes_received();
    assert!(be_after - be_before < 2_000, "{}", be_after - be_before);
    assert_eq!(env.row_count("t"), 10);
}

/// Strings made of what CSV trips on: the empty string, `\N`, every candidate escape,
/// enclose and separator byte, tabs, NUL, CR/LF, non-ASCII.
fn csv_edge_string() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    proptest::collection::vec(
        prop::sample::select(vec![
            "", "\\N", "\\", "^", "\t", "\0", "\r\n", "\n", "\r", "\"", "'", ",", "|", "ż", "a",
            " ",
        ]),
        0..6,
    )
    .prop_map(|parts| parts.concat())
}

/// A CSV dialect: separator, enclose and escape bytes, distinct.
fn csv_dialect() -> impl proptest::strategy::Strategy<Value = CsvOptions> {
    use proptest::prelude::*;
    (
        prop::sample::select(vec![b',', b'\t', b'|']),
        prop::sample::select(vec![b'"', b'\'']),
        prop::sample::select(vec![b'\\', b'^']),
    )
        .prop_map(|(separator, enclose, escape)| CsvOptions {
            separator,
            enclose,
            escape,
        })
}

#[test]
fn csv_carries_every_string_exactly() {
    // Each case loads generated strings (and NULLs) as CSV in a generated dialect into a
    // table of its own, and reads back exactly what was written: the emulator reads CSV as
    // Doris's BE does (enclose-aware records, escape bytes removed, `\N` as NULL).
    use proptest::test_runner::{Config, TestRunner};
    let rt = tokio::runtime::Runtime::new().unwrap();
    let env = rt.block_on(Env::new(DUP));
    let client = env.client();
    let case = std::sync::atomic::AtomicUsize::new(0);
    let mut runner = TestRunner::new(Config {
        cases: 48,
        failure_persistence: None,
        ..Config::default()
    });
    let values = proptest::collection::vec(proptest::option::of(csv_edge_string()), 1..10);
    runner
        .run(&(values, csv_dialect()), |(values, dialect)| {
            let n = case.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let table = format!("s{n}");
            env.emulator
                .execute(
                    None,
                    &format!(
                        "CREATE TABLE d.{table} (id BIGINT NOT NULL, s STRING NULL) \
                         DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"
                    ),
                )
                .unwrap();
            let schema = Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int64, false),
                Field::new("s", DataType::Utf8, true),
            ]));
            let b = RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(Int64Array::from_iter_values(0..values.len() as i64)),
                    Arc::new(StringArray::from(values.clone())),
                ],
            )
            .unwrap();
            let options = LoadOptions {
                format: Format::Csv(dialect.clone()),
                ..LoadOptions::default()
            };
            let report = rt
                .block_on(client.load("d", &table, &options, None, schema, vec![b]))
                .map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
            proptest::prop_assert_eq!(report.rows, values.len() as u64);
            let back = env.rows(&table);
            let ids = back
                .column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap();
            let strings = back
                .column(1)
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap();
            let mut got: Vec<(i64, Option<String>)> = (0..back.num_rows())
                .map(|r| {
                    (
                        ids.value(r),
                        strings.is_valid(r).then(|| strings.value(r).to_owned()),
                    )
                })
                .collect();
            got.sort_by_key(|(id, _)| *id);
            let want: Vec<(i64, Option<String>)> = values
                .iter()
                .cloned()
                .enumerate()
                .map(|(i, v)| (i as i64, v))
                .collect();
            proptest::prop_assert_eq!(got, want, "dialect {:?}", dialect);
            Ok(())
        })
        .unwrap();
}

/// Doris reads compressed CSV only (`compress data of JSON format is not supported.`, the
/// emulator's curl suite shows the BE's refusal): the client refuses the combination first.
#[test]
fn compressed_json_is_refused_before_anything_is_sent() {
    let options = LoadOptions {
        format: Format::Json,
        compression: Compression::Gzip,
        ..LoadOptions::default()
    };
    let err = options.validate().unwrap_err();
    assert!(err.to_string().contains("csv bodies only"), "{err}");
}
