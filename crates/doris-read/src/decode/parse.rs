//! Parsers for single MySQL text-protocol cells, straight from bytes.
//!
//! Each parser takes the common shape Doris (and MySQL) print on a fast path and hands
//! anything else to arrow's own string parsers, so a value is accepted exactly when arrow's
//! cast would accept it, without building an intermediate string column. None of them puts
//! the value into its error.

use arrow::compute::kernels::cast_utils::{parse_decimal, string_to_datetime};
use arrow::datatypes::Decimal128Type;
use arrow_schema::TimeUnit;

/// Why a cell did not parse (the value itself is never included).
pub type ParseResult<T> = Result<T, &'static str>;

/// The cell as text.
pub fn text(cell: &[u8]) -> ParseResult<&str> {
    std::str::from_utf8(cell).map_err(|_| "not UTF-8")
}

/// A signed integer of at most `i64`: `[-+]digits`, anything else via `str::parse`.
pub fn int(cell: &[u8]) -> ParseResult<i64> {
    digits_i64(cell).map_or_else(|| fallback_number(cell), Ok)
}

/// A signed integer narrower than `i64` (TINYINT, SMALLINT, INT).
pub fn narrow<T: TryFrom<i64>>(cell: &[u8]) -> ParseResult<T> {
    T::try_from(int(cell)?).map_err(|_| "not a number of this type")
}

/// An unsigned 64-bit integer.
pub fn uint(cell: &[u8]) -> ParseResult<u64> {
    let mut value: u64 = 0;
    if cell.is_empty() || cell.len() > 20 {
        return fallback_number(cell);
    }
    for &b in cell {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return fallback_number(cell);
        }
        value = match value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(digit)))
        {
            Some(v) => v,
            None => return Err("not a number of this type"),
        };
    }
    Ok(value)
}

/// A number through `str::parse` (surrounding whitespace allowed).
pub fn fallback_number<T: std::str::FromStr>(cell: &[u8]) -> ParseResult<T> {
    text(cell)?
        .trim()
        .parse()
        .map_err(|_| "not a number of this type")
}

/// `[-+]d…d` into an `i64`, `None` for any other shape or an overflow.
fn digits_i64(cell: &[u8]) -> Option<i64> {
    let (negative, digits) = match cell.split_first()? {
        (b'-', rest) => (true, rest),
        (b'+', rest) => (false, rest),
        _ => (false, cell),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    // Accumulate negatively so i64::MIN parses.
    let mut value: i64 = 0;
    for &b in digits {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value.checked_mul(10)?.checked_sub(i64::from(digit))?;
    }
    if negative {
        Some(value)
    } else {
        value.checked_neg()
    }
}

/// A DECIMAL of `precision` and `scale` as its unscaled `i128`.
///
/// Fast path: `[-]int[.frac]` with at most `scale` fraction digits; other shapes (more
/// fraction digits, exponents) go through arrow's `parse_decimal`. The result must fit the
/// precision, as arrow's strict cast requires.
pub fn decimal128(cell: &[u8], precision: u8, scale: i8) -> ParseResult<i128> {
    let value = match decimal_fast(cell, scale) {
        Some(v) => v,
        None => parse_decimal::<Decimal128Type>(text(cell)?.trim(), precision, scale)
            .map_err(|_| "not a decimal of this precision and scale")?,
    };
    let limit = 10i128.pow(u32::from(precision));
    if value <= -limit || value >= limit {
        return Err("too many digits for the column's precision");
    }
    Ok(value)
}

fn decimal_fast(cell: &[u8], scale: i8) -> Option<i128> {
    let scale = usize::try_from(scale).ok()?;
    let (negative, rest) = match cell.split_first()? {
        (b'-', rest) => (true, rest),
        _ => (false, cell),
    };
    let (whole, frac) = match rest.iter().position(|&b| b == b'.') {
        Some(dot) => (&rest[..dot], &rest[dot + 1..]),
        None => (rest, &rest[rest.len()..]),
    };
    if whole.is_empty() || frac.len() > scale || whole.len() + scale > 38 {
        return None;
    }
    let mut value: i128 = 0;
    for &b in whole.iter().chain(frac) {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value * 10 + i128::from(digit);
    }
    value *= 10i128.pow(u32::try_from(scale - frac.len()).ok()?);
    Some(if negative { -value } else { value })
}

/// Days from 1970-01-01 to a proleptic Gregorian date (valid month and day assumed).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `n` ASCII digits as a number.
fn number(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |acc, &b| {
        let digit = b.wrapping_sub(b'0');
        (digit <= 9).then(|| acc * 10 + u32::from(digit))
    })
}

/// `YYYY-MM-DD` (a real calendar date) into days since the epoch.
fn date_fast(cell: &[u8]) -> Option<i64> {
    if cell.len() < 10 || cell[4] != b'-' || cell[7] != b'-' {
        return None;
    }
    let year = i64::from(number(&cell[0..4])?);
    let month = number(&cell[5..7])?;
    let day = number(&cell[8..10])?;
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day))
}

/// A DATE into days since the epoch.
pub fn date32(cell: &[u8]) -> ParseResult<i32> {
    if cell.len() == 10
        && let Some(days) = date_fast(cell)
    {
        return i32::try_from(days).map_err(|_| "not a DATE");
    }
    date32_arrow(cell)
}

/// A DATE through arrow's parser.
fn date32_arrow(cell: &[u8]) -> ParseResult<i32> {
    use arrow::compute::kernels::cast_utils::Parser;
    arrow::datatypes::Date32Type::parse(text(cell)?.trim()).ok_or("not a DATE")
}

/// A DATETIME (no time zone: the session's wall clock) in `unit` since the epoch.
pub fn timestamp(cell: &[u8], unit: TimeUnit) -> ParseResult<i64> {
    match timestamp_fast(cell, unit) {
        Some(v) => Ok(v),
        None => timestamp_arrow(cell, unit),
    }
}

/// A DATETIME through arrow's parser (any shape arrow's cast accepts).
fn timestamp_arrow(cell: &[u8], unit: TimeUnit) -> ParseResult<i64> {
    let parsed =
        string_to_datetime(&chrono::Utc, text(cell)?.trim()).map_err(|_| "not a DATETIME")?;
    let naive = parsed.naive_utc().and_utc();
    match unit {
        TimeUnit::Second => Some(naive.timestamp()),
        TimeUnit::Millisecond => Some(naive.timestamp_millis()),
        TimeUnit::Microsecond => Some(naive.timestamp_micros()),
        TimeUnit::Nanosecond => naive.timestamp_nanos_opt(),
    }
    .ok_or("a DATETIME out of the range of this unit")
}

/// `YYYY-MM-DD HH:MM:SS[.f…]`, fraction digits beyond the unit truncated.
fn timestamp_fast(cell: &[u8], unit: TimeUnit) -> Option<i64> {
    if cell.len() < 19 || (cell[10] != b' ' && cell[10] != b'T') {
        return None;
    }
    let days = date_fast(&cell[..10])?;
    if cell[13] != b':' || cell[16] != b':' {
        return None;
    }
    let (h, m, s) = (
        number(&cell[11..13])?,
        number(&cell[14..16])?,
        number(&cell[17..19])?,
    );
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    let mut nanos: i64 = 0;
    match &cell[19..] {
        [] => {}
        [b'.', frac @ ..] if !frac.is_empty() && frac.len() <= 9 => {
            let digits = i64::from(number(frac)?);
            nanos = digits * 10i64.pow(9 - frac.len() as u32);
        }
        _ => return None,
    }
    let seconds = days * 86_400 + i64::from(h * 3600 + m * 60 + s);
    let (per_second, nanos_per_unit) = match unit {
        TimeUnit::Second => (1, 1_000_000_000),
        TimeUnit::Millisecond => (1_000, 1_000_000),
        TimeUnit::Microsecond => (1_000_000, 1_000),
        TimeUnit::Nanosecond => (1_000_000_000, 1),
    };
    seconds
        .checked_mul(per_second)?
        .checked_add(nanos / nanos_per_unit)
}

/// A TIMESTAMPTZ as Doris prints it (`YYYY-MM-DD HH:MM:SS[.f…]±HH:MM`: the session's
/// wall clock and its offset, or `Z`) as the instant in `unit` since the epoch (UTC).
pub fn instant(cell: &[u8], unit: TimeUnit) -> ParseResult<i64> {
    const BAD: &str = "not a TIMESTAMPTZ";
    let text = text(cell)?.trim();
    let at = text
        .get(19..)
        .and_then(|tail| tail.find(['+', '-', 'Z']))
        .map(|i| i + 19)
        .ok_or(BAD)?;
    let (wall, zone) = text.split_at(at);
    let offset = match zone.as_bytes() {
        [b'Z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let hours = i64::from(number(&[*h1, *h2]).ok_or(BAD)?);
            let minutes = i64::from(number(&[*m1, *m2]).ok_or(BAD)?);
            if hours > 14 || minutes > 59 {
                return Err(BAD);
            }
            let seconds = hours * 3600 + minutes * 60;
            if *sign == b'-' { -seconds } else { seconds }
        }
        _ => return Err(BAD),
    };
    let per_second = match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    };
    timestamp(wall.as_bytes(), unit)?
        .checked_sub(offset * per_second)
        .ok_or("a TIMESTAMPTZ out of the range of this unit")
}

/// `[-]HH:MM:SS[.ffffff]` (hours may exceed 24) into microseconds.
///
/// Minutes and seconds are below 60 and unsigned; hours that would overflow `i64`
/// microseconds are an error, never a wrapped value.
pub fn time_micros(cell: &[u8]) -> ParseResult<i64> {
    const BAD: &str = "not a TIME";
    const RANGE: &str = "a TIME out of the 64-bit microsecond range";
    let t = text(cell)?.trim();
    let (negative, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
    let mut parts = whole.split(':');
    let mut next = || -> ParseResult<i64> {
        let part = parts.next().ok_or(BAD)?;
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(BAD);
        }
        part.parse::<i64>().map_err(|_| RANGE)
    };
    let (h, m, s) = (next()?, next()?, next()?);
    if parts.next().is_some() || m >= 60 || s >= 60 || frac.len() > 9 {
        return Err(BAD);
    }
    let mut micros = 0i64;
    for (i, d) in frac.chars().enumerate() {
        let digit = d.to_digit(10).ok_or(BAD)?;
        if i < 6 {
            micros += i64::from(digit) * 10i64.pow(5 - i as u32);
        }
    }
    let total = h
        .checked_mul(3600)
        .and_then(|v| v.checked_add(m * 60 + s))
        .and_then(|v| v.checked_mul(1_000_000))
        .and_then(|v| v.checked_add(micros))
        .ok_or(RANGE)?;
    Ok(if negative { -total } else { total })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn times_refuse_overflow_and_impossible_minutes() {
        assert_eq!(time_micros(b"838:59:59.5").unwrap(), 3_020_399_500_000);
        assert_eq!(time_micros(b"-01:02:03").unwrap(), -3_723_000_000);
        assert_eq!(time_micros(b"00:00:00.1234567").unwrap(), 123_456);
        // i64::MAX µs is 2562047788:00:54.775807: one second more is refused, not wrapped.
        assert!(time_micros(b"2562047788:00:54").is_ok());
        assert_eq!(
            time_micros(b"2562047788:00:55"),
            Err("a TIME out of the 64-bit microsecond range")
        );
        assert_eq!(
            time_micros(b"99999999999999999999:00:00"),
            Err("a TIME out of the 64-bit microsecond range")
        );
        for bad in [
            &b"01:60:00"[..],
            b"01:00:60",
            b"1:-2:03",
            b"1:2:3:4",
            b"--1:00:00",
            b"1:2",
            b"a:b:c",
            b"1:02:03.x",
        ] {
            assert_eq!(
                time_micros(bad),
                Err("not a TIME"),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    proptest! {
        #[test]
        fn any_time_text_parses_or_fails_without_panicking(h in any::<u64>(), m in 0u32..100, s in 0u32..100, neg in any::<bool>()) {
            let text = format!("{}{h}:{m:02}:{s:02}", if neg { "-" } else { "" });
            let parsed = time_micros(text.as_bytes());
            let exact = (i128::from(h) * 3600 + i128::from(m) * 60 + i128::from(s)) * 1_000_000;
            match parsed {
                Ok(v) => {
                    prop_assert!(m < 60 && s < 60);
                    prop_assert_eq!(i128::from(v), if neg { -exact } else { exact });
                }
                Err(_) => prop_assert!(m >= 60 || s >= 60 || exact > i128::from(i64::MAX)),
            }
        }
    }

    #[test]
    fn integers_take_every_i64_and_refuse_the_rest() {
        assert_eq!(int(b"-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(int(b"9223372036854775807"), Ok(i64::MAX));
        assert_eq!(int(b"+42"), Ok(42));
        assert_eq!(int(b" 7 "), Ok(7));
        assert!(int(b"9223372036854775808").is_err());
        assert!(int(b"1e3").is_err());
        assert!(int(b"-").is_err());
        assert!(int(b"").is_err());
        assert_eq!(uint(b"18446744073709551615"), Ok(u64::MAX));
        assert!(uint(b"18446744073709551616").is_err());
        assert!(uint(b"-1").is_err());
        assert_eq!(narrow::<i8>(b"-128"), Ok(-128));
        assert!(narrow::<i8>(b"128").is_err());
    }

    #[test]
    fn floats_keep_nan_infinities_and_negative_zero() {
        let f = |t: &str| fallback_number::<f64>(t.as_bytes()).unwrap();
        assert!(f("nan").is_nan() && f("NaN").is_nan());
        assert_eq!(f("inf"), f64::INFINITY);
        assert_eq!(f("-inf"), f64::NEG_INFINITY);
        assert_eq!(f("Infinity"), f64::INFINITY);
        for negative_zero in ["-0", "-0.0", "-0e10"] {
            assert!(
                f(negative_zero) == 0.0 && f(negative_zero).is_sign_negative(),
                "{negative_zero}"
            );
        }
        assert_eq!(f("1.7976931348623157e308"), f64::MAX);
        assert_eq!(f("4.9e-324"), 4.9e-324);
        let g = |t: &str| fallback_number::<f32>(t.as_bytes()).unwrap();
        assert!(g("-0").is_sign_negative() && g("nan").is_nan());
        assert!(fallback_number::<f64>(b"").is_err());
        assert!(fallback_number::<f64>(b"1,5").is_err());
    }

    #[test]
    fn decimals_are_scaled_and_bounded_by_precision() {
        assert_eq!(decimal128(b"12.34", 18, 4), Ok(123_400));
        assert_eq!(decimal128(b"-0.5", 18, 4), Ok(-5_000));
        assert_eq!(decimal128(b"7", 18, 4), Ok(70_000));
        assert_eq!(decimal128(b"-99.99", 4, 2), Ok(-9_999));
        assert!(decimal128(b"100.00", 4, 2).is_err());
        assert!(decimal128(b"1.2.3", 18, 4).is_err());
        assert!(decimal128(b"abc", 18, 4).is_err());
        // Shapes off the fast path agree with arrow's parser.
        assert_eq!(
            decimal128(b"1.23456", 18, 4),
            Ok(parse_decimal::<Decimal128Type>("1.23456", 18, 4).unwrap())
        );
        assert_eq!(decimal128(b"1e2", 18, 0), Ok(100));
    }

    #[test]
    fn a_timestamptz_is_the_instant_its_wall_clock_and_offset_name() {
        let at = instant(b"2025-01-01 08:00:00.123+08:00", TimeUnit::Millisecond).unwrap();
        assert_eq!(at, 1_735_689_600_123);
        let utc = instant(b"2025-01-01 00:00:00.123Z", TimeUnit::Millisecond).unwrap();
        assert_eq!(utc, at);
        let west = instant(b"2024-12-31 18:30:00-05:30", TimeUnit::Second).unwrap();
        assert_eq!(west, 1_735_689_600);
        for bad in [
            "2025-01-01 08:00:00",
            "2025-01-01 08:00:00+8",
            "2025-01-01 08:00:00+15:00",
        ] {
            assert!(instant(bad.as_bytes(), TimeUnit::Second).is_err(), "{bad}");
        }
    }

    #[test]
    fn dates_and_datetimes_refuse_impossible_calendars() {
        assert_eq!(date32(b"1970-01-01"), Ok(0));
        assert_eq!(date32(b"2024-02-29"), Ok(19_782));
        assert!(date32(b"2023-02-29").is_err());
        assert!(date32(b"0000-00-00").is_err());
        assert_eq!(
            timestamp(b"2024-01-31 12:00:00.123", TimeUnit::Millisecond),
            Ok(1_706_702_400_123)
        );
        assert_eq!(
            timestamp(b"1969-12-31 23:59:59.999999", TimeUnit::Microsecond),
            Ok(-1)
        );
        assert!(timestamp(b"2024-01-31 24:00:00", TimeUnit::Second).is_err());
        assert!(timestamp(b"0000-00-00 00:00:00", TimeUnit::Second).is_err());
        assert!(timestamp(b"9999-12-31 23:59:59", TimeUnit::Nanosecond).is_err());
        assert_eq!(time_micros(b"-838:59:59.000001"), Ok(-3_020_399_000_001));
    }

    fn unit() -> impl Strategy<Value = TimeUnit> {
        prop_oneof![
            Just(TimeUnit::Second),
            Just(TimeUnit::Millisecond),
            Just(TimeUnit::Microsecond),
            Just(TimeUnit::Nanosecond),
        ]
    }

    proptest! {
        /// The fast path accepts a date exactly when arrow does, with the same value.
        #[test]
        fn date_fast_path_agrees_with_arrow(y in 0u32..10_000, m in 0u32..14, d in 0u32..33) {
            let cell = format!("{y:04}-{m:02}-{d:02}");
            let fast = date_fast(cell.as_bytes()).map(|v| i32::try_from(v).unwrap());
            prop_assert_eq!(fast, date32_arrow(cell.as_bytes()).ok(), "{}", cell);
        }

        /// The same for datetimes with 0–9 fraction digits, in every unit.
        #[test]
        fn timestamp_fast_path_agrees_with_arrow(
            y in 0u32..10_000, m in 1u32..13, d in 1u32..32,
            h in 0u32..25, mi in 0u32..61, s in 0u32..61,
            frac in proptest::option::of("[0-9]{1,9}"),
            unit in unit(),
        ) {
            let mut cell = format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}");
            if let Some(frac) = frac {
                cell.push('.');
                cell.push_str(&frac);
            }
            let fast = timestamp_fast(cell.as_bytes(), unit);
            let arrow = timestamp_arrow(cell.as_bytes(), unit).ok();
            prop_assert_eq!(fast.or(arrow), arrow, "{}", cell);
            // Every shape Doris prints for a valid value takes the fast path.
            if arrow.is_some() && h < 24 && mi < 60 && s < 60 {
                prop_assert!(fast.is_some(), "{}", cell);
            }
        }

        /// At every precision and scale, and with more digits than either allows, a decimal
        /// cell is read exactly as arrow's strict parse reads it, or refused as arrow refuses it
        /// (256 cases; the generator passes both bounds on purpose).
        #[test]
        fn decimals_past_precision_or_scale_are_read_or_refused_as_arrow_does(
            negative in any::<bool>(), whole in "[0-9]{1,40}", frac in "[0-9]{0,40}",
            precision in 1u8..=38, scale_seed in 0u8..=38,
        ) {
            let scale = i8::try_from(scale_seed.min(precision)).unwrap();
            let cell = format!("{}{whole}{}{frac}", if negative { "-" } else { "" },
                if frac.is_empty() { "" } else { "." });
            let arrow = parse_decimal::<Decimal128Type>(&cell, precision, scale)
                .ok()
                .filter(|v| v.unsigned_abs() < 10u128.pow(u32::from(precision)));
            prop_assert_eq!(decimal128(cell.as_bytes(), precision, scale).ok(), arrow, "{}", cell);
        }

        /// Decimals on the fast path equal arrow's parse of the same text.
        #[test]
        fn decimal_fast_path_agrees_with_arrow(
            negative in any::<bool>(), whole in "[0-9]{1,14}", frac in "[0-9]{0,4}",
        ) {
            let cell = format!("{}{whole}{}{frac}", if negative { "-" } else { "" },
                if frac.is_empty() { "" } else { "." });
            let arrow = parse_decimal::<Decimal128Type>(&cell, 18, 4).unwrap();
            prop_assert_eq!(decimal_fast(cell.as_bytes(), 4), Some(arrow), "{}", cell);
        }
    }
}
