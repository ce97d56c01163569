//! The [`Loader`]: record batches in, Stream Loads out, cut by rows and encoded bytes,
//! at most N loads in flight, and a ledger of every load.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::record_batch::RecordBatch;
use arrow_schema::SchemaRef;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::client::{Source, StreamLoadClient};
use crate::encode::Limits;
use crate::error::StreamLoadError;
use crate::label::{Label, LabelScheme};
use crate::options::LoadOptions;
use crate::report::{LoadReport, LoadStatus, TwoPhaseOutcome, TxnRef};

/// How a [`Loader`] cuts and names its loads.
#[derive(Debug, Clone)]
pub struct LoaderConfig {
    /// Most rows per load.
    pub max_rows: usize,
    /// Target encoded bytes per load (a single larger row forms a load of its own).
    pub max_bytes: u64,
    /// Loads in flight at once (at least 1).
    pub max_in_flight: usize,
    /// Label naming; ignored (no labels) for group commit.
    pub labels: LabelScheme,
    /// Sequence number of the first load (labels are `…_<sequence>`).
    pub first_sequence: u64,
}

impl Default for LoaderConfig {
    fn default() -> Self {
        Self {
            max_rows: 1_000_000,
            max_bytes: 64 * 1024 * 1024,
            max_in_flight: 1,
            labels: LabelScheme::Random {
                prefix: "doris_streamload".into(),
            },
            first_sequence: 0,
        }
    }
}

/// One load of the ledger.
#[derive(Debug, Clone)]
pub struct LedgerEntry {
    /// Sequence number within this loader.
    pub sequence: u64,
    /// The load's report.
    pub report: LoadReport,
}

/// What a loader did.
#[derive(Debug, Clone, Default)]
pub struct LoadSummary {
    /// Every finished load, in sequence order.
    pub ledger: Vec<LedgerEntry>,
    /// Rows handed to the loader.
    pub rows: u64,
    /// Rows Doris reports as loaded (loads resolved by label count all their rows).
    pub loaded_rows: u64,
    /// Rows Doris filtered.
    pub filtered_rows: u64,
    /// Rows the `where` predicate left out.
    pub unselected_rows: u64,
    /// Body bytes put on the wire, over every attempt.
    pub uploaded_bytes: u64,
    /// Wall time.
    pub elapsed: Duration,
}

impl LoadSummary {
    fn add(&mut self, entry: LedgerEntry) {
        let r = &entry.report;
        match &r.response {
            Some(resp) => {
                self.loaded_rows += resp.number_loaded_rows;
                self.filtered_rows += resp.number_filtered_rows;
                self.unselected_rows += resp.number_unselected_rows;
            }
            None => self.loaded_rows += r.rows,
        }
        self.uploaded_bytes += r.uploaded_bytes;
        let at = self.ledger.partition_point(|e| e.sequence < entry.sequence);
        self.ledger.insert(at, entry);
    }

    /// Loads that ended in `status`.
    pub fn count(&self, status: LoadStatus) -> usize {
        self.ledger
            .iter()
            .filter(|e| e.report.status == status)
            .count()
    }
}

/// A loader that failed: the error, and what had been loaded before it (never lost).
///
/// In two-phase mode every load the loader had pre-committed is aborted before this error
/// is returned ([`LoaderError::aborted`]); a load whose abort failed is listed in
/// [`LoaderError::left_precommitted`] (Doris aborts it at its pre-commit timeout).
#[derive(Debug, thiserror::Error)]
#[error(
    "{error} ({} load(s) had finished before{}{})",
    summary.ledger.len(),
    if aborted.is_empty() { String::new() } else { format!("; {} pre-committed load(s) aborted", aborted.len()) },
    if left_precommitted.is_empty() { String::new() } else { format!("; could not abort {}", left_precommitted.join(", ")) }
)]
pub struct LoaderError {
    /// The first error.
    #[source]
    pub error: StreamLoadError,
    /// The loads that finished, with their labels and transaction ids.
    pub summary: LoadSummary,
    /// Labels of the pre-committed loads aborted because of the failure.
    pub aborted: Vec<String>,
    /// Labels of pre-committed loads whose abort failed.
    pub left_precommitted: Vec<String>,
}

impl LoaderError {
    /// The first error's [`ErrorKind`](doris_sql::ErrorKind).
    pub fn kind(&self) -> doris_sql::ErrorKind {
        self.error.kind()
    }
}

/// A load in flight: its sequence number, its label (none under group commit) and its task.
type Running = (
    u64,
    Option<Label>,
    JoinHandle<Result<LoadReport, StreamLoadError>>,
);

/// A load task that ended without an outcome (it panicked or was cancelled): the load may
/// have reached Doris (and, in two-phase mode, be pre-committed under its label), so it is
/// ambiguous, never forgotten.
fn lost_task(label: Option<&Label>, error: &tokio::task::JoinError) -> StreamLoadError {
    match label {
        Some(label) => StreamLoadError::Ambiguous {
            label: label.to_string(),
            attempts: 1,
            detail: format!("the load's task ended without an outcome: {error}"),
        },
        None => StreamLoadError::Encode(format!("a load task failed: {error}")),
    }
}

/// Turns record batches into Stream Loads.
///
/// `write` buffers batches until a load's worth is there (by rows or by the batches'
/// memory size), then starts a load whose body is encoded while it streams and cut at
/// `max_rows` rows or `max_bytes` encoded bytes; what the cut leaves stays for the next
/// load. The rows of a load are kept until Doris answers, so a retry resends exactly the
/// same rows under the same label.
#[derive(Debug)]
pub struct Loader {
    client: Arc<StreamLoadClient>,
    db: String,
    table: String,
    options: LoadOptions,
    config: LoaderConfig,
    schema: Option<SchemaRef>,
    pending: VecDeque<RecordBatch>,
    pending_rows: usize,
    pending_bytes: usize,
    running: VecDeque<Running>,
    next_sequence: u64,
    summary: LoadSummary,
    started: Instant,
}

impl Loader {
    /// A loader into `db.table`; checks the options and the label scheme.
    pub fn new(
        client: Arc<StreamLoadClient>,
        db: impl Into<String>,
        table: impl Into<String>,
        options: LoadOptions,
        config: LoaderConfig,
    ) -> Result<Self, StreamLoadError> {
        options.validate()?;
        if options.group_commit.is_none() {
            config.labels.validate()?;
        }
        if config.max_rows == 0 || config.max_bytes == 0 || config.max_in_flight == 0 {
            return Err(StreamLoadError::Config(
                "max_rows, max_bytes and max_in_flight must be at least 1".into(),
            ));
        }
        Ok(Self {
            client,
            db: db.into(),
            table: table.into(),
            next_sequence: config.first_sequence,
            options,
            config,
            schema: None,
            pending: VecDeque::new(),
            pending_rows: 0,
            pending_bytes: 0,
            running: VecDeque::new(),
            summary: LoadSummary::default(),
            started: Instant::now(),
        })
    }

    /// Adds a batch; starts loads as full ones accumulate (waiting while `max_in_flight`
    /// loads run). Every batch must have the first batch's schema.
    pub async fn write(&mut self, batch: RecordBatch) -> Result<(), StreamLoadError> {
        match &self.schema {
            None => self.schema = Some(batch.schema()),
            Some(s) if s.fields() != batch.schema().fields() => {
                return Err(StreamLoadError::Config(
                    "every batch of a loader must have the same schema".into(),
                ));
            }
            Some(_) => {}
        }
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.summary.rows += batch.num_rows() as u64;
        self.pending_rows += batch.num_rows();
        self.pending_bytes += batch.get_array_memory_size();
        self.pending.push_back(batch);
        while self.pending_rows >= self.config.max_rows
            || self.pending_bytes as u64 >= self.config.max_bytes
        {
            self.dispatch().await?;
        }
        Ok(())
    }

    /// Waits for the oldest running load and books it.
    async fn settle_oldest(&mut self) -> Result<(), StreamLoadError> {
        let Some((sequence, label, handle)) = self.running.pop_front() else {
            return Ok(());
        };
        let report = handle.await.map_err(|e| lost_task(label.as_ref(), &e))??;
        self.summary.add(LedgerEntry { sequence, report });
        Ok(())
    }

    /// Starts one load over the pending rows and waits until its cut is known.
    async fn dispatch(&mut self) -> Result<(), StreamLoadError> {
        while self.running.len() >= self.config.max_in_flight {
            self.settle_oldest().await?;
        }
        let Some(schema) = self.schema.clone() else {
            return Ok(());
        };
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        let label = match self.options.group_commit {
            Some(_) => None,
            None => Some(self.config.labels.label(sequence)?),
        };
        let (cut_tx, cut_rx) = oneshot::channel();
        let limits = Limits {
            max_rows: self.config.max_rows,
            max_bytes: self.config.max_bytes,
        };
        let source = Arc::new(Source::new(
            schema,
            self.pending.iter().cloned().collect(),
            Some(limits),
            Some(cut_tx),
        ));
        let (client, db, table, options) = (
            self.client.clone(),
            self.db.clone(),
            self.table.clone(),
            self.options.clone(),
        );
        let kept = label.clone();
        let handle = tokio::spawn(async move {
            client
                .load_source(&db, &table, &options, label, source)
                .await
        });
        match cut_rx.await {
            Ok(rows) => {
                self.consume(rows as usize);
                self.running.push_back((sequence, kept, handle));
                Ok(())
            }
            Err(_) => {
                // The load ended before its body was formed: it failed.
                let result = handle.await.map_err(|e| lost_task(kept.as_ref(), &e))?;
                match result {
                    Err(e) => Err(e),
                    Ok(report) => {
                        // Formed without a body (e.g. a label Doris already holds).
                        self.consume(report.rows as usize);
                        self.summary.add(LedgerEntry { sequence, report });
                        Ok(())
                    }
                }
            }
        }
    }

    /// Drops the first `rows` pending rows.
    fn consume(&mut self, mut rows: usize) {
        self.pending_rows -= rows.min(self.pending_rows);
        while rows > 0 {
            let Some(front) = self.pending.pop_front() else {
                break;
            };
            let n = front.num_rows();
            self.pending_bytes = self
                .pending_bytes
                .saturating_sub(front.get_array_memory_size());
            if n > rows {
                let rest = front.slice(rows, n - rows);
                self.pending_bytes += rest.get_array_memory_size() * (n - rows) / n.max(1);
                self.pending.push_front(rest);
                rows = 0;
            } else {
                rows -= n;
            }
        }
        if self.pending.is_empty() {
            self.pending_bytes = 0;
        }
    }

    /// Loads what is left, waits for every load and returns the ledger.
    ///
    /// On a failure it waits for the loads still in flight (none is left running in the
    /// background) and, in two-phase mode, aborts every load it pre-committed.
    pub async fn finish(mut self) -> Result<LoadSummary, LoaderError> {
        let result = async {
            while self.pending_rows > 0 {
                self.dispatch().await?;
            }
            while !self.running.is_empty() {
                self.settle_oldest().await?;
            }
            Ok::<(), StreamLoadError>(())
        }
        .await;
        match result {
            Ok(()) => {
                self.summary.elapsed = self.started.elapsed();
                Ok(self.summary)
            }
            Err(error) => Err(self.fail(error).await),
        }
    }

    /// Ends the loader after `error` (a failed [`Loader::write`], or the caller's own):
    /// waits for the loads in flight and books those that finished, then, in two-phase
    /// mode, aborts every load this loader pre-committed. Nothing it started keeps running.
    pub async fn fail(mut self, error: StreamLoadError) -> LoaderError {
        // Loads whose outcome is unknown may have been pre-committed under their label.
        let mut unsettled: Vec<Label> = unsettled_label(&error).into_iter().collect();
        while let Some((sequence, label, handle)) = self.running.pop_front() {
            match handle.await {
                Ok(Ok(report)) => self.summary.add(LedgerEntry { sequence, report }),
                Ok(Err(e)) => unsettled.extend(unsettled_label(&e)),
                // A task that panicked may have pre-committed its load: abort it by label.
                Err(_) => unsettled.extend(label),
            }
        }
        self.summary.elapsed = self.started.elapsed();
        let mut aborted = Vec::new();
        let mut left_precommitted = Vec::new();
        if self.options.two_phase_commit {
            let txns: Vec<(String, TxnRef)> = self
                .summary
                .ledger
                .iter()
                .filter(|e| e.report.status == LoadStatus::Precommitted)
                .filter_map(|e| Some((e.report.label.clone()?, txn_ref(&e.report).ok()?)))
                .collect();
            for (label, txn) in txns {
                match self.client.abort(&self.db, &txn).await {
                    Ok(_) => aborted.push(label),
                    Err(_) => left_precommitted.push(label),
                }
            }
            for label in unsettled {
                match self
                    .client
                    .abort_precommitted(&self.db, [label.clone()])
                    .await
                {
                    Ok(done) => aborted.extend(done.iter().map(Label::to_string)),
                    Err(_) => left_precommitted.push(label.to_string()),
                }
            }
        }
        LoaderError {
            error,
            summary: self.summary,
            aborted,
            left_precommitted,
        }
    }

    /// Writes every batch, then finishes; a failure anywhere ends as [`Loader::fail`] does.
    pub async fn load_all(
        mut self,
        batches: impl IntoIterator<Item = RecordBatch>,
    ) -> Result<LoadSummary, LoaderError> {
        for batch in batches {
            if let Err(e) = self.write(batch).await {
                return Err(self.fail(e).await);
            }
        }
        self.finish().await
    }
}

impl StreamLoadClient {
    /// Commits every pre-committed load of a summary; see
    /// [`StreamLoadClient::commit_or_abort_all`].
    pub async fn commit_all(
        &self,
        db: &str,
        summary: &LoadSummary,
    ) -> Result<Vec<TwoPhaseOutcome>, StreamLoadError> {
        self.commit_or_abort_all(db, &precommitted(summary)?).await
    }

    /// Aborts every pre-committed load of a summary; see [`StreamLoadClient::abort_every`].
    pub async fn abort_all(
        &self,
        db: &str,
        summary: &LoadSummary,
    ) -> Result<Vec<TwoPhaseOutcome>, StreamLoadError> {
        self.abort_every(db, &precommitted(summary)?).await
    }

    /// Commits `txns` in order (each commit is idempotent). When one cannot be committed,
    /// every later one is aborted, and the error says exactly which committed: Doris has
    /// no commit across transactions, so the loads before the failure stay visible. A
    /// commit whose outcome is unknown (no answer after every retry) is not aborted: it
    /// may have committed, and is listed as left (its label or id settles it later).
    pub async fn commit_or_abort_all(
        &self,
        db: &str,
        txns: &[TxnRef],
    ) -> Result<Vec<TwoPhaseOutcome>, StreamLoadError> {
        let mut out = Vec::with_capacity(txns.len());
        for (at, txn) in txns.iter().enumerate() {
            match self.commit(db, txn).await {
                Ok(outcome) => out.push(outcome),
                Err(error) => {
                    let unknown = error.may_have_loaded();
                    let rest = if unknown {
                        &txns[at + 1..]
                    } else {
                        &txns[at..]
                    };
                    let (aborted, mut left) = match self.abort_every(db, rest).await {
                        Ok(_) => (rest.iter().map(TxnRef::describe).collect(), Vec::new()),
                        Err(StreamLoadError::PartialCommit { aborted, left, .. }) => {
                            (aborted, left)
                        }
                        Err(_) => (Vec::new(), rest.iter().map(TxnRef::describe).collect()),
                    };
                    if unknown {
                        left.insert(0, txn.describe());
                    }
                    return Err(StreamLoadError::PartialCommit {
                        committed: txns[..at].iter().map(TxnRef::describe).collect(),
                        aborted,
                        left,
                        source: Box::new(error),
                    });
                }
            }
        }
        Ok(out)
    }

    /// Aborts every one of `txns`, going on past a failed abort; when any failed, the
    /// error lists which were aborted and which were left pre-committed.
    pub async fn abort_every(
        &self,
        db: &str,
        txns: &[TxnRef],
    ) -> Result<Vec<TwoPhaseOutcome>, StreamLoadError> {
        let mut out = Vec::with_capacity(txns.len());
        let (mut aborted, mut left) = (Vec::new(), Vec::new());
        let mut first_error = None;
        for txn in txns {
            match self.abort(db, txn).await {
                Ok(outcome) => {
                    out.push(outcome);
                    aborted.push(txn.describe());
                }
                Err(e) => {
                    left.push(txn.describe());
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            None => Ok(out),
            Some(error) => Err(StreamLoadError::PartialCommit {
                committed: Vec::new(),
                aborted,
                left,
                source: Box::new(error),
            }),
        }
    }
}

/// The label of a load that may hold a transaction: one whose outcome is unknown, or one
/// Doris committed (pre-committed, in two-phase mode) whose counters do not add up.
fn unsettled_label(error: &StreamLoadError) -> Option<Label> {
    match error {
        StreamLoadError::Ambiguous { label, .. }
        | StreamLoadError::CounterMismatch { label, .. } => Label::new(label).ok(),
        _ => None,
    }
}

/// The transactions of a summary's pre-committed loads, in sequence order.
fn precommitted(summary: &LoadSummary) -> Result<Vec<TxnRef>, StreamLoadError> {
    summary
        .ledger
        .iter()
        .filter(|e| e.report.status == LoadStatus::Precommitted)
        .map(|e| txn_ref(&e.report))
        .collect()
}

/// How to name a load's transaction for commit or abort: its id, or its label when Doris
/// gave no id (the older `Label Already Exists` wording carries none).
pub fn txn_ref(report: &LoadReport) -> Result<TxnRef, StreamLoadError> {
    if report.txn_id >= 0 {
        return Ok(TxnRef::Id(report.txn_id));
    }
    let label = report.label.as_deref().ok_or_else(|| {
        StreamLoadError::Config("a pre-committed load without label or txn id".into())
    })?;
    Ok(TxnRef::Label(Label::new(label)?))
}

#[cfg(test)]
mod tests {
    use arrow::array::{Array, Int64Array};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;
    use crate::config::{ClientConfig, Credentials};
    use crate::response::LoadResponse;

    fn report(sequence_label: &str, txn_id: i64, status: LoadStatus, rows: u64) -> LoadReport {
        LoadReport {
            label: Some(sequence_label.to_owned()),
            txn_id,
            status,
            rows,
            encoded_bytes: 0,
            uploaded_bytes: 10,
            attempts: 1,
            elapsed: Duration::ZERO,
            response: None,
        }
    }

    /// A client that is never used to send: building one sends nothing.
    fn client() -> Arc<StreamLoadClient> {
        let config = ClientConfig::new(
            "http://127.0.0.1:9"
                .parse()
                .unwrap_or_else(|e| panic!("{e}")),
            Credentials::new("root", ""),
        );
        Arc::new(StreamLoadClient::new(config).unwrap_or_else(|e| panic!("{e}")))
    }

    fn loader() -> Loader {
        Loader::new(
            client(),
            "d",
            "t",
            LoadOptions::default(),
            LoaderConfig::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    fn ids(range: std::ops::Range<i64>) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from_iter_values(range))])
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_ledger_stays_in_sequence_order_and_counts_rows_by_what_doris_reported() {
        let mut summary = LoadSummary::default();
        let answered = LoadReport {
            response: Some(LoadResponse {
                number_total_rows: 5,
                number_loaded_rows: 3,
                number_filtered_rows: 1,
                number_unselected_rows: 1,
                ..LoadResponse::default()
            }),
            ..report("l_2", 2, LoadStatus::Success, 5)
        };
        summary.add(LedgerEntry {
            sequence: 2,
            report: answered,
        });
        // Resolved by its label (no answer): all of its rows count as loaded.
        summary.add(LedgerEntry {
            sequence: 0,
            report: report("l_0", 0, LoadStatus::CommittedByEarlierAttempt, 7),
        });
        summary.add(LedgerEntry {
            sequence: 1,
            report: report("l_1", 1, LoadStatus::Precommitted, 4),
        });
        let order: Vec<u64> = summary.ledger.iter().map(|e| e.sequence).collect();
        assert_eq!(order, [0, 1, 2]);
        assert_eq!(
            (
                summary.loaded_rows,
                summary.filtered_rows,
                summary.unselected_rows
            ),
            (3 + 7 + 4, 1, 1)
        );
        assert_eq!(summary.uploaded_bytes, 30);
        assert_eq!(summary.count(LoadStatus::Precommitted), 1);
        assert_eq!(summary.count(LoadStatus::AlreadyLoaded), 0);
        // Only the pre-committed load is named for commit or abort, by its txn id.
        let txns = precommitted(&summary).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(txns, [TxnRef::Id(1)]);
    }

    #[test]
    fn a_transaction_is_named_by_id_or_else_by_label() {
        assert_eq!(
            txn_ref(&report("l_9", 9, LoadStatus::Precommitted, 1)).ok(),
            Some(TxnRef::Id(9))
        );
        let by_label = txn_ref(&report("l_9", -1, LoadStatus::Precommitted, 1)).ok();
        assert_eq!(
            by_label.map(|t| t.describe()),
            Some("label [l_9]".to_owned())
        );
        let nameless = LoadReport {
            label: None,
            ..report("", -1, LoadStatus::Precommitted, 1)
        };
        assert!(matches!(
            txn_ref(&nameless),
            Err(StreamLoadError::Config(_))
        ));
    }

    #[test]
    fn only_an_ambiguous_error_leaves_a_label_to_settle() {
        let ambiguous = StreamLoadError::Ambiguous {
            label: "job_3".into(),
            attempts: 2,
            detail: "reset".into(),
        };
        assert_eq!(
            unsettled_label(&ambiguous).map(|l| l.to_string()),
            Some("job_3".into())
        );
        let transport = StreamLoadError::Transport {
            label: "job_3".into(),
            attempts: 2,
            detail: "refused".into(),
        };
        assert!(unsettled_label(&transport).is_none());
    }

    #[test]
    fn consuming_rows_splits_a_batch_and_keeps_the_rest_in_order() {
        let mut l = loader();
        for batch in [ids(0..4), ids(4..10)] {
            l.pending_rows += batch.num_rows();
            l.pending_bytes += batch.get_array_memory_size();
            l.pending.push_back(batch);
        }
        l.consume(6);
        assert_eq!(l.pending_rows, 4);
        let left: Vec<i64> = l
            .pending
            .iter()
            .flat_map(|b| {
                let column = b.column(0);
                let values = column
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .map(|a| a.values().to_vec())
                    .unwrap_or_default();
                assert_eq!(values.len(), column.len());
                values
            })
            .collect();
        assert_eq!(left, [6, 7, 8, 9]);
        assert!(l.pending_bytes > 0);
        // Consuming more than is pending empties it without underflow.
        l.consume(100);
        assert_eq!(
            (l.pending_rows, l.pending.len(), l.pending_bytes),
            (0, 0, 0)
        );
    }

    #[test]
    fn zero_limits_are_refused_before_anything_is_sent() {
        let client = client();
        for bad in [
            LoaderConfig {
                max_rows: 0,
                ..LoaderConfig::default()
            },
            LoaderConfig {
                max_in_flight: 0,
                ..LoaderConfig::default()
            },
        ] {
            assert!(matches!(
                Loader::new(client.clone(), "d", "t", LoadOptions::default(), bad),
                Err(StreamLoadError::Config(_))
            ));
        }
    }
}
