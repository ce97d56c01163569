//! The Doris behaviours the crates rely on, one module per subject, run against the
//! emulator or a real Doris (`DORIS_TEST_*`, see the crate root).
#![allow(clippy::unwrap_used)]

mod common;

mod metadata;
mod query_plan;
mod reads;
mod stream_load;
mod transactions;
