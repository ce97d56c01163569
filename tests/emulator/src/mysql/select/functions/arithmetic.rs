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
