//! A table every module loads and reads: five columns of the common types.

use std::sync::Arc;

use arrow::array::{
    Date32Array, Decimal128Array, Int64Array, StringArray, TimestampMillisecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use arrow::record_batch::RecordBatch;
pub(crate) use doris_conformance::{Scratch, TABLE_PROPERTIES, Target};
use doris_streamload::{Label, LoadOptions, LoadReport, StreamLoadClient, StreamLoadError};

/// `CREATE TABLE db.t` with three buckets.
pub(crate) fn ddl(db: &str) -> String {
    format!(
        "CREATE TABLE `{db}`.`t` (`id` BIGINT NOT NULL, `name` VARCHAR(32) NULL, \
         `amount` DECIMAL(20, 6) NULL, `ts` DATETIME(3) NULL, `d` DATE NULL) \
         DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 3 {TABLE_PROPERTIES}"
    )
}

/// A target with a scratch database holding an empty `t`.
pub(crate) async fn with_table() -> (Target, Scratch) {
    let target = Target::start().await;
    let scratch = target.scratch().await;
    target.execute(&ddl(&scratch.name)).await;
    (target, scratch)
}

/// The Arrow schema of `t` as a loader sends it.
pub(crate) fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("amount", DataType::Decimal128(20, 6), true),
        Field::new("ts", DataType::Timestamp(TimeUnit::Millisecond, None), true),
        Field::new("d", DataType::Date32, true),
    ]))
}

/// Rows `from..from + rows` of `t`: every fifth name null.
pub(crate) fn rows(from: i64, rows: usize) -> RecordBatch {
    let ids: Vec<i64> = (from..from + rows as i64).collect();
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(ids.clone())),
            Arc::new(StringArray::from_iter(
                ids.iter().map(|i| (i % 5 != 0).then(|| format!("n{i}"))),
            )),
            Arc::new(
                Decimal128Array::from_iter(ids.iter().map(|i| Some(i128::from(*i) * 1_000_250)))
                    .with_precision_and_scale(20, 6)
                    .unwrap(),
            ),
            Arc::new(TimestampMillisecondArray::from_iter(
                ids.iter().map(|i| Some(1_706_702_400_000 + i * 1_001)),
            )),
            Arc::new(Date32Array::from_iter(
                ids.iter().map(|i| Some(19_000 + *i as i32)),
            )),
        ],
    )
    .unwrap()
}

/// `SELECT COUNT(*)` of `db.t`.
pub(crate) async fn count(target: &Target, db: &str) -> u64 {
    target
        .scalar(&format!("SELECT COUNT(*) FROM `{db}`.`t`"))
        .await
        .unwrap()
        .parse()
        .unwrap()
}

/// One Stream Load of `batch` into `db.t`, under `label` when one is given.
pub(crate) async fn load(
    client: &StreamLoadClient,
    db: &str,
    options: &LoadOptions,
    label: Option<&str>,
    batch: RecordBatch,
) -> Result<LoadReport, StreamLoadError> {
    let label = label.map(|l| Label::new(l).unwrap());
    client
        .load(db, "t", options, label, batch.schema(), vec![batch])
        .await
}
