//! `DESC` and `SHOW CREATE TABLE` as doris-sql parses them and doris-read maps them.

use arrow::datatypes::{DataType, TimeUnit};
use doris_read::{TimestampUnits, discover, discover_in, fetch_table_schema};
use doris_sql::{Buckets, Distribution, KeyModel};

use crate::common::with_table;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn desc_maps_every_column_to_its_arrow_type() {
    let (target, db) = with_table().await;
    let layout = discover(&target.mysql(), &db.name, "t").await.unwrap();
    let got: Vec<(String, DataType, bool)> = layout
        .columns
        .iter()
        .map(|c| (c.name.clone(), c.arrow_type.clone().unwrap(), c.nullable))
        .collect();
    assert_eq!(
        got,
        vec![
            ("id".into(), DataType::Int64, false),
            ("name".into(), DataType::Utf8, true),
            ("amount".into(), DataType::Decimal128(20, 6), true),
            (
                "ts".into(),
                DataType::Timestamp(TimeUnit::Microsecond, None),
                true
            ),
            ("d".into(), DataType::Date32, true),
        ]
    );
    // DATETIME(3) in its own unit, when asked.
    let exact = discover_in(&target.mysql(), &db.name, "t", TimestampUnits::ByPrecision)
        .await
        .unwrap();
    let ts = exact.columns.iter().find(|c| c.name == "ts").unwrap();
    assert_eq!(
        ts.arrow_type.clone().unwrap(),
        DataType::Timestamp(TimeUnit::Millisecond, None)
    );
    target.drop_scratch(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_create_table_gives_the_key_model_keys_and_distribution() {
    let (target, db) = with_table().await;
    let schema = fetch_table_schema(&target.mysql(), &db.name, "t")
        .await
        .unwrap();
    assert_eq!(schema.name, "t");
    assert_eq!(schema.key_model, Some(KeyModel::Duplicate));
    assert_eq!(schema.key_columns, vec!["id".to_owned()]);
    assert_eq!(
        schema.distribution,
        Some(Distribution::Hash {
            columns: vec!["id".into()],
            buckets: Buckets::Fixed(3),
        })
    );
    let names: Vec<&str> = schema.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["id", "name", "amount", "ts", "d"]);
    target.drop_scratch(db).await;
}
