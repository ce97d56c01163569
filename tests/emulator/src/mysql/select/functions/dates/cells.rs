//! Values as Arrow holds them: the shape of a DATE or DATETIME, text read as Doris casts
//! it, one row of an argument, and a result column of the planned type.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, Date32Builder, Decimal128Builder, Float64Builder, Int32Builder,
    Int64Builder, StringBuilder, TimestampMicrosecondBuilder, TimestampMillisecondBuilder,
    TimestampSecondBuilder,
};
use arrow::datatypes::{DataType, TimeUnit};
use chrono::{Datelike, NaiveDate, NaiveDateTime};
use datafusion::common::{DataFusionError, Result};

/// 1970-01-01 as chrono counts days from the common era (Arrow's `Date32` counts from it).
const UNIX_EPOCH_DAY: i32 = 719_163;

/// The shape of a temporal value: a DATE, or a DATETIME stored in `unit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Date,
    DateTime(TimeUnit),
}

impl Shape {
    pub(super) fn data_type(self) -> DataType {
        match self {
            Shape::Date => DataType::Date32,
            Shape::DateTime(unit) => DataType::Timestamp(unit, None),
        }
    }

    /// The shape of an argument of type `ty` (`text`: its value, when it is a constant).
    pub(super) fn of(ty: &DataType, text: Option<&str>) -> Self {
        match ty {
            DataType::Date32 | DataType::Date64 => Shape::Date,
            DataType::Timestamp(TimeUnit::Nanosecond, _) => Shape::DateTime(TimeUnit::Microsecond),
            DataType::Timestamp(unit, _) => Shape::DateTime(*unit),
            _ => match text.and_then(parse_text) {
                Some((_, shape)) => shape,
                None => Shape::DateTime(TimeUnit::Second),
            },
        }
    }
}

/// Text as Doris casts it to a DATE or DATETIME: `YYYY-MM-DD`, optionally followed by
/// ` HH:MM:SS` (or `T`) and up to six fraction digits; anything else is `None` (NULL).
pub(super) fn parse_text(text: &str) -> Option<(NaiveDateTime, Shape)> {
    let text = text.trim();
    let (date, time) = match text.split_once([' ', 'T']) {
        Some((d, t)) => (d, Some(t)),
        None => (text, None),
    };
    let date = NaiveDate::parse_from_str(date, "%Y-%m-%d").ok()?;
    let Some(time) = time else {
        return Some((date.and_hms_opt(0, 0, 0)?, Shape::Date));
    };
    let (clock, fraction) = match time.split_once('.') {
        Some((c, f)) => (c, f),
        None => (time, ""),
    };
    let mut parts = clock.split(':');
    let mut next = || -> Option<u32> { parts.next()?.parse().ok() };
    let (h, m, s) = (next()?, next()?, next()?);
    if fraction.len() > 6 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let micros = if fraction.is_empty() {
        0
    } else {
        fraction.parse::<u32>().ok()? * 10u32.pow(6 - fraction.len() as u32)
    };
    let unit = match fraction.len() {
        0 => TimeUnit::Second,
        1..=3 => TimeUnit::Millisecond,
        _ => TimeUnit::Microsecond,
    };
    let at = date.and_hms_micro_opt(h, m, s, micros)?;
    Some((at, Shape::DateTime(unit)))
}

/// Text that names its time zone after its time, as Doris's cast reads it: `'…
/// 10:30:19 +09:00'`, `'…23:59:59+08:00'`, `'…00:00:00Z'`, `'… 00:00:00  UTC'`, `'…
/// America/New_York'` (an offset of `±h[h][[:]mm]` up to 14 hours, `Z`, `UTC`, `GMT`,
/// `ZULU`, `CST` for Asia/Shanghai as Doris aliases it, or a zone name; spaces before it
/// allowed). Returns the time as written, its shape and the zone as `calendar` reads zones
/// (`±HH:MM` or a name); `None` for text without a zone, text that is no DATETIME (a zone
/// after a date alone is not Doris's form) and a zone Doris does not know.
pub(super) fn parse_zoned(text: &str) -> Option<(NaiveDateTime, Shape, String)> {
    let text = text.trim();
    let (date, rest) = text.split_once([' ', 'T'])?;
    let rest = rest.trim_start();
    let clock_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '.'))
        .unwrap_or(rest.len());
    let (clock, zone) = rest.split_at(clock_end);
    let zone = zone.trim();
    if clock.is_empty() || zone.is_empty() {
        return None;
    }
    let zone = zone_name(zone)?;
    let (at, shape) = parse_text(&format!("{date} {clock}"))?;
    Some((at, shape, zone))
}

/// A zone written in DATETIME text, as `calendar` reads zones (see [`parse_zoned`]).
fn zone_name(written: &str) -> Option<String> {
    match written.to_ascii_uppercase().as_str() {
        "Z" | "UTC" | "GMT" | "ZULU" => return Some("+00:00".to_owned()),
        "CST" => return Some("Asia/Shanghai".to_owned()),
        _ => {}
    }
    if let Some(sign) = written.chars().next().filter(|c| matches!(c, '+' | '-')) {
        let digits: String = written[1..].chars().filter(|c| *c != ':').collect();
        let colons = written[1..].matches(':').count();
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || colons > 1 {
            return None;
        }
        let (hours, minutes) = match digits.len() {
            1 | 2 if colons == 0 => (digits.as_str(), "00"),
            3 | 4 => digits.split_at(digits.len() - 2),
            _ => return None,
        };
        let (hours, minutes): (u32, u32) = (hours.parse().ok()?, minutes.parse().ok()?);
        if hours > 14 || minutes > 59 {
            return None;
        }
        return Some(format!("{sign}{hours:02}:{minutes:02}"));
    }
    written.parse::<chrono_tz::Tz>().ok()?;
    Some(written.to_owned())
}

/// One result value.
pub(super) enum Cell {
    Null,
    Int(i64),
    Float(f64),
    /// Microseconds, for a DECIMAL of 0, 3 or 6 fraction digits (or an integer).
    Micros(i64),
    Text(String),
    At(NaiveDateTime),
}

/// Whether row `row` is NULL (a NULL literal's array has no validity bits: every row is).
pub(super) fn null_at(array: &ArrayRef, row: usize) -> bool {
    array.data_type() == &DataType::Null || array.is_null(row)
}

/// Row `row` of a temporal argument (`None`: NULL, or text that is no date).
pub(super) fn moment(array: &ArrayRef, row: usize) -> Option<NaiveDateTime> {
    if null_at(array, row) {
        return None;
    }
    let micros = |v: i64| chrono::DateTime::from_timestamp_micros(v).map(|d| d.naive_utc());
    match array.data_type() {
        DataType::Date32 => {
            let days = array
                .as_primitive::<arrow::datatypes::Date32Type>()
                .value(row);
            NaiveDate::from_num_days_from_ce_opt(days.checked_add(UNIX_EPOCH_DAY)?)?
                .and_hms_opt(0, 0, 0)
        }
        DataType::Timestamp(unit, _) => {
            use arrow::datatypes::*;
            match unit {
                TimeUnit::Second => micros(
                    array
                        .as_primitive::<TimestampSecondType>()
                        .value(row)
                        .checked_mul(1_000_000)?,
                ),
                TimeUnit::Millisecond => micros(
                    array
                        .as_primitive::<TimestampMillisecondType>()
                        .value(row)
                        .checked_mul(1_000)?,
                ),
                TimeUnit::Microsecond => {
                    micros(array.as_primitive::<TimestampMicrosecondType>().value(row))
                }
                TimeUnit::Nanosecond => {
                    micros(array.as_primitive::<TimestampNanosecondType>().value(row) / 1_000)
                }
            }
        }
        _ => text(array, row)
            .and_then(|t| parse_text(&t))
            .map(|(at, _)| at),
    }
}

/// Row `row` as text (numbers and other types in their text form).
pub(super) fn text(array: &ArrayRef, row: usize) -> Option<String> {
    if null_at(array, row) {
        return None;
    }
    let cast = arrow::compute::cast(&array.slice(row, 1), &DataType::Utf8).ok()?;
    Some(cast.as_string::<i32>().value(0).to_owned())
}

/// Row `row` as an integer.
pub(super) fn integer(array: &ArrayRef, row: usize) -> Option<i64> {
    if null_at(array, row) {
        return None;
    }
    let cast = arrow::compute::cast(&array.slice(row, 1), &DataType::Int64).ok()?;
    let ints = cast.as_primitive::<arrow::datatypes::Int64Type>();
    (!ints.is_null(0)).then(|| ints.value(0))
}

/// Row `row` of `date_add`'s second argument: an `INTERVAL` as (months, days,
/// nanoseconds), or an integer count of days.
pub(super) fn interval(array: &ArrayRef, row: usize) -> Result<Option<(i32, i32, i64)>> {
    if null_at(array, row) {
        return Ok(None);
    }
    use arrow::datatypes::*;
    Ok(Some(match array.data_type() {
        DataType::Interval(IntervalUnit::MonthDayNano) => {
            let v = array.as_primitive::<IntervalMonthDayNanoType>().value(row);
            (v.months, v.days, v.nanoseconds)
        }
        DataType::Interval(IntervalUnit::YearMonth) => (
            array.as_primitive::<IntervalYearMonthType>().value(row),
            0,
            0,
        ),
        DataType::Interval(IntervalUnit::DayTime) => {
            let v = array.as_primitive::<IntervalDayTimeType>().value(row);
            (0, v.days, i64::from(v.milliseconds) * 1_000_000)
        }
        _ => match integer(array, row) {
            Some(days) => (0, i32::try_from(days).unwrap_or(i32::MAX), 0),
            None => return Ok(None),
        },
    }))
}

pub(super) fn collect(out: &DataType, values: Vec<Cell>) -> Result<ArrayRef> {
    let wrong = || DataFusionError::Internal(format!("a date function made no {out}"));
    // One column: `$builder` fed each cell that matches `$cell` as `$value`, NULLs as NULL.
    macro_rules! column {
        ($builder:expr, $cell:pat => $value:expr) => {{
            let mut b = $builder;
            for cell in values {
                match cell {
                    $cell => b.append_value($value),
                    Cell::Null => b.append_null(),
                    _ => return Err(wrong()),
                }
            }
            Arc::new(b.finish()) as ArrayRef
        }};
    }
    Ok(match out {
        DataType::Int32 => column!(Int32Builder::new(), Cell::Int(i) =>
            i32::try_from(i).map_err(|_| wrong())?),
        DataType::Int64 => {
            let mut b = Int64Builder::new();
            for cell in values {
                match cell {
                    Cell::Int(i) => b.append_value(i),
                    Cell::Micros(m) => b.append_value(m / 1_000_000),
                    Cell::Null => b.append_null(),
                    _ => return Err(wrong()),
                }
            }
            Arc::new(b.finish()) as ArrayRef
        }
        DataType::Decimal128(precision, scale) => {
            let per = 10i128.pow(6 - u32::from(scale.unsigned_abs().min(6)));
            let b = Decimal128Builder::new()
                .with_precision_and_scale(*precision, *scale)
                .map_err(|e| DataFusionError::Internal(e.to_string()))?;
            column!(b, Cell::Micros(m) => i128::from(m) / per)
        }
        DataType::Float64 => column!(Float64Builder::new(), Cell::Float(f) => f),
        DataType::Utf8 => column!(StringBuilder::new(), Cell::Text(s) => s),
        DataType::Date32 => column!(Date32Builder::new(), Cell::At(at) =>
            at.date().num_days_from_ce() - UNIX_EPOCH_DAY),
        DataType::Timestamp(TimeUnit::Second, _) => {
            column!(TimestampSecondBuilder::new(), Cell::At(at) => at.and_utc().timestamp())
        }
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            column!(TimestampMillisecondBuilder::new(), Cell::At(at) =>
                at.and_utc().timestamp_millis())
        }
        DataType::Timestamp(_, _) => {
            column!(TimestampMicrosecondBuilder::new(), Cell::At(at) =>
                at.and_utc().timestamp_micros())
        }
        _ => return Err(wrong()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_names_its_zone_after_its_time() {
        let zoned = |t: &str| parse_zoned(t).map(|(at, shape, zone)| (at.to_string(), shape, zone));
        assert_eq!(
            zoned("2007-11-30 10:30:19 +09:00"),
            Some((
                "2007-11-30 10:30:19".to_owned(),
                Shape::DateTime(TimeUnit::Second),
                "+09:00".to_owned()
            ))
        );
        assert_eq!(zoned("2024-02-29 12:34:56.123-05:00").unwrap().2, "-05:00");
        assert_eq!(
            zoned("2024-02-29 12:34:56.123-05:00").unwrap().1,
            Shape::DateTime(TimeUnit::Millisecond)
        );
        assert_eq!(zoned("2023-01-01 00:00:00Z").unwrap().2, "+00:00");
        assert_eq!(zoned("1960-01-01 00:00:00  UTC").unwrap().2, "+00:00");
        assert_eq!(zoned("2023-03-15 10:20:30+0530").unwrap().2, "+05:30");
        assert_eq!(zoned("2023-03-15 10:20:30+8").unwrap().2, "+08:00");
        assert_eq!(zoned("2023-03-15T10:20:30 cst").unwrap().2, "Asia/Shanghai");
        assert_eq!(
            zoned("2023-03-15 10:20:30 America/New_York").unwrap().2,
            "America/New_York"
        );
        for not_zoned in [
            "2023-03-15 10:20:30",
            "1970-01-01 +08:00",
            "2023-03-15 10:20:30 Mars/Olympus",
            "2023-03-15 10:20:30+15:00",
            "2023-03-15 10:20:30+08:75",
            "2023-02-30 10:20:30 UTC",
            "2023-03-15",
        ] {
            assert_eq!(zoned(not_zoned), None, "{not_zoned}");
        }
    }

    #[test]
    fn text_reads_as_doris_casts_it() {
        assert_eq!(parse_text("2023-01-01").unwrap().1, Shape::Date);
        assert_eq!(
            parse_text("2023-07-13 22:28:18.123").unwrap().1,
            Shape::DateTime(TimeUnit::Millisecond)
        );
        assert_eq!(
            parse_text("2023-07-13 22:28:18").unwrap().1,
            Shape::DateTime(TimeUnit::Second)
        );
        for bad in [
            "",
            "2023-02-30",
            "yesterday",
            "2023-01-01 25:00:00",
            "2023-01-01 1:2",
        ] {
            assert!(parse_text(bad).is_none(), "{bad}");
        }
    }
}
