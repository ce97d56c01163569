//! doris-streamload against the Doris emulator: every outcome class, every fault the
//! emulator injects, 2PC, group commit, formats, compression and key-model operations.
//! One test binary; one module per subject.
#![allow(clippy::unwrap_used)]

mod common;

mod formats;
mod group_commit;
mod key_models;
mod limits;
mod loader;
mod logs;
mod outcomes;
mod routing;
mod tls;
mod two_phase;
mod waits;
