//! # doris-write
//!
//! Exactly-once writes into Apache Doris, above the Stream Load client
//! ([`doris_streamload`]): the rules of a whole write of an engine's partitions into one
//! table, and the atomic write that makes a rerun of a whole write a no-op.
//!
//! - [`WriteSpec`]: what the caller asked (operation, format, batch bounds, labels,
//!   idempotence key, atomic, overwrite, two-phase commit, the commit record, Stream Load
//!   properties), checked together by [`WriteSpec::check`]; the Stream Load options it
//!   implies ([`WriteSpec::load_options`]); whether it runs in the atomic mode
//!   ([`WriteSpec::atomic`]).
//! - [`PartitionLabels`]: the deterministic per-load labels of a keyed write that is not
//!   atomic (per-load labels, two-phase or not): the key, a fingerprint of the partition's
//!   content *and* of every setting that decides its loads, and an occurrence number for
//!   identical partitions.
//! - [`WriteRun`]: a whole write as an engine's sink drives it: started once (the table
//!   check, the atomic begin), a [`TaskWriter`] per task attempt, finished from the
//!   tasks' reports (publish, two-phase commit, summary) or aborted.
//! - [`TaskWriter`]: one task's batches loaded as the spec says (into the target, or an
//!   atomic run's staging table), giving its [`TaskReport`]; [`WriteSummary::of_loads`]
//!   and [`WriteSummary::of_atomic`] fold the tasks' reports into the write's outcome.
//! - [`atomic`]: the atomic write. Rows are staged through Stream Load, then published
//!   in one Doris transaction under the key's label ([`atomic::key_label`]: any key, one to
//!   one, in the label form Doris's SQL grammar takes), with a record in a commit ledger
//!   that outlives the label. Which Doris releases can run it, and why, is
//!   [`atomic::check_release`].
//! - [`staging`]: the SQL statements of the atomic write (no I/O): the staging table, its
//!   names, the ledger and the publishing transaction.
//!
//! The SQL statements run over any [`doris_sql::session::SqlSession`] (`doris-mysql`'s
//! session is one); this crate speaks no MySQL itself.
//!
//! ```
//! use doris_write::{WriteSpec, WriteMode};
//! use doris_sql::WriteOperation;
//!
//! let mut spec = WriteSpec::new(WriteOperation::Load);
//! spec.idempotence_key = Some("nightly-2026-12-01".into());
//! spec.check().unwrap();
//! // A key makes the write atomic unless asked otherwise.
//! assert_eq!(spec.mode(), WriteMode::Atomic);
//! spec.atomic = Some(false);
//! assert_eq!(spec.mode(), WriteMode::PerLoadLabels);
//! spec.two_phase_commit = true;
//! spec.atomic = Some(true);
//! assert!(spec.check().is_err(), "an atomic write commits once itself");
//! ```

pub mod atomic;
mod labels;
mod options;
mod run;
mod spec;
pub mod staging;
mod summary;
mod task;

pub use labels::{PartitionLabels, content_fingerprint};
pub use run::{AtomicStage, CheckedTarget, RunState, WriteRun};
pub use spec::*;
pub use summary::{StatusCounts, TaskReport, WriteStatus, WriteSummary};
pub use task::{TaskFailure, TaskWriter};
