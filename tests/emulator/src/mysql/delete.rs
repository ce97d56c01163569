//! `DELETE FROM [db.]t WHERE …`: Doris's conditional delete. The rows the predicate matches
//! are removed in one transaction under a `delete_…` label. As in Doris, a WHERE is
//! required, and on an AGGREGATE table it may name key columns only.

use sqlparser::ast::{Delete, Expr, FromTable, Statement, TableFactor, visit_expressions};
use sqlparser::dialect::MySqlDialect;
use std::ops::ControlFlow;

use super::Session;
use super::insert::{analysis, writable_table};
use super::select::{SelectError, plan};
use super::wire::PacketIo;
use crate::Shared;

/// Runs one DELETE and answers OK (rows deleted, with the label's info text) or an error.
pub async fn run(
    shared: &Shared,
    session: &Session,
    sql: &str,
    io: &mut PacketIo,
) -> std::io::Result<()> {
    match execute(shared, session, sql).await {
        Ok((rows, label, txn)) => {
            io.ok_with_info(rows, &super::insert::txn_info(&label, "VISIBLE", Some(txn)))
                .await
        }
        Err(e) => io.error(e.code, e.state, &e.message).await,
    }
}

async fn execute(
    shared: &Shared,
    session: &Session,
    sql: &str,
) -> Result<(u64, String, i64), SelectError> {
    let statements =
        sqlparser::parser::Parser::parse_sql(&MySqlDialect {}, sql).map_err(analysis)?;
    let [
        Statement::Delete(Delete {
            from, selection, ..
        }),
    ] = statements.as_slice()
    else {
        return Err(analysis("expected one DELETE statement"));
    };
    let tables = match from {
        FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
    };
    let [table] = tables.as_slice() else {
        return Err(analysis("DELETE takes one table"));
    };
    let TableFactor::Table { name, .. } = &table.relation else {
        return Err(analysis("DELETE takes one table"));
    };
    let (db, table_name, table) = writable_table(shared, session, name)?;
    let Some(predicate) = selection else {
        return Err(analysis(
            "Delete without where clause is not supported (use TRUNCATE TABLE)",
        ));
    };
    if table.schema.key_model == Some(doris_sql::KeyModel::Aggregate) {
        let mut value_column = None;
        let _ = visit_expressions(predicate, |expr| {
            if let Expr::Identifier(ident) = expr
                && !table
                    .schema
                    .key_columns
                    .iter()
                    .any(|k| k.eq_ignore_ascii_case(&ident.value))
            {
                value_column = Some(ident.value.clone());
            }
            ControlFlow::<()>::Continue(())
        });
        if let Some(column) = value_column {
            return Err(analysis(format!(
                "delete predicate on value column only supports Unique table with merge-on-write \
                 enabled and Duplicate table, but Table[{table_name}] is an Aggregate table: {column}"
            )));
        }
    }
    let quoted = format!(
        "{}.{}",
        doris_sql::quote_ident("database", &db).map_err(analysis)?,
        doris_sql::quote_ident("table", &table_name).map_err(analysis)?
    );
    let count = |rows: &[arrow::record_batch::RecordBatch]| -> u64 {
        rows.iter().map(|b| b.num_rows() as u64).sum()
    };
    let before = count(
        &plan(shared, session, &format!("SELECT * FROM {quoted}"))
            .await?
            .collect()
            .await?,
    );
    let kept = plan(
        shared,
        session,
        &format!("SELECT * FROM {quoted} WHERE NOT ({predicate}) OR ({predicate}) IS NULL"),
    )
    .await?
    .collect()
    .await?;
    let label = format!("delete_{}", uuid::Uuid::new_v4().simple());
    let txn = shared
        .txns
        .begin(&db, &table_name, &label)
        .map_err(|e| analysis(super::insert::label_used(&label, e.existing_txn_id)))?;
    let deleted = before.saturating_sub(count(&kept));
    let applied = shared
        .stage(&table, kept)
        .and_then(|(staged, _)| table.replace(staged, None));
    if let Err(e) = applied {
        shared.txns.abort(txn, &e.to_string());
        return Err(analysis(e));
    }
    shared.txns.make_visible(txn);
    crate::persist::save(shared);
    Ok((deleted, label, txn))
}
