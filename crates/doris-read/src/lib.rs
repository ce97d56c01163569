//! Doris read transports (MySQL text protocol and Arrow Flight SQL) that produce Arrow record batches.
//!
//! **Status: not implemented yet.** This crate holds its place in the workspace layout
//! (see `docs/architecture.md`); its work is tracked in issue #5. It exports nothing
//! today, so nothing can depend on behaviour it does not have.
