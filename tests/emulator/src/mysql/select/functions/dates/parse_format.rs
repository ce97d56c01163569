//! `str_to_date(text, format)`: text read by MySQL's format specifiers, as Doris reads it.
//!
//! Each numeric specifier reads up to its width in digits (`%Y` four, `%f` six, the others
//! two), a name specifier (`%b`, `%M`, `%W`, `%a`, `%p`) a word, and every other format
//! character must match the text's. Text left after the format is ignored (`'2023-01-01
//! 10:00:00 (GMT)'`); the date's year, month and day must all be read, else the answer is
//! NULL (`'15:30:45'` with `'%H:%i:%s'`), and so is a mismatch. Doris also takes three
//! Java-style formats, `yyyyMMdd`, `yyyy-MM-dd` and `yyyy-MM-dd HH:mm:ss`.

use chrono::{NaiveDate, NaiveDateTime};

use super::calendar::MONTHS;

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
            // A weekday's name is read and checked by nothing else here.
            'W' | 'a' => {
                word(&mut rest);
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
    NaiveDate::from_ymd_opt(year?, month?, day?)?.and_hms_micro_opt(hour, minute, second, micros)
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
        for (text, format) in [
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
