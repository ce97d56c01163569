//! Atomic, idempotent writes: the visible change of a whole write is one Doris transaction
//! whose label comes from an idempotence key.
//!
//! 1. [`AtomicWrite::begin`] looks the key's label up. Committed: the write was done
//!    before, nothing is loaded ([`Begun::AlreadyCommitted`]). Otherwise the key's
//!    leftover staging tables are dropped and a new one is made for this run.
//! 2. Every task attempt loads its rows into the staging table through Stream Load with a
//!    tag of its own ([`AtomicWrite::load_options`]). Loads of attempts that fail or are
//!    retried carry tags nobody reports, so they are never published.
//! 3. [`AtomicWrite::publish`] runs `INSERT INTO target WITH LABEL <key label> … SELECT …
//!    FROM staging WHERE tag IN (<tags of the attempts that succeeded>)`: the target
//!    changes once or not at all. A lost answer is resolved by the label's state; the
//!    staging table is dropped afterwards.
//!
//! The SQL statements run over the MySQL protocol, which this crate does not speak: the
//! caller hands in a [`SqlSession`] (the `daft_doris` binding uses `doris-read`'s; the
//! `atomic_write` example implements one with sqlx). What each step guarantees, and the
//! Doris settings it relies on, is in `docs/consistency.md`.

use std::future::Future;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use doris_sql::TableSchema;
use doris_sql::staging::{
    STAGING_PREFIX, StagingName, privilege_probe_insert, publish_insert, publish_overwrite,
    staged_counts_query, staging_columns_header, staging_table_ddl,
};

use crate::error::StreamLoadError;
use crate::label::Label;
use crate::options::{Columns, LoadOptions, MergeType, NewKeyBehavior, UpdateMode};

/// The rows of a statement, as text cells, with the column names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SqlRows {
    /// Column names, in order.
    pub columns: Vec<String>,
    /// Rows; `None` is SQL NULL.
    pub rows: Vec<Vec<Option<String>>>,
}

impl SqlRows {
    /// The cells of the column named `name` (case-insensitive).
    pub fn column(&self, name: &str) -> Option<impl Iterator<Item = Option<&str>>> {
        let at = self
            .columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))?;
        Some(
            self.rows
                .iter()
                .map(move |r| r.get(at).and_then(|c| c.as_deref())),
        )
    }
}

/// How a statement failed, as the [`SqlSession`] classifies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlFailure {
    /// The server answered with an error: the statement did not take effect.
    Refused(String),
    /// No answer arrived (the connection broke or timed out): it may have taken effect.
    Unanswered(String),
}

/// A session on the FE's MySQL port. Implementations run statements as plain text
/// (COM_QUERY) and keep statement text and bound values out of their messages.
///
/// The futures are not required to be `Send` (sqlx's are not provably so): drive the
/// coordinator with `block_on`, on a `LocalSet`, or inside one spawned task that owns it.
pub trait SqlSession {
    /// Runs a statement without rows; returns the affected-row count.
    fn execute(&mut self, sql: &str) -> impl Future<Output = Result<u64, SqlFailure>>;
    /// Runs a query and returns its rows.
    fn query(&mut self, sql: &str) -> impl Future<Output = Result<SqlRows, SqlFailure>>;
    /// Replaces the connection with a new one (after a statement got no answer, the old
    /// connection is unusable).
    fn reconnect(&mut self) -> impl Future<Output = Result<(), SqlFailure>>;
}

/// The state of a label in Doris (`SHOW TRANSACTION … WHERE LABEL = …`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelState {
    /// No transaction holds it (never used, aborted, or forgotten by Doris).
    Free,
    /// A transaction holds it and has not finished.
    Running,
    /// Committed (visible now or after publish).
    Committed,
}

/// How long [`AtomicWrite`] waits on a label that is still running, and how often it looks.
#[derive(Debug, Clone, Copy)]
pub struct AtomicPolicy {
    /// Longest wait for a running label to finish.
    pub settle_timeout: Duration,
    /// Time between two looks.
    pub poll_interval: Duration,
    /// Attempts of the publishing INSERT when it was refused for a passing reason or its
    /// answer was lost and the label is free again.
    pub publish_attempts: u32,
}

impl Default for AtomicPolicy {
    fn default() -> Self {
        Self {
            settle_timeout: Duration::from_secs(600),
            poll_interval: Duration::from_millis(250),
            publish_attempts: 3,
        }
    }
}

/// What [`AtomicWrite::begin`] found.
#[derive(Debug)]
pub enum Begun {
    /// The key's label is committed: this write was done before; load nothing.
    AlreadyCommitted {
        /// The key's label.
        label: Label,
    },
    /// A new run, with its staging table made.
    Fresh(AtomicWrite),
}

/// The outcome of [`AtomicWrite::publish`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// The key's label.
    pub label: String,
    /// Rows the INSERT reported, `None` when its answer was lost and the label's state
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
    policy: AtomicPolicy,
    partial_update: bool,
    overwrite: bool,
}

/// The key's label: `<prefix>_<key>`.
pub fn key_label(prefix: &str, key: &str) -> Result<Label, StreamLoadError> {
    Label::new(format!("{prefix}_{key}"))
}

impl AtomicWrite {
    /// Starts a run of the write named by `label` into `database.table` (whose schema is
    /// `target`): see the module docs.
    pub async fn begin<S: SqlSession>(
        session: &mut S,
        database: &str,
        target: &TableSchema,
        label: Label,
        policy: AtomicPolicy,
    ) -> Result<Begun, StreamLoadError> {
        let state = settled_state(session, database, &label, &policy).await?;
        drop_staging_of(session, database, label.as_str()).await?;
        if state == LabelState::Committed {
            return Ok(Begun::AlreadyCommitted { label });
        }
        let created = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let staging = StagingName::new(label.as_str(), created, rand::random());
        // The privileges the run needs, checked before the first byte is loaded: DROP (of
        // the new name, which does not exist yet: Doris checks the privilege first),
        // CREATE, then LOAD on the target and SELECT on the staging table by an INSERT
        // that plans to an empty set (Doris begins no transaction for it).
        let config = StreamLoadError::Statement;
        let drop_new = format!(
            "DROP TABLE IF EXISTS {}.{}",
            doris_sql::quote_ident("database", database).map_err(config)?,
            doris_sql::quote_ident("table", &staging.to_string()).map_err(config)?,
        );
        session
            .execute(&drop_new)
            .await
            .map_err(|f| privilege_error("DROP in the database", "drop a staging table", f))?;
        let ddl = staging_table_ddl(database, &staging, target).map_err(config)?;
        session.execute(&ddl).await.map_err(|f| {
            privilege_error("CREATE in the database", "create the staging table", f)
        })?;
        let columns: Vec<String> = target.columns.iter().map(|c| c.name.clone()).collect();
        let probe =
            privilege_probe_insert(database, &target.name, &staging, &columns).map_err(config)?;
        if let Err(f) = session.execute(&probe).await {
            let _ = drop_table(session, database, &staging.to_string()).await;
            return Err(privilege_error(
                "LOAD on the target and SELECT in the database",
                "check the publishing INSERT",
                f,
            ));
        }
        Ok(Begun::Fresh(Self {
            database: database.to_owned(),
            table: target.name.clone(),
            label,
            staging,
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
    /// LABEL` of the staged rows, in one transaction under the key's label; a run with no
    /// rows empties the table (still under the label, so a rerun is a no-op).
    #[must_use]
    pub fn with_overwrite(mut self, on: bool) -> Self {
        self.overwrite = on;
        self
    }

    /// Publishes the rows of the attempts in `tags` (each with the rows its loads reported)
    /// into the target (columns `columns`) in one transaction under the key's label, then
    /// drops the staging table. With no tag there is nothing to publish: the staging table
    /// is dropped and the label stays free.
    ///
    /// Before the INSERT, the rows staged under each tag are counted and must equal what its
    /// loads reported: rows not visible yet (a `Publish Timeout` load) are waited for, and
    /// more rows than reported fail the publish, so a short or doubled attempt is never
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
            let statement = if self.overwrite {
                publish_overwrite
            } else {
                publish_insert
            };
            let insert = statement(
                &self.database,
                &self.table,
                &self.staging,
                self.label.as_str(),
                columns,
                &names,
            )
            .map_err(StreamLoadError::Statement)?;
            let (rows, by_this_run) = self.run_publish(session, &insert).await?;
            published.rows = rows;
            published.by_this_run = by_this_run;
        }
        let drop = format!(
            "DROP TABLE IF EXISTS {}.{}",
            doris_sql::quote_ident("database", &self.database)
                .map_err(StreamLoadError::Statement)?,
            doris_sql::quote_ident("table", &self.staging.to_string())
                .map_err(StreamLoadError::Statement)?,
        );
        if session.execute(&drop).await.is_err() {
            published.staging_left = Some(self.staging.to_string());
        }
        Ok(published)
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
        let deadline = Instant::now() + self.policy.settle_timeout;
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
            if Instant::now() + self.policy.poll_interval > deadline {
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

    /// The INSERT, with the label deciding every unclear case. Returns the reported rows
    /// and whether this run committed.
    async fn run_publish<S: SqlSession>(
        &self,
        session: &mut S,
        insert: &str,
    ) -> Result<(Option<u64>, bool), StreamLoadError> {
        let mut last = String::new();
        for _ in 0..self.policy.publish_attempts.max(1) {
            // The session variable is set on the connection that runs the INSERT (again
            // after a reconnect) and cleared after it.
            if self.partial_update {
                session
                    .execute(PARTIAL_UPDATE_ON)
                    .await
                    .map_err(|f| sql_error("switch the session to partial updates", f))?;
            }
            match session.execute(insert).await {
                Ok(rows) => {
                    if self.partial_update {
                        let _ = session.execute(PARTIAL_UPDATE_OFF).await;
                    }
                    return Ok((Some(rows), true));
                }
                Err(failure) => {
                    last = match &failure {
                        SqlFailure::Refused(m) | SqlFailure::Unanswered(m) => m.clone(),
                    };
                    if matches!(failure, SqlFailure::Unanswered(_)) {
                        reconnect(session, &self.policy).await?;
                    }
                    // Whatever the failure, the label says what happened.
                    let state =
                        settled_state(session, &self.database, &self.label, &self.policy).await?;
                    match (state, &failure) {
                        // Refused as "already used": an earlier or concurrent run committed.
                        (LabelState::Committed, _) => {
                            return Ok((None, !last.contains("has already been used")));
                        }
                        (_, SqlFailure::Refused(_)) => {
                            return Err(StreamLoadError::Rejected {
                                label: self.label.to_string(),
                                message: last,
                                error_url: None,
                                error_log_head: Vec::new(),
                            });
                        }
                        // No answer and the label is free: it did not commit; try again.
                        _ => continue,
                    }
                }
            }
        }
        Err(StreamLoadError::Ambiguous {
            label: self.label.to_string(),
            attempts: self.policy.publish_attempts,
            detail: format!("the publishing INSERT got no answer: {last}"),
        })
    }
}

const PARTIAL_UPDATE_ON: &str = "SET enable_unique_key_partial_update = true";
const PARTIAL_UPDATE_OFF: &str = "SET enable_unique_key_partial_update = false";

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

/// A new connection, tried a few times (the FE may be restarting).
async fn reconnect<S: SqlSession>(
    session: &mut S,
    policy: &AtomicPolicy,
) -> Result<(), StreamLoadError> {
    let mut last = String::new();
    for attempt in 0..5u32 {
        match session.reconnect().await {
            Ok(()) => return Ok(()),
            Err(SqlFailure::Refused(m) | SqlFailure::Unanswered(m)) => last = m,
        }
        tokio::time::sleep(policy.poll_interval * (attempt + 1)).await;
    }
    Err(StreamLoadError::Sql {
        step: "reconnect to the FE",
        message: last,
    })
}

/// The label's state once it is no longer running; still running after the policy's
/// timeout is an ambiguous outcome (the transaction may yet commit).
async fn settled_state<S: SqlSession>(
    session: &mut S,
    database: &str,
    label: &Label,
    policy: &AtomicPolicy,
) -> Result<LabelState, StreamLoadError> {
    let deadline = Instant::now() + policy.settle_timeout;
    loop {
        let state = label_state(session, database, label).await?;
        if state != LabelState::Running {
            return Ok(state);
        }
        if Instant::now() + policy.poll_interval > deadline {
            return Err(StreamLoadError::Ambiguous {
                label: label.to_string(),
                attempts: 1,
                detail: format!(
                    "the key's transaction was still running after {} s; rerun with the same key later",
                    policy.settle_timeout.as_secs()
                ),
            });
        }
        tokio::time::sleep(policy.poll_interval).await;
    }
}

/// The label's state from `SHOW TRANSACTION FROM db WHERE LABEL = '…'`.
pub async fn label_state<S: SqlSession>(
    session: &mut S,
    database: &str,
    label: &Label,
) -> Result<LabelState, StreamLoadError> {
    let sql = format!(
        "SHOW TRANSACTION FROM {} WHERE LABEL = '{}'",
        doris_sql::quote_ident("database", database).map_err(StreamLoadError::Statement)?,
        label.as_str()
    );
    let rows = session
        .query(&sql)
        .await
        .map_err(|f| sql_error("look the label up", f))?;
    if rows.rows.is_empty() {
        return Ok(LabelState::Free);
    }
    let states: Vec<String> = rows
        .column("TransactionStatus")
        .ok_or_else(|| {
            StreamLoadError::Malformed("SHOW TRANSACTION has no TransactionStatus column".into())
        })?
        .map(|s| s.unwrap_or_default().to_ascii_uppercase())
        .collect();
    Ok(
        if states.iter().any(|s| s == "VISIBLE" || s == "COMMITTED") {
            LabelState::Committed
        } else if states.iter().any(|s| s == "PREPARE" || s == "PRECOMMITTED") {
            LabelState::Running
        } else {
            LabelState::Free
        },
    )
}

/// Staging tables of `database` with their names parsed.
async fn staging_tables<S: SqlSession>(
    session: &mut S,
    database: &str,
) -> Result<Vec<(String, StagingName)>, StreamLoadError> {
    let sql = format!(
        "SHOW TABLES FROM {} LIKE '{STAGING_PREFIX}%'",
        doris_sql::quote_ident("database", database).map_err(StreamLoadError::Statement)?
    );
    let rows = session
        .query(&sql)
        .await
        .map_err(|f| sql_error("list staging tables", f))?;
    Ok(rows
        .rows
        .iter()
        .filter_map(|r| r.first().cloned().flatten())
        .filter_map(|name| StagingName::parse(&name).map(|s| (name, s)))
        .collect())
}

/// Drops every staging table of the key of `label` (leftovers of crashed runs).
async fn drop_staging_of<S: SqlSession>(
    session: &mut S,
    database: &str,
    label: &str,
) -> Result<(), StreamLoadError> {
    for (name, staging) in staging_tables(session, database).await? {
        if staging.belongs_to(label) {
            drop_table(session, database, &name).await?;
        }
    }
    Ok(())
}

async fn drop_table<S: SqlSession>(
    session: &mut S,
    database: &str,
    name: &str,
) -> Result<(), StreamLoadError> {
    let sql = format!(
        "DROP TABLE IF EXISTS {}.{}",
        doris_sql::quote_ident("database", database).map_err(StreamLoadError::Statement)?,
        doris_sql::quote_ident("table", name).map_err(StreamLoadError::Statement)?,
    );
    session
        .execute(&sql)
        .await
        .map(|_| ())
        .map_err(|f| sql_error("drop a staging table", f))
}

/// Drops the staging tables of `database` made more than `older_than` ago (runs that
/// crashed and were never rerun). Returns the names dropped.
pub async fn cleanup<S: SqlSession>(
    session: &mut S,
    database: &str,
    older_than: Duration,
) -> Result<Vec<String>, StreamLoadError> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut dropped = Vec::new();
    for (name, staging) in staging_tables(session, database).await? {
        if now.saturating_sub(staging.created) >= older_than.as_secs() {
            drop_table(session, database, &name).await?;
            dropped.push(name);
        }
    }
    Ok(dropped)
}

/// A refused statement of the privilege checks: [`StreamLoadError::Privilege`] when Doris
/// says a privilege is missing, otherwise the step's SQL error.
fn privilege_error(
    needed: &'static str,
    step: &'static str,
    failure: SqlFailure,
) -> StreamLoadError {
    match failure {
        SqlFailure::Refused(message) if is_privilege_denial(&message) => {
            StreamLoadError::Privilege { needed, message }
        }
        other => sql_error(step, other),
    }
}

/// Doris's texts for a missing privilege (`Access denied; you need (at least one of) the
/// (LOAD) privilege(s)`, MySQL's `… command denied to user`).
fn is_privilege_denial(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    lower.contains("privilege(s) for this operation") || lower.contains("command denied")
}

fn sql_error(step: &'static str, failure: SqlFailure) -> StreamLoadError {
    match failure {
        SqlFailure::Refused(message) => StreamLoadError::Sql { step, message },
        SqlFailure::Unanswered(message) => StreamLoadError::Sql {
            step,
            message: format!("no answer: {message}"),
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn staged_loads_are_plain_and_only_stageable_operations_are_staged() {
        let fields = ["id".to_owned(), "score".to_owned()];
        let plain = staging_load_options(&LoadOptions::default(), &fields, "t1").unwrap();
        assert_eq!(plain.update_mode, UpdateMode::Upsert);
        assert!(matches!(&plain.columns, Columns::Raw(h) if h.contains("__dd_load")));

        let partial = LoadOptions {
            update_mode: UpdateMode::FixedColumns {
                legacy_header: false,
            },
            ..LoadOptions::default()
        };
        let staged = staging_load_options(&partial, &fields, "t1").unwrap();
        // The staging table is DUPLICATE: the partial update is applied by the publish.
        assert_eq!(staged.update_mode, UpdateMode::Upsert);
        assert_eq!(staged.new_key_behavior, None);

        let refusing_new_keys = LoadOptions {
            new_key_behavior: Some(NewKeyBehavior::Error),
            ..partial
        };
        assert!(staging_load_options(&refusing_new_keys, &fields, "t1").is_err());
        let flexible = LoadOptions {
            update_mode: UpdateMode::FlexibleColumns,
            ..LoadOptions::default()
        };
        assert!(staging_load_options(&flexible, &fields, "t1").is_err());
        let delete = LoadOptions {
            merge_type: MergeType::Delete,
            ..LoadOptions::default()
        };
        assert!(staging_load_options(&delete, &fields, "t1").is_err());
    }

    #[test]
    fn privilege_denials_are_told_apart_from_other_refusals() {
        let denied = privilege_error(
            "LOAD",
            "probe",
            SqlFailure::Refused(
                "errCode = 2, detailMessage = Access denied; you need (at least one of) the (LOAD) privilege(s) for this operation".into(),
            ),
        );
        assert!(matches!(
            denied,
            StreamLoadError::Privilege { needed: "LOAD", .. }
        ));
        let select = privilege_error(
            "SELECT",
            "probe",
            SqlFailure::Refused("SELECT command denied to user 'u'@'h' for table 'd.s'".into()),
        );
        assert!(matches!(select, StreamLoadError::Privilege { .. }));
        let other = privilege_error("LOAD", "probe", SqlFailure::Refused("Unknown table".into()));
        assert!(matches!(other, StreamLoadError::Sql { .. }));
        let lost = privilege_error("LOAD", "probe", SqlFailure::Unanswered("reset".into()));
        assert!(matches!(lost, StreamLoadError::Sql { .. }));
    }
}
