//! `quick_start`: the README's Rust example. One Stream Load of Arrow batches under a fixed
//! label: run it twice and Doris holds the rows once.
//!
//! ```text
//! cargo run -p doris-streamload --example quick_start -- 8030
//! ```
//!
//! The README shows the function between the `README:` markers, verbatim (a test compares
//! them and runs it against the emulator: `tests/integration/tests/emulator/readme.rs`).

// README: begin
use std::error::Error;

use arrow::array::RecordBatch;
use doris_streamload::{
    ClientConfig, ConnectionSettings, Credentials, Label, LoadOptions, LoadReport, StreamLoadClient,
};

/// Loads `batch` into `demo.events` once, however often it runs.
pub async fn load_events(batch: RecordBatch, http_port: u16) -> Result<LoadReport, Box<dyn Error>> {
    let mut fe = ConnectionSettings::new("127.0.0.1", Credentials::new("root", ""))?;
    fe.http_port = http_port; // 8030 by default
    let client = StreamLoadClient::new(ClientConfig::from_settings(&fe)?)?;
    // The same label on a rerun: Doris loads the rows once (`LoadStatus::AlreadyLoaded`).
    let label = Label::new("events_2026_12_04")?;
    let options = LoadOptions::default(); // Arrow IPC, strict mode, retries under the label
    let schema = batch.schema();
    Ok(client
        .load("demo", "events", &options, Some(label), schema, vec![batch])
        .await?)
}
// README: end

use std::sync::Arc;

use arrow::array::{Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

/// Three rows of `demo.events` (`id BIGINT`, `name VARCHAR`).
pub fn sample() -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(vec![1, 2, 3])),
            Arc::new(StringArray::from(vec!["a", "b", "c"])),
        ],
    )
    .expect("a valid batch")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let port = std::env::args().nth(1).map_or(Ok(8030), |p| p.parse())?;
    let report = load_events(sample(), port).await?;
    println!("{:?}: {} rows", report.status, report.rows);
    Ok(())
}
