//! Doris column types: one model, a parser for every spelling Doris prints, and the
//! mapping to Arrow.
//!
//! Doris has printed types in four styles across releases (see [`Spelling`]); the parser
//! accepts all of them, case-insensitively, with `V2`/`V3` suffixes, display widths such as
//! `int(11)`, `DECIMAL(p, s)` with or without the space, `NOT_NULL(…)` wrappers inside
//! nested types, and nested `ARRAY<…>`, `MAP<…,…>`, `STRUCT<name:T,…>` to any depth.
//!
//! ```
//! use doris_sql::{DorisType, Spelling};
//! let t: DorisType = "MAP<text,ARRAY<DECIMALV3(20, 6)>>".parse().unwrap();
//! assert_eq!(t.spell(Spelling::Lower), "map<text,array<decimal(20,6)>>");
//! assert_eq!(t.spell(Spelling::Upper), "MAP<TEXT,ARRAY<DECIMAL(20, 6)>>");
//! ```
//!
//! # Doris → Arrow
//!
//! | Doris | Arrow | why |
//! |---|---|---|
//! | BOOLEAN | Boolean | |
//! | TINYINT / SMALLINT / INT / BIGINT | Int8 / Int16 / Int32 / Int64 | display widths are ignored |
//! | LARGEINT | Utf8 (decimal digits) | a 128-bit integer does not fit Decimal128(38, 0) (39 digits); text is exact, and Daft has no Decimal256 |
//! | FLOAT / DOUBLE | Float32 / Float64 | |
//! | DECIMAL(p, s), p ≤ 38 | Decimal128(p, s) | exact |
//! | DECIMAL(p, s), p > 38 | Decimal256(p, s) | exact (DECIMAL256) |
//! | DATE | Date32 | |
//! | DATETIME(p) | Timestamp(Second / Millisecond / Microsecond, no zone) for p = 0 / 1-3 / 4-6 | keeps the precision; Doris DATETIME has no zone |
//! | TIME(p) | Duration(Microsecond) | Doris TIME spans ±838 hours, beyond Arrow's Time64 |
//! | CHAR / VARCHAR / STRING (TEXT) | Utf8 | |
//! | JSON / JSONB / VARIANT | Utf8 (JSON text) | |
//! | IPV4 / IPV6 | Utf8 (dotted / colon text) | the MySQL protocol sends text; Flight batches are cast to it |
//! | VARBINARY(n) | Binary | |
//! | `ARRAY<T>` | List(T) | element nullability from `NOT_NULL(…)` |
//! | `MAP<K, V>` | Map(entries: key not null, value) | |
//! | `STRUCT<a:T, …>` | Struct(a: T, …) | |
//! | HLL, BITMAP, QUANTILE_STATE, AGG_STATE | — | opaque aggregate states: [`SqlError::UnsupportedType`] |

use std::fmt::Write as _;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, TimeUnit};

use crate::error::{Result, SqlError};

mod parse;

/// The longest CHAR Doris allows.
pub const MAX_CHAR_LENGTH: u32 = 255;
/// The longest VARCHAR Doris allows.
pub const MAX_VARCHAR_LENGTH: u32 = 65533;

/// A Doris column type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DorisType {
    /// BOOLEAN
    Boolean,
    /// TINYINT
    TinyInt,
    /// SMALLINT
    SmallInt,
    /// INT
    Int,
    /// BIGINT
    BigInt,
    /// LARGEINT (128-bit signed)
    LargeInt,
    /// FLOAT
    Float,
    /// DOUBLE
    Double,
    /// DECIMAL(p, s) (DECIMALV2/V3, DECIMAL32/64/128/256 all land here)
    Decimal {
        /// Total digits, 1..=76.
        precision: u8,
        /// Fractional digits, 0..=precision.
        scale: u8,
    },
    /// DATE (DATEV2)
    Date,
    /// DATETIME(p) (DATETIMEV2)
    DateTime {
        /// Fractional digits, 0..=6.
        precision: u8,
    },
    /// TIMESTAMPTZ(p) (4.1): an instant, stored in UTC and printed in the session's time
    /// zone with its offset; read as `timestamp[unit, tz=UTC]`.
    TimestampTz {
        /// Fractional digits, 0..=6.
        precision: u8,
    },
    /// TIME(p) (TIMEV2); appears in results, not as a column type.
    Time {
        /// Fractional digits, 0..=6.
        precision: u8,
    },
    /// CHAR(n)
    Char {
        /// Length in characters, 1..=255.
        length: u32,
    },
    /// VARCHAR(n); `None` when Doris prints `VARCHAR(*)` (no declared bound).
    Varchar {
        /// Length in bytes, 1..=65533, or unknown.
        length: Option<u32>,
    },
    /// STRING (printed as TEXT)
    String,
    /// JSON (JSONB)
    Json,
    /// VARIANT
    Variant,
    /// HLL
    Hll,
    /// BITMAP
    Bitmap,
    /// QUANTILE_STATE
    QuantileState,
    /// `AGG_STATE<fn(args)>`; the signature is kept verbatim.
    AggState {
        /// The text between the angle brackets.
        signature: String,
    },
    /// IPV4
    Ipv4,
    /// IPV6
    Ipv6,
    /// VARBINARY(n) (4.x); `None` when no length is printed.
    VarBinary {
        /// Length in bytes, or unknown.
        length: Option<u32>,
    },
    /// `ARRAY<T>`
    Array {
        /// The element type.
        element: Box<DorisType>,
        /// Whether elements may be NULL (false when printed as `NOT_NULL(T)`).
        element_nullable: bool,
    },
    /// `MAP<K, V>`
    Map {
        /// The key type.
        key: Box<DorisType>,
        /// The value type.
        value: Box<DorisType>,
    },
    /// `STRUCT<name:T, …>`
    Struct {
        /// The fields, in order.
        fields: Vec<StructField>,
    },
}

/// One field of a STRUCT type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StructField {
    /// The field name.
    pub name: String,
    /// The field type.
    pub ty: DorisType,
    /// Whether the field may be NULL.
    pub nullable: bool,
    /// The field comment, if Doris printed one.
    pub comment: Option<String>,
}

/// How a Doris release spells types in `DESC` and `SHOW CREATE TABLE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Spelling {
    /// 1.x and 2.0: lower case with MySQL display widths (`int(11)`, `decimal(20, 6)`).
    Legacy,
    /// 2.1.0 to 2.1.5: upper case, no widths (`INT`, `DECIMAL(20, 6)`, `TEXT`).
    Upper,
    /// 2.1.6+, 3.x and 4.x: lower case, no widths, no spaces (`int`, `decimal(20,6)`).
    Lower,
    /// `DESC … ALL` internal names (`DECIMALV3(20, 6)`, `DATETIMEV2(3)`, `DATEV2`).
    Internal,
}

impl DorisType {
    /// Spells the type as the given Doris release would print it.
    ///
    /// ```
    /// use doris_sql::{DorisType, Spelling};
    /// let t = DorisType::Decimal { precision: 20, scale: 6 };
    /// assert_eq!(t.spell(Spelling::Legacy), "decimal(20, 6)");
    /// assert_eq!(t.spell(Spelling::Internal), "DECIMALV3(20, 6)");
    /// ```
    pub fn spell(&self, spelling: Spelling) -> String {
        let mut out = String::new();
        self.write_spelling(spelling, &mut out);
        out
    }

    /// The type as DDL accepts it (upper case, e.g. for `CREATE TABLE`).
    pub fn to_sql(&self) -> String {
        self.spell(Spelling::Upper)
    }

    fn write_spelling(&self, sp: Spelling, out: &mut String) {
        let upper = matches!(sp, Spelling::Upper | Spelling::Internal);
        let word = |out: &mut String, w: &str| {
            if upper {
                out.push_str(w);
            } else {
                out.push_str(&w.to_ascii_lowercase());
            }
        };
        let width = |out: &mut String, w: &str, n: u32| {
            word(out, w);
            if sp == Spelling::Legacy {
                let _ = write!(out, "({n})");
            }
        };
        let sep = if sp == Spelling::Lower { "," } else { ", " };
        match self {
            DorisType::Boolean => word(out, "BOOLEAN"),
            DorisType::TinyInt => width(out, "TINYINT", 4),
            DorisType::SmallInt => width(out, "SMALLINT", 6),
            DorisType::Int => width(out, "INT", 11),
            DorisType::BigInt => width(out, "BIGINT", 20),
            DorisType::LargeInt => width(out, "LARGEINT", 40),
            DorisType::Float => word(out, "FLOAT"),
            DorisType::Double => word(out, "DOUBLE"),
            DorisType::Decimal { precision, scale } => {
                word(
                    out,
                    if sp == Spelling::Internal {
                        "DECIMALV3"
                    } else {
                        "DECIMAL"
                    },
                );
                let _ = write!(out, "({precision}{sep}{scale})");
            }
            DorisType::Date => word(
                out,
                if sp == Spelling::Internal {
                    "DATEV2"
                } else {
                    "DATE"
                },
            ),
            DorisType::DateTime { precision } => {
                if sp == Spelling::Internal {
                    let _ = write!(out, "DATETIMEV2({precision})");
                } else {
                    word(out, "DATETIME");
                    if *precision > 0 {
                        let _ = write!(out, "({precision})");
                    }
                }
            }
            DorisType::TimestampTz { precision } => {
                word(out, "TIMESTAMPTZ");
                if *precision > 0 || sp == Spelling::Internal {
                    let _ = write!(out, "({precision})");
                }
            }
            DorisType::Time { precision } => {
                word(
                    out,
                    if sp == Spelling::Internal {
                        "TIMEV2"
                    } else {
                        "TIME"
                    },
                );
                if *precision > 0 || sp == Spelling::Internal {
                    let _ = write!(out, "({precision})");
                }
            }
            DorisType::Char { length } => {
                word(out, "CHAR");
                let _ = write!(out, "({length})");
            }
            DorisType::Varchar { length } => {
                word(out, "VARCHAR");
                match length {
                    Some(n) => {
                        let _ = write!(out, "({n})");
                    }
                    None => out.push_str("(*)"),
                }
            }
            DorisType::String => word(out, "TEXT"),
            DorisType::Json => word(out, "JSON"),
            DorisType::Variant => word(out, "VARIANT"),
            DorisType::Hll => word(out, "HLL"),
            DorisType::Bitmap => word(out, "BITMAP"),
            DorisType::QuantileState => word(out, "QUANTILE_STATE"),
            DorisType::AggState { signature } => {
                word(out, "AGG_STATE");
                let _ = write!(out, "<{signature}>");
            }
            DorisType::Ipv4 => word(out, "IPV4"),
            DorisType::Ipv6 => word(out, "IPV6"),
            DorisType::VarBinary { length } => {
                word(out, "VARBINARY");
                if let Some(n) = length {
                    let _ = write!(out, "({n})");
                }
            }
            DorisType::Array {
                element,
                element_nullable,
            } => {
                word(out, "ARRAY");
                out.push('<');
                write_nested(element, *element_nullable, sp, out);
                out.push('>');
            }
            DorisType::Map { key, value } => {
                word(out, "MAP");
                out.push('<');
                key.write_spelling(sp, out);
                out.push(',');
                value.write_spelling(sp, out);
                out.push('>');
            }
            DorisType::Struct { fields } => {
                word(out, "STRUCT");
                out.push('<');
                for (i, f) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    if is_plain_field_name(&f.name) {
                        out.push_str(&f.name);
                    } else {
                        crate::ident::push_quoted_ident(out, &f.name);
                    }
                    out.push(':');
                    write_nested(&f.ty, f.nullable, sp, out);
                    if let Some(c) = &f.comment {
                        out.push_str(" COMMENT ");
                        crate::literal::push_string_literal(out, c);
                    }
                }
                out.push('>');
            }
        }
    }

    /// The Arrow type this crate maps the Doris type to (see the module table), DATETIME in
    /// the narrowest unit that keeps its precision exact ([`TimestampUnits::ByPrecision`];
    /// a read's schema comes from [`DorisType::to_arrow_in`]).
    ///
    /// ```
    /// use arrow_schema::{DataType, TimeUnit};
    /// use doris_sql::DorisType;
    /// let t: DorisType = "datetime(3)".parse().unwrap();
    /// assert_eq!(t.to_arrow().unwrap(), DataType::Timestamp(TimeUnit::Millisecond, None));
    /// assert!("BITMAP".parse::<DorisType>().unwrap().to_arrow().is_err());
    /// ```
    pub fn to_arrow(&self) -> Result<DataType> {
        self.to_arrow_in(TimestampUnits::ByPrecision)
    }

    /// The Arrow type a read gives the Doris type, DATETIME values (nested ones included)
    /// in `units`.
    ///
    /// ```
    /// use arrow_schema::{DataType, TimeUnit};
    /// use doris_sql::{DorisType, TimestampUnits};
    /// let t: DorisType = "array<datetime(0)>".parse().unwrap();
    /// let DataType::List(item) = t.to_arrow_in(TimestampUnits::Microseconds).unwrap() else {
    ///     unreachable!()
    /// };
    /// assert_eq!(item.data_type(), &DataType::Timestamp(TimeUnit::Microsecond, None));
    /// ```
    pub fn to_arrow_in(&self, units: TimestampUnits) -> Result<DataType> {
        Ok(match self {
            DorisType::Boolean => DataType::Boolean,
            DorisType::TinyInt => DataType::Int8,
            DorisType::SmallInt => DataType::Int16,
            DorisType::Int => DataType::Int32,
            DorisType::BigInt => DataType::Int64,
            DorisType::LargeInt => DataType::Utf8,
            DorisType::Float => DataType::Float32,
            DorisType::Double => DataType::Float64,
            DorisType::Decimal { precision, scale } => {
                let scale = i8::try_from(*scale).unwrap_or(i8::MAX);
                if *precision <= 38 {
                    DataType::Decimal128(*precision, scale)
                } else {
                    DataType::Decimal256(*precision, scale)
                }
            }
            DorisType::Date => DataType::Date32,
            DorisType::DateTime { precision } => DataType::Timestamp(
                match units {
                    TimestampUnits::Microseconds => TimeUnit::Microsecond,
                    TimestampUnits::ByPrecision => datetime_unit(*precision),
                },
                None,
            ),
            DorisType::TimestampTz { precision } => DataType::Timestamp(
                match units {
                    TimestampUnits::Microseconds => TimeUnit::Microsecond,
                    TimestampUnits::ByPrecision => datetime_unit(*precision),
                },
                Some("UTC".into()),
            ),
            DorisType::Time { .. } => DataType::Duration(TimeUnit::Microsecond),
            DorisType::Char { .. }
            | DorisType::Varchar { .. }
            | DorisType::String
            | DorisType::Json
            | DorisType::Variant
            | DorisType::Ipv4
            | DorisType::Ipv6 => DataType::Utf8,
            DorisType::VarBinary { .. } => DataType::Binary,
            DorisType::Hll
            | DorisType::Bitmap
            | DorisType::QuantileState
            | DorisType::AggState { .. } => {
                return Err(SqlError::UnsupportedType {
                    doris_type: self.to_sql(),
                    reason: "aggregate states are opaque binary objects with no Arrow form",
                });
            }
            DorisType::Array {
                element,
                element_nullable,
            } => DataType::List(Arc::new(Field::new(
                "item",
                element.to_arrow_in(units)?,
                *element_nullable,
            ))),
            DorisType::Map { key, value } => {
                let entries = Fields::from(vec![
                    Field::new("key", key.to_arrow_in(units)?, false),
                    Field::new("value", value.to_arrow_in(units)?, true),
                ]);
                DataType::Map(
                    Arc::new(Field::new("entries", DataType::Struct(entries), false)),
                    false,
                )
            }
            DorisType::Struct { fields } => DataType::Struct(
                fields
                    .iter()
                    .map(|f| Ok(Field::new(&f.name, f.ty.to_arrow_in(units)?, f.nullable)))
                    .collect::<Result<Fields>>()?,
            ),
        })
    }
}

/// The Arrow unit of DATETIME values a read gives: microseconds for every precision (as
/// MySQL clients and the reference connector 1.1 read them: a table's timestamps share one
/// type whatever each column's precision), or the narrowest unit that keeps the column's
/// precision exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum TimestampUnits {
    /// `timestamp[us]` for every precision (the default).
    #[default]
    Microseconds,
    /// DATETIME(0) as `timestamp[s]`, (1–3) as `timestamp[ms]`, (4–6) as `timestamp[us]`
    /// ([`datetime_unit`]).
    ByPrecision,
}

impl TimestampUnits {
    /// The names, as options spell them: `microseconds`, `by_precision`.
    pub const NAMES: [&'static str; 2] = ["microseconds", "by_precision"];

    /// The units an option names ([`TimestampUnits::NAMES`]); `None` for another name.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "microseconds" => Some(Self::Microseconds),
            "by_precision" => Some(Self::ByPrecision),
            _ => None,
        }
    }

    /// The option's name of these units.
    pub fn name(self) -> &'static str {
        match self {
            Self::Microseconds => "microseconds",
            Self::ByPrecision => "by_precision",
        }
    }
}

/// The Arrow time unit that keeps DATETIME(`precision`) exact.
///
/// ```
/// use arrow_schema::TimeUnit;
/// assert_eq!(doris_sql::datetime_unit(3), TimeUnit::Millisecond);
/// ```
pub fn datetime_unit(precision: u8) -> TimeUnit {
    match precision {
        0 => TimeUnit::Second,
        1..=3 => TimeUnit::Millisecond,
        _ => TimeUnit::Microsecond,
    }
}

fn write_nested(ty: &DorisType, nullable: bool, sp: Spelling, out: &mut String) {
    if nullable {
        ty.write_spelling(sp, out);
    } else {
        out.push_str(if sp == Spelling::Lower || sp == Spelling::Legacy {
            "not_null("
        } else {
            "NOT_NULL("
        });
        ty.write_spelling(sp, out);
        out.push(')');
    }
}

fn is_plain_field_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl std::fmt::Display for DorisType {
    /// The upper-case DDL spelling.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_sql())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> DorisType {
        text.parse()
            .unwrap_or_else(|e| panic!("{text:?} did not parse: {e}"))
    }

    /// Every spelling Doris releases print in `DESC` and `SHOW CREATE TABLE`, old and new.
    #[test]
    fn golden_spellings_parse() {
        use DorisType as T;
        let cases: Vec<(&str, DorisType)> = vec![
            ("BOOLEAN", T::Boolean),
            ("boolean", T::Boolean),
            ("tinyint(4)", T::TinyInt),
            ("TINYINT", T::TinyInt),
            ("smallint(6)", T::SmallInt),
            ("int(11)", T::Int),
            ("INT", T::Int),
            ("integer", T::Int),
            ("bigint(20)", T::BigInt),
            ("BIGINT", T::BigInt),
            ("largeint(40)", T::LargeInt),
            ("LARGEINT", T::LargeInt),
            ("FLOAT", T::Float),
            ("double", T::Double),
            (
                "DECIMAL(20, 6)",
                T::Decimal {
                    precision: 20,
                    scale: 6,
                },
            ),
            (
                "decimal(10,2)",
                T::Decimal {
                    precision: 10,
                    scale: 2,
                },
            ),
            (
                "DECIMALV3(20, 6)",
                T::Decimal {
                    precision: 20,
                    scale: 6,
                },
            ),
            (
                "decimalv3(38,10)",
                T::Decimal {
                    precision: 38,
                    scale: 10,
                },
            ),
            (
                "DECIMAL256(76, 0)",
                T::Decimal {
                    precision: 76,
                    scale: 0,
                },
            ),
            (
                "DECIMAL",
                T::Decimal {
                    precision: 9,
                    scale: 0,
                },
            ),
            (
                "DECIMALV2",
                T::Decimal {
                    precision: 27,
                    scale: 9,
                },
            ),
            (
                "decimal(5)",
                T::Decimal {
                    precision: 5,
                    scale: 0,
                },
            ),
            ("DATE", T::Date),
            ("DATEV2", T::Date),
            ("datev1", T::Date),
            ("DATETIME", T::DateTime { precision: 0 }),
            ("datetime(3)", T::DateTime { precision: 3 }),
            ("DATETIMEV2(6)", T::DateTime { precision: 6 }),
            ("TIME(3)", T::Time { precision: 3 }),
            ("TIMEV2(0)", T::Time { precision: 0 }),
            ("timestamptz(3)", T::TimestampTz { precision: 3 }),
            ("TIMESTAMPTZ", T::TimestampTz { precision: 0 }),
            ("CHAR(10)", T::Char { length: 10 }),
            ("char", T::Char { length: 1 }),
            ("VARCHAR(64)", T::Varchar { length: Some(64) }),
            (
                "varchar(65533)",
                T::Varchar {
                    length: Some(65533),
                },
            ),
            ("VARCHAR(*)", T::Varchar { length: None }),
            ("TEXT", T::String),
            ("string", T::String),
            ("JSON", T::Json),
            ("JSONB", T::Json),
            ("VARIANT", T::Variant),
            ("HLL", T::Hll),
            ("BITMAP", T::Bitmap),
            ("QUANTILE_STATE", T::QuantileState),
            (
                "AGG_STATE<max(int)>",
                T::AggState {
                    signature: "max(int)".into(),
                },
            ),
            (
                "agg_state<group_concat(varchar(10) null, varchar(2))>",
                T::AggState {
                    signature: "group_concat(varchar(10) null, varchar(2))".into(),
                },
            ),
            ("IPV4", T::Ipv4),
            ("ipv6", T::Ipv6),
            ("VARBINARY(16)", T::VarBinary { length: Some(16) }),
            ("VARBINARY", T::VarBinary { length: None }),
            (
                "ARRAY<INT>",
                T::Array {
                    element: Box::new(T::Int),
                    element_nullable: true,
                },
            ),
            (
                "array<NOT_NULL(varchar(10))>",
                T::Array {
                    element: Box::new(T::Varchar { length: Some(10) }),
                    element_nullable: false,
                },
            ),
            (
                "MAP<TEXT,INT>",
                T::Map {
                    key: Box::new(T::String),
                    value: Box::new(T::Int),
                },
            ),
            (
                "map<int(11), array<datetime(6)>>",
                T::Map {
                    key: Box::new(T::Int),
                    value: Box::new(T::Array {
                        element: Box::new(T::DateTime { precision: 6 }),
                        element_nullable: true,
                    }),
                },
            ),
            (
                "STRUCT<a:INT,b:TEXT>",
                T::Struct {
                    fields: vec![
                        StructField {
                            name: "a".into(),
                            ty: T::Int,
                            nullable: true,
                            comment: None,
                        },
                        StructField {
                            name: "b".into(),
                            ty: T::String,
                            nullable: true,
                            comment: None,
                        },
                    ],
                },
            ),
            (
                "struct<`odd name`:int not null comment 'c\\'s', s:struct<x:array<int>>>",
                T::Struct {
                    fields: vec![
                        StructField {
                            name: "odd name".into(),
                            ty: T::Int,
                            nullable: false,
                            comment: Some("c's".into()),
                        },
                        StructField {
                            name: "s".into(),
                            ty: T::Struct {
                                fields: vec![StructField {
                                    name: "x".into(),
                                    ty: T::Array {
                                        element: Box::new(T::Int),
                                        element_nullable: true,
                                    },
                                    nullable: true,
                                    comment: None,
                                }],
                            },
                            nullable: true,
                            comment: None,
                        },
                    ],
                },
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(parse(text), expected, "{text}");
        }
    }

    #[test]
    fn golden_spellings_print() {
        let t = parse("STRUCT<a:ARRAY<NOT_NULL(DECIMAL(10, 2))>, b:MAP<INT,DATETIME(3)>>");
        assert_eq!(
            t.spell(Spelling::Upper),
            "STRUCT<a:ARRAY<NOT_NULL(DECIMAL(10, 2))>,b:MAP<INT,DATETIME(3)>>"
        );
        assert_eq!(
            t.spell(Spelling::Lower),
            "struct<a:array<not_null(decimal(10,2))>,b:map<int,datetime(3)>>"
        );
        assert_eq!(
            t.spell(Spelling::Legacy),
            "struct<a:array<not_null(decimal(10, 2))>,b:map<int(11),datetime(3)>>"
        );
        assert_eq!(
            t.spell(Spelling::Internal),
            "STRUCT<a:ARRAY<NOT_NULL(DECIMALV3(10, 2))>,b:MAP<INT,DATETIMEV2(3)>>"
        );
        assert_eq!(parse("bigint(20)").spell(Spelling::Upper), "BIGINT");
        assert_eq!(parse("DATETIME").spell(Spelling::Internal), "DATETIMEV2(0)");
        assert_eq!(parse("text").to_string(), "TEXT");
    }

    #[test]
    fn malformed_types_are_typed_errors() {
        for bad in [
            "",
            "INT(",
            "INT(0)",
            "INT(1, 2)",
            "FOO",
            "DECIMAL(0, 0)",
            "DECIMAL(10, 11)",
            "DECIMAL(77, 0)",
            "DATETIME(7)",
            "CHAR(0)",
            "CHAR(256)",
            "VARCHAR(65534)",
            "ARRAY<INT",
            "ARRAY<>",
            "MAP<INT>",
            "STRUCT<>",
            "STRUCT<a INT>",
            "INT INT",
            "BOOLEAN(1)",
            "AGG_STATE<max(int>",
            "DECIMAL(99999999999, 1)",
            "DATE(*)",
            "3INT",
        ] {
            let err = bad.parse::<DorisType>().unwrap_err();
            assert!(matches!(err, SqlError::TypeParse { .. }), "{bad}: {err:?}");
        }
        let deep = "ARRAY<".repeat(200) + "INT" + &">".repeat(200);
        assert!(deep.parse::<DorisType>().is_err());
    }

    #[test]
    fn datetime_units_of_a_read() {
        for precision in 0..=6u8 {
            let ty = DorisType::DateTime { precision };
            assert_eq!(
                ty.to_arrow_in(TimestampUnits::Microseconds).unwrap(),
                DataType::Timestamp(TimeUnit::Microsecond, None)
            );
            assert_eq!(
                ty.to_arrow_in(TimestampUnits::ByPrecision).unwrap(),
                DataType::Timestamp(datetime_unit(precision), None)
            );
        }
        /// Every timestamp unit inside `t`.
        fn units(t: &DataType, out: &mut Vec<TimeUnit>) {
            match t {
                DataType::Timestamp(unit, _) => out.push(*unit),
                DataType::List(f) | DataType::Map(f, _) => units(f.data_type(), out),
                DataType::Struct(fields) => fields.iter().for_each(|f| units(f.data_type(), out)),
                _ => {}
            }
        }
        let nested: DorisType = "STRUCT<a:MAP<DATETIME(3),ARRAY<DATETIME>>>"
            .parse()
            .unwrap();
        for (chosen, expected) in [
            (
                TimestampUnits::Microseconds,
                vec![TimeUnit::Microsecond, TimeUnit::Microsecond],
            ),
            (
                TimestampUnits::ByPrecision,
                vec![TimeUnit::Millisecond, TimeUnit::Second],
            ),
        ] {
            let mut found = Vec::new();
            units(&nested.to_arrow_in(chosen).unwrap(), &mut found);
            assert_eq!(found, expected, "{chosen:?}");
        }
        for name in TimestampUnits::NAMES {
            assert_eq!(TimestampUnits::parse(name).unwrap().name(), name);
        }
        assert_eq!(TimestampUnits::default(), TimestampUnits::Microseconds);
        assert!(TimestampUnits::parse("us").is_none());
    }

    #[test]
    fn arrow_mapping() {
        let cases: Vec<(&str, DataType)> = vec![
            ("BOOLEAN", DataType::Boolean),
            ("TINYINT", DataType::Int8),
            ("SMALLINT", DataType::Int16),
            ("INT", DataType::Int32),
            ("BIGINT", DataType::Int64),
            ("LARGEINT", DataType::Utf8),
            ("FLOAT", DataType::Float32),
            ("DOUBLE", DataType::Float64),
            ("DECIMAL(38, 10)", DataType::Decimal128(38, 10)),
            ("DECIMAL(39, 2)", DataType::Decimal256(39, 2)),
            ("DATE", DataType::Date32),
            ("DATETIME", DataType::Timestamp(TimeUnit::Second, None)),
            (
                "DATETIME(3)",
                DataType::Timestamp(TimeUnit::Millisecond, None),
            ),
            (
                "DATETIME(6)",
                DataType::Timestamp(TimeUnit::Microsecond, None),
            ),
            ("TIME(2)", DataType::Duration(TimeUnit::Microsecond)),
            ("VARCHAR(5)", DataType::Utf8),
            ("TEXT", DataType::Utf8),
            ("JSON", DataType::Utf8),
            ("VARIANT", DataType::Utf8),
            ("IPV6", DataType::Utf8),
            ("VARBINARY(4)", DataType::Binary),
        ];
        for (text, arrow) in cases {
            assert_eq!(parse(text).to_arrow().unwrap(), arrow, "{text}");
        }
        let nested = parse("MAP<TEXT,STRUCT<a:ARRAY<NOT_NULL(INT)>>>")
            .to_arrow()
            .unwrap();
        let DataType::Map(entries, false) = nested else {
            panic!("not a map")
        };
        let DataType::Struct(kv) = entries.data_type() else {
            panic!("entries not a struct")
        };
        assert!(!kv[0].is_nullable());
        assert_eq!(kv[0].data_type(), &DataType::Utf8);
        let DataType::Struct(inner) = kv[1].data_type() else {
            panic!("value not a struct")
        };
        let DataType::List(item) = inner[0].data_type() else {
            panic!("field a not a list")
        };
        assert!(!item.is_nullable());
        assert_eq!(item.data_type(), &DataType::Int32);
        for opaque in [
            "HLL",
            "BITMAP",
            "QUANTILE_STATE",
            "AGG_STATE<sum(int)>",
            "ARRAY<BITMAP>",
        ] {
            let err = parse(opaque).to_arrow().unwrap_err();
            assert!(matches!(err, SqlError::UnsupportedType { .. }), "{opaque}");
        }
    }
}
