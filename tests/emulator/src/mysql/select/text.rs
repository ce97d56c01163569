//! Values in Doris's text-protocol form: how the MySQL face prints each Arrow value
//! (dates, datetimes with their precision, decimals, nested values as JSON-like text).

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Decimal256Type, Float32Type, Float64Type, Int8Type,
    Int16Type, Int32Type, Int64Type, TimeUnit, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use doris_sql::DorisType;

/// Appends Doris's text form of `array[row]` (not null).
pub fn format_value(array: &ArrayRef, row: usize, doris: Option<&DorisType>, out: &mut Vec<u8>) {
    use std::io::Write as _;
    match array.data_type() {
        DataType::Boolean => out.push(if array.as_boolean().value(row) {
            b'1'
        } else {
            b'0'
        }),
        DataType::Int8 => {
            let _ = write!(out, "{}", array.as_primitive::<Int8Type>().value(row));
        }
        DataType::Int16 => {
            let _ = write!(out, "{}", array.as_primitive::<Int16Type>().value(row));
        }
        DataType::Int32 => {
            let _ = write!(out, "{}", array.as_primitive::<Int32Type>().value(row));
        }
        DataType::Int64 => {
            let _ = write!(out, "{}", array.as_primitive::<Int64Type>().value(row));
        }
        DataType::UInt8 => {
            let _ = write!(out, "{}", array.as_primitive::<UInt8Type>().value(row));
        }
        DataType::UInt16 => {
            let _ = write!(out, "{}", array.as_primitive::<UInt16Type>().value(row));
        }
        DataType::UInt32 => {
            let _ = write!(out, "{}", array.as_primitive::<UInt32Type>().value(row));
        }
        DataType::UInt64 => {
            let _ = write!(out, "{}", array.as_primitive::<UInt64Type>().value(row));
        }
        DataType::Float32 => {
            let _ = write!(out, "{}", array.as_primitive::<Float32Type>().value(row));
        }
        DataType::Float64 => {
            let _ = write!(out, "{}", array.as_primitive::<Float64Type>().value(row));
        }
        DataType::Decimal128(_, scale) if *scale >= 0 => {
            push_decimal(
                array.as_primitive::<Decimal128Type>().value(row),
                *scale,
                out,
            );
        }
        DataType::Decimal128(_, _) => {
            let a = array.as_primitive::<Decimal128Type>();
            out.extend_from_slice(a.value_as_string(row).as_bytes());
        }
        DataType::Decimal256(_, _) => {
            let a = array.as_primitive::<Decimal256Type>();
            out.extend_from_slice(a.value_as_string(row).as_bytes());
        }
        DataType::Date32 => push_date(array.as_primitive::<Date32Type>().value(row), out),
        DataType::Timestamp(unit, _) => {
            let precision = match doris {
                Some(DorisType::DateTime { precision }) => *precision,
                _ => unit_digits(*unit),
            };
            let raw = match unit {
                TimeUnit::Second => array
                    .as_primitive::<arrow::datatypes::TimestampSecondType>()
                    .value(row)
                    .saturating_mul(1_000_000),
                TimeUnit::Millisecond => array
                    .as_primitive::<arrow::datatypes::TimestampMillisecondType>()
                    .value(row)
                    .saturating_mul(1_000),
                TimeUnit::Microsecond => array
                    .as_primitive::<arrow::datatypes::TimestampMicrosecondType>()
                    .value(row),
                TimeUnit::Nanosecond => {
                    array
                        .as_primitive::<arrow::datatypes::TimestampNanosecondType>()
                        .value(row)
                        / 1_000
                }
            };
            write_datetime(raw, precision.min(6), out);
        }
        DataType::Utf8 => out.extend_from_slice(array.as_string::<i32>().value(row).as_bytes()),
        DataType::LargeUtf8 => {
            out.extend_from_slice(array.as_string::<i64>().value(row).as_bytes());
        }
        DataType::Utf8View => out.extend_from_slice(array.as_string_view().value(row).as_bytes()),
        DataType::Binary => out.extend_from_slice(array.as_binary::<i32>().value(row)),
        DataType::List(_) | DataType::Map(_, _) | DataType::Struct(_) => {
            nested(array, row, out, false);
        }
        _ => {
            let formatter = arrow::util::display::ArrayFormatter::try_new(
                array.as_ref(),
                &arrow::util::display::FormatOptions::default(),
            );
            if let Ok(f) = formatter {
                let _ = write!(out, "{}", f.value(row));
            }
        }
    }
}

/// Doris's text for nested values: `[1, 2]`, `{"k":1, "j":2}`, `{"f":1, "g":"x"}`; strings
/// and dates quoted inside, `null` for NULL elements.
fn nested(array: &ArrayRef, row: usize, out: &mut Vec<u8>, inside: bool) {
    if array.is_null(row) {
        out.extend_from_slice(b"null");
        return;
    }
    match array.data_type() {
        DataType::List(_) => {
            let list = array.as_list::<i32>().value(row);
            out.push(b'[');
            for i in 0..list.len() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                nested(&list, i, out, true);
            }
            out.push(b']');
        }
        DataType::Map(_, _) => {
            let map = array.as_map();
            let entries = map.value(row);
            let (keys, values) = (entries.column(0), entries.column(1));
            out.push(b'{');
            for i in 0..entries.len() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                nested(keys, i, out, true);
                out.push(b':');
                nested(values, i, out, true);
            }
            out.push(b'}');
        }
        DataType::Struct(fields) => {
            let s = array.as_struct();
            out.push(b'{');
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                out.push(b'"');
                out.extend_from_slice(field.name().as_bytes());
                out.extend_from_slice(b"\":");
                nested(s.column(i), row, out, true);
            }
            out.push(b'}');
        }
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Date32
        | DataType::Timestamp(_, _)
            if inside =>
        {
            out.push(b'"');
            format_value(array, row, None, out);
            out.push(b'"');
        }
        _ => format_value(array, row, None, out),
    }
}

/// `YYYY-MM-DD` for days since the epoch (`0000-00-00` outside years 0–9999).
fn push_date(days: i32, out: &mut Vec<u8>) {
    let (y, m, d) = civil_from_days(i64::from(days));
    match u32::try_from(y) {
        Ok(y) if y <= 9999 => {
            push_padded(out, y, 4);
            out.push(b'-');
            push_padded(out, m, 2);
            out.push(b'-');
            push_padded(out, d, 2);
        }
        _ => out.extend_from_slice(b"0000-00-00"),
    }
}

/// `v` in decimal with at least `width` digits (zero-padded).
fn push_padded(out: &mut Vec<u8>, v: u32, width: usize) {
    let mut buffer = itoa::Buffer::new();
    let digits = buffer.format(v).as_bytes();
    out.extend(std::iter::repeat_n(
        b'0',
        width.saturating_sub(digits.len()),
    ));
    out.extend_from_slice(digits);
}

/// A DECIMAL's text: the unscaled value with the point `scale` digits from the right
/// (`-0.05` for -5 at scale 2), as arrow's `value_as_string` writes it, without allocating.
fn push_decimal(value: i128, scale: i8, out: &mut Vec<u8>) {
    let mut buffer = itoa::Buffer::new();
    let digits = buffer.format(value.unsigned_abs()).as_bytes();
    if value < 0 {
        out.push(b'-');
    }
    let scale = usize::from(scale.unsigned_abs());
    if scale == 0 {
        out.extend_from_slice(digits);
    } else if digits.len() > scale {
        let (whole, frac) = digits.split_at(digits.len() - scale);
        out.extend_from_slice(whole);
        out.push(b'.');
        out.extend_from_slice(frac);
    } else {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', scale - digits.len()));
        out.extend_from_slice(digits);
    }
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `YYYY-MM-DD HH:MM:SS[.f…]` with `precision` fractional digits, from microseconds.
fn write_datetime(micros: i64, precision: u8, out: &mut Vec<u8>) {
    let days = micros.div_euclid(86_400_000_000);
    let rem = micros.rem_euclid(86_400_000_000);
    let (y, m, d) = civil_from_days(days);
    let secs = (rem / 1_000_000) as u32;
    let frac = (rem % 1_000_000) as u32;
    push_padded(out, u32::try_from(y).unwrap_or(0), 4);
    out.push(b'-');
    push_padded(out, m, 2);
    out.push(b'-');
    push_padded(out, d, 2);
    out.push(b' ');
    push_padded(out, secs / 3600, 2);
    out.push(b':');
    push_padded(out, (secs / 60) % 60, 2);
    out.push(b':');
    push_padded(out, secs % 60, 2);
    if precision > 0 {
        out.push(b'.');
        let at = out.len();
        push_padded(out, frac, 6);
        out.truncate(at + usize::from(precision));
    }
}

/// Fractional-second digits of a time unit (DATETIME(p)).
pub(super) fn unit_digits(unit: TimeUnit) -> u8 {
    match unit {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        TimeUnit::Microsecond => 6,
        TimeUnit::Nanosecond => 9,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetimes_and_dates_print_like_doris() {
        let mut out = Vec::new();
        write_datetime(1_706_702_400_123_456, 3, &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "2024-01-31 12:00:00.123");
        let mut out = Vec::new();
        write_datetime(-1, 6, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "1969-12-31 23:59:59.999999"
        );
        let mut out = Vec::new();
        push_date(19_753, &mut out);
        push_date(-719_529, &mut out); // before year 0
        assert_eq!(String::from_utf8(out).unwrap(), "2024-01-310000-00-00");
    }

    #[test]
    fn decimals_print_like_arrow() {
        use arrow::array::Decimal128Array;
        let values = [
            0i128,
            5,
            -5,
            123_456,
            -123_456,
            100,
            i128::from(i64::MAX) * 1000,
        ];
        for scale in [0i8, 2, 4, 6] {
            let array = Decimal128Array::from(values.to_vec())
                .with_precision_and_scale(38, scale)
                .unwrap();
            for (i, v) in values.iter().enumerate() {
                let mut out = Vec::new();
                push_decimal(*v, scale, &mut out);
                assert_eq!(String::from_utf8(out).unwrap(), array.value_as_string(i));
            }
        }
    }
}
