//! The emulator's faces against clients nobody here wrote (`curl`, the `mariadb` client,
//! sqlx) and its own checks, as one test binary (each module would otherwise link the
//! emulator, DataFusion included, into a binary of its own). The conformance corpus
//! (`corpus.rs`) stays apart: `cargo xtask conformance` runs it alone.

#[path = "../common/mod.rs"]
mod common;
mod ddl_differential;
mod faults;
mod mysql_face;
mod prepared;
mod query_plan;
#[cfg(feature = "sql")]
mod select;
mod statement_kinds;
mod stream_load_curl;
