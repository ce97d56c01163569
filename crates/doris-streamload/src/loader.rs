//! The [`Loader`]: record batches in, Stream Loads out, cut by rows and encoded bytes,
//! at most N loads in flight, and a ledger of every load.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::record_batch::RecordBatch;
use arrow_schema::SchemaRef;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::client::{LoadReport, LoadStatus, Source, StreamLoadClient, TwoPhaseOutcome, TxnRef};
use crate::encode::Limits;
use crate::error::StreamLoadError;
use crate::label::{Label, LabelScheme};
use crate::options::LoadOptions;

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

type Running = (u64, JoinHandle<Result<LoadReport, StreamLoadError>>);

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
        let Some((sequence, handle)) = self.running.pop_front() else {
            return Ok(());
        };
        let report = handle
            .await
            .map_err(|e| StreamLoadError::Encode(format!("a load task failed: {e}")))??;
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
        let handle = tokio::spawn(async move {
            client
                .load_source(&db, &table, &options, label, source)
                .await
        });
        match cut_rx.await {
            Ok(rows) => {
                self.consume(rows as usize);
                self.running.push_back((sequence, handle));
                Ok(())
            }
            Err(_) => {
                // The load ended before its body was formed: it failed.
                let result = handle
                    .await
                    .map_err(|e| StreamLoadError::Encode(format!("a load task failed: {e}")))?;
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
        while let Some((sequence, handle)) = self.running.pop_front() {
            match handle.await {
                Ok(Ok(report)) => self.summary.add(LedgerEntry { sequence, report }),
                Ok(Err(e)) => unsettled.extend(unsettled_label(&e)),
                Err(_) => {}
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
    /// no commit across transactions, so the loads before the failure stay visible.
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
                    let rest = &txns[at..];
                    let (aborted, left) = match self.abort_every(db, rest).await {
                        Ok(_) => (rest.iter().map(TxnRef::describe).collect(), Vec::new()),
                        Err(StreamLoadError::PartialCommit { aborted, left, .. }) => {
                            (aborted, left)
                        }
                        Err(_) => (Vec::new(), rest.iter().map(TxnRef::describe).collect()),
                    };
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

/// The label of a load whose outcome is unknown (it may hold a transaction).
fn unsettled_label(error: &StreamLoadError) -> Option<Label> {
    match error {
        StreamLoadError::Ambiguous { label, .. } => Label::new(label).ok(),
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
