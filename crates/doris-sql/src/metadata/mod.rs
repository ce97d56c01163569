//! Table metadata: the schema of one Doris table, read from `SHOW CREATE TABLE` and `DESC`.
//!
//! [`parse_show_create`] gives the full structure (key model, keys, merge-on-write,
//! sequence column, aggregations, partitioning, distribution, properties);
//! [`parse_describe`] reads `DESC` rows; [`TableSchema::reconcile`] checks that the two
//! agree. Both parsers are quote-aware, tolerate comments, properties and the spelling
//! differences between releases, and return [`SqlError::MetadataParse`] on malformed
//! input (never a panic).
//!
//! ```
//! use doris_sql::{parse_show_create, KeyModel};
//! let ddl = "CREATE TABLE `t` (\n  `id` bigint NOT NULL,\n  `v` int SUM NULL DEFAULT \"0\"\n) \
//!            ENGINE=OLAP\nAGGREGATE KEY(`id`)\nDISTRIBUTED BY HASH(`id`) BUCKETS 8\n\
//!            PROPERTIES (\n\"replication_allocation\" = \"tag.location.default: 1\"\n);";
//! let table = parse_show_create(ddl).unwrap();
//! assert_eq!(table.key_model, Some(KeyModel::Aggregate));
//! assert_eq!(table.key_columns, vec!["id"]);
//! assert_eq!(table.column("v").unwrap().default.as_ref().unwrap().to_string(), "\"0\"");
//! ```

mod describe;
pub(crate) mod lex;
mod show_create;

pub use describe::{DescColumn, DescRow, parse_describe};
pub use show_create::{parse_show_create, parse_show_create_checked};

use crate::error::{Result, SqlError};
use crate::types::DorisType;

/// A Doris table's key model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyModel {
    /// `DUPLICATE KEY(…)`: rows are kept as loaded.
    Duplicate,
    /// `UNIQUE KEY(…)`: the last row per key wins (or the highest sequence value).
    Unique,
    /// `AGGREGATE KEY(…)`: value columns are merged per key by their aggregation.
    Aggregate,
}

/// How an AGGREGATE table merges a value column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Aggregation {
    /// SUM
    Sum,
    /// MAX
    Max,
    /// MIN
    Min,
    /// REPLACE
    Replace,
    /// REPLACE_IF_NOT_NULL
    ReplaceIfNotNull,
    /// HLL_UNION
    HllUnion,
    /// BITMAP_UNION
    BitmapUnion,
    /// QUANTILE_UNION
    QuantileUnion,
    /// GENERIC (agg_state columns)
    Generic,
}

impl Aggregation {
    /// Parses Doris's spelling, case-insensitively; `NONE` and unknown words give `None`.
    pub fn parse(word: &str) -> Option<Self> {
        Some(match word.to_ascii_uppercase().as_str() {
            "SUM" => Aggregation::Sum,
            "MAX" => Aggregation::Max,
            "MIN" => Aggregation::Min,
            "REPLACE" => Aggregation::Replace,
            "REPLACE_IF_NOT_NULL" => Aggregation::ReplaceIfNotNull,
            "HLL_UNION" => Aggregation::HllUnion,
            "BITMAP_UNION" => Aggregation::BitmapUnion,
            "QUANTILE_UNION" => Aggregation::QuantileUnion,
            "GENERIC" => Aggregation::Generic,
            _ => return None,
        })
    }

    /// Doris's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Aggregation::Sum => "SUM",
            Aggregation::Max => "MAX",
            Aggregation::Min => "MIN",
            Aggregation::Replace => "REPLACE",
            Aggregation::ReplaceIfNotNull => "REPLACE_IF_NOT_NULL",
            Aggregation::HllUnion => "HLL_UNION",
            Aggregation::BitmapUnion => "BITMAP_UNION",
            Aggregation::QuantileUnion => "QUANTILE_UNION",
            Aggregation::Generic => "GENERIC",
        }
    }
}

/// A column default as `SHOW CREATE TABLE` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnDefault {
    /// `DEFAULT NULL`
    Null,
    /// `DEFAULT "v"` (the unquoted text).
    Text(String),
    /// `DEFAULT CURRENT_TIMESTAMP[(p)]`
    CurrentTimestamp,
    /// Any other expression (e.g. `BITMAP_EMPTY`, `PI`), verbatim.
    Expr(String),
}

impl std::fmt::Display for ColumnDefault {
    /// The DDL spelling after `DEFAULT`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ColumnDefault::Null => f.write_str("NULL"),
            ColumnDefault::Text(t) => {
                write!(f, "\"{}\"", t.replace('\\', "\\\\").replace('"', "\\\""))
            }
            ColumnDefault::CurrentTimestamp => f.write_str("CURRENT_TIMESTAMP"),
            ColumnDefault::Expr(e) => f.write_str(e),
        }
    }
}

/// One column of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// The column name.
    pub name: String,
    /// The column type.
    pub ty: DorisType,
    /// Whether NULL is allowed.
    pub nullable: bool,
    /// Whether the column is part of the key.
    pub is_key: bool,
    /// The aggregation of a value column of an AGGREGATE table.
    pub aggregation: Option<Aggregation>,
    /// The declared default.
    pub default: Option<ColumnDefault>,
    /// `AUTO_INCREMENT` column.
    pub auto_increment: bool,
    /// A generated column (`AS (expr)`, `GENERATED ALWAYS AS (expr)`): Doris computes it,
    /// and refuses it in an INSERT's column list ("The value specified for generated column
    /// … is not allowed") and in a load's data.
    pub generated: bool,
    /// The column comment.
    pub comment: Option<String>,
}

/// How a UNIQUE table orders competing rows for a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SequenceColumn {
    /// `"function_column.sequence_col" = "<column>"`: an existing column orders the rows.
    Mapped(String),
    /// `"function_column.sequence_type" = "<type>"`: a hidden column the load must fill
    /// (Stream Load header `function_column.sequence_col`).
    Hidden(DorisType),
}

/// The partitioning scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionKind {
    /// `PARTITION BY RANGE`
    Range,
    /// `PARTITION BY LIST`
    List,
}

/// The bounds of one partition, values as Doris prints them (unquoted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionValues {
    /// `VALUES [(lower…), (upper…))`
    Range {
        /// Inclusive lower bound, one value per partition column.
        lower: Vec<String>,
        /// Exclusive upper bound.
        upper: Vec<String>,
    },
    /// `VALUES LESS THAN (upper…)`; `MAXVALUE` is kept as that word.
    LessThan(Vec<String>),
    /// `VALUES IN (…)`: one tuple per listed value.
    In(Vec<Vec<String>>),
    /// A form this parser does not break down, verbatim.
    Other(String),
}

/// One partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    /// The partition name.
    pub name: String,
    /// Its bounds.
    pub values: PartitionValues,
}

/// `PARTITION BY …`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partitioning {
    /// RANGE or LIST.
    pub kind: PartitionKind,
    /// `AUTO PARTITION BY …` (partitions are created on load).
    pub auto: bool,
    /// The partition columns.
    pub columns: Vec<String>,
    /// The partitions, in order.
    pub partitions: Vec<Partition>,
}

/// The bucket count of a distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Buckets {
    /// `BUCKETS n`
    Fixed(u32),
    /// `BUCKETS AUTO`, or no BUCKETS clause.
    Auto,
}

/// `DISTRIBUTED BY …`
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Distribution {
    /// `HASH(cols) BUCKETS n`
    Hash {
        /// The hash columns.
        columns: Vec<String>,
        /// The bucket count.
        buckets: Buckets,
    },
    /// `RANDOM BUCKETS n`
    Random {
        /// The bucket count.
        buckets: Buckets,
    },
}

/// The schema of one Doris table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSchema {
    /// The database of a qualified name (`CREATE TABLE db.t`); `SHOW CREATE TABLE` prints
    /// the bare table name, so this is usually `None` there.
    pub database: Option<String>,
    /// The table name as printed.
    pub name: String,
    /// The columns, in table order.
    pub columns: Vec<Column>,
    /// The key model; `None` when no key clause was printed (a duplicate table without
    /// keys, or DESC-only metadata that cannot tell DUPLICATE from UNIQUE).
    pub key_model: Option<KeyModel>,
    /// The key columns, in key order.
    pub key_columns: Vec<String>,
    /// UNIQUE merge-on-write (`"enable_unique_key_merge_on_write" = "true"`).
    pub merge_on_write: bool,
    /// The sequence column of a UNIQUE table.
    pub sequence: Option<SequenceColumn>,
    /// Partitioning, if any.
    pub partitioning: Option<Partitioning>,
    /// Distribution, if printed.
    pub distribution: Option<Distribution>,
    /// The table comment, if any (`OLAP` counts as none: older releases printed it by default).
    pub comment: Option<String>,
    /// Every property, in printed order.
    pub properties: Vec<(String, String)>,
}

impl TableSchema {
    /// The column named `name` (Doris column names are case-insensitive).
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// The value of a property, if present.
    pub fn property(&self, key: &str) -> Option<&str> {
        self.properties
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Builds a schema from `DESC` alone (when `SHOW CREATE TABLE` is not allowed).
    ///
    /// The key model is `Aggregate` when a value column has an aggregation, else unknown.
    ///
    /// ```
    /// use doris_sql::{parse_describe, DescRow, KeyModel, TableSchema};
    /// let rows = [("k", "int", "true", ""), ("v", "bigint", "false", "SUM")].map(|(f, t, k, e)| DescRow {
    ///     field: f.into(), type_text: t.into(), null: "Yes".into(), key: k.into(),
    ///     default: None, extra: e.into(),
    /// });
    /// let schema = TableSchema::from_describe("t", &parse_describe(&rows).unwrap());
    /// assert_eq!(schema.key_model, Some(KeyModel::Aggregate));
    /// ```
    pub fn from_describe(name: impl Into<String>, desc: &[DescColumn]) -> Self {
        let key_columns = desc
            .iter()
            .filter(|c| c.is_key)
            .map(|c| c.name.clone())
            .collect();
        let key_model = desc
            .iter()
            .any(|c| c.aggregation.is_some())
            .then_some(KeyModel::Aggregate);
        Self {
            database: None,
            name: name.into(),
            columns: desc
                .iter()
                .map(|c| Column {
                    name: c.name.clone(),
                    ty: c.ty.clone(),
                    nullable: c.nullable,
                    is_key: c.is_key,
                    aggregation: c.aggregation,
                    default: c.default.clone().map(ColumnDefault::Text),
                    auto_increment: c
                        .extras
                        .iter()
                        .any(|e| e.eq_ignore_ascii_case("AUTO_INCREMENT")),
                    // `GENERATED` or `STORED GENERATED`, by release.
                    generated: c
                        .extras
                        .iter()
                        .any(|e| e.to_ascii_uppercase().ends_with("GENERATED")),
                    comment: None,
                })
                .collect(),
            key_model,
            key_columns,
            merge_on_write: false,
            sequence: None,
            partitioning: None,
            distribution: None,
            comment: None,
            properties: Vec::new(),
        }
    }

    /// Checks that `DESC` rows describe the same columns as this schema: same names in the
    /// same order, same nullability and key flags. Types are taken from `SHOW CREATE TABLE`
    /// (some releases abbreviate them in `DESC`, e.g. a bare `DECIMAL`).
    ///
    /// ```
    /// use doris_sql::{parse_describe, parse_show_create, DescRow};
    /// let table = parse_show_create("CREATE TABLE t (`k` int NOT NULL) DUPLICATE KEY(`k`)").unwrap();
    /// let row = |null: &str| DescRow {
    ///     field: "k".into(), type_text: "int".into(), null: null.into(),
    ///     key: "true".into(), default: None, extra: String::new(),
    /// };
    /// assert!(table.reconcile(&parse_describe(&[row("No")]).unwrap()).is_ok());
    /// assert!(table.reconcile(&parse_describe(&[row("Yes")]).unwrap()).is_err());
    /// ```
    pub fn reconcile(&self, desc: &[DescColumn]) -> Result<()> {
        if desc.len() != self.columns.len() {
            return Err(SqlError::MetadataParse(format!(
                "SHOW CREATE TABLE lists {} columns but DESC lists {}",
                self.columns.len(),
                desc.len()
            )));
        }
        for (c, d) in self.columns.iter().zip(desc) {
            if !c.name.eq_ignore_ascii_case(&d.name) {
                return Err(SqlError::MetadataParse(format!(
                    "column order differs: SHOW CREATE TABLE has {:?} where DESC has {:?}",
                    c.name, d.name
                )));
            }
            if c.nullable != d.nullable || c.is_key != d.is_key {
                return Err(SqlError::MetadataParse(format!(
                    "SHOW CREATE TABLE and DESC disagree on nullability or key flag of {:?}",
                    c.name
                )));
            }
        }
        Ok(())
    }
}
