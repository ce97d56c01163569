//! Formats, compression and what crosses the wire.

use crate::common::*;

#[tokio::test]
async fn every_format_and_compression_loads_the_same_rows() {
    let env = Env::new(DUP).await;
    let cases = [
        (Format::Arrow, Compression::None),
        (Format::Parquet, Compression::None),
        (Format::Json, Compression::None),
        (Format::Json, Compression::Gzip),
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
    assert_eq!(all.num_rows(), 3000);
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
