//! Translation of a predicate into Doris SQL, with a residual for what cannot be pushed.
//!
//! The filter is split into its top-level AND conjuncts. A conjunct is pushed only if all
//! of it translates with exactly the engine's semantics; otherwise the whole conjunct stays
//! in the residual for the engine to apply after the scan. Because `a AND b` keeps a row
//! only when both are true, pushing a subset of the conjuncts never drops a row the full
//! filter keeps, and applying the residual afterwards gives the exact result.
//!
//! The IR has SQL's semantics, and every pushed conjunct renders them exactly (the
//! pushdown-equivalence test checks this against a real server). Some constructs stay
//! residual although SQL could express them, because engines that hand their filters over
//! as IR do not agree with SQL on them; leaving them to the engine keeps the engine's
//! meaning. What stays residual (and why):
//! - comparisons, BETWEEN bounds and IN items that are NULL literals: SQL makes them
//!   UNKNOWN, while engines differ (Daft's `is_in` matches a NULL item against NULL
//!   values); `<=> NULL` is unambiguous and is pushed;
//! - `IN`/`NOT IN` with an empty list (not valid SQL) or a NULL item (`NOT IN` with a NULL
//!   is never true in SQL, a common source of silently missing rows);
//! - NaN or infinite float literals (no SQL literal exists);
//! - division (integer division, division by zero and result types differ between engines);
//! - a bare column or literal in predicate position (its type is unknown here);
//! - AND/OR with no arguments.
//!
//! ```
//! use doris_sql::{Expr, Literal, translate_filter};
//! let filter = Expr::col("a").gt(Expr::lit(Literal::Int64(1)))
//!     .and(Expr::col("b").in_list(vec![Literal::Int64(1), Literal::Null]));
//! let t = translate_filter(&filter);
//! assert_eq!(t.pushed_sql().as_deref(), Some("(`a` > 1)"));
//! assert_eq!(t.residual, Some(Expr::col("b").in_list(vec![Literal::Int64(1), Literal::Null])));
//! ```

use crate::expr::{ArithmeticOp, CompareOp, Expr};
use crate::ident::{push_quoted_ident, validate_ident};
use crate::literal::{Literal, push_string_value};

/// The outcome of translating a filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Translation {
    /// The conjuncts that were pushed, each rendered as a parenthesised SQL predicate.
    pub pushed: Vec<String>,
    /// The conjuncts that were not pushed, joined by AND (`None` when everything was pushed).
    pub residual: Option<Expr>,
}

impl Translation {
    /// The pushed conjuncts joined by ` AND `, or `None` if nothing was pushed.
    pub fn pushed_sql(&self) -> Option<String> {
        (!self.pushed.is_empty()).then(|| self.pushed.join(" AND "))
    }

    /// True when the whole filter was pushed (the engine need not re-apply anything).
    pub fn is_complete(&self) -> bool {
        self.residual.is_none()
    }
}

/// Splits `filter` into top-level conjuncts and pushes each one that translates exactly.
///
/// ```
/// use doris_sql::{Expr, Literal, translate_filter};
/// let t = translate_filter(&Expr::col("a").lt(Expr::lit(Literal::Int64(3))).and(Expr::col("b")));
/// assert_eq!(t.pushed, vec!["(`a` < 3)"]);
/// assert_eq!(t.residual, Some(Expr::col("b"))); // a bare column: its type is unknown here
/// ```
pub fn translate_filter(filter: &Expr) -> Translation {
    let mut conjuncts = Vec::new();
    flatten_and(filter, &mut conjuncts);
    let mut pushed = Vec::new();
    let mut residual = Vec::new();
    for conjunct in conjuncts {
        match render_predicate(conjunct) {
            Some(sql) => pushed.push(sql),
            None => residual.push(conjunct.clone()),
        }
    }
    let residual = match residual.len() {
        0 => None,
        1 => residual.pop(),
        _ => Some(Expr::And { args: residual }),
    };
    Translation { pushed, residual }
}

/// Renders a whole predicate, or `None` if any part of it cannot be pushed exactly.
///
/// ```
/// use doris_sql::{Expr, render_predicate};
/// assert_eq!(render_predicate(&Expr::col("a").is_null()).as_deref(), Some("(`a` IS NULL)"));
/// assert_eq!(render_predicate(&Expr::col("flag")), None);
/// ```
pub fn render_predicate(expr: &Expr) -> Option<String> {
    let mut out = String::new();
    write_predicate(expr, &mut out).then_some(out)
}

fn flatten_and<'a>(expr: &'a Expr, out: &mut Vec<&'a Expr>) {
    match expr {
        Expr::And { args } if !args.is_empty() => {
            for a in args {
                flatten_and(a, out);
            }
        }
        other => out.push(other),
    }
}

/// Writes a boolean-valued expression; returns false if it cannot be pushed.
fn write_predicate(expr: &Expr, out: &mut String) -> bool {
    match expr {
        Expr::Literal {
            value: Literal::Bool(b),
        } => {
            out.push_str(if *b { "TRUE" } else { "FALSE" });
            true
        }
        Expr::Column { .. } | Expr::Literal { .. } | Expr::Arithmetic { .. } => false,
        Expr::Compare { op, left, right } => {
            let null_ok = *op == CompareOp::NullSafeEq;
            out.push('(');
            let ok = write_value(left, out, null_ok) && {
                out.push(' ');
                out.push_str(op.sql());
                out.push(' ');
                write_value(right, out, null_ok)
            };
            out.push(')');
            ok
        }
        Expr::And { args } => write_junction(args, " AND ", out),
        Expr::Or { args } => write_junction(args, " OR ", out),
        Expr::Not { arg } => {
            out.push_str("(NOT ");
            let ok = write_predicate(arg, out);
            out.push(')');
            ok
        }
        Expr::IsNull { arg, negated } => {
            out.push('(');
            let ok = write_value(arg, out, false);
            out.push_str(if *negated {
                " IS NOT NULL)"
            } else {
                " IS NULL)"
            });
            ok
        }
        Expr::InList { arg, list, negated } => {
            if list.is_empty() || list.iter().any(Literal::is_null) {
                return false;
            }
            out.push('(');
            let mut ok = write_value(arg, out, false);
            out.push_str(if *negated { " NOT IN (" } else { " IN (" });
            for (i, item) in list.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                ok &= item.write_sql(out).is_ok();
            }
            out.push_str("))");
            ok
        }
        Expr::Between {
            arg,
            low,
            high,
            negated,
        } => {
            out.push('(');
            let ok = write_value(arg, out, false)
                && {
                    out.push_str(if *negated {
                        " NOT BETWEEN "
                    } else {
                        " BETWEEN "
                    });
                    write_value(low, out, false)
                }
                && {
                    out.push_str(" AND ");
                    write_value(high, out, false)
                };
            out.push(')');
            ok
        }
        Expr::Like {
            arg,
            pattern,
            negated,
        } => write_like(arg, *negated, pattern, out),
        Expr::StartsWith { arg, prefix } => {
            write_like(arg, false, &(escape_like(prefix) + "%"), out)
        }
        Expr::EndsWith { arg, suffix } => {
            write_like(arg, false, &("%".to_owned() + &escape_like(suffix)), out)
        }
        Expr::Contains { arg, substring } => write_like(
            arg,
            false,
            &("%".to_owned() + &escape_like(substring) + "%"),
            out,
        ),
    }
}

fn write_junction(args: &[Expr], separator: &str, out: &mut String) -> bool {
    if args.is_empty() {
        return false;
    }
    out.push('(');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(separator);
        }
        if !write_predicate(a, out) {
            return false;
        }
    }
    out.push(')');
    true
}

fn write_like(arg: &Expr, negated: bool, pattern: &str, out: &mut String) -> bool {
    out.push('(');
    let ok = write_value(arg, out, false);
    out.push_str(if negated { " NOT LIKE " } else { " LIKE " });
    push_string_value(out, pattern);
    out.push(')');
    ok
}

/// Escapes `%`, `_` and `\` so that `text` matches itself literally inside a LIKE pattern.
///
/// ```
/// assert_eq!(doris_sql::escape_like("50%_a\\b"), "50\\%\\_a\\\\b");
/// ```
pub fn escape_like(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        if matches!(ch, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// Writes a value expression; returns false if it cannot be pushed.
fn write_value(expr: &Expr, out: &mut String, null_ok: bool) -> bool {
    match expr {
        Expr::Column { name } => {
            if validate_ident("column", name).is_err() {
                return false;
            }
            push_quoted_ident(out, name);
            true
        }
        Expr::Literal { value } => {
            if value.is_null() && !null_ok {
                return false;
            }
            value.write_sql(out).is_ok()
        }
        Expr::Arithmetic { op, left, right } => {
            if *op == ArithmeticOp::Divide {
                return false;
            }
            out.push('(');
            let ok = write_value(left, out, false) && {
                out.push(' ');
                out.push_str(op.sql());
                out.push(' ');
                write_value(right, out, false)
            };
            out.push(')');
            ok
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::literal::Literal as L;

    fn lit(v: i64) -> Expr {
        Expr::lit(L::Int64(v))
    }

    fn pushed(e: &Expr) -> String {
        render_predicate(e).unwrap_or_else(|| panic!("not pushed: {e:?}"))
    }

    #[test]
    fn golden_sql_for_every_node() {
        let a = || Expr::col("a");
        let cases: Vec<(Expr, &str)> = vec![
            (a().eq(lit(1)), "(`a` = 1)"),
            (a().not_eq(lit(1)), "(`a` != 1)"),
            (a().lt(lit(1)), "(`a` < 1)"),
            (a().lt_eq(lit(1)), "(`a` <= 1)"),
            (a().gt(lit(1)), "(`a` > 1)"),
            (a().gt_eq(lit(1)), "(`a` >= 1)"),
            (a().null_safe_eq(lit(1)), "(`a` <=> 1)"),
            (a().null_safe_eq(Expr::lit(L::Null)), "(`a` <=> NULL)"),
            (a().eq(Expr::col("b")), "(`a` = `b`)"),
            (lit(1).lt(a()), "(1 < `a`)"),
            (
                Expr::And {
                    args: vec![a().is_null(), a().is_not_null(), Expr::lit(L::Bool(true))],
                },
                "((`a` IS NULL) AND (`a` IS NOT NULL) AND TRUE)",
            ),
            (
                a().eq(lit(1))
                    .or(a().eq(lit(2)))
                    .or(Expr::lit(L::Bool(false))),
                "((`a` = 1) OR (`a` = 2) OR FALSE)",
            ),
            (a().eq(lit(1)).not(), "(NOT (`a` = 1))"),
            (
                a().in_list(vec![L::Int64(1), L::String("x".into())]),
                "(`a` IN (1, 'x'))",
            ),
            (a().not_in_list(vec![L::Int64(1)]), "(`a` NOT IN (1))"),
            (a().between(lit(1), lit(5)), "(`a` BETWEEN 1 AND 5)"),
            (
                Expr::Between {
                    arg: Box::new(a()),
                    low: Box::new(lit(1)),
                    high: Box::new(Expr::col("b")),
                    negated: true,
                },
                "(`a` NOT BETWEEN 1 AND `b`)",
            ),
            // A pattern holding a backslash: the same in every SQL mode.
            (a().like("x%\\_"), "(`a` LIKE from_base64('eCVcXw=='))"),
            (
                Expr::Like {
                    arg: Box::new(a()),
                    pattern: "%'%".into(),
                    negated: true,
                },
                "(`a` NOT LIKE '%''%')",
            ),
            (a().starts_with("5%_"), "(`a` LIKE from_base64('NVwlXF8l'))"),
            (a().ends_with("\\"), "(`a` LIKE from_base64('JVxc'))"),
            (a().contains("it's"), "(`a` LIKE '%it''s%')"),
            (
                a().arithmetic(ArithmeticOp::Add, lit(1))
                    .arithmetic(ArithmeticOp::Multiply, Expr::col("b"))
                    .arithmetic(ArithmeticOp::Subtract, lit(-2))
                    .gt(lit(0)),
                "((((`a` + 1) * `b`) - -2) > 0)",
            ),
            (Expr::col("we`ird").is_null(), "(`we``ird` IS NULL)"),
            (
                a().eq(Expr::lit(L::Date("2024-01-02".parse().unwrap()))),
                "(`a` = CAST('2024-01-02' AS DATE))",
            ),
        ];
        for (expr, sql) in cases {
            assert_eq!(pushed(&expr), sql, "{expr:?}");
        }
    }

    #[test]
    fn unpushable_nodes_stay_residual() {
        let a = || Expr::col("a");
        let cases = vec![
            a(),
            Expr::lit(L::Int64(1)),
            Expr::lit(L::Null),
            a().eq(Expr::lit(L::Null)),
            Expr::lit(L::Null).lt(a()),
            a().in_list(vec![]),
            a().in_list(vec![L::Int64(1), L::Null]),
            a().not_in_list(vec![L::Null]),
            a().between(Expr::lit(L::Null), lit(1)),
            a().eq(Expr::lit(L::Float64(f64::NAN))),
            a().in_list(vec![L::Float32(f32::INFINITY)]),
            a().arithmetic(ArithmeticOp::Divide, lit(2)).gt(lit(1)),
            Expr::And { args: vec![] },
            Expr::Or { args: vec![] },
            a().eq(lit(1)).or(a().eq(Expr::lit(L::Null))),
            a().eq(Expr::lit(L::Null)).not(),
            Expr::col("").is_null(),
            a().is_null().is_null(),
            a().eq(a().is_null()),
        ];
        for expr in cases {
            assert_eq!(render_predicate(&expr), None, "{expr:?}");
        }
    }

    #[test]
    fn splits_conjuncts_and_keeps_the_rest() {
        let good1 = Expr::col("a").gt(lit(1));
        let bad = Expr::col("b").eq(Expr::lit(L::Null));
        let good2 = Expr::col("c").is_null();
        let bad_or = good1.clone().or(bad.clone());
        let filter = Expr::And {
            args: vec![
                good1.clone(),
                Expr::And {
                    args: vec![bad.clone(), good2.clone()],
                },
                bad_or.clone(),
            ],
        };
        let t = translate_filter(&filter);
        assert_eq!(t.pushed, vec!["(`a` > 1)", "(`c` IS NULL)"]);
        assert_eq!(t.pushed_sql().unwrap(), "(`a` > 1) AND (`c` IS NULL)");
        assert_eq!(
            t.residual,
            Some(Expr::And {
                args: vec![bad.clone(), bad_or]
            })
        );
        assert!(!t.is_complete());

        let only_bad = translate_filter(&bad);
        assert!(only_bad.pushed.is_empty());
        assert_eq!(only_bad.pushed_sql(), None);
        assert_eq!(only_bad.residual, Some(bad));

        let all_good = translate_filter(&good1.and(good2));
        assert!(all_good.is_complete());
        assert_eq!(all_good.pushed.len(), 2);
    }

    #[test]
    fn json_form_round_trips_and_reports_no_values() {
        let filter = Expr::col("a")
            .in_list(vec![L::String("secret-value".into())])
            .and(Expr::col("b").between(lit(1), lit(2)));
        let json = serde_json::to_string(&filter).unwrap();
        assert_eq!(Expr::from_json(&json).unwrap(), filter);
        let err =
            Expr::from_json(r#"{"kind":"compare","op":"like","left":"secret-value"}"#).unwrap_err();
        assert!(!err.to_string().contains("secret"), "{err}");
        assert_eq!(filter.column_names(), vec!["a", "b"]);
    }
}
