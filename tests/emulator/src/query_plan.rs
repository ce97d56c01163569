//! The FE `_query_plan` and `_schema` endpoints (docs/emulator.md, "FE HTTP").
//!
//! `_query_plan` checks the SQL as Doris does (one plain SELECT over exactly the table of
//! the URL, only filter/project/scan) and answers the tablets that can hold matching rows:
//! every tablet of the table, less the partitions that the WHERE clause rules out. Pruning
//! is conservative: a partition is dropped only when a top-level AND conjunct on the first
//! partition column proves that none of its rows can match.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use doris_sql::{DorisType, KeyModel, PartitionValues};
use serde_json::{Value, json};
use sqlparser::ast::{self, BinaryOperator, Expr, SelectItem, SetExpr, Statement, TableFactor};
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;

use crate::Shared;
use crate::auth::{Privilege, missing_privilege};
use crate::catalog::Table;
use crate::error::EmulatorError;
use crate::storage::compare_typed;

fn envelope(msg: &str, code: i32, data: Value) -> Value {
    json!({ "msg": msg, "code": code, "data": data, "count": 0 })
}

fn rejected(status: i32, exception: String) -> Value {
    envelope(
        "success",
        0,
        json!({ "status": status, "exception": exception }),
    )
}

/// Answers a `_query_plan` request of `user`, whose credentials were already checked (a
/// bad password is the 401 envelope, before anything else). As Doris's
/// `TableQueryPlanAction`: the body is checked first, then the user's SELECT on the table
/// (a missing privilege is not a 401: Doris's handler catches it with every other failure
/// and answers `data.status` `"1"` with the message), then the table.
pub fn query_plan(shared: &Shared, user: &str, db: &str, table: &str, body: &[u8]) -> Value {
    let parsed: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(_) if body.iter().all(u8::is_ascii_whitespace) => {
            return envelope(
                "Bad Request",
                403,
                json!("POST body must contains [sql] root object"),
            );
        }
        Err(_) => {
            return envelope(
                "Bad Request",
                403,
                json!(format!("malformed json: {}", String::from_utf8_lossy(body))),
            );
        }
    };
    let Some(sql) = parsed.get("sql").and_then(Value::as_str) else {
        return envelope(
            "Bad Request",
            403,
            json!("POST body must contains [sql] root object"),
        );
    };
    if !shared.users.has(user, db, table, Privilege::Select) {
        return envelope(
            "success",
            0,
            json!({ "status": "1", "exception": missing_privilege(Privilege::Select) }),
        );
    }
    let table_ref = match shared.catalog.table(db, table) {
        Ok(t) => t,
        Err(EmulatorError::UnknownDatabase(_)) => {
            return envelope(
                "Error",
                1,
                json!(format!(
                    "errCode = 7, detailMessage = unknown databases, dbName={db}"
                )),
            );
        }
        Err(_) => {
            return envelope(
                "Error",
                1,
                json!(format!(
                    "errCode = 7, detailMessage = unknown table, tableName={table}"
                )),
            );
        }
    };
    let selection = match check_sql(sql, db, table, &table_ref) {
        Ok(s) => s,
        Err((status, message)) => return rejected(status, message),
    };
    let keep = surviving_partitions(&table_ref, selection.as_ref());
    let host = shared.config.advertise_host.clone();
    // Each simulated BE reports its own thrift port (they share the host).
    let routing = |be: usize| {
        let port = usize::from(crate::backends::BE_THRIFT_PORT) + be;
        if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        }
    };
    let mut partitions = BTreeMap::new();
    for (index, tablet) in table_ref
        .tablets
        .iter()
        .enumerate()
        .filter(|(_, t)| keep[t.partition])
    {
        let be = shared.backends.of_tablet(index);
        partitions.insert(
            tablet.id.to_string(),
            json!({ "routings": [routing(be)], "version": table_ref.version(), "schemaHash": 0 }),
        );
    }
    use base64::Engine as _;
    let opaque = base64::engine::general_purpose::STANDARD.encode(format!(
        "doris-emulator query plan for {db}.{table}: {}",
        partitions.len()
    ));
    envelope(
        "success",
        0,
        json!({ "partitions": partitions, "opaqued_query_plan": opaque, "status": 200 }),
    )
}

/// Checks the SQL against Doris's rules; returns the WHERE clause.
fn check_sql(sql: &str, db: &str, table: &str, t: &Table) -> Result<Option<Expr>, (i32, String)> {
    let not_select = || (400, format!("Select statement needed, but found [{sql} ]"));
    let not_scan = || {
        (
            400,
            format!("only support single table filter-prune-scan, but found [ {sql}]"),
        )
    };
    let statements = Parser::parse_sql(&MySqlDialect {}, sql).map_err(|e| {
        (
            400,
            format!("errCode = 2, detailMessage = Syntax error: {e}"),
        )
    })?;
    let [Statement::Query(query)] = statements.as_slice() else {
        return Err(not_select());
    };
    if query.order_by.is_some() || query.limit_clause.is_some() || query.with.is_some() {
        return Err(not_scan());
    }
    let SetExpr::Select(select) = query.body.as_ref() else {
        return Err(not_scan());
    };
    if select.from.len() != 1 {
        return Err((400, "Select statement must have only one table".into()));
    }
    let from = &select.from[0];
    if !from.joins.is_empty() || select.having.is_some() || select.distinct.is_some() {
        return Err(not_scan());
    }
    if !matches!(&select.group_by, ast::GroupByExpr::Expressions(e, _) if e.is_empty()) {
        return Err(not_scan());
    }
    let TableFactor::Table { name, .. } = &from.relation else {
        return Err((
            400,
            "Select statement must not embed another statement".into(),
        ));
    };
    let parts: Vec<String> = name
        .0
        .iter()
        .filter_map(|p| p.as_ident().map(|i| i.value.clone()))
        .collect();
    let (sql_db, sql_table) = match parts.as_slice() {
        [t] => (db.to_owned(), t.clone()),
        [d, t] => (d.clone(), t.clone()),
        [_, d, t] => (d.clone(), t.clone()),
        _ => return Err(not_scan()),
    };
    if sql_db != db || sql_table != table {
        return Err((
            400,
            format!(
                "requested database and table must consistent with sql: request [ {db}.{table}]and sql [{sql_db}.{sql_table}]"
            ),
        ));
    }
    for item in &select.projection {
        match item {
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {}
            SelectItem::UnnamedExpr(Expr::Identifier(id))
            | SelectItem::ExprWithAlias {
                expr: Expr::Identifier(id),
                ..
            } if t.schema.column(&id.value).is_none() => {
                return Err((
                    400,
                    format!(
                        "errCode = 2, detailMessage = Unknown column '{}' in 'table list'",
                        id.value
                    ),
                ));
            }
            SelectItem::UnnamedExpr(Expr::Function(_))
            | SelectItem::ExprWithAlias {
                expr: Expr::Function(_),
                ..
            } => {
                return Err(not_scan());
            }
            _ => {}
        }
    }
    Ok(select.selection.clone())
}

/// Which partitions can hold rows matching `selection` (conservative).
fn surviving_partitions(t: &Table, selection: Option<&Expr>) -> Vec<bool> {
    // A WHERE that folds to false (`FALSE`, `1 = 0`, a false conjunct): Doris's planner
    // folds it to an empty relation and plans no scan, so no tablet is listed.
    if selection.is_some_and(|s| constant_truth(s) == Some(false)) {
        return vec![false; t.partitions.len()];
    }
    let mut keep = vec![true; t.partitions.len()];
    let (Some(selection), Some(p)) = (selection, &t.schema.partitioning) else {
        return keep;
    };
    let Some(column) = p.columns.first() else {
        return keep;
    };
    let Some(ty) = t.schema.column(column).map(|c| c.ty.clone()) else {
        return keep;
    };
    let mut conjuncts = Vec::new();
    flatten_and(selection, &mut conjuncts);
    for (i, part) in t.partitions.iter().enumerate() {
        let Some(values) = &part.values else { continue };
        let lower = previous_upper(t, i);
        for c in &conjuncts {
            if let Some(false) = may_match(c, column, &ty, values, lower.as_deref()) {
                keep[i] = false;
            }
        }
    }
    keep
}

/// The truth of an expression made of literals only (`None`: not constant, or not folded
/// here): booleans, numbers (0 is false), comparisons of two numbers or two strings, NOT,
/// AND, OR.
fn constant_truth(e: &Expr) -> Option<bool> {
    match e {
        Expr::Nested(inner) => constant_truth(inner),
        Expr::Value(v) => match &v.value {
            ast::Value::Boolean(b) => Some(*b),
            ast::Value::Number(n, _) => n.parse::<f64>().ok().map(|x| x != 0.0),
            _ => None,
        },
        Expr::UnaryOp {
            op: ast::UnaryOperator::Not,
            expr,
        } => constant_truth(expr).map(|b| !b),
        Expr::BinaryOp { left, op, right } => match op {
            BinaryOperator::And => match (constant_truth(left), constant_truth(right)) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            BinaryOperator::Or => match (constant_truth(left), constant_truth(right)) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            _ => {
                let ordering = compare_literals(left, right)?;
                Some(match op {
                    BinaryOperator::Eq => ordering == Ordering::Equal,
                    BinaryOperator::NotEq => ordering != Ordering::Equal,
                    BinaryOperator::Lt => ordering == Ordering::Less,
                    BinaryOperator::LtEq => ordering != Ordering::Greater,
                    BinaryOperator::Gt => ordering == Ordering::Greater,
                    BinaryOperator::GtEq => ordering != Ordering::Less,
                    _ => return None,
                })
            }
        },
        _ => None,
    }
}

/// How two literals compare: two numbers as numbers, two strings as strings.
fn compare_literals(left: &Expr, right: &Expr) -> Option<Ordering> {
    let value = |e: &Expr| match e {
        Expr::Value(v) => Some(v.value.clone()),
        Expr::Nested(inner) => match inner.as_ref() {
            Expr::Value(v) => Some(v.value.clone()),
            _ => None,
        },
        _ => None,
    };
    match (value(left)?, value(right)?) {
        (ast::Value::Number(a, _), ast::Value::Number(b, _)) => {
            a.parse::<f64>().ok()?.partial_cmp(&b.parse::<f64>().ok()?)
        }
        (ast::Value::SingleQuotedString(a), ast::Value::SingleQuotedString(b)) => Some(a.cmp(&b)),
        _ => None,
    }
}

/// For `LESS THAN` partitions, the lower bound is the previous partition's upper bound.
fn previous_upper(t: &Table, i: usize) -> Option<Vec<String>> {
    if i == 0 {
        return None;
    }
    match &t.partitions[i - 1].values {
        Some(PartitionValues::LessThan(upper)) => Some(upper.clone()),
        _ => None,
    }
}

fn flatten_and<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    match e {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            flatten_and(left, out);
            flatten_and(right, out);
        }
        Expr::Nested(inner) => flatten_and(inner, out),
        other => out.push(other),
    }
}

fn is_column(e: &Expr, column: &str) -> bool {
    match e {
        Expr::Identifier(id) => id.value.eq_ignore_ascii_case(column),
        Expr::CompoundIdentifier(parts) => parts
            .last()
            .is_some_and(|id| id.value.eq_ignore_ascii_case(column)),
        Expr::Nested(inner) => is_column(inner, column),
        _ => false,
    }
}

/// A literal as the text partition bounds are compared in (dates stay `YYYY-MM-DD`).
fn literal_text(e: &Expr) -> Option<String> {
    match e {
        Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => Some(n.clone()),
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                Some(s.clone())
            }
            _ => None,
        },
        Expr::Cast { expr, .. } | Expr::Nested(expr) => literal_text(expr),
        Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => literal_text(expr).map(|v| format!("-{v}")),
        _ => None,
    }
}

/// `Some(false)` when the conjunct proves the partition holds no matching row.
fn may_match(
    c: &Expr,
    column: &str,
    ty: &DorisType,
    values: &PartitionValues,
    lower: Option<&[String]>,
) -> Option<bool> {
    let cmp = |a: &str, b: &str| compare_typed(ty, a, b);
    // Does some value v in [lo, hi) satisfy `v op x`? (None bounds are unbounded.)
    let range_allows = |op: &BinaryOperator, x: &str, lo: Option<&str>, hi: Option<&str>| -> bool {
        let lo_below = |strict: bool| {
            lo.is_none_or(|lo| match cmp(lo, x) {
                Ordering::Less => true,
                Ordering::Equal => !strict,
                Ordering::Greater => false,
            })
        };
        let x_below_hi = hi.is_none_or(|hi| cmp(x, hi) == Ordering::Less);
        match op {
            BinaryOperator::Eq => lo_below(false) && x_below_hi,
            BinaryOperator::Lt => lo_below(true),
            BinaryOperator::LtEq => lo_below(false),
            // Conservative for `>`: x < hi keeps the partition even when no v > x remains.
            BinaryOperator::Gt | BinaryOperator::GtEq => x_below_hi,
            _ => true,
        }
    };
    let (lo, hi): (Option<String>, Option<String>) = match values {
        PartitionValues::Range { lower, upper } => (lower.first().cloned(), upper.first().cloned()),
        PartitionValues::LessThan(upper) => (
            lower.and_then(|l| l.first().cloned()),
            upper.first().cloned(),
        ),
        PartitionValues::In(tuples) => {
            let listed: Vec<&String> = tuples.iter().filter_map(|t| t.first()).collect();
            return match c {
                Expr::BinaryOp {
                    left,
                    op: BinaryOperator::Eq,
                    right,
                } if is_column(left, column) => {
                    let x = literal_text(right)?;
                    Some(listed.iter().any(|v| cmp(v, &x) == Ordering::Equal))
                }
                Expr::InList {
                    expr,
                    list,
                    negated: false,
                } if is_column(expr, column) => {
                    let xs: Option<Vec<String>> = list.iter().map(literal_text).collect();
                    let xs = xs?;
                    Some(
                        listed
                            .iter()
                            .any(|v| xs.iter().any(|x| cmp(v, x) == Ordering::Equal)),
                    )
                }
                _ => None,
            };
        }
        PartitionValues::Other(_) => return None,
    };
    let (lo, hi) = (
        lo.filter(|v| !v.eq_ignore_ascii_case("MAXVALUE")),
        hi.filter(|v| !v.eq_ignore_ascii_case("MAXVALUE")),
    );
    match c {
        Expr::BinaryOp { left, op, right } if is_column(left, column) => {
            let x = literal_text(right)?;
            Some(range_allows(op, &x, lo.as_deref(), hi.as_deref()))
        }
        Expr::InList {
            expr,
            list,
            negated: false,
        } if is_column(expr, column) => {
            let xs: Option<Vec<String>> = list.iter().map(literal_text).collect();
            Some(
                xs?.iter()
                    .any(|x| range_allows(&BinaryOperator::Eq, x, lo.as_deref(), hi.as_deref())),
            )
        }
        Expr::Between {
            expr,
            negated: false,
            low,
            high,
        } if is_column(expr, column) => {
            let (a, b) = (literal_text(low)?, literal_text(high)?);
            Some(
                range_allows(&BinaryOperator::GtEq, &a, lo.as_deref(), hi.as_deref())
                    && range_allows(&BinaryOperator::LtEq, &b, lo.as_deref(), hi.as_deref()),
            )
        }
        _ => None,
    }
}

/// Doris's internal PrimitiveType name, as `_schema` prints it.
fn primitive_name(ty: &DorisType) -> &'static str {
    match ty {
        DorisType::Boolean => "BOOLEAN",
        DorisType::TinyInt => "TINYINT",
        DorisType::SmallInt => "SMALLINT",
        DorisType::Int => "INT",
        DorisType::BigInt => "BIGINT",
        DorisType::LargeInt => "LARGEINT",
        DorisType::Float => "FLOAT",
        DorisType::Double => "DOUBLE",
        DorisType::Decimal { precision, .. } => match precision {
            0..=9 => "DECIMAL32",
            10..=18 => "DECIMAL64",
            19..=38 => "DECIMAL128",
            _ => "DECIMAL256",
        },
        DorisType::Date => "DATEV2",
        DorisType::DateTime { .. } => "DATETIMEV2",
        DorisType::Time { .. } => "TIMEV2",
        DorisType::TimestampTz { .. } => "TIMESTAMPTZ",
        DorisType::Char { .. } => "CHAR",
        DorisType::Varchar { .. } => "VARCHAR",
        DorisType::String => "STRING",
        DorisType::Json => "JSONB",
        DorisType::Variant => "VARIANT",
        DorisType::Hll => "HLL",
        DorisType::Bitmap => "BITMAP",
        DorisType::QuantileState => "QUANTILE_STATE",
        DorisType::AggState { .. } => "AGG_STATE",
        DorisType::Ipv4 => "IPV4",
        DorisType::Ipv6 => "IPV6",
        DorisType::VarBinary { .. } => "VARBINARY",
        DorisType::Array { .. } => "ARRAY",
        DorisType::Map { .. } => "MAP",
        DorisType::Struct { .. } => "STRUCT",
        _ => "UNKNOWN",
    }
}

/// The `_schema` answer.
pub fn schema(shared: &Shared, db: &str, table: &str) -> Value {
    let t = match shared.catalog.table(db, table) {
        Ok(t) => t,
        Err(e) => {
            return envelope(
                "Error",
                1,
                json!(format!("errCode = 7, detailMessage = {e}")),
            );
        }
    };
    let properties: Vec<Value> = t
        .schema
        .columns
        .iter()
        .map(|c| {
            let mut p = json!({
                "name": c.name,
                "type": primitive_name(&c.ty),
                "comment": c.comment.clone().unwrap_or_default(),
                "aggregation_type": c.aggregation.map(|a| a.as_str()).unwrap_or(""),
            });
            match &c.ty {
                DorisType::Decimal { precision, scale } => {
                    p["precision"] = json!(precision);
                    p["scale"] = json!(scale);
                }
                DorisType::DateTime { precision } => p["scale"] = json!(precision),
                _ => {}
            }
            p
        })
        .collect();
    let keys = match t.schema.key_model {
        Some(KeyModel::Unique) => "UNIQUE_KEYS",
        Some(KeyModel::Aggregate) => "AGG_KEYS",
        _ => "DUP_KEYS",
    };
    envelope(
        "success",
        0,
        json!({ "properties": properties, "keysType": keys, "status": 200 }),
    )
}
