//! `SELECT` over table data, run by DataFusion, results streamed as text rows.
//!
//! The statement is tokenized first: every `TABLET(id, …)` hint is taken out and remembered
//! for the table written just before it (after an optional `PARTITION (…)`). Each table the
//! query references is registered for this query only, as an in-memory table over a
//! snapshot of its visible data, restricted to the hinted tablets. DataFusion then plans
//! and runs the query, and its record batches are written out as text rows batch by batch,
//! so a large result is never materialised before the first row leaves.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Decimal256Type, Float32Type, Float64Type, Int8Type,
    Int16Type, Int32Type, Int64Type, TimeUnit, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use datafusion::catalog::MemorySchemaProvider;
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};
use doris_sql::DorisType;
use futures::StreamExt;
use mysql_common::constants::ColumnType;
use sqlparser::dialect::MySqlDialect;
use sqlparser::tokenizer::Token;

use super::Session;
use super::query::Protocol;
use super::show::column_def;
use super::text_rows::{ColumnCells, format_column, write_rows};
use super::wire::{ColumnDef, PacketIo};
use crate::Shared;
use crate::auth::Privilege;
use crate::catalog::Table;
use crate::faults::{Fault, Point};

/// A table reference as written, and the tablets or partitions its hint named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    /// `db` (when qualified) and `table`.
    pub name: Vec<String>,
    /// Tablet ids (`TABLET(…)`).
    pub tablets: Vec<u64>,
    /// Partition names (`PARTITION p`, `PARTITION (p, q)`, `PARTITIONS (…)`).
    pub partitions: Vec<String>,
}

fn is_word(t: &Token, keyword: &str) -> bool {
    matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(keyword))
}

/// The table name that ends `out` (an identifier chain, whitespace allowed before it).
fn trailing_table_name(out: &[Token]) -> Vec<String> {
    let mut k = out.len();
    while k > 0 && matches!(out[k - 1], Token::Whitespace(_)) {
        k -= 1;
    }
    let mut name = Vec::new();
    while let Some(Token::Word(w)) = k.checked_sub(1).and_then(|at| out.get(at)) {
        name.insert(0, w.value.clone());
        k -= 1;
        if k > 0 && out[k - 1] == Token::Period {
            k -= 1;
        } else {
            break;
        }
    }
    name
}

/// Reads `( item [, item]* )` from `tokens[at]` (the opening parenthesis); returns the
/// items and the index of the closing one.
fn parenthesised(tokens: &[Token], at: usize, what: &str) -> Result<(Vec<Token>, usize), String> {
    let mut items = Vec::new();
    let mut j = at + 1;
    loop {
        match tokens.get(j) {
            Some(Token::Whitespace(_)) | Some(Token::Comma) => j += 1,
            Some(Token::RParen) => return Ok((items, j)),
            Some(t @ (Token::Number(..) | Token::Word(_))) => {
                items.push(t.clone());
                j += 1;
            }
            _ => return Err(format!("malformed {what}")),
        }
    }
}

/// Takes the `TABLET(...)` hints and the `PARTITION …` clauses after table names out of
/// `sql`; returns the SQL without them and the hints.
pub fn strip_tablet_hints(sql: &str) -> Result<(String, Vec<Hint>), String> {
    let tokens = crate::tokens::tokenize(sql)?;
    let next_significant =
        |from: usize| (from..tokens.len()).find(|j| !matches!(tokens[*j], Token::Whitespace(_)));
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut hints = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let next = next_significant(i + 1);
        let opens = next.is_some_and(|j| tokens[j] == Token::LParen);
        if is_word(&tokens[i], "TABLET") && opens {
            let (items, end) = parenthesised(&tokens, next.unwrap_or(i), "TABLET(...) hint")?;
            let mut ids = Vec::new();
            for item in items {
                match item {
                    Token::Number(n, _) => {
                        ids.push(n.parse::<u64>().map_err(|_| format!("bad tablet id {n}"))?)
                    }
                    _ => return Err("malformed TABLET(...) hint".into()),
                }
            }
            let name = trailing_table_name(&out);
            if name.is_empty() {
                return Err("TABLET(...) must follow a table name".into());
            }
            hints.push(Hint {
                name,
                tablets: ids,
                partitions: Vec::new(),
            });
            i = end + 1;
            continue;
        }
        let partition_clause = (is_word(&tokens[i], "PARTITION")
            || is_word(&tokens[i], "PARTITIONS"))
            && !next.is_some_and(|j| is_word(&tokens[j], "BY"));
        let name = if partition_clause {
            trailing_table_name(&out)
        } else {
            Vec::new()
        };
        if !name.is_empty() {
            let (partitions, end) = match next.map(|j| (j, &tokens[j])) {
                Some((j, Token::LParen)) => {
                    let (items, end) = parenthesised(&tokens, j, "PARTITION (...) clause")?;
                    let names = items
                        .into_iter()
                        .map(|t| match t {
                            Token::Word(w) => Ok(w.value),
                            _ => Err("malformed PARTITION (...) clause".to_owned()),
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    (names, end)
                }
                Some((j, Token::Word(w))) => (vec![w.value.clone()], j),
                _ => return Err("PARTITION must name a partition".into()),
            };
            hints.push(Hint {
                name,
                tablets: Vec::new(),
                partitions,
            });
            i = end + 1;
            continue;
        }
        out.push(tokens[i].clone());
        i += 1;
    }
    Ok((crate::tokens::render(&out), hints))
}

/// The tables a statement names (`[db.]table` as written), found by sqlparser.
fn referenced_tables(sql: &str) -> Result<Vec<Vec<String>>, String> {
    let statements =
        sqlparser::parser::Parser::parse_sql(&MySqlDialect {}, sql).map_err(|e| e.to_string())?;
    let mut names = Vec::new();
    let _ = sqlparser::ast::visit_relations(&statements, |relation| {
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
    Ok(names)
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
    let names: Vec<Vec<String>> = referenced_tables(&sql)
        .map_err(analysis)?
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
    let ctx = SessionContext::new_with_config(config);
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

fn unit_digits(unit: TimeUnit) -> u8 {
    match unit {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        TimeUnit::Microsecond => 6,
        TimeUnit::Nanosecond => 9,
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

/// Appends Doris's text form of `array[row]` (not null).
pub fn format_value(array: &ArrayRef, row: usize, doris: Option<&DorisType>, out: &mut Vec<u8>) {
    use std::io::Write as _;
    match array.data_type() {
        DataType::Boolean => out.push(if array.as_boolean().value(row) {
            b'1'
        } else {
            b'0'
        }),
        DataType::Int8 => {
            let _ = write!(out, "{}", array.as_primitive::<Int8Type>().value(row));
        }
        DataType::Int16 => {
            let _ = write!(out, "{}", array.as_primitive::<Int16Type>().value(row));
        }
        DataType::Int32 => {
            let _ = write!(out, "{}", array.as_primitive::<Int32Type>().value(row));
        }
        DataType::Int64 => {
            let _ = write!(out, "{}", array.as_primitive::<Int64Type>().value(row));
        }
        DataType::UInt8 => {
            let _ = write!(out, "{}", array.as_primitive::<UInt8Type>().value(row));
        }
        DataType::UInt16 => {
            let _ = write!(out, "{}", array.as_primitive::<UInt16Type>().value(row));
        }
        DataType::UInt32 => {
            let _ = write!(out, "{}", array.as_primitive::<UInt32Type>().value(row));
        }
        DataType::UInt64 => {
            let _ = write!(out, "{}", array.as_primitive::<UInt64Type>().value(row));
        }
        DataType::Float32 => {
            let _ = write!(out, "{}", array.as_primitive::<Float32Type>().value(row));
        }
        DataType::Float64 => {
            let _ = write!(out, "{}", array.as_primitive::<Float64Type>().value(row));
        }
        DataType::Decimal128(_, scale) if *scale >= 0 => {
            push_decimal(
                array.as_primitive::<Decimal128Type>().value(row),
                *scale,
                out,
            );
        }
        DataType::Decimal128(_, _) => {
            let a = array.as_primitive::<Decimal128Type>();
            out.extend_from_slice(a.value_as_string(row).as_bytes());
        }
        DataType::Decimal256(_, _) => {
            let a = array.as_primitive::<Decimal256Type>();
            out.extend_from_slice(a.value_as_string(row).as_bytes());
        }
        DataType::Date32 => push_date(array.as_primitive::<Date32Type>().value(row), out),
        DataType::Timestamp(unit, _) => {
            let precision = match doris {
                Some(DorisType::DateTime { precision }) => *precision,
                _ => unit_digits(*unit),
            };
            let raw = match unit {
                TimeUnit::Second => array
                    .as_primitive::<arrow::datatypes::TimestampSecondType>()
                    .value(row)
                    .saturating_mul(1_000_000),
                TimeUnit::Millisecond => array
                    .as_primitive::<arrow::datatypes::TimestampMillisecondType>()
                    .value(row)
                    .saturating_mul(1_000),
                TimeUnit::Microsecond => array
                    .as_primitive::<arrow::datatypes::TimestampMicrosecondType>()
                    .value(row),
                TimeUnit::Nanosecond => {
                    array
                        .as_primitive::<arrow::datatypes::TimestampNanosecondType>()
                        .value(row)
                        / 1_000
                }
            };
            write_datetime(raw, precision.min(6), out);
        }
        DataType::Utf8 => out.extend_from_slice(array.as_string::<i32>().value(row).as_bytes()),
        DataType::LargeUtf8 => {
            out.extend_from_slice(array.as_string::<i64>().value(row).as_bytes());
        }
        DataType::Utf8View => out.extend_from_slice(array.as_string_view().value(row).as_bytes()),
        DataType::Binary => out.extend_from_slice(array.as_binary::<i32>().value(row)),
        DataType::List(_) | DataType::Map(_, _) | DataType::Struct(_) => {
            nested(array, row, out, false);
        }
        _ => {
            let formatter = arrow::util::display::ArrayFormatter::try_new(
                array.as_ref(),
                &arrow::util::display::FormatOptions::default(),
            );
            if let Ok(f) = formatter {
                let _ = write!(out, "{}", f.value(row));
            }
        }
    }
}

/// Doris's text for nested values: `[1, 2]`, `{"k":1, "j":2}`, `{"f":1, "g":"x"}`; strings
/// and dates quoted inside, `null` for NULL elements.
fn nested(array: &ArrayRef, row: usize, out: &mut Vec<u8>, inside: bool) {
    if array.is_null(row) {
        out.extend_from_slice(b"null");
        return;
    }
    match array.data_type() {
        DataType::List(_) => {
            let list = array.as_list::<i32>().value(row);
            out.push(b'[');
            for i in 0..list.len() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                nested(&list, i, out, true);
            }
            out.push(b']');
        }
        DataType::Map(_, _) => {
            let map = array.as_map();
            let entries = map.value(row);
            let (keys, values) = (entries.column(0), entries.column(1));
            out.push(b'{');
            for i in 0..entries.len() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                nested(keys, i, out, true);
                out.push(b':');
                nested(values, i, out, true);
            }
            out.push(b'}');
        }
        DataType::Struct(fields) => {
            let s = array.as_struct();
            out.push(b'{');
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                out.push(b'"');
                out.extend_from_slice(field.name().as_bytes());
                out.extend_from_slice(b"\":");
                nested(s.column(i), row, out, true);
            }
            out.push(b'}');
        }
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Date32
        | DataType::Timestamp(_, _)
            if inside =>
        {
            out.push(b'"');
            format_value(array, row, None, out);
            out.push(b'"');
        }
        _ => format_value(array, row, None, out),
    }
}

/// `YYYY-MM-DD` for days since the epoch (`0000-00-00` outside years 0–9999).
fn push_date(days: i32, out: &mut Vec<u8>) {
    let (y, m, d) = civil_from_days(i64::from(days));
    match u32::try_from(y) {
        Ok(y) if y <= 9999 => {
            push_padded(out, y, 4);
            out.push(b'-');
            push_padded(out, m, 2);
            out.push(b'-');
            push_padded(out, d, 2);
        }
        _ => out.extend_from_slice(b"0000-00-00"),
    }
}

/// `v` in decimal with at least `width` digits (zero-padded).
fn push_padded(out: &mut Vec<u8>, v: u32, width: usize) {
    let mut buffer = itoa::Buffer::new();
    let digits = buffer.format(v).as_bytes();
    out.extend(std::iter::repeat_n(
        b'0',
        width.saturating_sub(digits.len()),
    ));
    out.extend_from_slice(digits);
}

/// A DECIMAL's text: the unscaled value with the point `scale` digits from the right
/// (`-0.05` for -5 at scale 2), as arrow's `value_as_string` writes it, without allocating.
fn push_decimal(value: i128, scale: i8, out: &mut Vec<u8>) {
    let mut buffer = itoa::Buffer::new();
    let digits = buffer.format(value.unsigned_abs()).as_bytes();
    if value < 0 {
        out.push(b'-');
    }
    let scale = usize::from(scale.unsigned_abs());
    if scale == 0 {
        out.extend_from_slice(digits);
    } else if digits.len() > scale {
        let (whole, frac) = digits.split_at(digits.len() - scale);
        out.extend_from_slice(whole);
        out.push(b'.');
        out.extend_from_slice(frac);
    } else {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', scale - digits.len()));
        out.extend_from_slice(digits);
    }
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `YYYY-MM-DD HH:MM:SS[.f…]` with `precision` fractional digits, from microseconds.
fn write_datetime(micros: i64, precision: u8, out: &mut Vec<u8>) {
    let days = micros.div_euclid(86_400_000_000);
    let rem = micros.rem_euclid(86_400_000_000);
    let (y, m, d) = civil_from_days(days);
    let secs = (rem / 1_000_000) as u32;
    let frac = (rem % 1_000_000) as u32;
    push_padded(out, u32::try_from(y).unwrap_or(0), 4);
    out.push(b'-');
    push_padded(out, m, 2);
    out.push(b'-');
    push_padded(out, d, 2);
    out.push(b' ');
    push_padded(out, secs / 3600, 2);
    out.push(b':');
    push_padded(out, (secs / 60) % 60, 2);
    out.push(b':');
    push_padded(out, secs % 60, 2);
    if precision > 0 {
        out.push(b'.');
        let at = out.len();
        push_padded(out, frac, 6);
        out.truncate(at + usize::from(precision));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tablet_hints_are_taken_out_with_their_table() {
        let (sql, hints) =
            strip_tablet_hints("SELECT `a` FROM `db`.`t` TABLET(10005, 10007) WHERE `a` > 1")
                .unwrap();
        assert_eq!(sql, "SELECT `a` FROM `db`.`t`  WHERE `a` > 1");
        assert_eq!(
            hints,
            vec![Hint {
                name: vec!["db".into(), "t".into()],
                tablets: vec![10005, 10007],
                partitions: Vec::new(),
            }]
        );
        let (sql, hints) =
            strip_tablet_hints("select * from t PARTITION (p1, P2) TABLET(3) x").unwrap();
        assert_eq!(
            sql.split_whitespace().collect::<Vec<_>>(),
            ["select", "*", "from", "t", "x"]
        );
        assert_eq!(hints.len(), 2);
        assert!(hints.iter().all(|h| h.name == ["t"]));
        assert_eq!(hints[0].partitions, ["p1", "P2"]);
        assert_eq!(hints[1].tablets, [3]);
        let (sql, hints) =
            strip_tablet_hints("select * from d.t partition p2 where a = 1").unwrap();
        assert_eq!(hints[0].name, ["d", "t"]);
        assert_eq!(hints[0].partitions, ["p2"]);
        assert!(!sql.to_ascii_lowercase().contains("partition"), "{sql}");
        // A window's PARTITION BY is not a partition clause.
        let (sql, hints) =
            strip_tablet_hints("select row_number() over (partition by a) from t").unwrap();
        assert!(hints.is_empty() && sql.contains("partition by"), "{sql}");
        assert!(strip_tablet_hints("select * from t TABLET(x)").is_err());
        let (sql, _) = strip_tablet_hints(r"select 'it\'s', 'a\\b', 'q''q' from t").unwrap();
        assert_eq!(sql, r"select 'it\'s', 'a\\b', 'q\'q' from t");
        let (sql, hints) = strip_tablet_hints("select 'TABLET(1)' from t").unwrap();
        assert!(hints.is_empty());
        assert!(sql.contains("'TABLET(1)'"));
    }

    #[test]
    fn datetimes_and_dates_print_like_doris() {
        let mut out = Vec::new();
        write_datetime(1_706_702_400_123_456, 3, &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "2024-01-31 12:00:00.123");
        let mut out = Vec::new();
        write_datetime(-1, 6, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "1969-12-31 23:59:59.999999"
        );
        let mut out = Vec::new();
        push_date(19_753, &mut out);
        push_date(-719_529, &mut out); // before year 0
        assert_eq!(String::from_utf8(out).unwrap(), "2024-01-310000-00-00");
    }

    #[test]
    fn decimals_print_like_arrow() {
        use arrow::array::Decimal128Array;
        let values = [
            0i128,
            5,
            -5,
            123_456,
            -123_456,
            100,
            i128::from(i64::MAX) * 1000,
        ];
        for scale in [0i8, 2, 4, 6] {
            let array = Decimal128Array::from(values.to_vec())
                .with_precision_and_scale(38, scale)
                .unwrap();
            for (i, v) in values.iter().enumerate() {
                let mut out = Vec::new();
                push_decimal(*v, scale, &mut out);
                assert_eq!(String::from_utf8(out).unwrap(), array.value_as_string(i));
            }
        }
    }
}
