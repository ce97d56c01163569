//! MySQL text-protocol cells into Arrow arrays.
//!
//! Numbers, booleans, DECIMAL, DATE, DATETIME and TIME are parsed straight from the cell's
//! bytes into typed builders (module `parse`: a fast path for the shapes Doris prints,
//! arrow's own parsers for anything else; strict: a value that does not parse is an error,
//! never a silent NULL). DECIMAL256 text is cast by arrow when the batch is finished.
//! Nested values (ARRAY/MAP/STRUCT text) are rewritten into JSON and decoded by arrow-json
//! into their native Arrow types. No cell allocates on the heap by itself.

mod parse;

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder,
    DurationMicrosecondBuilder, Float32Builder, Float64Builder, Int8Builder, Int16Builder,
    Int32Builder, Int64Builder, LargeBinaryBuilder, LargeStringBuilder, StringBuilder,
    UInt64Builder, make_array,
};
use arrow::compute::{CastOptions, cast_with_options};
use arrow::record_batch::RecordBatch;
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};

use doris_sql::nested_to_json;

use crate::error::ReadError;

enum Column {
    Bool(BooleanBuilder),
    I8(Int8Builder),
    I16(Int16Builder),
    I32(Int32Builder),
    I64(Int64Builder),
    U64(UInt64Builder),
    F32(Float32Builder),
    F64(Float64Builder),
    Text(StringBuilder),
    /// 64-bit offsets (Daft's own string layout, so it takes the batch without a copy).
    LargeText(LargeStringBuilder),
    Binary(BinaryBuilder),
    LargeBinary(LargeBinaryBuilder),
    Decimal(Decimal128Builder, u8, i8),
    Date(Date32Builder),
    /// Values in the unit; typed as the timestamp when the batch is finished.
    Timestamp(Int64Builder, TimeUnit),
    /// TIMESTAMPTZ: instants in the unit (the text's wall clock less its offset).
    Instant(Int64Builder, TimeUnit),
    /// Text now, cast to the target type when the batch is finished (DECIMAL256).
    ViaCast(StringBuilder),
    Time(DurationMicrosecondBuilder),
    /// NDJSON lines `{"v": …}`, decoded by arrow-json.
    Nested(Vec<u8>, usize),
}

fn new_column(ty: &DataType) -> Result<Column, String> {
    Ok(match ty {
        DataType::Boolean => Column::Bool(BooleanBuilder::new()),
        DataType::Int8 => Column::I8(Int8Builder::new()),
        DataType::Int16 => Column::I16(Int16Builder::new()),
        DataType::Int32 => Column::I32(Int32Builder::new()),
        DataType::Int64 => Column::I64(Int64Builder::new()),
        DataType::UInt64 => Column::U64(UInt64Builder::new()),
        DataType::Float32 => Column::F32(Float32Builder::new()),
        DataType::Float64 => Column::F64(Float64Builder::new()),
        DataType::Utf8 => Column::Text(StringBuilder::new()),
        DataType::LargeUtf8 => Column::LargeText(LargeStringBuilder::new()),
        DataType::Binary => Column::Binary(BinaryBuilder::new()),
        DataType::LargeBinary => Column::LargeBinary(LargeBinaryBuilder::new()),
        DataType::Decimal128(p, s) => Column::Decimal(
            Decimal128Builder::new()
                .with_precision_and_scale(*p, *s)
                .map_err(|e| e.to_string())?,
            *p,
            *s,
        ),
        DataType::Date32 => Column::Date(Date32Builder::new()),
        DataType::Timestamp(unit, None) => Column::Timestamp(Int64Builder::new(), *unit),
        DataType::Timestamp(unit, Some(_)) => Column::Instant(Int64Builder::new(), *unit),
        DataType::Decimal256(_, _) => Column::ViaCast(StringBuilder::new()),
        DataType::Duration(TimeUnit::Microsecond) => {
            Column::Time(DurationMicrosecondBuilder::new())
        }
        DataType::List(_) | DataType::Map(_, _) | DataType::Struct(_) => {
            if has_text_leaf(ty) {
                return Err(NESTED_TEXT_REFUSAL.into());
            }
            Column::Nested(Vec::new(), 0)
        }
        other => return Err(format!("no text decoder for {other}")),
    })
}

/// Why a nested column with a text inside is not read over MySQL.
const NESTED_TEXT_REFUSAL: &str = "Doris writes strings (and other text values) inside ARRAY, \
    MAP and STRUCT values raw between double quotes over the MySQL protocol, without escaping \
    (apache/doris#61119), so a value holding a quote or \", \" cannot be read exactly: read \
    this column with transport=\"flight\", or leave it out of the read";

/// Whether a nested type holds a text or binary value at any depth (strings, JSON, VARIANT,
/// VARBINARY, LARGEINT and IP addresses all map to one): Doris's nested text cannot say
/// those exactly.
fn has_text_leaf(ty: &DataType) -> bool {
    match ty {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => true,
        DataType::List(item) | DataType::LargeList(item) => has_text_leaf(item.data_type()),
        DataType::Map(entries, _) => has_text_leaf(entries.data_type()),
        DataType::Struct(fields) => fields.iter().any(|f| has_text_leaf(f.data_type())),
        _ => false,
    }
}

/// The type nested text is decoded as: BOOLEAN leaves as `Int8` (Doris prints them `1` and
/// `0`), cast to the target once decoded.
fn nested_decode_type(ty: &DataType) -> DataType {
    let field = |f: &arrow_schema::FieldRef| {
        Arc::new(
            f.as_ref()
                .clone()
                .with_data_type(nested_decode_type(f.data_type())),
        )
    };
    match ty {
        DataType::Boolean => DataType::Int8,
        DataType::List(item) => DataType::List(field(item)),
        DataType::Map(entries, sorted) => DataType::Map(field(entries), *sorted),
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(field).collect()),
        other => other.clone(),
    }
}

/// An error text with every single-quoted part (a value) replaced by `'…'`.
fn without_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quoted = false;
    for c in text.chars() {
        if c == '\'' {
            if !quoted {
                out.push_str("'…'");
            }
            quoted = !quoted;
        } else if !quoted {
            out.push(c);
        }
    }
    out
}

/// Builds record batches from text rows.
pub struct RowDecoder {
    schema: SchemaRef,
    columns: Vec<Column>,
    rows: usize,
    bytes: usize,
}

impl RowDecoder {
    /// A decoder for rows of `schema` (every field must have a text decoder).
    pub fn new(schema: SchemaRef) -> Result<Self, ReadError> {
        let columns = schema
            .fields()
            .iter()
            .map(|f| {
                new_column(f.data_type()).map_err(|reason| ReadError::Decode {
                    column: f.name().clone(),
                    arrow_type: f.data_type().to_string(),
                    reason,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            schema,
            columns,
            rows: 0,
            bytes: 0,
        })
    }

    /// Rows buffered.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Approximate Arrow bytes buffered.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Appends one cell of the current row (`None` is SQL NULL).
    pub fn push(&mut self, index: usize, cell: Option<&[u8]>) -> Result<(), ReadError> {
        let field = &self.schema.fields()[index];
        let fail = |reason: &str| ReadError::Decode {
            column: field.name().clone(),
            arrow_type: field.data_type().to_string(),
            reason: reason.to_owned(),
        };
        self.bytes += cell.map_or(1, |c| c.len().max(8));
        let column = &mut self.columns[index];
        let Some(cell) = cell else {
            match column {
                Column::Bool(b) => b.append_null(),
                Column::I8(b) => b.append_null(),
                Column::I16(b) => b.append_null(),
                Column::I32(b) => b.append_null(),
                Column::I64(b) | Column::Timestamp(b, _) | Column::Instant(b, _) => b.append_null(),
                Column::U64(b) => b.append_null(),
                Column::F32(b) => b.append_null(),
                Column::F64(b) => b.append_null(),
                Column::Text(b) | Column::ViaCast(b) => b.append_null(),
                Column::LargeText(b) => b.append_null(),
                Column::Binary(b) => b.append_null(),
                Column::LargeBinary(b) => b.append_null(),
                Column::Decimal(b, _, _) => b.append_null(),
                Column::Date(b) => b.append_null(),
                Column::Time(b) => b.append_null(),
                Column::Nested(buf, n) => {
                    buf.extend_from_slice(b"{\"v\":null}\n");
                    *n += 1;
                }
            }
            return Ok(());
        };
        match column {
            Column::Bool(b) => b.append_value(match cell {
                b"1" | b"true" | b"TRUE" => true,
                b"0" | b"false" | b"FALSE" => false,
                _ => return Err(fail("not a boolean")),
            }),
            Column::I8(b) => b.append_value(parse::narrow(cell).map_err(fail)?),
            Column::I16(b) => b.append_value(parse::narrow(cell).map_err(fail)?),
            Column::I32(b) => b.append_value(parse::narrow(cell).map_err(fail)?),
            Column::I64(b) => b.append_value(parse::int(cell).map_err(fail)?),
            Column::U64(b) => b.append_value(parse::uint(cell).map_err(fail)?),
            Column::F32(b) => b.append_value(parse::fallback_number(cell).map_err(fail)?),
            Column::F64(b) => b.append_value(parse::fallback_number(cell).map_err(fail)?),
            Column::Text(b) | Column::ViaCast(b) => {
                b.append_value(parse::text(cell).map_err(fail)?)
            }
            Column::LargeText(b) => b.append_value(parse::text(cell).map_err(fail)?),
            Column::Binary(b) => b.append_value(cell),
            Column::LargeBinary(b) => b.append_value(cell),
            Column::Decimal(b, precision, scale) => {
                b.append_value(parse::decimal128(cell, *precision, *scale).map_err(fail)?)
            }
            Column::Date(b) => b.append_value(parse::date32(cell).map_err(fail)?),
            Column::Timestamp(b, unit) => {
                b.append_value(parse::timestamp(cell, *unit).map_err(fail)?)
            }
            Column::Instant(b, unit) => b.append_value(parse::instant(cell, *unit).map_err(fail)?),
            Column::Time(b) => b.append_value(parse::time_micros(cell).map_err(fail)?),
            Column::Nested(buf, n) => {
                let json = nested_to_json(parse::text(cell).map_err(fail)?)
                    .map_err(|e| fail(&e.to_string()))?;
                buf.extend_from_slice(b"{\"v\":");
                buf.extend_from_slice(json.as_bytes());
                buf.extend_from_slice(b"}\n");
                *n += 1;
            }
        }
        Ok(())
    }

    /// Marks the end of a row.
    pub fn end_row(&mut self) {
        self.rows += 1;
    }

    /// The buffered rows as one batch; the decoder is empty afterwards.
    pub fn finish(&mut self) -> Result<RecordBatch, ReadError> {
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(self.columns.len());
        for (column, field) in self.columns.iter_mut().zip(self.schema.fields()) {
            let fail = |reason: String| ReadError::Decode {
                column: field.name().clone(),
                arrow_type: field.data_type().to_string(),
                reason,
            };
            let array: ArrayRef = match column {
                Column::Bool(b) => Arc::new(b.finish()),
                Column::I8(b) => Arc::new(b.finish()),
                Column::I16(b) => Arc::new(b.finish()),
                Column::I32(b) => Arc::new(b.finish()),
                Column::I64(b) => Arc::new(b.finish()),
                Column::U64(b) => Arc::new(b.finish()),
                Column::F32(b) => Arc::new(b.finish()),
                Column::F64(b) => Arc::new(b.finish()),
                Column::Text(b) => Arc::new(b.finish()),
                Column::LargeText(b) => Arc::new(b.finish()),
                Column::Binary(b) => Arc::new(b.finish()),
                Column::LargeBinary(b) => Arc::new(b.finish()),
                Column::Time(b) => Arc::new(b.finish()),
                Column::Decimal(b, _, _) => Arc::new(b.finish()),
                Column::Date(b) => Arc::new(b.finish()),
                Column::Timestamp(b, _) | Column::Instant(b, _) => make_array(
                    b.finish()
                        .into_data()
                        .into_builder()
                        .data_type(field.data_type().clone())
                        .build()
                        .map_err(|e| fail(e.to_string()))?,
                ),
                Column::ViaCast(b) => {
                    let text = b.finish();
                    cast_with_options(
                        &text,
                        field.data_type(),
                        &CastOptions {
                            safe: false,
                            ..CastOptions::default()
                        },
                    )
                    .map_err(|e| fail(without_quoted(&e.to_string())))?
                }
                Column::Nested(buf, n) => {
                    let decode_type = nested_decode_type(field.data_type());
                    let schema = Arc::new(Schema::new(vec![Field::new(
                        "v",
                        decode_type.clone(),
                        true,
                    )]));
                    let mut decoder = arrow::json::ReaderBuilder::new(schema)
                        .with_batch_size((*n).max(1))
                        .build_decoder()
                        .map_err(|e| fail(e.to_string()))?;
                    decoder.decode(buf).map_err(|e| fail(e.to_string()))?;
                    let batch = decoder
                        .flush()
                        .map_err(|e| fail(e.to_string()))?
                        .ok_or_else(|| fail("no rows decoded".into()))?;
                    buf.clear();
                    *n = 0;
                    let decoded = batch.column(0).clone();
                    if &decode_type == field.data_type() {
                        decoded
                    } else {
                        let options = CastOptions {
                            safe: false,
                            ..CastOptions::default()
                        };
                        cast_with_options(&decoded, field.data_type(), &options)
                            .map_err(|e| fail(without_quoted(&e.to_string())))?
                    }
                }
            };
            arrays.push(array);
        }
        let rows = self.rows;
        self.rows = 0;
        self.bytes = 0;
        let options = arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(self.schema.clone(), arrays, &options).map_err(|e| {
            ReadError::Decode {
                column: "(batch)".into(),
                arrow_type: "record batch".into(),
                reason: e.to_string(),
            }
        })
    }

    /// Whether the builders hold nothing.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }
}

impl std::fmt::Debug for RowDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowDecoder")
            .field("schema", &self.schema)
            .field("rows", &self.rows)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{Decimal128Type, Int32Type, TimestampMillisecondType};

    /// Nested text as Doris prints it: booleans `1`/`0`, NaN and infinities unquoted (both
    /// spellings), a date quoted; a nested type with text inside refused before any row.
    #[test]
    fn nested_text_is_read_by_its_type_or_refused() {
        let list = |t: DataType| DataType::List(Arc::new(Field::new("item", t, true)));
        let schema = Arc::new(Schema::new(vec![
            Field::new("flags", list(DataType::Boolean), true),
            Field::new("xs", list(DataType::Float64), true),
            Field::new("days", list(DataType::Date32), true),
        ]));
        let mut d = RowDecoder::new(schema).unwrap();
        let cells: [&[u8]; 3] = [
            b"[1, 0, null]",
            b"[1.5, nan, -inf, NaN, Infinity, -Infinity]",
            b"[\"2024-02-29\", null]",
        ];
        for (i, cell) in cells.iter().enumerate() {
            d.push(i, Some(cell)).unwrap();
        }
        d.end_row();
        let b = d.finish().unwrap();
        let flags = b.column(0).as_list::<i32>().value(0);
        let flags = flags.as_boolean();
        assert!(flags.value(0) && !flags.value(1) && flags.is_null(2));
        let xs = b.column(1).as_list::<i32>().value(0);
        let xs = xs.as_primitive::<arrow::datatypes::Float64Type>();
        assert_eq!(xs.value(0), 1.5);
        assert!(xs.value(1).is_nan() && xs.value(3).is_nan());
        assert_eq!(
            [xs.value(2), xs.value(4), xs.value(5)],
            [f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY]
        );
        let days = b.column(2).as_list::<i32>().value(0);
        assert_eq!(
            days.as_primitive::<arrow::datatypes::Date32Type>().value(0),
            19_782
        );
        for text_inside in [
            list(DataType::Utf8),
            DataType::Struct(
                vec![
                    Field::new("a", DataType::Int32, true),
                    Field::new("b", DataType::LargeUtf8, true),
                ]
                .into(),
            ),
            list(list(DataType::Binary)),
        ] {
            let schema = Arc::new(Schema::new(vec![Field::new("c", text_inside, true)]));
            let e = RowDecoder::new(schema).unwrap_err().to_string();
            assert!(
                e.contains("column c") && e.contains("flight") && e.contains("61119"),
                "{e}"
            );
        }
    }

    #[test]
    fn rows_decode_into_typed_arrays() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("i", DataType::Int32, true),
            Field::new("d", DataType::Decimal128(20, 6), true),
            Field::new("ts", DataType::Timestamp(TimeUnit::Millisecond, None), true),
            Field::new("day", DataType::Date32, true),
            Field::new("ok", DataType::Boolean, true),
            Field::new("t", DataType::Duration(TimeUnit::Microsecond), true),
            Field::new(
                "tags",
                DataType::List(Arc::new(Field::new("item", DataType::Int32, true))),
                true,
            ),
            Field::new("name", DataType::LargeUtf8, true),
            Field::new("raw", DataType::LargeBinary, true),
        ]));
        let mut d = RowDecoder::new(schema).unwrap();
        let rows: [[Option<&[u8]>; 9]; 2] = [
            [
                Some(b"-7"),
                Some(b"12.340000"),
                Some(b"2024-01-31 12:00:00.123"),
                Some(b"2024-01-31"),
                Some(b"1"),
                Some(b"-838:59:59.000001"),
                Some(b"[1, null, 3]"),
                Some("Zoë".as_bytes()),
                Some(b"\x00\xff"),
            ],
            [None, None, None, None, None, None, None, None, None],
        ];
        for row in rows {
            for (i, cell) in row.iter().enumerate() {
                d.push(i, *cell).unwrap();
            }
            d.end_row();
        }
        let b = d.finish().unwrap();
        assert_eq!(b.num_rows(), 2);
        assert_eq!(b.column(0).as_primitive::<Int32Type>().value(0), -7);
        assert_eq!(
            b.column(1).as_primitive::<Decimal128Type>().value(0),
            12_340_000
        );
        assert_eq!(
            b.column(2)
                .as_primitive::<TimestampMillisecondType>()
                .value(0),
            1_706_702_400_123
        );
        assert_eq!(b.column(7).as_string::<i64>().value(0), "Zoë");
        assert_eq!(b.column(8).as_binary::<i64>().value(0), b"\x00\xff");
        let tags = b.column(6).as_list::<i32>().value(0);
        assert_eq!(tags.len(), 3);
        assert!(tags.is_null(1));
        assert!(b.columns().iter().all(|c| c.is_null(1)));
        let mut bad = RowDecoder::new(Arc::new(Schema::new(vec![Field::new(
            "day",
            DataType::Date32,
            true,
        )])))
        .unwrap();
        let e = bad.push(0, Some(b"0000-00-00")).unwrap_err();
        assert!(e.to_string().contains("column day"), "{e}");
        assert!(!e.to_string().contains("0000-00-00"), "{e}");
        // DECIMAL256 still goes through arrow's cast when the batch is finished.
        let mut wide = RowDecoder::new(Arc::new(Schema::new(vec![Field::new(
            "big",
            DataType::Decimal256(40, 2),
            true,
        )])))
        .unwrap();
        wide.push(0, Some(b"12345678901234567890123456789012345678.25"))
            .unwrap();
        wide.end_row();
        wide.push(0, Some(b"x'1'")).unwrap();
        wide.end_row();
        let e = wide.finish().unwrap_err();
        assert!(e.to_string().contains("column big"), "{e}");
        assert!(!e.to_string().contains("x'1'"), "{e}");
    }
}
