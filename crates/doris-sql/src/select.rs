//! Building the one statement shape a Doris read task runs.
//!
//! ```text
//! SELECT <projection> FROM `db`.`tbl` [TABLET(id, …)] [WHERE (<trusted>) AND <pushed> …] [LIMIT n]
//! SELECT count(*) | least(count(*), n) AS `<alias>` FROM `db`.`tbl` [TABLET(id, …)] [WHERE …]
//! ```
//!
//! ```
//! use doris_sql::{Expr, Literal, SelectBuilder, TableRef, translate_filter};
//! let filter = translate_filter(&Expr::col("score").gt_eq(Expr::lit(Literal::Int64(80))));
//! let sql = SelectBuilder::new(TableRef::new("analytics", "events").unwrap())
//!     .columns(["event_id", "score"])
//!     .tablets([10007, 10005])
//!     .filter(&filter)
//!     .limit(100)
//!     .build()
//!     .unwrap();
//! assert_eq!(
//!     sql,
//!     "SELECT `event_id`, `score` FROM `analytics`.`events` TABLET(10005, 10007) \
//!      WHERE (`score` >= 80) LIMIT 100"
//! );
//! ```

use std::fmt::Write as _;

use crate::error::{Result, SqlError};
use crate::ident::{TableRef, push_quoted_ident, validate_ident};
use crate::params::TrustedWhere;
use crate::translate::Translation;

/// What the statement returns.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shape {
    Rows { columns: Vec<String> },
    Count { alias: String },
}

/// A builder for a read task's SELECT.
///
/// ```
/// use doris_sql::{SelectBuilder, TableRef};
/// let sql = SelectBuilder::new(TableRef::new("db", "t").unwrap())
///     .count("n")
///     .tablets([10002, 10001])
///     .build()
///     .unwrap();
/// assert_eq!(sql, "SELECT count(*) AS `n` FROM `db`.`t` TABLET(10001, 10002)");
/// ```
#[derive(Debug, Clone)]
pub struct SelectBuilder {
    table: TableRef,
    shape: Shape,
    tablets: Option<Vec<u64>>,
    trusted: Option<TrustedWhere>,
    pushed: Vec<String>,
    has_residual: bool,
    limit: Option<u64>,
}

impl SelectBuilder {
    /// Starts a SELECT over `table` (no columns yet).
    pub fn new(table: TableRef) -> Self {
        Self {
            table,
            shape: Shape::Rows {
                columns: Vec::new(),
            },
            tablets: None,
            trusted: None,
            pushed: Vec::new(),
            has_residual: false,
            limit: None,
        }
    }

    /// Adds projected columns, in the order given; repeats are dropped, so the projection is
    /// stable however often a column is requested (e.g. once by the user, once by a filter).
    pub fn columns<I, S>(mut self, columns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        if let Shape::Rows { columns: cols } = &mut self.shape {
            for c in columns {
                let c = c.into();
                if !cols.contains(&c) {
                    cols.push(c);
                }
            }
        }
        self
    }

    /// Turns the statement into `SELECT count(*) AS `alias``; columns are ignored, and a
    /// [`limit`](Self::limit) caps the count (`least(count(*), n)`: a count under a limit
    /// counts at most the rows the limited read would return).
    ///
    /// Refused by [`build`](Self::build) when the filter left a residual: the count would
    /// include rows the residual removes.
    pub fn count(mut self, alias: impl Into<String>) -> Self {
        self.shape = Shape::Count {
            alias: alias.into(),
        };
        self
    }

    /// Restricts the scan to these tablets (`TABLET(…)` hint), sorted and deduplicated.
    ///
    /// An empty list is refused by [`build`](Self::build): leaving the hint out would scan
    /// the whole table, which is never what an empty tablet plan means.
    pub fn tablets(mut self, ids: impl IntoIterator<Item = u64>) -> Self {
        let mut ids: Vec<u64> = ids.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        self.tablets = Some(ids);
        self
    }

    /// Adds the caller's trusted fragment; it is wrapped in parentheses and comes first.
    pub fn trusted_where(mut self, fragment: TrustedWhere) -> Self {
        self.trusted = Some(fragment);
        self
    }

    /// Adds the pushed conjuncts of a translated filter (the residual is the caller's to
    /// apply after the scan).
    pub fn filter(mut self, translation: &Translation) -> Self {
        self.pushed.extend(translation.pushed.iter().cloned());
        self.has_residual |= translation.residual.is_some();
        self
    }

    /// Adds `LIMIT n` (for the count form: caps the count at `n`).
    ///
    /// Refused by [`build`](Self::build) when the filter left a residual: Doris would stop
    /// after `n` rows before the residual runs, dropping rows that pass it.
    pub fn limit(mut self, n: u64) -> Self {
        self.limit = Some(n);
        self
    }

    /// Renders the statement.
    pub fn build(&self) -> Result<String> {
        if self.has_residual {
            if matches!(self.shape, Shape::Count { .. }) {
                return Err(SqlError::InvalidQuery(
                    "count(*) cannot be pushed while part of the filter stays residual".into(),
                ));
            }
            if self.limit.is_some() {
                return Err(SqlError::InvalidQuery(
                    "LIMIT cannot be pushed below a residual filter: it would drop matching rows"
                        .into(),
                ));
            }
        }
        let mut sql = String::from("SELECT ");
        match &self.shape {
            Shape::Rows { columns } => {
                if columns.is_empty() {
                    return Err(SqlError::InvalidQuery(
                        "a SELECT needs at least one column (use the count form to count rows)"
                            .into(),
                    ));
                }
                for (i, c) in columns.iter().enumerate() {
                    validate_ident("column", c)?;
                    if i > 0 {
                        sql.push_str(", ");
                    }
                    push_quoted_ident(&mut sql, c);
                }
            }
            Shape::Count { alias } => {
                validate_ident("column", alias)?;
                match self.limit {
                    Some(n) => {
                        let _ = write!(sql, "least(count(*), {n}) AS ");
                    }
                    None => sql.push_str("count(*) AS "),
                }
                push_quoted_ident(&mut sql, alias);
            }
        }
        sql.push_str(" FROM ");
        sql.push_str(&self.table.to_sql());
        if let Some(ids) = &self.tablets {
            if ids.is_empty() {
                return Err(SqlError::InvalidQuery(
                    "an empty tablet list would scan the whole table".into(),
                ));
            }
            if ids.contains(&0) {
                return Err(SqlError::InvalidQuery("tablet id 0 is not valid".into()));
            }
            sql.push_str(" TABLET(");
            for (i, id) in ids.iter().enumerate() {
                if i > 0 {
                    sql.push_str(", ");
                }
                let _ = write!(sql, "{id}");
            }
            sql.push(')');
        }
        let mut conditions = Vec::new();
        if let Some(t) = &self.trusted {
            conditions.push(format!("({})", t.sql()));
        }
        conditions.extend(self.pushed.iter().cloned());
        if !conditions.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(&conditions.join(" AND "));
        }
        if let (Some(n), Shape::Rows { .. }) = (self.limit, &self.shape) {
            let _ = write!(sql, " LIMIT {n}");
        }
        Ok(sql)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::{Expr, Literal, Param, bind_trusted_where, translate_filter};

    fn table() -> TableRef {
        TableRef::new("d`b", "t").unwrap()
    }

    #[test]
    fn golden_shapes() {
        let b = SelectBuilder::new(table()).columns(["b", "a", "b"]);
        assert_eq!(b.build().unwrap(), "SELECT `b`, `a` FROM `d``b`.`t`");
        assert_eq!(
            b.clone().limit(0).build().unwrap(),
            "SELECT `b`, `a` FROM `d``b`.`t` LIMIT 0"
        );
        let trusted = bind_trusted_where(
            "kind = :k OR x > 1",
            &BTreeMap::from([("k".to_owned(), Param::Scalar(Literal::String("v".into())))]),
        )
        .unwrap();
        let filter = translate_filter(
            &Expr::col("a")
                .is_not_null()
                .and(Expr::col("b").lt(Expr::lit(Literal::Int64(3)))),
        );
        assert_eq!(
            b.clone()
                .tablets([3, 1, 3])
                .trusted_where(trusted.clone())
                .filter(&filter)
                .limit(10)
                .build()
                .unwrap(),
            "SELECT `b`, `a` FROM `d``b`.`t` TABLET(1, 3) \
             WHERE (kind = 'v' OR x > 1) AND (`a` IS NOT NULL) AND (`b` < 3) LIMIT 10"
        );
        assert_eq!(
            SelectBuilder::new(table())
                .count("n")
                .trusted_where(trusted)
                .limit(5)
                .build()
                .unwrap(),
            "SELECT least(count(*), 5) AS `n` FROM `d``b`.`t` WHERE (kind = 'v' OR x > 1)"
        );
        assert_eq!(
            SelectBuilder::new(table())
                .count("n")
                .tablets([7])
                .build()
                .unwrap(),
            "SELECT count(*) AS `n` FROM `d``b`.`t` TABLET(7)"
        );
    }

    #[test]
    fn a_limit_caps_the_count_form() {
        assert_eq!(
            SelectBuilder::new(table())
                .count("n")
                .limit(5)
                .build()
                .unwrap(),
            "SELECT least(count(*), 5) AS `n` FROM `d``b`.`t`"
        );
    }

    #[test]
    fn refuses_malformed_queries() {
        let residual = translate_filter(&Expr::col("a").eq(Expr::lit(Literal::Null)));
        let cases = [
            (SelectBuilder::new(table()), "at least one column"),
            (
                SelectBuilder::new(table()).columns(["a"]).tablets([]),
                "whole table",
            ),
            (
                SelectBuilder::new(table()).columns(["a"]).tablets([0, 5]),
                "tablet id 0",
            ),
            (SelectBuilder::new(table()).columns([""]), "empty"),
            (SelectBuilder::new(table()).count("a\0"), "NUL"),
            (
                SelectBuilder::new(table())
                    .columns(["a"])
                    .filter(&residual)
                    .limit(5),
                "below a residual",
            ),
            (
                SelectBuilder::new(table()).count("n").filter(&residual),
                "count(*) cannot",
            ),
        ];
        for (builder, expected) in cases {
            let err = builder.build().unwrap_err().to_string();
            assert!(err.contains(expected), "{err}");
        }
    }
}
