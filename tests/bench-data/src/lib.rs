//! The benchmark data set shared by the emulator's and the clients' benchmarks: 8 mixed
//! columns (integers, decimal, date, datetime(6), short and long strings, booleans, 10 %
//! nulls). Kept out of the emulator's library; the crate's binary `ingest-bench` measures
//! the emulator's Stream Load ingest with it (`cargo xtask bench`).

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Int32Array, Int64Array, StringArray,
    TimestampMicrosecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use arrow::record_batch::RecordBatch;

/// The benchmark table: 8 mixed columns, DUPLICATE, 8 buckets.
pub const DDL: &str = "CREATE DATABASE bench; CREATE TABLE bench.t (
  `id` BIGINT NOT NULL, `qty` INT NULL, `amount` DECIMAL(18, 4) NULL, `dt` DATE NULL,
  `ts` DATETIME(6) NULL, `code` VARCHAR(16) NULL, `note` STRING NULL, `flag` BOOLEAN NULL
) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 8";

/// The batches of the benchmark table: `rows` rows in batches of 65 536.
pub fn mixed_batches(rows: usize) -> Result<Vec<RecordBatch>, arrow::error::ArrowError> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("qty", DataType::Int32, true),
        Field::new("amount", DataType::Decimal128(18, 4), true),
        Field::new("dt", DataType::Date32, true),
        Field::new("ts", DataType::Timestamp(TimeUnit::Microsecond, None), true),
        Field::new("code", DataType::Utf8, true),
        Field::new("note", DataType::Utf8, true),
        Field::new("flag", DataType::Boolean, true),
    ]));
    let mut out = Vec::new();
    let batch_rows = 65_536;
    let mut start = 0;
    while start < rows {
        let n = batch_rows.min(rows - start);
        let ids: Vec<i64> = (start..start + n).map(|i| i as i64).collect();
        let null = |i: &i64| i % 10 == 7;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(ids.clone())),
            Arc::new(Int32Array::from_iter(
                ids.iter().map(|i| (!null(i)).then_some((i % 1000) as i32)),
            )),
            Arc::new(
                Decimal128Array::from_iter(
                    ids.iter()
                        .map(|i| (!null(i)).then_some(i128::from(*i) * 12_345)),
                )
                .with_precision_and_scale(18, 4)?,
            ),
            Arc::new(Date32Array::from_iter(
                ids.iter()
                    .map(|i| (!null(i)).then_some(19_000 + (i % 365) as i32)),
            )),
            Arc::new(TimestampMicrosecondArray::from_iter(ids.iter().map(|i| {
                (!null(i)).then_some(1_700_000_000_000_000 + i * 1_001)
            }))),
            Arc::new(StringArray::from_iter(
                ids.iter()
                    .map(|i| (!null(i)).then(|| format!("c{:07}", i % 5000))),
            )),
            Arc::new(StringArray::from_iter(ids.iter().map(|i| {
                (!null(i)).then(|| {
                    format!(
                        "note {i}: a longer free-text value that repeats {}",
                        "x".repeat((i % 60) as usize)
                    )
                })
            }))),
            Arc::new(BooleanArray::from_iter(
                ids.iter().map(|i| (!null(i)).then_some(i % 2 == 0)),
            )),
        ];
        out.push(RecordBatch::try_new(schema.clone(), columns)?);
        start += n;
    }
    Ok(out)
}

/// The same rows as one Arrow IPC stream body.
pub fn arrow_body(rows: usize) -> Result<Vec<u8>, arrow::error::ArrowError> {
    let batches = mixed_batches(rows)?;
    let mut body = Vec::new();
    if let Some(first) = batches.first() {
        let mut writer = arrow::ipc::writer::StreamWriter::try_new(&mut body, &first.schema())?;
        for b in &batches {
            writer.write(b)?;
        }
        writer.finish()?;
    }
    Ok(body)
}

/// The value after `--name` on the command line, or `default`.
pub fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
