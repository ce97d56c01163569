//! Doris's `if(cond, then, else)`: `then` where `cond` is true, `else` where it is false
//! or NULL (as MySQL), both branches in their common type (Doris's documentation of
//! conditional functions). DataFusion has no `if`; `CASE`, `coalesce`, `nullif`, `ifnull`
//! and `nvl` are DataFusion's own, listed in `SAME_AS_DORIS`.

use arrow::array::{Array, AsArray};
use arrow::compute::kernels::zip::zip;
use arrow::compute::prep_null_mask_filter;
use arrow::datatypes::DataType;
use datafusion::common::{DataFusionError, Result, plan_err};
use datafusion::logical_expr::type_coercion::binary::type_union_resolution;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

/// `if`, taking exactly three arguments.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct DorisIf {
    signature: Signature,
}

impl DorisIf {
    /// The name Doris calls it by.
    pub const NAME: &'static str = "if";
    /// The arguments it takes.
    pub const ARITY: usize = 3;

    pub fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for DorisIf {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    /// The condition as BOOLEAN, both branches in their common type.
    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let [_, then, otherwise] = arg_types else {
            return plan_err!(
                "Can not found function 'if' which has {} arity.",
                arg_types.len()
            );
        };
        let Some(common) = type_union_resolution(&[then.clone(), otherwise.clone()]) else {
            return plan_err!("if: the branches {then} and {otherwise} have no common type");
        };
        Ok(vec![DataType::Boolean, common.clone(), common])
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        arg_types
            .get(1)
            .cloned()
            .ok_or_else(|| DataFusionError::Plan("if takes three arguments".into()))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let [cond, then, otherwise] = arrays.as_slice() else {
            return Err(DataFusionError::Execution(
                "if takes three arguments".into(),
            ));
        };
        let cond = cond.as_boolean();
        // A NULL condition takes the else branch.
        let mask = if cond.null_count() > 0 {
            prep_null_mask_filter(cond)
        } else {
            cond.clone()
        };
        let out = zip(&mask, then, otherwise)?;
        debug_assert_eq!(out.len(), rows);
        Ok(ColumnarValue::Array(out))
    }
}
