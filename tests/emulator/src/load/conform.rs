//! Source columns conformed to the table: casts, NULL rules, nested text, delete signs.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, StringArray, new_null_array};
use arrow::compute::{CastOptions, cast_with_options, filter_record_batch};
use arrow::datatypes::DataType;
use arrow::record_batch::RecordBatch;

use crate::catalog::Table;

use super::options::LoadOptions;
use super::{DELETE_ROWS, DELETE_SIGN, Decoded, PARTIAL_COLUMNS, PARTIAL_NEW_KEY};

/// Conforms one Arrow batch (columns by name, or by position under `opts.columns`) to the
/// table, filtering rows as Doris does.
pub fn conform_batch(
    table: &Table,
    opts: &LoadOptions,
    batch: &RecordBatch,
    out: &mut Decoded,
) -> Result<(), String> {
    out.total_rows += batch.num_rows() as u64;
    let names: Vec<String> = match &opts.columns {
        Some(cols) if cols.len() == batch.num_columns() => cols.clone(),
        _ => batch
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect(),
    };
    let columns = names
        .into_iter()
        .zip(batch.columns().iter().cloned())
        .collect();
    conform(table, opts, columns, None, out)
}

/// Casts source columns to the table's columns and filters rows by Doris's rules.
pub(super) fn conform(
    table: &Table,
    opts: &LoadOptions,
    source: Vec<(String, ArrayRef)>,
    provided: Option<&[String]>,
    out: &mut Decoded,
) -> Result<(), String> {
    if !opts.mappings.is_empty() {
        // Column mappings come first: keep the source columns as they are (see
        // `apply_mappings`, which conforms the mapped rows afterwards).
        return raw_batch(source, out);
    }
    let rows = source.first().map_or(0, |(_, a)| a.len());
    let signs = delete_signs(table, &source, rows)?;
    // A partial update changes only the columns it provides; every key must be among them.
    let provided: Vec<String> = table
        .schema
        .columns
        .iter()
        .filter(|c| {
            let given = |n: &String| n.eq_ignore_ascii_case(&c.name);
            match provided {
                Some(p) => p.iter().any(given),
                None => source.iter().any(|(n, _)| given(n)),
            }
        })
        .map(|c| c.name.clone())
        .collect();
    let is_provided = |name: &str| provided.iter().any(|p| p.eq_ignore_ascii_case(name));
    if (opts.partial || opts.delete)
        && let Some(missing) = table.schema.key_columns.iter().find(|k| !is_provided(k))
    {
        return Err(format!(
            "[INVALID_ARGUMENT]{} requires every key column, `{missing}` is missing",
            if opts.delete {
                "delete"
            } else {
                "partial update"
            }
        ));
    }
    let mut keep = vec![true; rows];
    let mut reasons: Vec<Option<String>> = vec![None; rows];
    let mut arrays = Vec::with_capacity(table.schema.columns.len());
    for (column, field) in table.schema.columns.iter().zip(table.arrow_schema.fields()) {
        let src = source
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(&column.name));
        let array = match src {
            None => new_null_array(field.data_type(), rows),
            Some((_, a)) if a.data_type() == field.data_type() => a.clone(),
            Some((_, a)) if is_nested(field.data_type()) && a.data_type() == &DataType::Utf8 => {
                text_to_nested(a.as_string::<i32>(), field.data_type())?
            }
            Some((_, a)) => cast_with_options(
                &doris_text(a, field.data_type()).unwrap_or_else(|| a.clone()),
                field.data_type(),
                &CastOptions {
                    safe: true,
                    ..Default::default()
                },
            )
            .map_err(|e| {
                format!(
                    "[INTERNAL_ERROR]column {} cannot be loaded from {}: {e}",
                    column.name,
                    a.data_type()
                )
            })?,
        };
        // JSONB keeps its value, not its text: stored compact, as Doris prints it; text
        // that is not JSON fails to convert like any other value.
        let (array, json_checked) = match (&column.ty, src) {
            (doris_sql::DorisType::Json, Some(_)) if array.data_type() == &DataType::Utf8 => {
                (compact_json(array.as_string::<i32>()), true)
            }
            _ => (array, false),
        };
        // Without a conversion no value can fail: only NULLs in a NOT NULL column count.
        let cast_happened =
            json_checked || src.is_some_and(|(_, a)| a.data_type() != field.data_type());
        let check_nulls = !(opts.partial || opts.delete) || is_provided(&column.name);
        if !cast_happened && (column.nullable || array.null_count() == 0 || !check_nulls) {
            arrays.push(array);
            continue;
        }
        for r in 0..rows {
            let failed_cast =
                cast_happened && src.is_some_and(|(_, a)| a.is_valid(r)) && array.is_null(r);
            let null_in_not_null = array.is_null(r) && !column.nullable && check_nulls;
            if (failed_cast && opts.strict_mode) || null_in_not_null {
                keep[r] = false;
                if reasons[r].is_none() {
                    reasons[r] = Some(if failed_cast {
                        format!(
                            "Reason: column({}) value is incorrect while strict mode is true. row [{r}];",
                            column.name
                        )
                    } else {
                        format!(
                            "Reason: column({}) values is null while columns is not nullable. row [{r}];",
                            column.name
                        )
                    });
                }
            }
        }
        arrays.push(array);
    }
    // Until the rejected rows are gone, NOT NULL columns may still hold NULLs: build the
    // batch under an all-nullable schema, filter, then take the table's schema.
    let nullable = table.nullable_schema();
    let batch = RecordBatch::try_new(nullable.clone(), arrays)
        .map_err(|e| format!("[INTERNAL_ERROR]{e}"))?;
    for reason in reasons.into_iter().flatten() {
        out.reject(reason);
    }
    let signs: Option<Vec<bool>> = signs.map(|marks| {
        marks
            .into_iter()
            .zip(&keep)
            .filter_map(|(m, k)| k.then_some(m))
            .collect()
    });
    let batch = if keep.iter().all(|k| *k) {
        batch
    } else {
        filter_record_batch(&batch, &BooleanArray::from(keep))
            .map_err(|e| format!("[INTERNAL_ERROR]{e}"))?
    };
    let schema = if opts.delete {
        // Only the keys matter; other columns may stay NULL.
        let mut metadata = std::collections::HashMap::new();
        metadata.insert(DELETE_ROWS.to_owned(), "true".to_owned());
        Arc::new(nullable.as_ref().clone().with_metadata(metadata))
    } else if opts.partial {
        // NOT NULL columns the update does not provide stay NULL until the merge fills them.
        let mut metadata = std::collections::HashMap::new();
        // As JSON: a column name may hold a comma (apache/doris#53479's names).
        metadata.insert(
            PARTIAL_COLUMNS.to_owned(),
            serde_json::to_string(&provided).map_err(|e| format!("[INTERNAL_ERROR]{e}"))?,
        );
        let behavior = if opts.new_key_error {
            "error"
        } else {
            "append"
        };
        metadata.insert(PARTIAL_NEW_KEY.to_owned(), behavior.to_owned());
        Arc::new(nullable.as_ref().clone().with_metadata(metadata))
    } else {
        table.arrow_schema.clone()
    };
    let batch = RecordBatch::try_new(schema, batch.columns().to_vec())
        .map_err(|e| format!("[INTERNAL_ERROR]{e}"))?;
    match signs {
        Some(marks) => split_by_marks(batch, &marks, &mut out.batches)?,
        None if batch.num_rows() > 0 => out.batches.push(batch),
        None => {}
    }
    Ok(())
}

/// The source columns as one batch, unconverted (for column mappings).
pub(super) fn raw_batch(source: Vec<(String, ArrayRef)>, out: &mut Decoded) -> Result<(), String> {
    let fields: Vec<arrow::datatypes::Field> = source
        .iter()
        .map(|(n, a)| arrow::datatypes::Field::new(n, a.data_type().clone(), true))
        .collect();
    let schema = Arc::new(arrow::datatypes::Schema::new(fields));
    let batch = RecordBatch::try_new(schema, source.into_iter().map(|(_, a)| a).collect())
        .map_err(|e| format!("[INTERNAL_ERROR]{e}"))?;
    if batch.num_rows() > 0 {
        out.batches.push(batch);
    }
    Ok(())
}

pub(super) fn is_nested(ty: &DataType) -> bool {
    matches!(
        ty,
        DataType::List(_) | DataType::LargeList(_) | DataType::Map(_, _) | DataType::Struct(_)
    )
}

/// Text cells in Doris's text form of nested values (`[1, 2]`, `{"k":1}`, `{1:2}`; JSON
/// loads hand over their JSON text) as an array of the nested type `ty`, through arrow-json.
/// A cell that does not parse becomes NULL, which the caller counts as a failed conversion.
pub(super) fn text_to_nested(text: &StringArray, ty: &DataType) -> Result<ArrayRef, String> {
    let schema = Arc::new(arrow::datatypes::Schema::new(vec![
        arrow::datatypes::Field::new("v", ty.clone(), true),
    ]));
    let line = |cell: Option<&str>| -> Vec<u8> {
        let json = cell.and_then(|c| doris_sql::nested_to_json(c).ok());
        format!("{{\"v\":{}}}\n", json.as_deref().unwrap_or("null")).into_bytes()
    };
    let decode = |lines: &[u8], rows: usize| -> Option<ArrayRef> {
        let mut decoder = arrow::json::ReaderBuilder::new(schema.clone())
            .with_batch_size(rows.max(1))
            .build_decoder()
            .ok()?;
        decoder.decode(lines).ok()?;
        decoder.flush().ok()?.map(|b| b.column(0).clone())
    };
    let all: Vec<u8> = text.iter().flat_map(line).collect();
    if let Some(array) = decode(&all, text.len()) {
        return Ok(array);
    }
    // Some cell is not valid for the type: decode cell by cell, the bad ones as NULL.
    let mut parts = Vec::with_capacity(text.len());
    for cell in text.iter() {
        let one = decode(&line(cell), 1)
            .or_else(|| decode(&line(None), 1))
            .ok_or_else(|| format!("[INTERNAL_ERROR]cannot build a NULL of {ty}"))?;
        parts.push(one);
    }
    let refs: Vec<&dyn Array> = parts.iter().map(AsRef::as_ref).collect();
    arrow::compute::concat(&refs).map_err(|e| format!("[INTERNAL_ERROR]{e}"))
}

/// The delete-sign values of the source (`__DORIS_DELETE_SIGN__` from `hidden_columns` or
/// the `columns` header): `true` where the value is 1. `None` when the source has none.
pub(super) fn delete_signs(
    table: &Table,
    source: &[(String, ArrayRef)],
    rows: usize,
) -> Result<Option<Vec<bool>>, String> {
    let Some((_, array)) = source
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(DELETE_SIGN))
    else {
        return Ok(None);
    };
    if table.schema.key_model != Some(doris_sql::KeyModel::Unique) {
        return Err(format!(
            "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = unknown column {DELETE_SIGN}: only unique tables have a delete sign"
        ));
    }
    let ints = cast_with_options(
        array,
        &DataType::Int64,
        &CastOptions {
            safe: true,
            ..Default::default()
        },
    )
    .map_err(|e| format!("[INTERNAL_ERROR]{DELETE_SIGN}: {e}"))?;
    let ints = ints.as_primitive::<arrow::datatypes::Int64Type>();
    Ok(Some(
        (0..rows)
            .map(|r| ints.is_valid(r) && ints.value(r) == 1)
            .collect(),
    ))
}

/// Cuts `batch` into runs of consecutive rows with the same mark and appends them to `out`;
/// marked runs carry [`DELETE_ROWS`], so the merge deletes their keys in row order.
pub(super) fn split_by_marks(
    batch: RecordBatch,
    marks: &[bool],
    out: &mut Vec<RecordBatch>,
) -> Result<(), String> {
    let mut start = 0;
    while start < marks.len() {
        let verdict = marks[start];
        let end = (start..marks.len())
            .find(|i| marks[*i] != verdict)
            .unwrap_or(marks.len());
        let run = batch.slice(start, end - start);
        out.push(if verdict {
            let mut metadata = run.schema().metadata().clone();
            metadata.insert(DELETE_ROWS.to_owned(), "true".to_owned());
            let schema = Arc::new(run.schema().as_ref().clone().with_metadata(metadata));
            RecordBatch::try_new(schema, run.columns().to_vec())
                .map_err(|e| format!("[INTERNAL_ERROR]{e}"))?
        } else {
            run
        });
        start = end;
    }
    Ok(())
}

/// Doris reads text more leniently than Arrow's casts do: a number may carry surrounding
/// spaces (`" 1"` loads as 1) and a datetime may join its date and time with `:`
/// (`2022-12-01:09:30:31`), both seen in Doris's regression suites
/// (`load_p0/stream_load`). Returns the text as Arrow's cast reads it, or `None` when the
/// column is not text or its type needs no change.
fn doris_text(a: &ArrayRef, target: &DataType) -> Option<ArrayRef> {
    let is_datetime = matches!(target, DataType::Timestamp(..));
    if !(target.is_numeric() || is_datetime || matches!(target, DataType::Date32)) {
        return None;
    }
    let text = a.as_string_opt::<i32>()?;
    // The text as Arrow reads it, or `None` when it reads this cell as it is.
    let fixed = |v: &str| -> Option<String> {
        let trimmed = trim_spaces(v);
        match is_datetime.then(|| datetime_text(trimmed)).flatten() {
            Some(joined) => Some(joined),
            None => (trimmed.len() != v.len()).then(|| trimmed.to_owned()),
        }
    };
    // Most columns need nothing: no copy then.
    if !text.iter().flatten().any(|v| fixed(v).is_some()) {
        return None;
    }
    let out: StringArray = text
        .iter()
        .map(|v| v.map(|v| fixed(v).unwrap_or_else(|| v.to_owned())))
        .collect();
    Some(Arc::new(out))
}

fn trim_spaces(v: &str) -> &str {
    v.trim_matches(|c: char| c.is_ascii_whitespace())
}

/// `YYYY-MM-DD:HH:MM:SS…` as `YYYY-MM-DD HH:MM:SS…`; `None` for any other text.
fn datetime_text(v: &str) -> Option<String> {
    let b = v.as_bytes();
    let date_like = b.len() > 11
        && b[4] == b'-'
        && b[7] == b'-'
        && b[..10]
            .iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    (date_like && b[10] == b':').then(|| format!("{} {}", &v[..10], &v[11..]))
}

/// JSON text without the whitespace between its tokens (`{"k1": 1}` → `{"k1":1}`, key order
/// and number spelling kept), as Doris prints a JSONB value; text that is not JSON is NULL.
fn compact_json(text: &StringArray) -> ArrayRef {
    let compact: StringArray = text
        .iter()
        .map(|cell| {
            let cell = cell?;
            serde_json::from_str::<serde::de::IgnoredAny>(cell).ok()?;
            let mut out = String::with_capacity(cell.len());
            let (mut in_string, mut escaped) = (false, false);
            for c in cell.chars() {
                if in_string {
                    out.push(c);
                    match (escaped, c) {
                        (true, _) => escaped = false,
                        (false, '\\') => escaped = true,
                        (false, '"') => in_string = false,
                        _ => {}
                    }
                } else if !c.is_whitespace() {
                    in_string = c == '"';
                    out.push(c);
                }
            }
            Some(out)
        })
        .collect();
    Arc::new(compact)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_stored_compact_and_text_that_is_not_json_is_null() {
        let text = StringArray::from(vec![
            Some(r#"{"k1": 1, "s": "a b\" c", "z": {"x": [1, 2]}}"#),
            Some("[1, 2, {\"nested\": true}]"),
            Some("{bad"),
            None,
        ]);
        let out = compact_json(&text);
        let out = out.as_string::<i32>();
        assert_eq!(out.value(0), r#"{"k1":1,"s":"a b\" c","z":{"x":[1,2]}}"#);
        assert_eq!(out.value(1), r#"[1,2,{"nested":true}]"#);
        assert!(out.is_null(2) && out.is_null(3));
    }
}
