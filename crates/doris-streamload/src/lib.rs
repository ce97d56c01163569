//! A complete Doris HTTP Stream Load client for Rust services: labels, retries under the same label, two-phase commit.
//!
//! **Status: not implemented yet.** This crate holds its place in the workspace layout
//! (see `docs/architecture.md`); its work is tracked in issue #4. It exports nothing
//! today, so nothing can depend on behaviour it does not have.
