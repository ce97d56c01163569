//! Typed literal values and their rendering as Doris SQL text.
//!
//! Doris before 2.1.3 has no usable server-side prepare, and the MySQL text protocol
//! carries the statement as one string, so values are rendered on the client. Every
//! rendering here is exact and cannot change the structure of the statement:
//!
//! | literal | rendered as |
//! |---|---|
//! | null | `NULL` |
//! | bool | `TRUE` / `FALSE` |
//! | integers, LARGEINT | decimal digits |
//! | float, double | shortest round-trip text in exponent form (`1.5e0`), so the server reads a DOUBLE; NaN and infinities are refused |
//! | decimal | its exact digits with all scale digits (`12.340`) |
//! | string | `'…'`, a quote doubled (`''`, the same in every SQL mode), `\0` and `\\` escaped; everything else, line breaks and non-ASCII included, verbatim |
//! | binary | `X'…'` (hex) |
//! | date | `CAST('2024-01-31' AS DATE)` |
//! | datetime | `CAST('2024-01-31 12:00:00.123' AS DATETIME(3))`, with exactly `p` fractional digits |
//! | time | `CAST('-12:00:00.5' AS TIME(1))` |
//!
//! A string holding a backslash or NUL becomes `from_base64('…')` in expressions, which
//! reads the same in every SQL mode; where SQL takes only a literal (a comment, a
//! property), the session must read backslash escapes
//! ([`sql_mode`](crate::sql_mode)). Each kind of value has its module: `string`,
//! `decimal`, `temporal`.
//!
//! The JSON form (used to hand predicates over from Python) is `{"type": ..., "value": ...}`;
//! LARGEINT, decimal and the temporal types travel as strings so no precision is lost, binary
//! as lower-case hex, and non-finite floats as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`.

use std::fmt::{self, Write as _};

use serde::{Deserialize, Serialize};

use crate::error::{Result, SqlError};

mod decimal;
mod string;
mod temporal;

pub use decimal::{Decimal, MAX_DECIMAL_PRECISION};
pub use string::{push_string_literal, push_string_value};
pub use temporal::{Date, DateTime, Time};

/// A typed literal value.
///
/// ```
/// use doris_sql::Literal;
/// assert_eq!(Literal::String("it's".into()).to_sql().unwrap(), "'it''s'");
/// assert_eq!(Literal::Float64(0.1).to_sql().unwrap(), "1e-1");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
pub enum Literal {
    /// SQL NULL.
    Null,
    /// BOOLEAN.
    Bool(bool),
    /// TINYINT.
    Int8(i8),
    /// SMALLINT.
    Int16(i16),
    /// INT.
    Int32(i32),
    /// BIGINT.
    Int64(i64),
    /// LARGEINT (128-bit). Travels as a string in JSON.
    #[serde(with = "i128_text")]
    LargeInt(i128),
    /// FLOAT. Rendered through its exact `f64` value.
    #[serde(with = "float_text::f32")]
    Float32(f32),
    /// DOUBLE.
    #[serde(with = "float_text::f64")]
    Float64(f64),
    /// DECIMAL(p, s).
    Decimal(Decimal),
    /// A character string (CHAR, VARCHAR, STRING).
    String(String),
    /// Raw bytes (VARBINARY). Travels as hex in JSON.
    #[serde(with = "hex_bytes")]
    Binary(Vec<u8>),
    /// DATE.
    Date(Date),
    /// DATETIME(p).
    DateTime(DateTime),
    /// TIME(p).
    Time(Time),
}

impl Literal {
    /// Renders the literal as Doris SQL text.
    ///
    /// Fails only for values SQL cannot express exactly: NaN and infinite floats.
    pub fn to_sql(&self) -> Result<String> {
        let mut out = String::new();
        self.write_sql(&mut out)?;
        Ok(out)
    }

    /// Appends the rendered literal to `out`.
    pub fn write_sql(&self, out: &mut String) -> Result<()> {
        match self {
            Literal::Null => out.push_str("NULL"),
            Literal::Bool(true) => out.push_str("TRUE"),
            Literal::Bool(false) => out.push_str("FALSE"),
            Literal::Int8(v) => push_display(out, v),
            Literal::Int16(v) => push_display(out, v),
            Literal::Int32(v) => push_display(out, v),
            Literal::Int64(v) => push_display(out, v),
            Literal::LargeInt(v) => push_display(out, v),
            Literal::Float32(v) => push_float(out, f64::from(*v), "float")?,
            Literal::Float64(v) => push_float(out, *v, "double")?,
            Literal::Decimal(d) => push_display(out, d),
            Literal::String(s) => push_string_value(out, s),
            Literal::Binary(bytes) => {
                out.push_str("X'");
                for b in bytes {
                    let _ = write!(out, "{b:02X}");
                }
                out.push('\'');
            }
            Literal::Date(d) => {
                let _ = write!(out, "CAST('{d}' AS DATE)");
            }
            Literal::DateTime(dt) => {
                let _ = write!(out, "CAST('{dt}' AS DATETIME");
                push_precision(out, dt.precision);
            }
            Literal::Time(t) => {
                let _ = write!(out, "CAST('{t}' AS TIME");
                push_precision(out, t.precision);
            }
        }
        Ok(())
    }

    /// True for SQL NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Literal::Null)
    }

    /// True when the value can be rendered exactly (everything but NaN and infinities).
    pub fn is_exactly_renderable(&self) -> bool {
        match self {
            Literal::Float32(v) => v.is_finite(),
            Literal::Float64(v) => v.is_finite(),
            _ => true,
        }
    }
}

fn push_display(out: &mut String, value: &impl fmt::Display) {
    let _ = write!(out, "{value}");
}

fn push_precision(out: &mut String, precision: u8) {
    if precision > 0 {
        let _ = write!(out, "({precision})");
    }
    out.push(')');
}

fn push_float(out: &mut String, value: f64, kind: &'static str) -> Result<()> {
    if !value.is_finite() {
        return Err(SqlError::InvalidLiteral {
            kind,
            reason: "NaN and infinite values have no SQL literal".into(),
        });
    }
    // `{:e}` prints the shortest digits that round-trip, in exponent form: the server
    // then reads a DOUBLE literal rather than an exact DECIMAL.
    let _ = write!(out, "{value:e}");
    Ok(())
}

/// Serde support shared by the value types that travel as their display text.
macro_rules! serde_via_text {
    ($($ty:ty),*) => {$(
        impl Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    )*};
}
serde_via_text!(Decimal, Date, DateTime, Time);

mod i128_text {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &i128, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i128, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Text(String),
            Number(i64),
        }
        match Either::deserialize(d)? {
            Either::Text(t) => t.parse().map_err(serde::de::Error::custom),
            Either::Number(n) => Ok(i128::from(n)),
        }
    }
}

mod float_text {
    //! Floats as JSON numbers, with NaN and the infinities as strings.
    use serde::{Deserialize, Deserializer, Serializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Number(f64),
        Text(String),
    }

    fn to_json<S: Serializer>(v: f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_nan() {
            s.serialize_str("NaN")
        } else if v.is_infinite() {
            s.serialize_str(if v > 0.0 { "Infinity" } else { "-Infinity" })
        } else {
            s.serialize_f64(v)
        }
    }

    fn from_json<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match Either::deserialize(d)? {
            Either::Number(n) => Ok(n),
            Either::Text(t) => match t.as_str() {
                "NaN" => Ok(f64::NAN),
                "Infinity" => Ok(f64::INFINITY),
                "-Infinity" => Ok(f64::NEG_INFINITY),
                _ => Err(serde::de::Error::custom(
                    "expected a number, NaN or +/-Infinity",
                )),
            },
        }
    }

    pub mod f64 {
        use serde::{Deserializer, Serializer};

        pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
            super::to_json(*v, s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
            super::from_json(d)
        }
    }

    pub mod f32 {
        use serde::{Deserializer, Serializer};

        pub fn serialize<S: Serializer>(v: &f32, s: S) -> Result<S::Ok, S::Error> {
            super::to_json(f64::from(*v), s)
        }

        #[allow(clippy::cast_possible_truncation)]
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
            super::from_json(d).map(|v| v as f32)
        }
    }
}

mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        let mut text = String::with_capacity(v.len() * 2);
        for b in v {
            text.push_str(&format!("{b:02x}"));
        }
        s.serialize_str(&text)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        if text.len() % 2 != 0 || !text.is_ascii() {
            return Err(serde::de::Error::custom(
                "expected an even number of hex digits",
            ));
        }
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).map_err(serde::de::Error::custom))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql(lit: Literal) -> String {
        lit.to_sql().unwrap()
    }

    #[test]
    fn renders_every_literal_kind() {
        assert_eq!(sql(Literal::Null), "NULL");
        assert_eq!(sql(Literal::Bool(true)), "TRUE");
        assert_eq!(sql(Literal::Bool(false)), "FALSE");
        assert_eq!(sql(Literal::Int8(-128)), "-128");
        assert_eq!(sql(Literal::Int16(32767)), "32767");
        assert_eq!(sql(Literal::Int32(i32::MIN)), "-2147483648");
        assert_eq!(sql(Literal::Int64(i64::MAX)), "9223372036854775807");
        assert_eq!(
            sql(Literal::LargeInt(i128::MIN)),
            "-170141183460469231731687303715884105728"
        );
        assert_eq!(sql(Literal::Float32(1.5)), "1.5e0");
        assert_eq!(sql(Literal::Float32(0.1)), "1.0000000149011612e-1");
        assert_eq!(sql(Literal::Float64(-2.5e-300)), "-2.5e-300");
        assert_eq!(sql(Literal::Float64(0.0)), "0e0");
        assert_eq!(sql(Literal::Decimal("12.340".parse().unwrap())), "12.340");
        // A backslash or NUL: from_base64, the same in every SQL mode.
        assert_eq!(
            sql(Literal::String("a'b\\c\0d\ne\rf\"g`h".into())),
            "from_base64('YSdiXGMAZAplDWYiZ2Bo')"
        );
        assert_eq!(sql(Literal::String("żółw 🐢".into())), "'żółw 🐢'");
        assert_eq!(sql(Literal::Binary(vec![0, 0xab, 0xff])), "X'00ABFF'");
        assert_eq!(sql(Literal::Binary(vec![])), "X''");
        assert_eq!(
            sql(Literal::Date("2024-01-31".parse().unwrap())),
            "CAST('2024-01-31' AS DATE)"
        );
        assert_eq!(
            sql(Literal::DateTime("2024-01-31 12:00:00".parse().unwrap())),
            "CAST('2024-01-31 12:00:00' AS DATETIME)"
        );
        assert_eq!(
            sql(Literal::DateTime(
                "2024-01-31T12:00:00.000001".parse().unwrap()
            )),
            "CAST('2024-01-31 12:00:00.000001' AS DATETIME(6))"
        );
        assert_eq!(
            sql(Literal::Time("-838:59:59.5".parse().unwrap())),
            "CAST('-838:59:59.5' AS TIME(1))"
        );
    }

    #[test]
    fn refuses_non_finite_floats() {
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let err = Literal::Float64(v).to_sql().unwrap_err();
            assert!(err.to_string().contains("NaN and infinite"), "{err}");
            assert!(!Literal::Float64(v).is_exactly_renderable());
        }
        assert!(Literal::Float32(f32::NAN).to_sql().is_err());
    }

    #[test]
    fn decimals_parse_exactly() {
        let cases = [
            ("0", "0", 1, 0),
            ("-0.00", "0.00", 2, 2),
            ("007.50", "7.50", 3, 2),
            (".5", "0.5", 1, 1),
            ("1E+2", "100", 3, 0),
            ("1.5e-3", "0.0015", 4, 4),
            (
                "-12345678901234567890123456789012345678",
                "-12345678901234567890123456789012345678",
                38,
                0,
            ),
        ];
        for (input, shown, precision, scale) in cases {
            let d: Decimal = input.parse().unwrap();
            assert_eq!(d.to_string(), shown, "{input}");
            assert_eq!((d.precision(), d.scale()), (precision, scale), "{input}");
        }
        for bad in ["", "-", ".", "1.2.3", "1e", "abc", "1,5", "NaN", "1e999"] {
            assert!(bad.parse::<Decimal>().is_err(), "{bad}");
        }
        let d: Decimal = "123.45".parse().unwrap();
        assert_eq!(d.fit(10, 4).unwrap().to_string(), "123.4500");
        assert!(d.fit(4, 2).is_err());
        assert!(d.fit(10, 1).is_err());
        assert!(d.fit(3, 4).is_err());
    }

    #[test]
    fn temporal_values_validate() {
        assert!("2024-13-01".parse::<Date>().is_err());
        assert!("2024-1-01".parse::<Date>().is_err());
        assert!("2100-02-29".parse::<Date>().is_err());
        assert!("2000-02-29".parse::<Date>().is_ok());
        assert!("0000-01-01".parse::<Date>().is_ok());
        assert!("2024-01-01 24:00:00".parse::<DateTime>().is_err());
        assert!("2024-01-01 12:00:00.1234567".parse::<DateTime>().is_err());
        assert!("2024-01-01 12:00:00.".parse::<DateTime>().is_err());
        assert!("2024-01-01x12:00:00".parse::<DateTime>().is_err());
        let date = Date::new(2024, 1, 1).unwrap();
        assert!(DateTime::new(date, (0, 0, 0), 123_456, 3).is_err());
        assert!(DateTime::new(date, (0, 0, 0), 123_000, 3).is_ok());
        assert!("839:00:00".parse::<Time>().is_err());
        assert_eq!("-00:00:00".parse::<Time>().unwrap().to_string(), "00:00:00");
        assert_eq!(
            "01:00:00.25".parse::<Time>().unwrap().total_micros(),
            3_600_250_000
        );
    }

    #[test]
    fn json_form_is_lossless() {
        let values = vec![
            Literal::Null,
            Literal::Bool(true),
            Literal::Int8(-1),
            Literal::LargeInt(i128::MAX),
            Literal::Float64(f64::NEG_INFINITY),
            Literal::Float32(1.25),
            Literal::Decimal("-1.230".parse().unwrap()),
            Literal::String("x".into()),
            Literal::Binary(vec![1, 254]),
            Literal::Date("1999-12-31".parse().unwrap()),
            Literal::DateTime("1999-12-31 23:59:59.99".parse().unwrap()),
            Literal::Time("12:00:00".parse().unwrap()),
        ];
        let json = serde_json::to_string(&values).unwrap();
        let back: Vec<Literal> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, values);
        assert!(
            json.contains(
                r#"{"type":"large_int","value":"170141183460469231731687303715884105727"}"#
            )
        );
        assert!(json.contains(r#"{"type":"binary","value":"01fe"}"#));
        assert!(json.contains(r#"{"type":"decimal","value":"-1.230"}"#));
        let nan: Literal = serde_json::from_str(r#"{"type":"float64","value":"NaN"}"#).unwrap();
        assert!(matches!(nan, Literal::Float64(v) if v.is_nan()));
        let big: Literal = serde_json::from_str(r#"{"type":"large_int","value":5}"#).unwrap();
        assert_eq!(big, Literal::LargeInt(5));
        assert!(
            serde_json::from_str::<Literal>(r#"{"type":"date","value":"2023-02-30"}"#).is_err()
        );
    }
}
