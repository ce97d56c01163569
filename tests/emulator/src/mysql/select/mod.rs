//! `SELECT` over table data, run by DataFusion, results streamed as text rows.
//!
//! The statement is tokenized first: every `TABLET(id, …)` hint is taken out and remembered
//! for the table written just before it (after an optional `PARTITION (…)`). Each table the
//! query references is registered for this query only, as an in-memory table over a
//! snapshot of its visible data, restricted to the hinted tablets. DataFusion then plans
//! and runs the query, and its record batches are written out as text rows batch by batch,
//! so a large result is never materialised before the first row leaves.
//!
//! `hints` takes the `TABLET(…)` hints out; `text` prints each value in Doris's text form;
//! `functions` holds the functions a query may call, as Doris answers them.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::DataType;
use datafusion::catalog::MemorySchemaProvider;
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};
use doris_sql::DorisType;
use futures::StreamExt;
use mysql_common::constants::ColumnType;
use sqlparser::dialect::MySqlDialect;

use super::Session;
use super::query::Protocol;
use super::show::column_def;
use super::text_rows::{ColumnCells, format_column, write_rows};
use super::wire::{ColumnDef, PacketIo};
use crate::Shared;
use crate::auth::Privilege;
use crate::catalog::Table;
use crate::faults::{Fault, Point};

mod functions;
mod hints;
mod information_schema;
mod text;

pub use hints::{Hint, strip_tablet_hints};
pub use text::format_value;
use text::unit_digits;

/// The tables the statements name (`[db.]table` as written).
fn referenced_tables(statements: &[sqlparser::ast::Statement]) -> Vec<Vec<String>> {
    let mut names = Vec::new();
    for statement in statements {
        let _ = sqlparser::ast::visit_relations(statement, |relation| {
            let parts: Vec<String> = relation
                .0
                .iter()
                .filter_map(|p| p.as_ident().map(|i| i.value.clone()))
                .collect();
            if !names.contains(&parts) {
                names.push(parts);
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
    }
    names
}

/// `[db.]table` as written (and the session's database) to the catalog's table, with
/// Doris's errors for no database and a missing table.
pub fn resolve_table(
    shared: &Shared,
    session: &Session,
    name: &[String],
) -> Result<(String, String, Arc<Table>), SelectError> {
    let (db, table_name) = match name {
        [t] => match &session.database {
            Some(db) => (db.clone(), t.clone()),
            None => {
                return Err(SelectError {
                    code: 1046,
                    state: b"3D000",
                    message: "No database selected".into(),
                });
            }
        },
        [db, t] | [_, db, t] => (db.clone(), t.clone()),
        _ => return Err(analysis("unsupported table reference")),
    };
    if db.eq_ignore_ascii_case("information_schema") {
        // Doris answers these system tables; the emulator answers `tables` alone
        // (`information_schema.rs`).
        return Err(analysis(format!(
            "the Doris emulator does not run queries on information_schema.{table_name}"
        )));
    }
    let table = shared.catalog.table(&db, &table_name).map_err(|_| {
        analysis(format!(
            "Table [{table_name}] does not exist in database [{db}]."
        ))
    })?;
    Ok((db, table_name, table))
}

/// Why a SELECT could not run: a MySQL error to send.
#[derive(Debug)]
pub struct SelectError {
    /// Error code.
    pub code: u16,
    /// SQLSTATE.
    pub state: &'static [u8; 5],
    /// Text.
    pub message: String,
}

fn analysis(message: impl std::fmt::Display) -> SelectError {
    SelectError {
        code: 1105,
        state: b"HY000",
        message: format!("errCode = 2, detailMessage = {message}"),
    }
}

/// A planned query: its columns and a DataFusion frame to stream.
pub struct Planned {
    columns: Vec<ColumnDef>,
    doris_types: Vec<Option<DorisType>>,
    frame: datafusion::dataframe::DataFrame,
    holders: Vec<usize>,
}

impl Planned {
    /// The result's column definitions, as the MySQL face sends them.
    pub fn columns(&self) -> &[ColumnDef] {
        &self.columns
    }

    /// Each result column's Doris type, when it is a table's column (`None`: computed).
    pub fn doris_types(&self) -> &[Option<DorisType>] {
        &self.doris_types
    }

    /// The result's Arrow schema.
    pub fn schema(&self) -> arrow::datatypes::SchemaRef {
        Arc::new(self.frame.schema().as_arrow().clone())
    }

    /// The simulated BEs holding the tablets the query scans (empty: any BE may sink it,
    /// as for a query without `TABLET(…)` or over no table); see [`crate::backends`].
    pub fn holders(&self) -> &[usize] {
        &self.holders
    }

    /// Starts the query and returns one stream per output partition (the Flight face serves
    /// each as its own endpoint, like Doris's parallel result sinks).
    pub async fn partition_streams(
        self,
    ) -> Result<Vec<datafusion::physical_plan::SendableRecordBatchStream>, SelectError> {
        self.frame
            .execute_stream_partitioned()
            .await
            .map_err(|e| analysis(clean(&e)))
    }

    /// Runs the query and collects every batch (for INSERT … SELECT).
    pub async fn collect(self) -> Result<Vec<arrow::record_batch::RecordBatch>, SelectError> {
        self.frame.collect().await.map_err(|e| analysis(clean(&e)))
    }
}

/// Plans `sql` for `session` over the catalog.
pub async fn plan(shared: &Shared, session: &Session, sql: &str) -> Result<Planned, SelectError> {
    let (sql, job_tables) = crate::jobs::rewrite_table_functions(sql).map_err(analysis)?;
    let (sql, hints) = strip_tablet_hints(&sql).map_err(analysis)?;
    let mut statements = sqlparser::parser::Parser::parse_sql(&MySqlDialect {}, &sql)
        .map_err(|e| analysis(e.to_string()))?;
    let extracts = functions::rewrite_extracts(&mut statements);
    let units = functions::rewrite_timestamp_units(&mut statements)
        | functions::rewrite_mod_calls(&mut statements);
    // Zoned text first: the rounding below reads the local time it becomes.
    let local = functions::rewrite_zoned_literals(&mut statements, &session.time_zone);
    let literals = functions::rewrite_datetime_literals(&mut statements) | local;
    functions::check_calls(&statements).map_err(|functions::Refused(why)| analysis(why))?;
    let zoned = functions::rewrite_session_time_zone(&mut statements, &session.time_zone);
    let sql = if functions::rewrite_quarters(&mut statements) | extracts | units | literals | zoned
    {
        statements
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    } else {
        sql
    };
    let names: Vec<Vec<String>> = referenced_tables(&statements)
        .into_iter()
        .filter(|n| {
            !job_tables
                .iter()
                .any(|j| n.last().map(String::as_str) == Some(j.table_name()))
        })
        .collect();
    let current = session.database.clone();
    let config = SessionConfig::new()
        .with_default_catalog_and_schema("datafusion", current.as_deref().unwrap_or("public"))
        .with_target_partitions(2)
        .set_str("datafusion.sql_parser.dialect", "mysql")
        // Doris sorts NULL as the smallest value: first in ASC, last in DESC.
        .set_str("datafusion.sql_parser.default_null_ordering", "nulls_min");
    let mut builder = datafusion::execution::SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .with_type_planner(Arc::new(DorisTypes));
    let planners = builder.expr_planners().get_or_insert_with(Vec::new);
    planners.insert(0, Arc::new(functions::DorisSubstring));
    planners.insert(0, Arc::new(functions::DorisArithmetic));
    let state = builder.build();
    let ctx = SessionContext::new_with_state(state);
    for udf in functions::udfs() {
        ctx.register_udf(udf);
    }
    let catalog = ctx
        .catalog("datafusion")
        .ok_or_else(|| analysis("no default catalog"))?;
    let mut types: HashMap<String, Option<DorisType>> = HashMap::new();
    let mut registered: Vec<String> = Vec::new();
    // BEs holding the scanned tablets; `None` once a table is scanned whole.
    let mut holders: Option<Vec<usize>> = Some(Vec::new());
    if let Some(db) = &current {
        catalog
            .register_schema(db, Arc::new(MemorySchemaProvider::new()))
            .map_err(analysis)?;
        registered.push(db.clone());
    }
    for name in names {
        if let [db, table_name] = name.as_slice()
            && db.eq_ignore_ascii_case("information_schema")
            && table_name.eq_ignore_ascii_case(information_schema::TABLES)
        {
            let batch = information_schema::tables(shared, session).map_err(analysis)?;
            for (column, ty) in information_schema::columns() {
                types
                    .entry(column.to_owned())
                    .and_modify(|t| {
                        if t.as_ref() != Some(&ty) {
                            *t = None;
                        }
                    })
                    .or_insert_with(|| Some(ty.clone()));
            }
            if !registered.iter().any(|r| r == "information_schema") {
                catalog
                    .register_schema("information_schema", Arc::new(MemorySchemaProvider::new()))
                    .map_err(analysis)?;
                registered.push("information_schema".to_owned());
            }
            let provider =
                MemTable::try_new(batch.schema(), vec![vec![batch]]).map_err(analysis)?;
            ctx.register_table(
                datafusion::common::TableReference::partial(
                    "information_schema",
                    information_schema::TABLES,
                ),
                Arc::new(provider),
            )
            .map_err(analysis)?;
            holders = None;
            continue;
        }
        let (db, table_name, table) = resolve_table(shared, session, &name)?;
        if !shared
            .users
            .has(&session.user, &db, &table_name, Privilege::Select)
        {
            return Err(analysis(format!(
                "SELECT command denied to user '{}'@'{}' for table '{db}.{table_name}'",
                session.user,
                session.peer.ip()
            )));
        }
        let mine: Vec<&Hint> = hints
            .iter()
            .filter(|h| h.name.last() == Some(&table_name))
            .collect();
        let hinted: Option<Vec<u64>> = mine.iter().any(|h| !h.tablets.is_empty()).then(|| {
            mine.iter()
                .flat_map(|h| h.tablets.iter().copied())
                .collect()
        });
        let named: Option<Vec<String>> = mine.iter().any(|h| !h.partitions.is_empty()).then(|| {
            mine.iter()
                .flat_map(|h| h.partitions.iter().cloned())
                .collect()
        });
        let (partitions, scanned) = table_partitions(&table, hinted.as_deref(), named.as_deref())?;
        let hinted = hinted.or(named.map(|_| Vec::new()));
        holders = match (holders, hinted.is_some()) {
            (Some(mut h), true) => {
                h.extend(scanned.iter().map(|i| shared.backends.of_tablet(*i)));
                Some(h)
            }
            _ => None,
        };
        for c in &table.schema.columns {
            types
                .entry(c.name.to_ascii_lowercase())
                .and_modify(|t| {
                    if t.as_ref() != Some(&c.ty) {
                        *t = None;
                    }
                })
                .or_insert_with(|| Some(c.ty.clone()));
        }
        if !registered.contains(&db) {
            catalog
                .register_schema(&db, Arc::new(MemorySchemaProvider::new()))
                .map_err(analysis)?;
            registered.push(db.clone());
        }
        let provider =
            MemTable::try_new(table.arrow_schema.clone(), partitions).map_err(analysis)?;
        ctx.register_table(
            datafusion::common::TableReference::partial(db.as_str(), table_name.as_str()),
            Arc::new(provider),
        )
        .map_err(analysis)?;
    }
    for job_table in job_tables {
        ctx.register_table(
            job_table.table_name(),
            job_table_provider(shared, job_table)?,
        )
        .map_err(analysis)?;
    }
    let frame = ctx.sql(&sql).await.map_err(|e| analysis(clean(&e)))?;
    refuse_incomparable(frame.logical_plan(), &types)?;
    let schema = frame.schema().as_arrow().clone();
    let mut columns = Vec::new();
    let mut doris_types = Vec::new();
    for field in schema.fields() {
        let doris = types
            .get(&field.name().to_ascii_lowercase())
            .cloned()
            .flatten()
            .filter(|t| crate::catalog::storage_type(t) == *field.data_type());
        let mut def = match &doris {
            Some(t) => column_def(field.name(), t),
            None => arrow_column_def(field.name(), field.data_type()),
        };
        if shared.config.profile.json_as_string && def.column_type == ColumnType::MYSQL_TYPE_JSON {
            // Older releases sent JSON columns as STRING (254).
            def.column_type = ColumnType::MYSQL_TYPE_STRING;
        }
        columns.push(def);
        doris_types.push(doris);
    }
    let mut holders = holders.unwrap_or_default();
    holders.sort_unstable();
    holders.dedup();
    Ok(Planned {
        columns,
        doris_types,
        frame,
        holders,
    })
}

/// Doris's refusal of a comparison (`=`, `<=>`, `<`, …) of a MAP or STRUCT value
/// (`ComparisonPredicate.checkLegalityBeforeTypeCoercion`: ARRAY is comparable) or of a
/// JSON column: `comparison predicate could not contains complex type: (a <=> b)`.
fn refuse_incomparable(
    plan: &datafusion::logical_expr::LogicalPlan,
    types: &HashMap<String, Option<DorisType>>,
) -> Result<(), SelectError> {
    use datafusion::common::tree_node::{TreeNode as _, TreeNodeRecursion};
    use datafusion::logical_expr::{ExprSchemable as _, Operator, expr::BinaryExpr};
    use datafusion::prelude::Expr;
    let mut refusal: Option<String> = None;
    let _ = plan.apply_with_subqueries(|node| {
        let inputs = node.inputs();
        let schema = match inputs.as_slice() {
            [only] => only.schema().clone(),
            _ => node.schema().clone(),
        };
        node.apply_expressions(|expr| {
            expr.apply(|e| {
                if let Expr::BinaryExpr(BinaryExpr { left, op, right }) = e
                    && matches!(
                        op,
                        Operator::Eq
                            | Operator::NotEq
                            | Operator::Lt
                            | Operator::LtEq
                            | Operator::Gt
                            | Operator::GtEq
                            | Operator::IsDistinctFrom
                            | Operator::IsNotDistinctFrom
                    )
                {
                    let kind = [left.as_ref(), right.as_ref()]
                        .into_iter()
                        .find_map(|side| {
                            let json = matches!(side, Expr::Column(c)
                            if matches!(types.get(&c.name.to_ascii_lowercase()),
                                Some(Some(DorisType::Json))));
                            match side.get_type(&schema) {
                                Ok(DataType::Map(..) | DataType::Struct(_)) => Some("complex"),
                                _ if json => Some("json"),
                                _ => None,
                            }
                        });
                    if let Some(kind) = kind {
                        let shown = |side: &Expr| match side {
                            Expr::Column(c) => c.name.clone(),
                            other => other.to_string(),
                        };
                        let op = match op {
                            Operator::IsNotDistinctFrom => "<=>".to_owned(),
                            other => other.to_string(),
                        };
                        refusal = Some(format!(
                            "comparison predicate could not contains {kind} type: ({} {op} {})",
                            shown(left),
                            shown(right)
                        ));
                        return Ok(TreeNodeRecursion::Stop);
                    }
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })
    });
    match refusal {
        Some(message) => Err(analysis(message)),
        None => Ok(()),
    }
}

/// Doris's type names in `CAST(… AS …)` that DataFusion does not know: `DATETIME[(p)]`
/// (the form `doris-sql` renders DATETIME literals in) is the column type's storage.
#[derive(Debug)]
struct DorisTypes;

impl datafusion::logical_expr::planner::TypePlanner for DorisTypes {
    fn plan_type_field(
        &self,
        sql_type: &datafusion::sql::sqlparser::ast::DataType,
    ) -> datafusion::common::Result<Option<arrow::datatypes::FieldRef>> {
        use datafusion::sql::sqlparser::ast::DataType as Sql;
        let doris = match sql_type {
            Sql::Datetime(precision) => DorisType::DateTime {
                precision: precision.map_or(0, |p| u8::try_from(p).unwrap_or(6)),
            },
            _ => return Ok(None),
        };
        Ok(Some(Arc::new(arrow::datatypes::Field::new(
            "",
            crate::catalog::storage_type(&doris),
            true,
        ))))
    }
}

/// `jobs("type"="insert")` / `tasks("type"="insert")` as an in-memory table of strings.
fn job_table_provider(
    shared: &Shared,
    which: crate::jobs::JobTable,
) -> Result<Arc<MemTable>, SelectError> {
    let columns = which.columns();
    let rows = which.rows(shared);
    let schema = Arc::new(arrow::datatypes::Schema::new(
        columns
            .iter()
            .map(|c| arrow::datatypes::Field::new(*c, DataType::Utf8, true))
            .collect::<Vec<_>>(),
    ));
    let arrays: Vec<ArrayRef> = (0..columns.len())
        .map(|i| {
            Arc::new(arrow::array::StringArray::from_iter(
                rows.iter().map(|r| r[i].as_deref()),
            )) as ArrayRef
        })
        .collect();
    let batch =
        arrow::record_batch::RecordBatch::try_new(schema.clone(), arrays).map_err(analysis)?;
    Ok(Arc::new(
        MemTable::try_new(schema, vec![vec![batch]]).map_err(analysis)?,
    ))
}

fn clean(e: &datafusion::error::DataFusionError) -> String {
    e.to_string().lines().next().unwrap_or_default().to_owned()
}

/// The table's data as MemTable partitions (one per non-empty tablet), limited to `tablets`
/// and to the `named` partitions, and the indexes of the tablets scanned.
#[allow(clippy::type_complexity)]
fn table_partitions(
    table: &Table,
    tablets: Option<&[u64]>,
    named: Option<&[String]>,
) -> Result<(Vec<Vec<arrow::record_batch::RecordBatch>>, Vec<usize>), SelectError> {
    let indexes: Vec<usize> = match tablets {
        None => (0..table.tablets.len()).collect(),
        Some(ids) => {
            let mut idx = Vec::new();
            for id in ids {
                let at = table
                    .tablets
                    .iter()
                    .position(|t| t.id == *id)
                    .ok_or_else(|| {
                        analysis(format!(
                            "tablet {id} does not exist in table {}",
                            table.schema.name
                        ))
                    })?;
                if !idx.contains(&at) {
                    idx.push(at);
                }
            }
            idx
        }
    };
    let indexes = match named {
        None => indexes,
        Some(names) => {
            let mut wanted = Vec::with_capacity(names.len());
            for name in names {
                let at = table.partition_index(name).ok_or_else(|| {
                    analysis(format!(
                        "Unknown partition '{name}' in table '{}'",
                        table.schema.name
                    ))
                })?;
                wanted.push(at);
            }
            indexes
                .into_iter()
                .filter(|i| wanted.contains(&table.tablets[*i].partition))
                .collect()
        }
    };
    let mut parts = Vec::new();
    for i in &indexes {
        let batches = table.snapshot(Some(&[*i])).map_err(analysis)?;
        if !batches.is_empty() {
            parts.push(batches);
        }
    }
    if parts.is_empty() {
        parts.push(Vec::new());
    }
    Ok((parts, indexes))
}

/// The column definition for a computed column, from its Arrow type.
fn arrow_column_def(name: &str, ty: &DataType) -> ColumnDef {
    let doris = match ty {
        DataType::Boolean => Some(DorisType::Boolean),
        DataType::Int8 => Some(DorisType::TinyInt),
        DataType::Int16 | DataType::UInt8 => Some(DorisType::SmallInt),
        DataType::Int32 | DataType::UInt16 => Some(DorisType::Int),
        DataType::Int64 | DataType::UInt32 | DataType::UInt64 => Some(DorisType::BigInt),
        DataType::Float32 => Some(DorisType::Float),
        DataType::Float64 => Some(DorisType::Double),
        DataType::Decimal128(p, s) | DataType::Decimal256(p, s) => Some(DorisType::Decimal {
            precision: *p,
            scale: u8::try_from(*s).unwrap_or(0),
        }),
        DataType::Date32 | DataType::Date64 => Some(DorisType::Date),
        DataType::Timestamp(unit, _) => Some(DorisType::DateTime {
            precision: unit_digits(*unit),
        }),
        _ => None,
    };
    match doris {
        Some(t) => column_def(name, &t),
        None => ColumnDef {
            name: name.to_owned(),
            column_type: ColumnType::MYSQL_TYPE_STRING,
            length: 255,
            decimals: 0,
        },
    }
}

/// Runs a planned query and streams it out. A `cut_result_stream` fault closes the
/// connection after N rows (the caller sees the error and drops the connection).
pub async fn stream(
    shared: &Shared,
    planned: Planned,
    protocol: Protocol,
    io: &mut PacketIo,
) -> std::io::Result<()> {
    let mut batches = match planned.frame.execute_stream().await {
        Ok(s) => s,
        Err(e) => {
            let e = analysis(clean(&e));
            return io.error(e.code, e.state, &e.message).await;
        }
    };
    let (cut, short_row) = match shared.faults.take(Point::MysqlResult) {
        Some(f @ Fault::CutResultStream { rows }) => {
            shared.faults.record(&f, None, None, false);
            (Some(rows), false)
        }
        Some(f @ Fault::ShortMysqlRow) if protocol == Protocol::Text => {
            shared.faults.record(&f, None, None, false);
            (None, true)
        }
        _ => (None, false),
    };
    // The first batch decides whether an error comes before the column definitions.
    let first = match batches.next().await {
        Some(Err(e)) => {
            let e = analysis(clean(&e));
            return io.error(e.code, e.state, &e.message).await;
        }
        other => other,
    };
    io.columns(&planned.columns).await?;
    // The BE that sinks this result paces it (no-op without a bandwidth limit).
    let sink = shared.backends.sink(&planned.holders);
    let mut sent = 0u64;
    let mut packet = Vec::with_capacity(planned.columns.len() * 16);
    let mut cells: Vec<Option<Vec<u8>>> = Vec::with_capacity(planned.columns.len());
    let mut formatted: Vec<ColumnCells> = Vec::new();
    let mut next = first;
    while let Some(batch) = next {
        let batch = match batch {
            Ok(b) => b,
            Err(e) => {
                let e = analysis(clean(&e));
                return io.error(e.code, e.state, &e.message).await;
            }
        };
        let rows = batch.num_rows();
        let written_before = io.bytes_written();
        // A `cut_result_stream` fault lets `rows` rows through in all, then drops the link.
        let allowed = cut.map_or(rows, |c| {
            usize::try_from(c - sent).unwrap_or(usize::MAX).min(rows)
        });
        if protocol == Protocol::Text {
            formatted.resize_with(batch.num_columns(), ColumnCells::default);
            for (c, column) in batch.columns().iter().enumerate() {
                format_column(column, planned.doris_types[c].as_ref(), &mut formatted[c]);
            }
            write_rows(&formatted, allowed, io, &mut packet).await?;
        } else {
            for row in 0..allowed {
                cells.clear();
                for (c, column) in batch.columns().iter().enumerate() {
                    let mut text = Vec::new();
                    let value = (!column.is_null(row)).then(|| {
                        format_value(column, row, planned.doris_types[c].as_ref(), &mut text);
                        text
                    });
                    cells.push(value);
                }
                super::wire::binary_row(
                    &planned.columns,
                    cells.iter().map(Option::as_deref),
                    &mut packet,
                );
                io.write(&packet).await?;
            }
        }
        sent += allowed as u64;
        shared.wire.add_mysql_rows(allowed as u64);
        sink.spend(io.bytes_written() - written_before).await;
        if allowed < rows {
            io.flush().await?;
            return Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "fault: result stream cut",
            ));
        }
        next = batches.next().await;
    }
    if short_row && planned.columns.len() > 1 {
        // A text row packet with one lenenc cell where the result has more columns.
        packet.clear();
        super::wire::lenenc_int(&mut packet, 1);
        packet.push(b'1');
        io.write(&packet).await?;
    }
    io.end_of_rows().await?;
    io.flush().await
}
