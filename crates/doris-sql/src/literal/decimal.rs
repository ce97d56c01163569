//! Exact decimals as Doris DECIMAL(p, s) holds them.

use std::fmt;

use crate::error::{Result, SqlError};

/// An exact decimal number: sign, digits and scale, as Doris DECIMAL(p, s) holds it.
///
/// Parsed from plain (`-12.340`) or exponent (`1.5E+2`) notation; the scale is the number
/// of fractional digits and is kept (trailing zeros included).
///
/// ```
/// use doris_sql::Decimal;
/// let d: Decimal = "-12.340".parse().unwrap();
/// assert_eq!((d.precision(), d.scale()), (5, 3));
/// assert_eq!(d.with_scale(5).unwrap().to_string(), "-12.34000");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Decimal {
    negative: bool,
    /// Integer digits without leading zeros (empty for zero).
    integer: String,
    /// Fractional digits, exactly `scale` of them.
    fraction: String,
}

/// The largest precision Doris supports (DECIMAL256).
pub const MAX_DECIMAL_PRECISION: u8 = 76;

impl Decimal {
    /// Number of significant digit positions (integer digits + scale), at least 1.
    pub fn precision(&self) -> u8 {
        let digits = self.integer.len() + self.fraction.len();
        u8::try_from(digits.max(1)).unwrap_or(u8::MAX)
    }

    /// Number of fractional digits.
    pub fn scale(&self) -> u8 {
        u8::try_from(self.fraction.len()).unwrap_or(u8::MAX)
    }

    /// True for a value below zero.
    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// The same value with `scale` fractional digits; fails if digits would be dropped.
    pub fn with_scale(&self, scale: u8) -> Result<Self> {
        let scale = usize::from(scale);
        let mut fraction = self.fraction.clone();
        if scale >= fraction.len() {
            fraction.extend(std::iter::repeat_n('0', scale - fraction.len()));
        } else if fraction[scale..].bytes().all(|b| b == b'0') {
            fraction.truncate(scale);
        } else {
            return Err(SqlError::InvalidLiteral {
                kind: "decimal",
                reason: format!("rescaling to {scale} fractional digits would round the value"),
            });
        }
        Self::from_parts(self.negative, self.integer.clone(), fraction)
    }

    /// Checks that the value fits DECIMAL(`precision`, `scale`) and returns it at that scale.
    pub fn fit(&self, precision: u8, scale: u8) -> Result<Self> {
        if scale > precision || precision == 0 || precision > MAX_DECIMAL_PRECISION {
            return Err(SqlError::InvalidLiteral {
                kind: "decimal",
                reason: format!("DECIMAL({precision}, {scale}) is not a valid Doris type"),
            });
        }
        let scaled = self.with_scale(scale)?;
        if scaled.integer.len() > usize::from(precision - scale) {
            return Err(SqlError::InvalidLiteral {
                kind: "decimal",
                reason: format!("the value does not fit DECIMAL({precision}, {scale})"),
            });
        }
        Ok(scaled)
    }

    fn from_parts(negative: bool, integer: String, fraction: String) -> Result<Self> {
        let integer = integer.trim_start_matches('0').to_owned();
        if integer.len() + fraction.len() > usize::from(MAX_DECIMAL_PRECISION) {
            return Err(SqlError::InvalidLiteral {
                kind: "decimal",
                reason: format!("more than {MAX_DECIMAL_PRECISION} digits"),
            });
        }
        let is_zero = integer.is_empty() && fraction.bytes().all(|b| b == b'0');
        Ok(Self {
            negative: negative && !is_zero,
            integer,
            fraction,
        })
    }
}

impl std::str::FromStr for Decimal {
    type Err = SqlError;

    fn from_str(text: &str) -> Result<Self> {
        let bad = |reason: &str| SqlError::InvalidLiteral {
            kind: "decimal",
            reason: reason.to_owned(),
        };
        let (negative, rest) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(at) => {
                let exp: i32 = rest[at + 1..]
                    .parse()
                    .map_err(|_| bad("malformed exponent"))?;
                (&rest[..at], exp)
            }
            None => (rest, 0),
        };
        let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (int_part.is_empty() && frac_part.is_empty())
            || !all_digits(int_part)
            || !all_digits(frac_part)
        {
            return Err(bad("expected digits with an optional point and exponent"));
        }
        if exponent.unsigned_abs() > u32::from(MAX_DECIMAL_PRECISION) * 2 {
            return Err(bad("exponent out of range"));
        }
        // Shift the decimal point by the exponent over the concatenated digits.
        let digits: String = [int_part, frac_part].concat();
        let point = i64::try_from(int_part.len()).unwrap_or(0) + i64::from(exponent);
        let (integer, fraction) = if point <= 0 {
            let zeros = usize::try_from(-point).unwrap_or(0);
            (String::new(), "0".repeat(zeros) + &digits)
        } else {
            let point = usize::try_from(point).unwrap_or(0);
            if point >= digits.len() {
                (
                    digits.clone() + &"0".repeat(point - digits.len()),
                    String::new(),
                )
            } else {
                (digits[..point].to_owned(), digits[point..].to_owned())
            }
        };
        Self::from_parts(negative, integer, fraction)
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.negative {
            f.write_str("-")?;
        }
        f.write_str(if self.integer.is_empty() {
            "0"
        } else {
            &self.integer
        })?;
        if !self.fraction.is_empty() {
            write!(f, ".{}", self.fraction)?;
        }
        Ok(())
    }
}
