//! Doris's Arrow forms of values into the values Doris holds: what a Flight column becomes
//! before the reader hands it on (docs/value-inventory.md lists each form, its releases and
//! the BE code that writes it).
//!
//! - **DATETIME** arrives, on every release before the naive form (apache/doris#66873), as
//!   a *zoned* timestamp `timestamp[unit, tz=<session time_zone>]` whose value is the
//!   instant of the wall clock read in that zone (`DataTypeDateTimeV2SerDe::write_column_to_arrow`,
//!   `unix_timestamp(ctz)`). The wall clock is the instant plus the zone's offset at that
//!   instant. Going through a zone loses one thing: every wall clock inside a forward
//!   transition's gap (a DST spring-forward hour) is written as the transition's instant
//!   (cctz's `convert` of a skipped civil time), the instant a wall clock just after the
//!   gap has too. A value at such an instant cannot be read exactly; the read fails naming
//!   the column and the ways to read it exactly (MySQL, or a session zone without DST).
//! - **IPV4** arrives as the `int32` of the address's bits (`DataTypeIPv4SerDe::write_column_to_arrow`);
//!   it becomes the dotted text a MySQL read gives.
//! - Anything else is cast by arrow where the cast is exact (`safe: false`: a value that
//!   does not fit fails the read).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array, StringBuilder};
use arrow::compute::{CastOptions, cast_with_options};
use arrow::datatypes::{DataType, Int32Type, Int64Type, TimeUnit};
use arrow::util::display::FormatOptions;
use chrono::{DateTime, Offset, TimeZone};

/// Why a column could not be made what the read planned: the message names no value.
pub(super) type Refusal = String;

/// `column` (as Flight sent it) as `target` (the planned type), value for value.
pub(super) fn conform_column(column: &ArrayRef, target: &DataType) -> Result<ArrayRef, Refusal> {
    let got = column.data_type();
    if got == &DataType::Date32 {
        refuse_year_zero_winter(column)?;
    }
    if got == target {
        return Ok(column.clone());
    }
    match (got, target) {
        (DataType::Timestamp(unit, Some(zone)), DataType::Timestamp(_, None)) => {
            let wall = wall_clock(column, *unit, zone)?;
            exact_cast(&wall, target)
        }
        // TIMESTAMPTZ: the values are instants whatever zone tags them (`Z` on some builds,
        // apache/doris#67370, which pyarrow cannot resolve): retagged, never shifted.
        (DataType::Timestamp(unit, Some(_)), DataType::Timestamp(target_unit, Some(zone))) => {
            let instants = retyped(column, DataType::Timestamp(*unit, None))?;
            let in_unit = exact_cast(&instants, &DataType::Timestamp(*target_unit, None))?;
            retyped(
                &in_unit,
                DataType::Timestamp(*target_unit, Some(zone.clone())),
            )
        }
        // Inside ARRAY, MAP and STRUCT the same forms (the BE's serdes recurse with the
        // session zone): each child conformed by these rules.
        (DataType::List(_), DataType::List(item)) => {
            let list = column.as_list::<i32>();
            let values = conform_column(list.values(), item.data_type())?;
            let rebuilt = arrow::array::ListArray::try_new(
                item.clone(),
                list.offsets().clone(),
                values,
                list.nulls().cloned(),
            )
            .map_err(|e| e.to_string())?;
            Ok(Arc::new(rebuilt))
        }
        (DataType::Struct(_), DataType::Struct(fields))
            if column.as_struct().num_columns() == fields.len() =>
        {
            let s = column.as_struct();
            let children = s
                .columns()
                .iter()
                .zip(fields.iter())
                .map(|(child, field)| conform_column(child, field.data_type()))
                .collect::<Result<Vec<_>, _>>()?;
            let rebuilt =
                arrow::array::StructArray::try_new(fields.clone(), children, s.nulls().cloned())
                    .map_err(|e| e.to_string())?;
            Ok(Arc::new(rebuilt))
        }
        (DataType::Map(_, _), DataType::Map(entries, sorted)) => {
            let map = column.as_map();
            let DataType::Struct(kv) = entries.data_type() else {
                return exact_cast(column, target);
            };
            let keys = conform_column(map.keys(), kv[0].data_type())?;
            let values = conform_column(map.values(), kv[1].data_type())?;
            let pairs = arrow::array::StructArray::try_new(kv.clone(), vec![keys, values], None)
                .map_err(|e| e.to_string())?;
            let rebuilt = arrow::array::MapArray::try_new(
                entries.clone(),
                map.offsets().clone(),
                pairs,
                map.nulls().cloned(),
                *sorted,
            )
            .map_err(|e| e.to_string())?;
            Ok(Arc::new(rebuilt))
        }
        (DataType::Int32, DataType::Utf8) => Ok(ipv4_text(column)),
        // Daft's string layout (64-bit offsets).
        (DataType::Int32, DataType::LargeUtf8) => exact_cast(&ipv4_text(column), target),
        // 2.1.1–2.1.4 sent the same bits as `uint32`.
        (DataType::UInt32, DataType::Utf8 | DataType::LargeUtf8) => {
            let as_i32: ArrayRef = Arc::new(arrow::array::Int32Array::from_iter(
                column
                    .as_primitive::<arrow::datatypes::UInt32Type>()
                    .iter()
                    .map(|v| v.map(|v| v as i32)),
            ));
            exact_cast(&ipv4_text(&as_i32), target)
        }
        _ => exact_cast(column, target),
    }
}

fn exact_cast(column: &ArrayRef, target: &DataType) -> Result<ArrayRef, Refusal> {
    let options = CastOptions {
        safe: false,
        format_options: FormatOptions::default(),
    };
    cast_with_options(column, target, &options)
        .map_err(|e| format!("Flight sent {}: {e}", column.data_type()))
}

/// `column`'s data under another type of the same layout.
fn retyped(column: &ArrayRef, to: DataType) -> Result<ArrayRef, Refusal> {
    let data = column
        .to_data()
        .into_builder()
        .data_type(to)
        .build()
        .map_err(|e| e.to_string())?;
    Ok(arrow::array::make_array(data))
}

/// Units of `unit` in one second.
fn per_second(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

/// A zone as Doris names it in the Arrow type: an IANA name (`Asia/Shanghai`), `UTC`, `Z`
/// (apache/doris#67370) or an offset (`+08:00`).
#[derive(Debug, Clone, Copy)]
enum Zone {
    Fixed(i64),
    Named(chrono_tz::Tz),
}

impl Zone {
    fn parse(text: &str) -> Result<Self, Refusal> {
        let trimmed = text.trim();
        if matches!(
            trimmed,
            "Z" | "z" | "UTC" | "utc" | "GMT" | "+00:00" | "-00:00"
        ) {
            return Ok(Zone::Fixed(0));
        }
        if let Some(offset) = fixed_offset_seconds(trimmed) {
            return Ok(Zone::Fixed(offset));
        }
        // `UTC+08:00` / `GMT-05:30`, which Doris's session variable takes as they are.
        if let Some(offset) = ["UTC", "GMT"]
            .iter()
            .find_map(|p| trimmed.strip_prefix(p))
            .and_then(fixed_offset_seconds)
        {
            return Ok(Zone::Fixed(offset));
        }
        // Doris reads `CST` as China Standard Time (its alias), not US Central.
        if trimmed.eq_ignore_ascii_case("CST") {
            return Ok(Zone::Named(chrono_tz::Asia::Shanghai));
        }
        trimmed
            .parse::<chrono_tz::Tz>()
            .map(Zone::Named)
            .map_err(|_| {
                format!("Flight sent DATETIME in a time zone the reader does not know ({trimmed})")
            })
    }

    /// The zone's offset from UTC at the instant `seconds` (since the epoch, UTC).
    fn offset_at(self, seconds: i64) -> Result<i64, Refusal> {
        match self {
            Zone::Fixed(offset) => Ok(offset),
            Zone::Named(tz) => {
                let utc = DateTime::from_timestamp(seconds, 0)
                    .ok_or_else(out_of_range)?
                    .naive_utc();
                Ok(i64::from(
                    tz.offset_from_utc_datetime(&utc).fix().local_minus_utc(),
                ))
            }
        }
    }

    /// The offset of every second of UTC hour `hour` when it is one and the hour does
    /// not start with a transition (`None`: look each second up).
    fn uniform_hour(self, hour: i64) -> Result<Option<i64>, Refusal> {
        if let Zone::Fixed(offset) = self {
            return Ok(Some(offset));
        }
        let start = hour.checked_mul(3600).ok_or_else(out_of_range)?;
        let at = self.offset_at(start)?;
        let same = self.offset_at(start - 1)? == at && self.offset_at(start + 3599)? == at;
        Ok(same.then_some(at))
    }

    /// The offset at instant `second`, refusing an instant that starts a forward
    /// transition: Doris writes every wall clock of the gap as that instant.
    fn offset_outside_gap(self, second: i64) -> Result<i64, Refusal> {
        let offset = self.offset_at(second)?;
        if self.offset_at(second - 1)? < offset {
            return Err(format!(
                "a DATETIME value at a forward time-zone transition of {} (a daylight-saving \
                 gap): Doris's Flight form writes every wall clock of the gap and the first \
                 one after it as the same instant, so the value cannot be read exactly over \
                 Flight; read the column over the MySQL transport, or run Doris in a time zone \
                 without daylight saving",
                zone_name(self)
            ));
        }
        Ok(offset)
    }
}

/// `+08:00`, `-05:30`, `+0800`, `+8:00` as seconds east of UTC.
fn fixed_offset_seconds(text: &str) -> Option<i64> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let (hours, minutes) = match rest.split_once(':') {
        Some((h, m)) => (h, m),
        None if rest.len() == 4 => rest.split_at(2),
        None => return None,
    };
    let hours: i64 = hours.parse().ok()?;
    let minutes: i64 = minutes.parse().ok()?;
    if !(0..=14).contains(&hours) || !(0..60).contains(&minutes) {
        return None;
    }
    Some(sign * (hours * 3600 + minutes * 60))
}

/// The wall clocks of a zoned timestamp column, as a naive timestamp in the same unit.
fn wall_clock(column: &ArrayRef, unit: TimeUnit, zone: &str) -> Result<ArrayRef, Refusal> {
    let zone = Zone::parse(zone)?;
    let per_second = per_second(unit);
    let instants = retyped(column, DataType::Int64)?;
    let instants = instants.as_primitive::<Int64Type>();
    let mut walls = Vec::with_capacity(instants.len());
    // Offsets change rarely: an hour whose offset is the same at its start, at its end and
    // a second before it holds no transition (no zone changes twice within an hour), so
    // its values take that offset without a lookup each.
    let mut hour_cache: Option<(i64, Option<i64>)> = None;
    for (i, value) in instants.values().iter().enumerate() {
        if instants.is_null(i) {
            walls.push(0);
            continue;
        }
        let second = value.div_euclid(per_second);
        let hour = second.div_euclid(3600);
        let uniform = match hour_cache {
            Some((h, uniform)) if h == hour => uniform,
            _ => {
                let uniform = zone.uniform_hour(hour)?;
                hour_cache = Some((hour, uniform));
                uniform
            }
        };
        let offset = match uniform {
            Some(offset) => offset,
            None => zone.offset_outside_gap(second)?,
        };
        let wall = offset
            .checked_mul(per_second)
            .and_then(|shift| value.checked_add(shift))
            .ok_or_else(out_of_range)?;
        walls.push(wall);
    }
    let walls: ArrayRef = Arc::new(Int64Array::new(walls.into(), instants.nulls().cloned()));
    retyped(&walls, DataType::Timestamp(unit, None))
}

fn zone_name(zone: Zone) -> String {
    match zone {
        Zone::Fixed(offset) => format!("UTC{offset:+}s"),
        Zone::Named(tz) => tz.name().to_owned(),
    }
}

fn out_of_range() -> Refusal {
    "Flight sent a DATETIME outside the range the reader can place in a time zone".into()
}

/// 0000-03-01 as days since the epoch (proleptic Gregorian, where year 0 is a leap year).
const YEAR_ZERO_MARCH: i32 = -719_468;

/// Refuses DATE values in January or February of year 0: Doris counts year 0 as a common
/// year and sends each of them one day late over Flight (apache/doris#67366), where the
/// value it holds cannot be told from the one it sent once the bug is fixed.
fn refuse_year_zero_winter(column: &ArrayRef) -> Result<(), Refusal> {
    let days = column.as_primitive::<arrow::datatypes::Date32Type>();
    if days.iter().flatten().any(|d| d < YEAR_ZERO_MARCH) {
        return Err(
            "a DATE in January or February of year 0, which Doris sends one day late \
                    over Flight (apache/doris#67366): read the column over the MySQL transport"
                .into(),
        );
    }
    Ok(())
}

/// The dotted text of IPV4 values sent as the `int32` of their bits.
fn ipv4_text(column: &ArrayRef) -> ArrayRef {
    let bits = column.as_primitive::<Int32Type>();
    let mut text = StringBuilder::with_capacity(bits.len(), bits.len() * 15);
    for value in bits.iter() {
        match value {
            None => text.append_null(),
            Some(v) => text.append_value(std::net::Ipv4Addr::from(v as u32).to_string()),
        }
    }
    Arc::new(text.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, TimestampMicrosecondArray, TimestampSecondArray};
    use chrono::NaiveDate;

    fn micros(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32, us: u32) -> i64 {
        NaiveDate::from_ymd_opt(y, mo, d)
            .and_then(|d| d.and_hms_micro_opt(h, mi, s, us))
            .map(|t| t.and_utc().timestamp_micros())
            .unwrap_or_default()
    }

    #[test]
    fn a_zoned_datetime_becomes_the_wall_clock_doris_holds() {
        // 2024-01-02 03:04:05.123456 in Asia/Shanghai is 2024-01-01 19:04:05.123456 UTC.
        let instant = micros(2024, 1, 1, 19, 4, 5, 123_456);
        let zoned: ArrayRef = Arc::new(
            TimestampMicrosecondArray::from(vec![Some(instant), None])
                .with_timezone("Asia/Shanghai"),
        );
        let target = DataType::Timestamp(TimeUnit::Microsecond, None);
        let wall = conform_column(&zoned, &target).unwrap_or_else(|e| panic!("{e}"));
        let wall = wall.as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
        assert_eq!(wall.value(0), micros(2024, 1, 2, 3, 4, 5, 123_456));
        assert!(wall.is_null(1));
    }

    #[test]
    fn every_spelling_of_a_zone_doris_sends_is_read() {
        let instant = micros(2024, 6, 1, 0, 0, 0, 0) / 1_000_000;
        for (zone, hours) in [
            ("Z", 0),
            ("UTC", 0),
            ("+08:00", 8),
            ("-05:30", -5),
            ("America/New_York", -4),
            ("CST", 8),
            ("UTC+08:00", 8),
            ("GMT-05:30", -5),
        ] {
            let zoned: ArrayRef =
                Arc::new(TimestampSecondArray::from(vec![instant]).with_timezone(zone));
            let target = DataType::Timestamp(TimeUnit::Microsecond, None);
            let wall = conform_column(&zoned, &target).unwrap_or_else(|e| panic!("{zone}: {e}"));
            let wall = wall
                .as_primitive::<arrow::datatypes::TimestampMicrosecondType>()
                .value(0);
            let expected = if zone.ends_with("-05:30") {
                -(5 * 3600 + 1800)
            } else {
                hours * 3600
            };
            assert_eq!(wall, (instant + expected) * 1_000_000, "{zone}");
        }
    }

    #[test]
    fn a_value_at_a_dst_gap_is_refused_and_one_beside_it_is_read() {
        // 2024-03-10 02:00 EST did not happen: Doris writes 02:00–02:59 and 03:00 EDT as
        // 07:00 UTC.
        let at_gap = micros(2024, 3, 10, 7, 0, 0, 250_000);
        let zoned: ArrayRef = Arc::new(
            TimestampMicrosecondArray::from(vec![at_gap]).with_timezone("America/New_York"),
        );
        let target = DataType::Timestamp(TimeUnit::Microsecond, None);
        let e = conform_column(&zoned, &target).unwrap_err();
        assert!(
            e.contains("MySQL transport") && e.contains("America/New_York"),
            "{e}"
        );
        let beside = micros(2024, 3, 10, 7, 0, 1, 0);
        let zoned: ArrayRef = Arc::new(
            TimestampMicrosecondArray::from(vec![beside]).with_timezone("America/New_York"),
        );
        let wall = conform_column(&zoned, &target).unwrap_or_else(|e| panic!("{e}"));
        let wall = wall
            .as_primitive::<arrow::datatypes::TimestampMicrosecondType>()
            .value(0);
        assert_eq!(wall, micros(2024, 3, 10, 3, 0, 1, 0));
        // A fold (the repeated hour of November) reads back exactly: Doris takes the earlier.
        let fold = micros(2024, 11, 3, 5, 30, 0, 0);
        let zoned: ArrayRef =
            Arc::new(TimestampMicrosecondArray::from(vec![fold]).with_timezone("America/New_York"));
        let wall = conform_column(&zoned, &target).unwrap_or_else(|e| panic!("{e}"));
        let wall = wall
            .as_primitive::<arrow::datatypes::TimestampMicrosecondType>()
            .value(0);
        assert_eq!(wall, micros(2024, 11, 3, 1, 30, 0, 0));
    }

    #[test]
    fn zoned_datetimes_and_ipv4_bits_inside_nested_values_are_read_the_same_way() {
        use arrow::array::{ListArray, TimestampSecondArray};
        let zoned = TimestampSecondArray::from(vec![Some(0), None]).with_timezone("+08:00");
        let item = Arc::new(arrow::datatypes::Field::new(
            "item",
            DataType::Timestamp(TimeUnit::Second, Some("+08:00".into())),
            true,
        ));
        let list: ArrayRef = Arc::new(
            ListArray::try_new(
                item,
                arrow::buffer::OffsetBuffer::from_lengths([2]),
                Arc::new(zoned),
                None,
            )
            .unwrap_or_else(|e| panic!("{e}")),
        );
        let target = DataType::List(Arc::new(arrow::datatypes::Field::new(
            "item",
            DataType::Timestamp(TimeUnit::Microsecond, None),
            true,
        )));
        let got = conform_column(&list, &target).unwrap_or_else(|e| panic!("{e}"));
        let values = got.as_list::<i32>().value(0);
        let values = values.as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
        assert_eq!(
            values.value(0),
            8 * 3600 * 1_000_000,
            "the wall clock, not the instant"
        );
        assert!(values.is_null(1));
    }

    #[test]
    fn a_year_zero_winter_date_is_refused_and_march_is_read() {
        use arrow::array::Date32Array;
        let winter: ArrayRef = Arc::new(Date32Array::from(vec![Some(-719_527), None]));
        let e = conform_column(&winter, &DataType::Date32).unwrap_err();
        assert!(e.contains("67366") && e.contains("MySQL"), "{e}");
        let march: ArrayRef = Arc::new(Date32Array::from(vec![YEAR_ZERO_MARCH, 19_753]));
        assert!(conform_column(&march, &DataType::Date32).is_ok());
    }

    #[test]
    fn an_unknown_zone_is_refused_not_guessed() {
        let zoned: ArrayRef =
            Arc::new(TimestampSecondArray::from(vec![0]).with_timezone("Mars/Olympus"));
        let e = conform_column(&zoned, &DataType::Timestamp(TimeUnit::Second, None)).unwrap_err();
        assert!(e.contains("Mars/Olympus"), "{e}");
    }

    #[test]
    fn a_timestamptz_keeps_its_instants_under_any_zone_tag() {
        let zoned: ArrayRef = Arc::new(
            TimestampSecondArray::from(vec![Some(1_735_689_600), None]).with_timezone("Z"),
        );
        let target = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        let got = conform_column(&zoned, &target).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got.data_type(), &target);
        let got = got.as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
        assert_eq!(got.value(0), 1_735_689_600_000_000);
        assert!(got.is_null(1));
    }

    #[test]
    fn ipv4_bits_become_the_dotted_text() {
        let bits: ArrayRef = Arc::new(Int32Array::from(vec![
            Some(0xC0A8_0101_u32 as i32),
            Some(0),
            Some(-1),
            None,
        ]));
        // 2.1.1–2.1.4's `uint32` of the same bits.
        let unsigned: ArrayRef = Arc::new(arrow::array::UInt32Array::from(vec![
            Some(0xC0A8_0101),
            None,
        ]));
        let dotted = conform_column(&unsigned, &DataType::Utf8).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(dotted.as_string::<i32>().value(0), "192.168.1.1");
        assert!(dotted.is_null(1));
        let large = conform_column(&bits, &DataType::LargeUtf8).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(large.as_string::<i64>().value(0), "192.168.1.1");
        let text = conform_column(&bits, &DataType::Utf8).unwrap_or_else(|e| panic!("{e}"));
        let text = text.as_string::<i32>();
        assert_eq!(text.value(0), "192.168.1.1");
        assert_eq!(text.value(1), "0.0.0.0");
        assert_eq!(text.value(2), "255.255.255.255");
        assert!(text.is_null(3));
    }
}
