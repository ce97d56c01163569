//! Doris's date and time functions: parts (`year`, `dayofweek`, …), conversions (`date`,
//! `last_day`), names (`dayname`, `date_format`), arithmetic (`date_add` with an
//! `INTERVAL`, `days_add`, `months_sub`, …), differences (`datediff`, `hours_diff`, …) and
//! `date_trunc`, as Doris's SQL manual and its regression suite
//! `doc/sql-manual/sql-functions/date_functions` answer them (the corpus file
//! `function_dates.txt` holds those cases).
//!
//! Doris's types: an argument is a DATE (Arrow `Date32`), a DATETIME of some precision
//! (`Timestamp`, seconds/milliseconds/microseconds for 0/3/6 digits), or text read as one
//! (`'2023-01-01'` is a DATE, `'2023-01-01 10:00:00.123'` a DATETIME(3); text that is
//! neither is NULL, as Doris casts it). A function that returns "the argument's type"
//! decides it when the query is planned, from the argument's type or, for a text
//! constant, from its form, as Doris's planner does. Day, week, month, quarter and year
//! arithmetic keeps a DATE a DATE; hour, minute and second arithmetic makes it a
//! DATETIME. Month arithmetic ends on the month's last day when the day does not exist
//! (`2023-01-31` + 1 month is `2023-02-28`).
//!
//! `calendar` holds the date arithmetic (MySQL's week modes and day numbers, month ends,
//! `date_format`), `cells` the values as Arrow holds them, `rewrite` the SQL forms
//! DataFusion does not read as Doris does (`INTERVAL n QUARTER`, `EXTRACT`).

use std::sync::Arc;

use arrow::array::ArrayRef;
use arrow::datatypes::{DataType, Field, FieldRef, TimeUnit};
use chrono::{Datelike, Days, Months, NaiveDate, NaiveDateTime, Timelike};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};

mod calendar;
mod cells;
mod parse_format;
mod rewrite;

pub use rewrite::{
    rewrite_datetime_literals, rewrite_extracts, rewrite_quarters, rewrite_session_time_zone,
    rewrite_timestamp_units, rewrite_zoned_literals,
};

use calendar::{
    DAYS, MONTHS, Unit, add, day_number, epoch_micros, format_moment, from_day_number, local_time,
    local_time_micros, monday_of, months_between, next_day, parse_iso_date, round, truncate,
    week_of, weekday_named, weekday0, whole_months,
};
use cells::{Cell, Shape, collect, integer, interval, moment, text};

/// What a function computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Op {
    /// An INT part of the moment.
    Part(Part),
    /// The DATE of the moment.
    ToDate,
    /// The last day of the moment's month, a DATE.
    LastDay,
    /// Days from the second moment's date to the first's (INT).
    DateDiff,
    /// Whole units from the second moment to the first (BIGINT).
    Diff(Unit),
    /// The weekday's or the month's English name.
    Name(Part),
    /// `date_format(moment, format)`.
    Format,
    /// Adds `sign` × the second argument's units (an integer).
    Add(Unit, i64),
    /// Adds `sign` × the second argument, an `INTERVAL` (or an integer count of days).
    AddInterval(i64),
    /// `date_trunc(moment, 'unit')`.
    Trunc,
    /// `week(moment[, mode])`: the week number in MySQL's mode (default 0).
    Week,
    /// `yearweek(moment[, mode])`: the year and week as `YYYYWW`, the week counted in the
    /// year it belongs to.
    YearWeek,
    /// Whole months from the second moment to the first (`months_diff`), or whole years
    /// (`years_diff`, the months divided by 12): a month counts once its day and time are
    /// reached.
    MonthsDiff(i64),
    /// `makedate(year, day_of_year)`: a DATE, days past the year's end running on.
    MakeDate,
    /// `second_floor(moment[, period[, origin]])` … `year_ceil`: the start (`false`) or the
    /// end (`true`) of the moment's bucket of `period` units (default 1) counted from
    /// `origin` (default `0001-01-01 00:00:00`).
    Round(Unit, bool),
    /// `date_floor(moment, INTERVAL n unit)` / `date_ceil`: [`Op::Round`] from the default
    /// origin, the interval's unit and count as the bucket.
    RoundInterval(bool),
    /// `to_monday(moment)`: the DATE of the Monday of the moment's week.
    ToMonday,
    /// `from_days(n)`: the DATE of MySQL's day number `n`.
    FromDays,
    /// `microseconds_add`/`_sub` (`per` 1) and `milliseconds_add`/`_sub` (`per` 1,000):
    /// adds `sign` × the second argument × `per` microseconds; a DATETIME(6).
    AddMicros(i64, i64),
    /// `microseconds_diff` (`per` 1) and `milliseconds_diff` (`per` 1,000): whole
    /// `per`-microsecond units from the second moment to the first (BIGINT).
    DiffMicros(i64),
    /// `months_between(a, b[, round_off])`: months from `b` to `a` as a DOUBLE, the days
    /// counted in 31sts of a month unless the two days are the same or both month ends;
    /// rounded to 8 decimals unless `round_off` is false.
    MonthsBetween,
    /// `next_day(moment, 'weekday')`: the DATE of the first such weekday after the moment.
    NextDay,
    /// `str_to_date(text, format)`: the text read by MySQL's format specifiers; a DATE or
    /// a DATETIME as the format reads a time of day ([`parse_format`]).
    StrToDate,
    /// `to_iso8601(moment)`: `YYYY-MM-DD` for a DATE, `YYYY-MM-DDTHH:MM:SS.ffffff` for a
    /// DATETIME.
    ToIso8601,
    /// `from_iso8601_date(text)`: the DATE an ISO 8601 date names (calendar, ordinal or
    /// week form, extended or basic).
    FromIso8601Date,
    /// `from_unixtime(seconds[, format])`: the moment as text in the session's time zone
    /// (appended as the last argument by `rewrite_session_time_zone`).
    FromUnixtime,
    /// `unix_timestamp(moment)`: its seconds since 1970 read in the session's time zone
    /// (appended likewise); a DECIMAL with the moment's fraction digits; 0 outside
    /// 1970–3000. `unix_timestamp(text, format)`: the text read as `str_to_date` reads it,
    /// a DECIMAL with six (Doris's `DECIMAL(18, 6)`). `unix_timestamp()`: now, a BIGINT.
    UnixTimestamp,
    /// `second_timestamp(moment)` (`per` 1,000,000), `millisecond_timestamp` (1,000) and
    /// `microsecond_timestamp` (1): whole `per`-microsecond units since 1970 of the moment
    /// read in the session's time zone (appended likewise), negative before 1970 (BIGINT).
    EpochUnits(i64),
    /// `now([p])`, `current_timestamp`, `localtime`, `localtimestamp` (a DATETIME(p)) and
    /// `curdate()`/`current_date` (`true`, a DATE): the local time in the session's time
    /// zone (appended likewise; `utc_timestamp()` gets UTC's).
    Now(bool),
    /// `convert_tz(moment, from_zone, to_zone)`: the local time in `to_zone` of the moment
    /// read in `from_zone` (names or offsets); NULL for a zone it does not know.
    ConvertTz,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Part {
    Year,
    Quarter,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    DayOfWeek,
    DayOfYear,
    WeekDay,
    /// The ISO 8601 week (Monday first; week 1 holds the year's first Thursday).
    WeekOfYear,
    Microsecond,
    /// MySQL's day number (`to_days`): days since year 0, counted as MySQL's calendar does.
    DayNumber,
}

impl Part {
    fn of(self, at: &NaiveDateTime) -> i64 {
        i64::from(match self {
            Part::Year => at.year() as u32,
            Part::Quarter => at.month0() / 3 + 1,
            Part::Month => at.month(),
            Part::Day => at.day(),
            Part::Hour => at.hour(),
            Part::Minute => at.minute(),
            Part::Second => at.second(),
            // Doris: 1 is Sunday.
            Part::DayOfWeek => at.weekday().num_days_from_sunday() + 1,
            Part::DayOfYear => at.ordinal(),
            // Doris: 0 is Monday.
            Part::WeekDay => at.weekday().num_days_from_monday(),
            Part::WeekOfYear => at.iso_week().week(),
            Part::Microsecond => at.nanosecond() / 1_000,
            Part::DayNumber => return day_number(at.date()),
        })
    }
}

/// One of Doris's date and time functions.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct DateFn {
    name: &'static str,
    aliases: Vec<String>,
    op: Op,
    signature: Signature,
}

impl DateFn {
    fn new(name: &'static str, op: Op) -> Self {
        // `unix_timestamp()` is the one call without arguments (the `now` family gets the
        // session's zone appended).
        let signature = if op == Op::UnixTimestamp {
            Signature::one_of(
                vec![TypeSignature::Nullary, TypeSignature::VariadicAny],
                Volatility::Immutable,
            )
        } else {
            Signature::variadic_any(Volatility::Immutable)
        };
        Self {
            name,
            aliases: Vec::new(),
            op,
            signature,
        }
    }

    fn aliases(mut self, names: &[&str]) -> Self {
        self.aliases = names.iter().map(|n| (*n).to_owned()).collect();
        self
    }

    /// Every name the function answers to.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name).chain(self.aliases.iter().map(String::as_str))
    }

    /// Whether Doris accepts `count` arguments.
    pub fn takes(&self, count: usize) -> bool {
        if matches!(self.op, Op::Week | Op::YearWeek) {
            return count == 1 || count == 2;
        }
        if matches!(self.op, Op::Round(..)) {
            return (1..=3).contains(&count);
        }
        if self.op == Op::MonthsBetween {
            return count == 2 || count == 3;
        }
        if self.op == Op::FromUnixtime {
            return count == 1 || count == 2;
        }
        if self.op == Op::UnixTimestamp {
            return count <= 2;
        }
        if self.op == Op::Now(false) {
            return count <= 1;
        }
        count
            == match self.op {
                Op::Part(_)
                | Op::ToDate
                | Op::LastDay
                | Op::Name(_)
                | Op::ToMonday
                | Op::FromDays
                | Op::ToIso8601
                | Op::FromIso8601Date
                | Op::EpochUnits(_) => 1,
                Op::DateDiff
                | Op::Diff(_)
                | Op::Format
                | Op::Add(..)
                | Op::AddInterval(_)
                | Op::Trunc
                | Op::MonthsDiff(_)
                | Op::MakeDate
                | Op::RoundInterval(_)
                | Op::AddMicros(..)
                | Op::DiffMicros(_)
                | Op::NextDay
                | Op::StrToDate => 2,
                Op::ConvertTz => 3,
                Op::Now(_) => 0,
                Op::Week
                | Op::YearWeek
                | Op::Round(..)
                | Op::MonthsBetween
                | Op::FromUnixtime
                | Op::UnixTimestamp => 1,
            }
    }

    /// The result's type, given the first argument's shape.
    fn output(&self, first: Shape) -> DataType {
        match self.op {
            Op::Part(_) | Op::DateDiff | Op::Week | Op::YearWeek => DataType::Int32,
            Op::Diff(_) | Op::MonthsDiff(_) | Op::DiffMicros(_) | Op::EpochUnits(_) => {
                DataType::Int64
            }
            Op::MonthsBetween => DataType::Float64,
            // Decided from the format when it is a constant (`return_field_from_args`).
            Op::StrToDate => DataType::Timestamp(TimeUnit::Microsecond, None),
            Op::AddMicros(..) => DataType::Timestamp(TimeUnit::Microsecond, None),
            Op::Name(_) | Op::Format | Op::ToIso8601 | Op::FromUnixtime => DataType::Utf8,
            // Decided from the precision when it is given (`return_field_from_args`).
            Op::Now(false) => DataType::Timestamp(TimeUnit::Second, None),
            Op::Now(true) => DataType::Date32,
            Op::UnixTimestamp => match first {
                Shape::DateTime(TimeUnit::Millisecond) => DataType::Decimal128(18, 3),
                Shape::DateTime(TimeUnit::Microsecond | TimeUnit::Nanosecond) => {
                    DataType::Decimal128(18, 6)
                }
                _ => DataType::Int64,
            },
            Op::ToDate
            | Op::LastDay
            | Op::MakeDate
            | Op::ToMonday
            | Op::FromDays
            | Op::NextDay
            | Op::FromIso8601Date => DataType::Date32,
            // A DATE stays a DATE where the bucket is whole days (Doris's `day_ceil` of a
            // DATE); text is a DATETIME, as for `date_trunc`.
            Op::Round(unit, _) if first == Shape::Date && !unit.has_time() => DataType::Date32,
            Op::Round(..) | Op::RoundInterval(_) => match first {
                Shape::Date => DataType::Timestamp(TimeUnit::Second, None),
                Shape::DateTime(unit) => DataType::Timestamp(unit, None),
            },
            Op::Add(unit, _) if unit.has_time() && first == Shape::Date => {
                DataType::Timestamp(TimeUnit::Second, None)
            }
            Op::Add(..) | Op::AddInterval(_) => first.data_type(),
            // A DATE becomes a DATETIME: its midnight moves.
            Op::ConvertTz => match first {
                Shape::Date => DataType::Timestamp(TimeUnit::Second, None),
                Shape::DateTime(unit) => DataType::Timestamp(unit, None),
            },
            Op::Trunc => match first {
                Shape::Date => DataType::Date32,
                Shape::DateTime(_) => DataType::Timestamp(TimeUnit::Second, None),
            },
        }
    }
}

/// Whether `name` (lower case) is one of the date and time functions.
pub(super) fn is_date_function(name: &str) -> bool {
    static NAMES: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
        all()
            .iter()
            .flat_map(|f| f.names().map(str::to_owned).collect::<Vec<_>>())
            .collect()
    });
    NAMES.iter().any(|n| n == name)
}

/// The finer of two DATETIME precisions.
fn finer(a: TimeUnit, b: TimeUnit) -> TimeUnit {
    let digits = |u: &TimeUnit| match u {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        _ => 6,
    };
    if digits(&a) >= digits(&b) { a } else { b }
}

/// Every date and time function the emulator runs as Doris does.
pub fn all() -> Vec<DateFn> {
    use Op::*;
    let mut all = vec![
        DateFn::new("year", Part(self::Part::Year)),
        DateFn::new("quarter", Part(self::Part::Quarter)),
        DateFn::new("month", Part(self::Part::Month)),
        DateFn::new("day", Part(self::Part::Day)).aliases(&["dayofmonth"]),
        DateFn::new("hour", Part(self::Part::Hour)),
        DateFn::new("minute", Part(self::Part::Minute)),
        DateFn::new("second", Part(self::Part::Second)),
        DateFn::new("dayofweek", Part(self::Part::DayOfWeek)),
        DateFn::new("dayofyear", Part(self::Part::DayOfYear)),
        DateFn::new("weekday", Part(self::Part::WeekDay)),
        DateFn::new("week", Week),
        DateFn::new("yearweek", YearWeek),
        DateFn::new("to_days", Part(self::Part::DayNumber)),
        DateFn::new("months_diff", MonthsDiff(1)),
        DateFn::new("years_diff", MonthsDiff(12)),
        DateFn::new("makedate", MakeDate),
        DateFn::new("weekofyear", Part(self::Part::WeekOfYear)),
        DateFn::new("microsecond", Part(self::Part::Microsecond)),
        DateFn::new("date", ToDate).aliases(&["to_date"]),
        DateFn::new("last_day", LastDay),
        DateFn::new("datediff", DateDiff),
        DateFn::new("dayname", Name(self::Part::DayOfWeek)),
        DateFn::new("monthname", Name(self::Part::Month)),
        DateFn::new("date_format", Format),
        DateFn::new("date_add", AddInterval(1)).aliases(&["adddate"]),
        DateFn::new("date_sub", AddInterval(-1)).aliases(&["subdate"]),
        DateFn::new("date_trunc", Trunc),
        DateFn::new("date_floor", RoundInterval(false)),
        DateFn::new("date_ceil", RoundInterval(true)),
        DateFn::new("to_monday", ToMonday),
        DateFn::new("from_days", FromDays),
        DateFn::new("microseconds_add", AddMicros(1, 1)),
        DateFn::new("microseconds_sub", AddMicros(1, -1)),
        DateFn::new("milliseconds_add", AddMicros(1_000, 1)),
        DateFn::new("milliseconds_sub", AddMicros(1_000, -1)),
        DateFn::new("microseconds_diff", DiffMicros(1)),
        DateFn::new("milliseconds_diff", DiffMicros(1_000)),
        DateFn::new("months_between", MonthsBetween),
        DateFn::new("next_day", NextDay),
        DateFn::new("str_to_date", StrToDate),
        DateFn::new("to_iso8601", ToIso8601),
        DateFn::new("from_iso8601_date", FromIso8601Date),
        DateFn::new("from_unixtime", FromUnixtime),
        DateFn::new("unix_timestamp", UnixTimestamp),
        DateFn::new("second_timestamp", EpochUnits(1_000_000)),
        DateFn::new("millisecond_timestamp", EpochUnits(1_000)),
        DateFn::new("microsecond_timestamp", EpochUnits(1)),
        DateFn::new("convert_tz", ConvertTz),
        DateFn::new("now", Now(false)).aliases(&[
            "current_timestamp",
            "localtime",
            "localtimestamp",
            "utc_timestamp",
        ]),
        DateFn::new("curdate", Now(true)).aliases(&["current_date"]),
    ];
    for (unit, floor, ceil) in [
        (Unit::Second, "second_floor", "second_ceil"),
        (Unit::Minute, "minute_floor", "minute_ceil"),
        (Unit::Hour, "hour_floor", "hour_ceil"),
        (Unit::Day, "day_floor", "day_ceil"),
        (Unit::Week, "week_floor", "week_ceil"),
        (Unit::Month, "month_floor", "month_ceil"),
        (Unit::Quarter, "quarter_floor", "quarter_ceil"),
        (Unit::Year, "year_floor", "year_ceil"),
    ] {
        all.push(DateFn::new(floor, Round(unit, false)));
        all.push(DateFn::new(ceil, Round(unit, true)));
    }
    for (unit, add, sub, diff) in [
        (
            Unit::Second,
            "seconds_add",
            "seconds_sub",
            Some("seconds_diff"),
        ),
        (
            Unit::Minute,
            "minutes_add",
            "minutes_sub",
            Some("minutes_diff"),
        ),
        (Unit::Hour, "hours_add", "hours_sub", Some("hours_diff")),
        (Unit::Day, "days_add", "days_sub", Some("days_diff")),
        (Unit::Week, "weeks_add", "weeks_sub", Some("weeks_diff")),
        (Unit::Month, "months_add", "months_sub", None),
        (Unit::Quarter, "quarters_add", "quarters_sub", None),
        (Unit::Year, "years_add", "years_sub", None),
    ] {
        all.push(DateFn::new(add, Add(unit, 1)));
        all.push(DateFn::new(sub, Add(unit, -1)));
        if let Some(diff) = diff {
            all.push(DateFn::new(diff, Diff(unit)));
        }
    }
    all
}

impl ScalarUDFImpl for DateFn {
    fn name(&self) -> &str {
        self.name
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        let first = arg_types.first().unwrap_or(&DataType::Null);
        Ok(self.output(Shape::of(first, None)))
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let first = args
            .arg_fields
            .first()
            .map(|f| f.data_type().clone())
            .unwrap_or(DataType::Null);
        let constant = |i: usize| match args.scalar_arguments.get(i) {
            Some(Some(ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s)))) => {
                Some(s.as_str())
            }
            _ => None,
        };
        let shape = match self.op {
            // Doris's `date_trunc` of text is a DATETIME whatever the text's form.
            Op::Trunc => Shape::of(&first, None),
            // Rounding makes text a DATETIME of the text's precision, or of the origin's
            // when that is finer (the buckets start on the origin's fraction).
            Op::Round(..) | Op::RoundInterval(_) => {
                let datetime = |shape| match shape {
                    Shape::Date => Shape::DateTime(TimeUnit::Second),
                    other => other,
                };
                let moment = match Shape::of(&first, constant(0)) {
                    Shape::Date if matches!(first, DataType::Date32 | DataType::Date64) => {
                        Shape::Date
                    }
                    other => datetime(other),
                };
                let origin = args
                    .arg_fields
                    .get(2)
                    .map(|f| datetime(Shape::of(f.data_type(), constant(2))));
                match (moment, origin) {
                    (Shape::DateTime(a), Some(Shape::DateTime(b))) => Shape::DateTime(finer(a, b)),
                    (Shape::Date, Some(origin @ Shape::DateTime(b))) if b != TimeUnit::Second => {
                        origin
                    }
                    (moment, _) => moment,
                }
            }
            _ => Shape::of(&first, constant(0)),
        };
        let out = match (self.op, constant(1)) {
            // `(text, format, zone)` once the session's zone is appended.
            (Op::UnixTimestamp, _) if args.arg_fields.len() == 3 => DataType::Decimal128(18, 6),
            // `(precision, zone)` once the session's zone is appended.
            (Op::Now(false), _) if args.arg_fields.len() == 2 => {
                let digits = match args.scalar_arguments.first() {
                    Some(Some(value)) => {
                        value.cast_to(&DataType::Int64).ok().and_then(|v| match v {
                            ScalarValue::Int64(Some(n)) => Some(n),
                            _ => None,
                        })
                    }
                    _ => None,
                };
                match digits {
                    Some(0) => DataType::Timestamp(TimeUnit::Second, None),
                    Some(1..=3) => DataType::Timestamp(TimeUnit::Millisecond, None),
                    Some(4..=6) => DataType::Timestamp(TimeUnit::Microsecond, None),
                    _ => {
                        return Err(DataFusionError::Plan(
                            "now: the precision must be a constant from 0 to 6".to_owned(),
                        ));
                    }
                }
            }
            (Op::StrToDate, Some(format)) => match parse_format::reads(format) {
                parse_format::Reads::Date => DataType::Date32,
                parse_format::Reads::DateTime => DataType::Timestamp(TimeUnit::Second, None),
                parse_format::Reads::DateTimeMicros => {
                    DataType::Timestamp(TimeUnit::Microsecond, None)
                }
            },
            _ => self.output(shape),
        };
        Ok(Arc::new(Field::new(self.name, out, true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let out = args.return_field.data_type().clone();
        let arrays = args
            .args
            .iter()
            .map(|a| a.to_array(rows))
            .collect::<Result<Vec<_>>>()?;
        let mut values = Vec::with_capacity(rows);
        for row in 0..rows {
            let value = match self.eval_whole_row(&arrays, row)? {
                Some(value) => value,
                None => match moment(&arrays[0], row) {
                    None => Cell::Null,
                    Some(at) => self.eval(at, arrays.get(1..).unwrap_or(&[]), row)?,
                },
            };
            values.push(value);
        }
        Ok(ColumnarValue::Array(collect(&out, values)?))
    }
}

impl DateFn {
    /// The functions whose first argument is not a moment (a number, text, a format), a
    /// whole row at a time; `None` for the others, which [`DateFn::eval`] computes from
    /// the moment.
    fn eval_whole_row(&self, arrays: &[ArrayRef], row: usize) -> Result<Option<Cell>> {
        Ok(Some(match self.op {
            Op::UnixTimestamp if arrays.is_empty() => Cell::Int(chrono::Utc::now().timestamp()),
            Op::Now(date_only) => {
                let zone = arrays.last().and_then(|a| text(a, row));
                let now =
                    zone.and_then(|z| local_time_micros(chrono::Utc::now().timestamp_micros(), &z));
                match now {
                    None => Cell::Null,
                    Some(at) if date_only => Cell::At(at.date().and_time(chrono::NaiveTime::MIN)),
                    // The column's precision cuts the digits it does not hold.
                    Some(at) => Cell::At(at),
                }
            }
            Op::UnixTimestamp if arrays.len() == 3 => {
                let read = match (text(&arrays[0], row), text(&arrays[1], row)) {
                    (Some(value), Some(format)) => parse_format::str_to_date(&value, &format),
                    _ => None,
                };
                match (read, text(&arrays[2], row)) {
                    (Some(at), Some(zone)) => Cell::Micros(self.seconds_since_1970(at, &zone)?),
                    _ => Cell::Null,
                }
            }
            Op::FromUnixtime => {
                let seconds = integer(&arrays[0], row);
                let format = arrays.get(1).and_then(|a| text(a, row));
                let zone = arrays.get(2).and_then(|a| text(a, row));
                match (seconds, format, zone) {
                    (Some(n), Some(format), Some(zone)) if (0..=32_536_771_199).contains(&n) => {
                        let local = local_time(n, &zone).ok_or_else(|| {
                            DataFusionError::Execution(format!(
                                "from_unixtime: unknown time zone {zone}"
                            ))
                        })?;
                        Cell::Text(format_moment(&local, parse_format::mysql_form(&format)))
                    }
                    _ => Cell::Null,
                }
            }
            Op::FromIso8601Date => {
                let day = text(&arrays[0], row).and_then(|t| parse_iso_date(&t));
                day.and_then(|d| d.and_hms_opt(0, 0, 0))
                    .map_or(Cell::Null, Cell::At)
            }
            Op::ToIso8601 => {
                // A DATE (or text of one) prints as a date, anything else with its time.
                let date_only = match arrays[0].data_type() {
                    DataType::Date32 | DataType::Date64 => true,
                    DataType::Timestamp(..) => false,
                    _ => text(&arrays[0], row)
                        .and_then(|t| cells::parse_text(&t))
                        .is_some_and(|(_, shape)| shape == Shape::Date),
                };
                match moment(&arrays[0], row) {
                    None => Cell::Null,
                    Some(at) if date_only => Cell::Text(at.format("%Y-%m-%d").to_string()),
                    Some(at) => Cell::Text(at.format("%Y-%m-%dT%H:%M:%S%.6f").to_string()),
                }
            }
            Op::StrToDate => {
                let at = match (
                    text(&arrays[0], row),
                    arrays.get(1).and_then(|a| text(a, row)),
                ) {
                    (Some(value), Some(format)) => parse_format::str_to_date(&value, &format),
                    _ => None,
                };
                at.map_or(Cell::Null, Cell::At)
            }
            Op::FromDays => {
                let day = integer(&arrays[0], row).and_then(from_day_number);
                day.and_then(|d| d.and_hms_opt(0, 0, 0))
                    .map_or(Cell::Null, Cell::At)
            }
            Op::MakeDate => {
                let day = match (
                    integer(&arrays[0], row),
                    arrays.get(1).and_then(|a| integer(a, row)),
                ) {
                    (Some(year), Some(ordinal)) if ordinal > 0 => i32::try_from(year)
                        .ok()
                        .and_then(|y| NaiveDate::from_ymd_opt(y, 1, 1))
                        .and_then(|first| {
                            first.checked_add_days(Days::new(ordinal.unsigned_abs() - 1))
                        })
                        .filter(|d| d.year() <= 9999),
                    _ => None,
                };
                day.and_then(|d| d.and_hms_opt(0, 0, 0))
                    .map_or(Cell::Null, Cell::At)
            }
            _ => return Ok(None),
        }))
    }

    /// `unix_timestamp`'s answer for the local time `at` in `zone`, in microseconds: 0
    /// outside 1970-01-01 to 3001-01-19, as Doris answers.
    fn seconds_since_1970(&self, at: NaiveDateTime, zone: &str) -> Result<i64> {
        let micros = epoch_micros(at, zone).ok_or_else(|| {
            DataFusionError::Execution(format!("{}: unknown time zone", self.name))
        })?;
        Ok(if (0..=32_536_771_199_000_000).contains(&micros) {
            micros
        } else {
            0
        })
    }

    /// The function at `at`, `rest` holding the other arguments' columns.
    fn eval(&self, at: NaiveDateTime, rest: &[ArrayRef], row: usize) -> Result<Cell> {
        let fail = |why: &str| DataFusionError::Execution(format!("{}: {why}", self.name));
        let second = rest.first();
        Ok(match self.op {
            Op::Round(unit, ceil) => {
                let period = second.map_or(Some(1), |a| integer(a, row));
                let origin = rest.get(1).map_or_else(
                    || NaiveDate::from_ymd_opt(1, 1, 1).and_then(|d| d.and_hms_opt(0, 0, 0)),
                    |a| moment(a, row),
                );
                match (period, origin) {
                    (Some(period), Some(origin)) => {
                        round(at, unit, period, origin, ceil).map_or(Cell::Null, Cell::At)
                    }
                    _ => Cell::Null,
                }
            }
            Op::RoundInterval(ceil) => match second.map(|a| interval(a, row)).transpose()? {
                None | Some(None) => Cell::Null,
                Some(Some(span)) => {
                    let (unit, period) = match span {
                        (months, 0, 0) if months != 0 => (Unit::Month, i64::from(months)),
                        (0, days, 0) if days != 0 => (Unit::Day, i64::from(days)),
                        (0, 0, nanos) if nanos % 1_000_000_000 == 0 && nanos != 0 => {
                            (Unit::Second, nanos / 1_000_000_000)
                        }
                        _ => return Err(fail("the interval must be one whole unit")),
                    };
                    let origin = NaiveDate::from_ymd_opt(1, 1, 1)
                        .and_then(|d| d.and_hms_opt(0, 0, 0))
                        .ok_or_else(|| fail("no origin"))?;
                    round(at, unit, period, origin, ceil).map_or(Cell::Null, Cell::At)
                }
            },
            Op::AddMicros(per, sign) => match second.and_then(|a| integer(a, row)) {
                None => Cell::Null,
                Some(n) => n
                    .checked_mul(per * sign)
                    .and_then(|micros| {
                        at.checked_add_signed(chrono::TimeDelta::microseconds(micros))
                    })
                    .filter(|at| (1..=9999).contains(&at.year()))
                    .map_or(Cell::Null, Cell::At),
            },
            Op::DiffMicros(per) => match second.and_then(|a| moment(a, row)) {
                None => Cell::Null,
                Some(other) => match (at - other).num_microseconds() {
                    Some(micros) => Cell::Int(micros / per),
                    None => Cell::Null,
                },
            },
            Op::MonthsBetween => match second.and_then(|a| moment(a, row)) {
                None => Cell::Null,
                Some(other) => {
                    let round_off = match rest.get(1) {
                        None => Some(true),
                        Some(a) => integer(a, row).map(|v| v != 0),
                    };
                    match round_off {
                        None => Cell::Null,
                        Some(round_off) => {
                            Cell::Float(months_between(at.date(), other.date(), round_off))
                        }
                    }
                }
            },
            Op::NextDay => match second.and_then(|a| text(a, row)) {
                None => Cell::Null,
                Some(name) => {
                    let day = weekday_named(&name).ok_or_else(|| {
                        fail("the weekday must be MO/MON/MONDAY, TU/TUE/TUESDAY, … SU/SUN/SUNDAY")
                    })?;
                    Cell::At(next_day(at.date(), day).and_time(chrono::NaiveTime::MIN))
                }
            },
            Op::ToMonday => monday_of(at.date())
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map_or(Cell::Null, Cell::At),
            // Whole-row functions: `eval_whole_row` computes them before a moment is read.
            Op::FromDays
            | Op::StrToDate
            | Op::ToIso8601
            | Op::FromIso8601Date
            | Op::FromUnixtime
            | Op::MakeDate
            | Op::Now(_) => Cell::Null,
            Op::ConvertTz => {
                let zone = |i: usize| rest.get(i).and_then(|a| text(a, row));
                match (zone(0), zone(1)) {
                    (Some(from), Some(to)) => epoch_micros(at, &from)
                        .and_then(|micros| local_time_micros(micros, &to))
                        .map_or(Cell::Null, Cell::At),
                    _ => Cell::Null,
                }
            }
            Op::UnixTimestamp => match rest.last().and_then(|a| text(a, row)) {
                None => Cell::Null,
                Some(zone) => Cell::Micros(self.seconds_since_1970(at, &zone)?),
            },
            Op::EpochUnits(per) => match rest.last().and_then(|a| text(a, row)) {
                None => Cell::Null,
                Some(zone) => {
                    let micros =
                        epoch_micros(at, &zone).ok_or_else(|| fail("unknown time zone"))?;
                    Cell::Int(micros.div_euclid(per))
                }
            },
            Op::Part(part) => Cell::Int(part.of(&at)),
            Op::ToDate => Cell::At(at.date().and_time(chrono::NaiveTime::MIN)),
            Op::LastDay => {
                let first = at.date().with_day(1).ok_or_else(|| fail("no such day"))?;
                let last = first
                    .checked_add_months(Months::new(1))
                    .and_then(|d| d.pred_opt())
                    .ok_or_else(|| fail("out of range"))?;
                Cell::At(last.and_time(chrono::NaiveTime::MIN))
            }
            Op::DateDiff => match second.and_then(|a| moment(a, row)) {
                None => Cell::Null,
                Some(other) => Cell::Int((at.date() - other.date()).num_days()),
            },
            Op::Diff(unit) => match second.and_then(|a| moment(a, row)) {
                None => Cell::Null,
                Some(other) => {
                    let span = at - other;
                    Cell::Int(match unit {
                        Unit::Second => span.num_seconds(),
                        Unit::Minute => span.num_minutes(),
                        Unit::Hour => span.num_hours(),
                        Unit::Day => span.num_days(),
                        _ => span.num_weeks(),
                    })
                }
            },
            Op::Name(Part::DayOfWeek) => Cell::Text(DAYS[weekday0(&at)].to_owned()),
            Op::Name(_) => Cell::Text(MONTHS[at.month0() as usize].to_owned()),
            Op::Format => match second.and_then(|a| text(a, row)) {
                None => Cell::Null,
                Some(format) => Cell::Text(format_moment(&at, &format)),
            },
            Op::Add(unit, sign) => match second.and_then(|a| integer(a, row)) {
                None => Cell::Null,
                Some(n) => add(at, unit, sign * n).map_or(Cell::Null, Cell::At),
            },
            Op::AddInterval(sign) => match second.map(|a| interval(a, row)).transpose()? {
                None | Some(None) => Cell::Null,
                Some(Some((months, days, nanos))) => {
                    let at = add(at, Unit::Month, sign * i64::from(months))
                        .and_then(|at| add(at, Unit::Day, sign * i64::from(days)))
                        .and_then(|at| {
                            at.checked_add_signed(chrono::TimeDelta::nanoseconds(sign * nanos))
                        });
                    at.map_or(Cell::Null, Cell::At)
                }
            },
            Op::MonthsDiff(per) => match second.and_then(|a| moment(a, row)) {
                None => Cell::Null,
                Some(other) => Cell::Int(whole_months(&at, &other) / per),
            },
            Op::Week | Op::YearWeek => {
                let mode = match second {
                    None => Some(0),
                    Some(a) => integer(a, row),
                };
                match mode {
                    None => Cell::Null,
                    Some(mode) if self.op == Op::Week => Cell::Int(week_of(&at, mode, false).1),
                    Some(mode) => {
                        let (year, week) = week_of(&at, mode, true);
                        Cell::Int(year * 100 + week)
                    }
                }
            }
            Op::Trunc => match second.and_then(|a| text(a, row)) {
                None => Cell::Null,
                Some(unit) => {
                    let unit = Unit::parse(&unit)
                        .ok_or_else(|| fail("the unit must be year, quarter, month, week, day, hour, minute or second"))?;
                    Cell::At(truncate(at, unit).ok_or_else(|| fail("out of range"))?)
                }
            },
        })
    }
}
