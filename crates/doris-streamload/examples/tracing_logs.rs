//! `tracing_logs`: a Rust service sees its loads in its own logs. The crate emits
//! `tracing` events (INFO: one line per load with its label, transaction id, status, rows,
//! bytes and time; DEBUG: every attempt, redirect and retry with its reason; WARN: a load
//! that failed) and never a password, SQL text or a body; the service picks the subscriber.
//!
//! ```text
//! cargo run -p doris-streamload --example tracing_logs -- 8030
//! ```

use std::error::Error;
use std::io::Write;

use doris_streamload::{
    ClientConfig, ConnectionSettings, Credentials, LoadOptions, LoadReport, StreamLoadClient,
};
use tracing_subscriber::fmt::MakeWriter;

/// A subscriber that writes every event at DEBUG and above as one plain line to `writer`.
pub fn subscriber<W>(writer: W) -> impl tracing::Subscriber + Send + Sync
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(writer)
        .finish()
}

/// Loads three rows into `demo.events` at the FE's `http_port` (events go to whatever
/// subscriber is current).
pub async fn load(http_port: u16) -> Result<LoadReport, Box<dyn Error>> {
    let mut fe = ConnectionSettings::new("127.0.0.1", Credentials::new("root", ""))?;
    fe.http_port = http_port;
    let client = StreamLoadClient::new(ClientConfig::from_settings(&fe)?)?;
    let batch = rows();
    let schema = batch.schema();
    Ok(client
        .load(
            "demo",
            "events",
            &LoadOptions::default(),
            None,
            schema,
            vec![batch],
        )
        .await?)
}

/// Three rows of `demo.events` (`id BIGINT`, `name VARCHAR`).
fn rows() -> arrow::array::RecordBatch {
    use std::sync::Arc;

    use arrow::array::{Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    arrow::array::RecordBatch::try_new(
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
    // The service's own subscriber: here, plain lines on standard error.
    tracing::subscriber::set_global_default(subscriber(std::io::stderr))?;
    let port = std::env::args().nth(1).map_or(Ok(8030), |p| p.parse())?;
    let report = load(port).await?;
    writeln!(
        std::io::stdout(),
        "{:?}: {} rows",
        report.status,
        report.rows
    )?;
    Ok(())
}
