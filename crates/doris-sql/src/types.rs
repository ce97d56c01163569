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

    /// The Arrow type this crate maps the Doris type to (see the module table).
    ///
    /// ```
    /// use arrow_schema::{DataType, TimeUnit};
    /// use doris_sql::DorisType;
    /// let t: DorisType = "datetime(3)".parse().unwrap();
    /// assert_eq!(t.to_arrow().unwrap(), DataType::Timestamp(TimeUnit::Millisecond, None));
    /// assert!("BITMAP".parse::<DorisType>().unwrap().to_arrow().is_err());
    /// ```
    pub fn to_arrow(&self) -> Result<DataType> {
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
            DorisType::DateTime { precision } => {
                DataType::Timestamp(datetime_unit(*precision), None)
            }
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
                element.to_arrow()?,
                *element_nullable,
            ))),
            DorisType::Map { key, value } => {
                let entries = Fields::from(vec![
                    Field::new("key", key.to_arrow()?, false),
                    Field::new("value", value.to_arrow()?, true),
                ]);
                DataType::Map(
                    Arc::new(Field::new("entries", DataType::Struct(entries), false)),
                    false,
                )
            }
            DorisType::Struct { fields } => DataType::Struct(
                fields
                    .iter()
                    .map(|f| Ok(Field::new(&f.name, f.ty.to_arrow()?, f.nullable)))
                    .collect::<Result<Fields>>()?,
            ),
        })
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

impl std::str::FromStr for DorisType {
    type Err = SqlError;

    /// Parses any spelling Doris prints; see the module documentation.
    fn from_str(text: &str) -> Result<Self> {
        let mut p = TypeParser { text, pos: 0 };
        let ty = p.parse_type()?;
        p.skip_ws();
        if p.pos != text.len() {
            return Err(p.error("unexpected text after the type"));
        }
        Ok(ty)
    }
}

/// A recursive-descent parser over one type string.
struct TypeParser<'a> {
    text: &'a str,
    pos: usize,
}

/// Nested types deeper than this are refused (a guard against stack exhaustion).
const MAX_NESTING: usize = 64;

impl TypeParser<'_> {
    fn error(&self, reason: impl Into<String>) -> SqlError {
        SqlError::TypeParse {
            position: self.pos,
            reason: reason.into(),
        }
    }

    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn skip_ws(&mut self) {
        let trimmed = self.rest().trim_start();
        self.pos = self.text.len() - trimmed.len();
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.rest().chars().next()
    }

    fn eat(&mut self, ch: char) -> bool {
        if self.peek() == Some(ch) {
            self.pos += ch.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, ch: char) -> Result<()> {
        if self.eat(ch) {
            Ok(())
        } else {
            Err(self.error(format!("expected '{ch}'")))
        }
    }

    fn word(&mut self) -> Result<String> {
        self.skip_ws();
        let len = self
            .rest()
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        if len == 0 || self.rest().as_bytes()[0].is_ascii_digit() {
            return Err(self.error("expected a type name"));
        }
        let w = self.rest()[..len].to_ascii_uppercase();
        self.pos += len;
        Ok(w)
    }

    /// Tries to consume the keyword `kw` (case-insensitive, whole word).
    fn eat_keyword(&mut self, kw: &str) -> bool {
        self.skip_ws();
        let rest = self.rest();
        let matches = rest
            .as_bytes()
            .get(..kw.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(kw.as_bytes()))
            && !rest[kw.len()..]
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
        if matches {
            self.pos += kw.len();
        }
        matches
    }

    /// `(` arg, … `)` where each arg is a number or `*`; absent parentheses give an empty list.
    fn args(&mut self) -> Result<Vec<Option<u32>>> {
        let mut args = Vec::new();
        if !self.eat('(') {
            return Ok(args);
        }
        loop {
            self.skip_ws();
            if self.eat('*') {
                args.push(None);
            } else {
                let len = self.rest().bytes().take_while(u8::is_ascii_digit).count();
                if len == 0 {
                    return Err(self.error("expected a number"));
                }
                let n = self.rest()[..len]
                    .parse::<u32>()
                    .map_err(|_| self.error("number too large"))?;
                self.pos += len;
                args.push(Some(n));
            }
            if self.eat(')') {
                return Ok(args);
            }
            self.expect(',')?;
        }
    }

    fn parse_type(&mut self) -> Result<DorisType> {
        self.parse_type_at(0)
    }

    fn parse_type_at(&mut self, depth: usize) -> Result<DorisType> {
        if depth > MAX_NESTING {
            return Err(self.error("types are nested too deeply"));
        }
        let start = self.pos;
        let name = self.word()?;
        let ty = match name.as_str() {
            "ARRAY" => {
                self.expect('<')?;
                let (element, element_nullable) = self.parse_nested(depth)?;
                self.expect('>')?;
                return Ok(DorisType::Array {
                    element: Box::new(element),
                    element_nullable,
                });
            }
            "MAP" => {
                self.expect('<')?;
                let (key, _) = self.parse_nested(depth)?;
                self.expect(',')?;
                let (value, _) = self.parse_nested(depth)?;
                self.expect('>')?;
                return Ok(DorisType::Map {
                    key: Box::new(key),
                    value: Box::new(value),
                });
            }
            "STRUCT" => return self.parse_struct(depth),
            "AGG_STATE" => return self.parse_agg_state(),
            _ => name,
        };
        let args_at = self.pos;
        let args = self.args()?;
        let bad_args = |p: &Self, what: &str| SqlError::TypeParse {
            position: args_at,
            reason: format!("{what} for {}", &p.text[start..p.pos].trim()),
        };
        let nums = |p: &Self| -> Result<Vec<u32>> {
            args.iter()
                .map(|a| a.ok_or_else(|| bad_args(p, "'*' is not a valid argument")))
                .collect()
        };
        let ints = |p: &Self, t: DorisType| -> Result<DorisType> {
            match nums(p)?.as_slice() {
                [] => Ok(t),
                [w] if (1..=255).contains(w) => Ok(t),
                _ => Err(bad_args(p, "expected at most one display width")),
            }
        };
        let none = |p: &Self, t: DorisType| -> Result<DorisType> {
            if args.is_empty() {
                Ok(t)
            } else {
                Err(bad_args(p, "unexpected arguments"))
            }
        };
        let fraction = |p: &Self| -> Result<u8> {
            match nums(p)?.as_slice() {
                [] => Ok(0),
                [n] if *n <= 6 => Ok(u8::try_from(*n).unwrap_or(0)),
                _ => Err(bad_args(p, "fractional precision must be 0 to 6")),
            }
        };
        Ok(match ty.as_str() {
            "BOOLEAN" | "BOOL" => none(self, DorisType::Boolean)?,
            "TINYINT" => ints(self, DorisType::TinyInt)?,
            "SMALLINT" => ints(self, DorisType::SmallInt)?,
            "INT" | "INTEGER" => ints(self, DorisType::Int)?,
            "BIGINT" => ints(self, DorisType::BigInt)?,
            "LARGEINT" => ints(self, DorisType::LargeInt)?,
            "FLOAT" => none(self, DorisType::Float)?,
            "DOUBLE" => none(self, DorisType::Double)?,
            "DECIMAL" | "DECIMALV2" | "DECIMALV3" | "DECIMAL32" | "DECIMAL64" | "DECIMAL128"
            | "DECIMAL128I" | "DECIMAL256" | "NUMERIC" => {
                let (precision, scale) = match nums(self)?.as_slice() {
                    // Bare DECIMALV2 is the legacy fixed (27, 9); bare DECIMAL is V3's (9, 0).
                    [] if ty == "DECIMALV2" => (27, 9),
                    [] => (9, 0),
                    [p] => (*p, 0),
                    [p, s] => (*p, *s),
                    _ => return Err(bad_args(self, "expected (precision, scale)")),
                };
                if precision == 0 || precision > 76 || scale > precision {
                    return Err(bad_args(
                        self,
                        "precision must be 1 to 76 and scale at most precision",
                    ));
                }
                DorisType::Decimal {
                    precision: u8::try_from(precision).unwrap_or(0),
                    scale: u8::try_from(scale).unwrap_or(0),
                }
            }
            "DATE" | "DATEV1" | "DATEV2" => none(self, DorisType::Date)?,
            "DATETIME" | "DATETIMEV1" | "DATETIMEV2" | "TIMESTAMP" => DorisType::DateTime {
                precision: fraction(self)?,
            },
            "TIME" | "TIMEV1" | "TIMEV2" => DorisType::Time {
                precision: fraction(self)?,
            },
            "CHAR" | "CHARACTER" => match nums(self)?.as_slice() {
                [] => DorisType::Char { length: 1 },
                [n] if (1..=MAX_CHAR_LENGTH).contains(n) => DorisType::Char { length: *n },
                _ => return Err(bad_args(self, "CHAR length must be 1 to 255")),
            },
            "VARCHAR" => match args.as_slice() {
                [] | [None] => DorisType::Varchar { length: None },
                [Some(n)] if (1..=MAX_VARCHAR_LENGTH).contains(n) => {
                    DorisType::Varchar { length: Some(*n) }
                }
                _ => return Err(bad_args(self, "VARCHAR length must be 1 to 65533")),
            },
            "STRING" | "TEXT" => none(self, DorisType::String)?,
            "JSON" | "JSONB" => none(self, DorisType::Json)?,
            "VARIANT" => none(self, DorisType::Variant)?,
            "HLL" => none(self, DorisType::Hll)?,
            "BITMAP" => none(self, DorisType::Bitmap)?,
            "QUANTILE_STATE" => none(self, DorisType::QuantileState)?,
            "IPV4" => none(self, DorisType::Ipv4)?,
            "IPV6" => none(self, DorisType::Ipv6)?,
            "VARBINARY" => match args.as_slice() {
                [] | [None] => DorisType::VarBinary { length: None },
                [Some(n)] if *n >= 1 => DorisType::VarBinary { length: Some(*n) },
                _ => return Err(bad_args(self, "VARBINARY length must be positive")),
            },
            _ => {
                return Err(SqlError::TypeParse {
                    position: start,
                    reason: format!("unknown Doris type {ty:?}"),
                });
            }
        })
    }

    /// A type inside ARRAY/MAP/STRUCT: `NOT_NULL(T)`, or `T` with an optional trailing
    /// `NULL` / `NOT NULL`. Returns the type and whether it is nullable.
    fn parse_nested(&mut self, depth: usize) -> Result<(DorisType, bool)> {
        let save = self.pos;
        if self.eat_keyword("NOT_NULL") {
            if self.eat('(') {
                let ty = self.parse_type_at(depth + 1)?;
                self.expect(')')?;
                return Ok((ty, false));
            }
            self.pos = save;
        }
        let ty = self.parse_type_at(depth + 1)?;
        let save = self.pos;
        if self.eat_keyword("NOT") {
            if self.eat_keyword("NULL") {
                return Ok((ty, false));
            }
            self.pos = save;
        } else {
            self.eat_keyword("NULL");
        }
        Ok((ty, true))
    }

    fn parse_struct(&mut self, depth: usize) -> Result<DorisType> {
        self.expect('<')?;
        let mut fields = Vec::new();
        loop {
            let name = self.field_name()?;
            self.expect(':')?;
            let (ty, nullable) = self.parse_nested(depth)?;
            let comment = if self.eat_keyword("COMMENT") {
                Some(self.quoted_string()?)
            } else {
                None
            };
            fields.push(StructField {
                name,
                ty,
                nullable,
                comment,
            });
            if self.eat('>') {
                return Ok(DorisType::Struct { fields });
            }
            self.expect(',')?;
        }
    }

    fn field_name(&mut self) -> Result<String> {
        self.skip_ws();
        if self.rest().starts_with('`') {
            let (name, used) = crate::metadata::lex::read_backtick(self.rest())
                .ok_or_else(|| self.error("unclosed backtick in a field name"))?;
            self.pos += used;
            return Ok(name);
        }
        let end = self
            .rest()
            .find([':', ',', '>', '<'])
            .unwrap_or(self.rest().len());
        let name = self.rest()[..end].trim_end().to_owned();
        if name.is_empty() {
            return Err(self.error("expected a field name"));
        }
        self.pos += end;
        Ok(name)
    }

    fn quoted_string(&mut self) -> Result<String> {
        self.skip_ws();
        let (value, used) = crate::metadata::lex::read_quoted(self.rest())
            .ok_or_else(|| self.error("expected a quoted comment"))?;
        self.pos += used;
        Ok(value)
    }

    fn parse_agg_state(&mut self) -> Result<DorisType> {
        self.expect('<')?;
        let start = self.pos;
        let mut depth = 1usize;
        for (i, ch) in self.rest().char_indices() {
            match ch {
                '<' | '(' => depth += 1,
                '>' | ')' => {
                    depth -= 1;
                    if depth == 0 {
                        if ch != '>' {
                            break;
                        }
                        let signature = self.text[start..start + i].trim().to_owned();
                        self.pos = start + i + 1;
                        return Ok(DorisType::AggState { signature });
                    }
                }
                _ => {}
            }
        }
        Err(self.error("unbalanced AGG_STATE<…>"))
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
