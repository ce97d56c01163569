//! Whether a key has committed: its label's state in Doris, then the commit ledger.
//!
//! Doris remembers a finished label for `label_keep_max_second` (3 days by default) and
//! only the newest `label_num_threshold` (2,000 by default) per database; after that a
//! committed key looks free. The ledger row, written in the same transaction as the rows,
//! outlives the label, so the answer is "committed" when either says so.

use std::time::Instant;

use crate::staging::{LedgerRecord, ledger_insert_values, ledger_lookup_query};
use doris_sql::session::{SqlFailure, SqlSession};

use super::housekeeping::{is_privilege_denial, sql_error};
use super::{AtomicPolicy, CommitRecord};
use doris_streamload::Label;
use doris_streamload::StreamLoadError;

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

/// How a committed key was recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommittedBy {
    /// Doris still remembers the key's label as committed.
    Label,
    /// Doris no longer knows the label, but the commit ledger holds the key's record.
    Ledger {
        /// The rows the record says were published (`None` for a record that did not
        /// count them).
        rows: Option<u64>,
    },
}

/// The privilege a denied label lookup names before the release is known (see
/// [`super::label_lookup_privilege`]).
pub(crate) const LABEL_LOOKUP: &str = "the privilege SHOW TRANSACTION needs (global ADMIN on Doris 3.0, LOAD on the database from 3.1)";

/// The label's state from `SHOW TRANSACTION FROM db WHERE LABEL = '…'`.
///
/// Doris answers a label it does not know (never used, or forgotten) with an error,
/// `transaction with label <l> does not exist` (`ShowTransactionCommand`), which is
/// [`LabelState::Free`]; a missing privilege is [`StreamLoadError::Privilege`].
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
    let rows = match session.query(&sql).await {
        Ok(rows) => rows,
        Err(SqlFailure::Refused(message)) if is_unknown_label(&message) => {
            return Ok(LabelState::Free);
        }
        Err(SqlFailure::Refused(message)) if is_privilege_denial(&message) => {
            return Err(StreamLoadError::Privilege {
                needed: LABEL_LOOKUP,
                message,
            });
        }
        Err(f) => return Err(sql_error("look the label up", f)),
    };
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

/// Doris's answer to `SHOW TRANSACTION … WHERE LABEL` for a label it does not know.
fn is_unknown_label(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    lower.contains("transaction with label") && lower.contains("does not exist")
}

/// The label's state once it is no longer running; still running after the policy's
/// timeout is an ambiguous outcome (the transaction may yet commit).
pub(crate) async fn settled_state<S: SqlSession>(
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

/// Whether the key of `label` has committed: its label once settled, then the ledger.
pub(crate) async fn committed<S: SqlSession>(
    session: &mut S,
    database: &str,
    label: &Label,
    record: &CommitRecord,
    policy: &AtomicPolicy,
) -> Result<Option<CommittedBy>, StreamLoadError> {
    if settled_state(session, database, label, policy).await? == LabelState::Committed {
        return Ok(Some(CommittedBy::Label));
    }
    let CommitRecord::Ledger(ledger) = record else {
        return Ok(None);
    };
    Ok(ledger_rows(session, database, ledger, label)
        .await?
        .map(|rows| CommittedBy::Ledger { rows }))
}

/// The key's ledger record: `None` without one, else the rows it counted (the largest
/// count when a key was recorded twice).
pub(crate) async fn ledger_rows<S: SqlSession>(
    session: &mut S,
    database: &str,
    ledger: &str,
    label: &Label,
) -> Result<Option<Option<u64>>, StreamLoadError> {
    let sql = ledger_lookup_query(database, ledger, label.as_str())
        .map_err(StreamLoadError::Statement)?;
    let rows = session
        .query(&sql)
        .await
        .map_err(|f| sql_error("look the key up in the commit ledger", f))?;
    if rows.rows.is_empty() {
        return Ok(None);
    }
    Ok(Some(
        rows.rows
            .iter()
            .filter_map(|r| r.first().cloned().flatten())
            .filter_map(|n| n.parse::<u64>().ok())
            .max(),
    ))
}

/// Writes the key's ledger record on its own (after an overwrite, or for a key whose label
/// is committed and which the ledger lacks), retried while the FE does not answer. A
/// record written twice is harmless (lookups take any).
pub(crate) async fn record_alone<S: SqlSession>(
    session: &mut S,
    database: &str,
    ledger: &str,
    record: &LedgerRecord<'_>,
    rows: Option<u64>,
    policy: &AtomicPolicy,
) -> Result<(), StreamLoadError> {
    let sql =
        ledger_insert_values(database, ledger, record, rows).map_err(StreamLoadError::Statement)?;
    let mut last = None;
    for _ in 0..policy.publish_attempts.max(1) {
        match session.execute(&sql).await {
            Ok(_) => return Ok(()),
            Err(f @ SqlFailure::Refused(_)) => {
                return Err(sql_error("record the key in the commit ledger", f));
            }
            Err(f) => {
                last = Some(f);
                super::publish::reconnect(session, policy).await?;
            }
        }
    }
    Err(sql_error(
        "record the key in the commit ledger",
        last.unwrap_or(SqlFailure::Unanswered("no attempt".into())),
    ))
}

/// Deletes the commit ledger's records written more than `older_than` ago (by the
/// writers' clocks); returns how many. A key whose record is gone and whose label Doris
/// forgot is no longer recognised (its rerun writes again): keep records at least as long
/// as anything may rerun a key. A database without a ledger has nothing to delete.
pub async fn cleanup_ledger<S: SqlSession>(
    session: &mut S,
    database: &str,
    ledger: &str,
    older_than: std::time::Duration,
) -> Result<u64, StreamLoadError> {
    let before = utc_at(
        std::time::SystemTime::now()
            .checked_sub(older_than)
            .unwrap_or(std::time::UNIX_EPOCH),
    );
    let sql = crate::staging::ledger_cleanup_statement(database, ledger, &before)
        .map_err(StreamLoadError::Statement)?;
    match session.execute(&sql).await {
        Ok(deleted) => Ok(deleted),
        Err(SqlFailure::Refused(message)) if super::is_missing_table(&message) => Ok(0),
        Err(f) => Err(sql_error("delete old commit records", f)),
    }
}

/// Now, UTC, as the ledger writes it (`YYYY-MM-DD HH:MM:SS`).
pub(crate) fn now_utc() -> String {
    utc_at(std::time::SystemTime::now())
}

/// A time, UTC, as the ledger writes it.
fn utc_at(at: std::time::SystemTime) -> String {
    use chrono::{Datelike, Timelike};
    let seconds = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let at = chrono::DateTime::from_timestamp(i64::try_from(seconds).unwrap_or(0), 0)
        .unwrap_or_default();
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        at.year(),
        at.month(),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    )
}
