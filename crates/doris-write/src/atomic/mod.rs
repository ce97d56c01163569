//! Atomic, idempotent writes: the visible change of a whole write is one Doris transaction
//! under a label that comes from an idempotence key, recorded in a commit ledger that
//! outlives the label.
//!
//! 0. [`AtomicWrite::begin`] reads the server's Doris release and refuses, before
//!    anything is written, a release that cannot run the write ([`check_release`]).
//! 1. [`AtomicWrite::begin`] asks whether the key committed: its label's state in Doris,
//!    then the commit ledger ([`CommitRecord`]), since Doris forgets finished labels
//!    after `label_keep_max_second` (3 days) and beyond `label_num_threshold` (2,000 per
//!    database). Committed: the write was done before, nothing is loaded
//!    ([`Begun::AlreadyCommitted`]). Otherwise the key's leftover staging tables are
//!    dropped and a new one is made for this run, the privileges checked first.
//! 2. Every task attempt loads its rows into the staging table through Stream Load with a
//!    tag of its own ([`AtomicWrite::load_options`]). Loads of attempts that fail or are
//!    retried carry tags nobody reports, so they are never published.
//! 3. [`AtomicWrite::publish`] copies the rows of the attempts that succeeded into the
//!    target and writes the key's ledger record, in one transaction under the key's label
//!    (`BEGIN WITH LABEL`, two `INSERT … SELECT … FROM staging`, `COMMIT`): the target
//!    changes once or not at all, and the record commits with it. A lost answer, or a
//!    refusal, is settled by asking again whether the key committed; the staging table is
//!    dropped afterwards.
//!
//! The SQL statements run over the MySQL protocol, which this crate does not speak: the
//! caller hands in a [`SqlSession`] (`doris-mysql`'s `Session` is one, over sqlx). Whether a
//! failed statement may have taken effect is decided here, from the one fact a session
//! reports ([`SqlFailure`]: answered with an error, or not answered). What each step
//! guarantees, and the Doris settings and privileges it relies on, is in
//! `docs/consistency.md`.

mod housekeeping;
mod key;
mod publish;
mod record;
mod release;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::staging::{
    DEFAULT_LEDGER_TABLE, LedgerRecord, StagingName, begin_with_label, ledger_insert_from_staging,
    ledger_probe_insert, ledger_table_ddl, privilege_probe_insert, publish_insert,
    publish_overwrite, publish_rows_insert, staged_counts_query, staging_columns_header,
    staging_table_ddl,
};
use doris_sql::TableSchema;
pub use doris_sql::session::{SqlFailure, SqlRows, SqlSession};
pub use housekeeping::cleanup;
pub use key::{RESERVED_WITH_UNDERSCORE, check_prefix, key_label};
pub use record::{CommittedBy, LabelState, cleanup_ledger, label_state};
pub use release::{ATOMIC_WRITE_FLOOR, check_release, label_lookup_privilege};

use housekeeping::{
    drop_staging_of, drop_statement, drop_table, is_privilege_denial, privilege_error, sql_error,
};
use publish::{Publish, Statements};
use record::{committed, now_utc, record_alone};

use doris_streamload::Label;
use doris_streamload::StreamLoadError;
use doris_streamload::{Columns, LoadOptions, MergeType, NewKeyBehavior, UpdateMode};

/// Where a committed key is remembered besides its Doris label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitRecord {
    /// A ledger table in the target's database (created by the first write that needs
    /// it): the publish writes one row into it in the same transaction as the rows, so a
    /// rerun of a key is a no-op however long after and however many other loads ran in
    /// between. Needs CREATE once, and LOAD and SELECT on the ledger.
    Ledger(String),
    /// The label only: a rerun after Doris forgot the label (`label_keep_max_second`,
    /// 3 days by default, or beyond `label_num_threshold` newer transactions in the
    /// database, 2,000 by default) writes the rows again.
    LabelOnly,
}

impl Default for CommitRecord {
    fn default() -> Self {
        Self::Ledger(DEFAULT_LEDGER_TABLE.to_owned())
    }
}

/// How long [`AtomicWrite`] waits on a label that is still running, and how often it looks.
#[derive(Debug, Clone, Copy)]
pub struct AtomicPolicy {
    /// Longest wait for a running label to finish.
    pub settle_timeout: Duration,
    /// Time between two looks.
    pub poll_interval: Duration,
    /// Attempts of the publish when its answer was lost (or its label was held by another
    /// run that did not commit) and the key did not commit.
    pub publish_attempts: u32,
    /// How long the publishing transaction may run: the session waits this long for each
    /// of its statements (not the session's usual request timeout: copying a large
    /// staging table takes longer), and Doris's `insert_timeout` is set to it, so Doris
    /// aborts a transaction the writer stopped waiting for. Default: 4 h, Doris's
    /// `insert_timeout` default.
    pub publish_timeout: Duration,
}

impl Default for AtomicPolicy {
    fn default() -> Self {
        Self {
            settle_timeout: Duration::from_secs(600),
            poll_interval: Duration::from_millis(250),
            publish_attempts: 3,
            publish_timeout: Duration::from_secs(14_400),
        }
    }
}

/// What [`AtomicWrite::begin`] found.
#[derive(Debug)]
pub enum Begun {
    /// The key committed before: this write was done; load nothing.
    AlreadyCommitted {
        /// The key's label.
        label: Label,
        /// How the commit was recognised (the label, or the ledger after Doris forgot it).
        by: CommittedBy,
    },
    /// A new run, with its staging table made.
    Fresh(AtomicWrite),
}

impl crate::WriteSpec {
    /// Begins the atomic run of `key` ([`WriteSpec::atomic_key`](crate::WriteSpec::atomic_key))
    /// on `database`'s table `target`: [`AtomicWrite::begin`] under the key's label with
    /// this spec's label prefix and commit record.
    pub async fn begin_atomic<S: SqlSession>(
        &self,
        session: &mut S,
        database: &str,
        target: &TableSchema,
        key: &str,
    ) -> Result<Begun, StreamLoadError> {
        let label = key_label(&self.label_prefix, key)?;
        AtomicWrite::begin_write(
            session,
            database,
            target,
            label,
            self.commit_record.clone(),
            AtomicPolicy::default(),
            self.overwrite,
        )
        .await
    }

    /// The atomic run of `key` on `database.table` staged in `staging_table`, as this spec
    /// publishes it (a partial update, an overwrite, its commit record): what a later step
    /// — the publish, the discard — rebuilds from the run's key and staging table
    /// ([`AtomicWrite::resume`]).
    pub fn resume_atomic(
        &self,
        database: &str,
        table: &str,
        key: &str,
        staging_table: &str,
    ) -> Result<AtomicWrite, StreamLoadError> {
        let label = key_label(&self.label_prefix, key)?;
        let run = AtomicWrite::resume(
            database,
            table,
            label,
            staging_table,
            self.commit_record.clone(),
            AtomicPolicy::default(),
        )?;
        Ok(run
            .with_partial_update(self.operation == doris_sql::WriteOperation::PartialUpdate)
            .with_overwrite(self.overwrite))
    }
}

/// The outcome of [`AtomicWrite::publish`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// The key's label.
    pub label: String,
    /// Rows the INSERT reported, `None` when its answer was lost and the key's state
    /// told the outcome (or when nothing was to be published).
    pub rows: Option<u64>,
    /// Whether this run committed it (`false`: an earlier or concurrent run had).
    pub by_this_run: bool,
    /// A staging table that could not be dropped (the `cleanup` helper removes it later).
    pub staging_left: Option<String>,
}

/// One run of an atomic write.
#[derive(Debug, Clone)]
pub struct AtomicWrite {
    database: String,
    table: String,
    label: Label,
    staging: StagingName,
    record: CommitRecord,
    policy: AtomicPolicy,
    partial_update: bool,
    overwrite: bool,
}

/// A new task attempt's tag, a random positive integer (the staging table's tag column is a
/// BIGINT): each attempt of a task tags its staged rows with its own, so only the
/// attempts that succeed are published. 59 random bits: two attempts of one run share a
/// tag with a chance of about 1 in 10^17.
pub fn attempt_tag() -> String {
    (rand::random::<u64>() >> 5).max(1).to_string()
}

impl AtomicWrite {
    /// Starts a run of the write named by `label` into `database.table` (whose schema is
    /// `target`), its commit remembered as `record` says: see the module docs.
    pub async fn begin<S: SqlSession>(
        session: &mut S,
        database: &str,
        target: &TableSchema,
        label: Label,
        record: CommitRecord,
        policy: AtomicPolicy,
    ) -> Result<Begun, StreamLoadError> {
        Self::begin_write(session, database, target, label, record, policy, false).await
    }

    /// [`AtomicWrite::begin`] for a run that appends (`overwrite: false`) or overwrites. An
    /// overwrite's key is done only once its record is in the ledger, which is written
    /// after the table was checked to hold the rows: Doris commits an `INSERT OVERWRITE`'s
    /// label before it swaps the partitions in, so a label committed without a record may
    /// name an overwrite that never reached the table. Such a run begins afresh, and its
    /// publish checks the table against its rows: the key is recorded when the table holds
    /// them, refused otherwise ([`StreamLoadError::OverwriteNotApplied`]), never claimed
    /// done and never overwritten again (rows written since would be lost).
    pub async fn begin_write<S: SqlSession>(
        session: &mut S,
        database: &str,
        target: &TableSchema,
        label: Label,
        record: CommitRecord,
        policy: AtomicPolicy,
        overwrite: bool,
    ) -> Result<Begun, StreamLoadError> {
        let config = StreamLoadError::Statement;
        let release = session
            .release()
            .await
            .map_err(|f| sql_error("read the server's Doris release", f))?;
        let release = check_release(release)?;
        if let CommitRecord::Ledger(ledger) = &record {
            ensure_ledger(session, database, ledger, target, &label).await?;
        }
        let found = committed(session, database, &label, &record, &policy)
            .await
            .map_err(|e| name_label_privilege(e, release))?;
        drop_staging_of(session, database, label.as_str()).await?;
        let unrecorded = match (&found, &record) {
            (Some(CommittedBy::Label), CommitRecord::Ledger(ledger)) => {
                record::ledger_rows(session, database, ledger, &label)
                    .await?
                    .is_none()
            }
            _ => false,
        };
        let found = if overwrite && unrecorded {
            tracing::info!(
                label = %label,
                "atomic overwrite: the key's label committed without its record (the partitions may never have been swapped in); the run begins again"
            );
            None
        } else {
            found
        };
        if let Some(by) = found {
            if by == CommittedBy::Label
                && let CommitRecord::Ledger(ledger) = &record
                && unrecorded
            {
                // Committed before the ledger had its record (an overwrite whose record
                // was not written, or a key from before the ledger): record it now, while
                // Doris still remembers the label.
                let entry = LedgerRecord {
                    label: label.as_str(),
                    target_table: &target.name,
                    committed_at: &now_utc(),
                };
                record_alone(session, database, ledger, &entry, None, &policy).await?;
            }
            tracing::info!(
                label = %label,
                by = ?by,
                "atomic write: the key committed before, nothing to write"
            );
            return Ok(Begun::AlreadyCommitted { label, by });
        }
        let created = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let staging = StagingName::new(label.as_str(), created, rand::random());
        // The privileges the run needs, checked before the first byte is loaded: DROP (of
        // the new name, which does not exist yet: Doris checks the privilege first),
        // CREATE, then LOAD on the target (and the ledger) and SELECT on the staging table
        // by INSERTs that plan to an empty set (Doris begins no transaction for them).
        session
            .execute(&drop_statement(database, &staging.to_string())?)
            .await
            .map_err(|f| privilege_error("DROP in the database", "drop a staging table", f))?;
        let ddl = staging_table_ddl(database, &staging, target).map_err(config)?;
        session.execute(&ddl).await.map_err(|f| {
            privilege_error("CREATE in the database", "create the staging table", f)
        })?;
        // Doris refuses a generated column in an INSERT's column list: the probe names the
        // columns a publish can name.
        let columns: Vec<String> = target
            .columns
            .iter()
            .filter(|c| !c.generated)
            .map(|c| c.name.clone())
            .collect();
        let mut probes = vec![
            privilege_probe_insert(database, &target.name, &staging, &columns).map_err(config)?,
        ];
        if let CommitRecord::Ledger(ledger) = &record {
            probes.push(ledger_probe_insert(database, ledger).map_err(config)?);
        }
        for probe in probes {
            if let Err(f) = session.execute(&probe).await {
                let _ = drop_table(session, database, &staging.to_string()).await;
                return Err(privilege_error(
                    "LOAD on the target and the ledger, and SELECT in the database",
                    "check the publishing INSERTs",
                    f,
                ));
            }
        }
        Ok(Begun::Fresh(Self {
            database: database.to_owned(),
            table: target.name.clone(),
            label,
            staging,
            record,
            policy,
            partial_update: false,
            overwrite: false,
        }))
    }

    /// The staging table's name (Stream Loads of this run go there).
    pub fn staging_table(&self) -> String {
        self.staging.to_string()
    }

    /// The key's label.
    pub fn label(&self) -> &Label {
        &self.label
    }

    /// Options for a task attempt's loads into the staging table: `base` with the columns
    /// header that maps `fields` and sets the tag to `tag`. Updates and deletes are not
    /// staged (the staging table is DUPLICATE): `base` must be a plain load.
    pub fn load_options(
        &self,
        base: &LoadOptions,
        fields: &[String],
        tag: &str,
    ) -> Result<LoadOptions, StreamLoadError> {
        staging_load_options(base, fields, tag)
    }

    /// The run started by `begin` elsewhere (e.g. on the driver, when tasks and the final
    /// publish run in other processes), from its label and staging table name.
    pub fn resume(
        database: &str,
        table: &str,
        label: Label,
        staging_table: &str,
        record: CommitRecord,
        policy: AtomicPolicy,
    ) -> Result<Self, StreamLoadError> {
        let staging = StagingName::parse(staging_table)
            .filter(|s| s.belongs_to(label.as_str()))
            .ok_or_else(|| {
                StreamLoadError::Config(
                    "the staging table's name does not belong to this label".into(),
                )
            })?;
        Ok(Self {
            database: database.to_owned(),
            table: table.to_owned(),
            label,
            staging,
            record,
            policy,
            partial_update: false,
            overwrite: false,
        })
    }

    /// Publishes as a partial-column update (`operation="partial_update"`): the INSERT runs
    /// with `enable_unique_key_partial_update = true`, so on a merge-on-write UNIQUE table
    /// only the published columns change for existing keys (new keys are inserted, the
    /// other columns taking their defaults). The staged loads themselves are plain.
    #[must_use]
    pub fn with_partial_update(mut self, on: bool) -> Self {
        self.partial_update = on;
        self
    }

    /// Publishes as a replacement of the whole table: `INSERT OVERWRITE TABLE … WITH
    /// LABEL` of the staged rows, under the key's label (Doris runs no overwrite inside an
    /// explicit transaction, so the ledger record follows it on its own); a run with no
    /// rows empties the table. Doris takes no label for a statement whose source has no
    /// row, so with a ledger the key's record makes a rerun a no-op, and with the label
    /// only ([`CommitRecord::LabelOnly`]) a rerun empties the table again.
    #[must_use]
    pub fn with_overwrite(mut self, on: bool) -> Self {
        self.overwrite = on;
        self
    }

    /// Publishes the rows of the attempts in `tags` (each with the rows its loads reported)
    /// into the target (columns `columns`) in one transaction under the key's label, with
    /// the key's ledger record, then drops the staging table. With no tag there is nothing
    /// to publish: the staging table is dropped and the key stays uncommitted.
    ///
    /// Before the publish, the rows staged under each tag are counted and must equal what
    /// its loads reported: rows not visible yet (a `Publish Timeout` load) are waited for,
    /// and more rows than reported fail the publish, so a short or doubled attempt is never
    /// published.
    pub async fn publish<S: SqlSession>(
        self,
        session: &mut S,
        columns: &[String],
        tags: &[(String, u64)],
    ) -> Result<Published, StreamLoadError> {
        let mut published = Published {
            label: self.label.to_string(),
            rows: None,
            by_this_run: true,
            staging_left: None,
        };
        if self.overwrite && self.partial_update {
            return Err(StreamLoadError::Config(
                "an overwrite replaces whole rows: it cannot be a partial update".into(),
            ));
        }
        if !tags.is_empty() || self.overwrite {
            self.await_staged(session, tags).await?;
            let names: Vec<String> = tags.iter().map(|(t, _)| t.clone()).collect();
            let committed_at = now_utc();
            // An overwrite whose key an earlier run committed: recorded (by a concurrent
            // run, since this one began) it is done; by its label alone, its partitions may
            // never have been swapped in, and the table is checked against this run's rows
            // (`Publish::settle_unrecorded`) instead of overwriting again, which would also
            // replace rows written since.
            let earlier = self.earlier_overwrite(session).await?;
            if let Some(CommittedBy::Ledger { .. }) = earlier {
                published.by_this_run = false;
                return self.drop_staging(published, session).await;
            }
            let unrecorded = earlier.is_some();
            let statements = self.statements(columns, &names, &committed_at)?;
            let publish = Publish {
                database: &self.database,
                table: &self.table,
                label: &self.label,
                record: &self.record,
                policy: &self.policy,
                partial_update: self.partial_update,
                statements,
                staged_rows: tags.iter().map(|(_, n)| n).sum(),
                committed_at,
                overwrite_check: self.overwrite.then(|| publish::OverwriteCheck {
                    columns: columns.to_vec(),
                    staging: self.staging,
                    tags: names.clone(),
                }),
            };
            let usual = session.set_timeout(self.policy.publish_timeout);
            let started = std::time::Instant::now();
            let outcome = match unrecorded {
                true => publish.settle_unrecorded(session).await,
                false => publish.run(session).await,
            };
            session.set_timeout(usual);
            match &outcome {
                Ok((rows, by_this_run)) => tracing::info!(
                    label = %self.label,
                    rows = ?rows,
                    by_this_run,
                    seconds = started.elapsed().as_secs_f64(),
                    "atomic publish"
                ),
                Err(e) => tracing::warn!(label = %self.label, error = %e, "atomic publish failed"),
            }
            let (rows, by_this_run) = outcome?;
            published.rows = rows;
            published.by_this_run = by_this_run;
        }
        self.drop_staging(published, session).await
    }

    /// Drops the staging table after a publish (kept in `staging_left` when that fails).
    async fn drop_staging<S: SqlSession>(
        &self,
        mut published: Published,
        session: &mut S,
    ) -> Result<Published, StreamLoadError> {
        let drop = drop_statement(&self.database, &self.staging.to_string())?;
        if session.execute(&drop).await.is_err() {
            published.staging_left = Some(self.staging.to_string());
        }
        Ok(published)
    }

    /// How an overwrite with a ledger was committed before this run published: by its
    /// label alone ([`AtomicWrite::begin_write`] began this run anyway), or recorded (by a
    /// concurrent run since); `None` when not (or not an overwrite with a ledger).
    async fn earlier_overwrite<S: SqlSession>(
        &self,
        session: &mut S,
    ) -> Result<Option<CommittedBy>, StreamLoadError> {
        if !self.overwrite || !matches!(self.record, CommitRecord::Ledger(_)) {
            return Ok(None);
        }
        record::committed(
            session,
            &self.database,
            &self.label,
            &self.record,
            &self.policy,
        )
        .await
    }

    /// The publish's statements: a transaction with the ledger record, or one labelled
    /// statement (an overwrite, or no ledger).
    fn statements(
        &self,
        columns: &[String],
        tags: &[String],
        committed_at: &str,
    ) -> Result<Statements, StreamLoadError> {
        let config = StreamLoadError::Statement;
        let label = self.label.as_str();
        let ledger = match &self.record {
            CommitRecord::Ledger(ledger) if !self.overwrite => ledger,
            _ => {
                let statement = if self.overwrite {
                    publish_overwrite
                } else {
                    publish_insert
                };
                return statement(
                    &self.database,
                    &self.table,
                    &self.staging,
                    label,
                    columns,
                    tags,
                )
                .map(Statements::Single)
                .map_err(config);
            }
        };
        let entry = LedgerRecord {
            label,
            target_table: &self.table,
            committed_at,
        };
        Ok(Statements::Transaction {
            begin: begin_with_label(label).map_err(config)?,
            rows: publish_rows_insert(&self.database, &self.table, &self.staging, columns, tags)
                .map_err(config)?,
            record: ledger_insert_from_staging(&self.database, ledger, &self.staging, &entry, tags)
                .map_err(config)?,
        })
    }

    /// Drops this run's staging table (after a failed run; a rerun would drop it too).
    pub async fn discard<S: SqlSession>(self, session: &mut S) -> Result<(), StreamLoadError> {
        drop_table(session, &self.database, &self.staging.to_string()).await
    }

    /// Waits until every tag's staged rows are visible and exactly as many as reported.
    async fn await_staged<S: SqlSession>(
        &self,
        session: &mut S,
        tags: &[(String, u64)],
    ) -> Result<(), StreamLoadError> {
        let sql = staged_counts_query(&self.database, &self.staging)
            .map_err(StreamLoadError::Statement)?;
        let deadline = std::time::Instant::now() + self.policy.settle_timeout;
        loop {
            let rows = session
                .query(&sql)
                .await
                .map_err(|f| sql_error("count the staged rows", f))?;
            let staged = |tag: &str| -> u64 {
                rows.rows
                    .iter()
                    .find(|r| r.first().and_then(|c| c.as_deref()) == Some(tag))
                    .and_then(|r| r.get(1).and_then(|c| c.as_deref()))
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0)
            };
            let mut short = false;
            for (tag, expected) in tags {
                let got = staged(tag);
                if got > *expected {
                    return Err(StreamLoadError::CounterMismatch {
                        label: self.label.to_string(),
                        detail: format!(
                            "an attempt staged {got} rows where its loads reported {expected}; nothing was published"
                        ),
                    });
                }
                short |= got < *expected;
            }
            if !short {
                return Ok(());
            }
            if std::time::Instant::now() + self.policy.poll_interval > deadline {
                return Err(StreamLoadError::Rejected {
                    label: self.label.to_string(),
                    message: format!(
                        "staged rows were still not all visible after {} s; nothing was published",
                        self.policy.settle_timeout.as_secs()
                    ),
                    error_url: None,
                    error_log_head: Vec::new(),
                });
            }
            tokio::time::sleep(self.policy.poll_interval).await;
        }
    }
}

/// A denied label lookup, with the privilege it needs on `release`.
fn name_label_privilege(
    e: StreamLoadError,
    release: doris_sql::release::DorisRelease,
) -> StreamLoadError {
    match e {
        StreamLoadError::Privilege {
            needed: record::LABEL_LOOKUP,
            message,
        } => StreamLoadError::Privilege {
            needed: label_lookup_privilege(release),
            message,
        },
        other => other,
    }
}

/// Creates the commit ledger when the database has none: a lookup of the key finds out
/// (a writer that finds the ledger needs no CREATE privilege; one that may not read it is
/// told so).
async fn ensure_ledger<S: SqlSession>(
    session: &mut S,
    database: &str,
    ledger: &str,
    target: &TableSchema,
    label: &Label,
) -> Result<(), StreamLoadError> {
    match record::ledger_rows(session, database, ledger, label).await {
        Ok(_) => Ok(()),
        Err(StreamLoadError::Sql { message, .. }) if is_missing_table(&message) => {
            let ddl =
                ledger_table_ddl(database, ledger, target).map_err(StreamLoadError::Statement)?;
            session.execute(&ddl).await.map(|_| ()).map_err(|f| {
                privilege_error("CREATE in the database", "create the commit ledger", f)
            })
        }
        Err(StreamLoadError::Sql { message, .. }) if is_privilege_denial(&message) => {
            Err(StreamLoadError::Privilege {
                needed: "SELECT on the commit ledger",
                message,
            })
        }
        Err(other) => Err(other),
    }
}

/// Doris's texts for a table that does not exist (`Table [t] does not exist in database
/// [d].`, Nereids' `Unknown table 't'`).
fn is_missing_table(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    lower.contains("does not exist") || lower.contains("unknown table")
}

/// Options for a task attempt's loads into a staging table (see
/// [`AtomicWrite::load_options`]). A fixed-columns partial update is staged as a plain load
/// of its columns (the publish applies it, see [`AtomicWrite::with_partial_update`]).
pub fn staging_load_options(
    base: &LoadOptions,
    fields: &[String],
    tag: &str,
) -> Result<LoadOptions, StreamLoadError> {
    let fixed_columns = matches!(base.update_mode, UpdateMode::FixedColumns { .. });
    if base.merge_type != MergeType::Append
        || !(base.update_mode == UpdateMode::Upsert || fixed_columns)
    {
        return Err(StreamLoadError::Config(
            "an atomic write stages plain loads and fixed-column partial updates only \
             (deletes and flexible partial updates are not staged)"
                .into(),
        ));
    }
    if fixed_columns && base.new_key_behavior == Some(NewKeyBehavior::Error) {
        return Err(StreamLoadError::Config(
            "an atomic partial update inserts new keys (partial_update_new_key_behavior=ERROR \
             is not applied to the publishing INSERT)"
                .into(),
        ));
    }
    if base.two_phase_commit || base.group_commit.is_some() {
        return Err(StreamLoadError::Config(
            "an atomic write commits once itself: two-phase and group commit do not apply".into(),
        ));
    }
    let header = staging_columns_header(fields, tag).map_err(StreamLoadError::Statement)?;
    let mut options = base.clone();
    options.columns = Columns::Raw(header);
    options.update_mode = UpdateMode::Upsert;
    options.new_key_behavior = None;
    Ok(options)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn attempt_tags_are_positive_integers_that_differ() {
        let fields = ["id".to_owned()];
        let tags: std::collections::HashSet<String> = (0..1000).map(|_| attempt_tag()).collect();
        assert_eq!(tags.len(), 1000);
        for tag in &tags {
            assert!(tag.parse::<i64>().unwrap() > 0, "{tag}");
            staging_load_options(&LoadOptions::default(), &fields, tag).unwrap();
        }
    }

    #[test]
    fn staged_loads_are_plain_and_only_stageable_operations_are_staged() {
        let fields = ["id".to_owned(), "score".to_owned()];
        let plain = staging_load_options(&LoadOptions::default(), &fields, "41").unwrap();
        assert_eq!(plain.update_mode, UpdateMode::Upsert);
        assert!(matches!(&plain.columns, Columns::Raw(h) if h.contains("__dd_load")));

        let partial = LoadOptions {
            update_mode: UpdateMode::FixedColumns {
                legacy_header: false,
            },
            ..LoadOptions::default()
        };
        let staged = staging_load_options(&partial, &fields, "41").unwrap();
        // The staging table is DUPLICATE: the partial update is applied by the publish.
        assert_eq!(staged.update_mode, UpdateMode::Upsert);
        assert_eq!(staged.new_key_behavior, None);

        let refusing_new_keys = LoadOptions {
            new_key_behavior: Some(NewKeyBehavior::Error),
            ..partial
        };
        assert!(staging_load_options(&refusing_new_keys, &fields, "41").is_err());
        let flexible = LoadOptions {
            update_mode: UpdateMode::FlexibleColumns,
            ..LoadOptions::default()
        };
        assert!(staging_load_options(&flexible, &fields, "41").is_err());
        let delete = LoadOptions {
            merge_type: MergeType::Delete,
            ..LoadOptions::default()
        };
        assert!(staging_load_options(&delete, &fields, "41").is_err());
    }
}
