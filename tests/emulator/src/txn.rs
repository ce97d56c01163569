//! Load transactions and the per-database label registry.
//!
//! A label is unique per database among transactions that are running, pre-committed or
//! finished successfully; an aborted transaction frees its label at once. Finished
//! transactions are forgotten after `label_keep_max_second` or beyond `label_num_threshold`
//! per database (the oldest first), after which the label can be used again, exactly the
//! window in which Doris deduplicates.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use arrow::record_batch::RecordBatch;

/// Where a transaction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnState {
    /// Began, loading.
    Prepare,
    /// Two-phase commit: loaded, waiting for commit or abort.
    Precommitted,
    /// Committed, not yet visible (publish pending).
    Committed,
    /// Committed and visible.
    Visible,
    /// Aborted; its label is free.
    Aborted,
}

impl TxnState {
    /// Doris's `TransactionStatus` spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TxnState::Prepare => "PREPARE",
            TxnState::Precommitted => "PRECOMMITTED",
            TxnState::Committed => "COMMITTED",
            TxnState::Visible => "VISIBLE",
            TxnState::Aborted => "ABORTED",
        }
    }

    /// The `ExistingJobStatus` a duplicate label reports.
    pub fn existing_job_status(self) -> &'static str {
        match self {
            TxnState::Prepare | TxnState::Aborted => "RUNNING",
            TxnState::Precommitted => "PRECOMMITTED",
            TxnState::Committed | TxnState::Visible => "FINISHED",
        }
    }
}

/// Data a pre-committed transaction will apply when committed: batches per tablet index.
pub type Staged = Vec<Vec<RecordBatch>>;

/// One load transaction.
#[derive(Debug)]
pub struct Txn {
    /// Transaction id.
    pub id: i64,
    /// Database.
    pub database: String,
    /// Target table.
    pub table: String,
    /// Label.
    pub label: String,
    /// State.
    pub state: TxnState,
    /// When it began (wall clock, for SHOW TRANSACTION).
    pub prepare_time: SystemTime,
    /// When it began (monotonic, for expiry).
    began: Instant,
    /// When it finished (committed, visible or aborted).
    finished: Option<Instant>,
    /// Why it was aborted.
    pub reason: String,
    /// Data waiting for a 2PC commit.
    pub staged: Option<Staged>,
}

/// Retention settings (Doris FE config names).
#[derive(Debug, Clone, Copy)]
pub struct Retention {
    /// `streaming_label_keep_max_second` (default 43200).
    pub label_keep_max: Duration,
    /// `label_num_threshold` (default 2000; finished transactions kept per database).
    pub label_num_threshold: usize,
    /// `stream_load_default_precommit_timeout_second` (default 3600).
    pub precommit_timeout: Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            label_keep_max: Duration::from_secs(43_200),
            label_num_threshold: 2000,
            precommit_timeout: Duration::from_secs(3600),
        }
    }
}

/// Why a transaction could not begin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelExists {
    /// The transaction holding the label.
    pub existing_txn_id: i64,
    /// Its `ExistingJobStatus`.
    pub existing_job_status: &'static str,
}

#[derive(Debug, Default)]
struct State {
    next_id: i64,
    txns: HashMap<i64, Txn>,
    labels: HashMap<(String, String), i64>,
    finished: HashMap<String, VecDeque<i64>>,
}

/// All transactions of the emulator.
#[derive(Debug)]
pub struct TxnRegistry {
    retention: Retention,
    state: Mutex<State>,
}

/// How a 2PC request names its transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnRef {
    /// `txn_id: <id>`
    Id(i64),
    /// `label: <label>`
    Label(String),
}

impl TxnRegistry {
    /// A registry with the given retention.
    pub fn new(retention: Retention) -> Self {
        Self {
            retention,
            state: Mutex::new(State {
                next_id: 1000,
                ..State::default()
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Begins a transaction for `label`, or reports who holds it.
    pub fn begin(&self, database: &str, table: &str, label: &str) -> Result<i64, LabelExists> {
        let mut s = self.lock();
        self.expire(&mut s);
        if let Some(id) = s.labels.get(&(database.to_owned(), label.to_owned()))
            && let Some(t) = s.txns.get(id)
        {
            return Err(LabelExists {
                existing_txn_id: t.id,
                existing_job_status: t.state.existing_job_status(),
            });
        }
        s.next_id += 1;
        let id = s.next_id;
        s.txns.insert(
            id,
            Txn {
                id,
                database: database.to_owned(),
                table: table.to_owned(),
                label: label.to_owned(),
                state: TxnState::Prepare,
                prepare_time: SystemTime::now(),
                began: Instant::now(),
                finished: None,
                reason: String::new(),
                staged: None,
            },
        );
        s.labels.insert((database.to_owned(), label.to_owned()), id);
        Ok(id)
    }

    fn finish(&self, s: &mut State, id: i64, state: TxnState, reason: &str) {
        let Some(t) = s.txns.get_mut(&id) else { return };
        t.state = state;
        t.finished = Some(Instant::now());
        t.reason = reason.to_owned();
        t.staged = None;
        let (db, label) = (t.database.clone(), t.label.clone());
        if state == TxnState::Aborted {
            // An aborted transaction frees its label at once.
            s.labels.remove(&(db.clone(), label));
        }
        s.finished.entry(db).or_default().push_back(id);
    }

    /// Marks a transaction visible (its data has been applied).
    pub fn make_visible(&self, id: i64) {
        let mut s = self.lock();
        self.finish(&mut s, id, TxnState::Visible, "");
    }

    /// Marks a transaction committed but not yet visible (a publish timeout).
    pub fn mark_committed(&self, id: i64) {
        let mut s = self.lock();
        if let Some(t) = s.txns.get_mut(&id) {
            t.state = TxnState::Committed;
        }
    }

    /// Aborts a transaction, freeing its label.
    pub fn abort(&self, id: i64, reason: &str) {
        let mut s = self.lock();
        self.finish(&mut s, id, TxnState::Aborted, reason);
    }

    /// Holds a 2PC transaction's data until commit or abort.
    pub fn precommit(&self, id: i64, staged: Staged) {
        let mut s = self.lock();
        if let Some(t) = s.txns.get_mut(&id) {
            t.state = TxnState::Precommitted;
            t.staged = Some(staged);
        }
    }

    /// Resolves a 2PC reference in `database` to a transaction id.
    pub fn resolve(&self, database: &str, by: &TxnRef) -> Option<i64> {
        let mut s = self.lock();
        self.expire(&mut s);
        match by {
            TxnRef::Id(id) => s
                .txns
                .get(id)
                .filter(|t| t.database == database)
                .map(|t| t.id),
            TxnRef::Label(label) => s.labels.get(&(database.to_owned(), label.clone())).copied(),
        }
    }

    /// Takes a pre-committed transaction's data for commit, or says why it cannot be
    /// committed (Doris's texts).
    pub fn take_for_commit(&self, id: i64) -> Result<(String, String, Staged), String> {
        let mut s = self.lock();
        let Some(t) = s.txns.get_mut(&id) else {
            return Err(format!("transaction [{id}] not found"));
        };
        match t.state {
            TxnState::Precommitted => {
                t.state = TxnState::Committed;
                Ok((
                    t.database.clone(),
                    t.table.clone(),
                    t.staged.take().unwrap_or_default(),
                ))
            }
            TxnState::Committed | TxnState::Visible => Err(format!(
                "transaction [{id}] is already visible, not pre-committed."
            )),
            TxnState::Aborted => Err(format!(
                "transaction [{id}] is already aborted. abort reason: {}",
                t.reason
            )),
            TxnState::Prepare => Err(format!("transaction [{id}] is prepare, not pre-committed.")),
        }
    }

    /// Aborts a pre-committed (or running) transaction on a 2PC request.
    pub fn abort_2pc(&self, id: i64) -> Result<(), String> {
        let mut s = self.lock();
        let state = match s.txns.get(&id) {
            None => return Err(format!("transaction [{id}] not found")),
            Some(t) => t.state,
        };
        match state {
            TxnState::Precommitted | TxnState::Prepare => {
                self.finish(&mut s, id, TxnState::Aborted, "user abort");
                Ok(())
            }
            TxnState::Aborted => Err(format!("transaction [{id}] is already aborted")),
            TxnState::Committed | TxnState::Visible => {
                Err(format!("transaction [{id}] is already {}", state.as_str()))
            }
        }
    }

    /// Every transaction of `database` Doris still remembers, by id: `(id, table, label,
    /// state)` (for the `/_emulator/txns` report and tests).
    pub fn list(&self, database: &str) -> Vec<(i64, String, String, TxnState)> {
        let mut s = self.lock();
        self.expire(&mut s);
        let mut out: Vec<_> = s
            .txns
            .values()
            .filter(|t| t.database == database)
            .map(|t| (t.id, t.table.clone(), t.label.clone(), t.state))
            .collect();
        out.sort_by_key(|t| t.0);
        out
    }

    /// A copy of the transaction's public fields (for `SHOW TRANSACTION` and tests).
    pub fn describe(&self, id: i64) -> Option<(String, TxnState, SystemTime, String)> {
        let s = self.lock();
        s.txns
            .get(&id)
            .map(|t| (t.label.clone(), t.state, t.prepare_time, t.reason.clone()))
    }

    /// Drops what Doris would have forgotten, and aborts expired pre-commits.
    fn expire(&self, s: &mut State) {
        let now = Instant::now();
        let expired_precommits: Vec<i64> = s
            .txns
            .values()
            .filter(|t| {
                t.state == TxnState::Precommitted
                    && now.duration_since(t.began) > self.retention.precommit_timeout
            })
            .map(|t| t.id)
            .collect();
        for id in expired_precommits {
            self.finish(s, id, TxnState::Aborted, "pre-commit timeout");
        }
        let mut forget = Vec::new();
        for queue in s.finished.values_mut() {
            while let Some(&id) = queue.front() {
                let too_many = queue.len() > self.retention.label_num_threshold;
                let too_old = s
                    .txns
                    .get(&id)
                    .and_then(|t| t.finished)
                    .is_none_or(|f| now.duration_since(f) > self.retention.label_keep_max);
                if too_many || too_old {
                    queue.pop_front();
                    forget.push(id);
                } else {
                    break;
                }
            }
        }
        for id in forget {
            if let Some(t) = s.txns.remove(&id) {
                let key = (t.database, t.label);
                if s.labels.get(&key) == Some(&id) {
                    s.labels.remove(&key);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_unique_until_aborted_or_forgotten() {
        let r = TxnRegistry::new(Retention {
            label_keep_max: Duration::from_secs(3600),
            label_num_threshold: 2,
            precommit_timeout: Duration::from_secs(3600),
        });
        let a = r.begin("db", "t", "l1").unwrap();
        assert_eq!(
            r.begin("db", "t", "l1").unwrap_err().existing_job_status,
            "RUNNING"
        );
        assert!(r.begin("other_db", "t", "l1").is_ok());
        r.abort(a, "failed");
        let b = r.begin("db", "t", "l1").unwrap();
        assert_ne!(a, b);
        r.make_visible(b);
        let e = r.begin("db", "t", "l1").unwrap_err();
        assert_eq!((e.existing_txn_id, e.existing_job_status), (b, "FINISHED"));
        // Beyond the count threshold the oldest finished label is forgotten.
        for l in ["l2", "l3"] {
            let id = r.begin("db", "t", l).unwrap();
            r.make_visible(id);
        }
        assert!(r.begin("db", "t", "l1").is_ok());
    }

    #[test]
    fn two_phase_commit_texts() {
        let r = TxnRegistry::new(Retention::default());
        let id = r.begin("db", "t", "p").unwrap();
        r.precommit(id, vec![]);
        assert_eq!(
            r.begin("db", "t", "p").unwrap_err().existing_job_status,
            "PRECOMMITTED"
        );
        assert_eq!(r.resolve("db", &TxnRef::Label("p".into())), Some(id));
        assert!(r.take_for_commit(id).is_ok());
        r.make_visible(id);
        assert_eq!(
            r.take_for_commit(id).unwrap_err(),
            format!("transaction [{id}] is already visible, not pre-committed.")
        );
        assert_eq!(
            r.take_for_commit(999_999).unwrap_err(),
            "transaction [999999] not found"
        );
        let other = r.begin("db", "t", "q").unwrap();
        r.precommit(other, vec![]);
        r.abort_2pc(other).unwrap();
        assert!(
            r.abort_2pc(other)
                .unwrap_err()
                .starts_with(&format!("transaction [{other}] is already"))
        );
    }
}
