//! The Arrow form a Doris BE's Flight result sink gives each value (docs/value-inventory.md):
//! the emulator stores values in the client-facing Arrow types of `doris-sql`, and the BE's
//! serde code writes some of them otherwise. Applied to every Flight result whose columns
//! come from a table (their Doris types known), to the schema and to every batch.
//!
//! - **DATETIME(p)**: `timestamp[unit, tz=<session time_zone>]` (unit by p: 0 → s, 1–3 →
//!   ms, 4–6 → µs; `DataTypeDateTimeV2SerDe::write_column_to_arrow`), the value the instant
//!   of the wall clock read in the session zone as cctz reads it: a wall clock a transition
//!   skipped becomes the transition's instant, a repeated one takes the earlier instant.
//!   Releases with the naive form (apache/doris#66873, 4.1's pick #67027:
//!   [`crate::DorisProfile::flight_datetime_naive`]) send the wall clock as if UTC, without a
//!   zone. Inside ARRAY/MAP/STRUCT the same rule applies (the serdes recurse with the zone).
//! - **IPV4**: `int32` of the address's bits (`DataTypeIPv4SerDe::write_column_to_arrow`).
//! - **TIMESTAMPTZ** (4.1): `timestamp[unit, tz=<session time_zone>]` of the instant, with
//!   `Z` for a UTC session (apache/doris#67370).
//!
//! Not played: a DATE in January or February of year 0, which Doris sends one day late
//! (apache/doris#67366); the reader refuses such dates over Flight whatever it receives.
//!
//! Everything else goes as stored.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int32Array, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use arrow::error::ArrowError;
use chrono::{NaiveDateTime, Offset, TimeZone};
use doris_sql::DorisType;

/// How one result's values travel: the session's zone and the release's form.
#[derive(Debug, Clone)]
pub struct WireForm {
    /// The session's `time_zone`.
    pub zone: String,
    /// DATETIME as a naive timestamp (the naive form's releases).
    pub naive_datetime: bool,
}

/// The Flight schema of a result whose columns have `types` (`None`: not a table column,
/// sent as computed).
pub fn wire_schema(schema: &Schema, types: &[Option<DorisType>], form: &WireForm) -> SchemaRef {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .zip(types.iter().chain(std::iter::repeat(&None)))
        .map(|(field, ty)| match ty {
            Some(ty) => {
                field
                    .as_ref()
                    .clone()
                    .with_data_type(wire_type(ty, field.data_type(), form))
            }
            None => field.as_ref().clone(),
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// The Arrow type Doris sends a column of Doris type `ty` stored as `stored`.
fn wire_type(ty: &DorisType, stored: &DataType, form: &WireForm) -> DataType {
    match (ty, stored) {
        (DorisType::DateTime { precision }, DataType::Timestamp(_, None)) => DataType::Timestamp(
            doris_sql::datetime_unit(*precision),
            (!form.naive_datetime).then(|| form.zone.as_str().into()),
        ),
        (DorisType::TimestampTz { precision }, DataType::Timestamp(_, Some(_))) => {
            DataType::Timestamp(
                doris_sql::datetime_unit(*precision),
                Some(tz_tag(&form.zone).into()),
            )
        }
        (DorisType::Ipv4, DataType::Utf8) => DataType::Int32,
        (DorisType::Array { element, .. }, DataType::List(item)) => DataType::List(Arc::new(
            item.as_ref()
                .clone()
                .with_data_type(wire_type(element, item.data_type(), form)),
        )),
        (DorisType::Map { key, value }, DataType::Map(entries, sorted)) => {
            match entries.data_type() {
                DataType::Struct(kv) if kv.len() == 2 => {
                    let k = kv[0].as_ref().clone().with_data_type(wire_type(
                        key,
                        kv[0].data_type(),
                        form,
                    ));
                    let v = kv[1].as_ref().clone().with_data_type(wire_type(
                        value,
                        kv[1].data_type(),
                        form,
                    ));
                    DataType::Map(
                        Arc::new(
                            entries
                                .as_ref()
                                .clone()
                                .with_data_type(DataType::Struct(vec![k, v].into())),
                        ),
                        *sorted,
                    )
                }
                _ => stored.clone(),
            }
        }
        (DorisType::Struct { fields }, DataType::Struct(stored_fields))
            if fields.len() == stored_fields.len() =>
        {
            DataType::Struct(
                fields
                    .iter()
                    .zip(stored_fields.iter())
                    .map(|(f, s)| {
                        s.as_ref()
                            .clone()
                            .with_data_type(wire_type(&f.ty, s.data_type(), form))
                    })
                    .collect(),
            )
        }
        _ => stored.clone(),
    }
}

/// The zone tag of a TIMESTAMPTZ: `Z` for a UTC session (apache/doris#67370).
fn tz_tag(zone: &str) -> &str {
    if matches!(zone, "UTC" | "+00:00" | "Etc/UTC") {
        "Z"
    } else {
        zone
    }
}

/// `batch` (in storage types) in the wire types of `schema`.
pub fn to_wire(
    batch: &RecordBatch,
    schema: &SchemaRef,
    types: &[Option<DorisType>],
) -> Result<RecordBatch, ArrowError> {
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .enumerate()
        .map(
            |(i, (column, field))| match types.get(i).and_then(Option::as_ref) {
                Some(ty) => column_to_wire(column, ty, field.data_type()),
                None => Ok(column.clone()),
            },
        )
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(schema.clone(), columns)
}

fn column_to_wire(
    column: &ArrayRef,
    ty: &DorisType,
    wire: &DataType,
) -> Result<ArrayRef, ArrowError> {
    if column.data_type() == wire {
        return Ok(column.clone());
    }
    match (ty, wire) {
        (DorisType::DateTime { .. }, DataType::Timestamp(unit, zone)) => {
            let walls = arrow::compute::cast(column, &DataType::Timestamp(*unit, None))?;
            match zone {
                None => Ok(walls),
                Some(zone) => instants_of_walls(&walls, *unit, zone),
            }
        }
        (DorisType::TimestampTz { .. }, DataType::Timestamp(unit, Some(zone))) => {
            let instants =
                arrow::compute::cast(column, &DataType::Timestamp(*unit, Some("UTC".into())))?;
            retyped(&instants, DataType::Timestamp(*unit, Some(zone.clone())))
        }
        (DorisType::Ipv4, DataType::Int32) => {
            let text = column.as_string::<i32>();
            let bits: Int32Array = text
                .iter()
                .map(|v| {
                    v.and_then(|v| v.parse::<std::net::Ipv4Addr>().ok())
                        .map(|a| u32::from(a) as i32)
                })
                .collect();
            Ok(Arc::new(bits))
        }
        (DorisType::Array { element, .. }, DataType::List(item)) => {
            let list = column.as_list::<i32>();
            let values = column_to_wire(list.values(), element, item.data_type())?;
            Ok(Arc::new(arrow::array::ListArray::try_new(
                item.clone(),
                list.offsets().clone(),
                values,
                list.nulls().cloned(),
            )?))
        }
        (DorisType::Map { key, value }, DataType::Map(entries, sorted)) => {
            let map = column.as_map();
            let DataType::Struct(kv) = entries.data_type() else {
                return Ok(column.clone());
            };
            let keys = column_to_wire(map.keys(), key, kv[0].data_type())?;
            let values = column_to_wire(map.values(), value, kv[1].data_type())?;
            let entries_array =
                arrow::array::StructArray::try_new(kv.clone(), vec![keys, values], None)?;
            Ok(Arc::new(arrow::array::MapArray::try_new(
                entries.clone(),
                map.offsets().clone(),
                entries_array,
                map.nulls().cloned(),
                *sorted,
            )?))
        }
        (DorisType::Struct { fields }, DataType::Struct(wire_fields)) => {
            let s = column.as_struct();
            let children = fields
                .iter()
                .zip(wire_fields.iter())
                .zip(s.columns())
                .map(|((f, w), child)| column_to_wire(child, &f.ty, w.data_type()))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Arc::new(arrow::array::StructArray::try_new(
                wire_fields.clone(),
                children,
                s.nulls().cloned(),
            )?))
        }
        _ => Ok(column.clone()),
    }
}

fn retyped(column: &ArrayRef, to: DataType) -> Result<ArrayRef, ArrowError> {
    Ok(arrow::array::make_array(
        column.to_data().into_builder().data_type(to).build()?,
    ))
}

/// Units of `unit` in a second.
fn per_second(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

/// Naive wall clocks (in `unit`) as the instants Doris writes for them in `zone`.
fn instants_of_walls(walls: &ArrayRef, unit: TimeUnit, zone: &str) -> Result<ArrayRef, ArrowError> {
    let per = per_second(unit);
    let raw = retyped(walls, DataType::Int64)?;
    let raw = raw.as_primitive::<arrow::datatypes::Int64Type>();
    let mut out = Vec::with_capacity(raw.len());
    for (i, wall) in raw.values().iter().enumerate() {
        if raw.is_null(i) {
            out.push(0);
            continue;
        }
        let (second, fraction) = (wall.div_euclid(per), wall.rem_euclid(per));
        let instant = civil_to_instant(second, zone).ok_or_else(|| {
            ArrowError::ComputeError(format!("a DATETIME cannot be placed in time zone {zone}"))
        })?;
        out.push(instant * per + fraction);
    }
    let instants = Int64Array::new(out.into(), raw.nulls().cloned());
    retyped(
        &(Arc::new(instants) as ArrayRef),
        DataType::Timestamp(unit, Some(zone.into())),
    )
}

/// cctz's `convert(civil_second, zone)`: the instant of wall clock `wall` (seconds, as if
/// UTC) in `zone`; a skipped wall clock gives the transition's instant, a repeated one the
/// earlier instant.
pub fn civil_to_instant(wall: i64, zone: &str) -> Option<i64> {
    if let Ok(offset) = zone.parse::<chrono::FixedOffset>() {
        return Some(wall - i64::from(offset.local_minus_utc()));
    }
    let tz: chrono_tz::Tz = match zone {
        "Z" => chrono_tz::UTC,
        other => other.parse().ok()?,
    };
    let local = |s: i64| -> Option<NaiveDateTime> {
        chrono::DateTime::from_timestamp(s, 0).map(|d| d.naive_utc())
    };
    match tz.from_local_datetime(&local(wall)?) {
        chrono::LocalResult::Single(at) => Some(at.timestamp()),
        chrono::LocalResult::Ambiguous(earlier, _) => Some(earlier.timestamp()),
        chrono::LocalResult::None => {
            // Inside a gap: the transition is where the offset before it no longer holds.
            let before = tz
                .offset_from_utc_datetime(&local(wall - 86_400)?)
                .fix()
                .local_minus_utc();
            let mut at = wall - i64::from(before);
            // The first instant whose wall clock lies past the gap, to the second.
            while tz
                .offset_from_utc_datetime(&local(at - 1)?)
                .fix()
                .local_minus_utc()
                != before
            {
                at -= 1;
            }
            Some(at)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wall(text: &str) -> i64 {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S")
            .map(|t| t.and_utc().timestamp())
            .unwrap_or_default()
    }

    #[test]
    fn wall_clocks_become_instants_as_cctz_reads_them() {
        // Shanghai: +8 hours.
        assert_eq!(
            civil_to_instant(wall("2024-01-02 03:04:05"), "Asia/Shanghai"),
            Some(wall("2024-01-01 19:04:05"))
        );
        // New York's spring gap: 02:30 is the transition's instant, 07:00 UTC.
        assert_eq!(
            civil_to_instant(wall("2024-03-10 02:30:00"), "America/New_York"),
            Some(wall("2024-03-10 07:00:00"))
        );
        // Its autumn fold: the earlier instant (EDT).
        assert_eq!(
            civil_to_instant(wall("2024-11-03 01:30:00"), "America/New_York"),
            Some(wall("2024-11-03 05:30:00"))
        );
        assert_eq!(
            civil_to_instant(wall("2024-01-01 00:00:00"), "+05:30"),
            Some(wall("2023-12-31 18:30:00"))
        );
    }
}
