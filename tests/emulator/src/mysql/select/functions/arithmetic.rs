//! Doris's division and remainder, where DataFusion's differ: `a / b` of integers or
//! floats is a DOUBLE in Doris (`5 / 2` is 2.5; DataFusion divides integers as integers)
//! and a DECIMAL when either side is one (Nereids' `Divide.getDataType`); `a / 0`,
//! `a % 0` and `a DIV 0` are NULL (Doris's manual, "Arithmetic Operators"; DataFusion
//! fails the query); `a DIV b` divides whole numbers (DataFusion has no `DIV`).

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DFSchema, Result};
use datafusion::functions::core::expr_fn::nullif;
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{Expr, ExprSchemable, Operator, binary_expr, cast, lit};
use sqlparser::ast::BinaryOperator;

/// Plans `/`, `%` and `DIV` as Doris computes them (to go before DataFusion's planners).
#[derive(Debug)]
pub struct DorisArithmetic;

impl ExprPlanner for DorisArithmetic {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        let RawBinaryExpr { op, left, right } = expr;
        // The divisor, NULL where it is zero.
        let unless_zero = |divisor: Expr| nullif(divisor, lit(0i64));
        let planned = match op {
            BinaryOperator::Divide => {
                let decimal = |e: &Expr| {
                    matches!(
                        e.get_type(schema),
                        Ok(DataType::Decimal128(..) | DataType::Decimal256(..))
                    )
                };
                let (left, right) = if decimal(&left) || decimal(&right) {
                    (left, right)
                } else {
                    (
                        cast(left, DataType::Float64),
                        cast(right, DataType::Float64),
                    )
                };
                binary_expr(left, Operator::Divide, unless_zero(right))
            }
            BinaryOperator::Modulo => binary_expr(left, Operator::Modulo, unless_zero(right)),
            BinaryOperator::MyIntegerDivide => binary_expr(
                cast(left, DataType::Int64),
                Operator::Divide,
                unless_zero(cast(right, DataType::Int64)),
            ),
            op => return Ok(PlannerResult::Original(RawBinaryExpr { op, left, right })),
        };
        Ok(PlannerResult::Planned(planned))
    }
}

/// Rewrites `mod(a, b)` as `a % b` and `pmod(a, b)` as `(a % b + b) % b` (Doris's manual
/// gives both forms), which [`DorisArithmetic`] then plans: NULL for a zero divisor.
/// Calls with another argument count stay, and are refused by name. Whether any changed.
pub fn rewrite_mod_calls(statements: &mut [sqlparser::ast::Statement]) -> bool {
    use sqlparser::ast::{
        BinaryOperator, Expr, FunctionArg, FunctionArgExpr, FunctionArguments,
        visit_expressions_mut,
    };
    let remainder = |a: Expr, b: Expr| {
        Expr::Nested(Box::new(Expr::BinaryOp {
            left: Box::new(a),
            op: BinaryOperator::Modulo,
            right: Box::new(b),
        }))
    };
    let mut changed = false;
    for statement in statements {
        let _ = visit_expressions_mut(statement, |expr| {
            if let Expr::Function(f) = expr {
                let name = super::function_name(f);
                if (name == "mod" || name == "pmod")
                    && let FunctionArguments::List(list) = &f.args
                    && let [
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(a)),
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(b)),
                    ] = list.args.as_slice()
                {
                    let (a, b) = (
                        Expr::Nested(Box::new(a.clone())),
                        Expr::Nested(Box::new(b.clone())),
                    );
                    *expr = if name == "mod" {
                        remainder(a, b)
                    } else {
                        // Parenthesised: the statement is planned from its text again.
                        let shifted = Expr::Nested(Box::new(Expr::BinaryOp {
                            left: Box::new(remainder(a, b.clone())),
                            op: BinaryOperator::Plus,
                            right: Box::new(b.clone()),
                        }));
                        remainder(shifted, b)
                    };
                    changed = true;
                }
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
    }
    changed
}
