//! What a load computes with SQL (DataFusion): `columns` mappings, `where` and `merge_type: MERGE`.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use arrow::record_batch::RecordBatch;

use crate::catalog::Table;

use super::Decoded;
use super::conform::{conform_batch, split_by_marks};
use super::options::LoadOptions;

/// A DataFusion context with `batches` registered as the table `__load` (one partition, so
/// a projection keeps the row order).
#[cfg(feature = "sql")]
pub(super) fn load_context(
    schema: arrow::datatypes::SchemaRef,
    batches: Vec<RecordBatch>,
) -> Result<datafusion::prelude::SessionContext, String> {
    let ctx = datafusion::prelude::SessionContext::new_with_config(
        datafusion::prelude::SessionConfig::new()
            .with_target_partitions(1)
            .set_str("datafusion.sql_parser.dialect", "mysql"),
    );
    let table = datafusion::datasource::MemTable::try_new(schema, vec![batches])
        .map_err(|e| format!("[INTERNAL_ERROR]{e}"))?;
    ctx.register_table("__load", Arc::new(table))
        .map_err(|e| format!("[INTERNAL_ERROR]{e}"))?;
    Ok(ctx)
}

/// Keeps the rows of `batches` that `predicate` (SQL over the table's columns) accepts;
/// returns them and how many were left out (`NumberUnselectedRows`).
#[cfg(feature = "sql")]
pub async fn apply_where(
    batches: Vec<RecordBatch>,
    predicate: &str,
) -> Result<(Vec<RecordBatch>, u64), String> {
    let Some(schema) = batches.first().map(RecordBatch::schema) else {
        return Ok((batches, 0));
    };
    let before: usize = batches.iter().map(RecordBatch::num_rows).sum();
    let ctx = load_context(schema, batches)?;
    let analysis = |e: datafusion::error::DataFusionError| {
        format!(
            "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = the where predicate is invalid: {}",
            e.to_string().lines().next().unwrap_or_default()
        )
    };
    let kept = ctx
        .sql(&format!("SELECT * FROM __load WHERE {predicate}"))
        .await
        .map_err(analysis)?
        .collect()
        .await
        .map_err(analysis)?;
    let after: usize = kept.iter().map(RecordBatch::num_rows).sum();
    Ok((kept, (before - after) as u64))
}

/// Marks the rows `condition` accepts as deletes (`merge_type: MERGE`): each batch is cut
/// into runs of consecutive rows with the same verdict, so the load keeps its row order.
#[cfg(feature = "sql")]
pub async fn apply_merge(
    batches: Vec<RecordBatch>,
    condition: &str,
) -> Result<Vec<RecordBatch>, String> {
    let mut out = Vec::with_capacity(batches.len());
    for batch in batches {
        let ctx = load_context(batch.schema(), vec![batch.clone()])?;
        let analysis = |e: datafusion::error::DataFusionError| {
            format!(
                "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = the delete condition is invalid: {}",
                e.to_string().lines().next().unwrap_or_default()
            )
        };
        let verdicts = ctx
            .sql(&format!(
                "SELECT coalesce(({condition}), false) AS __delete FROM __load"
            ))
            .await
            .map_err(analysis)?
            .collect()
            .await
            .map_err(analysis)?;
        let mut marks: Vec<bool> = Vec::with_capacity(batch.num_rows());
        for v in &verdicts {
            let column = v
                .column(0)
                .as_any()
                .downcast_ref::<BooleanArray>()
                .ok_or("[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = the delete condition is not a boolean expression")?;
            marks.extend(column.iter().map(|b| b.unwrap_or(false)));
        }
        if marks.len() != batch.num_rows() {
            return Err("[INTERNAL_ERROR]the delete condition changed the row count".into());
        }
        split_by_marks(batch, &marks, &mut out)?;
    }
    Ok(out)
}

/// Computes the `columns` mappings over the raw source batches `decoded` holds (DataFusion
/// runs `SELECT <sources>, <expression> AS <target>, …`), then conforms the result to the
/// table as any load is. Row counts carry over; conversion rejects are added.
#[cfg(feature = "sql")]
pub async fn apply_mappings(
    table: &Table,
    opts: &LoadOptions,
    mut decoded: Decoded,
) -> Result<Decoded, String> {
    let raw = std::mem::take(&mut decoded.batches);
    let Some(schema) = raw.first().map(RecordBatch::schema) else {
        return Ok(decoded);
    };
    let mapped = match constant_mappings(opts) {
        // Only whole numbers (`tag=123`, as the atomic write stages): each batch gains its
        // constant columns without a query being planned for it.
        Some(constants) => raw
            .iter()
            .map(|batch| with_constants(batch, &constants))
            .collect::<Result<Vec<_>, _>>()?,
        None => mapped_by_query(opts, schema, raw).await?,
    };
    let plain = LoadOptions {
        columns: None,
        mappings: Vec::new(),
        ..opts.clone()
    };
    let mut conformed = Decoded::default();
    for batch in &mapped {
        conform_batch(table, &plain, batch, &mut conformed)?;
    }
    decoded.batches = conformed.batches;
    decoded.filtered_rows += conformed.filtered_rows;
    let room = 1000usize.saturating_sub(decoded.error_log.len());
    decoded
        .error_log
        .extend(conformed.error_log.into_iter().take(room));
    Ok(decoded)
}

/// The mappings as `(target, value)` when every expression is a whole number (what
/// DataFusion reads as a BIGINT literal), else `None`.
#[cfg(feature = "sql")]
fn constant_mappings(opts: &LoadOptions) -> Option<Vec<(String, i64)>> {
    opts.mappings
        .iter()
        .map(|(target, expr)| {
            let expr = expr.trim();
            let digits = expr.strip_prefix('-').unwrap_or(expr);
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| expr.parse::<i64>().ok())
                .flatten()
                .map(|value| (target.clone(), value))
        })
        .collect()
}

/// `batch` without the source columns the constants replace, then each constant as a
/// non-null BIGINT column named by its target (what `SELECT …, (n) AS target` yields).
#[cfg(feature = "sql")]
fn with_constants(batch: &RecordBatch, constants: &[(String, i64)]) -> Result<RecordBatch, String> {
    let replaced = |name: &str| constants.iter().any(|(t, _)| t.eq_ignore_ascii_case(name));
    let schema = batch.schema();
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        if !replaced(field.name()) {
            fields.push(field.as_ref().clone());
            columns.push(column.clone());
        }
    }
    for (target, value) in constants {
        fields.push(arrow::datatypes::Field::new(
            target,
            arrow::datatypes::DataType::Int64,
            false,
        ));
        columns.push(Arc::new(arrow::array::Int64Array::from_value(
            *value,
            batch.num_rows(),
        )));
    }
    RecordBatch::try_new(Arc::new(arrow::datatypes::Schema::new(fields)), columns)
        .map_err(|e| format!("[INTERNAL_ERROR]{e}"))
}

/// The mappings computed by DataFusion: `SELECT <sources>, <expression> AS <target>, …`.
#[cfg(feature = "sql")]
async fn mapped_by_query(
    opts: &LoadOptions,
    schema: arrow::datatypes::SchemaRef,
    raw: Vec<RecordBatch>,
) -> Result<Vec<RecordBatch>, String> {
    let targets: Vec<&str> = opts.mappings.iter().map(|(t, _)| t.as_str()).collect();
    let mut select: Vec<String> = schema
        .fields()
        .iter()
        .filter(|f| !targets.iter().any(|t| t.eq_ignore_ascii_case(f.name())))
        .map(|f| format!("`{}`", f.name().replace('`', "``")))
        .collect();
    select.extend(
        opts.mappings
            .iter()
            .map(|(target, expr)| format!("({expr}) AS `{}`", target.replace('`', "``"))),
    );
    let analysis = |e: datafusion::error::DataFusionError| {
        format!(
            "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = a column mapping is invalid: {}",
            e.to_string().lines().next().unwrap_or_default()
        )
    };
    let sql = format!("SELECT {} FROM __load", select.join(", "));
    let frame = match load_context(schema.clone(), raw.clone())?.sql(&sql).await {
        Ok(frame) => frame,
        // Text fields are strings to DataFusion, which will not do arithmetic on them;
        // Doris casts such fields implicitly. Retry with numeric-looking text as numbers.
        Err(first) => {
            let typed: Vec<RecordBatch> = raw.iter().map(numbers_from_text).collect();
            let Some(schema) = typed.first().map(RecordBatch::schema) else {
                return Err(analysis(first));
            };
            load_context(schema, typed)?
                .sql(&sql)
                .await
                .map_err(|_| analysis(first))?
        }
    };
    frame.collect().await.map_err(analysis)
}

/// `batch` with every text column whose values all read as integers (else as floats) turned
/// into Int64 (Float64) columns; other columns unchanged.
#[cfg(feature = "sql")]
pub(super) fn numbers_from_text(batch: &RecordBatch) -> RecordBatch {
    let mut fields = Vec::with_capacity(batch.num_columns());
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        let converted = column.as_string_opt::<i32>().and_then(|text| {
            // A NULL stays NULL; one value that does not parse keeps the column as text.
            fn all<T: std::str::FromStr>(
                text: &arrow::array::StringArray,
            ) -> Option<Vec<Option<T>>> {
                text.iter()
                    .map(|v| match v {
                        None => Some(None),
                        Some(v) => v.trim().parse::<T>().ok().map(Some),
                    })
                    .collect()
            }
            if let Some(ints) = all::<i64>(text) {
                return Some(Arc::new(arrow::array::Int64Array::from(ints)) as ArrayRef);
            }
            let floats = all::<f64>(text).map(arrow::array::Float64Array::from);
            floats.map(|f| Arc::new(f) as ArrayRef)
        });
        match converted {
            Some(array) => {
                fields.push(arrow::datatypes::Field::new(
                    field.name(),
                    array.data_type().clone(),
                    true,
                ));
                columns.push(array);
            }
            None => {
                fields.push(field.as_ref().clone());
                columns.push(column.clone());
            }
        }
    }
    let schema = Arc::new(arrow::datatypes::Schema::new(fields));
    RecordBatch::try_new(schema, columns).unwrap_or_else(|_| batch.clone())
}

#[cfg(all(test, feature = "sql"))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use arrow::array::{Int32Array, StringArray};

    /// The shortcut for whole-number mappings gives the batches the query gives: the same
    /// columns, names, types, nullability and values, a replaced source column dropped.
    #[tokio::test]
    async fn whole_number_mappings_give_what_their_query_gives() {
        let mut opts = super::super::options::parse_options(&axum::http::HeaderMap::new()).unwrap();
        let batch = RecordBatch::try_from_iter([
            (
                "id",
                Arc::new(Int32Array::from(vec![Some(1), None, Some(3)])) as ArrayRef,
            ),
            (
                "tag",
                Arc::new(StringArray::from(vec!["x", "y", "z"])) as ArrayRef,
            ),
            (
                "v",
                Arc::new(StringArray::from(vec![Some("a"), None, Some("c")])) as ArrayRef,
            ),
        ])
        .unwrap();
        for mappings in [
            vec![("tag", "123456789012")],
            vec![("TAG", " -7 "), ("extra", "0")],
            vec![("__dd_load", "9223372036854775807")],
        ] {
            opts.mappings = mappings
                .iter()
                .map(|(t, e)| ((*t).to_owned(), (*e).to_owned()))
                .collect();
            let constants = constant_mappings(&opts).unwrap();
            let fast = with_constants(&batch, &constants).unwrap();
            let queried = mapped_by_query(&opts, batch.schema(), vec![batch.clone()])
                .await
                .unwrap();
            let queried = arrow::compute::concat_batches(&queried[0].schema(), &queried).unwrap();
            assert_eq!(fast.schema(), queried.schema(), "{mappings:?}");
            assert_eq!(fast, queried, "{mappings:?}");
        }
        // Anything else goes to the query.
        for expr in ["1.5", "1 + 1", "id", "'7'", "", "-", "99999999999999999999"] {
            opts.mappings = vec![("tag".to_owned(), expr.to_owned())];
            assert!(constant_mappings(&opts).is_none(), "{expr}");
        }
    }
}
