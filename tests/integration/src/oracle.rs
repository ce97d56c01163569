//! An evaluator of the predicate IR with SQL semantics (three-valued logic, NULL
//! propagation, LIKE with backslash escapes, numeric comparison as DOUBLE when either side
//! is floating point). Written from the SQL rules, independently of the renderer, so that
//! comparing it with a real server tests the renderer.

use std::cmp::Ordering;
use std::collections::HashMap;

use doris_sql::{ArithmeticOp, CompareOp, Date, Expr, Literal};

/// A cell value of the test table.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// An integer (BIGINT).
    Int(i64),
    /// A DOUBLE.
    Float(f64),
    /// A string (compared byte-wise, as a binary no-pad collation does).
    Str(String),
    /// A DATE.
    Date(Date),
}

/// One row: column name → value.
pub type RowValues = HashMap<String, Value>;

/// Three-valued logic: `Some(true)`, `Some(false)`, or `None` for UNKNOWN.
pub type Truth = Option<bool>;

/// Whether `expr` is TRUE for `row` (a WHERE clause keeps exactly these rows).
pub fn keeps(expr: &Expr, row: &RowValues) -> bool {
    truth(expr, row) == Some(true)
}

/// Evaluates a boolean-valued expression.
// `fold` over `Option` is deliberate: UNKNOWN (None) must not stop an AND or OR, since a
// later FALSE (resp. TRUE) still decides it. `try_fold` would short-circuit wrongly.
#[allow(clippy::manual_try_fold)]
pub fn truth(expr: &Expr, row: &RowValues) -> Truth {
    match expr {
        Expr::Literal {
            value: Literal::Bool(b),
        } => Some(*b),
        Expr::Literal { .. } | Expr::Column { .. } | Expr::Arithmetic { .. } => {
            panic!("value expression in predicate position: {expr:?}")
        }
        Expr::Compare { op, left, right } => {
            let (l, r) = (value(left, row), value(right, row));
            if *op == CompareOp::NullSafeEq {
                return Some(match (&l, &r) {
                    (Value::Null, Value::Null) => true,
                    (Value::Null, _) | (_, Value::Null) => false,
                    _ => compare(&l, &r) == Some(Ordering::Equal),
                });
            }
            let ord = compare(&l, &r)?;
            Some(match op {
                CompareOp::Eq => ord == Ordering::Equal,
                CompareOp::NotEq => ord != Ordering::Equal,
                CompareOp::Lt => ord == Ordering::Less,
                CompareOp::LtEq => ord != Ordering::Greater,
                CompareOp::Gt => ord == Ordering::Greater,
                CompareOp::GtEq => ord != Ordering::Less,
                CompareOp::NullSafeEq => unreachable!("handled above"),
            })
        }
        Expr::And { args } => args
            .iter()
            .fold(Some(true), |acc, a| and(acc, truth(a, row))),
        Expr::Or { args } => args
            .iter()
            .fold(Some(false), |acc, a| or(acc, truth(a, row))),
        Expr::Not { arg } => truth(arg, row).map(|b| !b),
        Expr::IsNull { arg, negated } => Some((value(arg, row) == Value::Null) != *negated),
        Expr::InList { arg, list, negated } => {
            let v = value(arg, row);
            let found = list.iter().fold(Some(false), |acc, item| {
                or(
                    acc,
                    compare(&v, &literal(item)).map(|o| o == Ordering::Equal),
                )
            });
            if *negated { found.map(|b| !b) } else { found }
        }
        Expr::Between {
            arg,
            low,
            high,
            negated,
        } => {
            let v = value(arg, row);
            let lo = compare(&v, &value(low, row)).map(|o| o != Ordering::Less);
            let hi = compare(&v, &value(high, row)).map(|o| o != Ordering::Greater);
            let inside = and(lo, hi);
            if *negated { inside.map(|b| !b) } else { inside }
        }
        Expr::Like {
            arg,
            pattern,
            negated,
        } => {
            let Value::Str(s) = value(arg, row) else {
                return None;
            };
            let m = like(&s, pattern);
            Some(m != *negated)
        }
        Expr::StartsWith { arg, prefix } => {
            string_test(arg, row, |s| s.starts_with(prefix.as_str()))
        }
        Expr::EndsWith { arg, suffix } => string_test(arg, row, |s| s.ends_with(suffix.as_str())),
        Expr::Contains { arg, substring } => {
            string_test(arg, row, |s| s.contains(substring.as_str()))
        }
    }
}

fn string_test(arg: &Expr, row: &RowValues, test: impl Fn(&str) -> bool) -> Truth {
    match value(arg, row) {
        Value::Str(s) => Some(test(&s)),
        _ => None,
    }
}

fn and(a: Truth, b: Truth) -> Truth {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

fn or(a: Truth, b: Truth) -> Truth {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

/// Evaluates a value expression.
pub fn value(expr: &Expr, row: &RowValues) -> Value {
    match expr {
        Expr::Column { name } => row
            .get(name)
            .cloned()
            .unwrap_or_else(|| panic!("no column {name}")),
        Expr::Literal { value } => literal(value),
        Expr::Arithmetic { op, left, right } => {
            match (value(left, row), value(right, row)) {
                (Value::Null, _) | (_, Value::Null) => Value::Null,
                // Division is never pushed, so only the residual side evaluates it; MySQL's
                // rules are modelled anyway: x / 0 is NULL and the quotient is fractional.
                (a, b) if *op == ArithmeticOp::Divide => {
                    let (a, b) = (as_f64(&a), as_f64(&b));
                    if b == 0.0 {
                        Value::Null
                    } else {
                        Value::Float(a / b)
                    }
                }
                (Value::Int(a), Value::Int(b)) => Value::Int(match op {
                    ArithmeticOp::Add => a.checked_add(b).expect("small test values"),
                    ArithmeticOp::Subtract => a.checked_sub(b).expect("small test values"),
                    _ => a.checked_mul(b).expect("small test values"),
                }),
                (a, b) => {
                    let (a, b) = (as_f64(&a), as_f64(&b));
                    Value::Float(match op {
                        ArithmeticOp::Add => a + b,
                        ArithmeticOp::Subtract => a - b,
                        _ => a * b,
                    })
                }
            }
        }
        other => panic!("predicate in value position: {other:?}"),
    }
}

/// The test-table value of a literal.
pub fn literal(lit: &Literal) -> Value {
    match lit {
        Literal::Null => Value::Null,
        Literal::Int8(v) => Value::Int(i64::from(*v)),
        Literal::Int16(v) => Value::Int(i64::from(*v)),
        Literal::Int32(v) => Value::Int(i64::from(*v)),
        Literal::Int64(v) => Value::Int(*v),
        Literal::Float32(v) => Value::Float(f64::from(*v)),
        Literal::Float64(v) => Value::Float(*v),
        Literal::String(s) => Value::Str(s.clone()),
        Literal::Date(d) => Value::Date(*d),
        other => panic!("the oracle does not model {other:?}"),
    }
}

fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        other => panic!("not a number: {other:?}"),
    }
}

/// SQL comparison; `None` when either side is NULL.
fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => None,
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            as_f64(a).partial_cmp(&as_f64(b))
        }
        (Value::Str(x), Value::Str(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
        (Value::Date(x), Value::Date(y)) => Some(x.cmp(y)),
        _ => panic!("incomparable test values {a:?} and {b:?}"),
    }
}

/// SQL LIKE: `%` any run, `_` one character, backslash escapes the next character
/// (a trailing backslash is a literal backslash).
pub fn like(text: &str, pattern: &str) -> bool {
    enum Tok {
        Lit(char),
        One,
        Many,
    }
    let mut toks = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        toks.push(match c {
            '%' => Tok::Many,
            '_' => Tok::One,
            '\\' => Tok::Lit(chars.next().unwrap_or('\\')),
            c => Tok::Lit(c),
        });
    }
    let text: Vec<char> = text.chars().collect();
    // matches[j] = the first j characters of text match the tokens seen so far.
    let mut matches = vec![false; text.len() + 1];
    matches[0] = true;
    for tok in &toks {
        let mut next = vec![false; text.len() + 1];
        for j in 0..=text.len() {
            next[j] = match tok {
                Tok::Many => matches[j] || (j > 0 && next[j - 1]),
                Tok::One => j > 0 && matches[j - 1],
                Tok::Lit(c) => j > 0 && matches[j - 1] && text[j - 1] == *c,
            };
        }
        matches = next;
    }
    matches[text.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_follows_sql() {
        assert!(like("abc", "a%"));
        assert!(like("abc", "_b_"));
        assert!(!like("abc", "_b"));
        assert!(like("a%c", "a\\%c"));
        assert!(!like("abc", "a\\%c"));
        assert!(like("", "%"));
        assert!(like("é", "_"));
        assert!(like("a\\", "a\\"));
    }

    #[test]
    fn three_valued_logic() {
        let row = RowValues::from([
            ("a".to_owned(), Value::Null),
            ("b".to_owned(), Value::Int(1)),
        ]);
        let a_is_1 = Expr::col("a").eq(Expr::lit(Literal::Int64(1)));
        assert_eq!(truth(&a_is_1, &row), None);
        assert_eq!(truth(&a_is_1.clone().not(), &row), None);
        let b_is_1 = Expr::col("b").eq(Expr::lit(Literal::Int64(1)));
        assert_eq!(truth(&a_is_1.clone().or(b_is_1.clone()), &row), Some(true));
        assert_eq!(truth(&a_is_1.and(b_is_1.not()), &row), Some(false));
        let not_in = Expr::col("b").not_in_list(vec![Literal::Int64(2), Literal::Null]);
        assert_eq!(truth(&not_in, &row), None);
    }
}
