//! `INSERT INTO … VALUES` and `INSERT INTO … SELECT`: the source rows are computed by
//! DataFusion (through the SELECT path), then conformed, routed and committed exactly as a
//! Stream Load is, in one transaction under an `insert_…` label. As in Doris with
//! `enable_insert_strict` (the default), any filtered row fails the whole statement.

use axum::http::HeaderMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use arrow::record_batch::RecordBatch;

use sqlparser::ast::{
    Expr, Ident, ObjectName, SelectItem, SetExpr, Statement, TableObject, UnaryOperator, Value,
    visit_expressions_mut,
};
use sqlparser::dialect::MySqlDialect;

use super::Session;
use super::select::{SelectError, plan, resolve_table};
use super::wire::PacketIo;
use crate::Shared;
use crate::auth::{Privilege, missing_privilege};
use crate::catalog::Table;
use crate::faults::{Fault, Point};
use crate::load::{Decoded, conform_batch, parse_options};
use crate::txn::Staged;

pub(crate) fn analysis(message: impl std::fmt::Display) -> SelectError {
    SelectError {
        code: 1105,
        state: b"HY000",
        message: format!("errCode = 2, detailMessage = {message}"),
    }
}

/// Runs one INSERT outside an explicit transaction and answers OK (affected rows, and the
/// label, status and transaction in the info text, as Doris does) or an error.
pub async fn run(
    shared: &Shared,
    session: &Session,
    sql: &str,
    io: &mut PacketIo,
) -> std::io::Result<()> {
    match execute(shared, session, sql).await {
        // An INSERT that began no transaction has no commit for the fault to follow.
        Ok(Inserted::Nothing) => io.ok(0).await,
        Ok(Inserted::Committed { rows, label, txn }) => {
            if let Some(f @ Fault::DropAfterInsertCommit) = shared.faults.take(Point::MysqlInsert) {
                shared.faults.record(&f, Some(&label), Some(txn), true);
                return Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "fault: connection dropped after the INSERT committed",
                ));
            }
            io.ok_with_info(rows, &txn_info(&label, "VISIBLE", Some(txn)))
                .await
        }
        Ok(Inserted::Dropped) => Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            "fault: the FE failed between the overwrite's commit and its swap",
        )),
        Err(e) => io.error(e.code, e.state, &e.message).await,
    }
}

/// Doris's info text of a transactional statement's OK packet:
/// `{'label':'l', 'status':'VISIBLE', 'txnId':'12'}` (`txnId` empty before one began).
pub fn txn_info(label: &str, status: &str, txn: Option<i64>) -> String {
    let id = txn.map(|t| t.to_string()).unwrap_or_default();
    format!("{{'label':'{label}', 'status':'{status}', 'txnId':'{id}'}}")
}

/// What an INSERT did.
enum Inserted {
    /// It planned to an empty set: no transaction, no label.
    Nothing,
    /// The connection is to close without an answer (a fault).
    Dropped,
    /// A transaction committed this many rows.
    Committed {
        /// Rows committed.
        rows: u64,
        /// The transaction's label.
        label: String,
        /// The transaction's id.
        txn: i64,
    },
}

/// An INSERT statement, parsed and checked: where it writes and what it reads.
pub(crate) struct InsertTarget {
    /// Database of the target.
    pub db: String,
    /// Target table's name.
    pub table_name: String,
    /// The target table.
    pub table: Arc<Table>,
    /// `INSERT OVERWRITE`.
    pub overwrite: bool,
    /// `WITH LABEL …`, if given.
    pub label: Option<String>,
    /// The source is constant rows (`VALUES`, or a SELECT without FROM): in an explicit
    /// transaction Doris sends such rows through its batch path, not the INSERT … SELECT one.
    pub constant_rows: bool,
    named_partitions: Option<Vec<usize>>,
    targets: Vec<String>,
    source: String,
}

/// Parses an INSERT and checks its target, columns and the LOAD privilege.
pub(crate) fn parse(
    shared: &Shared,
    session: &Session,
    sql: &str,
) -> Result<InsertTarget, SelectError> {
    let (sql, label) = take_label(sql)?;
    let statements =
        sqlparser::parser::Parser::parse_sql(&MySqlDialect {}, &sql).map_err(analysis)?;
    let [Statement::Insert(insert)] = statements.as_slice() else {
        return Err(analysis("expected one INSERT statement"));
    };
    let TableObject::TableName(name) = &insert.table else {
        return Err(analysis("INSERT into a table function is not supported"));
    };
    let (db, table_name, table) = writable_table(shared, session, name)?;
    // `INSERT [OVERWRITE] … t PARTITION (p, …)`: rows must fall in those partitions (the
    // others are filtered), and OVERWRITE replaces only them.
    let named_partitions = match &insert.partitioned {
        None => None,
        Some(exprs) => {
            let mut indexes = Vec::with_capacity(exprs.len());
            for expr in exprs {
                let Expr::Identifier(ident) = expr else {
                    return Err(analysis("PARTITION (…) must name partitions"));
                };
                let at = table.partition_index(&ident.value).ok_or_else(|| {
                    analysis(format!(
                        "Unknown partition '{}' in table '{table_name}'",
                        ident.value
                    ))
                })?;
                indexes.push(at);
            }
            Some(indexes)
        }
    };
    let targets: Vec<String> = if insert.columns.is_empty() {
        table
            .schema
            .columns
            .iter()
            .map(|c| c.name.clone())
            .collect()
    } else {
        insert
            .columns
            .iter()
            .filter_map(|c| {
                c.0.last()
                    .and_then(|p| p.as_ident())
                    .map(|i| i.value.clone())
            })
            .collect()
    };
    for t in &targets {
        if table.schema.column(t).is_none() {
            return Err(analysis(format!("Unknown column '{t}' in '{table_name}'")));
        }
    }
    let source = insert
        .source
        .as_ref()
        .ok_or_else(|| analysis("INSERT needs VALUES or a SELECT"))?;
    let mut source = source.clone();
    let values = matches!(*source.body, SetExpr::Values(_));
    let constant_rows =
        values || matches!(&*source.body, SetExpr::Select(select) if select.from.is_empty());
    let _ = visit_expressions_mut(&mut source, |expr| {
        if values {
            big_integer_as_text(expr);
        }
        keep_backslashes(expr);
        ControlFlow::<()>::Continue(())
    });
    // An INSERT's source columns go by position: `SELECT id, id` is two columns to Doris,
    // while the SELECT engine wants unique names, so unnamed items get positional ones.
    if let SetExpr::Select(select) = source.body.as_mut() {
        for (at, item) in select.projection.iter_mut().enumerate() {
            if let SelectItem::UnnamedExpr(expr) = item {
                *item = SelectItem::ExprWithAlias {
                    expr: expr.clone(),
                    alias: Ident::new(format!("__insert_column_{at}")),
                };
            }
        }
    }
    Ok(InsertTarget {
        db,
        table_name,
        table,
        overwrite: insert.overwrite,
        label,
        constant_rows,
        named_partitions,
        targets,
        source: source.to_string(),
    })
}

/// The table a statement writes (`INSERT`, `DELETE`): resolved in the session's database,
/// and the user must hold LOAD on it, as Doris requires.
pub(crate) fn writable_table(
    shared: &Shared,
    session: &Session,
    name: &ObjectName,
) -> Result<(String, String, Arc<Table>), SelectError> {
    let parts: Vec<String> = name
        .0
        .iter()
        .filter_map(|p| p.as_ident().map(|i| i.value.clone()))
        .collect();
    let (db, table_name, table) = resolve_table(shared, session, &parts)?;
    if !shared
        .users
        .has(&session.user, &db, &table_name, Privilege::Load)
    {
        return Err(analysis(missing_privilege(Privilege::Load)));
    }
    Ok((db, table_name, table))
}

/// Computes the INSERT's source rows (through the SELECT engine).
pub(crate) async fn source_rows(
    shared: &Shared,
    session: &Session,
    target: &InsertTarget,
) -> Result<Vec<RecordBatch>, SelectError> {
    let planned = plan(shared, session, &target.source).await?;
    let batches = planned.collect().await?;
    if let Some(first) = batches.first()
        && first.num_columns() != target.targets.len()
    {
        return Err(analysis("Column count doesn't match value count"));
    }
    Ok(batches)
}

/// Conforms the source rows to the table and routes them to its tablets, applying the
/// session's filter rules (`enable_insert_strict`, `insert_max_filter_ratio`); returns the
/// rows per tablet and how many rows the INSERT writes, or Doris's message.
pub(crate) fn stage_rows(
    shared: &Shared,
    session: &Session,
    target: &InsertTarget,
    batches: &[RecordBatch],
    label: &str,
) -> Result<(Staged, u64), String> {
    let table = &target.table;
    let mut opts = parse_options(&HeaderMap::new())?;
    // `enable_unique_key_partial_update`: on a merge-on-write UNIQUE table the INSERT
    // changes only the columns it names (every key among them); elsewhere Doris ignores it.
    opts.partial = !target.overwrite
        && session.partial_update
        && table.schema.key_model == Some(doris_sql::KeyModel::Unique)
        && table.schema.merge_on_write;
    opts.columns = Some(target.targets.clone());
    opts.label = label.to_owned();
    let mut decoded = Decoded::default();
    for batch in batches {
        conform_batch(table, &opts, batch, &mut decoded)?;
    }
    let (mut staged, mut unrouted) = shared
        .stage(table, std::mem::take(&mut decoded.batches))
        .map_err(|e| e.to_string())?;
    if let Some(named) = &target.named_partitions {
        for (tablet, rows) in table.tablets.iter().zip(staged.iter_mut()) {
            if !named.contains(&tablet.partition) {
                unrouted += rows.iter().map(|b| b.num_rows() as u64).sum::<u64>();
                rows.clear();
            }
        }
    }
    // Rows no (named) partition takes are filtered too ("no partition for this tuple").
    for _ in 0..unrouted {
        decoded.reject("no partition for this tuple.".into());
    }
    if decoded.filtered_rows > 0 {
        let filter = session.insert_filter;
        let first = decoded.error_log.first().cloned().unwrap_or_default();
        let url = (filter.strict
            || decoded.filtered_rows as f64 > filter.max_filter_ratio * decoded.total_rows as f64)
            .then(|| shared.store_error_log(decoded.error_log.join("\n")));
        crate::load::filtered_rows_rule(
            filter.strict,
            filter.max_filter_ratio,
            decoded.filtered_rows,
            decoded.total_rows,
            &first,
            url.as_deref(),
        )?;
    }
    Ok((staged, decoded.total_rows - decoded.filtered_rows))
}

async fn execute(shared: &Shared, session: &Session, sql: &str) -> Result<Inserted, SelectError> {
    let target = parse(shared, session, sql)?;
    let batches = source_rows(shared, session, &target).await?;
    if batches.iter().all(|b| b.num_rows() == 0) {
        // Doris begins no transaction for an INSERT whose SELECT yields no row
        // (`isEmptyInsert`): `Query OK, 0 rows affected`, and no label is taken, even one
        // the statement names. An INSERT OVERWRITE of no row still replaces the table's
        // (or the named partitions') rows with none, under no label either.
        if target.overwrite {
            let scratch = format!("insert_{}", uuid::Uuid::new_v4().simple());
            let (staged, _) =
                stage_rows(shared, session, &target, &batches, &scratch).map_err(analysis)?;
            target
                .table
                .replace(staged, target.named_partitions.as_deref())
                .map_err(|e| analysis(e.to_string()))?;
            crate::persist::save(shared);
        }
        return Ok(Inserted::Nothing);
    }
    let label = target
        .label
        .clone()
        .unwrap_or_else(|| format!("insert_{}", uuid::Uuid::new_v4().simple()));
    // Labels are one namespace per database, shared with Stream Load: a label a load or
    // another INSERT holds (running or finished) is refused with Doris's text.
    let txn = shared
        .txns
        .begin(&target.db, &target.table_name, &label)
        .map_err(|e| analysis(label_used(&label, e.existing_txn_id)))?;
    let fail = |message: String| {
        shared.txns.abort(txn, &message);
        analysis(message)
    };
    let (staged, rows) = stage_rows(shared, session, &target, &batches, &label).map_err(fail)?;
    if target.overwrite
        && let Some(f @ Fault::OverwriteSwapFails { answered }) =
            shared.faults.take(Point::MysqlOverwrite)
    {
        // The label commits with the rows in temporary partitions; the swap never comes.
        shared.txns.make_visible(txn);
        shared.faults.record(&f, Some(&label), Some(txn), true);
        return if answered {
            Err(analysis(
                "replace partition failed: the FE stopped between the commit and the swap",
            ))
        } else {
            Ok(Inserted::Dropped)
        };
    }
    // INSERT OVERWRITE replaces every row of the table in the one transaction.
    if target.overwrite {
        target
            .table
            .replace(staged, target.named_partitions.as_deref())
    } else {
        target.table.apply(staged)
    }
    .map_err(|e| fail(e.to_string()))?;
    shared.txns.make_visible(txn);
    crate::persist::save(shared);
    Ok(Inserted::Committed { rows, label, txn })
}

/// Doris's text for a label a running or finished transaction holds.
pub(crate) fn label_used(label: &str, txn: i64) -> String {
    format!("Label [{label}] has already been used, relate to txn [{txn}]")
}

/// Cuts Doris's `WITH LABEL <label>` (between the table name and the column list or the
/// source) out of an INSERT, which sqlparser does not know. Quoted text is skipped. The
/// label is an identifier of Doris's grammar that its label rule accepts
/// ([`crate::names::sql_label`]).
fn take_label(sql: &str) -> Result<(String, Option<String>), SelectError> {
    let bytes = sql.as_bytes();
    let mut at = 0;
    let mut quote: Option<u8> = None;
    while at < bytes.len() {
        let b = bytes[at];
        match quote {
            Some(q) if b == b'\\' && q != b'`' => at += 1,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if matches!(b, b'\'' | b'"' | b'`') => quote = Some(b),
            None if starts_word(sql, at, "WITH") => {
                let rest = &sql[at + 4..];
                let after = rest.trim_start();
                if after.len() >= 5
                    && after.as_bytes()[..5].eq_ignore_ascii_case(b"LABEL")
                    && after[5..].starts_with(char::is_whitespace)
                {
                    let tail = after[5..].trim_start();
                    let end = tail
                        .find(|c: char| c.is_whitespace() || c == '(')
                        .unwrap_or(tail.len());
                    let label = crate::names::sql_label(&tail[..end]).map_err(analysis)?;
                    let remainder = format!("{} {}", &sql[..at], &tail[end..]);
                    return Ok((remainder, Some(label.to_owned())));
                }
            }
            None => {}
        }
        at += 1;
    }
    Ok((sql.to_owned(), None))
}

/// Whether the word `word` (any case) starts at byte `at` of `sql`, bounded on both sides.
fn starts_word(sql: &str, at: usize, word: &str) -> bool {
    let bytes = sql.as_bytes();
    let end = at + word.len();
    end <= bytes.len()
        && bytes[at..end].eq_ignore_ascii_case(word.as_bytes())
        && (at == 0 || !bytes[at - 1].is_ascii_alphanumeric() && bytes[at - 1] != b'_')
        && (end == bytes.len() || !bytes[end].is_ascii_alphanumeric() && bytes[end] != b'_')
}

/// An integer literal beyond BIGINT (a LARGEINT value) becomes its text, so the engine does
/// not turn it into a float on the way to the column (LARGEINT is kept as text). Expressions
/// are visited children first, so `-N` finds `N` already turned into text.
fn big_integer_as_text(expr: &mut Expr) {
    let digits = |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
    let text = match expr {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) if digits(n) && n.parse::<i64>().is_err() => n.clone(),
            _ => return,
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr: inner,
        } => match inner.as_ref() {
            Expr::Value(v) => match &v.value {
                Value::SingleQuotedString(n) if digits(n) && n.parse::<i64>().is_err() => {
                    format!("-{n}")
                }
                _ => return,
            },
            _ => return,
        },
        _ => return,
    };
    *expr = Expr::value(Value::SingleQuotedString(text));
}

/// sqlparser writes a string literal back with its quotes doubled but its backslashes
/// bare, and the SELECT engine reads the text again with MySQL's backslash escapes: a
/// string's backslashes are doubled here so the value arrives unchanged.
fn keep_backslashes(expr: &mut Expr) {
    if let Expr::Value(v) = expr
        && let Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) = &mut v.value
        && s.contains('\\')
    {
        *s = s.replace('\\', "\\\\");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_label_is_cut_out_of_the_statement() {
        let (sql, label) =
            take_label("INSERT INTO d.t WITH LABEL my_l_1 (a, b) SELECT a, b FROM s").unwrap();
        assert_eq!(label.as_deref(), Some("my_l_1"));
        assert_eq!(
            sql.split_whitespace().collect::<Vec<_>>().join(" "),
            "INSERT INTO d.t (a, b) SELECT a, b FROM s"
        );
        let (sql, label) = take_label("insert into t with label x values (1)").unwrap();
        assert_eq!(label.as_deref(), Some("x"));
        assert!(sql.contains("values (1)"));
        // The grammar takes an identifier: no '-', and backticks reach the label rule.
        assert!(take_label("INSERT INTO t WITH LABEL my_l-1 VALUES (1)").is_err());
        assert!(take_label("insert into t with label `x` values (1)").is_err());
        let (sql, none) = take_label("INSERT INTO t VALUES ('żółw 🐢', 'ünïcödé')").unwrap();
        assert_eq!(
            (sql.as_str(), none),
            ("INSERT INTO t VALUES ('żółw 🐢', 'ünïcödé')", None)
        );
        let (_, none) = take_label("INSERT INTO t VALUES ('WITH LABEL x')").unwrap();
        assert!(
            take_label("INSERT INTO t WITH é VALUES (1)")
                .unwrap()
                .1
                .is_none()
        );
        assert_eq!(none, None, "quoted text is not a label clause");
        assert!(take_label("INSERT INTO t WITH LABEL a.b VALUES (1)").is_err());
    }

    #[test]
    fn integers_beyond_bigint_stay_exact() {
        let sql = "SELECT 1, 170141183460469231731687303715884105727, \
                   -170141183460469231731687303715884105728, 2.5, -7";
        let mut statements = sqlparser::parser::Parser::parse_sql(&MySqlDialect {}, sql).unwrap();
        let _ = visit_expressions_mut(&mut statements, |expr| {
            big_integer_as_text(expr);
            ControlFlow::<()>::Continue(())
        });
        assert_eq!(
            statements[0].to_string(),
            "SELECT 1, '170141183460469231731687303715884105727', \
             '-170141183460469231731687303715884105728', 2.5, -7"
        );
    }
}
