//! The SQL forms Doris takes that DataFusion does not read as Doris does, rewritten before
//! planning: `INTERVAL n QUARTER` and `EXTRACT(field FROM x)`.

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
