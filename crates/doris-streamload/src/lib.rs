//! # doris-streamload
//!
//! A complete Apache Doris HTTP Stream Load client for Rust services: no Python, no SQL
//! engine, no MySQL driver. It is also the write engine under `daft_doris.write_doris`.
//!
//! - **No double upload.** Every request announces its body with `Expect: 100-continue`
//!   and sends it only after `100 Continue`. The FE's 307 therefore arrives before any
//!   body byte; the client strips the userinfo from `Location`, checks the target against
//!   a [`RedirectAllowlist`], and streams the body once, to the BE. A BE that refuses the
//!   label, the table or the credentials answers before the body too.
//! - **Streaming bodies.** Record batches are encoded (Arrow IPC stream by default,
//!   Parquet, NDJSON or CSV; gzip or LZ4 for text) while they are sent, cut into loads by
//!   rows and by encoded bytes.
//! - **Exactly once.** Every load has a label (deterministic with
//!   [`LabelScheme::Deterministic`]); failures before the body and ambiguous ones are
//!   retried under the same label; `Label Already Exists` is resolved by its
//!   `ExistingJobStatus` (FINISHED after our own lost answer is success, RUNNING is probed
//!   again, PRECOMMITTED is reported). Optional two-phase commit.
//!
//! ```no_run
//! # async fn demo(batch: arrow::record_batch::RecordBatch) -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use doris_streamload::{ClientConfig, Credentials, LoadOptions, Loader, LoaderConfig, StreamLoadClient};
//!
//! let config = ClientConfig::new("http://127.0.0.1:8030".parse()?, Credentials::new("root", ""));
//! let client = Arc::new(StreamLoadClient::new(config)?);
//! let mut loader = Loader::new(client, "demo", "events", LoadOptions::default(), LoaderConfig::default())?;
//! loader.write(batch).await?;
//! let summary = loader.finish().await?;
//! println!("{} rows in {} loads", summary.loaded_rows, summary.ledger.len());
//! # Ok(()) }
//! ```

pub mod atomic;
mod client;
mod config;
mod encode;
mod error;
mod label;
mod loader;
mod options;
pub mod prepare;
mod response;
mod retry;
mod wire;
pub mod write;

pub use client::{LoadReport, LoadStatus, StreamLoadClient, TwoPhaseOutcome, TxnRef};
pub use config::{
    ClientConfig, ClientIdentity, ConnectionSettings, Credentials, HostPort, RedirectAllowlist,
    RedirectPolicy, RetryPolicy, Route,
};
pub use encode::{Encoded, Limits, encode};
pub use error::StreamLoadError;
pub use label::{Label, LabelScheme, MAX_LABEL_LEN};
pub use loader::{LedgerEntry, LoadSummary, Loader, LoaderConfig, LoaderError, txn_ref};
pub use options::{
    Columns, Compression, CsvOptions, Format, GroupCommit, LoadOptions, MANAGED_HEADERS, MergeType,
    NewKeyBehavior, UpdateMode, quote_column,
};
pub use response::{ExistingJobStatus, LoadResponse};
