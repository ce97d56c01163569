//! The emulator's `CREATE TABLE` parser (`doris_emulator::create_table`) against doris-sql's
//! `parse_show_create`, which the connector reads tables with: two parsers written apart, so
//! that a defect in one shows as a difference instead of hiding on both sides. Every
//! `CREATE TABLE` of the conformance corpus (Doris's own suites), the DDL doris-sql writes
//! for catalogs, and statements covering each part of the grammar are read by both; what
//! they read must be the same table.

// Test code: a failed unwrap is a failed test, with the value in the message.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema};
use doris_emulator::create_table::parse_create_table;
use doris_sql::{CreateTableOptions, KeyModel, TableRef, create_table_ddl, parse_show_create};

/// The `CREATE TABLE` statements of the corpus files (`CREATE TABLE … LIKE` aside).
fn corpus_ddl() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut found = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut statement = String::new();
        for line in text.lines() {
            if line.starts_with("-> ") {
                let upper = statement.to_ascii_uppercase();
                if upper.trim_start().starts_with("CREATE TABLE") && !upper.contains(" LIKE ") {
                    found.push((
                        file.file_name().unwrap().to_string_lossy().into_owned(),
                        statement.clone(),
                    ));
                }
                statement.clear();
            } else if !(statement.is_empty()
                && (line.starts_with('#') || line.starts_with("==") || line.trim().is_empty()))
            {
                statement.push_str(line);
                statement.push('\n');
            }
        }
    }
    found
}

/// Statements for the parts of the grammar the corpus does not reach.
const GRAMMAR: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS d.`we``ird` (`k` BIGINT NOT NULL COMMENT 'the \\'key\\'', `v` VARCHAR(20) NULL DEFAULT \"x\") UNIQUE KEY(`k`) COMMENT 'a table' DISTRIBUTED BY HASH(`k`) BUCKETS 4 PROPERTIES (\"enable_unique_key_merge_on_write\" = \"true\", \"function_column.sequence_col\" = \"v\")",
    "CREATE TABLE t (k INT, a ARRAY<ARRAY<INT NOT NULL>>, m MAP<VARCHAR(10), DECIMAL(38, 9)>, s STRUCT<f1:DATETIME(6), f2:CHAR(3) COMMENT 'c'>, j JSON, ip IPV6) DUPLICATE KEY(k) DISTRIBUTED BY RANDOM BUCKETS AUTO",
    "CREATE TABLE t (k DATE NOT NULL, n INT SUM DEFAULT '0', r VARCHAR(5) REPLACE_IF_NOT_NULL NULL, h HLL HLL_UNION, b BITMAP BITMAP_UNION) AGGREGATE KEY(k) PARTITION BY RANGE(k) (PARTITION p0 VALUES LESS THAN ('2024-01-01'), PARTITION p1 VALUES [('2024-01-01'), ('2024-02-01')), PARTITION pmax VALUES LESS THAN MAXVALUE) DISTRIBUTED BY HASH(k) BUCKETS 2",
    "CREATE TABLE t (k INT NOT NULL, c VARCHAR(8) NOT NULL) DUPLICATE KEY(k, c) PARTITION BY LIST(k, c) (PARTITION p1 VALUES IN ((1, 'a'), (2, 'b')), PARTITION p2 VALUES IN ((3, 'c'))) DISTRIBUTED BY HASH(k) BUCKETS 1",
    "CREATE TABLE t (k BIGINT NOT NULL AUTO_INCREMENT(10), ts DATETIME(3) DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3), v LARGEINT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ('function_column.sequence_type' = 'bigint')",
    "CREATE TABLE t (dt DATETIME NOT NULL, v DOUBLE) DUPLICATE KEY(dt) AUTO PARTITION BY RANGE (date_trunc(`dt`, 'day')) () DISTRIBUTED BY HASH(dt) BUCKETS AUTO",
];

/// The DDL doris-sql writes when a catalog creates a table from an Arrow schema.
fn catalog_ddl() -> Vec<String> {
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("score", DataType::Decimal128(12, 3), true),
        Field::new(
            "at",
            DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, None),
            true,
        ),
        Field::new(
            "tags",
            DataType::List(Arc::new(Field::new("item", DataType::Int32, true))),
            true,
        ),
    ]);
    let table = TableRef::new("d", "made").unwrap();
    [
        CreateTableOptions::default(),
        CreateTableOptions {
            key_model: KeyModel::Unique,
            key_columns: vec!["id".into()],
            buckets: Some(3),
            properties: vec![("replication_num".into(), "1".into())],
            if_not_exists: true,
        },
    ]
    .iter()
    .map(|options| create_table_ddl(&table, &schema, options).unwrap())
    .collect()
}

#[test]
fn the_emulator_and_doris_sql_read_every_create_table_alike() {
    let mut statements: Vec<(String, String)> = corpus_ddl();
    let from_corpus = statements.len();
    assert!(
        from_corpus >= 10,
        "only {from_corpus} CREATE TABLE in the corpus"
    );
    statements.extend(
        GRAMMAR
            .iter()
            .map(|s| ("grammar".to_owned(), (*s).to_owned())),
    );
    statements.extend(catalog_ddl().into_iter().map(|s| ("catalog".to_owned(), s)));
    let mut differ = Vec::new();
    for (origin, sql) in &statements {
        let ours = parse_create_table(sql);
        let theirs = parse_show_create(sql);
        match (ours, theirs) {
            (Ok(a), Ok(b)) if a == b => {}
            (Ok(a), Ok(b)) => differ.push(format!(
                "{origin}: {sql}\n  emulator: {a:?}\n  doris-sql: {b:?}"
            )),
            (a, b) => differ.push(format!(
                "{origin}: {sql}\n  emulator: {:?}\n  doris-sql: {:?}",
                a.err(),
                b.err()
            )),
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} statements read differently:\n{}",
        differ.len(),
        statements.len(),
        differ.join("\n")
    );
}

/// Where doris-sql reads on (it reads what any release prints), the server refuses what it
/// does not run; both still agree on the rest of such a statement.
#[test]
fn clauses_doris_sql_skips_are_refused_by_the_emulator() {
    let ddl = "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 ROLLUP (r1 (k))";
    assert!(parse_show_create(ddl).is_ok());
    let refused = parse_create_table(ddl).unwrap_err().to_string();
    assert!(refused.contains("does not run ROLLUP"), "{refused}");
}
