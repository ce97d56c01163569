//! Which Arrow types may be written into which Doris column.
//!
//! The rule is *no silent change of value*: a write is allowed when every value of the
//! Arrow type has an exact representation in the Doris type. Value-dependent limits that
//! no type can promise (VARCHAR byte length, LARGEINT digits arriving as text, a NULL in a
//! NOT NULL column) are for the writer to check on the data, and are listed in
//! [`WritePlan::value_checks`].
//!
//! | Arrow | Doris columns it may be written into |
//! |---|---|
//! | Null | any |
//! | Boolean | BOOLEAN |
//! | Int8…Int64, UInt8…UInt64 | any integer column wide enough for every value; LARGEINT; DECIMAL(p, s) with p − s ≥ the type's digits; FLOAT (≤ 16-bit) and DOUBLE (≤ 32-bit), where exact |
//! | Float16 / Float32 / Float64 | FLOAT (≤ 32-bit), DOUBLE; a write target also takes Float32/Float64 into DECIMAL by a value-checked cast (each value must come back unchanged) |
//! | Decimal128/256(p, s) | DECIMAL(P, S) with S ≥ s and P − S ≥ p − s; LARGEINT when s = 0 and p ≤ 38 |
//! | Utf8 / LargeUtf8 / Utf8View | CHAR, VARCHAR, STRING, JSON, VARIANT, IPV4, IPV6, LARGEINT (digits, checked by Doris strict mode) |
//! | Binary / LargeBinary / BinaryView / FixedSizeBinary | VARBINARY |
//! | Date32 / Date64 | DATE, DATETIME(p) |
//! | Timestamp(unit, no zone) | DATETIME(p) with p ≥ the unit's digits (s 0, ms 3, µs 6; ns never) |
//! | Timestamp(unit, zone) | refused: convert to naive UTC first (Doris DATETIME has no zone) |
//! | List / LargeList / FixedSizeList | ARRAY of a compatible element |
//! | Map | MAP of compatible key and value |
//! | Struct | STRUCT with the same field names (case-insensitive) in order, each compatible |
//! | List / LargeList / FixedSizeList / Struct / Map | JSON, each value sent as its JSON text ([`WritePlan::json_text`]) when everything inside has an exact JSON form: booleans, integers, finite floats, decimals, text, dates and naive timestamps (as ISO text), nested again; maps with text keys |
//! | Dictionary(_, V) | as V |
//!
//! ```
//! use arrow_schema::DataType;
//! use doris_sql::{check_writable, DorisType};
//! assert!(check_writable(&DataType::Int32, &DorisType::BigInt).is_ok());
//! assert!(check_writable(&DataType::Int64, &DorisType::Int).is_err());
//! ```

use arrow_schema::{DataType, TimeUnit};

use crate::types::DorisType;

/// A check the writer must make on the values, because the type cannot guarantee it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ValueCheck {
    /// Strings must not exceed this many bytes (VARCHAR) or characters (CHAR).
    MaxLength {
        /// The limit.
        limit: u32,
        /// True for CHAR (characters), false for VARCHAR (bytes).
        characters: bool,
    },
    /// Text must be a valid LARGEINT (at most 39 digits, in range).
    LargeIntText,
    /// Text must be valid JSON.
    JsonText,
    /// Text must be an IPv4 or IPv6 address.
    IpText,
    /// A check on the values inside a nested column (an ARRAY's elements, a MAP's keys or
    /// values, a STRUCT's field), reached by `path` from the column, outermost first.
    Nested {
        /// The steps from the column to the checked values.
        path: Vec<NestedStep>,
        /// The check on those values (never itself `Nested`).
        check: Box<ValueCheck>,
    },
}

/// One step into a nested Arrow value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NestedStep {
    /// The elements of a list.
    Element,
    /// The keys of a map.
    MapKey,
    /// The values of a map.
    MapValue,
    /// The struct field at this position.
    Field(usize),
}

impl ValueCheck {
    /// This check applied `step` deeper (paths stay flat: outermost step first).
    fn under(self, step: NestedStep) -> Self {
        match self {
            ValueCheck::Nested { mut path, check } => {
                path.insert(0, step);
                ValueCheck::Nested { path, check }
            }
            leaf => ValueCheck::Nested {
                path: vec![step],
                check: Box::new(leaf),
            },
        }
    }
}

/// Runs `check` with a fresh plan and adds its value checks to `plan`, each `step` deeper.
fn nested(
    plan: &mut WritePlan,
    step: NestedStep,
    check: impl FnOnce(&mut WritePlan) -> Result<(), String>,
) -> Result<(), String> {
    let mut inner = WritePlan::default();
    check(&mut inner)?;
    plan.value_checks
        .extend(inner.value_checks.into_iter().map(|c| c.under(step)));
    Ok(())
}

/// The outcome of a successful check: what the writer must still verify on the values.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WritePlan {
    /// Value-level checks, outermost first.
    pub value_checks: Vec<ValueCheck>,
    /// A nested value (list, struct, map) goes into a JSON column: the writer sends each
    /// value as its JSON text (non-finite floats inside refused on the values).
    pub json_text: bool,
}

/// Why an Arrow type cannot be written into a Doris column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Arrow {arrow} cannot be safely converted to Doris {doris}: {reason}")]
pub struct WriteIncompatibility {
    /// The Arrow type.
    pub arrow: String,
    /// The Doris type.
    pub doris: String,
    /// Why.
    pub reason: String,
}

/// Checks that every value of `arrow` can be written into a `doris` column unchanged.
///
/// ```
/// use arrow_schema::DataType;
/// use doris_sql::{check_writable, DorisType, ValueCheck};
/// let plan = check_writable(&DataType::Utf8, &"VARCHAR(16)".parse::<DorisType>().unwrap()).unwrap();
/// assert_eq!(plan.value_checks, vec![ValueCheck::MaxLength { limit: 16, characters: false }]);
/// let err = check_writable(&DataType::Float64, &DorisType::Float).unwrap_err();
/// assert!(err.to_string().contains("rounded"));
/// ```
pub fn check_writable(
    arrow: &DataType,
    doris: &DorisType,
) -> Result<WritePlan, WriteIncompatibility> {
    let mut plan = WritePlan::default();
    check(arrow, doris, &mut plan).map_err(|reason| WriteIncompatibility {
        arrow: arrow.to_string(),
        doris: doris.to_sql(),
        reason,
    })?;
    Ok(plan)
}

/// Decimal digits needed for every value of an integer type, and whether it is signed.
fn int_digits(t: &DataType) -> Option<(u8, u32)> {
    Some(match t {
        DataType::Int8 => (3, 8),
        DataType::Int16 => (5, 16),
        DataType::Int32 => (10, 32),
        DataType::Int64 => (19, 64),
        DataType::UInt8 => (3, 9),
        DataType::UInt16 => (5, 17),
        DataType::UInt32 => (10, 33),
        DataType::UInt64 => (20, 65),
        _ => return None,
    })
}

/// Signed bits a Doris integer column holds.
fn doris_int_bits(t: &DorisType) -> Option<u32> {
    Some(match t {
        DorisType::TinyInt => 8,
        DorisType::SmallInt => 16,
        DorisType::Int => 32,
        DorisType::BigInt => 64,
        DorisType::LargeInt => 128,
        _ => return None,
    })
}

fn check(arrow: &DataType, doris: &DorisType, plan: &mut WritePlan) -> Result<(), String> {
    use DataType as A;
    use DorisType as D;
    let refuse = || Err("no exact conversion".to_owned());
    match (arrow, doris) {
        (A::Null, _) => Ok(()),
        (A::Dictionary(_, value), _) => check(value, doris, plan),
        (A::Boolean, D::Boolean) => Ok(()),
        (a, d) if int_digits(a).is_some() => {
            // `bits` is the signed width needed to hold every value of the Arrow type.
            let (digits, bits) = int_digits(a).unwrap_or((0, 0));
            match d {
                _ if doris_int_bits(d).is_some() => {
                    if doris_int_bits(d).unwrap_or(0) >= bits {
                        Ok(())
                    } else {
                        Err("the column is narrower than the integer type".into())
                    }
                }
                D::Decimal { precision, scale } if precision - scale >= digits => Ok(()),
                D::Decimal { .. } => Err("the decimal has too few integer digits".into()),
                D::Float if bits <= 16 => Ok(()),
                D::Double if bits <= 32 => Ok(()),
                D::Float | D::Double => Err("the float cannot hold every integer exactly".into()),
                _ => refuse(),
            }
        }
        (A::Float16 | A::Float32, D::Float | D::Double) | (A::Float64, D::Double) => Ok(()),
        (A::Float64, D::Float) => Err("DOUBLE values would be rounded to FLOAT".into()),
        (A::Decimal128(p, s) | A::Decimal256(p, s), d) => {
            let (p, s) = (i16::from(*p), i16::from(*s));
            match d {
                D::Decimal { precision, scale } => {
                    let (pp, ss) = (i16::from(*precision), i16::from(*scale));
                    if ss >= s && pp - ss >= p - s {
                        Ok(())
                    } else {
                        Err(format!(
                            "DECIMAL({precision}, {scale}) cannot hold every value exactly"
                        ))
                    }
                }
                D::LargeInt if s == 0 && p <= 38 => Ok(()),
                _ => refuse(),
            }
        }
        (A::Utf8 | A::LargeUtf8 | A::Utf8View, d) => {
            match d {
                D::Char { length } => plan.value_checks.push(ValueCheck::MaxLength {
                    limit: *length,
                    characters: true,
                }),
                D::Varchar { length: Some(n) } => plan.value_checks.push(ValueCheck::MaxLength {
                    limit: *n,
                    characters: false,
                }),
                D::Varchar { length: None } | D::String | D::Variant => {}
                D::Json => plan.value_checks.push(ValueCheck::JsonText),
                D::Ipv4 | D::Ipv6 => plan.value_checks.push(ValueCheck::IpText),
                D::LargeInt => plan.value_checks.push(ValueCheck::LargeIntText),
                _ => return refuse(),
            }
            Ok(())
        }
        (
            A::Binary | A::LargeBinary | A::BinaryView | A::FixedSizeBinary(_),
            D::VarBinary { .. },
        ) => Ok(()),
        (A::Date32 | A::Date64, D::Date | D::DateTime { .. }) => Ok(()),
        (A::Timestamp(_, Some(_)), D::DateTime { .. }) => {
            Err("the timestamp has a time zone; convert it to naive UTC first".into())
        }
        (A::Timestamp(unit, None), D::DateTime { precision }) => {
            let needed = match unit {
                TimeUnit::Second => 0,
                TimeUnit::Millisecond => 3,
                TimeUnit::Microsecond => 6,
                TimeUnit::Nanosecond => 9,
            };
            if *precision >= needed {
                Ok(())
            } else {
                Err(format!(
                    "DATETIME({precision}) would truncate {unit:?} values"
                ))
            }
        }
        (
            A::List(_) | A::LargeList(_) | A::FixedSizeList(..) | A::Struct(_) | A::Map(..),
            D::Json,
        ) => {
            json_form(arrow)?;
            plan.json_text = true;
            Ok(())
        }
        (
            A::List(item) | A::LargeList(item) | A::FixedSizeList(item, _),
            D::Array { element, .. },
        ) => nested(plan, NestedStep::Element, |p| {
            check(item.data_type(), element, p)
        })
        .map_err(|e| format!("array element: {e}")),
        (A::Map(entries, _), D::Map { key, value }) => {
            let A::Struct(kv) = entries.data_type() else {
                return Err("malformed Arrow map".into());
            };
            if kv.len() != 2 {
                return Err("malformed Arrow map".into());
            }
            nested(plan, NestedStep::MapKey, |p| {
                check(kv[0].data_type(), key, p)
            })
            .map_err(|e| format!("map key: {e}"))?;
            nested(plan, NestedStep::MapValue, |p| {
                check(kv[1].data_type(), value, p)
            })
            .map_err(|e| format!("map value: {e}"))
        }
        (
            A::Struct(fields),
            D::Struct {
                fields: doris_fields,
            },
        ) => {
            if fields.len() != doris_fields.len() {
                return Err(format!(
                    "the struct has {} fields, the column {}",
                    fields.len(),
                    doris_fields.len()
                ));
            }
            for (i, (f, d)) in fields.iter().zip(doris_fields).enumerate() {
                if !f.name().eq_ignore_ascii_case(&d.name) {
                    return Err(format!(
                        "struct field {:?} where {:?} is expected",
                        f.name(),
                        d.name
                    ));
                }
                nested(plan, NestedStep::Field(i), |p| {
                    check(f.data_type(), &d.ty, p)
                })
                .map_err(|e| format!("field {:?}: {e}", d.name))?;
            }
            Ok(())
        }
        _ => refuse(),
    }
}

/// Whether every value of `arrow` has an exact JSON form (the types a nested value may hold
/// on its way into a JSON column).
fn json_form(arrow: &DataType) -> Result<(), String> {
    use DataType as A;
    match arrow {
        A::Null
        | A::Boolean
        | A::Int8
        | A::Int16
        | A::Int32
        | A::Int64
        | A::UInt8
        | A::UInt16
        | A::UInt32
        | A::UInt64
        | A::Float16
        | A::Float32
        | A::Float64
        | A::Decimal128(..)
        | A::Decimal256(..)
        | A::Utf8
        | A::LargeUtf8
        | A::Utf8View
        | A::Date32
        | A::Date64
        | A::Timestamp(_, None) => Ok(()),
        A::Dictionary(_, value) => json_form(value),
        A::List(item) | A::LargeList(item) | A::FixedSizeList(item, _) => {
            json_form(item.data_type())
        }
        A::Struct(fields) => fields.iter().try_for_each(|f| json_form(f.data_type())),
        A::Map(entries, _) => {
            let A::Struct(kv) = entries.data_type() else {
                return Err("malformed Arrow map".into());
            };
            match kv
                .iter()
                .map(|f| f.data_type())
                .collect::<Vec<_>>()
                .as_slice()
            {
                [A::Utf8 | A::LargeUtf8 | A::Utf8View, value] => json_form(value),
                [_, _] => Err("a map with keys that are not text has no JSON form".into()),
                _ => Err("malformed Arrow map".into()),
            }
        }
        other => Err(format!("a {other} value inside has no exact JSON form")),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_schema::Field;

    use super::*;

    fn ok(a: DataType, d: &str) -> WritePlan {
        let d: DorisType = d.parse().unwrap();
        check_writable(&a, &d).unwrap_or_else(|e| panic!("{e}"))
    }

    fn no(a: DataType, d: &str) -> String {
        let d: DorisType = d.parse().unwrap();
        check_writable(&a, &d).unwrap_err().to_string()
    }

    #[test]
    fn integers_widen_but_never_narrow() {
        ok(DataType::Int8, "TINYINT");
        ok(DataType::Int32, "BIGINT");
        ok(DataType::UInt32, "BIGINT");
        ok(DataType::UInt64, "LARGEINT");
        ok(DataType::Int64, "DECIMAL(19, 0)");
        ok(DataType::Int16, "FLOAT");
        ok(DataType::Int32, "DOUBLE");
        assert!(no(DataType::Int64, "INT").contains("narrower"));
        assert!(no(DataType::UInt8, "TINYINT").contains("narrower"));
        assert!(no(DataType::UInt64, "BIGINT").contains("narrower"));
        assert!(no(DataType::Int64, "DECIMAL(20, 2)").contains("integer digits"));
        assert!(no(DataType::Int64, "DOUBLE").contains("exactly"));
        no(DataType::Int32, "VARCHAR(10)");
        no(DataType::Boolean, "INT");
    }

    #[test]
    fn decimals_floats_and_time() {
        ok(DataType::Decimal128(10, 2), "DECIMAL(12, 3)");
        ok(DataType::Decimal128(38, 0), "LARGEINT");
        assert!(no(DataType::Decimal128(10, 2), "DECIMAL(10, 1)").contains("exactly"));
        assert!(no(DataType::Decimal128(10, 2), "DECIMAL(10, 3)").contains("exactly"));
        ok(DataType::Float32, "DOUBLE");
        assert!(no(DataType::Float64, "FLOAT").contains("rounded"));
        ok(DataType::Date32, "DATETIME");
        ok(
            DataType::Timestamp(TimeUnit::Millisecond, None),
            "DATETIME(3)",
        );
        ok(DataType::Timestamp(TimeUnit::Second, None), "DATETIME");
        assert!(
            no(
                DataType::Timestamp(TimeUnit::Microsecond, None),
                "DATETIME(3)"
            )
            .contains("truncate")
        );
        no(
            DataType::Timestamp(TimeUnit::Nanosecond, None),
            "DATETIME(6)",
        );
        assert!(
            no(
                DataType::Timestamp(TimeUnit::Second, Some("UTC".into())),
                "DATETIME"
            )
            .contains("time zone")
        );
        no(DataType::Timestamp(TimeUnit::Second, None), "DATE");
    }

    #[test]
    fn strings_carry_value_checks() {
        assert_eq!(
            ok(DataType::Utf8, "VARCHAR(10)").value_checks,
            vec![ValueCheck::MaxLength {
                limit: 10,
                characters: false
            }]
        );
        assert_eq!(
            ok(DataType::LargeUtf8, "CHAR(3)").value_checks,
            vec![ValueCheck::MaxLength {
                limit: 3,
                characters: true
            }]
        );
        assert!(ok(DataType::Utf8View, "TEXT").value_checks.is_empty());
        assert_eq!(
            ok(DataType::Utf8, "JSON").value_checks,
            vec![ValueCheck::JsonText]
        );
        assert_eq!(
            ok(DataType::Utf8, "LARGEINT").value_checks,
            vec![ValueCheck::LargeIntText]
        );
        assert_eq!(
            ok(DataType::Utf8, "IPV4").value_checks,
            vec![ValueCheck::IpText]
        );
        ok(DataType::Binary, "VARBINARY(8)");
        no(DataType::Binary, "TEXT");
        no(DataType::Utf8, "DATE");
        ok(
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            "TEXT",
        );
        ok(DataType::Null, "BITMAP");
    }

    #[test]
    fn nested_types_recurse() {
        let list = DataType::List(Arc::new(Field::new("item", DataType::Int32, true)));
        ok(list.clone(), "ARRAY<BIGINT>");
        assert!(no(list, "ARRAY<TINYINT>").contains("array element"));
        let strukt = DataType::Struct(
            vec![
                Field::new("A", DataType::Utf8, true),
                Field::new("b", DataType::Int8, true),
            ]
            .into(),
        );
        assert_eq!(
            ok(strukt.clone(), "STRUCT<a:VARCHAR(5),b:INT>").value_checks,
            vec![ValueCheck::Nested {
                path: vec![NestedStep::Field(0)],
                check: Box::new(ValueCheck::MaxLength {
                    limit: 5,
                    characters: false
                })
            }]
        );
        let strings = DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)));
        let deep = DataType::Map(
            Arc::new(Field::new(
                "entries",
                DataType::Struct(
                    vec![
                        Field::new("key", DataType::Utf8, false),
                        Field::new("value", strings, true),
                    ]
                    .into(),
                ),
                false,
            )),
            false,
        );
        assert_eq!(
            ok(deep, "MAP<CHAR(2),ARRAY<JSON>>").value_checks,
            vec![
                ValueCheck::Nested {
                    path: vec![NestedStep::MapKey],
                    check: Box::new(ValueCheck::MaxLength {
                        limit: 2,
                        characters: true
                    })
                },
                ValueCheck::Nested {
                    path: vec![NestedStep::MapValue, NestedStep::Element],
                    check: Box::new(ValueCheck::JsonText)
                },
            ]
        );
        assert!(no(strukt.clone(), "STRUCT<b:TEXT,a:INT>").contains("expected"));
        assert!(no(strukt, "STRUCT<a:TEXT>").contains("2 fields"));
        let map_of = |key: DataType, value: DataType| {
            DataType::Map(
                Arc::new(Field::new(
                    "entries",
                    DataType::Struct(
                        vec![
                            Field::new("key", key, false),
                            Field::new("value", value, true),
                        ]
                        .into(),
                    ),
                    false,
                )),
                false,
            )
        };
        let map = map_of(DataType::Utf8, DataType::Float64);
        ok(map.clone(), "MAP<TEXT,DOUBLE>");
        assert!(no(map.clone(), "MAP<TEXT,FLOAT>").contains("map value"));
        // Into a JSON column: each value as its JSON text, when everything inside has one.
        assert!(ok(map, "JSON").json_text);
        let list = |item: DataType| DataType::List(Arc::new(Field::new("item", item, true)));
        assert!(ok(list(DataType::Int64), "JSON").json_text);
        assert!(!ok(DataType::Utf8, "JSON").json_text);
        assert!(no(list(DataType::Binary), "JSON").contains("no exact JSON form"));
        let int_keys = map_of(DataType::Int32, DataType::Utf8);
        assert!(no(int_keys, "JSON").contains("keys that are not text"));
        assert!(
            no(
                list(DataType::Timestamp(TimeUnit::Second, Some("UTC".into()))),
                "JSON"
            )
            .contains("no exact JSON form")
        );
    }
}
