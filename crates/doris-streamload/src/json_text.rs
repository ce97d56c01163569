//! Nested values (lists, structs, maps) as JSON text, for a JSON column: each value is
//! written by arrow's JSON writer (text as JSON strings, numbers as JSON numbers, dates and
//! timestamps as ISO text) and travels as a string, which Doris parses as the column's JSON.
//! A float that is not finite has no JSON form (the writer would make it `null`): refused.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringBuilder};
use arrow::datatypes::{Float16Type, Float32Type, Float64Type};
use arrow_schema::{DataType, Field, Schema};

use crate::error::StreamLoadError;

/// The JSON text of every value of `values` (a Utf8 array; nulls stay null). `column` names
/// the column in an error; no value is shown.
pub(crate) fn json_text(column: &str, values: &ArrayRef) -> Result<ArrayRef, StreamLoadError> {
    let rejected = |reason: String| StreamLoadError::ValueRejected {
        column: column.to_owned(),
        reason,
    };
    if has_non_finite(values.as_ref()) {
        return Err(rejected(
            "a float inside a nested value is NaN or infinite, which JSON cannot hold".into(),
        ));
    }
    let field = Field::new("v", values.data_type().clone(), true);
    let batch = RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![values.clone()])
        .map_err(|e| rejected(format!("cannot be written as JSON: {e}")))?;
    let mut lines = Vec::new();
    {
        // Explicit nulls: a null inside (a struct field, a map value) stays `null`, never
        // left out.
        let mut writer = arrow::json::WriterBuilder::new()
            .with_explicit_nulls(true)
            .build::<_, arrow::json::writer::LineDelimited>(&mut lines);
        writer
            .write(&batch)
            .and_then(|()| writer.finish())
            .map_err(|e| rejected(format!("cannot be written as JSON: {e}")))?;
    }
    let text = String::from_utf8(lines)
        .map_err(|_| rejected("the JSON writer made text that is not UTF-8".into()))?;
    let mut out = StringBuilder::with_capacity(values.len(), text.len());
    let mut rows = text.lines();
    for i in 0..values.len() {
        // One line per row: `{"v":<value>}`.
        let line = rows
            .next()
            .ok_or_else(|| rejected("the JSON writer made fewer lines than rows".into()))?;
        if values.is_null(i) {
            out.append_null();
            continue;
        }
        let value = line
            .strip_prefix("{\"v\":")
            .and_then(|rest| rest.strip_suffix('}'))
            .ok_or_else(|| rejected("the JSON writer made an unexpected line".into()))?;
        out.append_value(value);
    }
    Ok(Arc::new(out.finish()))
}

/// Whether a float anywhere inside `array` (its own valid slots) is NaN or infinite.
fn has_non_finite(array: &dyn Array) -> bool {
    let valid = |i: usize| array.is_valid(i);
    match array.data_type() {
        DataType::Float16 => {
            let a = array.as_primitive::<Float16Type>();
            (0..a.len()).any(|i| valid(i) && !a.value(i).is_finite())
        }
        DataType::Float32 => {
            let a = array.as_primitive::<Float32Type>();
            (0..a.len()).any(|i| valid(i) && !a.value(i).is_finite())
        }
        DataType::Float64 => {
            let a = array.as_primitive::<Float64Type>();
            (0..a.len()).any(|i| valid(i) && !a.value(i).is_finite())
        }
        DataType::List(_) => has_non_finite(array.as_list::<i32>().values().as_ref()),
        DataType::LargeList(_) => has_non_finite(array.as_list::<i64>().values().as_ref()),
        DataType::FixedSizeList(..) => has_non_finite(array.as_fixed_size_list().values().as_ref()),
        DataType::Struct(_) => array
            .as_struct()
            .columns()
            .iter()
            .any(|c| has_non_finite(c.as_ref())),
        DataType::Map(..) => has_non_finite(array.as_map().values().as_ref()),
        DataType::Dictionary(..) => array
            .as_any_dictionary_opt()
            .is_some_and(|d| has_non_finite(d.values().as_ref())),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use arrow::array::{
        Decimal128Array, Float64Array, Int32Array, ListArray, MapBuilder, StringArray, StructArray,
        TimestampMicrosecondArray,
    };
    use arrow::array::{Int64Builder, StringBuilder as Strings};
    use arrow::datatypes::Int32Type;

    use super::*;

    fn texts(values: ArrayRef) -> Vec<Option<String>> {
        let out = json_text("c", &values).unwrap();
        out.as_string::<i32>()
            .iter()
            .map(|v| v.map(str::to_owned))
            .collect()
    }

    #[test]
    fn lists_structs_and_maps_become_their_json_text() {
        let list = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
            Some(vec![Some(1), None, Some(3)]),
            None,
            Some(vec![]),
        ]);
        assert_eq!(
            texts(Arc::new(list)),
            vec![Some("[1,null,3]".into()), None, Some("[]".into())]
        );
        let ts = TimestampMicrosecondArray::from(vec![Some(1_704_164_645_123_456), None]);
        let s = StructArray::from(vec![
            (
                Arc::new(Field::new("name", DataType::Utf8, true)),
                Arc::new(StringArray::from(vec![Some("a \"q\"\n"), Some("é")])) as ArrayRef,
            ),
            (
                Arc::new(Field::new("n", DataType::Int32, true)),
                Arc::new(Int32Array::from(vec![Some(7), None])) as ArrayRef,
            ),
            (
                Arc::new(Field::new("at", ts.data_type().clone(), true)),
                Arc::new(ts) as ArrayRef,
            ),
            (
                Arc::new(Field::new("d", DataType::Decimal128(5, 2), true)),
                Arc::new(
                    Decimal128Array::from(vec![Some(120), Some(-5)])
                        .with_precision_and_scale(5, 2)
                        .unwrap(),
                ) as ArrayRef,
            ),
        ]);
        let got = texts(Arc::new(s));
        let first: serde_json::Value = serde_json::from_str(got[0].as_deref().unwrap()).unwrap();
        assert_eq!(first["name"], "a \"q\"\n");
        assert_eq!(first["n"], 7);
        assert_eq!(first["at"], "2024-01-02T03:04:05.123456");
        let second_text = got[1].as_deref().unwrap();
        assert!(second_text.contains("\"n\":null"), "{second_text}");
        let second: serde_json::Value = serde_json::from_str(got[1].as_deref().unwrap()).unwrap();
        assert_eq!(second["name"], "é");
        // Decimals keep their digits.
        assert!(got[0].as_deref().unwrap().contains("1.20"), "{:?}", got[0]);
        let mut map = MapBuilder::new(None, Strings::new(), Int64Builder::new());
        map.keys().append_value("k");
        map.values().append_value(5);
        map.keys().append_value("z");
        map.values().append_null();
        map.append(true).unwrap();
        map.append(false).unwrap();
        assert_eq!(
            texts(Arc::new(map.finish())),
            vec![Some("{\"k\":5,\"z\":null}".into()), None]
        );
    }

    #[test]
    fn a_float_that_is_not_finite_is_refused_without_its_value() {
        let list = ListArray::new(
            Arc::new(Field::new("item", DataType::Float64, true)),
            arrow::buffer::OffsetBuffer::from_lengths([2]),
            Arc::new(Float64Array::from(vec![1.5, f64::NAN])),
            None,
        );
        let e = json_text("c", &(Arc::new(list) as ArrayRef)).unwrap_err();
        assert!(e.to_string().contains("NaN or infinite"), "{e}");
    }
}
