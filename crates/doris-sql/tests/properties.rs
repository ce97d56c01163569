//! Property tests of doris-sql that need no server.
//!
//! - No value can change a statement's structure: for random predicate trees over random
//!   names and values, the rendered SELECT parses (with sqlparser, an independent SQL
//!   parser) as exactly one SELECT with the same projection, table and LIMIT, and every
//!   pushed string value comes back from the parser unchanged.
//! - The type parser reads back every spelling of every generated type.
//! - A `CREATE TABLE`'s property text stays inside its literals in every SQL mode.
//! - No input makes a parser panic.

// Test code: a failed unwrap is a failed test, with the value in the message.
#![allow(clippy::unwrap_used)]

use std::ops::ControlFlow;

use doris_sql::{
    ArithmeticOp, CompareOp, Date, DateTime, DorisType, Expr, Literal, SelectBuilder, Spelling,
    StructField, TableRef, render_predicate, translate_filter,
};
use proptest::prelude::*;
use sqlparser::ast::{self, SetExpr, Statement, TableFactor, Visit};
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_][a-z0-9_]{0,8}",
        any::<String>().prop_filter("non-empty, no NUL", |s| !s.is_empty() && !s.contains('\0')),
        prop::collection::vec(
            prop::sample::select(vec!["`", "'", "\"", "\\", " ", "a", ";", "--", "*/"]),
            1..6
        )
        .prop_map(|p| p.concat()),
    ]
}

fn hostile_string() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        prop::collection::vec(
            prop::sample::select(vec![
                "'",
                "\\",
                "\"",
                "`",
                "\0",
                "\n",
                "\r",
                "%",
                "_",
                "--",
                "/*",
                "*/",
                ";",
                "#",
                " OR 1=1",
                ") UNION SELECT 1 --",
                "é",
                "a",
            ]),
            0..8,
        )
        .prop_map(|p| p.concat()),
    ]
}

fn literal() -> impl Strategy<Value = Literal> {
    prop_oneof![
        4 => hostile_string().prop_map(Literal::String),
        1 => any::<i64>().prop_map(Literal::Int64),
        1 => any::<i128>().prop_map(Literal::LargeInt),
        1 => any::<f64>().prop_map(Literal::Float64),
        1 => any::<bool>().prop_map(Literal::Bool),
        1 => prop::collection::vec(any::<u8>(), 0..8).prop_map(Literal::Binary),
        1 => (0u16..=9999, 1u8..=12, 1u8..=28)
            .prop_map(|(y, m, d)| Literal::Date(Date::new(y, m, d).unwrap())),
        1 => (0u8..24, 0u32..1_000_000).prop_map(|(h, us)| Literal::DateTime(
            DateTime::new(Date::new(2024, 1, 1).unwrap(), (h, 0, 0), us, 6).unwrap())),
        1 => "-?[0-9]{1,20}\\.[0-9]{0,10}".prop_map(|t| Literal::Decimal(t.parse().unwrap())),
        1 => Just(Literal::Null),
    ]
}

fn value() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![name().prop_map(Expr::col), literal().prop_map(Expr::lit)];
    leaf.prop_recursive(2, 4, 2, |inner| {
        (
            inner.clone(),
            prop::sample::select(vec![
                ArithmeticOp::Add,
                ArithmeticOp::Multiply,
                ArithmeticOp::Subtract,
            ]),
            inner,
        )
            .prop_map(|(l, op, r)| l.arithmetic(op, r))
    })
}

fn predicate() -> impl Strategy<Value = Expr> {
    let op = prop::sample::select(vec![
        CompareOp::Eq,
        CompareOp::NotEq,
        CompareOp::Lt,
        CompareOp::LtEq,
        CompareOp::Gt,
        CompareOp::GtEq,
        CompareOp::NullSafeEq,
    ]);
    let atom = prop_oneof![
        (value(), op, value()).prop_map(|(l, op, r)| Expr::Compare {
            op,
            left: Box::new(l),
            right: Box::new(r)
        }),
        (
            value(),
            prop::collection::vec(literal(), 1..4),
            any::<bool>()
        )
            .prop_map(|(a, list, negated)| Expr::InList {
                arg: Box::new(a),
                list,
                negated
            }),
        (value(), value(), value()).prop_map(|(a, l, h)| a.between(l, h)),
        (value(), any::<bool>()).prop_map(|(a, n)| Expr::IsNull {
            arg: Box::new(a),
            negated: n
        }),
        (value(), hostile_string(), any::<bool>()).prop_map(|(a, p, negated)| Expr::Like {
            arg: Box::new(a),
            pattern: p,
            negated
        }),
        (value(), hostile_string()).prop_map(|(a, p)| a.starts_with(p)),
        (value(), hostile_string()).prop_map(|(a, p)| a.ends_with(p)),
        (value(), hostile_string()).prop_map(|(a, p)| a.contains(p)),
    ];
    atom.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(|args| Expr::And { args }),
            prop::collection::vec(inner.clone(), 1..4).prop_map(|args| Expr::Or { args }),
            inner.prop_map(Expr::not),
        ]
    })
}

/// The string values a pushed predicate carries as SQL string literals.
fn pushed_strings(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Literal { value } => literal_strings(value, out),
        Expr::Column { .. } => {}
        Expr::Compare { left, right, .. } | Expr::Arithmetic { left, right, .. } => {
            pushed_strings(left, out);
            pushed_strings(right, out);
        }
        Expr::And { args } | Expr::Or { args } => args.iter().for_each(|a| pushed_strings(a, out)),
        Expr::Not { arg } | Expr::IsNull { arg, .. } => pushed_strings(arg, out),
        Expr::InList { arg, list, .. } => {
            pushed_strings(arg, out);
            list.iter().for_each(|l| literal_strings(l, out));
        }
        Expr::Between { arg, low, high, .. } => {
            pushed_strings(arg, out);
            pushed_strings(low, out);
            pushed_strings(high, out);
        }
        Expr::Like { arg, pattern, .. } => {
            pushed_strings(arg, out);
            out.push(pattern.clone());
        }
        Expr::StartsWith { arg, prefix: p }
        | Expr::EndsWith { arg, suffix: p }
        | Expr::Contains { arg, substring: p } => {
            pushed_strings(arg, out);
            let pattern = doris_sql::escape_like(p);
            out.push(match e {
                Expr::StartsWith { .. } => pattern + "%",
                Expr::EndsWith { .. } => "%".to_owned() + &pattern,
                _ => "%".to_owned() + &pattern + "%",
            });
        }
    }
}

/// Strings and temporal values render as quoted text (temporal ones inside a CAST).
fn literal_strings(l: &Literal, out: &mut Vec<String>) {
    match l {
        Literal::String(s) => out.push(s.clone()),
        Literal::Date(d) => out.push(d.to_string()),
        Literal::DateTime(dt) => out.push(dt.to_string()),
        Literal::Time(t) => out.push(t.to_string()),
        _ => {}
    }
}

fn flatten_and(e: &Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::And { args } if !args.is_empty() => args.iter().for_each(|a| flatten_and(a, out)),
        other => out.push(other.clone()),
    }
}

/// Every string value of an expression: its single-quoted literals, and the value of each
/// `from_base64('…')` (how a value holding a backslash or NUL is written) in place of its
/// Base64 text.
struct StringCollector<'a>(&'a mut Vec<String>);

impl ast::Visitor for StringCollector<'_> {
    type Break = ();

    fn pre_visit_expr(&mut self, expr: &ast::Expr) -> ControlFlow<()> {
        use base64::Engine as _;
        if let ast::Expr::Function(f) = expr
            && f.name.to_string().eq_ignore_ascii_case("from_base64")
        {
            let text = f.to_string();
            let encoded = text.split('\'').nth(1).unwrap_or_default().to_owned();
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(&encoded)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .unwrap_or_default();
            // The Base64 literal inside is visited next: it stands for `decoded`.
            self.0.push(format!("\u{0}base64:{encoded}"));
            self.0.push(decoded);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_value(&mut self, value: &ast::ValueWithSpan) -> ControlFlow<()> {
        if let ast::Value::SingleQuotedString(s) = &value.value {
            let marker = format!("\u{0}base64:{s}");
            match self.0.iter().position(|v| *v == marker) {
                Some(i) => {
                    self.0.remove(i);
                }
                None => self.0.push(s.clone()),
            }
        }
        ControlFlow::Continue(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1000, failure_persistence: None, ..ProptestConfig::default()
    })]

    #[test]
    fn no_value_changes_the_statement_structure(
        db in name(),
        table in name(),
        columns in prop::collection::vec(name(), 1..4),
        filter in predicate(),
        limit in prop::option::of(0u64..1000),
    ) {
        let translation = translate_filter(&filter);
        // A LIMIT is only pushed when nothing stays residual (the builder refuses otherwise).
        let limit = limit.filter(|_| translation.is_complete());
        let mut builder = SelectBuilder::new(TableRef::new(db.clone(), table.clone()).unwrap())
            .columns(columns.clone())
            .filter(&translation);
        if let Some(n) = limit {
            builder = builder.limit(n);
        }
        let sql = builder.build().unwrap();
        let statements = Parser::parse_sql(&MySqlDialect {}, &sql)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{sql}")))?;
        prop_assert_eq!(statements.len(), 1, "{}", sql);
        let Statement::Query(query) = &statements[0] else {
            return Err(TestCaseError::fail(format!("not a query: {sql}")));
        };
        let SetExpr::Select(select) = query.body.as_ref() else {
            return Err(TestCaseError::fail(format!("not a plain SELECT: {sql}")));
        };

        let mut unique_columns: Vec<String> = Vec::new();
        for c in columns {
            if !unique_columns.contains(&c) {
                unique_columns.push(c);
            }
        }
        let projected: Vec<String> = select.projection.iter().map(|item| match item {
            ast::SelectItem::UnnamedExpr(ast::Expr::Identifier(id)) => id.value.clone(),
            other => format!("<unexpected {other}>"),
        }).collect();
        prop_assert_eq!(projected, unique_columns);

        prop_assert_eq!(select.from.len(), 1);
        let TableFactor::Table { name: table_name, .. } = &select.from[0].relation else {
            return Err(TestCaseError::fail(format!("not a table: {sql}")));
        };
        let parts: Vec<String> = table_name.0.iter()
            .map(|p| p.as_ident().map(|i| i.value.clone()).unwrap_or_default())
            .collect();
        prop_assert_eq!(parts, vec![db, table]);
        prop_assert!(select.from[0].joins.is_empty());
        prop_assert_eq!(select.selection.is_some(), !translation.pushed.is_empty());

        let parsed_limit = query.limit_clause.as_ref().map(|l| l.to_string());
        prop_assert_eq!(parsed_limit, limit.map(|n| format!(" LIMIT {n}")));

        // Every string value of the pushed conjuncts comes back as a string literal, unchanged.
        let mut expected = Vec::new();
        let mut conjuncts = Vec::new();
        flatten_and(&filter, &mut conjuncts);
        for c in conjuncts.iter().filter(|c| render_predicate(c).is_some()) {
            pushed_strings(c, &mut expected);
        }
        let mut parsed = Vec::new();
        let _ = select.selection.visit(&mut StringCollector(&mut parsed));
        expected.sort();
        parsed.sort();
        prop_assert_eq!(parsed, expected, "{}", sql);
    }
}

fn doris_type() -> impl Strategy<Value = DorisType> {
    use DorisType as T;
    let leaf = prop_oneof![
        Just(T::Boolean),
        Just(T::TinyInt),
        Just(T::SmallInt),
        Just(T::Int),
        Just(T::BigInt),
        Just(T::LargeInt),
        Just(T::Float),
        Just(T::Double),
        Just(T::Date),
        Just(T::String),
        Just(T::Json),
        Just(T::Variant),
        Just(T::Hll),
        Just(T::Bitmap),
        Just(T::QuantileState),
        Just(T::Ipv4),
        Just(T::Ipv6),
        (1u8..=76)
            .prop_flat_map(|p| (Just(p), 0..=p))
            .prop_map(|(precision, scale)| T::Decimal { precision, scale }),
        (0u8..=6).prop_map(|precision| T::DateTime { precision }),
        (0u8..=6).prop_map(|precision| T::Time { precision }),
        (1u32..=255).prop_map(|length| T::Char { length }),
        prop::option::of(1u32..=65533).prop_map(|length| T::Varchar { length }),
        prop::option::of(1u32..=1_000_000).prop_map(|length| T::VarBinary { length }),
        prop::sample::select(vec![
            "max(int)",
            "sum(bigint)",
            "group_concat(varchar(10) null)"
        ])
        .prop_map(|s| T::AggState {
            signature: s.to_owned()
        }),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            (inner.clone(), any::<bool>()).prop_map(|(e, n)| T::Array {
                element: Box::new(e),
                element_nullable: n
            }),
            (inner.clone(), inner.clone()).prop_map(|(k, v)| T::Map {
                key: Box::new(k),
                value: Box::new(v)
            }),
            prop::collection::vec(
                (
                    name(),
                    inner,
                    any::<bool>(),
                    prop::option::of(any::<String>())
                ),
                1..4,
            )
            .prop_map(|fields| T::Struct {
                fields: fields
                    .into_iter()
                    .map(|(name, ty, nullable, comment)| StructField {
                        name,
                        ty,
                        nullable,
                        comment
                    })
                    .collect(),
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000, failure_persistence: None, ..ProptestConfig::default()
    })]

    #[test]
    fn every_spelling_of_every_type_parses_back(t in doris_type()) {
        for spelling in [Spelling::Legacy, Spelling::Upper, Spelling::Lower, Spelling::Internal] {
            let text = t.spell(spelling);
            let back: DorisType = text
                .parse()
                .map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
            prop_assert_eq!(&back, &t, "{:?}: {}", spelling, text);
        }
    }

    #[test]
    fn any_text_parses_or_fails_cleanly(text in any::<String>()) {
        // Never a panic: either a value or a typed error.
        let _ = text.parse::<DorisType>();
        let _ = doris_sql::parse_show_create(&text);
        let _ = doris_sql::scan_fragment(&text);
    }
}

/// The single-quoted literals of `sql` as a server under `NO_BACKSLASH_ESCAPES` splits them
/// (a backslash is an ordinary character, `''` a quote inside the literal), or `None` when
/// a quote is left open. Backquoted names and double-quoted strings are skipped the same way.
fn literals_without_backslash_escapes(sql: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if !matches!(c, '\'' | '"' | '`') {
            continue;
        }
        let mut text = String::new();
        loop {
            match chars.next()? {
                q if q == c && chars.peek() == Some(&c) => {
                    chars.next();
                    text.push(c);
                }
                q if q == c => break,
                other => text.push(other),
            }
        }
        if c == '\'' {
            out.push(text);
        }
    }
    Some(out)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 500, failure_persistence: None, ..ProptestConfig::default()
    })]

    /// A `CREATE TABLE`'s properties stay properties in every SQL mode: in the default mode
    /// the DDL parses back to the same keys and values; under `NO_BACKSLASH_ESCAPES` the
    /// statement still holds exactly one literal per key and per value, none left open, so
    /// no property text can be read as SQL.
    #[test]
    fn property_text_never_leaves_its_literal_in_any_sql_mode(
        properties in prop::collection::vec(
            (hostile_string().prop_filter("no NUL", |s| !s.contains('\0')),
             hostile_string().prop_filter("no NUL", |s| !s.contains('\0'))),
            1..4,
        )
    ) {
        let schema = arrow_schema::Schema::new(vec![
            arrow_schema::Field::new("k", arrow_schema::DataType::Int32, false),
        ]);
        let options = doris_sql::CreateTableOptions {
            properties: properties.clone(),
            ..Default::default()
        };
        let ddl = doris_sql::create_table_ddl(&TableRef::new("db", "t").unwrap(), &schema, &options)
            .unwrap();
        let parsed = doris_sql::parse_show_create(&ddl)
            .map_err(|e| TestCaseError::fail(format!("{e}: {ddl}")))?;
        prop_assert_eq!(&parsed.properties, &properties);
        let literals = literals_without_backslash_escapes(&ddl);
        prop_assert!(literals.is_some(), "a quote left open: {}", ddl);
        prop_assert_eq!(literals.unwrap().len(), 2 * properties.len(), "{}", ddl);
        prop_assert!(ddl.ends_with(')'), "{}", ddl);
    }
}
