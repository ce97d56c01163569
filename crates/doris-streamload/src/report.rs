//! What a load, a commit or an abort returns.

use std::time::Duration;

use crate::label::Label;
use crate::response::LoadResponse;

/// How a load ended, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadStatus {
    /// Committed and visible.
    Success,
    /// Committed; Doris makes it visible later (`Publish Timeout`).
    PublishTimeout,
    /// Pre-committed (two-phase commit): invisible until committed.
    Precommitted,
    /// An earlier attempt of this call, whose answer was lost, committed the rows: Doris
    /// answered `Label Already Exists` with `FINISHED`. The rows are in Doris once.
    CommittedByEarlierAttempt,
    /// The label was already committed before this call (a rerun of the same job over the
    /// same data): nothing was sent again.
    AlreadyLoaded,
}

impl LoadStatus {
    /// Whether the rows are (or will become) visible without a further step.
    pub fn is_committed(self) -> bool {
        !matches!(self, Self::Precommitted)
    }
}

/// The outcome of one load.
#[derive(Debug, Clone)]
pub struct LoadReport {
    /// The label (`None` for group commit, whose label Doris chooses).
    pub label: Option<String>,
    /// The transaction id (`-1` when unknown).
    pub txn_id: i64,
    /// How it ended.
    pub status: LoadStatus,
    /// Rows this load carried.
    pub rows: u64,
    /// Encoded bytes of the body (before compression).
    pub encoded_bytes: u64,
    /// Body bytes put on the wire, over every attempt.
    pub uploaded_bytes: u64,
    /// Attempts made.
    pub attempts: u32,
    /// Wall time from the first attempt to the answer.
    pub elapsed: Duration,
    /// Doris's answer (absent for the `Label Already Exists` outcomes).
    pub response: Option<LoadResponse>,
}

/// A transaction to commit or abort (serialized as `{"Id": n}` or `{"Label": text}`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum TxnRef {
    /// By transaction id.
    Id(i64),
    /// By label.
    Label(Label),
}

impl TxnRef {
    /// `transaction [id]` or `label [label]`, as Doris's 2PC messages name them.
    pub fn describe(&self) -> String {
        match self {
            Self::Id(id) => format!("transaction [{id}]"),
            Self::Label(l) => format!("label [{l}]"),
        }
    }
}

/// The result of a commit or abort.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TwoPhaseOutcome {
    /// Done now.
    Done,
    /// It had already been done (a repeated call: commits and aborts are idempotent).
    AlreadyDone,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_precommitted_load_waits_for_a_further_step() {
        for status in [
            LoadStatus::Success,
            LoadStatus::PublishTimeout,
            LoadStatus::CommittedByEarlierAttempt,
            LoadStatus::AlreadyLoaded,
        ] {
            assert!(status.is_committed(), "{status:?}");
        }
        assert!(!LoadStatus::Precommitted.is_committed());
    }

    #[test]
    fn transactions_are_described_as_doris_names_them() {
        assert_eq!(TxnRef::Id(42).describe(), "transaction [42]");
        let label = Label::new("job_1").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(TxnRef::Label(label).describe(), "label [job_1]");
    }
}
