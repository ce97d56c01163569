//! The tasks' results folded into the write's outcome.
//!
//! Each task (an engine's partition, on any worker) reports what its loads did
//! ([`TaskReport`]); the driver folds the reports into one [`WriteSummary`]: one status for
//! the write, the rows and bytes, and, for an atomic write, the rows to publish per task
//! attempt ([`WriteSummary::attempts_to_publish`]).

use crate::atomic::Published;
use doris_streamload::LoadSummary;
use doris_streamload::StreamLoadError;
use doris_streamload::{LoadStatus, TxnRef};
use serde::{Deserialize, Serialize};

/// How many loads of a task ended in each status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCounts {
    /// Committed and visible.
    pub success: u64,
    /// Committed, visible later (`Publish Timeout`).
    pub publish_timeout: u64,
    /// Pre-committed (two-phase), committed or aborted at the end.
    pub precommitted: u64,
    /// Committed by an earlier attempt whose answer was lost.
    pub committed_by_earlier_attempt: u64,
    /// Loaded before this write (its label was committed already).
    pub already_loaded: u64,
}

impl StatusCounts {
    fn add(&mut self, other: &StatusCounts) {
        self.success += other.success;
        self.publish_timeout += other.publish_timeout;
        self.precommitted += other.precommitted;
        self.committed_by_earlier_attempt += other.committed_by_earlier_attempt;
        self.already_loaded += other.already_loaded;
    }
}

/// What one task's loads did; serialized (serde) to travel from a task to the write's
/// end (a Daft `WriteResult`, pickled by Ray).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskReport {
    /// Loads.
    pub batches: u64,
    /// Rows handed to the loads.
    pub attempted_rows: u64,
    /// Rows Doris loaded.
    pub loaded_rows: u64,
    /// Rows Doris filtered.
    pub filtered_rows: u64,
    /// Rows a `where` left out.
    pub unselected_rows: u64,
    /// Body bytes sent, over every attempt.
    pub uploaded_bytes: u64,
    /// Loads per status.
    pub statuses: StatusCounts,
    /// Pre-committed loads to commit or abort at the end: the transaction id, or the label
    /// when Doris gave no id.
    pub precommitted: Vec<TxnRef>,
    /// The task attempt's tag (atomic writes: its staged rows carry it).
    pub tag: Option<String>,
    /// The columns the task wrote.
    pub columns: Vec<String>,
}

impl TaskReport {
    /// The report of a task whose loads ended as `summary` says. A pre-committed load
    /// without a transaction id or a label could never be committed or aborted: an error,
    /// never a load dropped from the report.
    pub fn of_loads(summary: &LoadSummary) -> Result<Self, StreamLoadError> {
        let mut report = Self {
            batches: summary.ledger.len() as u64,
            attempted_rows: summary.rows,
            loaded_rows: summary.loaded_rows,
            filtered_rows: summary.filtered_rows,
            unselected_rows: summary.unselected_rows,
            uploaded_bytes: summary.uploaded_bytes,
            ..Self::default()
        };
        for entry in &summary.ledger {
            let counts = &mut report.statuses;
            match entry.report.status {
                LoadStatus::Success => counts.success += 1,
                LoadStatus::PublishTimeout => counts.publish_timeout += 1,
                LoadStatus::Precommitted => {
                    counts.precommitted += 1;
                    report
                        .precommitted
                        .push(doris_streamload::txn_ref(&entry.report)?);
                }
                LoadStatus::CommittedByEarlierAttempt => counts.committed_by_earlier_attempt += 1,
                LoadStatus::AlreadyLoaded => counts.already_loaded += 1,
            }
        }
        Ok(report)
    }
}

/// The write's status (serialized as [`WriteStatus::as_str`] names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteStatus {
    /// Every load (or the atomic publish) committed and is visible.
    Success,
    /// Every load committed, Doris makes them visible later.
    PublishTimeout,
    /// Some loads visible, some visible later.
    Mixed,
    /// The write's key had committed before: nothing was written.
    AlreadyCommitted,
}

impl WriteStatus {
    /// The status as the summary row spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::PublishTimeout => "publish_timeout",
            Self::Mixed => "mixed",
            Self::AlreadyCommitted => "already_committed",
        }
    }
}

/// The outcome of a whole write (serialized as the summary row's fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WriteSummary {
    /// The write's status.
    pub status: WriteStatus,
    /// Loads, over every task.
    pub batches: u64,
    /// Rows handed to the loads.
    pub attempted_rows: u64,
    /// Rows the write made visible (or will: `PublishTimeout`).
    pub loaded_rows: u64,
    /// Rows Doris filtered.
    pub filtered_rows: u64,
    /// Body bytes sent.
    pub uploaded_bytes: u64,
    /// Loads that found their rows loaded already (a rerun of per-load labels).
    pub already_loaded_batches: u64,
    /// An atomic run's staging table that could not be dropped after the publish
    /// (`atomic::cleanup` removes it later).
    pub staging_left: Option<String>,
}

impl WriteSummary {
    fn totals(tasks: &[TaskReport], status: WriteStatus, loaded_rows: u64) -> Self {
        Self {
            status,
            batches: tasks.iter().map(|t| t.batches).sum(),
            attempted_rows: tasks.iter().map(|t| t.attempted_rows).sum(),
            loaded_rows,
            filtered_rows: tasks.iter().map(|t| t.filtered_rows).sum(),
            uploaded_bytes: tasks.iter().map(|t| t.uploaded_bytes).sum(),
            already_loaded_batches: 0,
            staging_left: None,
        }
    }

    /// A write of loads (plain, per-load labels, or two-phase once `two_phase_committed`
    /// says every pre-committed load was committed): visible now, later, or both.
    pub fn of_loads(tasks: &[TaskReport], two_phase_committed: bool) -> Self {
        let mut counts = StatusCounts::default();
        for t in tasks {
            counts.add(&t.statuses);
        }
        if two_phase_committed {
            counts.success += counts.precommitted;
            counts.precommitted = 0;
        }
        let others = counts.success
            + counts.precommitted
            + counts.committed_by_earlier_attempt
            + counts.already_loaded;
        let status = match (counts.publish_timeout > 0, others > 0) {
            (true, false) => WriteStatus::PublishTimeout,
            (true, true) => WriteStatus::Mixed,
            (false, _) => WriteStatus::Success,
        };
        let mut out = Self::totals(tasks, status, tasks.iter().map(|t| t.loaded_rows).sum());
        out.already_loaded_batches = counts.already_loaded + counts.committed_by_earlier_attempt;
        out
    }

    /// An atomic write, from its tasks and its publish (`None`: the key had committed
    /// before, nothing was loaded).
    pub fn of_atomic(tasks: &[TaskReport], published: Option<&Published>) -> Self {
        match published {
            Some(p) if p.by_this_run => {
                let staged = Self::attempts_to_publish(tasks)
                    .iter()
                    .map(|(_, n)| n)
                    .sum();
                Self::totals(tasks, WriteStatus::Success, p.rows.unwrap_or(staged))
            }
            _ => Self::totals(tasks, WriteStatus::AlreadyCommitted, 0),
        }
    }

    /// The attempts an atomic write publishes, with the rows each one's loads reported:
    /// every tag of a task that reported success and loaded a row.
    pub fn attempts_to_publish(tasks: &[TaskReport]) -> Vec<(String, u64)> {
        let mut per_tag: std::collections::BTreeMap<&str, u64> = Default::default();
        for t in tasks {
            if let Some(tag) = &t.tag
                && t.loaded_rows > 0
            {
                *per_tag.entry(tag).or_default() += t.loaded_rows;
            }
        }
        per_tag
            .into_iter()
            .map(|(tag, rows)| (tag.to_owned(), rows))
            .collect()
    }

    /// The columns an atomic write publishes: those the tasks wrote (`fallback`, the
    /// table's, when no task loaded a row: an overwrite still empties the table by them).
    pub fn published_columns(tasks: &[TaskReport], fallback: &[String]) -> Vec<String> {
        tasks
            .iter()
            .find(|t| !t.columns.is_empty())
            .map_or_else(|| fallback.to_vec(), |t| t.columns.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(loaded: u64, statuses: StatusCounts, tag: Option<&str>) -> TaskReport {
        TaskReport {
            batches: 1,
            attempted_rows: loaded,
            loaded_rows: loaded,
            statuses,
            tag: tag.map(str::to_owned),
            ..TaskReport::default()
        }
    }

    #[test]
    fn load_statuses_fold_into_one() {
        let ok = StatusCounts {
            success: 1,
            ..StatusCounts::default()
        };
        let late = StatusCounts {
            publish_timeout: 1,
            ..StatusCounts::default()
        };
        let again = StatusCounts {
            already_loaded: 2,
            ..StatusCounts::default()
        };
        let s = WriteSummary::of_loads(&[task(5, ok, None), task(3, late, None)], false);
        assert_eq!((s.status, s.loaded_rows), (WriteStatus::Mixed, 8));
        let s = WriteSummary::of_loads(&[task(3, late, None)], false);
        assert_eq!(s.status, WriteStatus::PublishTimeout);
        let s = WriteSummary::of_loads(&[task(0, again, None)], false);
        assert_eq!(
            (s.status, s.already_loaded_batches),
            (WriteStatus::Success, 2)
        );
    }

    #[test]
    fn an_atomic_write_publishes_each_successful_attempt_once() {
        let ok = StatusCounts {
            success: 1,
            ..StatusCounts::default()
        };
        let tasks = [
            task(5, ok, Some("a")),
            task(2, ok, Some("a")),
            task(0, ok, Some("empty")),
            task(4, ok, Some("b")),
        ];
        assert_eq!(
            WriteSummary::attempts_to_publish(&tasks),
            [("a".to_owned(), 7), ("b".to_owned(), 4)]
        );
        let published = Published {
            label: "l".into(),
            rows: None,
            by_this_run: true,
            staging_left: None,
        };
        let s = WriteSummary::of_atomic(&tasks, Some(&published));
        assert_eq!((s.status, s.loaded_rows), (WriteStatus::Success, 11));
        let earlier = Published {
            by_this_run: false,
            ..published
        };
        let s = WriteSummary::of_atomic(&tasks, Some(&earlier));
        assert_eq!(
            (s.status, s.loaded_rows),
            (WriteStatus::AlreadyCommitted, 0)
        );
    }
}
