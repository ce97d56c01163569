//! Pushdown equivalence: for random predicates over a small table, the rows MariaDB keeps
//! for the rendered SQL equal the rows the IR keeps when evaluated in Rust.
//!
//! Checked at two levels:
//! 1. every conjunct that `translate_filter` pushes keeps exactly the oracle's rows (a
//!    pushed conjunct is exact, not merely a superset);
//! 2. the full pipeline (pushed SQL in MariaDB, then the residual in Rust over what came
//!    back) keeps exactly the rows of the whole filter.
//!
//! The string column uses a binary no-pad collation, which compares like Doris does
//! (byte-wise, case-sensitive, trailing spaces significant).

// Test code: a failed unwrap is a failed test, with the value in the message.
#![allow(clippy::unwrap_used)]

use std::cell::Cell;
use std::collections::BTreeSet;

use daft_doris_integration_tests::mariadb::{MariaDb, mariadb};
use daft_doris_integration_tests::oracle::{RowValues, Value, keeps};
use doris_sql::{
    ArithmeticOp, CompareOp, Date, Expr, Literal, SelectBuilder, TableRef, render_predicate,
    translate_filter,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const TABLE: &str = "daft_doris_pushdown_eq";
const STRING_ALPHABET: [&str; 9] = ["a", "b", "A", "%", "_", "\\", "'", "é", " "];

/// A tiny deterministic generator for the table's contents.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

fn rows() -> Vec<(i64, RowValues)> {
    let mut rng = Lcg(7);
    (0..60)
        .map(|id| {
            let mut row = RowValues::new();
            let null = |rng: &mut Lcg| rng.next(6) == 0;
            let i = if null(&mut rng) {
                Value::Null
            } else {
                Value::Int(rng.next(21) as i64 - 10)
            };
            let f = if null(&mut rng) {
                Value::Null
            } else {
                Value::Float((rng.next(41) as f64 - 20.0) / 4.0)
            };
            let s = if null(&mut rng) {
                Value::Null
            } else {
                let len = rng.next(4) as usize;
                Value::Str(
                    (0..len)
                        .map(|_| STRING_ALPHABET[rng.next(9) as usize])
                        .collect(),
                )
            };
            let d = if null(&mut rng) {
                Value::Null
            } else {
                Value::Date(Date::new(2024, 1, 1 + rng.next(10) as u8).unwrap())
            };
            row.insert("i".into(), i);
            row.insert("f".into(), f);
            row.insert("s".into(), s);
            row.insert("d".into(), d);
            (id, row)
        })
        .collect()
}

fn sql_value(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => Literal::Float64(*f).to_sql().unwrap(),
        Value::Str(s) => Literal::String(s.clone()).to_sql().unwrap(),
        Value::Date(d) => Literal::Date(*d).to_sql().unwrap(),
    }
}

fn create_table(db: &MariaDb, rows: &[(i64, RowValues)]) {
    db.execute(&format!(
        "CREATE OR REPLACE TABLE {TABLE} (id INT PRIMARY KEY, i BIGINT NULL, f DOUBLE NULL, \
         s VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NULL, d DATE NULL)"
    ));
    let values: Vec<String> = rows
        .iter()
        .map(|(id, r)| {
            format!(
                "({id}, {}, {}, {}, {})",
                sql_value(&r["i"]),
                sql_value(&r["f"]),
                sql_value(&r["s"]),
                sql_value(&r["d"])
            )
        })
        .collect();
    db.execute(&format!("INSERT INTO {TABLE} VALUES {}", values.join(", ")));
}

fn short_string() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(STRING_ALPHABET.to_vec()), 0..3)
        .prop_map(|p| p.concat())
}

fn numeric_value() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        Just(Expr::col("i")),
        Just(Expr::col("f")),
        (-12i64..12).prop_map(|v| Expr::lit(Literal::Int64(v))),
        (-40i32..40).prop_map(|v| Expr::lit(Literal::Float64(f64::from(v) / 4.0))),
        (-5i32..5).prop_map(|v| Expr::lit(Literal::Int32(v))),
        Just(Expr::lit(Literal::Null)),
    ];
    leaf.prop_recursive(2, 6, 2, |inner| {
        (
            inner.clone(),
            prop::sample::select(vec![
                ArithmeticOp::Add,
                ArithmeticOp::Subtract,
                ArithmeticOp::Multiply,
                ArithmeticOp::Divide,
            ]),
            inner,
        )
            .prop_map(|(l, op, r)| l.arithmetic(op, r))
    })
}

fn string_value() -> impl Strategy<Value = Expr> {
    prop_oneof![
        3 => Just(Expr::col("s")),
        2 => short_string().prop_map(|s| Expr::lit(Literal::String(s))),
        1 => Just(Expr::lit(Literal::Null)),
    ]
}

fn date_value() -> impl Strategy<Value = Expr> {
    prop_oneof![
        2 => Just(Expr::col("d")),
        2 => (1u8..=12).prop_map(|day| Expr::lit(Literal::Date(Date::new(2024, 1, day).unwrap()))),
        1 => Just(Expr::lit(Literal::Null)),
    ]
}

fn compare_op() -> impl Strategy<Value = CompareOp> {
    prop::sample::select(vec![
        CompareOp::Eq,
        CompareOp::NotEq,
        CompareOp::Lt,
        CompareOp::LtEq,
        CompareOp::Gt,
        CompareOp::GtEq,
        CompareOp::NullSafeEq,
    ])
}

fn literal_of(kind: u8) -> BoxedStrategy<Literal> {
    match kind {
        0 => prop_oneof![
            4 => (-12i64..12).prop_map(Literal::Int64),
            1 => Just(Literal::Null),
        ]
        .boxed(),
        1 => prop_oneof![
            4 => short_string().prop_map(Literal::String),
            1 => Just(Literal::Null),
        ]
        .boxed(),
        _ => prop_oneof![
            4 => (1u8..=12).prop_map(|d| Literal::Date(Date::new(2024, 1, d).unwrap())),
            1 => Just(Literal::Null),
        ]
        .boxed(),
    }
}

fn like_pattern() -> impl Strategy<Value = String> {
    // Whole tokens only, so the pattern never ends in a lone escape character.
    prop::collection::vec(
        prop::sample::select(vec![
            "a", "b", "A", "%", "_", "\\%", "\\_", "\\\\", "'", "é", " ",
        ]),
        0..4,
    )
    .prop_map(|p| p.concat())
}

fn atom() -> impl Strategy<Value = Expr> {
    let column_of = |kind: u8| match kind {
        0 => Expr::col("i"),
        1 => Expr::col("s"),
        _ => Expr::col("d"),
    };
    prop_oneof![
        (numeric_value(), compare_op(), numeric_value()).prop_map(|(l, op, r)| Expr::Compare {
            op,
            left: Box::new(l),
            right: Box::new(r),
        }),
        (string_value(), compare_op(), string_value()).prop_map(|(l, op, r)| Expr::Compare {
            op,
            left: Box::new(l),
            right: Box::new(r),
        }),
        (date_value(), compare_op(), date_value()).prop_map(|(l, op, r)| Expr::Compare {
            op,
            left: Box::new(l),
            right: Box::new(r),
        }),
        (
            prop::sample::select(vec!["i", "f", "s", "d"]),
            any::<bool>()
        )
            .prop_map(|(c, neg)| {
                Expr::IsNull {
                    arg: Box::new(Expr::col(c)),
                    negated: neg,
                }
            }),
        (0u8..3, any::<bool>())
            .prop_flat_map(move |(kind, negated)| {
                (
                    prop::collection::vec(literal_of(kind), 0..4),
                    Just(kind),
                    Just(negated),
                )
            })
            .prop_map(move |(list, kind, negated)| Expr::InList {
                arg: Box::new(column_of(kind)),
                list,
                negated,
            }),
        (
            numeric_value(),
            numeric_value(),
            numeric_value(),
            any::<bool>()
        )
            .prop_map(|(a, lo, hi, negated)| Expr::Between {
                arg: Box::new(a),
                low: Box::new(lo),
                high: Box::new(hi),
                negated,
            }),
        (like_pattern(), any::<bool>()).prop_map(|(pattern, negated)| Expr::Like {
            arg: Box::new(Expr::col("s")),
            pattern,
            negated,
        }),
        short_string().prop_map(|p| Expr::col("s").starts_with(p)),
        short_string().prop_map(|p| Expr::col("s").ends_with(p)),
        short_string().prop_map(|p| Expr::col("s").contains(p)),
        any::<bool>().prop_map(|b| Expr::lit(Literal::Bool(b))),
    ]
}

fn predicate() -> impl Strategy<Value = Expr> {
    atom().prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(|args| Expr::And { args }),
            prop::collection::vec(inner.clone(), 1..4).prop_map(|args| Expr::Or { args }),
            inner.prop_map(Expr::not),
        ]
    })
}

fn flatten_and(e: &Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::And { args } if !args.is_empty() => args.iter().for_each(|a| flatten_and(a, out)),
        other => out.push(other.clone()),
    }
}

fn ids_from_server(db: &MariaDb, sql: &str) -> BTreeSet<i64> {
    db.query(sql)
        .unwrap_or_else(|e| panic!("MariaDB rejected generated SQL: {e}\n{sql}"))
        .into_iter()
        .map(|row| {
            let text = String::from_utf8(row[0].clone().unwrap()).unwrap();
            text.parse().unwrap()
        })
        .collect()
}

#[test]
fn pushed_sql_keeps_exactly_the_rows_the_ir_keeps() {
    let db = mariadb();
    let rows = rows();
    create_table(&db, &rows);
    let table = TableRef::new("test", TABLE).unwrap();
    // Literal-to-literal comparisons use the connection collation: make it binary and
    // no-pad, as Doris compares strings.
    db.execute("SET NAMES utf8mb4 COLLATE utf8mb4_nopad_bin");
    let pushed_conjuncts = Cell::new(0usize);
    let residual_filters = Cell::new(0usize);
    let mut runner = TestRunner::new(Config {
        cases: 400,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&predicate(), |filter| {
            let expected: BTreeSet<i64> = rows
                .iter()
                .filter(|(_, r)| keeps(&filter, r))
                .map(|(id, _)| *id)
                .collect();

            // 1. Each pushed conjunct is exact.
            let mut conjuncts = Vec::new();
            flatten_and(&filter, &mut conjuncts);
            for c in &conjuncts {
                if let Some(sql) = render_predicate(c) {
                    let from_server =
                        ids_from_server(&db, &format!("SELECT id FROM {TABLE} WHERE {sql}"));
                    let from_oracle: BTreeSet<i64> = rows
                        .iter()
                        .filter(|(_, r)| keeps(c, r))
                        .map(|(id, _)| *id)
                        .collect();
                    prop_assert_eq!(&from_server, &from_oracle, "conjunct {:?}\nSQL {}", c, sql);
                }
            }

            // 2. Pushed SQL on the server, then the residual in Rust, equals the whole filter.
            let translation = translate_filter(&filter);
            pushed_conjuncts.set(pushed_conjuncts.get() + translation.pushed.len());
            residual_filters
                .set(residual_filters.get() + usize::from(translation.residual.is_some()));
            let sql = SelectBuilder::new(table.clone())
                .columns(["id"])
                .filter(&translation)
                .build()
                .unwrap();
            let after_residual: BTreeSet<i64> = ids_from_server(&db, &sql)
                .into_iter()
                .filter(|id| {
                    translation
                        .residual
                        .as_ref()
                        .is_none_or(|res| keeps(res, &rows[*id as usize].1))
                })
                .collect();
            prop_assert_eq!(after_residual, expected, "filter {:?}\nSQL {}", filter, sql);
            Ok(())
        })
        .unwrap();
    // The generator must exercise both paths, or the test proves little.
    let (pushed, residual) = (pushed_conjuncts.get(), residual_filters.get());
    assert!(pushed > 200, "only {pushed} conjuncts were pushed");
    assert!(residual > 20, "only {residual} filters had a residual");
    db.execute(&format!("DROP TABLE {TABLE}"));
}
