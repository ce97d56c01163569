//! The date arithmetic Doris does as MySQL does: units, MySQL's week modes and day
//! numbers, whole months, additions that end on a month's last day, truncation, and
//! `date_format`'s specifiers.

use chrono::{Datelike, Days, Months, NaiveDate, NaiveDateTime, Timelike};

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
    pub(super) fn has_time(self) -> bool {
        matches!(self, Unit::Second | Unit::Minute | Unit::Hour)
    }

    pub(super) fn parse(name: &str) -> Option<Self> {
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

pub(super) const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

pub(super) const MONTHS: [&str; 12] = [
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
pub(super) fn weekday0(at: &NaiveDateTime) -> usize {
    at.weekday().num_days_from_sunday() as usize
}

/// MySQL's week numbering (`WEEK(date, mode)`), which Doris follows: the year the week
/// belongs to and its number. `mode`'s bit 1 starts weeks on Monday, bit 2 numbers them
/// 1–53 (days before week 1 fall in the last week of the year before; `yearweek` always
/// does), bit 4 makes week 1 the first week with four or more days in the year rather
/// than the first that starts in it (read inverted when weeks start on Sunday, as MySQL
/// does).
pub(super) fn week_of(at: &NaiveDateTime, mode: i64, whole_years: bool) -> (i64, i64) {
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
pub(super) fn whole_months(to: &NaiveDateTime, from: &NaiveDateTime) -> i64 {
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
pub(super) fn day_number(date: NaiveDate) -> i64 {
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
pub(super) fn add(at: NaiveDateTime, unit: Unit, n: i64) -> Option<NaiveDateTime> {
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

/// The start (`ceil` false) or the end (`ceil` true) of the bucket of `period` units that
/// holds `at`, the buckets laid end to end from `origin` in both directions (Doris's
/// `*_floor`/`*_ceil` and `date_floor`/`date_ceil`; their default origin is
/// `0001-01-01 00:00:00`). A moment on a bucket's edge is its own floor and ceiling.
/// Months, quarters and years step in calendar months from the origin (its day clamped to
/// the month's end); the others in fixed lengths. `None` when out of Doris's range.
pub(super) fn round(
    at: NaiveDateTime,
    unit: Unit,
    period: i64,
    origin: NaiveDateTime,
    ceil: bool,
) -> Option<NaiveDateTime> {
    if period <= 0 {
        return None;
    }
    let months_per = match unit {
        Unit::Month => Some(1),
        Unit::Quarter => Some(3),
        Unit::Year => Some(12),
        _ => None,
    };
    let (floor, next) = if let Some(per) = months_per {
        let step = period.checked_mul(per)?;
        let index = |at: &NaiveDateTime| i64::from(at.year()) * 12 + i64::from(at.month0());
        let mut k = (index(&at) - index(&origin)).div_euclid(step);
        let mut start = add(origin, Unit::Month, k.checked_mul(step)?)?;
        if start > at {
            k -= 1;
            start = add(origin, Unit::Month, k.checked_mul(step)?)?;
        }
        (start, add(origin, Unit::Month, (k + 1).checked_mul(step)?))
    } else {
        let seconds: i64 = match unit {
            Unit::Second => 1,
            Unit::Minute => 60,
            Unit::Hour => 3_600,
            Unit::Day => 86_400,
            _ => 604_800,
        };
        let step = seconds.checked_mul(period)?.checked_mul(1_000_000)?;
        let k = (at - origin).num_microseconds()?.div_euclid(step);
        let nth = |k: i64| {
            origin.checked_add_signed(chrono::TimeDelta::microseconds(k.checked_mul(step)?))
        };
        (nth(k)?, nth(k + 1))
    };
    let out = if ceil && floor < at { next? } else { floor };
    (1..=9999).contains(&out.year()).then_some(out)
}

/// The DATE of MySQL's day number `n` (`FROM_DAYS`, the inverse of [`day_number`]): days
/// 1–365 are year 0, which MySQL's calendar gives no 29 February; `None` below day 1.
pub(super) fn from_day_number(n: i64) -> Option<NaiveDate> {
    if n < 1 {
        return None;
    }
    if n <= 365 {
        // A common year's month and day, in year 0.
        let common = NaiveDate::from_yo_opt(1, u32::try_from(n).ok()?)?;
        return common.with_year(0);
    }
    // From year 1 on, MySQL's day numbers run 365 ahead of chrono's days of the era.
    let date = NaiveDate::from_num_days_from_ce_opt(i32::try_from(n - 365).ok()?)?;
    (date.year() <= 9999).then_some(date)
}

/// The Monday of `date`'s week (`TO_MONDAY`); Doris answers 1970-01-01 for the first four
/// days of 1970, whose Monday falls in 1969.
pub(super) fn monday_of(date: NaiveDate) -> Option<NaiveDate> {
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1)?;
    if (epoch..=epoch + Days::new(3)).contains(&date) {
        return Some(epoch);
    }
    date.checked_sub_days(Days::new(u64::from(date.weekday().num_days_from_monday())))
}

/// Months from `from` to `to` as Doris's `months_between` counts them: whole when the two
/// days are the same or both the last of their month, otherwise the day difference in
/// 31sts of a month; times of day do not count. `round_off`: to 8 decimals.
pub(super) fn months_between(to: NaiveDate, from: NaiveDate, round_off: bool) -> f64 {
    let months = (f64::from(to.year()) - f64::from(from.year())) * 12.0
        + (f64::from(to.month()) - f64::from(from.month()));
    let month_end = |d: NaiveDate| d.succ_opt().is_none_or(|next| next.month() != d.month());
    let value = if to.day() == from.day() || (month_end(to) && month_end(from)) {
        months
    } else {
        months + (f64::from(to.day()) - f64::from(from.day())) / 31.0
    };
    if round_off {
        (value * 1e8).round() / 1e8
    } else {
        value
    }
}

/// A weekday as `next_day` names it: `MO`/`MON`/`MONDAY` … `SU`/`SUN`/`SUNDAY`, in any
/// case.
pub(super) fn weekday_named(name: &str) -> Option<chrono::Weekday> {
    use chrono::Weekday::*;
    Some(match name.trim().to_ascii_uppercase().as_str() {
        "MO" | "MON" | "MONDAY" => Mon,
        "TU" | "TUE" | "TUESDAY" => Tue,
        "WE" | "WED" | "WEDNESDAY" => Wed,
        "TH" | "THU" | "THURSDAY" => Thu,
        "FR" | "FRI" | "FRIDAY" => Fri,
        "SA" | "SAT" | "SATURDAY" => Sat,
        "SU" | "SUN" | "SUNDAY" => Sun,
        _ => return None,
    })
}

/// The first `day` after `date` (a week later when `date` is one); Doris answers
/// 9999-12-31 when that day would fall after it.
pub(super) fn next_day(date: NaiveDate, day: chrono::Weekday) -> NaiveDate {
    let ahead = (7 + day.num_days_from_monday() - date.weekday().num_days_from_monday()) % 7;
    let ahead = if ahead == 0 { 7 } else { ahead };
    let last = NaiveDate::from_ymd_opt(9999, 12, 31).unwrap_or(date);
    date.checked_add_days(Days::new(u64::from(ahead)))
        .filter(|d| *d <= last)
        .unwrap_or(last)
}

/// The DATE an ISO 8601 date names: `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, `YYYY-DDD`
/// (ordinal), `YYYY-Www` and `YYYY-Www-D` (ISO week, Monday first), or their basic forms
/// without hyphens; `None` for anything else, a time of day included.
pub(super) fn parse_iso_date(text: &str) -> Option<NaiveDate> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let year: i32 = text.get(..4).filter(|y| digits(y))?.parse().ok()?;
    let rest = &text[4..];
    let extended = rest.starts_with('-');
    let rest = rest.strip_prefix('-').unwrap_or(rest);
    if rest.is_empty() {
        return NaiveDate::from_ymd_opt(year, 1, 1);
    }
    if let Some(week) = rest.strip_prefix('W') {
        let (week, day) = match week.split_once('-') {
            Some((w, d)) if extended => (w, Some(d)),
            Some(_) => return None,
            None if !extended && week.len() == 3 => (&week[..2], Some(&week[2..])),
            None => (week, None),
        };
        if week.len() != 2 || !digits(week) || day.is_some_and(|d| d.len() != 1 || !digits(d)) {
            return None;
        }
        let weekday = match day.map_or(Some(1), |d| d.parse::<u8>().ok())? {
            d @ 1..=7 => chrono::Weekday::try_from(d - 1).ok()?,
            _ => return None,
        };
        return NaiveDate::from_isoywd_opt(year, week.parse().ok()?, weekday);
    }
    match (rest.len(), extended) {
        // MM: the extended form only (`YYYYMM` is not ISO 8601).
        (2, true) if digits(rest) => NaiveDate::from_ymd_opt(year, rest.parse().ok()?, 1),
        // DDD, ordinal.
        (3, _) if digits(rest) => NaiveDate::from_yo_opt(year, rest.parse().ok()?),
        // MM-DD or MMDD.
        (5, true) if rest.as_bytes()[2] == b'-' && digits(&rest[..2]) && digits(&rest[3..]) => {
            NaiveDate::from_ymd_opt(year, rest[..2].parse().ok()?, rest[3..].parse().ok()?)
        }
        (4, false) if digits(rest) => {
            NaiveDate::from_ymd_opt(year, rest[..2].parse().ok()?, rest[2..].parse().ok()?)
        }
        _ => None,
    }
}

/// A session's `time_zone`: a name (`Asia/Shanghai`, `UTC`) or an offset (`+08:00`).
fn zone_offset(zone: &str, at_utc: chrono::DateTime<chrono::Utc>) -> Option<chrono::FixedOffset> {
    use chrono::Offset as _;
    if let Ok(offset) = zone.parse::<chrono::FixedOffset>() {
        return Some(offset);
    }
    let tz: chrono_tz::Tz = zone.parse().ok()?;
    Some(at_utc.with_timezone(&tz).offset().fix())
}

/// The local time in `zone` at `seconds` since 1970 (`from_unixtime`).
pub(super) fn local_time(seconds: i64, zone: &str) -> Option<NaiveDateTime> {
    local_time_micros(seconds.checked_mul(1_000_000)?, zone)
}

/// The local time in `zone` at `micros` microseconds since 1970 (`convert_tz`).
pub(super) fn local_time_micros(micros: i64, zone: &str) -> Option<NaiveDateTime> {
    let utc = chrono::DateTime::from_timestamp_micros(micros)?;
    Some(utc.with_timezone(&zone_offset(zone, utc)?).naive_local())
}

/// Microseconds since 1970 of `local`, a time of day in `zone` (`unix_timestamp`); a
/// local time a clock change skipped or repeated reads with the earlier offset.
pub(super) fn epoch_micros(local: NaiveDateTime, zone: &str) -> Option<i64> {
    use chrono::TimeZone as _;
    let micros = |at: chrono::DateTime<chrono::FixedOffset>| at.timestamp_micros();
    if let Ok(offset) = zone.parse::<chrono::FixedOffset>() {
        return offset.from_local_datetime(&local).single().map(micros);
    }
    let tz: chrono_tz::Tz = zone.parse().ok()?;
    let at = tz.from_local_datetime(&local).earliest().or_else(|| {
        // A skipped local time: read an hour later, as the clock would show it.
        tz.from_local_datetime(&(local + chrono::TimeDelta::hours(1)))
            .earliest()
    })?;
    Some(at.timestamp_micros())
}

/// `at` cut down to the start of its `unit` (a week starts on Monday).
pub(super) fn truncate(at: NaiveDateTime, unit: Unit) -> Option<NaiveDateTime> {
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
pub(super) fn format_moment(at: &NaiveDateTime, format: &str) -> String {
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

pub(super) fn ordinal_suffix(day: u32) -> &'static str {
    match (day % 10, day % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> NaiveDateTime {
        super::super::cells::parse_text(text).unwrap().0
    }

    #[test]
    fn a_moment_lies_between_its_floor_and_its_ceiling_one_bucket_apart() {
        let origins = [
            "0001-01-01 00:00:00",
            "2020-01-01 08:30:00",
            "2023-07-10 12:00:00",
        ];
        let units = [
            Unit::Second,
            Unit::Minute,
            Unit::Hour,
            Unit::Day,
            Unit::Week,
            Unit::Month,
            Unit::Quarter,
            Unit::Year,
        ];
        // Moments every 7 h 13 min 17 s across two years, either side of the origins.
        let mut moment = at("2022-11-30 01:02:03");
        while moment < at("2024-12-01 00:00:00") {
            for origin in origins.map(at) {
                for unit in units {
                    for period in [1, 2, 5] {
                        let floor = round(moment, unit, period, origin, false).unwrap();
                        let ceil = round(moment, unit, period, origin, true).unwrap();
                        assert!(floor <= moment && moment <= ceil, "{moment} {unit:?}");
                        let next = add(floor, unit, period).unwrap();
                        let sub_month = !matches!(unit, Unit::Month | Unit::Quarter | Unit::Year);
                        if sub_month {
                            // On the origin's grid, one bucket apart (or none on an edge).
                            let step = (next - floor).num_seconds();
                            assert_eq!((floor - origin).num_seconds() % step, 0);
                        }
                        assert!(ceil == floor || ceil == next, "{moment} {unit:?} {period}");
                        assert_eq!(ceil == floor, moment == floor);
                        assert!(next > moment, "{moment} {unit:?} {period}");
                    }
                }
            }
            moment += chrono::TimeDelta::seconds(7 * 3600 + 13 * 60 + 17);
        }
        assert!(round(at("2023-01-01"), Unit::Day, 0, at("0001-01-01"), false).is_none());
    }

    #[test]
    fn day_numbers_go_both_ways_and_mondays_are_found() {
        let mut d = NaiveDate::from_ymd_opt(0, 1, 1).unwrap();
        while d.year() < 3 {
            // Year 0 has no 29 February in MySQL's calendar.
            if d != NaiveDate::from_ymd_opt(0, 2, 29).unwrap() {
                assert_eq!(from_day_number(day_number(d)), Some(d), "{d}");
            }
            d = d.succ_opt().unwrap();
        }
        for n in [366, 700_000, 733_321, 3_652_424] {
            assert_eq!(from_day_number(n).map(day_number), Some(n));
        }
        assert_eq!(from_day_number(0), None);
        assert_eq!(from_day_number(3_652_425), None);
        let monday = |d: &str| monday_of(at(d).date()).unwrap().to_string();
        assert_eq!(monday("2022-09-10"), "2022-09-05");
        assert_eq!(monday("2023-10-09"), "2023-10-09");
        assert_eq!(monday("1970-01-04"), "1970-01-01");
        assert_eq!(monday("1970-01-05"), "1970-01-05");
    }

    #[test]
    fn months_between_counts_days_in_31sts_unless_the_days_match() {
        let between = |a: &str, b: &str, r: bool| months_between(at(a).date(), at(b).date(), r);
        assert_eq!(between("2020-12-26", "2020-10-25", true), 2.032_258_06);
        assert_eq!(
            between("2020-10-25", "2020-12-26", false),
            -2.032_258_064_516_129
        );
        assert_eq!(between("2024-02-29", "2024-01-31", true), 1.0);
        assert_eq!(between("2024-03-15", "2024-01-15", true), 2.0);
        assert_eq!(between("2024-02-29", "2024-01-30", true), 0.967_741_94);
        let next = |d: &str, w: &str| next_day(at(d).date(), weekday_named(w).unwrap()).to_string();
        assert_eq!(next("2020-01-31", "monday"), "2020-02-03");
        assert_eq!(next("2023-07-17", "MON"), "2023-07-24");
        assert_eq!(next("2023-07-13", "Fr"), "2023-07-14");
        assert_eq!(next("9999-12-31", "SU"), "9999-12-31");
        assert!(weekday_named("Mondays").is_none());
    }

    #[test]
    fn iso_dates_are_read_in_each_form() {
        let iso = |t: &str| parse_iso_date(t).map(|d| d.to_string());
        let day = |s: &str| Some(s.to_owned());
        assert_eq!(iso("2023"), day("2023-01-01"));
        assert_eq!(iso("2023-10"), day("2023-10-01"));
        assert_eq!(iso("2023-10-05"), day("2023-10-05"));
        assert_eq!(iso("20231005"), day("2023-10-05"));
        assert_eq!(iso("2021-060"), day("2021-03-01"));
        assert_eq!(iso("2024366"), day("2024-12-31"));
        assert_eq!(iso("0522-W01-1"), day("0521-12-29"));
        assert_eq!(iso("0522-W01-4"), day("0522-01-01"));
        assert_eq!(iso("0522W014"), day("0522-01-01"));
        assert_eq!(iso("0522-W01"), day("0521-12-29"));
        for bad in [
            "2023-10-01T12:34:10",
            "0522-W61",
            "0522-661",
            "202310",
            "2023-1-5",
            "x",
        ] {
            assert_eq!(iso(bad), None, "{bad}");
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
        assert_eq!(super::super::Part::WeekOfYear.of(&at("2023-05-01")), 18);
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
