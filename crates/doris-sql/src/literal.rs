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
//! String escaping assumes the session does not use the `NO_BACKSLASH_ESCAPES` SQL mode,
//! which Doris does not support and which nothing in this project sets.
//!
//! The JSON form (used to hand predicates over from Python) is `{"type": ..., "value": ...}`;
//! LARGEINT, decimal and the temporal types travel as strings so no precision is lost, binary
//! as lower-case hex, and non-finite floats as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`.

use std::fmt::{self, Write as _};

use serde::{Deserialize, Serialize};

use crate::error::{Result, SqlError};

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

/// Appends `value` as a string expression that reads the same in every SQL mode: a quoted
/// literal ([`push_string_literal`]), or, for a value holding a backslash or NUL (which
/// `NO_BACKSLASH_ESCAPES` would read differently inside a literal), `from_base64('…')` of its
/// bytes, which Doris folds to the same string before planning.
///
/// ```
/// let mut sql = String::new();
/// doris_sql::push_string_value(&mut sql, "a\\b");
/// assert_eq!(sql, "from_base64('YVxi')");
/// sql.clear();
/// doris_sql::push_string_value(&mut sql, "it's");
/// assert_eq!(sql, "'it''s'");
/// ```
pub fn push_string_value(out: &mut String, value: &str) {
    use base64::Engine as _;
    if value.contains(['\\', '\0']) {
        out.push_str("from_base64('");
        out.push_str(&base64::engine::general_purpose::STANDARD.encode(value));
        out.push_str("')");
    } else {
        push_string_literal(out, value);
    }
}

/// Appends `value` as a single-quoted MySQL/Doris string literal (where SQL takes only a
/// literal: a comment, a property; in expressions [`push_string_value`] reads the same in
/// every SQL mode).
///
/// A quote is doubled (`''`), which every SQL mode reads the same way: under
/// `NO_BACKSLASH_ESCAPES` a backslash-escaped quote (`\'`) would end the literal and let the
/// rest of the value be read as SQL. Line feeds and carriage returns go in as they are
/// (valid inside a literal in every mode). A backslash is written `\\` and NUL `\0`, as the
/// default SQL mode reads them: the session must read backslash escapes
/// ([`sql_mode::backslash_escapes_statement`](crate::sql_mode::backslash_escapes_statement);
/// under `NO_BACKSLASH_ESCAPES` such a value would read back with two backslashes, though it
/// never leaves the literal). Every other character (including non-ASCII text) is copied
/// verbatim.
///
/// ```
/// let mut sql = String::from("SELECT ");
/// doris_sql::push_string_literal(&mut sql, "it's \\ 'quoted'\n");
/// assert_eq!(sql, "SELECT 'it''s \\\\ ''quoted''\n'");
/// ```
pub fn push_string_literal(out: &mut String, value: &str) {
    out.reserve(value.len() + 2);
    out.push('\'');
    for ch in value.chars() {
        match ch {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            other => out.push(other),
        }
    }
    out.push('\'');
}

/// An exact decimal number: sign, digits and scale, as Doris DECIMAL(p, s) holds it.
///
/// Parsed from plain (`-12.340`) or exponent (`1.5E+2`) notation; the scale is the number
/// of fractional digits and is kept (trailing zeros included).
///
/// ```
/// use doris_sql::Decimal;
/// let d: Decimal = "-12.340".parse().unwrap();
/// assert_eq!((d.precision(), d.scale()), (5, 3));
/// assert_eq!(d.with_scale(5).unwrap().to_string(), "-12.34000");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Decimal {
    negative: bool,
    /// Integer digits without leading zeros (empty for zero).
    integer: String,
    /// Fractional digits, exactly `scale` of them.
    fraction: String,
}

/// The largest precision Doris supports (DECIMAL256).
pub const MAX_DECIMAL_PRECISION: u8 = 76;

impl Decimal {
    /// Number of significant digit positions (integer digits + scale), at least 1.
    pub fn precision(&self) -> u8 {
        let digits = self.integer.len() + self.fraction.len();
        u8::try_from(digits.max(1)).unwrap_or(u8::MAX)
    }

    /// Number of fractional digits.
    pub fn scale(&self) -> u8 {
        u8::try_from(self.fraction.len()).unwrap_or(u8::MAX)
    }

    /// True for a value below zero.
    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// The same value with `scale` fractional digits; fails if digits would be dropped.
    pub fn with_scale(&self, scale: u8) -> Result<Self> {
        let scale = usize::from(scale);
        let mut fraction = self.fraction.clone();
        if scale >= fraction.len() {
            fraction.extend(std::iter::repeat_n('0', scale - fraction.len()));
        } else if fraction[scale..].bytes().all(|b| b == b'0') {
            fraction.truncate(scale);
        } else {
            return Err(SqlError::InvalidLiteral {
                kind: "decimal",
                reason: format!("rescaling to {scale} fractional digits would round the value"),
            });
        }
        Self::from_parts(self.negative, self.integer.clone(), fraction)
    }

    /// Checks that the value fits DECIMAL(`precision`, `scale`) and returns it at that scale.
    pub fn fit(&self, precision: u8, scale: u8) -> Result<Self> {
        if scale > precision || precision == 0 || precision > MAX_DECIMAL_PRECISION {
            return Err(SqlError::InvalidLiteral {
                kind: "decimal",
                reason: format!("DECIMAL({precision}, {scale}) is not a valid Doris type"),
            });
        }
        let scaled = self.with_scale(scale)?;
        if scaled.integer.len() > usize::from(precision - scale) {
            return Err(SqlError::InvalidLiteral {
                kind: "decimal",
                reason: format!("the value does not fit DECIMAL({precision}, {scale})"),
            });
        }
        Ok(scaled)
    }

    fn from_parts(negative: bool, integer: String, fraction: String) -> Result<Self> {
        let integer = integer.trim_start_matches('0').to_owned();
        if integer.len() + fraction.len() > usize::from(MAX_DECIMAL_PRECISION) {
            return Err(SqlError::InvalidLiteral {
                kind: "decimal",
                reason: format!("more than {MAX_DECIMAL_PRECISION} digits"),
            });
        }
        let is_zero = integer.is_empty() && fraction.bytes().all(|b| b == b'0');
        Ok(Self {
            negative: negative && !is_zero,
            integer,
            fraction,
        })
    }
}

impl std::str::FromStr for Decimal {
    type Err = SqlError;

    fn from_str(text: &str) -> Result<Self> {
        let bad = |reason: &str| SqlError::InvalidLiteral {
            kind: "decimal",
            reason: reason.to_owned(),
        };
        let (negative, rest) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(at) => {
                let exp: i32 = rest[at + 1..]
                    .parse()
                    .map_err(|_| bad("malformed exponent"))?;
                (&rest[..at], exp)
            }
            None => (rest, 0),
        };
        let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (int_part.is_empty() && frac_part.is_empty())
            || !all_digits(int_part)
            || !all_digits(frac_part)
        {
            return Err(bad("expected digits with an optional point and exponent"));
        }
        if exponent.unsigned_abs() > u32::from(MAX_DECIMAL_PRECISION) * 2 {
            return Err(bad("exponent out of range"));
        }
        // Shift the decimal point by the exponent over the concatenated digits.
        let digits: String = [int_part, frac_part].concat();
        let point = i64::try_from(int_part.len()).unwrap_or(0) + i64::from(exponent);
        let (integer, fraction) = if point <= 0 {
            let zeros = usize::try_from(-point).unwrap_or(0);
            (String::new(), "0".repeat(zeros) + &digits)
        } else {
            let point = usize::try_from(point).unwrap_or(0);
            if point >= digits.len() {
                (
                    digits.clone() + &"0".repeat(point - digits.len()),
                    String::new(),
                )
            } else {
                (digits[..point].to_owned(), digits[point..].to_owned())
            }
        };
        Self::from_parts(negative, integer, fraction)
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.negative {
            f.write_str("-")?;
        }
        f.write_str(if self.integer.is_empty() {
            "0"
        } else {
            &self.integer
        })?;
        if !self.fraction.is_empty() {
            write!(f, ".{}", self.fraction)?;
        }
        Ok(())
    }
}

/// A calendar date in Doris's range `0000-01-01` to `9999-12-31`.
///
/// ```
/// use doris_sql::Date;
/// let d: Date = "2024-02-29".parse().unwrap();
/// assert_eq!(d.to_string(), "2024-02-29");
/// assert!("2023-02-29".parse::<Date>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    year: u16,
    month: u8,
    day: u8,
}

impl Date {
    /// Validates and builds a date.
    pub fn new(year: u16, month: u8, day: u8) -> Result<Self> {
        if year > 9999 || !(1..=12).contains(&month) || day == 0 || day > days_in(year, month) {
            return Err(SqlError::InvalidLiteral {
                kind: "date",
                reason: "not a valid calendar date in 0000-01-01..9999-12-31".into(),
            });
        }
        Ok(Self { year, month, day })
    }

    /// Year, month (1-12) and day (1-31).
    pub fn ymd(&self) -> (u16, u8, u8) {
        (self.year, self.month, self.day)
    }
}

fn days_in(year: u16, month: u8) -> u8 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        _ => 31,
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl std::str::FromStr for Date {
    type Err = SqlError;

    fn from_str(text: &str) -> Result<Self> {
        let b = text.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return Err(SqlError::InvalidLiteral {
                kind: "date",
                reason: "expected YYYY-MM-DD".into(),
            });
        }
        Date::new(
            digits(&text[0..4], "date")?,
            digits(&text[5..7], "date")?,
            digits(&text[8..10], "date")?,
        )
    }
}

fn digits<T: std::str::FromStr>(text: &str, kind: &'static str) -> Result<T> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SqlError::InvalidLiteral {
            kind,
            reason: "expected digits".into(),
        });
    }
    text.parse().map_err(|_| SqlError::InvalidLiteral {
        kind,
        reason: "number out of range".into(),
    })
}

/// Parses `[.ffffff]` (1 to 6 digits) into microseconds and the digit count.
fn parse_fraction(text: &str, kind: &'static str) -> Result<(u32, u8)> {
    if text.is_empty() {
        return Ok((0, 0));
    }
    let Some(frac) = text.strip_prefix('.') else {
        return Err(SqlError::InvalidLiteral {
            kind,
            reason: "unexpected text after the seconds".into(),
        });
    };
    if frac.is_empty() || frac.len() > 6 {
        return Err(SqlError::InvalidLiteral {
            kind,
            reason: "expected 1 to 6 fractional digits".into(),
        });
    }
    let value: u32 = digits(frac, kind)?;
    let precision = u8::try_from(frac.len()).unwrap_or(6);
    Ok((value * 10u32.pow(6 - u32::from(precision)), precision))
}

fn check_micros(micros: u32, precision: u8, kind: &'static str) -> Result<()> {
    if precision > 6 {
        return Err(SqlError::InvalidLiteral {
            kind,
            reason: "fractional precision must be 0 to 6".into(),
        });
    }
    if micros >= 1_000_000 || !micros.is_multiple_of(10u32.pow(6 - u32::from(precision))) {
        return Err(SqlError::InvalidLiteral {
            kind,
            reason: format!("the fraction has more digits than precision {precision}"),
        });
    }
    Ok(())
}

fn write_fraction(f: &mut fmt::Formatter<'_>, micros: u32, precision: u8) -> fmt::Result {
    if precision > 0 {
        let digits = format!("{micros:06}");
        write!(f, ".{}", &digits[..usize::from(precision)])?;
    }
    Ok(())
}

/// A DATETIME(p) value: a date, a time of day and `precision` (0-6) fractional digits.
///
/// ```
/// use doris_sql::DateTime;
/// let dt: DateTime = "2024-01-31 12:00:00.120".parse().unwrap();
/// assert_eq!(dt.precision(), 3);
/// assert_eq!(dt.to_string(), "2024-01-31 12:00:00.120");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DateTime {
    date: Date,
    hour: u8,
    minute: u8,
    second: u8,
    micros: u32,
    precision: u8,
}

impl DateTime {
    /// Validates and builds a datetime; `micros` must not need more than `precision` digits.
    pub fn new(
        date: Date,
        (hour, minute, second): (u8, u8, u8),
        micros: u32,
        precision: u8,
    ) -> Result<Self> {
        if hour > 23 || minute > 59 || second > 59 {
            return Err(SqlError::InvalidLiteral {
                kind: "datetime",
                reason: "time of day out of range".into(),
            });
        }
        check_micros(micros, precision, "datetime")?;
        Ok(Self {
            date,
            hour,
            minute,
            second,
            micros,
            precision,
        })
    }

    /// The fractional precision `p` of DATETIME(p).
    pub fn precision(&self) -> u8 {
        self.precision
    }

    /// The date part.
    pub fn date(&self) -> Date {
        self.date
    }

    /// Hour, minute, second and microseconds.
    pub fn time_of_day(&self) -> (u8, u8, u8, u32) {
        (self.hour, self.minute, self.second, self.micros)
    }
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {:02}:{:02}:{:02}",
            self.date, self.hour, self.minute, self.second
        )?;
        write_fraction(f, self.micros, self.precision)
    }
}

impl std::str::FromStr for DateTime {
    type Err = SqlError;

    /// Accepts `YYYY-MM-DD HH:MM:SS[.f…]` with a space or `T`; the precision is the number
    /// of fractional digits written.
    fn from_str(text: &str) -> Result<Self> {
        let bad = || SqlError::InvalidLiteral {
            kind: "datetime",
            reason: "expected YYYY-MM-DD HH:MM:SS[.ffffff]".into(),
        };
        if text.len() < 19 || !text.is_char_boundary(10) || !text.is_char_boundary(19) {
            return Err(bad());
        }
        let date: Date = text[..10].parse()?;
        let sep = text.as_bytes()[10];
        let t = &text.as_bytes()[11..19];
        if (sep != b' ' && sep != b'T') || t[2] != b':' || t[5] != b':' {
            return Err(bad());
        }
        let (micros, precision) = parse_fraction(&text[19..], "datetime")?;
        DateTime::new(
            date,
            (
                digits(&text[11..13], "datetime")?,
                digits(&text[14..16], "datetime")?,
                digits(&text[17..19], "datetime")?,
            ),
            micros,
            precision,
        )
    }
}

/// A TIME(p) value in Doris's range `-838:59:59.999999` to `838:59:59.999999`.
///
/// ```
/// use doris_sql::Time;
/// let t: Time = "-100:00:01.5".parse().unwrap();
/// assert_eq!(t.to_string(), "-100:00:01.5");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Time {
    negative: bool,
    hours: u16,
    minute: u8,
    second: u8,
    micros: u32,
    precision: u8,
}

impl Time {
    /// Validates and builds a time value.
    pub fn new(
        negative: bool,
        (hours, minute, second): (u16, u8, u8),
        micros: u32,
        precision: u8,
    ) -> Result<Self> {
        if hours > 838 || minute > 59 || second > 59 {
            return Err(SqlError::InvalidLiteral {
                kind: "time",
                reason: "out of range -838:59:59..838:59:59".into(),
            });
        }
        check_micros(micros, precision, "time")?;
        let is_zero = hours == 0 && minute == 0 && second == 0 && micros == 0;
        Ok(Self {
            negative: negative && !is_zero,
            hours,
            minute,
            second,
            micros,
            precision,
        })
    }

    /// The fractional precision `p` of TIME(p).
    pub fn precision(&self) -> u8 {
        self.precision
    }

    /// Signed microseconds since midnight (may exceed one day, as Doris TIME does).
    pub fn total_micros(&self) -> i64 {
        let magnitude = ((i64::from(self.hours) * 60 + i64::from(self.minute)) * 60
            + i64::from(self.second))
            * 1_000_000
            + i64::from(self.micros);
        if self.negative { -magnitude } else { magnitude }
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.negative {
            f.write_str("-")?;
        }
        write!(f, "{:02}:{:02}:{:02}", self.hours, self.minute, self.second)?;
        write_fraction(f, self.micros, self.precision)
    }
}

impl std::str::FromStr for Time {
    type Err = SqlError;

    fn from_str(text: &str) -> Result<Self> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let bad = || SqlError::InvalidLiteral {
            kind: "time",
            reason: "expected [-]HH:MM:SS[.ffffff]".into(),
        };
        let (hms, fraction) = match rest.find('.') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, ""),
        };
        let mut parts = hms.split(':');
        let (Some(h), Some(m), Some(s), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        if h.len() > 3 || m.len() != 2 || s.len() != 2 {
            return Err(bad());
        }
        let (micros, precision) = parse_fraction(fraction, "time")?;
        Time::new(
            negative,
            (digits(h, "time")?, digits(m, "time")?, digits(s, "time")?),
            micros,
            precision,
        )
    }
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
