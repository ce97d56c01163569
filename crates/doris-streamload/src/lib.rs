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

//! ## Features
//!
//! - `client` (default): the HTTP client, the encoders and the writers above (arrow,
//!   parquet, hyper, reqwest, tokio, rustls). Without it the crate is what a service with
//!   its own HTTP stack needs, and nothing that does I/O: Doris's answers parsed
//!   ([`LoadResponse`], [`decide::classify`]), the exactly-once rules that decide each
//!   next step ([`decide`]), labels ([`Label`]) and the error and outcome types.

#[cfg(feature = "client")]
mod client;
#[cfg(feature = "client")]
mod config;
pub mod decide;
#[cfg(feature = "client")]
mod encode;
mod error;
#[cfg(feature = "client")]
mod json_text;
mod label;
#[cfg(feature = "client")]
mod loader;
#[cfg(feature = "client")]
mod options;
#[cfg(feature = "client")]
pub mod prepare;
mod report;
mod response;
#[cfg(feature = "client")]
mod retry;
#[cfg(feature = "client")]
mod wire;

#[cfg(feature = "client")]
pub use client::StreamLoadClient;
#[cfg(feature = "client")]
pub use config::{
    ClientConfig, ClientIdentity, ConnectionSettings, Credentials, HostPort, RedirectAllowlist,
    RedirectPolicy, RetryPolicy, Route,
};
pub use doris_sql::ErrorKind;
#[cfg(feature = "client")]
pub use encode::{Encoded, Limits, encode};
pub use error::{ErrorFields, StreamLoadError};
pub use label::{Label, LabelScheme, MAX_LABEL_LEN};
#[cfg(feature = "client")]
pub use loader::{LedgerEntry, LoadSummary, Loader, LoaderConfig, LoaderError, txn_ref};
#[cfg(feature = "client")]
pub use options::{
    Columns, Compression, CsvOptions, Format, GroupCommit, LoadOptions, MANAGED_HEADERS, MergeType,
    NewKeyBehavior, UpdateMode, quote_column,
};
pub use report::{LoadReport, LoadStatus, TwoPhaseOutcome, TxnRef};
pub use response::{ExistingJobStatus, LoadResponse};
#[cfg(feature = "client")]
pub use wire::USER_AGENT;
