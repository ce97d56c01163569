//! A scalar function evaluated row by row over plain values: the adapter that lets each
//! Doris function be written as a small Rust function of its arguments.
//!
//! The emulator favours exactness over speed here: the arguments are cast to the kinds the
//! function declares (text or integer), each row's values are handed to the function, and
//! the results are collected into one Arrow array.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanBuilder, Float64Builder, Int32Builder, StringBuilder,
};
use arrow::datatypes::{DataType, Float64Type, Int64Type};
use datafusion::common::{DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

/// The kind an argument is cast to before the function sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Text (`VARCHAR`/`STRING`; numbers and dates in their text form).
    Text,
    /// A 64-bit integer.
    Int,
    /// An integer when the argument is of an integer type, text otherwise.
    IntOrText,
    /// A `DOUBLE`.
    Float,
}

/// The type a function returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Out {
    /// `VARCHAR`.
    Text,
    /// `INT`.
    Int32,
    /// `BOOLEAN`.
    Bool,
    /// `DOUBLE`.
    Double,
}

impl Out {
    fn data_type(self) -> DataType {
        match self {
            Out::Text => DataType::Utf8,
            Out::Int32 => DataType::Int32,
            Out::Bool => DataType::Boolean,
            Out::Double => DataType::Float64,
        }
    }
}

/// One argument or result value of one row.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// Text.
    Text(String),
    /// An integer.
    Int(i64),
    /// A boolean.
    Bool(bool),
    /// A double.
    Float(f64),
}

impl Value {
    /// The text, when the value is text.
    pub fn text(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, when the value is one.
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The double, when the value is one.
    pub fn float(&self) -> Option<f64> {
        match self {
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }
}

/// How one row is computed: the arguments (already cast), or why the query fails.
pub type Eval = fn(&[Value]) -> std::result::Result<Value, String>;

/// A Doris scalar function: its name and aliases, the argument counts it takes, the kind
/// of each argument, its result type and the row function.
#[derive(Debug)]
pub struct RowFn {
    name: &'static str,
    aliases: Vec<String>,
    /// The argument counts Doris accepts (`usize::MAX` as the last entry: any count from
    /// the one before it up).
    arities: &'static [usize],
    kinds: &'static [Kind],
    out: Out,
    /// A NULL argument makes the result NULL without calling `eval`.
    strict: bool,
    eval: Eval,
    signature: Signature,
}

impl RowFn {
    /// A function; `kinds` gives each argument's kind (the last one repeats for a
    /// variadic tail).
    pub fn new(
        name: &'static str,
        arities: &'static [usize],
        kinds: &'static [Kind],
        out: Out,
        eval: Eval,
    ) -> Self {
        Self {
            name,
            aliases: Vec::new(),
            arities,
            kinds,
            out,
            strict: true,
            eval,
            signature: Signature::variadic_any(Volatility::Immutable),
        }
    }

    /// Other names Doris knows the function by.
    pub fn aliases(mut self, names: &[&str]) -> Self {
        self.aliases = names.iter().map(|n| (*n).to_owned()).collect();
        self
    }

    /// `eval` sees NULL arguments itself (for functions that do not return NULL on NULL).
    pub fn sees_nulls(mut self) -> Self {
        self.strict = false;
        self
    }

    /// Every name the function answers to.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name).chain(self.aliases.iter().map(String::as_str))
    }

    /// Whether Doris accepts `count` arguments.
    pub fn takes(&self, count: usize) -> bool {
        match self.arities {
            [.., from, usize::MAX] => count >= *from,
            fixed => fixed.contains(&count),
        }
    }

    fn kind(&self, at: usize) -> Kind {
        self.kinds
            .get(at)
            .or(self.kinds.last())
            .copied()
            .unwrap_or(Kind::Text)
    }
}

impl PartialEq for RowFn {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for RowFn {}

impl Hash for RowFn {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

fn cell(array: &ArrayRef, row: usize) -> Value {
    if array.is_null(row) {
        return Value::Null;
    }
    match array.data_type() {
        DataType::Int64 => Value::Int(array.as_primitive::<Int64Type>().value(row)),
        DataType::Float64 => Value::Float(array.as_primitive::<Float64Type>().value(row)),
        _ => Value::Text(array.as_string::<i32>().value(row).to_owned()),
    }
}

impl ScalarUDFImpl for RowFn {
    fn name(&self) -> &str {
        self.name
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(self.out.data_type())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let mut columns = Vec::with_capacity(args.args.len());
        for (at, arg) in args.args.iter().enumerate() {
            let array = arg.to_array(rows)?;
            let target = match self.kind(at) {
                Kind::IntOrText if array.data_type().is_integer() => DataType::Int64,
                Kind::Text | Kind::IntOrText => DataType::Utf8,
                Kind::Int => DataType::Int64,
                Kind::Float => DataType::Float64,
            };
            columns.push(arrow::compute::cast(&array, &target)?);
        }
        let mut values = Vec::with_capacity(rows);
        let mut row_args = Vec::with_capacity(columns.len());
        for row in 0..rows {
            row_args.clear();
            row_args.extend(columns.iter().map(|c| cell(c, row)));
            let value = if self.strict && row_args.contains(&Value::Null) {
                Value::Null
            } else {
                (self.eval)(&row_args)
                    .map_err(|why| DataFusionError::Execution(format!("{}: {why}", self.name)))?
            };
            values.push(value);
        }
        Ok(ColumnarValue::Array(collect(self.out, values)?))
    }
}

fn collect(out: Out, values: Vec<Value>) -> Result<ArrayRef> {
    let wrong = |v: &Value| DataFusionError::Internal(format!("a {out:?} function produced {v:?}"));
    Ok(match out {
        Out::Text => {
            let mut b = StringBuilder::new();
            for v in &values {
                match v {
                    Value::Null => b.append_null(),
                    Value::Text(s) => b.append_value(s),
                    other => return Err(wrong(other)),
                }
            }
            Arc::new(b.finish())
        }
        Out::Int32 => {
            let mut b = Int32Builder::new();
            for v in &values {
                match v {
                    Value::Null => b.append_null(),
                    Value::Int(i) => b.append_value(i32::try_from(*i).map_err(|_| wrong(v))?),
                    other => return Err(wrong(other)),
                }
            }
            Arc::new(b.finish())
        }
        Out::Double => {
            let mut b = Float64Builder::new();
            for v in &values {
                match v {
                    Value::Null => b.append_null(),
                    Value::Float(x) => b.append_value(*x),
                    other => return Err(wrong(other)),
                }
            }
            Arc::new(b.finish())
        }
        Out::Bool => {
            let mut b = BooleanBuilder::new();
            for v in &values {
                match v {
                    Value::Null => b.append_null(),
                    Value::Bool(x) => b.append_value(*x),
                    other => return Err(wrong(other)),
                }
            }
            Arc::new(b.finish())
        }
    })
}
