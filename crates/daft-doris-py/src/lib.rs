//! The PyO3 binding and the Python package `daft_doris` (read_doris, write_doris) for the Daft dataframe library.
//!
//! **Status: not implemented yet.** This crate holds its place in the workspace layout
//! (see `docs/architecture.md`); its work is tracked in issue #6. It exports nothing
//! today, so nothing can depend on behaviour it does not have.
