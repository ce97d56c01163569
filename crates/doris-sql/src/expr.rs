//! The predicate IR: the one contract between an engine's filter expressions and Doris SQL.
//!
//! It is plain data and serialises to JSON (`{"kind": "compare", "op": "lt", ...}`), so the
//! Python binding builds it from Daft expressions and hands it over as text. Rust callers use
//! the builder methods:
//!
//! ```
//! use doris_sql::{Expr, Literal};
//! let filter = Expr::col("score").gt_eq(Expr::lit(Literal::Int64(80)))
//!     .and(Expr::col("name").starts_with("a_"));
//! let json = serde_json::to_string(&filter).unwrap();
//! assert_eq!(serde_json::from_str::<Expr>(&json).unwrap(), filter);
//! ```

use serde::{Deserialize, Serialize};

use crate::error::{Result, SqlError};
use crate::literal::Literal;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareOp {
    /// `=`
    Eq,
    /// `!=`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
    /// `<=>`: equal, with NULL equal to NULL and never yielding NULL.
    NullSafeEq,
}

impl CompareOp {
    /// The SQL spelling of the operator.
    pub fn sql(self) -> &'static str {
        match self {
            CompareOp::Eq => "=",
            CompareOp::NotEq => "!=",
            CompareOp::Lt => "<",
            CompareOp::LtEq => "<=",
            CompareOp::Gt => ">",
            CompareOp::GtEq => ">=",
            CompareOp::NullSafeEq => "<=>",
        }
    }
}

/// An arithmetic operator on values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArithmeticOp {
    /// `+`
    Add,
    /// `-`
    Subtract,
    /// `*`
    Multiply,
    /// `/`. Never pushed: integer division, division by zero and the result type differ
    /// between engines, so it always stays in the residual.
    Divide,
}

impl ArithmeticOp {
    /// The SQL spelling of the operator.
    pub fn sql(self) -> &'static str {
        match self {
            ArithmeticOp::Add => "+",
            ArithmeticOp::Subtract => "-",
            ArithmeticOp::Multiply => "*",
            ArithmeticOp::Divide => "/",
        }
    }
}

/// A predicate or value expression.
///
/// Boolean-valued nodes (comparisons, AND/OR/NOT, IS NULL, IN, BETWEEN, LIKE and the
/// string-match helpers) can stand in a WHERE clause; columns, literals and arithmetic are
/// values. The semantics are SQL's, including three-valued logic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Expr {
    /// A column of the scanned table, by name.
    Column {
        /// The column name, unquoted.
        name: String,
    },
    /// A typed literal.
    Literal {
        /// The value.
        value: Literal,
    },
    /// `left <op> right`.
    Compare {
        /// The operator.
        op: CompareOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
    },
    /// Conjunction of one or more predicates.
    And {
        /// The conjuncts.
        args: Vec<Expr>,
    },
    /// Disjunction of one or more predicates.
    Or {
        /// The disjuncts.
        args: Vec<Expr>,
    },
    /// Negation.
    Not {
        /// The negated predicate.
        arg: Box<Expr>,
    },
    /// `arg IS [NOT] NULL`.
    IsNull {
        /// The tested value.
        arg: Box<Expr>,
        /// `IS NOT NULL` when true.
        #[serde(default)]
        negated: bool,
    },
    /// `arg [NOT] IN (list…)`.
    InList {
        /// The tested value.
        arg: Box<Expr>,
        /// The literal list.
        list: Vec<Literal>,
        /// `NOT IN` when true.
        #[serde(default)]
        negated: bool,
    },
    /// `arg [NOT] BETWEEN low AND high` (inclusive).
    Between {
        /// The tested value.
        arg: Box<Expr>,
        /// Lower bound.
        low: Box<Expr>,
        /// Upper bound.
        high: Box<Expr>,
        /// `NOT BETWEEN` when true.
        #[serde(default)]
        negated: bool,
    },
    /// `arg [NOT] LIKE 'pattern'`, with `%`, `_` and backslash escapes as in SQL.
    Like {
        /// The tested value.
        arg: Box<Expr>,
        /// The LIKE pattern, verbatim.
        pattern: String,
        /// `NOT LIKE` when true.
        #[serde(default)]
        negated: bool,
    },
    /// The string value starts with `prefix` (rendered as an escaped LIKE).
    StartsWith {
        /// The tested value.
        arg: Box<Expr>,
        /// The literal prefix (not a pattern).
        prefix: String,
    },
    /// The string value ends with `suffix` (rendered as an escaped LIKE).
    EndsWith {
        /// The tested value.
        arg: Box<Expr>,
        /// The literal suffix (not a pattern).
        suffix: String,
    },
    /// The string value contains `substring` (rendered as an escaped LIKE).
    Contains {
        /// The tested value.
        arg: Box<Expr>,
        /// The literal substring (not a pattern).
        substring: String,
    },
    /// `left <op> right` on numbers.
    Arithmetic {
        /// The operator.
        op: ArithmeticOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
    },
}

impl Expr {
    /// The deepest nesting an engine's filter (or parameter value) may have on its way
    /// into this crate: an adapter that converts a foreign tree refuses a deeper one
    /// before recursing into it (a filter of a few thousand terms is far shallower).
    pub const MAX_DEPTH: usize = 256;

    /// A column reference.
    pub fn col(name: impl Into<String>) -> Self {
        Expr::Column { name: name.into() }
    }

    /// A literal.
    pub fn lit(value: Literal) -> Self {
        Expr::Literal { value }
    }

    fn compare(self, op: CompareOp, other: Expr) -> Self {
        Expr::Compare {
            op,
            left: Box::new(self),
            right: Box::new(other),
        }
    }

    /// `self = other`.
    pub fn eq(self, other: Expr) -> Self {
        self.compare(CompareOp::Eq, other)
    }

    /// `self != other`.
    pub fn not_eq(self, other: Expr) -> Self {
        self.compare(CompareOp::NotEq, other)
    }

    /// `self < other`.
    pub fn lt(self, other: Expr) -> Self {
        self.compare(CompareOp::Lt, other)
    }

    /// `self <= other`.
    pub fn lt_eq(self, other: Expr) -> Self {
        self.compare(CompareOp::LtEq, other)
    }

    /// `self > other`.
    pub fn gt(self, other: Expr) -> Self {
        self.compare(CompareOp::Gt, other)
    }

    /// `self >= other`.
    pub fn gt_eq(self, other: Expr) -> Self {
        self.compare(CompareOp::GtEq, other)
    }

    /// `self <=> other`.
    pub fn null_safe_eq(self, other: Expr) -> Self {
        self.compare(CompareOp::NullSafeEq, other)
    }

    /// `self AND other`, flattening nested conjunctions.
    pub fn and(self, other: Expr) -> Self {
        let mut args = Vec::new();
        for e in [self, other] {
            match e {
                Expr::And { args: inner } => args.extend(inner),
                e => args.push(e),
            }
        }
        Expr::And { args }
    }

    /// `self OR other`, flattening nested disjunctions.
    pub fn or(self, other: Expr) -> Self {
        let mut args = Vec::new();
        for e in [self, other] {
            match e {
                Expr::Or { args: inner } => args.extend(inner),
                e => args.push(e),
            }
        }
        Expr::Or { args }
    }

    /// `NOT self`.
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Self {
        Expr::Not {
            arg: Box::new(self),
        }
    }

    /// `self IS NULL`.
    pub fn is_null(self) -> Self {
        Expr::IsNull {
            arg: Box::new(self),
            negated: false,
        }
    }

    /// `self IS NOT NULL`.
    pub fn is_not_null(self) -> Self {
        Expr::IsNull {
            arg: Box::new(self),
            negated: true,
        }
    }

    /// `self IN (list)`.
    pub fn in_list(self, list: Vec<Literal>) -> Self {
        Expr::InList {
            arg: Box::new(self),
            list,
            negated: false,
        }
    }

    /// `self NOT IN (list)`.
    pub fn not_in_list(self, list: Vec<Literal>) -> Self {
        Expr::InList {
            arg: Box::new(self),
            list,
            negated: true,
        }
    }

    /// `self BETWEEN low AND high`.
    pub fn between(self, low: Expr, high: Expr) -> Self {
        Expr::Between {
            arg: Box::new(self),
            low: Box::new(low),
            high: Box::new(high),
            negated: false,
        }
    }

    /// `self LIKE pattern`.
    pub fn like(self, pattern: impl Into<String>) -> Self {
        Expr::Like {
            arg: Box::new(self),
            pattern: pattern.into(),
            negated: false,
        }
    }

    /// The value starts with the literal `prefix`.
    pub fn starts_with(self, prefix: impl Into<String>) -> Self {
        Expr::StartsWith {
            arg: Box::new(self),
            prefix: prefix.into(),
        }
    }

    /// The value ends with the literal `suffix`.
    pub fn ends_with(self, suffix: impl Into<String>) -> Self {
        Expr::EndsWith {
            arg: Box::new(self),
            suffix: suffix.into(),
        }
    }

    /// The value contains the literal `substring`.
    pub fn contains(self, substring: impl Into<String>) -> Self {
        Expr::Contains {
            arg: Box::new(self),
            substring: substring.into(),
        }
    }

    /// `self <op> other` on numbers.
    pub fn arithmetic(self, op: ArithmeticOp, other: Expr) -> Self {
        Expr::Arithmetic {
            op,
            left: Box::new(self),
            right: Box::new(other),
        }
    }

    /// Parses the JSON form of the IR.
    ///
    /// ```
    /// use doris_sql::Expr;
    /// let e = Expr::from_json(r#"{"kind":"is_null","arg":{"kind":"column","name":"a"}}"#).unwrap();
    /// assert_eq!(e, Expr::col("a").is_null());
    /// ```
    pub fn from_json(json: &str) -> Result<Self> {
        serde_json::from_str(json).map_err(|e| {
            // serde's message can quote input values; keep only its position.
            SqlError::InvalidIr(format!(
                "not a valid predicate (line {}, column {}, {:?} error)",
                e.line(),
                e.column(),
                e.classify()
            ))
        })
    }

    /// The names of all columns the expression reads, in first-use order, without repeats.
    pub fn column_names(&self) -> Vec<&str> {
        let mut names = Vec::new();
        self.visit_columns(&mut |name| {
            if !names.contains(&name) {
                names.push(name);
            }
        });
        names
    }

    fn visit_columns<'a>(&'a self, f: &mut impl FnMut(&'a str)) {
        match self {
            Expr::Column { name } => f(name),
            Expr::Literal { .. } => {}
            Expr::Compare { left, right, .. } | Expr::Arithmetic { left, right, .. } => {
                left.visit_columns(f);
                right.visit_columns(f);
            }
            Expr::And { args } | Expr::Or { args } => {
                args.iter().for_each(|a| a.visit_columns(f));
            }
            Expr::Not { arg }
            | Expr::IsNull { arg, .. }
            | Expr::InList { arg, .. }
            | Expr::Like { arg, .. }
            | Expr::StartsWith { arg, .. }
            | Expr::EndsWith { arg, .. }
            | Expr::Contains { arg, .. } => arg.visit_columns(f),
            Expr::Between { arg, low, high, .. } => {
                arg.visit_columns(f);
                low.visit_columns(f);
                high.visit_columns(f);
            }
        }
    }
}
