//! DATE, DATETIME(p) and TIME(p) values, checked when made and printed as Doris reads
//! them.

use std::fmt;

use crate::error::{Result, SqlError};

/// A calendar date in Doris's range `0000-01-01` to `9999-12-31`.
///
/// ```
/// use doris_sql::Date;
/// let d: Date = "2024-02-29".parse().unwrap();
/// assert_eq!(d.to_string(), "2024-02-29");
/// assert!("2023-02-29".parse::<Date>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    year: u16,
    month: u8,
    day: u8,
}

impl Date {
    /// Validates and builds a date.
    pub fn new(year: u16, month: u8, day: u8) -> Result<Self> {
        if year > 9999 || !(1..=12).contains(&month) || day == 0 || day > days_in(year, month) {
            return Err(SqlError::InvalidLiteral {
                kind: "date",
                reason: "not a valid calendar date in 0000-01-01..9999-12-31".into(),
            });
        }
        Ok(Self { year, month, day })
    }

    /// Year, month (1-12) and day (1-31).
    pub fn ymd(&self) -> (u16, u8, u8) {
        (self.year, self.month, self.day)
    }
}

fn days_in(year: u16, month: u8) -> u8 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        _ => 31,
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl std::str::FromStr for Date {
    type Err = SqlError;

    fn from_str(text: &str) -> Result<Self> {
        let b = text.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return Err(SqlError::InvalidLiteral {
                kind: "date",
                reason: "expected YYYY-MM-DD".into(),
            });
        }
        Date::new(
            digits(&text[0..4], "date")?,
            digits(&text[5..7], "date")?,
            digits(&text[8..10], "date")?,
        )
    }
}

fn digits<T: std::str::FromStr>(text: &str, kind: &'static str) -> Result<T> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SqlError::InvalidLiteral {
            kind,
            reason: "expected digits".into(),
        });
    }
    text.parse().map_err(|_| SqlError::InvalidLiteral {
        kind,
        reason: "number out of range".into(),
    })
}

/// Parses `[.ffffff]` (1 to 6 digits) into microseconds and the digit count.
fn parse_fraction(text: &str, kind: &'static str) -> Result<(u32, u8)> {
    if text.is_empty() {
        return Ok((0, 0));
    }
    let Some(frac) = text.strip_prefix('.') else {
        return Err(SqlError::InvalidLiteral {
            kind,
            reason: "unexpected text after the seconds".into(),
        });
    };
    if frac.is_empty() || frac.len() > 6 {
        return Err(SqlError::InvalidLiteral {
            kind,
            reason: "expected 1 to 6 fractional digits".into(),
        });
    }
    let value: u32 = digits(frac, kind)?;
    let precision = u8::try_from(frac.len()).unwrap_or(6);
    Ok((value * 10u32.pow(6 - u32::from(precision)), precision))
}

fn check_micros(micros: u32, precision: u8, kind: &'static str) -> Result<()> {
    if precision > 6 {
        return Err(SqlError::InvalidLiteral {
            kind,
            reason: "fractional precision must be 0 to 6".into(),
        });
    }
    if micros >= 1_000_000 || !micros.is_multiple_of(10u32.pow(6 - u32::from(precision))) {
        return Err(SqlError::InvalidLiteral {
            kind,
            reason: format!("the fraction has more digits than precision {precision}"),
        });
    }
    Ok(())
}

fn write_fraction(f: &mut fmt::Formatter<'_>, micros: u32, precision: u8) -> fmt::Result {
    if precision > 0 {
        let digits = format!("{micros:06}");
        write!(f, ".{}", &digits[..usize::from(precision)])?;
    }
    Ok(())
}

/// A DATETIME(p) value: a date, a time of day and `precision` (0-6) fractional digits.
///
/// ```
/// use doris_sql::DateTime;
/// let dt: DateTime = "2024-01-31 12:00:00.120".parse().unwrap();
/// assert_eq!(dt.precision(), 3);
/// assert_eq!(dt.to_string(), "2024-01-31 12:00:00.120");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DateTime {
    date: Date,
    hour: u8,
    minute: u8,
    second: u8,
    micros: u32,
    pub(super) precision: u8,
}

impl DateTime {
    /// Validates and builds a datetime; `micros` must not need more than `precision` digits.
    pub fn new(
        date: Date,
        (hour, minute, second): (u8, u8, u8),
        micros: u32,
        precision: u8,
    ) -> Result<Self> {
        if hour > 23 || minute > 59 || second > 59 {
            return Err(SqlError::InvalidLiteral {
                kind: "datetime",
                reason: "time of day out of range".into(),
            });
        }
        check_micros(micros, precision, "datetime")?;
        Ok(Self {
            date,
            hour,
            minute,
            second,
            micros,
            precision,
        })
    }

    /// The fractional precision `p` of DATETIME(p).
    pub fn precision(&self) -> u8 {
        self.precision
    }

    /// The date part.
    pub fn date(&self) -> Date {
        self.date
    }

    /// Hour, minute, second and microseconds.
    pub fn time_of_day(&self) -> (u8, u8, u8, u32) {
        (self.hour, self.minute, self.second, self.micros)
    }
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {:02}:{:02}:{:02}",
            self.date, self.hour, self.minute, self.second
        )?;
        write_fraction(f, self.micros, self.precision)
    }
}

impl std::str::FromStr for DateTime {
    type Err = SqlError;

    /// Accepts `YYYY-MM-DD HH:MM:SS[.f…]` with a space or `T`; the precision is the number
    /// of fractional digits written.
    fn from_str(text: &str) -> Result<Self> {
        let bad = || SqlError::InvalidLiteral {
            kind: "datetime",
            reason: "expected YYYY-MM-DD HH:MM:SS[.ffffff]".into(),
        };
        if text.len() < 19 || !text.is_char_boundary(10) || !text.is_char_boundary(19) {
            return Err(bad());
        }
        let date: Date = text[..10].parse()?;
        let sep = text.as_bytes()[10];
        let t = &text.as_bytes()[11..19];
        if (sep != b' ' && sep != b'T') || t[2] != b':' || t[5] != b':' {
            return Err(bad());
        }
        let (micros, precision) = parse_fraction(&text[19..], "datetime")?;
        DateTime::new(
            date,
            (
                digits(&text[11..13], "datetime")?,
                digits(&text[14..16], "datetime")?,
                digits(&text[17..19], "datetime")?,
            ),
            micros,
            precision,
        )
    }
}

/// A TIME(p) value in Doris's range `-838:59:59.999999` to `838:59:59.999999`.
///
/// ```
/// use doris_sql::Time;
/// let t: Time = "-100:00:01.5".parse().unwrap();
/// assert_eq!(t.to_string(), "-100:00:01.5");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Time {
    negative: bool,
    hours: u16,
    minute: u8,
    second: u8,
    micros: u32,
    pub(super) precision: u8,
}

impl Time {
    /// Validates and builds a time value.
    pub fn new(
        negative: bool,
        (hours, minute, second): (u16, u8, u8),
        micros: u32,
        precision: u8,
    ) -> Result<Self> {
        if hours > 838 || minute > 59 || second > 59 {
            return Err(SqlError::InvalidLiteral {
                kind: "time",
                reason: "out of range -838:59:59..838:59:59".into(),
            });
        }
        check_micros(micros, precision, "time")?;
        let is_zero = hours == 0 && minute == 0 && second == 0 && micros == 0;
        Ok(Self {
            negative: negative && !is_zero,
            hours,
            minute,
            second,
            micros,
            precision,
        })
    }

    /// The fractional precision `p` of TIME(p).
    pub fn precision(&self) -> u8 {
        self.precision
    }

    /// Signed microseconds since midnight (may exceed one day, as Doris TIME does).
    pub fn total_micros(&self) -> i64 {
        let magnitude = ((i64::from(self.hours) * 60 + i64::from(self.minute)) * 60
            + i64::from(self.second))
            * 1_000_000
            + i64::from(self.micros);
        if self.negative { -magnitude } else { magnitude }
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.negative {
            f.write_str("-")?;
        }
        write!(f, "{:02}:{:02}:{:02}", self.hours, self.minute, self.second)?;
        write_fraction(f, self.micros, self.precision)
    }
}

impl std::str::FromStr for Time {
    type Err = SqlError;

    fn from_str(text: &str) -> Result<Self> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let bad = || SqlError::InvalidLiteral {
            kind: "time",
            reason: "expected [-]HH:MM:SS[.ffffff]".into(),
        };
        let (hms, fraction) = match rest.find('.') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, ""),
        };
        let mut parts = hms.split(':');
        let (Some(h), Some(m), Some(s), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        if h.len() > 3 || m.len() != 2 || s.len() != 2 {
            return Err(bad());
        }
        let (micros, precision) = parse_fraction(fraction, "time")?;
        Time::new(
            negative,
            (digits(h, "time")?, digits(m, "time")?, digits(s, "time")?),
            micros,
            precision,
        )
    }
}
