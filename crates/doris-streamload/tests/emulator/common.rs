//! What every test here shares: an emulator with database `d`, the rows it holds,
//! a schema and batches of it, and one-batch loads.

pub(crate) use std::sync::Arc;
pub(crate) use std::time::Duration;

pub(crate) use arrow::array::{Array, Int32Array, Int64Array, StringArray};
pub(crate) use arrow::compute::concat_batches;
pub(crate) use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
pub(crate) use arrow::record_batch::RecordBatch;
pub(crate) use doris_emulator::faults::Fault;
pub(crate) use doris_emulator::wire_stats::HttpFace;
pub(crate) use doris_emulator::{Emulator, EmulatorConfig};
pub(crate) use doris_streamload::*;

pub(crate) struct Env {
    pub(crate) emulator: Emulator,
}

impl Env {
    pub(crate) async fn new(ddl: &str) -> Self {
        let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
        emulator
            .execute(None, &format!("CREATE DATABASE d; {ddl}"))
            .unwrap();
        Self { emulator }
    }

    pub(crate) fn config(&self) -> ClientConfig {
        let mut c = ClientConfig::new(
            format!("http://{}", self.emulator.fe_http_addr())
                .parse()
                .unwrap(),
            Credentials::new("root", ""),
        );
        c.retry.initial_backoff = Duration::from_millis(20);
        c.retry.running_probe_interval = Duration::from_millis(100);
        c
    }

    pub(crate) fn client(&self) -> Arc<StreamLoadClient> {
        Arc::new(StreamLoadClient::new(self.config()).unwrap())
    }

    pub(crate) fn rows(&self, table: &str) -> RecordBatch {
        let t = self.emulator.shared().catalog.table("d", table).unwrap();
        let batches = t.snapshot(None).unwrap();
        concat_batches(&t.arrow_schema, &batches).unwrap()
    }

    pub(crate) fn row_count(&self, table: &str) -> usize {
        self.rows(table).num_rows()
    }

    /// The `TransactionStatus` of the transaction holding `label` in `d`, if any.
    pub(crate) fn label_state(&self, label: &str) -> Option<String> {
        let txns = &self.emulator.shared().txns;
        let id = txns.resolve("d", &doris_emulator::txn::TxnRef::Label(label.into()))?;
        txns.describe(id)
            .map(|(_, state, _, _)| state.as_str().to_owned())
    }
}

/// Polls `done` every 10 ms for up to 10 s (a state reached, not a time slept).
pub(crate) async fn wait_until(mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "the state was not reached in 10 s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

pub(crate) const DUP: &str = "CREATE TABLE d.t (id BIGINT NOT NULL, name VARCHAR(64), n INT) \
                   DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 4";

pub(crate) fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("n", DataType::Int32, true),
    ]))
}

pub(crate) fn batch(from: i64, rows: usize) -> RecordBatch {
    let ids: Vec<i64> = (from..from + rows as i64).collect();
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(ids.clone())),
            Arc::new(StringArray::from_iter(ids.iter().map(|i| {
                if i % 7 == 0 {
                    None
                } else {
                    Some(format!("name, \"quoted\" {i}\n"))
                }
            }))),
            Arc::new(Int32Array::from_iter(
                ids.iter().map(|i| (i % 5 != 0).then_some(*i as i32)),
            )),
        ],
    )
    .unwrap()
}

pub(crate) async fn load(
    env: &Env,
    options: &LoadOptions,
    label: &str,
    b: RecordBatch,
) -> Result<LoadReport, StreamLoadError> {
    labeled(&env.client(), options, label, b).await
}

/// `client.load` of one batch into `d.t` under `label`.
pub(crate) async fn labeled(
    client: &StreamLoadClient,
    options: &LoadOptions,
    label: &str,
    b: RecordBatch,
) -> Result<LoadReport, StreamLoadError> {
    client
        .load(
            "d",
            "t",
            options,
            Some(Label::new(label).unwrap()),
            b.schema(),
            vec![b],
        )
        .await
}

pub(crate) fn sorted_ids(b: &RecordBatch) -> Vec<i64> {
    let ids = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    let mut v: Vec<i64> = ids.values().to_vec();
    v.sort_unstable();
    v
}
