//! The publish: a run's rows, and with a ledger the key's record, in one Doris transaction
//! under the key's label; every unclear outcome is settled by asking whether the key
//! committed ([`super::record::committed`]), never by guessing.
//!
//! With a ledger the statements are `BEGIN WITH LABEL <label>`, `INSERT INTO target …
//! SELECT … FROM staging`, `INSERT INTO ledger … SELECT …, COUNT(*) … FROM staging`,
//! `COMMIT` (Doris 2.1+ commits INSERTs into several tables of one database together).
//! A statement Doris refuses inside the transaction does not end it, so a refusal is
//! followed by `ROLLBACK`, never by `COMMIT`. `INSERT OVERWRITE` cannot run inside a
//! transaction: an overwrite (and a write without a ledger) is one labelled statement,
//! and with a ledger its record follows on its own.

use crate::staging::LedgerRecord;
use doris_sql::session::{SqlFailure, SqlSession};

use super::record::{committed, record_alone};
use super::{AtomicPolicy, CommitRecord};
use doris_streamload::Label;
use doris_streamload::StreamLoadError;

const PARTIAL_UPDATE_ON: &str = "SET enable_unique_key_partial_update = true";
const PARTIAL_UPDATE_OFF: &str = "SET enable_unique_key_partial_update = false";

/// The statements of one publish.
pub(crate) enum Statements {
    /// Rows and ledger record in one explicit transaction.
    Transaction {
        /// `BEGIN WITH LABEL …`.
        begin: String,
        /// The rows' INSERT (no label of its own).
        rows: String,
        /// The ledger record's INSERT.
        record: String,
    },
    /// One labelled statement (`INSERT … WITH LABEL` or `INSERT OVERWRITE … WITH LABEL`);
    /// with a ledger, the key's record is written after it.
    Single(String),
}

/// A publish to run.
pub(crate) struct Publish<'a> {
    pub(crate) database: &'a str,
    pub(crate) table: &'a str,
    pub(crate) label: &'a Label,
    pub(crate) record: &'a CommitRecord,
    pub(crate) policy: &'a AtomicPolicy,
    pub(crate) partial_update: bool,
    pub(crate) statements: Statements,
    /// The rows the staged loads reported (what the publish copies).
    pub(crate) staged_rows: u64,
    /// The time the ledger record carries.
    pub(crate) committed_at: String,
    /// An overwrite's check that the table holds its rows, run when the outcome was told
    /// by the label rather than by the statement's own answer.
    pub(crate) overwrite_check: Option<OverwriteCheck>,
}

/// What an overwrite's check compares (`crate::staging::overwrite_check_query`).
pub(crate) struct OverwriteCheck {
    /// The published columns.
    pub(crate) columns: Vec<String>,
    /// The staging table.
    pub(crate) staging: crate::staging::StagingName,
    /// The published attempts' tags.
    pub(crate) tags: Vec<String>,
}

/// How one attempt ended.
enum Attempt {
    /// Committed by this attempt, with the rows the INSERT reported.
    Done(u64),
    /// Doris answered with an error: nothing of this attempt took effect.
    Refused(String),
    /// An answer was lost: the attempt may have committed.
    Unanswered(String),
}

impl From<SqlFailure> for Attempt {
    fn from(f: SqlFailure) -> Self {
        match f {
            SqlFailure::Refused(m) => Attempt::Refused(m),
            SqlFailure::Unanswered(m) => Attempt::Unanswered(m),
        }
    }
}

impl Publish<'_> {
    /// Runs the publish; returns the rows the INSERT reported (`None` when an answer was
    /// lost and the key's state told the outcome) and whether this run committed.
    pub(crate) async fn run<S: SqlSession>(
        &self,
        session: &mut S,
    ) -> Result<(Option<u64>, bool), StreamLoadError> {
        let mut last = String::new();
        for _ in 0..self.policy.publish_attempts.max(1) {
            let attempt = self.attempt(session).await;
            match attempt {
                Attempt::Done(rows) => {
                    self.record_after_single(session, Some(rows)).await?;
                    return Ok((Some(rows), true));
                }
                Attempt::Refused(message) => {
                    // Refused as "already used": an earlier or concurrent run committed.
                    if committed(session, self.database, self.label, self.record, self.policy)
                        .await?
                        .is_some()
                    {
                        let by_this_run = !message.contains("has already been used");
                        if by_this_run {
                            self.confirm_overwrite(session).await?;
                            self.record_after_single(session, Some(self.staged_rows))
                                .await?;
                        }
                        return Ok((None, by_this_run));
                    }
                    if message.contains("has already been used") {
                        // Another run held the label and did not commit: try again.
                        last = message;
                        continue;
                    }
                    return Err(StreamLoadError::Rejected {
                        label: self.label.to_string(),
                        message,
                        error_url: None,
                        error_log_head: Vec::new(),
                    });
                }
                Attempt::Unanswered(message) => {
                    last = message;
                    reconnect(session, self.policy).await?;
                    if committed(session, self.database, self.label, self.record, self.policy)
                        .await?
                        .is_some()
                    {
                        self.confirm_overwrite(session).await?;
                        self.record_after_single(session, Some(self.staged_rows))
                            .await?;
                        return Ok((None, true));
                    }
                    // No answer, and the key did not commit: try again.
                }
            }
        }
        Err(StreamLoadError::Ambiguous {
            label: self.label.to_string(),
            attempts: self.policy.publish_attempts,
            detail: format!("the publish got no answer: {last}"),
        })
    }

    /// An overwrite whose key's label an earlier run committed without its record: when
    /// the table holds exactly this run's rows (the earlier swap happened), the record is
    /// written (not by this run); otherwise [`StreamLoadError::OverwriteNotApplied`]: the
    /// swap never came, or the table changed since, and overwriting again would replace
    /// rows written since.
    pub(crate) async fn settle_unrecorded<S: SqlSession>(
        &self,
        session: &mut S,
    ) -> Result<(Option<u64>, bool), StreamLoadError> {
        match self.confirm_overwrite(session).await {
            Ok(()) => {
                self.record_after_single(session, Some(self.staged_rows))
                    .await?;
                Ok((None, false))
            }
            Err(StreamLoadError::OverwriteNotApplied { label, detail }) => {
                Err(StreamLoadError::OverwriteNotApplied {
                    label,
                    detail: format!(
                        "an earlier run committed the key's label without its record, and the \
                         table does not hold this run's rows ({detail}): its swap never came, \
                         or the table changed since"
                    ),
                })
            }
            Err(e) => Err(e),
        }
    }

    /// One attempt, the partial-update session variable set around it (on the connection
    /// that runs the statements, again after a reconnect) and cleared on every path.
    async fn attempt<S: SqlSession>(&self, session: &mut S) -> Attempt {
        // Doris aborts a transaction that runs longer than `insert_timeout`: the same limit
        // as the session's wait, so neither side gives up while the other still waits.
        let timeout = format!(
            "SET insert_timeout = {}",
            self.policy.publish_timeout.as_secs().max(1)
        );
        if let Err(f) = session.execute(&timeout).await {
            return f.into();
        }
        if self.partial_update
            && let Err(f) = session.execute(PARTIAL_UPDATE_ON).await
        {
            return f.into();
        }
        let outcome = match &self.statements {
            Statements::Single(statement) => match session.execute(statement).await {
                Ok(rows) => Attempt::Done(rows),
                Err(f) => f.into(),
            },
            Statements::Transaction {
                begin,
                rows,
                record,
            } => self.transaction(session, begin, rows, record).await,
        };
        if self.partial_update && !matches!(outcome, Attempt::Unanswered(_)) {
            // A lost answer leaves the connection unusable; its replacement starts with
            // the variable off.
            let _ = session.execute(PARTIAL_UPDATE_OFF).await;
        }
        outcome
    }

    async fn transaction<S: SqlSession>(
        &self,
        session: &mut S,
        begin: &str,
        rows: &str,
        record: &str,
    ) -> Attempt {
        if let Err(f) = session.execute(begin).await {
            return f.into();
        }
        let published = match session.execute(rows).await {
            Ok(n) => n,
            Err(f) => return rollback(session, f).await,
        };
        if let Err(f) = session.execute(record).await {
            return rollback(session, f).await;
        }
        if let Err(f) = session.execute("COMMIT").await {
            return f.into();
        }
        // Doris answers COMMIT with OK also when no INSERT began the transaction: the
        // label's state (or the ledger) says whether it really committed.
        match committed(session, self.database, self.label, self.record, self.policy).await {
            Ok(Some(_)) => Attempt::Done(published),
            Ok(None) => Attempt::Refused(
                "COMMIT was answered, yet the key's transaction did not commit".into(),
            ),
            Err(e) => Attempt::Unanswered(e.to_string()),
        }
    }

    /// An overwrite whose outcome the label told: the table must hold exactly the published
    /// rows (their number, none missing), else the swap of partitions did not happen.
    async fn confirm_overwrite<S: SqlSession>(
        &self,
        session: &mut S,
    ) -> Result<(), StreamLoadError> {
        let Some(check) = &self.overwrite_check else {
            return Ok(());
        };
        // Only the columns Doris compares with `<=>` (not MAP, STRUCT, JSON, …), by the
        // table's own types.
        let types = table_types(session, self.database, self.table).await?;
        let compared: Vec<String> = check
            .columns
            .iter()
            .filter(|c| {
                types
                    .iter()
                    .find(|(name, _)| name == *c)
                    .is_none_or(|(_, ty)| crate::staging::null_safe_comparable(ty))
            })
            .cloned()
            .collect();
        let query = crate::staging::overwrite_check_query(
            self.database,
            self.table,
            &check.staging,
            &compared,
            &check.tags,
        )
        .map_err(StreamLoadError::Statement)?;
        let rows = session
            .query(&query)
            .await
            .map_err(|f| super::housekeeping::sql_error("check the overwritten table", f))?;
        let cell = |name: &str| -> Option<u64> {
            rows.column(name)?
                .next()
                .flatten()
                .and_then(|n| n.parse().ok())
        };
        match (cell("target_rows"), cell("missing_rows")) {
            (Some(held), Some(0)) if held == self.staged_rows => Ok(()),
            (Some(held), Some(missing)) => Err(StreamLoadError::OverwriteNotApplied {
                label: self.label.to_string(),
                detail: format!(
                    "{held} rows where {} were published, {missing} of them missing",
                    self.staged_rows
                ),
            }),
            _ => Err(StreamLoadError::Malformed(
                "the overwrite check returned no counts".into(),
            )),
        }
    }

    /// After a single labelled statement committed, the key's ledger record (an
    /// overwrite, which cannot share a transaction with it); a record that cannot be
    /// written makes the outcome ambiguous (rerun the key to record it).
    async fn record_after_single<S: SqlSession>(
        &self,
        session: &mut S,
        rows: Option<u64>,
    ) -> Result<(), StreamLoadError> {
        let (Statements::Single(_), CommitRecord::Ledger(ledger)) = (&self.statements, self.record)
        else {
            return Ok(());
        };
        let record = LedgerRecord {
            label: self.label.as_str(),
            target_table: self.table,
            committed_at: &self.committed_at,
        };
        // The rows are committed but the key is not recorded: once Doris forgets the label
        // a rerun would write again, so this is no success. A rerun with the same key finds
        // the label committed and writes the record (`AtomicWrite::begin`).
        record_alone(session, self.database, ledger, &record, rows, self.policy)
            .await
            .map_err(|e| StreamLoadError::Ambiguous {
                label: self.label.to_string(),
                attempts: self.policy.publish_attempts,
                detail: format!(
                    "the rows committed, but the key's ledger record was not written ({e}): \
                     rerun with the same key to record it"
                ),
            })
    }
}

/// The table's columns and their Doris types, from `SHOW CREATE TABLE`.
async fn table_types<S: SqlSession>(
    session: &mut S,
    database: &str,
    table: &str,
) -> Result<Vec<(String, doris_sql::DorisType)>, StreamLoadError> {
    let sql = format!(
        "SHOW CREATE TABLE {}",
        doris_sql::TableRef::new(database, table)
            .map_err(StreamLoadError::Statement)?
            .to_sql()
    );
    let rows = session
        .query(&sql)
        .await
        .map_err(|f| super::housekeeping::sql_error("read the overwritten table's types", f))?;
    let text = rows
        .rows
        .first()
        .and_then(|r| r.get(1).cloned().flatten())
        .ok_or_else(|| {
            StreamLoadError::Malformed("SHOW CREATE TABLE returned no statement".into())
        })?;
    let schema = doris_sql::parse_show_create(&text).map_err(StreamLoadError::Statement)?;
    Ok(schema.columns.into_iter().map(|c| (c.name, c.ty)).collect())
}

/// Ends a transaction after a statement inside it failed: `ROLLBACK` when Doris refused
/// the statement (a refused statement does not end the transaction); a lost answer needs
/// none (the connection is replaced, and Doris rolls back a session's transaction when
/// the session ends).
async fn rollback<S: SqlSession>(session: &mut S, failure: SqlFailure) -> Attempt {
    if let SqlFailure::Refused(_) = &failure {
        let _ = session.execute("ROLLBACK").await;
    }
    failure.into()
}

/// A new connection, tried a few times (the FE may be restarting).
pub(crate) async fn reconnect<S: SqlSession>(
    session: &mut S,
    policy: &AtomicPolicy,
) -> Result<(), StreamLoadError> {
    let mut last = String::new();
    for attempt in 0..5u32 {
        match session.reconnect().await {
            Ok(()) => return Ok(()),
            Err(f) => last = f.message().to_owned(),
        }
        tokio::time::sleep(policy.poll_interval * (attempt + 1)).await;
    }
    Err(StreamLoadError::Sql {
        step: "reconnect to the FE",
        message: last,
    })
}

#[cfg(test)]
mod tests;
