//! The SQL forms Doris takes that DataFusion does not read as Doris does, rewritten before
//! planning: `INTERVAL n QUARTER`, `EXTRACT(field FROM x)` and the unit keyword of
//! `TIMESTAMPDIFF`/`TIMESTAMPADD`.

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

/// Rewrites `TIMESTAMPDIFF(unit, a, b)` as `<unit>s_diff(b, a)` and `TIMESTAMPADD(unit, n,
/// x)` as `<unit>s_add(x, n)`, the functions Doris computes them with, for a unit from
/// SECOND to YEAR (the parser reads the unit keyword as a column); a call with another
/// unit stays, and is refused by name. Whether any changed.
pub fn rewrite_timestamp_units(statements: &mut [sqlparser::ast::Statement]) -> bool {
    use sqlparser::ast::{
        Expr, FunctionArg, FunctionArgExpr, FunctionArguments, visit_expressions_mut,
    };
    let mut changed = false;
    for statement in statements {
        let _ = visit_expressions_mut(statement, |expr| {
            let Expr::Function(f) = expr else {
                return std::ops::ControlFlow::<()>::Continue(());
            };
            let suffix = match super::super::function_name(f).as_str() {
                "timestampdiff" => "diff",
                "timestampadd" => "add",
                _ => return std::ops::ControlFlow::Continue(()),
            };
            let FunctionArguments::List(list) = &f.args else {
                return std::ops::ControlFlow::Continue(());
            };
            let args: Vec<&Expr> = list
                .args
                .iter()
                .filter_map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                    _ => None,
                })
                .collect();
            let [Expr::Identifier(unit), first, second] = args.as_slice() else {
                return std::ops::ControlFlow::Continue(());
            };
            let base = match unit.value.to_ascii_lowercase().as_str() {
                "second" => "seconds",
                "minute" => "minutes",
                "hour" => "hours",
                "day" => "days",
                "week" => "weeks",
                "month" => "months",
                "year" => "years",
                _ => return std::ops::ControlFlow::Continue(()),
            };
            // diff(a, b) is b - a; add(n, x) is x + n: both take the last argument first.
            let (first, second) = ((*second).clone(), (*first).clone());
            let template = sqlparser::parser::Parser::new(&sqlparser::dialect::MySqlDialect {})
                .try_with_sql(&format!("{base}_{suffix}(NULL, NULL)"))
                .and_then(|mut p| p.parse_expr());
            if let Ok(mut call) = template
                && let Expr::Function(g) = &mut call
                && let FunctionArguments::List(list) = &mut g.args
                && let [
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(a)),
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(b)),
                ] = list.args.as_mut_slice()
            {
                *a = first;
                *b = second;
                *expr = call;
                changed = true;
            }
            std::ops::ControlFlow::Continue(())
        });
    }
    changed
}

/// Rewrites `CAST('text' AS DATETIME[(p)])` whose text carries more fraction digits than
/// `p` with the text rounded to `p` digits, half up, as Doris casts it (`'12:30:45.956'` as
/// a DATETIME is `12:30:46`); Arrow's cast would cut the digits. Whether any changed.
pub fn rewrite_datetime_literals(statements: &mut [sqlparser::ast::Statement]) -> bool {
    use sqlparser::ast::{DataType, Expr, Value, visit_expressions_mut};
    let mut changed = false;
    for statement in statements {
        let _ = visit_expressions_mut(statement, |expr| {
            if let Expr::Cast {
                expr: inner,
                data_type: DataType::Datetime(precision),
                ..
            } = expr
                && let Expr::Value(v) = inner.as_mut()
                && let Value::SingleQuotedString(text) = &mut v.value
                && let Some(rounded) = rounded(text, precision.unwrap_or(0))
            {
                *text = rounded;
                changed = true;
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
    }
    changed
}

/// `text` (a DATETIME) rounded half up to `digits` fraction digits, when it has more.
fn rounded(text: &str, digits: u64) -> Option<String> {
    let fraction = text.trim().split_once('.').map_or(0, |(_, f)| f.len());
    let digits = u32::try_from(digits.min(6)).ok()?;
    if fraction <= digits as usize {
        return None;
    }
    let (at, _) = super::cells::parse_text(text)?;
    let step = 10i64.pow(6 - digits);
    let micros = i64::from(chrono::Timelike::nanosecond(&at) / 1_000);
    let up = (micros + step / 2) / step * step - micros;
    let at = at.checked_add_signed(chrono::TimeDelta::microseconds(up))?;
    Some(at.format("%Y-%m-%d %H:%M:%S%.6f").to_string())
}

/// Appends the session's time zone (`time_zone`) as a last argument to the calls whose
/// answer depends on it (`from_unixtime`, `unix_timestamp`, `second_timestamp`, `now`, …), with `from_unixtime`'s
/// default format made explicit, so that the functions see the zone the session set.
/// Runs after the calls were checked against Doris's argument counts. Whether any
/// changed.
pub fn rewrite_session_time_zone(statements: &mut [sqlparser::ast::Statement], zone: &str) -> bool {
    use sqlparser::ast::{
        Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Value, visit_expressions_mut,
    };
    let mut changed = false;
    let text = |s: &str| {
        FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::value(
            Value::SingleQuotedString(s.to_owned()),
        )))
    };
    for statement in statements {
        let _ = visit_expressions_mut(statement, |expr| {
            if let Expr::Function(f) = expr {
                let name = super::super::function_name(f);
                let now = matches!(
                    name.as_str(),
                    "now"
                        | "current_timestamp"
                        | "localtime"
                        | "localtimestamp"
                        | "utc_timestamp"
                        | "curdate"
                        | "current_date"
                );
                if now {
                    // `CURRENT_TIMESTAMP` without parentheses has no argument list.
                    if matches!(f.args, FunctionArguments::None) {
                        f.args = FunctionArguments::List(sqlparser::ast::FunctionArgumentList {
                            duplicate_treatment: None,
                            args: Vec::new(),
                            clauses: Vec::new(),
                        });
                    }
                    if let FunctionArguments::List(list) = &mut f.args {
                        list.args.push(text(if name == "utc_timestamp" {
                            "+00:00"
                        } else {
                            zone
                        }));
                        changed = true;
                    }
                    return std::ops::ControlFlow::<()>::Continue(());
                }
                let FunctionArguments::List(list) = &mut f.args else {
                    return std::ops::ControlFlow::<()>::Continue(());
                };
                match name.as_str() {
                    "from_unixtime" if list.args.len() == 1 => {
                        list.args.push(text("%Y-%m-%d %H:%i:%s"));
                        list.args.push(text(zone));
                        changed = true;
                    }
                    "from_unixtime" if list.args.len() == 2 => {
                        list.args.push(text(zone));
                        changed = true;
                    }
                    "unix_timestamp"
                    | "second_timestamp"
                    | "millisecond_timestamp"
                    | "microsecond_timestamp"
                        if list.args.len() == 1 =>
                    {
                        list.args.push(text(zone));
                        changed = true;
                    }
                    "unix_timestamp" if list.args.len() == 2 => {
                        list.args.push(text(zone));
                        changed = true;
                    }
                    _ => {}
                }
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
    }
    changed
}

/// Rewrites DATETIME text that names its time zone (`'2023-12-31 23:59:59+08:00'`,
/// `'… UTC'`) as the local time it is in the session's time zone `zone`, where Doris reads
/// the text as a DATETIME: a `CAST` to DATE or DATETIME, a `TIMESTAMP '…'` literal, a
/// date function's argument, and a comparison (`=`, `<`, …, `BETWEEN`, `IN`) with it.
/// The fraction keeps its digits, except in `unix_timestamp(text)`, which Doris reads
/// through its text signature as a DECIMAL with six. Text whose zone Doris does not know
/// stays as it is (and reads as NULL). Whether any changed.
///
/// Not covered: such text in a column (a function reads it as NULL), or compared with a
/// string column (Doris compares the text as written).
pub fn rewrite_zoned_literals(statements: &mut [sqlparser::ast::Statement], zone: &str) -> bool {
    use sqlparser::ast::{
        BinaryOperator, DataType, Expr, FunctionArg, FunctionArgExpr, FunctionArguments,
        visit_expressions_mut,
    };
    let mut changed = false;
    for statement in statements {
        let _ = visit_expressions_mut(statement, |expr| {
            let mut convert = |e: &mut Expr, digits: Option<usize>| {
                changed |= convert_zoned(e, zone, digits);
            };
            match expr {
                Expr::Cast {
                    expr: inner,
                    data_type: DataType::Datetime(_) | DataType::Timestamp(..) | DataType::Date,
                    ..
                } => convert(inner, None),
                Expr::TypedString(typed)
                    if matches!(
                        typed.data_type,
                        DataType::Datetime(_) | DataType::Timestamp(..) | DataType::Date
                    ) =>
                {
                    if let sqlparser::ast::Value::SingleQuotedString(text) = &mut typed.value.value
                        && let Some(local) = zoned_as_local(text, zone, None)
                    {
                        *text = local;
                        changed = true;
                    }
                }
                Expr::BinaryOp {
                    left,
                    op:
                        BinaryOperator::Eq
                        | BinaryOperator::NotEq
                        | BinaryOperator::Lt
                        | BinaryOperator::LtEq
                        | BinaryOperator::Gt
                        | BinaryOperator::GtEq
                        | BinaryOperator::Spaceship,
                    right,
                } => {
                    convert(left, None);
                    convert(right, None);
                }
                Expr::Between { low, high, .. } => {
                    convert(low, None);
                    convert(high, None);
                }
                Expr::InList { list, .. } => {
                    for item in list {
                        convert(item, None);
                    }
                }
                Expr::Function(f) => {
                    let name = super::super::function_name(f);
                    // `str_to_date` reads its text with its format, not as a DATETIME.
                    if name == "str_to_date" || !super::is_date_function(&name) {
                        return std::ops::ControlFlow::<()>::Continue(());
                    }
                    let FunctionArguments::List(list) = &mut f.args else {
                        return std::ops::ControlFlow::Continue(());
                    };
                    let count = list.args.len();
                    if name == "unix_timestamp" && count != 1 {
                        return std::ops::ControlFlow::Continue(());
                    }
                    let digits = (name == "unix_timestamp").then_some(6);
                    for arg in &mut list.args {
                        if let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = arg {
                            convert(e, digits);
                        }
                    }
                }
                _ => {}
            }
            std::ops::ControlFlow::Continue(())
        });
    }
    changed
}

/// Replaces `expr`, when it is zoned DATETIME text, with its local time in `zone`;
/// whether it did.
fn convert_zoned(expr: &mut sqlparser::ast::Expr, zone: &str, digits: Option<usize>) -> bool {
    use sqlparser::ast::{Expr, Value};
    if let Expr::Value(v) = expr
        && let Value::SingleQuotedString(text) = &mut v.value
        && let Some(local) = zoned_as_local(text, zone, digits)
    {
        *text = local;
        return true;
    }
    false
}

/// `text`, zoned DATETIME text, as the local time in `zone`, with `digits` fraction digits
/// (default: as many as the text has).
fn zoned_as_local(text: &str, zone: &str, digits: Option<usize>) -> Option<String> {
    let (at, shape, written_zone) = super::cells::parse_zoned(text)?;
    let micros = super::calendar::epoch_micros(at, &written_zone)?;
    let local = super::calendar::local_time_micros(micros, zone)?;
    let digits = digits.unwrap_or(match shape {
        super::cells::Shape::DateTime(arrow::datatypes::TimeUnit::Second) => 0,
        _ => text
            .split_once('.')
            .map_or(0, |(_, f)| f.bytes().take_while(u8::is_ascii_digit).count())
            .min(6),
    });
    let full = local.format("%Y-%m-%d %H:%M:%S%.6f").to_string();
    // `%.6f` writes a dot and six digits: keep the dot and `digits` of them, or neither.
    let keep = full.len() - 6 + digits - usize::from(digits == 0);
    Some(full[..keep].to_owned())
}
