//! A whole write, as an engine's sink drives it: [`WriteRun`] starts it (the table check,
//! the atomic begin), gives each task its [`TaskWriter`], and finishes it from the tasks'
//! reports (the atomic publish, the two-phase commit, the summary) or aborts it. What Daft's
//! `DataSink` does in `start`, `write` and `finalize`, for any engine.

use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use arrow::array::RecordBatch;
use arrow::datatypes::{Schema, SchemaRef};
use doris_sql::TableSchema;
use doris_sql::release::DorisRelease;
use doris_sql::session::SqlSession;
use doris_streamload::prepare::ColumnRule;
use doris_streamload::{ClientConfig, StreamLoadClient, StreamLoadError, TxnRef};
use serde::{Deserialize, Serialize};

use crate::atomic::{AtomicWrite, Begun, CommittedBy};
use crate::{
    PartitionLabels, TaskFailure, TaskReport, TaskWriter, WriteMode, WriteSpec, WriteSummary,
};

/// The table as a write found it: the columns written, in the data's order, and the rule
/// each batch's column is checked and converted by before it is sent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckedTarget {
    /// The data columns, in data order.
    pub columns: Vec<String>,
    /// Per data column, its rule ([`ColumnRule::from_write`]).
    pub rules: Vec<ColumnRule>,
}

/// Where an atomic run stands once started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AtomicStage {
    /// A fresh run: its tasks load into this staging table.
    Staging(String),
    /// The key had committed before (recognised by its label or by the commit ledger):
    /// load nothing.
    Committed(CommittedBy),
}

/// What a run's tasks need to know, plain data an engine carries to its workers with the
/// task (serde): whether the run started, the table check when the data's schema was
/// known at the start, and an atomic run's key and stage.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunState {
    /// Whether [`WriteRun::start`] ran.
    pub started: bool,
    /// The table check of the data's schema, when the engine knew it at the start (tasks
    /// check their own first batch otherwise).
    pub target: Option<CheckedTarget>,
    /// The atomic run's key and stage (atomic writes, once started).
    pub atomic: Option<(String, AtomicStage)>,
}

impl RunState {
    /// How the write's key had committed before, if it had (an atomic run that loads
    /// nothing).
    pub fn committed_before(&self) -> Option<CommittedBy> {
        match self.atomic {
            Some((_, AtomicStage::Committed(by))) => Some(by),
            _ => None,
        }
    }
}

/// One write of an engine's tasks into `database.table`, from its start to its finish or
/// abort.
///
/// ```text
/// start ─► task ─► write … (on each worker: one TaskWriter per task attempt) ─► finish
///                                              └─ any failure ─► abort
/// ```
///
/// The state that travels with the tasks is [`RunState`] ([`WriteRun::state`],
/// [`WriteRun::resume`]); the per-load labels a process's tasks share and the loads its
/// tasks pre-committed (a two-phase write, committed or aborted by this process) stay in
/// the process. SQL steps run over a session the caller opens on demand (`open`): only
/// an atomic run's begin, publish and discard need one.
#[derive(Debug)]
pub struct WriteRun {
    database: String,
    table: String,
    spec: WriteSpec,
    client: ClientConfig,
    default_timeout: Duration,
    state: RunState,
    labels: OnceLock<Option<Arc<PartitionLabels>>>,
    precommitted: Mutex<Vec<TxnRef>>,
}

impl WriteRun {
    /// A write of `spec` into `database.table` through the FE of `client`
    /// (`default_timeout`: the answer timeout when the spec sets none), not started.
    pub fn new(
        spec: WriteSpec,
        database: impl Into<String>,
        table: impl Into<String>,
        client: ClientConfig,
        default_timeout: Duration,
    ) -> Self {
        Self::resume(
            spec,
            database,
            table,
            client,
            default_timeout,
            RunState::default(),
        )
    }

    /// The run whose tasks' state is `state` (on an engine's worker).
    pub fn resume(
        spec: WriteSpec,
        database: impl Into<String>,
        table: impl Into<String>,
        client: ClientConfig,
        default_timeout: Duration,
        state: RunState,
    ) -> Self {
        Self {
            database: database.into(),
            table: table.into(),
            spec,
            client,
            default_timeout,
            state,
            labels: OnceLock::new(),
            precommitted: Mutex::new(Vec::new()),
        }
    }

    /// The state the run's tasks carry.
    pub fn state(&self) -> &RunState {
        &self.state
    }

    /// How the write commits.
    pub fn mode(&self) -> WriteMode {
        self.spec.mode()
    }

    /// How the write's key had committed before, if it had (an atomic run that loads
    /// nothing).
    pub fn committed_before(&self) -> Option<CommittedBy> {
        self.state.committed_before()
    }

    /// Checks the data's schema `data` against the table as `described` on a server of
    /// `release`: what the release cannot run as asked ([`WriteSpec::check_release`]), and
    /// the columns, types, nullability, key model and operation
    /// ([`doris_sql::check_write_target`], [`StreamLoadError::Incompatible`]).
    pub fn check_target(
        &self,
        described: &TableSchema,
        release: Option<DorisRelease>,
        data: &Schema,
    ) -> Result<CheckedTarget, StreamLoadError> {
        self.spec.check_release(release)?;
        let target = doris_sql::check_write_target(described, data, self.spec.operation)?;
        Ok(CheckedTarget {
            rules: target
                .column_writes
                .iter()
                .map(ColumnRule::from_write)
                .collect(),
            columns: target.columns,
        })
    }

    /// Starts the write before any task runs: refuses a write whose tasks the engine may
    /// retry (`retried_tasks`) unless it keeps its guarantee under retries
    /// ([`WriteSpec::check_retried_tasks`]) and what the server's `release` cannot run;
    /// checks the data's schema when the engine knows it (`data`); begins an atomic run
    /// ([`WriteSpec::begin_atomic`]: the key's earlier commit, or a new staging table), the
    /// only step that opens a session.
    pub async fn start<S, F, Fut>(
        &mut self,
        described: &TableSchema,
        release: Option<DorisRelease>,
        data: Option<&Schema>,
        retried_tasks: bool,
        open: F,
    ) -> Result<(), StreamLoadError>
    where
        S: SqlSession,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<S, StreamLoadError>>,
    {
        if retried_tasks {
            self.spec.check_retried_tasks()?;
        }
        match data {
            Some(data) => self.state.target = Some(self.check_target(described, release, data)?),
            None => self.spec.check_release(release)?,
        }
        if self.mode() == WriteMode::Atomic {
            let key = self.spec.atomic_key();
            let mut session = open().await?;
            let stage = match self
                .spec
                .begin_atomic(&mut session, &self.database, described, &key)
                .await?
            {
                Begun::AlreadyCommitted { by, .. } => AtomicStage::Committed(by),
                Begun::Fresh(run) => AtomicStage::Staging(run.staging_table()),
            };
            self.state.atomic = Some((key, stage));
        }
        self.state.started = true;
        Ok(())
    }

    /// A writer for one task attempt, its batches checked by `target`'s rules (the run's
    /// own check, [`RunState::target`], when the engine knew the schema at the start);
    /// an atomic run's writer loads into the staging table under a tag of its own. `None`
    /// when the key had committed before: the task loads nothing.
    pub fn task(&self, target: &CheckedTarget) -> Result<Option<TaskWriter>, StreamLoadError> {
        if !self.state.started {
            return Err(StreamLoadError::Config(
                "a task was started before the write (start)".into(),
            ));
        }
        let staging = match &self.state.atomic {
            Some((_, AtomicStage::Staging(staging))) => Some(staging.clone()),
            Some(_) => return Ok(None),
            None => None,
        };
        TaskWriter::new(
            self.client.clone(),
            self.default_timeout,
            &self.database,
            &self.table,
            self.spec.clone(),
            target.rules.clone(),
            staging,
        )
        .map(Some)
    }

    /// Loads a task's `batches` (of `schema`) with `writer`, under the per-load labels this
    /// process's tasks share (a keyed write that is not atomic); the loads it pre-commits
    /// are kept for [`WriteRun::finish`] and [`WriteRun::abort`].
    pub async fn write(
        &self,
        writer: &TaskWriter,
        schema: &SchemaRef,
        batches: Vec<RecordBatch>,
    ) -> Result<TaskReport, TaskFailure> {
        let labels = self
            .labels
            .get_or_init(|| PartitionLabels::of(&self.spec).map(Arc::new));
        let report = writer.write(schema, batches, labels.as_deref()).await?;
        self.pending().extend(report.precommitted.iter().cloned());
        Ok(report)
    }

    /// Finishes the write from its tasks' reports: an atomic run publishes the attempts
    /// they name in one transaction under the key's label (when no task loaded a row, by
    /// the columns of the start's table check: an overwrite still empties the table), a
    /// two-phase write commits every load the reports name pre-committed (and aborts those
    /// this process pre-committed for attempts no report names); the write's summary.
    pub async fn finish<S, F, Fut>(
        &self,
        reports: &[TaskReport],
        open: F,
    ) -> Result<WriteSummary, StreamLoadError>
    where
        S: SqlSession,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<S, StreamLoadError>>,
    {
        match self.mode() {
            WriteMode::Atomic => {
                let Some(run) = self.atomic_run()? else {
                    return Ok(WriteSummary::of_atomic(reports, None));
                };
                let checked = self.state.target.as_ref();
                let fallback = checked.map_or(&[][..], |t| &t.columns[..]);
                let columns = WriteSummary::published_columns(reports, fallback);
                let tags = WriteSummary::attempts_to_publish(reports);
                let mut session = open().await?;
                let published = run.publish(&mut session, &columns, &tags).await?;
                let mut summary = WriteSummary::of_atomic(reports, Some(&published));
                summary.staging_left = published.staging_left;
                Ok(summary)
            }
            WriteMode::TwoPhase => {
                // The reports name the loads to commit (the engine kept their tasks),
                // wherever their tasks ran; loads this process pre-committed for tasks
                // the engine dropped (an attempt that failed or was run twice) are
                // aborted after.
                let kept: Vec<TxnRef> = reports
                    .iter()
                    .flat_map(|r| r.precommitted.iter().cloned())
                    .collect();
                self.settle_loads(&kept, true).await?;
                if let Err(e) = self.settle(false).await {
                    tracing::warn!(
                        error = %e,
                        "loads of dropped task attempts left pre-committed (Doris aborts them at their timeout)"
                    );
                }
                Ok(WriteSummary::of_loads(reports, true))
            }
            WriteMode::PerLoadLabels | WriteMode::Plain => {
                Ok(WriteSummary::of_loads(reports, false))
            }
        }
    }

    /// Undoes what a failed write left: aborts every load this process's tasks
    /// pre-committed and not yet settled, then drops an atomic run's staging table (a
    /// rerun with the key drops it too). Both are tried; the first failure is returned.
    pub async fn abort<S, F, Fut>(&self, open: F) -> Result<(), StreamLoadError>
    where
        S: SqlSession,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<S, StreamLoadError>>,
    {
        let settled = self.settle(false).await;
        let discarded = match self.atomic_run() {
            Ok(Some(run)) => match open().await {
                Ok(mut session) => run.discard(&mut session).await,
                Err(e) => Err(e),
            },
            Ok(None) => Ok(()),
            Err(e) => Err(e),
        };
        settled.and(discarded)
    }

    /// Commits (`commit`) or aborts the loads this process's tasks pre-committed and not
    /// yet settled ([`WriteRun::settle_loads`]).
    pub async fn settle(&self, commit: bool) -> Result<(), StreamLoadError> {
        let txns = self.pending().clone();
        self.settle_loads(&txns, commit).await
    }

    /// Commits (`commit`) or aborts the pre-committed loads `txns`: a commit that fails
    /// aborts every load not yet committed and fails with
    /// [`StreamLoadError::PartialCommit`]; an abort goes on past a failed one. Loads leave
    /// this process's list once handled (committed, aborted, or reported left by a partial
    /// settlement); on any other failure they stay for [`WriteRun::abort`].
    pub async fn settle_loads(&self, txns: &[TxnRef], commit: bool) -> Result<(), StreamLoadError> {
        if txns.is_empty() {
            return Ok(());
        }
        let mut config = self.client.clone();
        self.spec
            .clone()
            .configure_client(&mut config, self.default_timeout);
        let client = StreamLoadClient::new(config)?;
        let settled = if commit {
            client
                .commit_or_abort_all(&self.database, txns)
                .await
                .map(|_| ())
        } else {
            client.abort_every(&self.database, txns).await.map(|_| ())
        };
        if matches!(settled, Ok(()) | Err(StreamLoadError::PartialCommit { .. })) {
            self.pending().retain(|t| !txns.contains(t));
        }
        settled
    }

    /// The loads pre-committed and not yet settled.
    fn pending(&self) -> std::sync::MutexGuard<'_, Vec<TxnRef>> {
        // A panic elsewhere cannot leave the list half-written: use it as it is.
        self.precommitted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The fresh atomic run to publish or discard (`None`: not atomic, not started, or
    /// the key had committed before).
    fn atomic_run(&self) -> Result<Option<AtomicWrite>, StreamLoadError> {
        match &self.state.atomic {
            Some((key, AtomicStage::Staging(staging))) => self
                .spec
                .resume_atomic(&self.database, &self.table, key, staging)
                .map(Some),
            _ => Ok(None),
        }
    }
}
