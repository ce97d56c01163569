//! Row placement (partition, bucket) and the key-model merge applied when a load commits.
//!
//! - DUPLICATE: rows are appended as loaded.
//! - UNIQUE: one row per key survives; a later row replaces an earlier one, unless the
//!   table has a sequence column, in which case the row with the greater-or-equal sequence
//!   value wins (ties go to the later row), as Doris does.
//! - AGGREGATE: rows with the same key merge column by column: SUM, MAX, MIN, REPLACE,
//!   REPLACE_IF_NOT_NULL (REPLACE for anything else).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, Decimal128Array, Float64Array, Int64Array, PrimitiveArray,
    UInt32Array,
};
use arrow::compute::{cast, concat_batches, take};
use arrow::datatypes::{
    ArrowNativeTypeOp, ArrowPrimitiveType, DataType, Decimal128Type, Float64Type, Int64Type,
};
use arrow::record_batch::RecordBatch;
use arrow::row::{RowConverter, Rows, SortField};
use doris_sql::{Aggregation, Distribution, DorisType, KeyModel, PartitionValues, SequenceColumn};

use crate::catalog::Table;
use crate::error::EmulatorError;

fn arrow_err(e: arrow::error::ArrowError) -> EmulatorError {
    EmulatorError::Internal(e.to_string())
}

/// Row-format encoding of some columns, for hashing and ordering.
fn encode(batch: &RecordBatch, columns: &[usize]) -> Result<Rows, EmulatorError> {
    let fields = columns
        .iter()
        .map(|i| SortField::new(batch.schema().field(*i).data_type().clone()))
        .collect();
    let converter = RowConverter::new(fields).map_err(arrow_err)?;
    let arrays: Vec<ArrayRef> = columns.iter().map(|i| batch.column(*i).clone()).collect();
    converter.convert_columns(&arrays).map_err(arrow_err)
}

fn column_index(table: &Table, name: &str) -> Result<usize, EmulatorError> {
    table
        .schema
        .columns
        .iter()
        .position(|c| c.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| EmulatorError::Analysis(format!("unknown column {name}")))
}

/// FNV-1a: a small, stable hash, so bucket placement never changes between runs.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The bucket of every row: the hash of the distribution columns, or round robin for RANDOM.
pub fn bucket_of_rows(table: &Table, batch: &RecordBatch) -> Result<Vec<u32>, EmulatorError> {
    let buckets = table.buckets.max(1);
    match &table.schema.distribution {
        Some(Distribution::Hash { columns, .. }) => {
            let idx = columns
                .iter()
                .map(|c| column_index(table, c))
                .collect::<Result<Vec<_>, _>>()?;
            // Fast path for the common single integer key: hash the value's bytes.
            if let [only] = idx.as_slice()
                && let Ok(ints) = cast(batch.column(*only), &DataType::Int64)
                && matches!(
                    batch.column(*only).data_type(),
                    DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64
                )
            {
                let ints = ints.as_primitive::<Int64Type>();
                return Ok((0..batch.num_rows())
                    .map(|r| {
                        let h = if ints.is_null(r) {
                            fnv1a(&[])
                        } else {
                            fnv1a(&ints.value(r).to_le_bytes())
                        };
                        (h % u64::from(buckets)) as u32
                    })
                    .collect());
            }
            let rows = encode(batch, &idx)?;
            Ok((0..batch.num_rows())
                .map(|r| (fnv1a(rows.row(r).as_ref()) % u64::from(buckets)) as u32)
                .collect())
        }
        _ => Ok((0..batch.num_rows())
            .map(|r| (r as u64 % u64::from(buckets)) as u32)
            .collect()),
    }
}

/// A partition bound or row value as text, compared by the column's Doris type.
pub fn compare_typed(ty: &DorisType, a: &str, b: &str) -> Ordering {
    let max = |s: &str| s.eq_ignore_ascii_case("MAXVALUE");
    match (max(a), max(b)) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    match ty {
        DorisType::TinyInt
        | DorisType::SmallInt
        | DorisType::Int
        | DorisType::BigInt
        | DorisType::LargeInt => match (a.trim().parse::<i128>(), b.trim().parse::<i128>()) {
            (Ok(x), Ok(y)) => x.cmp(&y),
            _ => a.cmp(b),
        },
        DorisType::DateTime { .. } | DorisType::Date => {
            normalize_datetime(a).cmp(&normalize_datetime(b))
        }
        _ => a.cmp(b),
    }
}

/// `2024-01-01` and `2024-01-01 00:00:00` name the same instant for partition bounds.
fn normalize_datetime(text: &str) -> String {
    let t = text.trim().replace('T', " ");
    if t.len() == 10 {
        format!("{t} 00:00:00")
    } else {
        t
    }
}

fn compare_tuple(types: &[&DorisType], row: &[Option<String>], bound: &[String]) -> Ordering {
    for (i, ty) in types.iter().enumerate() {
        let Some(b) = bound.get(i) else {
            return Ordering::Equal;
        };
        let ord = match &row[i] {
            None => Ordering::Less, // NULL sorts below every bound
            Some(v) => compare_typed(ty, v, b),
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    Ordering::Equal
}

/// The partition index of every row (`None` when no partition takes it).
pub fn partition_of_rows(
    table: &Table,
    batch: &RecordBatch,
) -> Result<Vec<Option<usize>>, EmulatorError> {
    let Some(partitioning) = table
        .schema
        .partitioning
        .as_ref()
        .filter(|_| table.partitions.iter().any(|p| p.values.is_some()))
    else {
        return Ok(vec![Some(0); batch.num_rows()]);
    };
    let idx = partitioning
        .columns
        .iter()
        .map(|c| column_index(table, c))
        .collect::<Result<Vec<_>, _>>()?;
    let types: Vec<&DorisType> = idx.iter().map(|i| &table.schema.columns[*i].ty).collect();
    let texts: Vec<arrow::array::StringArray> = idx
        .iter()
        .map(|i| {
            cast(batch.column(*i), &DataType::Utf8)
                .map(|a| a.as_string::<i32>().clone())
                .map_err(arrow_err)
        })
        .collect::<Result<_, _>>()?;
    let mut out = Vec::with_capacity(batch.num_rows());
    for r in 0..batch.num_rows() {
        let row: Vec<Option<String>> = texts
            .iter()
            .map(|a| (!a.is_null(r)).then(|| a.value(r).to_owned()))
            .collect();
        let mut lower: Option<&[String]> = None;
        let mut found = None;
        for (p, part) in table.partitions.iter().enumerate() {
            let hit = match &part.values {
                Some(PartitionValues::Range { lower: lo, upper }) => {
                    compare_tuple(&types, &row, lo) != Ordering::Less
                        && compare_tuple(&types, &row, upper) == Ordering::Less
                }
                Some(PartitionValues::LessThan(upper)) => {
                    let above_lower =
                        lower.is_none_or(|lo| compare_tuple(&types, &row, lo) != Ordering::Less);
                    above_lower && compare_tuple(&types, &row, upper) == Ordering::Less
                }
                Some(PartitionValues::In(tuples)) => tuples.iter().any(|t| {
                    t.len() == row.len()
                        && row.iter().zip(t).zip(&types).all(|((v, b), ty)| match v {
                            Some(v) => compare_typed(ty, v, b) == Ordering::Equal,
                            None => b.eq_ignore_ascii_case("NULL"),
                        })
                }),
                Some(PartitionValues::Other(_)) | None => true,
            };
            if let Some(PartitionValues::LessThan(upper)) = &part.values {
                lower = Some(upper);
            }
            if hit {
                found = Some(p);
                break;
            }
        }
        out.push(found);
    }
    Ok(out)
}

/// Merges newly committed batches into a tablet's visible data by the key model.
pub fn merge_into_tablet(
    table: &Table,
    existing: Vec<RecordBatch>,
    new: Vec<RecordBatch>,
) -> Result<Vec<RecordBatch>, EmulatorError> {
    let model = table.key_model();
    if model == KeyModel::Duplicate {
        let mut all = existing;
        all.extend(new);
        return Ok(all);
    }
    // Until merged, NOT NULL columns of a partial update may hold NULLs: concatenate under
    // an all-nullable schema and check the table's schema at the end.
    let nullable = table.nullable_schema();
    let mut row_partial: Vec<Option<usize>> = Vec::new();
    let mut row_delete: Vec<bool> = Vec::new();
    let mut partials: Vec<(Vec<bool>, bool)> = Vec::new();
    let mut all = Vec::new();
    for batch in existing.into_iter().chain(new) {
        let slot = partial_mask(table, &batch).map(|mask| {
            partials.push(mask);
            partials.len() - 1
        });
        row_partial.extend(std::iter::repeat_n(slot, batch.num_rows()));
        let deletes = batch
            .schema()
            .metadata()
            .contains_key(crate::load::DELETE_ROWS);
        row_delete.extend(std::iter::repeat_n(deletes, batch.num_rows()));
        all.push(
            RecordBatch::try_new(nullable.clone(), batch.columns().to_vec()).map_err(arrow_err)?,
        );
    }
    let merged = concat_batches(&nullable, &all).map_err(arrow_err)?;
    if merged.num_rows() == 0 {
        return Ok(Vec::new());
    }
    let key_idx = table
        .schema
        .key_columns
        .iter()
        .map(|k| column_index(table, k))
        .collect::<Result<Vec<_>, _>>()?;
    let keys = encode(&merged, &key_idx)?;
    // Group rows by key, groups in order of first appearance.
    let mut group_of: HashMap<arrow::row::OwnedRow, usize> = HashMap::new();
    let mut groups: Vec<Vec<u32>> = Vec::new();
    for r in 0..merged.num_rows() {
        let g = *group_of.entry(keys.row(r).owned()).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(r as u32);
    }
    let out = match model {
        KeyModel::Unique => unique_winners(
            table,
            &merged,
            &groups,
            &RowKinds {
                partial: &row_partial,
                partials: &partials,
                delete: &row_delete,
            },
        )?,
        _ => aggregate(table, &merged, &groups, &key_idx)?,
    };
    let out =
        RecordBatch::try_new(table.arrow_schema.clone(), out.columns().to_vec()).map_err(|e| {
            EmulatorError::DataQuality(format!(
                "a new key of a partial update leaves a NOT NULL column empty: {e}"
            ))
        })?;
    Ok(vec![out])
}

/// The provided-columns mask of a partial-update batch (and whether new keys are an error).
fn partial_mask(table: &Table, batch: &RecordBatch) -> Option<(Vec<bool>, bool)> {
    let schema = batch.schema();
    let provided = schema.metadata().get(crate::load::PARTIAL_COLUMNS)?;
    let names: Vec<String> = serde_json::from_str(provided).ok()?;
    let mask = table
        .schema
        .columns
        .iter()
        .map(|c| names.iter().any(|n| n.eq_ignore_ascii_case(&c.name)))
        .collect();
    let new_key_error = schema
        .metadata()
        .get(crate::load::PARTIAL_NEW_KEY)
        .is_some_and(|b| b == "error");
    Some((mask, new_key_error))
}

/// What each merged row is: a full row, a partial update (index into `partials`), or a
/// delete.
struct RowKinds<'a> {
    partial: &'a [Option<usize>],
    partials: &'a [(Vec<bool>, bool)],
    delete: &'a [bool],
}

/// One row per key. A full row replaces the key's row (unless its sequence value is
/// smaller); a partial-update row replaces only the columns it provides; a delete row
/// removes the key. Built column by column: each output column takes, per key, the row
/// that last won that column.
fn unique_winners(
    table: &Table,
    merged: &RecordBatch,
    groups: &[Vec<u32>],
    kinds: &RowKinds<'_>,
) -> Result<RecordBatch, EmulatorError> {
    let (row_partial, partials) = (kinds.partial, kinds.partials);
    let sequence = match &table.schema.sequence {
        Some(SequenceColumn::Mapped(c)) => Some(encode(merged, &[column_index(table, c)?])?),
        _ => None,
    };
    let ncols = merged.num_columns();
    let mut picks: Vec<Vec<u32>> = vec![Vec::with_capacity(groups.len()); ncols];
    for rows in groups {
        let mut winner: Vec<Option<u32>> = vec![None; ncols];
        let mut decided_by: Option<u32> = None;
        for &r in rows {
            if kinds.delete[r as usize] {
                winner.fill(None);
                decided_by = None;
                continue;
            }
            match row_partial[r as usize].map(|slot| &partials[slot]) {
                None => {
                    if let (Some(seq), Some(best)) = (&sequence, decided_by)
                        && seq.row(r as usize) < seq.row(best as usize)
                    {
                        continue;
                    }
                    winner.fill(Some(r));
                    decided_by = Some(r);
                }
                Some((mask, new_key_error)) => {
                    if winner[0].is_none() && *new_key_error {
                        return Err(EmulatorError::DataQuality(
                            "partial update with partial_update_new_key_behavior=ERROR found a new key".into(),
                        ));
                    }
                    for (c, w) in winner.iter_mut().enumerate() {
                        if mask[c] || w.is_none() {
                            *w = Some(r);
                        }
                    }
                }
            }
        }
        if winner.iter().all(Option::is_none) {
            // Deleted.
            continue;
        }
        for (c, w) in winner.into_iter().enumerate() {
            picks[c].push(w.unwrap_or(rows[0]));
        }
    }
    let columns = picks
        .into_iter()
        .enumerate()
        .map(|(c, rows)| take(merged.column(c), &UInt32Array::from(rows), None))
        .collect::<Result<Vec<_>, _>>()
        .map_err(arrow_err)?;
    RecordBatch::try_new(merged.schema(), columns).map_err(arrow_err)
}

fn aggregate(
    table: &Table,
    merged: &RecordBatch,
    groups: &[Vec<u32>],
    key_idx: &[usize],
) -> Result<RecordBatch, EmulatorError> {
    let first: Vec<u32> = groups.iter().map(|g| g[0]).collect();
    let mut columns = Vec::with_capacity(merged.num_columns());
    for (i, column) in table.schema.columns.iter().enumerate() {
        let array = merged.column(i);
        let out = if key_idx.contains(&i) {
            take(array, &UInt32Array::from(first.clone()), None).map_err(arrow_err)?
        } else {
            match column.aggregation {
                Some(Aggregation::Sum) => sum_groups(array, groups)?,
                Some(agg @ (Aggregation::Max | Aggregation::Min)) => {
                    let rows = encode(merged, &[i])?;
                    let pick: Vec<u32> = groups
                        .iter()
                        .map(|g| {
                            let non_null =
                                g.iter().copied().filter(|r| array.is_valid(*r as usize));
                            let best = if agg == Aggregation::Max {
                                non_null.max_by(|a, b| {
                                    rows.row(*a as usize).cmp(&rows.row(*b as usize))
                                })
                            } else {
                                non_null.min_by(|a, b| {
                                    rows.row(*a as usize).cmp(&rows.row(*b as usize))
                                })
                            };
                            best.unwrap_or(g[0])
                        })
                        .collect();
                    take(array, &UInt32Array::from(pick), None).map_err(arrow_err)?
                }
                Some(Aggregation::ReplaceIfNotNull) => {
                    let pick: Vec<u32> = groups
                        .iter()
                        .map(|g| {
                            g.iter()
                                .rev()
                                .copied()
                                .find(|r| array.is_valid(*r as usize))
                                .unwrap_or(g[g.len() - 1])
                        })
                        .collect();
                    take(array, &UInt32Array::from(pick), None).map_err(arrow_err)?
                }
                _ => {
                    let last: Vec<u32> = groups.iter().map(|g| g[g.len() - 1]).collect();
                    take(array, &UInt32Array::from(last), None).map_err(arrow_err)?
                }
            }
        };
        columns.push(out);
    }
    RecordBatch::try_new(merged.schema(), columns).map_err(arrow_err)
}

/// Exact sums per group (NULLs ignored, a group of only NULLs is NULL); overflow is an error.
fn checked_sums<T: ArrowPrimitiveType>(
    values: &PrimitiveArray<T>,
    groups: &[Vec<u32>],
) -> Result<Vec<Option<T::Native>>, EmulatorError> {
    groups
        .iter()
        .map(|g| {
            let mut acc: Option<T::Native> = None;
            for r in g
                .iter()
                .map(|r| *r as usize)
                .filter(|r| values.is_valid(*r))
            {
                let sum = acc.unwrap_or_default().add_checked(values.value(r));
                acc = Some(sum.map_err(|_| {
                    EmulatorError::DataQuality("SUM overflowed the column type".into())
                })?);
            }
            Ok(acc)
        })
        .collect()
}

/// SUM per group, NULLs ignored (a group of only NULLs stays NULL); overflow is an error.
fn sum_groups(array: &ArrayRef, groups: &[Vec<u32>]) -> Result<ArrayRef, EmulatorError> {
    let target = array.data_type().clone();
    let overflow = || EmulatorError::DataQuality("SUM overflowed the column type".into());
    let summed: ArrayRef = match &target {
        DataType::Float32 | DataType::Float64 => {
            let wide = cast(array, &DataType::Float64).map_err(arrow_err)?;
            let values = wide.as_primitive::<Float64Type>();
            Arc::new(Float64Array::from_iter(groups.iter().map(|g| {
                let vals: Vec<f64> = g
                    .iter()
                    .filter(|r| values.is_valid(**r as usize))
                    .map(|r| values.value(*r as usize))
                    .collect();
                (!vals.is_empty()).then(|| vals.iter().sum())
            })))
        }
        DataType::Decimal128(p, s) => {
            let sums = checked_sums(array.as_primitive::<Decimal128Type>(), groups)?;
            Arc::new(
                Decimal128Array::from(sums)
                    .with_precision_and_scale(*p, *s)
                    .map_err(arrow_err)?,
            )
        }
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
            let wide = cast(array, &DataType::Int64).map_err(arrow_err)?;
            Arc::new(Int64Array::from(checked_sums(
                wide.as_primitive::<Int64Type>(),
                groups,
            )?))
        }
        other => {
            return Err(EmulatorError::Analysis(format!(
                "SUM is not supported on {other}"
            )));
        }
    };
    let back = arrow::compute::cast_with_options(
        &summed,
        &target,
        &arrow::compute::CastOptions {
            safe: false,
            ..Default::default()
        },
    )
    .map_err(|_| overflow())?;
    Ok(back)
}
