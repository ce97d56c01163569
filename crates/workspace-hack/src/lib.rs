//! No code. This crate only adds features to crates the Python package shares with the
//! workspace's test build, so that both builds resolve them alike and the second reuses
//! the first (see this crate's `Cargo.toml`).
