//! `str_to_date(text, format)`: text read by MySQL's format specifiers, as Doris reads it.
//!
//! Each numeric specifier reads up to its width in digits (`%Y` four, `%f` six, the others
//! two), a name specifier (`%b`, `%M`, `%W`, `%a`, `%p`) a word, and every other format
//! character must match the text's. Text left after the format is ignored (`'2023-01-01
//! 10:00:00 (GMT)'`); the date's year, month and day must all be read, else the answer is
//! NULL (`'15:30:45'` with `'%H:%i:%s'`), and so is a mismatch. A week (`%U`/`%u` in
//! `%Y`'s year, `%V`/`%v` in `%X`/`%x`'s) and a weekday (`%W`, `%a`, `%w`) name the day
//! instead, as MySQL reads them (`'200442 Monday'` with `'%X%V %W'` is 2004-10-18). Doris also takes three
//! Java-style formats, `yyyyMMdd`, `yyyy-MM-dd` and `yyyy-MM-dd HH:mm:ss`.

use chrono::{NaiveDate, NaiveDateTime};

use super::calendar::{DAYS, MONTHS};

/// What a format makes of its text: a DATE when it reads no time of day, a DATETIME
/// otherwise, with six fraction digits when it reads `%f`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reads {
    Date,
    DateTime,
    DateTimeMicros,
}

/// The MySQL form of Doris's Java-style formats; others as they are.
pub(super) fn mysql_form(format: &str) -> &str {
    match format {
        "yyyyMMdd" => "%Y%m%d",
        "yyyy-MM-dd" => "%Y-%m-%d",
        "yyyy-MM-dd HH:mm:ss" => "%Y-%m-%d %H:%i:%s",
        other => other,
    }
}

/// What `format` reads (see [`Reads`]).
pub(super) fn reads(format: &str) -> Reads {
    let format = mysql_form(format);
    if format.contains("%f") {
        Reads::DateTimeMicros
    } else if [
        "%H", "%h", "%I", "%k", "%l", "%i", "%s", "%S", "%p", "%T", "%r",
    ]
    .iter()
    .any(|s| format.contains(s))
    {
        Reads::DateTime
    } else {
        Reads::Date
    }
}

/// `text` read by `format` (`None`: NULL).
pub(super) fn str_to_date(text: &str, format: &str) -> Option<NaiveDateTime> {
    let format = mysql_form(format);
    if format.is_empty() {
        return None;
    }
    let mut rest = text;
    let (mut year, mut month, mut day) = (None, None, None);
    let (mut hour, mut minute, mut second, mut micros) = (0u32, 0u32, 0u32, 0u32);
    let (mut twelve_hour, mut pm) = (false, false);
    // `%U`/`%u`/`%V`/`%v`: the week and whether it starts on Sunday (and whether it is
    // counted in `%X`/`%x`'s year); `%X`/`%x`: that year; `%W`/`%a`/`%w`: Monday 1 …
    // Sunday 7.
    let (mut week, mut week_year, mut weekday) = (None, None, None);
    let mut spec = format.chars();
    while let Some(c) = spec.next() {
        if rest.is_empty() {
            // The text ended first: what was not read keeps its default.
            break;
        }
        if c != '%' {
            rest = rest.strip_prefix(c)?;
            continue;
        }
        let Some(s) = spec.next() else {
            break;
        };
        match s {
            'Y' => year = Some(i32::try_from(number(&mut rest, 4)?).ok()?),
            'y' => {
                let y = number(&mut rest, 2)?;
                year = Some(i32::try_from(if y < 70 { 2000 + y } else { 1900 + y }).ok()?);
            }
            'm' | 'c' => month = Some(number(&mut rest, 2)?),
            'd' | 'e' => day = Some(number(&mut rest, 2)?),
            'H' | 'k' => hour = number(&mut rest, 2)?,
            'h' | 'I' | 'l' => {
                hour = number(&mut rest, 2)?;
                twelve_hour = true;
            }
            'i' => minute = number(&mut rest, 2)?,
            's' | 'S' => second = number(&mut rest, 2)?,
            'f' => {
                let digits = rest.bytes().take(6).take_while(u8::is_ascii_digit).count();
                let (fraction, after) = rest.split_at(digits);
                micros = fraction.parse::<u32>().ok()? * 10u32.pow(6 - digits as u32);
                rest = after;
            }
            'p' => {
                let word = word(&mut rest).to_ascii_uppercase();
                pm = match word.as_str() {
                    "AM" => false,
                    "PM" => true,
                    _ => return None,
                };
            }
            'b' | 'M' => {
                let word = word(&mut rest).to_ascii_lowercase();
                let at = MONTHS.iter().position(|m| {
                    let m = m.to_ascii_lowercase();
                    if s == 'b' { m[..3] == word } else { m == word }
                })?;
                month = Some(u32::try_from(at).ok()? + 1);
            }
            'W' | 'a' => {
                let name = word(&mut rest).to_ascii_lowercase();
                let at = DAYS.iter().position(|d| {
                    let d = d.to_ascii_lowercase();
                    if s == 'a' { d[..3] == name } else { d == name }
                })?;
                // DAYS starts on Sunday.
                weekday = Some(if at == 0 { 7 } else { u32::try_from(at).ok()? });
            }
            'w' => {
                let n = number(&mut rest, 1)?;
                weekday = Some(match n {
                    0 => 7,
                    1..=6 => n,
                    _ => return None,
                });
            }
            'U' | 'u' | 'V' | 'v' => {
                let n = number(&mut rest, 2)?;
                let strict = matches!(s, 'V' | 'v');
                if n > 53 || (strict && n == 0) {
                    return None;
                }
                week = Some((n, matches!(s, 'U' | 'V'), strict));
            }
            'X' | 'x' => {
                week_year = Some((i32::try_from(number(&mut rest, 4)?).ok()?, s == 'X'));
            }
            '%' => rest = rest.strip_prefix('%')?,
            _ => return None,
        }
    }
    if twelve_hour {
        if !(1..=12).contains(&hour) {
            return None;
        }
        hour = hour % 12 + if pm { 12 } else { 0 };
    }
    let date = match (week, weekday) {
        // A week and a weekday name the day (MySQL's rule): `%V`/`%v` count in `%X`/`%x`'s
        // year of the same first day, `%U`/`%u` in `%Y`'s.
        (Some((week, sunday_first, strict)), Some(weekday)) => {
            let year = match (strict, week_year) {
                (true, Some((y, sunday))) if sunday == sunday_first => y,
                (false, None) => year?,
                _ => return None,
            };
            day_of_week(year, week, weekday, sunday_first)?
        }
        _ => NaiveDate::from_ymd_opt(year?, month?, day?)?,
    };
    date.and_hms_micro_opt(hour, minute, second, micros)
}

/// The day `weekday` (Monday 1 … Sunday 7) of week `week` of `year`: with Sunday first,
/// week 1 starts on the year's first Sunday; with Monday first, on the Monday of the first
/// week holding four days of the year.
fn day_of_week(year: i32, week: u32, weekday: u32, sunday_first: bool) -> Option<NaiveDate> {
    use chrono::Datelike as _;
    let first = NaiveDate::from_ymd_opt(year, 1, 1)?;
    let weeks = (i64::from(week) - 1) * 7;
    let days = if sunday_first {
        let before = i64::from(first.weekday().num_days_from_sunday());
        let to_sunday = if before == 0 { 0 } else { 7 - before };
        to_sunday + weeks + i64::from(weekday % 7)
    } else {
        let before = i64::from(first.weekday().num_days_from_monday());
        let to_monday = if before <= 3 { -before } else { 7 - before };
        to_monday + weeks + i64::from(weekday) - 1
    };
    first.checked_add_signed(chrono::TimeDelta::days(days))
}

/// Up to `width` digits from the front of `rest` (at least one).
fn number(rest: &mut &str, width: usize) -> Option<u32> {
    let digits = rest
        .bytes()
        .take(width)
        .take_while(u8::is_ascii_digit)
        .count();
    if digits == 0 {
        return None;
    }
    let (n, after) = rest.split_at(digits);
    *rest = after;
    n.parse().ok()
}

/// The letters at the front of `rest`.
fn word<'a>(rest: &mut &'a str) -> &'a str {
    let letters = rest
        .char_indices()
        .find(|(_, c)| !c.is_ascii_alphabetic())
        .map_or(rest.len(), |(i, _)| i);
    let (w, after) = rest.split_at(letters);
    *rest = after;
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, format: &str) -> Option<String> {
        str_to_date(text, format).map(|at| at.to_string())
    }

    #[test]
    fn text_is_read_as_the_format_says() {
        let at = |s: &str| Some(s.to_owned());
        assert_eq!(
            read("2025-01-23 12:34:56", "%Y-%m-%d %H:%i:%s"),
            at("2025-01-23 12:34:56")
        );
        assert_eq!(
            read("2025-01-23 12:34:56", "yyyy-MM-dd HH:mm:ss"),
            at("2025-01-23 12:34:56")
        );
        assert_eq!(read("20230713", "yyyyMMdd"), at("2023-07-13 00:00:00"));
        assert_eq!(
            read("Oct 5 2023 3:45:00 PM", "%b %d %Y %h:%i:%s %p"),
            at("2023-10-05 15:45:00")
        );
        assert_eq!(
            read("12:05 am 1999-1-2", "%h:%i %p %Y-%c-%e"),
            at("1999-01-02 00:05:00")
        );
        assert_eq!(
            read("2023-01-01 10:00:00 (GMT)", "%Y-%m-%d %H:%i:%s"),
            at("2023-01-01 10:00:00")
        );
        assert_eq!(
            read("2023-07-13 12:34:56.789", "%Y-%m-%d %H:%i:%s.%f"),
            at("2023-07-13 12:34:56.789")
        );
        // MySQL's manual's example, and the ISO weeks (`%x %v`) against chrono's: week 1
        // of 2020 starts on 2019-12-30 (2020-01-01 is a Wednesday), 2021's on 2021-01-04
        // (a Friday first: 2021-01-01 is in 2020's week 53).
        assert_eq!(read("200442 Monday", "%X%V %W"), at("2004-10-18 00:00:00"));
        assert_eq!(read("2020 01 Mon", "%x %v %a"), at("2019-12-30 00:00:00"));
        assert_eq!(read("2021 01 Mon", "%x %v %a"), at("2021-01-04 00:00:00"));
        for day in 0..365 {
            let date = NaiveDate::from_ymd_opt(2021, 1, 1).unwrap() + chrono::Days::new(day);
            let iso = chrono::Datelike::iso_week(&date);
            let text = format!("{} {} {}", iso.year(), iso.week(), date.format("%A"));
            assert_eq!(
                str_to_date(&text, "%x %v %W").map(|at| at.date()),
                Some(date),
                "{text}"
            );
        }
        assert_eq!(read("2023 00 0", "%Y %U %w"), at("2022-12-25 00:00:00"));
        assert_eq!(read("2023 01 0", "%Y %U %w"), at("2023-01-01 00:00:00"));
        for (text, format) in [
            ("2004 42 Monday", "%Y %V %W"),
            ("2004 42 Monday", "%x %V %W"),
            ("2004 00 Monday", "%X %V %W"),
            ("2004 42 Funday", "%X %V %W"),
            ("15:30:45", "%H:%i:%s"),
            ("2023/01/01", "%Y-%m-%d"),
            ("2023-01-01", ""),
            ("2023-02-30", "%Y-%m-%d"),
            ("13:00 PM 2023-01-01", "%h:%i %p %Y-%m-%d"),
        ] {
            assert_eq!(read(text, format), None, "{text} {format}");
        }
        assert_eq!(reads("%Y-%m-%d"), Reads::Date);
        assert_eq!(reads("yyyy-MM-dd HH:mm:ss"), Reads::DateTime);
        assert_eq!(reads("%Y %f"), Reads::DateTimeMicros);
    }
}
