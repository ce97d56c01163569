//! A write target's column rules applied to record batches before they are uploaded: the
//! value-checked casts, NOT NULL, and the value checks the types cannot guarantee (CHAR and
//! VARCHAR lengths, LARGEINT text, JSON text, IP addresses). Doris would filter, truncate or
//! NULL such values silently (or fail the whole load in strict mode); here the batch is
//! refused before any byte is sent, with an error that names the column and the rule,
//! never the value.
//!
//! The rules come from `doris_sql::check_write_target` ([`ColumnRule::from_write`]) and are
//! serialisable, so a driver can check the table once and hand the rules to its workers.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::compute::{CastOptions, cast_with_options};
use arrow::util::display::FormatOptions;
use arrow_schema::{DataType, Field, FieldRef, Schema};
use doris_sql::{ColumnWrite, NestedStep, ValueCheck};
use serde::{Deserialize, Serialize};

use crate::error::StreamLoadError;

/// How one data column is written (serialisable; see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnRule {
    /// The data column's name.
    pub name: String,
    /// The Arrow type (as `DataType`'s text) to cast to, value by value, when narrower.
    pub cast_to: Option<String>,
    /// NOT NULL in Doris.
    pub not_null: bool,
    /// Checks on the values.
    pub checks: Vec<ValueCheck>,
    /// Send each nested value as its JSON text (a JSON column written from a list, struct or
    /// map).
    #[serde(default)]
    pub json_text: bool,
}

impl ColumnRule {
    /// The rule of one column of a checked write target.
    pub fn from_write(write: &ColumnWrite) -> Self {
        Self {
            name: write.name.clone(),
            cast_to: write.cast_to.as_ref().map(ToString::to_string),
            not_null: write.not_null,
            checks: write.value_checks.clone(),
            json_text: write.json_text,
        }
    }
}

/// Rules ready to apply (cast types parsed once).
#[derive(Debug, Clone)]
pub struct BatchRules(Vec<(ColumnRule, Option<DataType>)>);

fn rejected(column: &str, reason: impl std::fmt::Display) -> StreamLoadError {
    StreamLoadError::ValueRejected {
        column: column.to_owned(),
        reason: reason.to_string(),
    }
}

impl BatchRules {
    /// Parses the rules' cast types.
    pub fn new(rules: Vec<ColumnRule>) -> Result<Self, StreamLoadError> {
        rules
            .into_iter()
            .map(|r| {
                let cast = r
                    .cast_to
                    .as_deref()
                    .map(str::parse::<DataType>)
                    .transpose()
                    .map_err(|e| StreamLoadError::Config(format!("column {}: {e}", r.name)))?;
                Ok((r, cast))
            })
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// Applies every rule to `batch`: the batch as it will be uploaded, or the first
    /// column and rule it breaks.
    pub fn apply(&self, batch: RecordBatch) -> Result<RecordBatch, StreamLoadError> {
        let schema = batch.schema();
        let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
        let mut fields: Vec<FieldRef> = schema.fields().iter().cloned().collect();
        for (rule, cast) in &self.0 {
            let Some(i) = fields.iter().position(|f| f.name() == &rule.name) else {
                return Err(rejected(&rule.name, "the column is missing from a batch"));
            };
            if rule.not_null && columns[i].null_count() > 0 {
                return Err(rejected(
                    &rule.name,
                    "the column is NOT NULL in Doris but the data has nulls",
                ));
            }
            if let Some(target) = cast {
                let options = CastOptions {
                    safe: false,
                    format_options: FormatOptions::default(),
                };
                let cast = cast_with_options(&columns[i], target, &options).map_err(|_| {
                    rejected(
                        &rule.name,
                        format!("a value does not fit the table's type {target}"),
                    )
                })?;
                if is_float(columns[i].data_type()) {
                    exactly_equal(&rule.name, &columns[i], &cast, &options)?;
                }
                columns[i] = cast;
                fields[i] = Arc::new(Field::clone(&fields[i]).with_data_type(target.clone()));
            }
            for check in &rule.checks {
                check_values(&rule.name, &columns[i], check)?;
            }
            if rule.json_text {
                columns[i] = crate::json_text::json_text(&rule.name, &columns[i])?;
                fields[i] = Arc::new(Field::clone(&fields[i]).with_data_type(DataType::Utf8));
            }
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(|e| rejected("", e))
    }
}

fn is_float(t: &DataType) -> bool {
    matches!(t, DataType::Float32 | DataType::Float64)
}

/// A float column cast into a decimal: every value must come back unchanged when the decimal
/// is cast back to the float type (0.25 into DECIMAL(p, 2) does; 0.125 would be rounded, and
/// is refused).
fn exactly_equal(
    column: &str,
    floats: &ArrayRef,
    decimals: &ArrayRef,
    options: &CastOptions<'_>,
) -> Result<(), StreamLoadError> {
    use arrow::datatypes::Float64Type;
    let inexact = || {
        rejected(
            column,
            format!(
                "a value has no exact form in the table's type {}",
                decimals.data_type()
            ),
        )
    };
    let back = cast_with_options(decimals, floats.data_type(), options).map_err(|_| inexact())?;
    // Float32 widens to Float64 exactly, so both sides compare as f64.
    let wide = |a: &ArrayRef| cast_with_options(a, &DataType::Float64, options);
    let (original, back) = (
        wide(floats).map_err(|_| inexact())?,
        wide(&back).map_err(|_| inexact())?,
    );
    let (original, back) = (
        original.as_primitive::<Float64Type>(),
        back.as_primitive::<Float64Type>(),
    );
    if original
        .iter()
        .zip(back.iter())
        .any(|(a, b)| matches!((a, b), (Some(a), Some(b)) if a != b))
    {
        return Err(inexact());
    }
    Ok(())
}

/// The strings of a string column (any offset width or view), nulls skipped; `None` for
/// other types (their checks do not apply to them).
fn strings(array: &ArrayRef) -> Option<Box<dyn Iterator<Item = &str> + '_>> {
    match array.data_type() {
        DataType::Utf8 => Some(Box::new(array.as_string::<i32>().iter().flatten())),
        DataType::LargeUtf8 => Some(Box::new(array.as_string::<i64>().iter().flatten())),
        DataType::Utf8View => Some(Box::new(array.as_string_view().iter().flatten())),
        _ => None,
    }
}

/// The values one step inside a nested array (`None` when the array is not of that shape:
/// the check does not apply). A list's or map's child holds only what its valid slots
/// point to once sliced to its offsets' range.
fn step_into(array: &ArrayRef, step: NestedStep) -> Option<ArrayRef> {
    match (step, array.data_type()) {
        (NestedStep::Element, DataType::List(_)) => {
            let list = array.as_list::<i32>();
            let (start, end) = offset_range(list.value_offsets());
            Some(list.values().slice(start, end - start))
        }
        (NestedStep::Element, DataType::LargeList(_)) => {
            let list = array.as_list::<i64>();
            let (start, end) = offset_range(list.value_offsets());
            Some(list.values().slice(start, end - start))
        }
        (NestedStep::Element, DataType::FixedSizeList(_, n)) => {
            let list = array.as_fixed_size_list();
            let n = usize::try_from(*n).ok()?;
            Some(list.values().slice(list.offset() * n, list.len() * n))
        }
        (NestedStep::MapKey | NestedStep::MapValue, DataType::Map(_, _)) => {
            let map = array.as_map();
            let (start, end) = offset_range(map.value_offsets());
            let side = if step == NestedStep::MapKey {
                map.keys()
            } else {
                map.values()
            };
            Some(side.slice(start, end - start))
        }
        (NestedStep::Field(i), DataType::Struct(_)) => array.as_struct().columns().get(i).cloned(),
        _ => None,
    }
}

fn offset_range<O: arrow::array::OffsetSizeTrait>(offsets: &[O]) -> (usize, usize) {
    let first = offsets.first().map_or(0, |o| o.as_usize());
    let last = offsets.last().map_or(0, |o| o.as_usize());
    (first, last.max(first))
}

fn check_values(name: &str, array: &ArrayRef, check: &ValueCheck) -> Result<(), StreamLoadError> {
    if let ValueCheck::Nested { path, check } = check {
        let mut inner = array.clone();
        for step in path {
            match step_into(&inner, *step) {
                Some(next) => inner = next,
                None => return Ok(()),
            }
        }
        let place = path
            .iter()
            .map(|s| match s {
                NestedStep::Element => "element".to_owned(),
                NestedStep::MapKey => "key".to_owned(),
                NestedStep::MapValue => "value".to_owned(),
                NestedStep::Field(i) => format!("field {i}"),
            })
            .collect::<Vec<_>>()
            .join(" > ");
        return check_values(&format!("{name} ({place})"), &inner, check);
    }
    let Some(mut values) = strings(array) else {
        return Ok(());
    };
    let (bad, reason) = match check {
        ValueCheck::MaxLength { limit, characters } => {
            let limit = *limit as usize;
            let unit = if *characters { "characters" } else { "bytes" };
            let long = if *characters {
                values.any(|s| s.chars().count() > limit)
            } else {
                values.any(|s| s.len() > limit)
            };
            (
                long,
                format!("a value is longer than the column's {limit} {unit}"),
            )
        }
        ValueCheck::LargeIntText => (
            values.any(|s| s.trim().parse::<i128>().is_err()),
            "a value is not a LARGEINT (an integer of at most 128 bits)".to_owned(),
        ),
        ValueCheck::JsonText => (
            values.any(|s| serde_json::from_str::<serde::de::IgnoredAny>(s).is_err()),
            "a value is not valid JSON".to_owned(),
        ),
        ValueCheck::IpText => (
            values.any(|s| s.trim().parse::<std::net::IpAddr>().is_err()),
            "a value is not an IPv4 or IPv6 address".to_owned(),
        ),
        // Handled above.
        ValueCheck::Nested { .. } => (false, String::new()),
    };
    if bad {
        Err(rejected(name, reason))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use arrow::array::{Int64Array, StringArray};

    fn one(name: &str, values: Vec<Option<&str>>) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new(name, DataType::Utf8, true)]));
        RecordBatch::try_new(schema, vec![Arc::new(StringArray::from(values))]).unwrap()
    }

    fn rules(check: ValueCheck) -> BatchRules {
        BatchRules::new(vec![ColumnRule {
            name: "c".into(),
            cast_to: None,
            not_null: false,
            checks: vec![check],
            json_text: false,
        }])
        .unwrap()
    }

    #[test]
    fn every_value_check_refuses_what_doris_would_change_and_names_no_value() {
        let cases = [
            (
                ValueCheck::MaxLength {
                    limit: 3,
                    characters: false,
                },
                vec![Some("żo"), None],
                vec![Some("żół"), Some("abcd")],
            ),
            (
                ValueCheck::MaxLength {
                    limit: 3,
                    characters: true,
                },
                vec![Some("żół")],
                vec![Some("abcd")],
            ),
            (
                ValueCheck::LargeIntText,
                vec![
                    Some("-170141183460469231731687303715884105728"),
                    Some(" 42 "),
                ],
                vec![Some("170141183460469231731687303715884105728"), Some("4.5")],
            ),
            (
                ValueCheck::JsonText,
                vec![Some(r#"{"a": [1, null]}"#), Some("3"), None],
                vec![Some("{'a': 1}"), Some("")],
            ),
            (
                ValueCheck::IpText,
                vec![Some("10.0.0.1"), Some("::1"), Some("2001:db8::2")],
                vec![Some("10.0.0.256"), Some("host.example")],
            ),
        ];
        for (check, good, bad) in cases {
            let r = rules(check.clone());
            r.apply(one("c", good)).unwrap();
            for value in bad {
                let e = r
                    .apply(one("c", vec![Some("10.0.0.1"), value]))
                    .unwrap_err();
                assert!(
                    matches!(e, StreamLoadError::ValueRejected { .. }),
                    "{check:?}: {e}"
                );
                let shown = e.to_string();
                assert!(shown.contains("column c"), "{shown}");
                assert!(
                    !shown.contains(value.unwrap()) || value.unwrap().is_empty(),
                    "{shown}"
                );
            }
        }
    }

    #[test]
    fn casts_are_value_checked_and_not_null_is_enforced() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)]));
        let batch = |v: Vec<Option<i64>>| {
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(v))]).unwrap()
        };
        let r = BatchRules::new(vec![ColumnRule {
            name: "id".into(),
            cast_to: Some("Int32".into()),
            not_null: true,
            checks: vec![],
            json_text: false,
        }])
        .unwrap();
        let out = r.apply(batch(vec![Some(1), Some(-2)])).unwrap();
        assert_eq!(out.schema().field(0).data_type(), &DataType::Int32);
        assert!(
            r.apply(batch(vec![Some(1 << 40)]))
                .unwrap_err()
                .to_string()
                .contains("does not fit")
        );
        assert!(
            r.apply(batch(vec![None]))
                .unwrap_err()
                .to_string()
                .contains("NOT NULL")
        );
        // The rules travel as JSON from a driver to its workers.
        let json =
            serde_json::to_string(&r.0.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>()).unwrap();
        let back: Vec<ColumnRule> = serde_json::from_str(&json).unwrap();
        assert_eq!(back[0].cast_to.as_deref(), Some("Int32"));
    }

    #[test]
    fn floats_enter_a_decimal_only_when_every_value_converts_exactly() {
        use arrow::array::{Float32Array, Float64Array};
        let rule = |t: DataType| {
            BatchRules::new(vec![ColumnRule {
                name: "x".into(),
                cast_to: Some("Decimal128(6, 2)".into()),
                not_null: false,
                checks: vec![],
                json_text: false,
            }])
            .map(|r| (r, Schema::new(vec![Field::new("x", t, true)])))
            .unwrap()
        };
        let (r, schema) = rule(DataType::Float64);
        let f64s = |v: Vec<Option<f64>>| {
            RecordBatch::try_new(
                Arc::new(schema.clone()),
                vec![Arc::new(Float64Array::from(v))],
            )
            .unwrap()
        };
        let out = r
            .apply(f64s(vec![
                Some(0.1),
                Some(-2.25),
                None,
                Some(-0.0),
                Some(9999.99),
            ]))
            .unwrap();
        assert_eq!(
            out.column(0)
                .as_primitive::<arrow::datatypes::Decimal128Type>()
                .values(),
            &[10, -225, 0, 0, 999_999]
        );
        for bad in [0.125, 1e-3, 10_000.0, f64::NAN, f64::INFINITY] {
            let e = r.apply(f64s(vec![Some(1.0), Some(bad)])).unwrap_err();
            assert!(
                matches!(e, StreamLoadError::ValueRejected { .. }),
                "{bad}: {e}"
            );
            assert!(!e.to_string().contains(&bad.to_string()), "{e}");
        }
        // FLOAT values compare as FLOAT: 0.1f32 is written as 0.10.
        let (r, schema) = rule(DataType::Float32);
        let f32s = RecordBatch::try_new(
            Arc::new(schema),
            vec![Arc::new(Float32Array::from(vec![Some(0.1f32), Some(2.5)]))],
        )
        .unwrap();
        let out = r.apply(f32s).unwrap();
        assert_eq!(
            out.column(0)
                .as_primitive::<arrow::datatypes::Decimal128Type>()
                .values(),
            &[10, 250]
        );
    }

    /// The rules of a column `p` of Doris type `doris` written from `data_type`.
    fn rules_for(data_type: &DataType, doris: &str) -> BatchRules {
        let doris: doris_sql::DorisType = doris.parse().unwrap();
        let plan = doris_sql::check_writable(data_type, &doris).unwrap();
        BatchRules::new(vec![ColumnRule {
            name: "p".into(),
            cast_to: None,
            not_null: false,
            checks: plan.value_checks,
            json_text: false,
        }])
        .unwrap()
    }

    #[test]
    fn nested_values_are_checked_where_their_rule_applies() {
        use arrow::array::{ListArray, StructArray};
        let names = Arc::new(StringArray::from(vec![Some("abc"), Some("toolong"), None]));
        let notes = Arc::new(StringArray::from(vec![
            Some("a long note"),
            None,
            Some("x"),
        ]));
        let fields = vec![
            Field::new("name", DataType::Utf8, true),
            Field::new("note", DataType::Utf8, true),
        ];
        let people = StructArray::new(
            fields.clone().into(),
            vec![names as ArrayRef, notes as ArrayRef],
            None,
        );
        let rules = rules_for(people.data_type(), "STRUCT<name:VARCHAR(3),note:TEXT>");
        let batch = |array: ArrayRef| {
            let schema = Schema::new(vec![Field::new("p", array.data_type().clone(), true)]);
            RecordBatch::try_new(Arc::new(schema), vec![array]).unwrap()
        };
        let err = rules.apply(batch(Arc::new(people.clone()))).unwrap_err();
        // The VARCHAR(3) field is checked, the TEXT field (with an 11-byte value) is not.
        assert_eq!(
            err.to_string(),
            "column p (field 0): a value is longer than the column's 3 bytes"
        );
        assert!(!err.to_string().contains("toolong"));
        assert!(rules.apply(batch(Arc::new(people.slice(0, 1)))).is_ok());

        // ARRAY<JSON>: every element, and only the elements a sliced batch holds.
        let json = Arc::new(StringArray::from(vec![
            Some("{}"),
            Some("[1]"),
            Some("{bad"),
        ]));
        let offsets = arrow::buffer::OffsetBuffer::new(vec![0i32, 2, 3].into());
        let item = Arc::new(Field::new("item", DataType::Utf8, true));
        let docs = ListArray::new(item, offsets, json, None);
        let rules = rules_for(docs.data_type(), "ARRAY<JSON>");
        let err = rules.apply(batch(Arc::new(docs.clone()))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "column p (element): a value is not valid JSON"
        );
        assert!(rules.apply(batch(Arc::new(docs.slice(0, 1)))).is_ok());
    }
}
