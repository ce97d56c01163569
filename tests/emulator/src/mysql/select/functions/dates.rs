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

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, Date32Builder, Int32Builder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder, TimestampMillisecondBuilder, TimestampSecondBuilder,
};
use arrow::datatypes::{DataType, Field, FieldRef, TimeUnit};
use chrono::{Datelike, Days, Months, NaiveDate, NaiveDateTime, Timelike};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

/// 1970-01-01 as chrono counts days from the common era (Arrow's `Date32` counts from it).
const UNIX_EPOCH_DAY: i32 = 719_163;

/// A time unit of Doris's date arithmetic and differences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unit {
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

impl Unit {
    /// Whether adding it to a DATE gives a DATETIME.
    fn has_time(self) -> bool {
        matches!(self, Unit::Second | Unit::Minute | Unit::Hour)
    }

    fn parse(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "second" => Unit::Second,
            "minute" => Unit::Minute,
            "hour" => Unit::Hour,
            "day" => Unit::Day,
            "week" => Unit::Week,
            "month" => Unit::Month,
            "quarter" => Unit::Quarter,
            "year" => Unit::Year,
            _ => return None,
        })
    }
}

/// Rewrites `INTERVAL n QUARTER` (which Doris takes and DataFusion's interval parser does
/// not) as `INTERVAL 3n MONTH` in `statements`, for a literal `n`; whether any changed.
pub fn rewrite_quarters(statements: &mut [sqlparser::ast::Statement]) -> bool {
    use sqlparser::ast::{DateTimeField, Expr, UnaryOperator, Value, visit_expressions_mut};
    let mut changed = false;
    for statement in statements {
        let _ = visit_expressions_mut(statement, |expr| {
            if let Expr::Interval(interval) = expr
                && interval.leading_field == Some(DateTimeField::Quarter)
            {
                // A sign stays where it is: only the number changes.
                let literal = match interval.value.as_mut() {
                    Expr::UnaryOp {
                        op: UnaryOperator::Minus,
                        expr,
                    } => expr.as_mut(),
                    other => other,
                };
                if let Expr::Value(v) = literal
                    && let Value::Number(n, _) | Value::SingleQuotedString(n) = &mut v.value
                    && let Ok(count) = n.trim().parse::<i64>()
                    && let Some(months) = count.checked_mul(3)
                {
                    *n = months.to_string();
                    interval.leading_field = Some(DateTimeField::Month);
                    changed = true;
                }
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
    }
    changed
}

/// Rewrites `EXTRACT(field FROM x)` as the function Doris computes it with (`year(x)`,
/// `week(x)`, …) in `statements`; a field without one stays, and is refused by name.
/// Whether any changed.
pub fn rewrite_extracts(statements: &mut [sqlparser::ast::Statement]) -> bool {
    use sqlparser::ast::{
        DateTimeField, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, visit_expressions_mut,
    };
    let mut changed = false;
    for statement in statements {
        let _ = visit_expressions_mut(statement, |expr| {
            if let Expr::Extract {
                field, expr: of, ..
            } = expr
            {
                let name = match field {
                    DateTimeField::Year => "year",
                    DateTimeField::Quarter => "quarter",
                    DateTimeField::Month => "month",
                    DateTimeField::Week(None) => "week",
                    DateTimeField::Day => "day",
                    DateTimeField::Hour => "hour",
                    DateTimeField::Minute => "minute",
                    DateTimeField::Second => "second",
                    DateTimeField::Microsecond => "microsecond",
                    _ => return std::ops::ControlFlow::<()>::Continue(()),
                };
                let template = sqlparser::parser::Parser::new(&sqlparser::dialect::MySqlDialect {})
                    .try_with_sql(&format!("{name}(NULL)"))
                    .and_then(|mut p| p.parse_expr());
                if let Ok(mut call) = template
                    && let Expr::Function(f) = &mut call
                    && let FunctionArguments::List(list) = &mut f.args
                    && let Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(arg))) =
                        list.args.first_mut()
                {
                    *arg = (**of).clone();
                    *expr = call;
                    changed = true;
                }
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
    }
    changed
}

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

/// The shape of a temporal value: a DATE, or a DATETIME stored in `unit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Date,
    DateTime(TimeUnit),
}

impl Shape {
    fn data_type(self) -> DataType {
        match self {
            Shape::Date => DataType::Date32,
            Shape::DateTime(unit) => DataType::Timestamp(unit, None),
        }
    }

    /// The shape of an argument of type `ty` (`text`: its value, when it is a constant).
    fn of(ty: &DataType, text: Option<&str>) -> Self {
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
fn parse_text(text: &str) -> Option<(NaiveDateTime, Shape)> {
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
        Self {
            name,
            aliases: Vec::new(),
            op,
            signature: Signature::variadic_any(Volatility::Immutable),
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
        count
            == match self.op {
                Op::Part(_) | Op::ToDate | Op::LastDay | Op::Name(_) => 1,
                Op::DateDiff
                | Op::Diff(_)
                | Op::Format
                | Op::Add(..)
                | Op::AddInterval(_)
                | Op::Trunc
                | Op::MonthsDiff(_)
                | Op::MakeDate => 2,
                Op::Week | Op::YearWeek => 1,
            }
    }

    /// The result's type, given the first argument's shape.
    fn output(&self, first: Shape) -> DataType {
        match self.op {
            Op::Part(_) | Op::DateDiff | Op::Week | Op::YearWeek => DataType::Int32,
            Op::Diff(_) | Op::MonthsDiff(_) => DataType::Int64,
            Op::Name(_) | Op::Format => DataType::Utf8,
            Op::ToDate | Op::LastDay | Op::MakeDate => DataType::Date32,
            Op::Add(unit, _) if unit.has_time() && first == Shape::Date => {
                DataType::Timestamp(TimeUnit::Second, None)
            }
            Op::Add(..) | Op::AddInterval(_) => first.data_type(),
            Op::Trunc => match first {
                Shape::Date => DataType::Date32,
                Shape::DateTime(_) => DataType::Timestamp(TimeUnit::Second, None),
            },
        }
    }
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
    ];
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
        let text = match args.scalar_arguments.first() {
            // Doris's `date_trunc` of text is a DATETIME whatever the text's form.
            _ if self.op == Op::Trunc => None,
            Some(Some(ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s)))) => {
                Some(s.as_str())
            }
            _ => None,
        };
        let out = self.output(Shape::of(&first, text));
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
            if self.op == Op::MakeDate {
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
                values.push(
                    day.and_then(|d| d.and_hms_opt(0, 0, 0))
                        .map_or(Cell::Null, Cell::At),
                );
                continue;
            }
            let value = match moment(&arrays[0], row) {
                None => Cell::Null,
                Some(at) => self.eval(at, arrays.get(1), row)?,
            };
            values.push(value);
        }
        Ok(ColumnarValue::Array(collect(&out, values)?))
    }
}

/// One result value.
enum Cell {
    Null,
    Int(i64),
    Text(String),
    At(NaiveDateTime),
}

impl DateFn {
    fn eval(&self, at: NaiveDateTime, second: Option<&ArrayRef>, row: usize) -> Result<Cell> {
        let fail = |why: &str| DataFusionError::Execution(format!("{}: {why}", self.name));
        Ok(match self.op {
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
            Op::MakeDate => Cell::Null,
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

const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// The weekday, 0 for Sunday.
fn weekday0(at: &NaiveDateTime) -> usize {
    at.weekday().num_days_from_sunday() as usize
}

/// MySQL's week numbering (`WEEK(date, mode)`), which Doris follows: the year the week
/// belongs to and its number. `mode`'s bit 1 starts weeks on Monday, bit 2 numbers them
/// 1–53 (days before week 1 fall in the last week of the year before; `yearweek` always
/// does), bit 4 makes week 1 the first week with four or more days in the year rather
/// than the first that starts in it (read inverted when weeks start on Sunday, as MySQL
/// does).
fn week_of(at: &NaiveDateTime, mode: i64, whole_years: bool) -> (i64, i64) {
    let mut mode = mode & 7;
    if whole_years {
        mode |= 2;
    }
    if mode & 1 == 0 {
        mode ^= 4;
    }
    let monday_first = mode & 1 != 0;
    let mut week_year = mode & 2 != 0;
    let first_weekday = mode & 4 != 0;
    let date = at.date();
    let weekday_of = |d: NaiveDate| -> i64 {
        i64::from(if monday_first {
            d.weekday().num_days_from_monday()
        } else {
            d.weekday().num_days_from_sunday()
        })
    };
    let days_in = |year: i32| -> i64 {
        if NaiveDate::from_ymd_opt(year, 2, 29).is_some() {
            366
        } else {
            365
        }
    };
    let mut year = date.year();
    let Some(mut first) = NaiveDate::from_ymd_opt(year, 1, 1) else {
        return (i64::from(year), 0);
    };
    let mut weekday = weekday_of(first);
    // Whether the year's first days, before its first week start, belong to week 0/the
    // year before: with `first_weekday`, unless the year starts on the week's first day;
    // otherwise when fewer than four of its days fall in that week.
    let first_days_apart =
        |weekday: i64| (first_weekday && weekday != 0) || (!first_weekday && weekday >= 4);
    if date.month() == 1 && i64::from(date.day()) <= 7 - weekday {
        if !week_year && first_days_apart(weekday) {
            return (i64::from(year), 0);
        }
        week_year = true;
        year -= 1;
        let Some(previous) = NaiveDate::from_ymd_opt(year, 1, 1) else {
            return (i64::from(year), 0);
        };
        first = previous;
        weekday = (weekday + 53 * 7 - days_in(year)).rem_euclid(7);
    }
    let days = (date - first).num_days()
        - if first_days_apart(weekday) {
            7 - weekday
        } else {
            -weekday
        };
    if week_year && days >= 52 * 7 {
        let next = (weekday + days_in(year)).rem_euclid(7);
        if !first_days_apart(next) {
            return (i64::from(year) + 1, 1);
        }
    }
    (i64::from(year), days / 7 + 1)
}

/// Whole months from `from` to `to`: the calendar months between them, less one when the
/// later moment's day and time within its month come before the earlier one's.
fn whole_months(to: &NaiveDateTime, from: &NaiveDateTime) -> i64 {
    let index = |at: &NaiveDateTime| i64::from(at.year()) * 12 + i64::from(at.month0());
    let within = |at: &NaiveDateTime| (at.day(), at.time());
    let months = index(to) - index(from);
    if months > 0 && within(to) < within(from) {
        months - 1
    } else if months < 0 && within(to) > within(from) {
        months + 1
    } else {
        months
    }
}

/// MySQL's day number of `date` (`TO_DAYS`): `0000-01-01` is day 1, with MySQL's leap
/// rule for every year.
fn day_number(date: NaiveDate) -> i64 {
    let (mut year, month, day) = (
        i64::from(date.year()),
        i64::from(date.month()),
        i64::from(date.day()),
    );
    let mut days = 365 * year + 31 * (month - 1) + day;
    if month <= 2 {
        year -= 1;
    } else {
        days -= (month * 4 + 23) / 10;
    }
    days + year / 4 - ((year / 100 + 1) * 3) / 4
}

/// `at` plus `n` units (`None`: out of Doris's range, which is NULL).
fn add(at: NaiveDateTime, unit: Unit, n: i64) -> Option<NaiveDateTime> {
    let months = |m: i64| -> Option<NaiveDateTime> {
        let magnitude = Months::new(u32::try_from(m.unsigned_abs()).ok()?);
        if m >= 0 {
            at.checked_add_months(magnitude)
        } else {
            at.checked_sub_months(magnitude)
        }
    };
    let days = |d: i64| -> Option<NaiveDateTime> {
        let magnitude = Days::new(d.unsigned_abs());
        if d >= 0 {
            at.checked_add_days(magnitude)
        } else {
            at.checked_sub_days(magnitude)
        }
    };
    let seconds = |s: i64| at.checked_add_signed(chrono::TimeDelta::try_seconds(s)?);
    let out = match unit {
        Unit::Second => seconds(n)?,
        Unit::Minute => seconds(n.checked_mul(60)?)?,
        Unit::Hour => seconds(n.checked_mul(3_600)?)?,
        Unit::Day => days(n)?,
        Unit::Week => days(n.checked_mul(7)?)?,
        Unit::Month => months(n)?,
        Unit::Quarter => months(n.checked_mul(3)?)?,
        Unit::Year => months(n.checked_mul(12)?)?,
    };
    (1..=9999).contains(&out.year()).then_some(out)
}

/// `at` cut down to the start of its `unit` (a week starts on Monday).
fn truncate(at: NaiveDateTime, unit: Unit) -> Option<NaiveDateTime> {
    let day = at.date();
    let midnight = |d: NaiveDate| d.and_hms_opt(0, 0, 0);
    match unit {
        Unit::Second => at.with_nanosecond(0),
        Unit::Minute => day.and_hms_opt(at.hour(), at.minute(), 0),
        Unit::Hour => day.and_hms_opt(at.hour(), 0, 0),
        Unit::Day => midnight(day),
        Unit::Week => midnight(day - Days::new(u64::from(day.weekday().num_days_from_monday()))),
        Unit::Month => midnight(day.with_day(1)?),
        Unit::Quarter => midnight(NaiveDate::from_ymd_opt(
            day.year(),
            day.month0() / 3 * 3 + 1,
            1,
        )?),
        Unit::Year => midnight(NaiveDate::from_ymd_opt(day.year(), 1, 1)?),
    }
}

/// `date_format`'s specifiers (MySQL's, as Doris documents them); an unknown one is
/// written without its `%`.
fn format_moment(at: &NaiveDateTime, format: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(spec) = chars.next() else {
            break;
        };
        let hour12 = match at.hour() % 12 {
            0 => 12,
            h => h,
        };
        let _ = match spec {
            'Y' => write!(out, "{:04}", at.year()),
            'y' => write!(out, "{:02}", at.year().rem_euclid(100)),
            'm' => write!(out, "{:02}", at.month()),
            'c' => write!(out, "{}", at.month()),
            'M' => write!(out, "{}", MONTHS[at.month0() as usize]),
            'b' => write!(out, "{}", &MONTHS[at.month0() as usize][..3]),
            'd' => write!(out, "{:02}", at.day()),
            'e' => write!(out, "{}", at.day()),
            'D' => write!(out, "{}{}", at.day(), ordinal_suffix(at.day())),
            'j' => write!(out, "{:03}", at.ordinal()),
            'W' => write!(out, "{}", DAYS[weekday0(at)]),
            'a' => write!(out, "{}", &DAYS[weekday0(at)][..3]),
            'w' => write!(out, "{}", weekday0(at)),
            'H' => write!(out, "{:02}", at.hour()),
            'k' => write!(out, "{}", at.hour()),
            'h' | 'I' => write!(out, "{hour12:02}"),
            'l' => write!(out, "{hour12}"),
            'i' => write!(out, "{:02}", at.minute()),
            's' | 'S' => write!(out, "{:02}", at.second()),
            'f' => write!(out, "{:06}", at.nanosecond() / 1_000),
            'p' => write!(out, "{}", if at.hour() < 12 { "AM" } else { "PM" }),
            'T' => write!(
                out,
                "{:02}:{:02}:{:02}",
                at.hour(),
                at.minute(),
                at.second()
            ),
            'r' => write!(
                out,
                "{hour12:02}:{:02}:{:02} {}",
                at.minute(),
                at.second(),
                if at.hour() < 12 { "AM" } else { "PM" }
            ),
            other => write!(out, "{other}"),
        };
    }
    out
}

fn ordinal_suffix(day: u32) -> &'static str {
    match (day % 10, day % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

/// Whether row `row` is NULL (a NULL literal's array has no validity bits: every row is).
fn null_at(array: &ArrayRef, row: usize) -> bool {
    array.data_type() == &DataType::Null || array.is_null(row)
}

/// Row `row` of a temporal argument (`None`: NULL, or text that is no date).
fn moment(array: &ArrayRef, row: usize) -> Option<NaiveDateTime> {
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
fn text(array: &ArrayRef, row: usize) -> Option<String> {
    if null_at(array, row) {
        return None;
    }
    let cast = arrow::compute::cast(&array.slice(row, 1), &DataType::Utf8).ok()?;
    Some(cast.as_string::<i32>().value(0).to_owned())
}

/// Row `row` as an integer.
fn integer(array: &ArrayRef, row: usize) -> Option<i64> {
    if null_at(array, row) {
        return None;
    }
    let cast = arrow::compute::cast(&array.slice(row, 1), &DataType::Int64).ok()?;
    let ints = cast.as_primitive::<arrow::datatypes::Int64Type>();
    (!ints.is_null(0)).then(|| ints.value(0))
}

/// Row `row` of `date_add`'s second argument: an `INTERVAL` as (months, days,
/// nanoseconds), or an integer count of days.
fn interval(array: &ArrayRef, row: usize) -> Result<Option<(i32, i32, i64)>> {
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

fn collect(out: &DataType, values: Vec<Cell>) -> Result<ArrayRef> {
    let wrong = || DataFusionError::Internal(format!("a date function made no {out}"));
    let micros = |at: &NaiveDateTime| at.and_utc().timestamp_micros();
    Ok(match out {
        DataType::Int32 => {
            let mut b = Int32Builder::new();
            for v in values {
                match v {
                    Cell::Int(i) => b.append_value(i32::try_from(i).map_err(|_| wrong())?),
                    Cell::Null => b.append_null(),
                    _ => return Err(wrong()),
                }
            }
            Arc::new(b.finish())
        }
        DataType::Int64 => {
            let mut b = Int64Builder::new();
            for v in values {
                match v {
                    Cell::Int(i) => b.append_value(i),
                    Cell::Null => b.append_null(),
                    _ => return Err(wrong()),
                }
            }
            Arc::new(b.finish())
        }
        DataType::Utf8 => {
            let mut b = StringBuilder::new();
            for v in values {
                match v {
                    Cell::Text(s) => b.append_value(s),
                    Cell::Null => b.append_null(),
                    _ => return Err(wrong()),
                }
            }
            Arc::new(b.finish())
        }
        DataType::Date32 => {
            let mut b = Date32Builder::new();
            for v in values {
                match v {
                    Cell::At(at) => b.append_value(at.date().num_days_from_ce() - UNIX_EPOCH_DAY),
                    Cell::Null => b.append_null(),
                    _ => return Err(wrong()),
                }
            }
            Arc::new(b.finish())
        }
        DataType::Timestamp(TimeUnit::Second, _) => {
            let mut b = TimestampSecondBuilder::new();
            for v in values {
                match v {
                    Cell::At(at) => b.append_value(at.and_utc().timestamp()),
                    Cell::Null => b.append_null(),
                    _ => return Err(wrong()),
                }
            }
            Arc::new(b.finish())
        }
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            let mut b = TimestampMillisecondBuilder::new();
            for v in values {
                match v {
                    Cell::At(at) => b.append_value(at.and_utc().timestamp_millis()),
                    Cell::Null => b.append_null(),
                    _ => return Err(wrong()),
                }
            }
            Arc::new(b.finish())
        }
        DataType::Timestamp(_, _) => {
            let mut b = TimestampMicrosecondBuilder::new();
            for v in values {
                match v {
                    Cell::At(at) => b.append_value(micros(&at)),
                    Cell::Null => b.append_null(),
                    _ => return Err(wrong()),
                }
            }
            Arc::new(b.finish())
        }
        _ => return Err(wrong()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> NaiveDateTime {
        parse_text(text).unwrap().0
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

    #[test]
    fn month_arithmetic_ends_on_the_last_day() {
        let out = add(at("2023-01-31"), Unit::Month, 1).unwrap();
        assert_eq!(out.date().to_string(), "2023-02-28");
        let out = add(at("2020-02-29"), Unit::Year, -1).unwrap();
        assert_eq!(out.date().to_string(), "2019-02-28");
        assert!(add(at("9999-12-31"), Unit::Day, 1).is_none());
    }

    #[test]
    fn weeks_count_as_mysql_modes_and_iso() {
        let week = |d: &str, mode: i64| week_of(&at(d), mode, false).1;
        assert_eq!(
            (
                week("2024-01-06", 0),
                week("2024-01-07", 0),
                week("2024-12-31", 0)
            ),
            (0, 1, 52)
        );
        assert_eq!(week("2020-01-01", 0), 0);
        assert_eq!((week("2023-01-01", 0), week("2023-01-01", 3)), (1, 52));
        assert_eq!((week("2023-01-01", 7), week("2023-01-01", -1)), (52, 52));
        assert_eq!(week("2020-07-01", 1), 27);
        let yearweek = |d: &str, mode: i64| week_of(&at(d), mode, true);
        assert_eq!(yearweek("2021-01-01", 0), (2020, 52));
        assert_eq!(yearweek("2024-12-30", 1), (2025, 1));
        assert_eq!(yearweek("2023-01-02", 5), (2023, 1));
        assert_eq!(Part::WeekOfYear.of(&at("2023-05-01")), 18);
        // Mode 3 is ISO 8601's week (chrono's), every day of three decades.
        let mut d = NaiveDate::from_ymd_opt(1999, 12, 1).unwrap();
        while d.year() < 2031 {
            let moment = d.and_hms_opt(0, 0, 0).unwrap();
            let iso = d.iso_week();
            assert_eq!(
                week_of(&moment, 3, true),
                (i64::from(iso.year()), i64::from(iso.week())),
                "{d}"
            );
            d = d.succ_opt().unwrap();
        }
    }

    #[test]
    fn months_count_once_their_day_and_time_are_reached() {
        let diff = |to: &str, from: &str| whole_months(&at(to), &at(from));
        assert_eq!(diff("2020-03-28", "2020-02-29"), 0);
        assert_eq!(diff("2020-03-29", "2020-02-29"), 1);
        assert_eq!(diff("2020-02-29", "2020-03-28"), 0);
        assert_eq!(diff("2020-02-29", "2020-03-29"), -1);
        assert_eq!(diff("2022-03-15 08:30:00", "2021-03-15 09:10:00"), 11);
        assert_eq!(day_number(at("2007-10-07").date()), 733_321);
        // Consecutive days have consecutive numbers.
        let mut d = NaiveDate::from_ymd_opt(1899, 12, 25).unwrap();
        while d.year() < 2101 {
            let next = d.succ_opt().unwrap();
            assert_eq!(day_number(next), day_number(d) + 1, "{d}");
            d = next;
        }
    }

    #[test]
    fn date_format_writes_mysql_specifiers() {
        let t = at("2009-10-04 22:23:00");
        assert_eq!(format_moment(&t, "%W %M %Y"), "Sunday October 2009");
        assert_eq!(
            format_moment(&t, "%D %e %f %j %r"),
            "4th 4 000000 277 10:23:00 PM"
        );
        assert_eq!(format_moment(&t, "%x%%"), "x%");
    }
}
