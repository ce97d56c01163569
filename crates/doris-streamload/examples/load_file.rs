//! Loads a Parquet or Arrow IPC file into a Doris table.
//!
//! ```text
//! DORIS_PASSWORD=... cargo run -p doris-streamload --example load_file -- \
//!     http://127.0.0.1:8030 root demo events data.parquet [label-prefix]
//! ```
//!
//! The file is read batch by batch and streamed as Arrow IPC loads of at most 64 MiB;
//! labels are deterministic from the prefix and the file name, so running the command
//! twice loads the file once.

use std::error::Error;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow::record_batch::RecordBatch;
use doris_streamload::{
    ClientConfig, Credentials, LabelScheme, LoadOptions, Loader, LoaderConfig, StreamLoadClient,
};

fn read_batches(path: &Path) -> Result<Vec<RecordBatch>, Box<dyn Error>> {
    let file = File::open(path)?;
    if path.extension().is_some_and(|e| e == "parquet") {
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)?
            .build()?;
        return Ok(reader.collect::<Result<_, _>>()?);
    }
    // Arrow IPC: the file format first, then the stream format.
    match arrow::ipc::reader::FileReader::try_new(file, None) {
        Ok(reader) => Ok(reader.collect::<Result<_, _>>()?),
        Err(_) => {
            let reader = arrow::ipc::reader::StreamReader::try_new(File::open(path)?, None)?;
            Ok(reader.collect::<Result<_, _>>()?)
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [fe, user, db, table, file, rest @ ..] = args.as_slice() else {
        eprintln!(
            "usage: load_file <fe-url> <user> <db> <table> <file.parquet|file.arrow> [label-prefix]"
        );
        std::process::exit(2);
    };
    let password = std::env::var("DORIS_PASSWORD").unwrap_or_default();
    let path = Path::new(file);
    let key: String = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("file")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let client = Arc::new(StreamLoadClient::new(ClientConfig::new(
        fe.parse()?,
        Credentials::new(user.as_str(), password),
    ))?);
    let mut loader = Loader::new(
        client,
        db.as_str(),
        table.as_str(),
        LoadOptions::default(),
        LoaderConfig {
            labels: LabelScheme::Deterministic {
                prefix: rest.first().cloned().unwrap_or_else(|| "load_file".into()),
                key,
                partition: 0,
            },
            ..LoaderConfig::default()
        },
    )?;
    for batch in read_batches(path)? {
        loader.write(batch).await?;
    }
    let summary = loader.finish().await?;
    for entry in &summary.ledger {
        let r = &entry.report;
        println!(
            "{:<40} txn {:>8} {:?} rows {} bytes {} attempts {}",
            r.label.as_deref().unwrap_or("-"),
            r.txn_id,
            r.status,
            r.rows,
            r.uploaded_bytes,
            r.attempts
        );
    }
    println!(
        "{} rows: {} loaded, {} filtered, {} unselected; {} bytes in {:.2?}",
        summary.rows,
        summary.loaded_rows,
        summary.filtered_rows,
        summary.unselected_rows,
        summary.uploaded_bytes,
        summary.elapsed
    );
    Ok(())
}
