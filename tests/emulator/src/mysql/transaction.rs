//! Doris's explicit transactions on the MySQL face: `BEGIN [WITH LABEL l]`, INSERTs whose
//! rows wait in the session, then `COMMIT` (every table at once, under the one label) or
//! `ROLLBACK`.
//!
//! As Doris 2.1+ does (`TransactionEntry`, regression suite `insert_p0/transaction`):
//! - `BEGIN` only names the label (`txn_insert_<hex>` when none is given); the transaction,
//!   and with it the label's check, begins with the first INSERT. A second `BEGIN` is
//!   ignored.
//! - Inside a transaction only INSERT, UPDATE, DELETE, COMMIT and ROLLBACK are accepted;
//!   anything else (a query, `SHOW`, `SET`, DDL, `INSERT OVERWRITE`) is refused and the
//!   transaction goes on.
//! - `INSERT … SELECT` may write several tables of one database (and one table several
//!   times); constant rows (`VALUES`, a SELECT without FROM) go through Doris's batch path,
//!   which writes one table only; the two kinds do not mix. An INSERT's own `WITH LABEL`
//!   must repeat the transaction's.
//! - A statement that fails inside the transaction writes nothing and does not end it.
//! - A statement sees only data committed before it started, never the transaction's own
//!   rows.
//! - `COMMIT` makes every INSERT's rows visible together and the label VISIBLE; a
//!   transaction that never began (no INSERT got as far as beginning it) commits nothing
//!   and takes no label. `ROLLBACK`, and a session that ends inside a transaction, abort it
//!   and free the label.

use std::sync::Arc;

use super::Session;
use super::insert::{analysis, label_used, parse, source_rows, stage_rows, txn_info};
use super::select::SelectError;
use super::wire::PacketIo;
use crate::Shared;
use crate::catalog::Table;
use crate::faults::{Fault, Point};
use crate::txn::Staged;

/// Doris's refusal of any other statement inside a transaction.
pub const ONLY_DML: &str =
    "This is in a transaction, only insert, update, delete, commit, rollback is acceptable.";

/// The emulator's refusal of `INSERT … SELECT` inside a transaction on a release before
/// 3.0 (Doris 2.1's transaction load takes `INSERT … VALUES` only; its exact text is not
/// recorded here, see docs/wire-inventory.md).
pub const ONLY_VALUES_BEFORE_3_0: &str =
    "This is in a transaction, only insert into values, commit, rollback is acceptable.";

/// Which path an explicit transaction's INSERTs took (they cannot mix).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `INSERT … SELECT … FROM`: several tables of one database.
    Select,
    /// Constant rows: one table.
    Constant,
}

/// A session's explicit transaction.
#[derive(Debug, Clone)]
pub struct ExplicitTxn {
    label: String,
    kind: Option<Kind>,
    /// Database and table of the first INSERT.
    first: Option<(String, String)>,
    /// The registry's transaction, once the first INSERT began it.
    txn: Option<i64>,
    rows: u64,
    writes: Vec<(Arc<Table>, Staged)>,
}

impl ExplicitTxn {
    fn new(label: Option<String>) -> Self {
        Self {
            label: label.unwrap_or_else(|| format!("txn_insert_{}", uuid::Uuid::new_v4().simple())),
            kind: None,
            first: None,
            txn: None,
            rows: 0,
            writes: Vec::new(),
        }
    }
}

/// `BEGIN [WITH LABEL l]` (or `START TRANSACTION`) outside a transaction.
pub async fn begin(session: &mut Session, sql: &str, io: &mut PacketIo) -> std::io::Result<()> {
    let words: Vec<String> = sql
        .split_whitespace()
        .map(|w| w.to_ascii_uppercase())
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let label = match words.as_slice() {
        ["BEGIN"] | ["BEGIN", "WORK"] | ["START", "TRANSACTION"] => None,
        ["BEGIN", "WITH", "LABEL", _] => {
            let token = sql.split_whitespace().nth(3).unwrap_or_default();
            match crate::names::sql_label(token) {
                Ok(label) => Some(label.to_owned()),
                Err(message) => {
                    let message = format!("errCode = 2, detailMessage = {message}");
                    return io.error(1105, b"HY000", &message).await;
                }
            }
        }
        _ => {
            return io
                .error(
                    1105,
                    b"HY000",
                    "errCode = 2, detailMessage = Syntax error: BEGIN [WITH LABEL <label>]",
                )
                .await;
        }
    };
    let txn = ExplicitTxn::new(label);
    let info = txn_info(&txn.label, "PREPARE", None);
    session.txn = Some(txn);
    io.ok_with_info(0, &info).await
}

/// A statement inside the session's transaction.
pub async fn run(
    shared: &Arc<Shared>,
    session: &mut Session,
    sql: &str,
    io: &mut PacketIo,
) -> std::io::Result<()> {
    let upper = sql.to_ascii_uppercase();
    let words: Vec<&str> = upper.split_whitespace().collect();
    match words.as_slice() {
        // Doris logs "A transaction has already begin" and answers a plain OK.
        ["BEGIN", ..] | ["START", "TRANSACTION", ..] => io.ok(0).await,
        ["COMMIT", ..] => commit(shared, session, io).await,
        ["ROLLBACK", ..] => {
            let Some(txn) = session.txn.take() else {
                return io.ok(0).await;
            };
            match txn.txn {
                Some(id) => {
                    shared.txns.abort(id, "user rollback");
                    io.ok_with_info(0, &txn_info(&txn.label, "ABORTED", Some(id)))
                        .await
                }
                None => io.ok(0).await,
            }
        }
        ["INSERT", "OVERWRITE", ..] => refuse(io, ONLY_DML).await,
        ["INSERT", ..] => match insert(shared, session, sql).await {
            Ok((rows, info)) => io.ok_with_info(rows, &info).await,
            Err(e) => io.error(e.code, e.state, &e.message).await,
        },
        ["UPDATE" | "DELETE", ..] => {
            refuse(
                io,
                "the Doris emulator does not run UPDATE or DELETE statements",
            )
            .await
        }
        _ => refuse(io, ONLY_DML).await,
    }
}

async fn refuse(io: &mut PacketIo, message: &str) -> std::io::Result<()> {
    io.error(
        1105,
        b"HY000",
        &format!("errCode = 2, detailMessage = {message}"),
    )
    .await
}

/// An INSERT inside the transaction: checked, begun (the first one), computed and kept
/// until COMMIT. Returns the rows and the OK packet's info.
async fn insert(
    shared: &Shared,
    session: &mut Session,
    sql: &str,
) -> Result<(u64, String), SelectError> {
    let target = parse(shared, session, sql)?;
    let Some(txn) = session.txn.as_mut() else {
        return Err(analysis("no transaction"));
    };
    let kind = if target.constant_rows {
        Kind::Constant
    } else {
        Kind::Select
    };
    // Doris 2.1 runs only constant rows (`INSERT … VALUES`) inside an explicit
    // transaction; `INSERT … SELECT` there came with 3.0.
    if kind == Kind::Select && !shared.config.profile.insert_select_in_transaction() {
        return Err(analysis(ONLY_VALUES_BEFORE_3_0));
    }
    let begin_failed = |message: String| analysis(format!("begin transaction failed. {message}"));
    if let Some(label) = &target.label
        && *label != txn.label
    {
        return Err(begin_failed(format!(
            "Transaction insert expect label {}, but got {label}",
            txn.label
        )));
    }
    match (txn.kind, kind) {
        (Some(Kind::Constant), Kind::Select) => {
            return Err(begin_failed(MIXED.into()));
        }
        (Some(Kind::Select), Kind::Constant) => return Err(analysis(MIXED)),
        _ => {}
    }
    if let Some((db, table)) = &txn.first {
        if kind == Kind::Constant && (*db != target.db || *table != target.table_name) {
            return Err(analysis(
                "Only one table can be inserted in one transaction.",
            ));
        }
        if *db != target.db {
            let id = shared
                .catalog
                .database_id(db)
                .map_err(|e| analysis(e.to_string()))?;
            return Err(begin_failed(format!(
                "Transaction insert must be in the same database, expect db_id={id}"
            )));
        }
    }
    if txn.txn.is_none() {
        let id = shared
            .txns
            .begin(&target.db, &target.table_name, &txn.label)
            .map_err(|e| {
                begin_failed(format!(
                    "errCode = 2, detailMessage = {}",
                    label_used(&txn.label, e.existing_txn_id)
                ))
            })?;
        txn.txn = Some(id);
        txn.kind = Some(kind);
        txn.first = Some((target.db.clone(), target.table_name.clone()));
    }
    let label = txn.label.clone();
    let id = txn.txn;
    // The statement reads what was committed before it started: the rows are computed from
    // the visible data, the transaction's own INSERTs not among them.
    let batches = source_rows(shared, session, &target).await?;
    let (staged, rows) =
        stage_rows(shared, session, &target, &batches, &label).map_err(analysis)?;
    let Some(txn) = session.txn.as_mut() else {
        return Err(analysis("no transaction"));
    };
    txn.rows += rows;
    txn.writes.push((target.table.clone(), staged));
    if let Some(f @ Fault::StallTxnInsert { ms }) = shared.faults.take(Point::MysqlTxnInsert) {
        shared.faults.record(&f, Some(&label), id, false);
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
    Ok((rows, txn_info(&label, "PREPARE", id)))
}

const MIXED: &str =
    "Transaction insert can not insert into values and insert into select at the same time";

/// COMMIT: every INSERT's rows become visible together and the label VISIBLE.
async fn commit(
    shared: &Arc<Shared>,
    session: &mut Session,
    io: &mut PacketIo,
) -> std::io::Result<()> {
    let Some(txn) = session.txn.take() else {
        return io.ok(0).await;
    };
    let Some(id) = txn.txn else {
        // No INSERT began it: nothing to commit, no label taken.
        return io.ok(0).await;
    };
    let fault = shared.faults.take(Point::MysqlCommit);
    if let Some(f @ Fault::StallAfterTxnCommit { ms }) = &fault {
        let committed = finish(shared, id, txn.writes);
        shared
            .faults
            .record(f, Some(&txn.label), Some(id), committed.is_ok());
        tokio::time::sleep(std::time::Duration::from_millis(*ms)).await;
        return match committed {
            Ok(()) => {
                io.ok_with_info(0, &txn_info(&txn.label, "VISIBLE", Some(id)))
                    .await
            }
            Err(message) => refuse(io, &message).await,
        };
    }
    match fault {
        Some(f @ Fault::DropBeforeTxnCommit) => {
            shared.txns.abort(id, "session closed");
            shared.faults.record(&f, Some(&txn.label), Some(id), false);
            return Err(dropped("the COMMIT was lost before it committed"));
        }
        Some(f @ Fault::HoldTxnCommit { ms }) => {
            shared.faults.record(&f, Some(&txn.label), Some(id), true);
            let shared = shared.clone();
            tokio::spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                let _ = finish(&shared, id, txn.writes);
            });
            return Err(dropped("the COMMIT's answer was lost while it still ran"));
        }
        Some(f @ Fault::SlowTxnCommit { ms }) => {
            shared.faults.record(&f, Some(&txn.label), Some(id), true);
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        }
        Some(f @ Fault::DropAfterTxnCommit) => {
            let committed = finish(shared, id, txn.writes).is_ok();
            shared
                .faults
                .record(&f, Some(&txn.label), Some(id), committed);
            return Err(dropped("the connection dropped after the COMMIT"));
        }
        _ => {}
    }
    match finish(shared, id, txn.writes) {
        Ok(()) => {
            io.ok_with_info(0, &txn_info(&txn.label, "VISIBLE", Some(id)))
                .await
        }
        Err(message) => refuse(io, &message).await,
    }
}

/// Applies a transaction's writes and makes it visible, or aborts it.
fn finish(shared: &Shared, id: i64, writes: Vec<(Arc<Table>, Staged)>) -> Result<(), String> {
    match Table::apply_together(writes) {
        Ok(()) => {
            shared.txns.make_visible(id);
            crate::persist::save(shared);
            Ok(())
        }
        Err(e) => {
            shared.txns.abort(id, &e.to_string());
            Err(e.to_string())
        }
    }
}

fn dropped(why: &'static str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::ConnectionAborted, why)
}

/// A session that ends inside a transaction rolls it back (Doris: transactions are
/// session-level).
pub fn end_of_session(shared: &Shared, session: &mut Session) {
    if let Some(id) = session.txn.take().and_then(|t| t.txn) {
        shared.txns.abort(id, "session closed");
    }
}
