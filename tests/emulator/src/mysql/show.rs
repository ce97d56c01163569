//! What the FE prints about tables: column definitions for Doris types, `SHOW CREATE TABLE`
//! text and `DESC` rows, in the Doris 2.1.6+/3.x/4.x (lower-case) profile.

use std::fmt::Write as _;

use doris_sql::{
    Buckets, ColumnDefault, Distribution, DorisType, KeyModel, PartitionKind, PartitionValues,
    Spelling,
};
use mysql_common::constants::ColumnType;

use super::wire::ColumnDef;
use crate::catalog::Table;

/// The column definition Doris sends for a column of type `ty` (docs/emulator.md, "FE MySQL face").
pub fn column_def(name: &str, ty: &DorisType) -> ColumnDef {
    use ColumnType as C;
    let (column_type, length, decimals) = match ty {
        DorisType::Boolean => (C::MYSQL_TYPE_TINY, 1, 0),
        DorisType::TinyInt => (C::MYSQL_TYPE_TINY, 4, 0),
        DorisType::SmallInt => (C::MYSQL_TYPE_SHORT, 6, 0),
        DorisType::Int => (C::MYSQL_TYPE_LONG, 11, 0),
        DorisType::BigInt => (C::MYSQL_TYPE_LONGLONG, 20, 0),
        DorisType::Float => (C::MYSQL_TYPE_FLOAT, 12, 31),
        DorisType::Double => (C::MYSQL_TYPE_DOUBLE, 22, 31),
        DorisType::Decimal { precision, scale } => (
            C::MYSQL_TYPE_NEWDECIMAL,
            u32::from(*precision) + if *scale == 0 { 1 } else { 2 },
            *scale,
        ),
        DorisType::Date => (C::MYSQL_TYPE_DATE, 10, 0),
        DorisType::DateTime { precision } => (
            C::MYSQL_TYPE_DATETIME,
            19 + if *precision > 0 {
                u32::from(*precision) + 1
            } else {
                0
            },
            *precision,
        ),
        DorisType::Time { precision } => (C::MYSQL_TYPE_TIME, 10, *precision),
        // The wall clock and its offset, as text.
        DorisType::TimestampTz { precision } => (
            C::MYSQL_TYPE_VAR_STRING,
            25 + if *precision > 0 {
                u32::from(*precision) + 1
            } else {
                0
            },
            *precision,
        ),
        DorisType::String => (C::MYSQL_TYPE_BLOB, 255, 0),
        DorisType::Json | DorisType::Variant => (C::MYSQL_TYPE_JSON, 255, 0),
        DorisType::VarBinary { .. } => (C::MYSQL_TYPE_VAR_STRING, 255, 0),
        _ => (C::MYSQL_TYPE_STRING, 255, 0),
    };
    ColumnDef {
        name: name.to_owned(),
        column_type,
        length,
        decimals,
    }
}

/// How names are written in the DDL text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameQuoting {
    /// As Doris's `SHOW CREATE TABLE` prints them: between backticks, an inner backtick left
    /// as is (Doris's `Column.toSql` appends the name unescaped), so the text is ambiguous
    /// for a name holding one.
    AsDoris,
    /// Inner backticks doubled: SQL that parses back to the same names (the snapshot file).
    Escaped,
}

impl NameQuoting {
    fn quote(self, name: &str) -> String {
        match self {
            NameQuoting::AsDoris => format!("`{name}`"),
            NameQuoting::Escaped => format!("`{}`", name.replace('`', "``")),
        }
    }
}

fn single_quoted(text: &str) -> String {
    let mut out = String::new();
    doris_sql::push_string_literal(&mut out, text);
    out
}

/// The properties Doris prints for every OLAP table, in its order (as `SHOW CREATE TABLE` of Doris 2.1+ shows them).
fn default_properties(table: &Table) -> Vec<(String, String)> {
    let mut props = vec![
        ("replication_allocation", "tag.location.default: 1"),
        ("min_load_replica_num", "-1"),
        ("is_being_synced", "false"),
        ("storage_medium", "hdd"),
        ("storage_format", "V2"),
        ("inverted_index_storage_format", "V2"),
    ];
    if table.schema.merge_on_write {
        props.push(("enable_unique_key_merge_on_write", "true"));
    }
    props.extend([
        ("light_schema_change", "true"),
        ("disable_auto_compaction", "false"),
        ("enable_single_replica_compaction", "false"),
        ("group_commit_interval_ms", "10000"),
        ("group_commit_data_bytes", "134217728"),
    ]);
    let mut out: Vec<(String, String)> = props
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    // What the DDL set and Doris keeps (sequence columns, custom settings) follows.
    for (k, v) in &table.schema.properties {
        let replaced = [
            "replication_num",
            "replication_allocation",
            "enable_unique_key_merge_on_write",
        ];
        if !replaced.contains(&k.as_str()) && !out.iter().any(|(ok, _)| ok == k) {
            out.push((k.clone(), v.clone()));
        }
    }
    if table.schema.key_model == Some(KeyModel::Unique) {
        out.push(("enable_mow_light_delete".into(), "false".into()));
    }
    out
}

/// `SHOW CREATE TABLE` text, names written as Doris writes them.
pub fn show_create_table(table: &Table, spelling: Spelling) -> String {
    table_ddl(table, spelling, NameQuoting::AsDoris)
}

/// The table's DDL in `SHOW CREATE TABLE`'s layout, names quoted as `quoting` says.
pub fn table_ddl(table: &Table, spelling: Spelling, quoting: NameQuoting) -> String {
    let quote = |name: &str| quoting.quote(name);
    let s = &table.schema;
    let mut out = format!("CREATE TABLE {} (\n", quote(&s.name));
    let lines: Vec<String> = s
        .columns
        .iter()
        .map(|c| {
            let mut line = format!("  {} {}", quote(&c.name), c.ty.spell(spelling));
            if s.key_model == Some(KeyModel::Aggregate)
                && let Some(a) = c.aggregation
            {
                let _ = write!(line, " {}", a.as_str());
            }
            line.push_str(if c.nullable { " NULL" } else { " NOT NULL" });
            if c.auto_increment {
                line.push_str(" AUTO_INCREMENT(1)");
            }
            match &c.default {
                Some(ColumnDefault::Null) => line.push_str(" DEFAULT NULL"),
                Some(d) => {
                    let _ = write!(line, " DEFAULT {d}");
                }
                None => {}
            }
            if let Some(comment) = &c.comment {
                let _ = write!(line, " COMMENT {}", single_quoted(comment));
            }
            line
        })
        .collect();
    out.push_str(&lines.join(",\n"));
    out.push_str("\n) ENGINE=OLAP\n");
    if let Some(model) = s.key_model {
        let keyword = match model {
            KeyModel::Duplicate => "DUPLICATE",
            KeyModel::Unique => "UNIQUE",
            KeyModel::Aggregate => "AGGREGATE",
        };
        let keys: Vec<String> = s.key_columns.iter().map(|k| quote(k)).collect();
        let _ = writeln!(out, "{keyword} KEY({})", keys.join(", "));
    }
    if let Some(comment) = &s.comment {
        let _ = writeln!(out, "COMMENT {}", single_quoted(comment));
    }
    if let Some(p) = &s.partitioning {
        let kind = match p.kind {
            PartitionKind::Range => "RANGE",
            PartitionKind::List => "LIST",
        };
        let cols: Vec<String> = p.columns.iter().map(|c| quote(c)).collect();
        let _ = write!(
            out,
            "{}PARTITION BY {kind}({})\n(",
            if p.auto { "AUTO " } else { "" },
            cols.join(", ")
        );
        let tuple = |values: &[String]| {
            let quoted: Vec<String> = values
                .iter()
                .map(|v| {
                    if v.eq_ignore_ascii_case("MAXVALUE") {
                        "MAXVALUE".into()
                    } else {
                        format!("\"{v}\"")
                    }
                })
                .collect();
            format!("({})", quoted.join(", "))
        };
        let parts: Vec<String> = p
            .partitions
            .iter()
            .map(|part| match &part.values {
                PartitionValues::Range { lower, upper } => {
                    format!(
                        "PARTITION {} VALUES [{}, {})",
                        part.name,
                        tuple(lower),
                        tuple(upper)
                    )
                }
                PartitionValues::LessThan(upper) => {
                    format!("PARTITION {} VALUES LESS THAN {}", part.name, tuple(upper))
                }
                PartitionValues::In(tuples) => {
                    let items: Vec<String> = tuples
                        .iter()
                        .map(|t| {
                            if t.len() == 1 {
                                format!("\"{}\"", t[0])
                            } else {
                                tuple(t)
                            }
                        })
                        .collect();
                    format!("PARTITION {} VALUES IN ({})", part.name, items.join(","))
                }
                PartitionValues::Other(text) => text.clone(),
            })
            .collect();
        out.push_str(&parts.join(",\n"));
        out.push_str(")\n");
    }
    match &s.distribution {
        Some(Distribution::Hash { columns, buckets }) => {
            let cols: Vec<String> = columns.iter().map(|c| quote(c)).collect();
            let _ = writeln!(
                out,
                "DISTRIBUTED BY HASH({}) BUCKETS {}",
                cols.join(", "),
                bucket_text(*buckets)
            );
        }
        Some(Distribution::Random { buckets }) => {
            let _ = writeln!(
                out,
                "DISTRIBUTED BY RANDOM BUCKETS {}",
                bucket_text(*buckets)
            );
        }
        None => {}
    }
    out.push_str("PROPERTIES (\n");
    let props: Vec<String> = default_properties(table)
        .iter()
        .map(|(k, v)| format!("\"{k}\" = \"{v}\""))
        .collect();
    out.push_str(&props.join(",\n"));
    out.push_str("\n);");
    out
}

fn bucket_text(buckets: Buckets) -> String {
    match buckets {
        Buckets::Fixed(n) => n.to_string(),
        Buckets::Auto => "AUTO".into(),
    }
}

/// `SHOW COLUMNS FROM t` rows as Doris's FE writes them (ShowExecutor's
/// `handleShowColumn`): unlike `DESC`, `Null` and `Key` are `YES`/`NO`, and `Extra` is the
/// aggregation a column was declared with (empty otherwise, where `DESC` says `NONE`).
pub fn show_columns_rows(table: &Table, spelling: Spelling) -> Vec<Vec<Option<String>>> {
    table
        .schema
        .columns
        .iter()
        .map(|c| {
            let yes_no = |b: bool| Some(if b { "YES" } else { "NO" }.to_owned());
            vec![
                Some(c.name.clone()),
                Some(c.ty.spell(spelling)),
                yes_no(c.nullable),
                yes_no(c.is_key),
                default_text(c.default.as_ref()),
                Some(c.aggregation.map_or("", |a| a.as_str()).to_owned()),
            ]
        })
        .collect()
}

fn default_text(default: Option<&ColumnDefault>) -> Option<String> {
    match default {
        None | Some(ColumnDefault::Null) => None,
        Some(ColumnDefault::Text(t)) => Some(t.clone()),
        Some(ColumnDefault::CurrentTimestamp) => Some("CURRENT_TIMESTAMP".into()),
        Some(ColumnDefault::Expr(e)) => Some(e.clone()),
    }
}

/// `DESC` rows: Field, Type, Null (`Yes`/`No`), Key (`true`/`false`), Default (SQL NULL
/// when none), Extra (the aggregation on AGGREGATE tables, `NONE` on other value columns,
/// empty on keys).
pub fn describe_rows(table: &Table, spelling: Spelling) -> Vec<Vec<Option<String>>> {
    let s = &table.schema;
    s.columns
        .iter()
        .map(|c| {
            let extra = if c.is_key {
                String::new()
            } else if s.key_model == Some(KeyModel::Aggregate) {
                c.aggregation.map_or("NONE", |a| a.as_str()).to_owned()
            } else {
                "NONE".to_owned()
            };
            let default = default_text(c.default.as_ref());
            vec![
                Some(c.name.clone()),
                Some(c.ty.spell(spelling)),
                Some(if c.nullable { "Yes" } else { "No" }.to_owned()),
                Some(c.is_key.to_string()),
                default,
                Some(extra),
            ]
        })
        .collect()
}
