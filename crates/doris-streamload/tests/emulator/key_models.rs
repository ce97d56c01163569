//! Key-model operations: upsert, sequence column, partial update, delete.

use crate::common::*;

const UNIQ: &str = "CREATE TABLE d.u (id BIGINT NOT NULL, name VARCHAR(64), n INT, seq INT) \
                    UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2 \
                    PROPERTIES (\"enable_unique_key_merge_on_write\" = \"true\", \
                    \"function_column.sequence_col\" = \"seq\")";

fn uniq(ids: &[i64], names: &[&str], ns: &[i32], seqs: &[i32]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("n", DataType::Int32, true),
        Field::new("seq", DataType::Int32, true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(ids.to_vec())),
            Arc::new(StringArray::from(names.to_vec())),
            Arc::new(Int32Array::from(ns.to_vec())),
            Arc::new(Int32Array::from(seqs.to_vec())),
        ],
    )
    .unwrap()
}

fn cell(b: &RecordBatch, id: i64) -> (String, i32) {
    let ids = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    let names = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
    let ns = b.column(2).as_any().downcast_ref::<Int32Array>().unwrap();
    let r = (0..b.num_rows()).find(|r| ids.value(*r) == id).unwrap();
    (names.value(r).to_owned(), ns.value(r))
}

#[tokio::test]
async fn key_model_operations_upsert_sequence_partial_update_and_delete() {
    let env = Env::new(UNIQ).await;
    let client = env.client();
    let go = |options: LoadOptions, b: RecordBatch| {
        let client = client.clone();
        async move {
            client
                .load("d", "u", &options, None, b.schema(), vec![b])
                .await
                .unwrap()
        }
    };
    go(
        LoadOptions::default(),
        uniq(&[1, 2, 3], &["a", "b", "c"], &[10, 20, 30], &[5, 5, 5]),
    )
    .await;
    // Upsert: a newer sequence wins, an older one is ignored.
    go(
        LoadOptions::default(),
        uniq(&[1, 2], &["a2", "b-old"], &[11, 21], &[6, 4]),
    )
    .await;
    let rows = env.rows("u");
    assert_eq!(rows.num_rows(), 3);
    assert_eq!(cell(&rows, 1), ("a2".into(), 11));
    assert_eq!(cell(&rows, 2), ("b".into(), 20));
    // Partial update of `n` only (NDJSON), existing key 3 and new key 4.
    let partial_schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("n", DataType::Int32, true),
    ]));
    let partial = RecordBatch::try_new(
        partial_schema,
        vec![
            Arc::new(Int64Array::from(vec![3, 4])),
            Arc::new(Int32Array::from(vec![33, 44])),
        ],
    )
    .unwrap();
    go(
        LoadOptions {
            format: Format::Json,
            update_mode: UpdateMode::FixedColumns {
                legacy_header: false,
            },
            ..LoadOptions::default()
        },
        partial,
    )
    .await;
    let rows = env.rows("u");
    assert_eq!(cell(&rows, 3), ("c".into(), 33));
    assert_eq!(rows.num_rows(), 4);
    // Delete by key.
    let keys_schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let keys =
        RecordBatch::try_new(keys_schema, vec![Arc::new(Int64Array::from(vec![1, 4]))]).unwrap();
    go(
        LoadOptions {
            merge_type: MergeType::Delete,
            ..LoadOptions::default()
        },
        keys,
    )
    .await;
    assert_eq!(sorted_ids(&env.rows("u")), vec![2, 3]);
}
