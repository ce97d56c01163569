//! The functions a statement may call, as Doris knows them.
//!
//! DataFusion runs the emulator's queries, and its function library is not Doris's: some
//! names are missing (`from_base64`, `locate`, `elt`), some answer differently (`concat`
//! skips NULLs where Doris returns NULL, `length` counts characters where Doris counts
//! bytes, `left(s, -5)` cuts from the end where Doris returns ''). So every query is
//! checked before DataFusion plans it: each function it calls must be one the emulator
//! runs as Doris does, either one of its own (`strings`, `math`, `dates`, `conditional`,
//! registered over DataFusion's of the same name) or a DataFusion built-in listed in [`SAME_AS_DORIS`]. Anything else is
//! refused by name in Doris's error shape, never answered with DataFusion's meaning.

use std::sync::{Arc, LazyLock};

use datafusion::logical_expr::ScalarUDF;
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult};
use sqlparser::ast::{Expr, FunctionArguments, Statement, visit_expressions};

mod arithmetic;
mod conditional;
mod dates;
mod math;
mod row_fn;
mod strings;

pub use arithmetic::{DorisArithmetic, rewrite_mod_calls};
use conditional::DorisIf;
use dates::DateFn;
pub use dates::{
    rewrite_datetime_literals, rewrite_extracts, rewrite_quarters, rewrite_session_time_zone,
    rewrite_timestamp_units, rewrite_zoned_literals,
};
use row_fn::RowFn;

/// DataFusion built-ins that answer as Doris's functions of the same name do, for the
/// arguments Doris accepts: aggregates, window functions, and scalar functions checked
/// against Doris's documentation and regression suites.
pub const SAME_AS_DORIS: &[&str] = &[
    // aggregates
    "count",
    "sum",
    "min",
    "max",
    "avg",
    "any_value",
    "stddev",
    "stddev_samp",
    "stddev_pop",
    "variance",
    "var_samp",
    "var_pop",
    "bit_and",
    "bit_or",
    "bit_xor",
    // window functions
    "row_number",
    "rank",
    "dense_rank",
    "lag",
    "lead",
    "first_value",
    "last_value",
    "ntile",
    // scalar functions
    "abs",
    "ceil",
    "floor",
    "round",
    "exp",
    "pow",
    "power",
    "pi",
    "greatest",
    "least",
    "coalesce",
    "nullif",
    "nvl",
    "ifnull",
    "ltrim",
    "rtrim",
    "trim",
    "reverse",
    "starts_with",
    "ends_with",
    "bit_length",
    "concat_ws",
    "find_in_set",
    "md5",
];

static DORIS_FUNCTIONS: LazyLock<Vec<Arc<RowFn>>> = LazyLock::new(|| {
    strings::all()
        .into_iter()
        .chain(math::all())
        .map(Arc::new)
        .collect()
});

static DATE_FUNCTIONS: LazyLock<Vec<Arc<DateFn>>> =
    LazyLock::new(|| dates::all().into_iter().map(Arc::new).collect());

/// The emulator's own functions, to register on each query's context (they replace
/// DataFusion's functions of the same names).
pub fn udfs() -> Vec<ScalarUDF> {
    DORIS_FUNCTIONS
        .iter()
        .map(|f| ScalarUDF::new_from_shared_impl(Arc::clone(f) as _))
        .chain(
            DATE_FUNCTIONS
                .iter()
                .map(|f| ScalarUDF::new_from_shared_impl(Arc::clone(f) as _)),
        )
        .chain([ScalarUDF::new_from_impl(DorisIf::new())])
        .collect()
}

/// Plans `SUBSTRING(s FROM p [FOR n])` and `SUBSTR(s, p[, n])`, which DataFusion's own
/// planner turns into its `substr` without looking at the registered functions, with the
/// emulator's Doris `substr` (to go before DataFusion's planners).
#[derive(Debug)]
pub struct DorisSubstring;

impl ExprPlanner for DorisSubstring {
    fn plan_substring(
        &self,
        args: Vec<datafusion::logical_expr::Expr>,
    ) -> datafusion::common::Result<PlannerResult<Vec<datafusion::logical_expr::Expr>>> {
        let Some(substr) = DORIS_FUNCTIONS
            .iter()
            .find(|f| f.names().any(|n| n == "substr"))
        else {
            return Ok(PlannerResult::Original(args));
        };
        let udf = Arc::new(ScalarUDF::new_from_shared_impl(Arc::clone(substr) as _));
        Ok(PlannerResult::Planned(
            datafusion::logical_expr::Expr::ScalarFunction(ScalarFunction::new_udf(udf, args)),
        ))
    }
}

/// A call's function name in lower case (the last part of a qualified name; empty when
/// it is not an identifier).
pub(crate) fn function_name(f: &sqlparser::ast::Function) -> String {
    f.name
        .0
        .last()
        .and_then(|p| p.as_ident())
        .map(|i| i.value.to_ascii_lowercase())
        .unwrap_or_default()
}

/// Why a call cannot run: Doris's error text (after `errCode = 2, detailMessage = `).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

/// Checks every function call of `statements` (see the module documentation).
pub fn check_calls(statements: &[Statement]) -> Result<(), Refused> {
    let mut refused = None;
    for statement in statements {
        let _ = visit_expressions(statement, |expr| {
            // MySQL's `_utf8mb4'…'`: Doris's grammar has no charset introducer (its
            // string constant is `BINARY? STRING_LITERAL`), so Doris refuses the text.
            if let Expr::Prefixed { prefix, value } = expr
                && matches!(value.as_ref(), Expr::Value(_))
            {
                refused = Some(Refused(format!(
                    "Syntax error: a charset introducer ({}) before a string; Doris takes none",
                    prefix.value
                )));
                return std::ops::ControlFlow::Break(());
            }
            let call = match expr {
                Expr::Function(f) => {
                    let name = function_name(f);
                    let count = match &f.args {
                        FunctionArguments::List(list) => list.args.len(),
                        FunctionArguments::None | FunctionArguments::Subquery(_) => 0,
                    };
                    Some((name, count))
                }
                // What `rewrite_extracts` left: a field no Doris function computes here
                // (DataFusion's `date_part` would answer it its own way).
                Expr::Extract { .. } => Some(("extract".to_owned(), 2)),
                Expr::Substring {
                    substring_from,
                    substring_for,
                    ..
                } => Some((
                    "substring".to_owned(),
                    1 + usize::from(substring_from.is_some())
                        + usize::from(substring_for.is_some()),
                )),
                _ => None,
            };
            if let Some((name, count)) = call
                && let Err(why) = check_call(&name, count)
            {
                refused = Some(why);
                return std::ops::ControlFlow::Break(());
            }
            std::ops::ControlFlow::Continue(())
        });
        if refused.is_some() {
            break;
        }
    }
    refused.map_or(Ok(()), Err)
}

fn check_call(name: &str, count: usize) -> Result<(), Refused> {
    if let Some(f) = DORIS_FUNCTIONS
        .iter()
        .find(|f| f.names().any(|n| n == name))
    {
        return if f.takes(count) {
            Ok(())
        } else {
            Err(Refused(format!(
                "Can not found function '{name}' which has {count} arity."
            )))
        };
    }
    if let Some(f) = DATE_FUNCTIONS.iter().find(|f| f.names().any(|n| n == name)) {
        return if f.takes(count) {
            Ok(())
        } else {
            Err(Refused(format!(
                "Can not found function '{name}' which has {count} arity."
            )))
        };
    }
    if name == DorisIf::NAME {
        return if count == DorisIf::ARITY {
            Ok(())
        } else {
            Err(Refused(format!(
                "Can not found function '{name}' which has {count} arity."
            )))
        };
    }
    if SAME_AS_DORIS.contains(&name) {
        return Ok(());
    }
    Err(Refused(format!(
        "the Doris emulator does not run the function '{name}'"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(sql: &str) -> Result<(), Refused> {
        let statements =
            sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::MySqlDialect {}, sql)
                .unwrap();
        check_calls(&statements)
    }

    #[test]
    fn doris_functions_and_listed_builtins_pass() {
        check("SELECT from_base64(k), count(*), SUBSTRING(k FROM 2 FOR 1) FROM t").unwrap();
        check("SELECT * FROM t WHERE locate('a', k, 2) > 0 AND abs(v) < 3").unwrap();
    }

    #[test]
    fn other_functions_are_refused_by_name() {
        let Err(Refused(why)) = check("SELECT * FROM t WHERE to_hex(v) = 'a'") else {
            panic!("accepted");
        };
        assert!(why.contains("'to_hex'"), "{why}");
        let Err(Refused(why)) = check("SELECT elt(1) FROM t") else {
            panic!("accepted");
        };
        assert_eq!(why, "Can not found function 'elt' which has 1 arity.");
        let Err(Refused(why)) = check("SELECT if(k > 1, 2) FROM t") else {
            panic!("accepted");
        };
        assert_eq!(why, "Can not found function 'if' which has 2 arity.");
        check("SELECT if(k > 1, 'a', NULL) FROM t").unwrap();
        let Err(Refused(why)) = check("SELECT extract(epoch FROM d) FROM t") else {
            panic!("accepted");
        };
        assert!(why.contains("'extract'"), "{why}");
        check("SELECT week(d, 3), yearweek(d) FROM t").unwrap();
        let Err(Refused(why)) = check("SELECT week(d, 3, 1) FROM t") else {
            panic!("accepted");
        };
        assert_eq!(why, "Can not found function 'week' which has 3 arity.");
        let Err(Refused(why)) = check("SELECT datediff(d) FROM t") else {
            panic!("accepted");
        };
        assert_eq!(why, "Can not found function 'datediff' which has 1 arity.");
        check("SELECT date_add(d, INTERVAL 1 QUARTER), year(d) FROM t WHERE hours_diff(d, e) > 1")
            .unwrap();
    }

    #[test]
    fn charset_introducers_are_refused_as_doris_refuses_them() {
        let Err(Refused(why)) = check("SELECT * FROM t WHERE k = _utf8mb4'x'") else {
            panic!("accepted");
        };
        assert!(
            why.starts_with("Syntax error") && why.contains("_utf8mb4"),
            "{why}"
        );
        check("SELECT * FROM t WHERE k = 'x'").unwrap();
    }

    #[test]
    fn a_quarter_interval_becomes_three_months() {
        let mut statements = sqlparser::parser::Parser::parse_sql(
            &sqlparser::dialect::MySqlDialect {},
            "SELECT date_add(d, INTERVAL 2 QUARTER), date_sub(d, INTERVAL -1 QUARTER) FROM t",
        )
        .unwrap();
        assert!(rewrite_quarters(&mut statements));
        let sql = statements[0].to_string();
        assert!(sql.contains("INTERVAL 6 MONTH"), "{sql}");
        assert!(sql.contains("INTERVAL -3 MONTH"), "{sql}");
        assert!(
            !rewrite_quarters(&mut statements),
            "nothing left to rewrite"
        );
    }

    #[test]
    fn timestamp_units_become_the_functions_doris_computes_them_with() {
        let mut statements = sqlparser::parser::Parser::parse_sql(
            &sqlparser::dialect::MySqlDialect {},
            "SELECT TIMESTAMPDIFF(MONTH, a, b), timestampadd(minute, -2, d) FROM t \
             WHERE TIMESTAMPDIFF(QUARTER, a, b) > 1",
        )
        .unwrap();
        assert!(rewrite_timestamp_units(&mut statements));
        let sql = statements[0].to_string();
        assert!(sql.contains("months_diff(b, a)"), "{sql}");
        assert!(sql.contains("minutes_add(d, -2)"), "{sql}");
        // No quarters_diff: the call stays, and is refused by its own name.
        let Err(Refused(why)) = check_calls(&statements) else {
            panic!("accepted: {sql}");
        };
        assert!(why.contains("'timestampdiff'"), "{why}");
    }

    #[test]
    fn datetime_literals_round_to_their_precision() {
        let mut statements = sqlparser::parser::Parser::parse_sql(
            &sqlparser::dialect::MySqlDialect {},
            "SELECT CAST('2020-01-01 12:30:45.956' AS DATETIME), \
             CAST('2020-12-31 23:59:59.9996' AS DATETIME(3)), \
             CAST('2020-01-01 12:30:45.123' AS DATETIME(6))",
        )
        .unwrap();
        assert!(rewrite_datetime_literals(&mut statements));
        let sql = statements[0].to_string();
        assert!(sql.contains("'2020-01-01 12:30:46.000000'"), "{sql}");
        assert!(sql.contains("'2021-01-01 00:00:00.000000'"), "{sql}");
        assert!(sql.contains("'2020-01-01 12:30:45.123'"), "{sql}");
    }
}
