//! The type parser: every spelling Doris prints (`DESC`, `SHOW CREATE TABLE`, old and new
//! releases) into one [`DorisType`], by recursive descent with a nesting bound.

use super::{DorisType, MAX_CHAR_LENGTH, MAX_VARCHAR_LENGTH, StructField};
use crate::error::{Result, SqlError};

impl std::str::FromStr for DorisType {
    type Err = SqlError;

    /// Parses any spelling Doris prints; see the module documentation.
    fn from_str(text: &str) -> Result<Self> {
        let mut p = TypeParser { text, pos: 0 };
        let ty = p.parse_type()?;
        p.skip_ws();
        if p.pos != text.len() {
            return Err(p.error("unexpected text after the type"));
        }
        Ok(ty)
    }
}

/// A recursive-descent parser over one type string.
struct TypeParser<'a> {
    text: &'a str,
    pos: usize,
}

/// Nested types deeper than this are refused (a guard against stack exhaustion).
const MAX_NESTING: usize = 64;

impl TypeParser<'_> {
    fn error(&self, reason: impl Into<String>) -> SqlError {
        SqlError::TypeParse {
            position: self.pos,
            reason: reason.into(),
        }
    }

    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn skip_ws(&mut self) {
        let trimmed = self.rest().trim_start();
        self.pos = self.text.len() - trimmed.len();
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.rest().chars().next()
    }

    fn eat(&mut self, ch: char) -> bool {
        if self.peek() == Some(ch) {
            self.pos += ch.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, ch: char) -> Result<()> {
        if self.eat(ch) {
            Ok(())
        } else {
            Err(self.error(format!("expected '{ch}'")))
        }
    }

    fn word(&mut self) -> Result<String> {
        self.skip_ws();
        let len = self
            .rest()
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        if len == 0 || self.rest().as_bytes()[0].is_ascii_digit() {
            return Err(self.error("expected a type name"));
        }
        let w = self.rest()[..len].to_ascii_uppercase();
        self.pos += len;
        Ok(w)
    }

    /// Tries to consume the keyword `kw` (case-insensitive, whole word).
    fn eat_keyword(&mut self, kw: &str) -> bool {
        self.skip_ws();
        let rest = self.rest();
        let matches = rest
            .as_bytes()
            .get(..kw.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(kw.as_bytes()))
            && !rest[kw.len()..]
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
        if matches {
            self.pos += kw.len();
        }
        matches
    }

    /// `(` arg, … `)` where each arg is a number or `*`; absent parentheses give an empty list.
    fn args(&mut self) -> Result<Vec<Option<u32>>> {
        let mut args = Vec::new();
        if !self.eat('(') {
            return Ok(args);
        }
        loop {
            self.skip_ws();
            if self.eat('*') {
                args.push(None);
            } else {
                let len = self.rest().bytes().take_while(u8::is_ascii_digit).count();
                if len == 0 {
                    return Err(self.error("expected a number"));
                }
                let n = self.rest()[..len]
                    .parse::<u32>()
                    .map_err(|_| self.error("number too large"))?;
                self.pos += len;
                args.push(Some(n));
            }
            if self.eat(')') {
                return Ok(args);
            }
            self.expect(',')?;
        }
    }

    fn parse_type(&mut self) -> Result<DorisType> {
        self.parse_type_at(0)
    }

    fn parse_type_at(&mut self, depth: usize) -> Result<DorisType> {
        if depth > MAX_NESTING {
            return Err(self.error("types are nested too deeply"));
        }
        let start = self.pos;
        let name = self.word()?;
        let ty = match name.as_str() {
            "ARRAY" => {
                self.expect('<')?;
                let (element, element_nullable) = self.parse_nested(depth)?;
                self.expect('>')?;
                return Ok(DorisType::Array {
                    element: Box::new(element),
                    element_nullable,
                });
            }
            "MAP" => {
                self.expect('<')?;
                let (key, _) = self.parse_nested(depth)?;
                self.expect(',')?;
                let (value, _) = self.parse_nested(depth)?;
                self.expect('>')?;
                return Ok(DorisType::Map {
                    key: Box::new(key),
                    value: Box::new(value),
                });
            }
            "STRUCT" => return self.parse_struct(depth),
            "AGG_STATE" => return self.parse_agg_state(),
            _ => name,
        };
        let args_at = self.pos;
        let args = self.args()?;
        let bad_args = |p: &Self, what: &str| SqlError::TypeParse {
            position: args_at,
            reason: format!("{what} for {}", &p.text[start..p.pos].trim()),
        };
        let nums = |p: &Self| -> Result<Vec<u32>> {
            args.iter()
                .map(|a| a.ok_or_else(|| bad_args(p, "'*' is not a valid argument")))
                .collect()
        };
        let ints = |p: &Self, t: DorisType| -> Result<DorisType> {
            match nums(p)?.as_slice() {
                [] => Ok(t),
                [w] if (1..=255).contains(w) => Ok(t),
                _ => Err(bad_args(p, "expected at most one display width")),
            }
        };
        let none = |p: &Self, t: DorisType| -> Result<DorisType> {
            if args.is_empty() {
                Ok(t)
            } else {
                Err(bad_args(p, "unexpected arguments"))
            }
        };
        let fraction = |p: &Self| -> Result<u8> {
            match nums(p)?.as_slice() {
                [] => Ok(0),
                [n] if *n <= 6 => Ok(u8::try_from(*n).unwrap_or(0)),
                _ => Err(bad_args(p, "fractional precision must be 0 to 6")),
            }
        };
        Ok(match ty.as_str() {
            "BOOLEAN" | "BOOL" => none(self, DorisType::Boolean)?,
            "TINYINT" => ints(self, DorisType::TinyInt)?,
            "SMALLINT" => ints(self, DorisType::SmallInt)?,
            "INT" | "INTEGER" => ints(self, DorisType::Int)?,
            "BIGINT" => ints(self, DorisType::BigInt)?,
            "LARGEINT" => ints(self, DorisType::LargeInt)?,
            "FLOAT" => none(self, DorisType::Float)?,
            "DOUBLE" => none(self, DorisType::Double)?,
            "DECIMAL" | "DECIMALV2" | "DECIMALV3" | "DECIMAL32" | "DECIMAL64" | "DECIMAL128"
            | "DECIMAL128I" | "DECIMAL256" | "NUMERIC" => {
                let (precision, scale) = match nums(self)?.as_slice() {
                    // Bare DECIMALV2 is the legacy fixed (27, 9); bare DECIMAL is V3's (9, 0).
                    [] if ty == "DECIMALV2" => (27, 9),
                    [] => (9, 0),
                    [p] => (*p, 0),
                    [p, s] => (*p, *s),
                    _ => return Err(bad_args(self, "expected (precision, scale)")),
                };
                if precision == 0 || precision > 76 || scale > precision {
                    return Err(bad_args(
                        self,
                        "precision must be 1 to 76 and scale at most precision",
                    ));
                }
                DorisType::Decimal {
                    precision: u8::try_from(precision).unwrap_or(0),
                    scale: u8::try_from(scale).unwrap_or(0),
                }
            }
            "DATE" | "DATEV1" | "DATEV2" => none(self, DorisType::Date)?,
            "DATETIME" | "DATETIMEV1" | "DATETIMEV2" | "TIMESTAMP" => DorisType::DateTime {
                precision: fraction(self)?,
            },
            "TIME" | "TIMEV1" | "TIMEV2" => DorisType::Time {
                precision: fraction(self)?,
            },
            "TIMESTAMPTZ" => DorisType::TimestampTz {
                precision: fraction(self)?,
            },
            "CHAR" | "CHARACTER" => match nums(self)?.as_slice() {
                [] => DorisType::Char { length: 1 },
                [n] if (1..=MAX_CHAR_LENGTH).contains(n) => DorisType::Char { length: *n },
                _ => return Err(bad_args(self, "CHAR length must be 1 to 255")),
            },
            "VARCHAR" => match args.as_slice() {
                [] | [None] => DorisType::Varchar { length: None },
                [Some(n)] if (1..=MAX_VARCHAR_LENGTH).contains(n) => {
                    DorisType::Varchar { length: Some(*n) }
                }
                _ => return Err(bad_args(self, "VARCHAR length must be 1 to 65533")),
            },
            "STRING" | "TEXT" => none(self, DorisType::String)?,
            "JSON" | "JSONB" => none(self, DorisType::Json)?,
            "VARIANT" => none(self, DorisType::Variant)?,
            "HLL" => none(self, DorisType::Hll)?,
            "BITMAP" => none(self, DorisType::Bitmap)?,
            "QUANTILE_STATE" => none(self, DorisType::QuantileState)?,
            "IPV4" => none(self, DorisType::Ipv4)?,
            "IPV6" => none(self, DorisType::Ipv6)?,
            "VARBINARY" => match args.as_slice() {
                [] | [None] => DorisType::VarBinary { length: None },
                [Some(n)] if *n >= 1 => DorisType::VarBinary { length: Some(*n) },
                _ => return Err(bad_args(self, "VARBINARY length must be positive")),
            },
            _ => {
                return Err(SqlError::TypeParse {
                    position: start,
                    reason: format!("unknown Doris type {ty:?}"),
                });
            }
        })
    }

    /// A type inside ARRAY/MAP/STRUCT: `NOT_NULL(T)`, or `T` with an optional trailing
    /// `NULL` / `NOT NULL`. Returns the type and whether it is nullable.
    fn parse_nested(&mut self, depth: usize) -> Result<(DorisType, bool)> {
        let save = self.pos;
        if self.eat_keyword("NOT_NULL") {
            if self.eat('(') {
                let ty = self.parse_type_at(depth + 1)?;
                self.expect(')')?;
                return Ok((ty, false));
            }
            self.pos = save;
        }
        let ty = self.parse_type_at(depth + 1)?;
        let save = self.pos;
        if self.eat_keyword("NOT") {
            if self.eat_keyword("NULL") {
                return Ok((ty, false));
            }
            self.pos = save;
        } else {
            self.eat_keyword("NULL");
        }
        Ok((ty, true))
    }

    fn parse_struct(&mut self, depth: usize) -> Result<DorisType> {
        self.expect('<')?;
        let mut fields = Vec::new();
        loop {
            let name = self.field_name()?;
            self.expect(':')?;
            let (ty, nullable) = self.parse_nested(depth)?;
            let comment = if self.eat_keyword("COMMENT") {
                Some(self.quoted_string()?)
            } else {
                None
            };
            fields.push(StructField {
                name,
                ty,
                nullable,
                comment,
            });
            if self.eat('>') {
                return Ok(DorisType::Struct { fields });
            }
            self.expect(',')?;
        }
    }

    fn field_name(&mut self) -> Result<String> {
        self.skip_ws();
        if self.rest().starts_with('`') {
            let (name, used) = crate::metadata::lex::read_backtick(self.rest())
                .ok_or_else(|| self.error("unclosed backtick in a field name"))?;
            self.pos += used;
            return Ok(name);
        }
        let end = self
            .rest()
            .find([':', ',', '>', '<'])
            .unwrap_or(self.rest().len());
        let name = self.rest()[..end].trim_end().to_owned();
        if name.is_empty() {
            return Err(self.error("expected a field name"));
        }
        self.pos += end;
        Ok(name)
    }

    fn quoted_string(&mut self) -> Result<String> {
        self.skip_ws();
        let (value, used) = crate::metadata::lex::read_quoted(self.rest())
            .ok_or_else(|| self.error("expected a quoted comment"))?;
        self.pos += used;
        Ok(value)
    }

    fn parse_agg_state(&mut self) -> Result<DorisType> {
        self.expect('<')?;
        let start = self.pos;
        let mut depth = 1usize;
        for (i, ch) in self.rest().char_indices() {
            match ch {
                '<' | '(' => depth += 1,
                '>' | ')' => {
                    depth -= 1;
                    if depth == 0 {
                        if ch != '>' {
                            break;
                        }
                        let signature = self.text[start..start + i].trim().to_owned();
                        self.pos = start + i + 1;
                        return Ok(DorisType::AggState { signature });
                    }
                }
                _ => {}
            }
        }
        Err(self.error("unbalanced AGG_STATE<…>"))
    }
}
