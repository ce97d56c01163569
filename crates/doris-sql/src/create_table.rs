//! `CREATE TABLE` from an Arrow schema: what a catalog's `create_table` sends.
//!
//! Each Arrow type maps to the Doris type that holds every value exactly
//! ([`doris_type_for`]); a type with no such column (binary data, timestamps with a time
//! zone or in nanoseconds, unsigned 128-bit, null) is refused by name. The table is
//! DUPLICATE KEY on its first column unless told otherwise ([`CreateTableOptions`]);
//! key columns come first, in key order, as Doris requires, and a STRING key becomes
//! `VARCHAR(65533)` (Doris refuses STRING keys). Distribution is `HASH(first key)` with
//! `BUCKETS AUTO` unless a count is given; properties are passed as given.
//!
//! ```
//! use arrow_schema::{DataType, Field, Schema};
//! use doris_sql::{CreateTableOptions, KeyModel, TableRef, create_table_ddl};
//! let schema = Schema::new(vec![
//!     Field::new("name", DataType::Utf8, true),
//!     Field::new("id", DataType::Int64, false),
//! ]);
//! let options = CreateTableOptions {
//!     key_model: KeyModel::Unique,
//!     key_columns: vec!["id".into()],
//!     buckets: Some(4),
//!     properties: vec![("replication_num".into(), "1".into())],
//!     if_not_exists: false,
//! };
//! assert_eq!(
//!     create_table_ddl(&TableRef::new("db", "t").unwrap(), &schema, &options).unwrap(),
//!     "CREATE TABLE `db`.`t` (`id` BIGINT NOT NULL, `name` TEXT NULL) UNIQUE KEY(`id`) \
//!      DISTRIBUTED BY HASH(`id`) BUCKETS 4 PROPERTIES ('replication_num' = '1')"
//! );
//! ```

use arrow_schema::{DataType, Schema, TimeUnit};

use crate::error::{Result, SqlError};
use crate::ident::{TableRef, quote_ident};
use crate::metadata::KeyModel;
use crate::types::{DorisType, Spelling, StructField};

/// How the table is keyed, distributed and configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateTableOptions {
    /// DUPLICATE (the default), UNIQUE or AGGREGATE (the last is refused: its value
    /// columns need an aggregation each, which a schema does not say).
    pub key_model: KeyModel,
    /// The key columns, in key order; empty: the schema's first column.
    pub key_columns: Vec<String>,
    /// `BUCKETS n`; `None`: `BUCKETS AUTO`.
    pub buckets: Option<u32>,
    /// `PROPERTIES (…)`, in order (e.g. `replication_num`).
    pub properties: Vec<(String, String)>,
    /// `CREATE TABLE IF NOT EXISTS`.
    pub if_not_exists: bool,
}

impl Default for CreateTableOptions {
    fn default() -> Self {
        Self {
            key_model: KeyModel::Duplicate,
            key_columns: Vec::new(),
            buckets: None,
            properties: Vec::new(),
            if_not_exists: false,
        }
    }
}

/// Most buckets [`CreateTableOptions::from_properties`] accepts.
pub const MAX_BUCKETS: u32 = 1_000_000;

impl CreateTableOptions {
    /// Options from a catalog's `(key, value)` properties, as a catalog API hands them
    /// over: `key_model` (`duplicate` or `unique`), `key_columns` (comma-separated names),
    /// `buckets` (1 to [`MAX_BUCKETS`]); every other key is a Doris table property, kept
    /// in order. Errors name the key, never its value.
    ///
    /// ```
    /// use doris_sql::{CreateTableOptions, KeyModel};
    /// let options = CreateTableOptions::from_properties([
    ///     ("key_model", "unique"), ("key_columns", "id, day"), ("buckets", "8"),
    ///     ("replication_num", "1"),
    /// ]).unwrap();
    /// assert_eq!(options.key_model, KeyModel::Unique);
    /// assert_eq!(options.key_columns, ["id", "day"]);
    /// assert_eq!(options.buckets, Some(8));
    /// assert_eq!(options.properties, [("replication_num".to_owned(), "1".to_owned())]);
    /// assert!(CreateTableOptions::from_properties([("buckets", "0")]).is_err());
    /// ```
    pub fn from_properties<K, V>(properties: impl IntoIterator<Item = (K, V)>) -> Result<Self>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let mut options = Self::default();
        for (key, value) in properties {
            let (key, value) = (key.into(), value.into());
            match key.as_str() {
                "key_model" => {
                    options.key_model = match value.trim().to_ascii_lowercase().as_str() {
                        "duplicate" => KeyModel::Duplicate,
                        "unique" => KeyModel::Unique,
                        _ => {
                            return Err(SqlError::InvalidQuery(
                                "key_model must be 'duplicate' or 'unique'".into(),
                            ));
                        }
                    }
                }
                "key_columns" => {
                    options.key_columns = value
                        .split(',')
                        .map(str::trim)
                        .filter(|name| !name.is_empty())
                        .map(str::to_owned)
                        .collect();
                }
                "buckets" => {
                    options.buckets = match value.trim().parse::<u32>() {
                        Ok(n) if (1..=MAX_BUCKETS).contains(&n) => Some(n),
                        _ => {
                            return Err(SqlError::InvalidQuery(format!(
                                "buckets must be an integer from 1 to {MAX_BUCKETS}"
                            )));
                        }
                    }
                }
                "" => return Err(SqlError::InvalidQuery("a property key is empty".into())),
                _ => options.properties.push((key, value)),
            }
        }
        Ok(options)
    }
}

fn unsupported(name: &str, data_type: &DataType, why: &str) -> SqlError {
    SqlError::InvalidQuery(format!(
        "column {name}: Arrow {data_type} has no exact Doris column type ({why})"
    ))
}

/// The Doris column type that holds every value of `data_type` exactly.
pub fn doris_type_for(name: &str, data_type: &DataType) -> Result<DorisType> {
    use DataType as A;
    Ok(match data_type {
        A::Boolean => DorisType::Boolean,
        A::Int8 => DorisType::TinyInt,
        A::Int16 | A::UInt8 => DorisType::SmallInt,
        A::Int32 | A::UInt16 => DorisType::Int,
        A::Int64 | A::UInt32 => DorisType::BigInt,
        A::UInt64 => DorisType::LargeInt,
        A::Float16 | A::Float32 => DorisType::Float,
        A::Float64 => DorisType::Double,
        A::Decimal32(p, s) | A::Decimal64(p, s) | A::Decimal128(p, s) | A::Decimal256(p, s) => {
            match u8::try_from(*s) {
                Ok(scale) if *p <= 76 && scale <= *p => DorisType::Decimal {
                    precision: *p,
                    scale,
                },
                _ => {
                    return Err(unsupported(
                        name,
                        data_type,
                        "a negative or too large scale",
                    ));
                }
            }
        }
        A::Utf8 | A::LargeUtf8 | A::Utf8View => DorisType::String,
        A::Date32 | A::Date64 => DorisType::Date,
        A::Timestamp(unit, None) => DorisType::DateTime {
            precision: match unit {
                TimeUnit::Second => 0,
                TimeUnit::Millisecond => 3,
                TimeUnit::Microsecond => 6,
                TimeUnit::Nanosecond => {
                    return Err(unsupported(name, data_type, "DATETIME keeps microseconds"));
                }
            },
        },
        A::Timestamp(_, Some(_)) => {
            return Err(unsupported(
                name,
                data_type,
                "convert it to naive UTC first",
            ));
        }
        A::List(item) | A::LargeList(item) | A::FixedSizeList(item, _) => DorisType::Array {
            element: Box::new(doris_type_for(name, item.data_type())?),
            element_nullable: true,
        },
        A::Map(entries, _) => match entries.data_type() {
            A::Struct(kv) if kv.len() == 2 => DorisType::Map {
                key: Box::new(doris_type_for(name, kv[0].data_type())?),
                value: Box::new(doris_type_for(name, kv[1].data_type())?),
            },
            _ => return Err(unsupported(name, data_type, "a malformed map")),
        },
        A::Struct(fields) => DorisType::Struct {
            fields: fields
                .iter()
                .map(|f| {
                    Ok(StructField {
                        name: f.name().clone(),
                        ty: doris_type_for(name, f.data_type())?,
                        nullable: true,
                        comment: None,
                    })
                })
                .collect::<Result<_>>()?,
        },
        A::Dictionary(_, value) => doris_type_for(name, value)?,
        _ => return Err(unsupported(name, data_type, "no column type holds it")),
    })
}

/// `CREATE TABLE` for `table` with `schema`'s columns (see the module docs).
pub fn create_table_ddl(
    table: &TableRef,
    schema: &Schema,
    options: &CreateTableOptions,
) -> Result<String> {
    let first = schema
        .fields()
        .first()
        .ok_or_else(|| SqlError::InvalidQuery("a table needs at least one column".into()))?;
    let keys: Vec<String> = if options.key_columns.is_empty() {
        vec![first.name().clone()]
    } else {
        options.key_columns.clone()
    };
    let model = match options.key_model {
        KeyModel::Duplicate => "DUPLICATE",
        KeyModel::Unique => "UNIQUE",
        KeyModel::Aggregate => {
            return Err(SqlError::InvalidQuery(
                "an AGGREGATE table needs an aggregation per value column; create it with DDL"
                    .into(),
            ));
        }
    };
    let field = |name: &str| {
        schema
            .fields()
            .iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                SqlError::InvalidQuery(format!("key column {name} is not in the schema"))
            })
    };
    let mut columns = Vec::with_capacity(schema.fields().len());
    for (i, key) in keys.iter().enumerate() {
        if keys[..i].contains(key) {
            return Err(SqlError::InvalidQuery(format!(
                "key column {key} is named twice"
            )));
        }
        let f = field(key)?;
        let ty = match doris_type_for(f.name(), f.data_type())? {
            // Doris refuses STRING keys.
            DorisType::String => DorisType::Varchar {
                length: Some(65533),
            },
            DorisType::Float | DorisType::Double => {
                return Err(SqlError::InvalidQuery(format!(
                    "key column {key}: Doris keys cannot be FLOAT or DOUBLE"
                )));
            }
            ty @ (DorisType::Array { .. } | DorisType::Map { .. } | DorisType::Struct { .. }) => {
                return Err(SqlError::InvalidQuery(format!(
                    "key column {key}: Doris keys cannot be {}",
                    ty.spell(Spelling::Upper)
                )));
            }
            ty => ty,
        };
        columns.push(column_sql(f.name(), &ty, f.is_nullable())?);
    }
    for f in schema.fields() {
        if !keys.contains(f.name()) {
            let ty = doris_type_for(f.name(), f.data_type())?;
            columns.push(column_sql(f.name(), &ty, f.is_nullable())?);
        }
    }
    let key_list = keys
        .iter()
        .map(|k| quote_ident("column", k))
        .collect::<Result<Vec<_>>>()?
        .join(", ");
    let buckets = match options.buckets {
        Some(0) => return Err(SqlError::InvalidQuery("buckets must be at least 1".into())),
        Some(n) => n.to_string(),
        None => "AUTO".to_owned(),
    };
    let mut ddl = format!(
        "CREATE TABLE {}{} ({}) {model} KEY({key_list}) DISTRIBUTED BY HASH({}) BUCKETS {buckets}",
        if options.if_not_exists {
            "IF NOT EXISTS "
        } else {
            ""
        },
        table.to_sql(),
        columns.join(", "),
        quote_ident("column", &keys[0])?,
    );
    if !options.properties.is_empty() {
        let properties = options
            .properties
            .iter()
            .map(|(k, v)| format!("{} = {}", property_string(k), property_string(v)))
            .collect::<Vec<_>>()
            .join(", ");
        ddl.push_str(&format!(" PROPERTIES ({properties})"));
    }
    Ok(ddl)
}

fn column_sql(name: &str, ty: &DorisType, nullable: bool) -> Result<String> {
    Ok(format!(
        "{} {} {}",
        quote_ident("column", name)?,
        ty.spell(Spelling::Upper),
        if nullable { "NULL" } else { "NOT NULL" }
    ))
}

/// A property key or value as a single-quoted literal (`PROPERTIES ('k' = 'v')`, which
/// Doris reads as it reads `SHOW CREATE TABLE`'s double-quoted form): a quote is doubled,
/// so no SQL mode lets the text out of its quotes ([`push_string_literal`](crate::push_string_literal); a double-quoted
/// string escaped with backslashes would end at `\"` under `NO_BACKSLASH_ESCAPES`).
///
/// ```
/// assert_eq!(doris_sql::property_string("it's"), "'it''s'");
/// assert_eq!(doris_sql::property_string("a\"b"), "'a\"b'");
/// ```
pub fn property_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    crate::push_string_literal(&mut out, s);
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;

    use arrow_schema::Field;

    use super::*;

    fn table() -> TableRef {
        TableRef::new("db", "t").unwrap()
    }

    #[test]
    fn every_type_maps_to_a_column_that_holds_it_and_the_ddl_parses_back() {
        let item = Arc::new(Field::new("item", DataType::Utf8, true));
        let schema = Schema::new(vec![
            Field::new("k", DataType::Utf8, false),
            Field::new("b", DataType::Boolean, true),
            Field::new("u8", DataType::UInt8, true),
            Field::new("u64", DataType::UInt64, true),
            Field::new("d", DataType::Decimal128(20, 4), true),
            Field::new("day", DataType::Date32, true),
            Field::new("ts", DataType::Timestamp(TimeUnit::Millisecond, None), true),
            Field::new("tags", DataType::List(item), true),
            Field::new(
                "s",
                DataType::Struct(vec![Field::new("x", DataType::Int32, true)].into()),
                true,
            ),
        ]);
        let ddl = create_table_ddl(&table(), &schema, &CreateTableOptions::default()).unwrap();
        let parsed = crate::parse_show_create(&ddl).unwrap();
        assert_eq!(parsed.key_columns, ["k"]);
        assert_eq!(parsed.key_model, Some(KeyModel::Duplicate));
        let ty = |n: &str| parsed.column(n).unwrap().ty.spell(Spelling::Upper);
        assert_eq!(ty("k"), "VARCHAR(65533)");
        assert_eq!(ty("u8"), "SMALLINT");
        assert_eq!(ty("u64"), "LARGEINT");
        assert_eq!(ty("d"), "DECIMAL(20, 4)");
        assert_eq!(ty("ts"), "DATETIME(3)");
        assert_eq!(ty("tags"), "ARRAY<TEXT>");
        assert!(ddl.contains("BUCKETS AUTO"), "{ddl}");
        // Every column round-trips through the writer's check.
        for f in schema.fields() {
            let column = parsed.column(f.name()).unwrap();
            assert!(
                crate::check_writable(f.data_type(), &column.ty).is_ok(),
                "{}",
                f.name()
            );
        }
    }

    #[test]
    fn keys_come_first_and_bad_keys_or_types_are_refused_by_name() {
        let schema = Schema::new(vec![
            Field::new("v", DataType::Float64, true),
            Field::new("id", DataType::Int32, false),
        ]);
        let unique = CreateTableOptions {
            key_model: KeyModel::Unique,
            key_columns: vec!["id".into()],
            ..Default::default()
        };
        let ddl = create_table_ddl(&table(), &schema, &unique).unwrap();
        assert!(
            ddl.starts_with(
                "CREATE TABLE `db`.`t` (`id` INT NOT NULL, `v` DOUBLE NULL) UNIQUE KEY(`id`)"
            ),
            "{ddl}"
        );
        let float_key = create_table_ddl(&table(), &schema, &CreateTableOptions::default());
        assert!(
            float_key
                .unwrap_err()
                .to_string()
                .contains("FLOAT or DOUBLE")
        );
        let missing = CreateTableOptions {
            key_columns: vec!["nope".into()],
            ..Default::default()
        };
        assert!(
            create_table_ddl(&table(), &schema, &missing)
                .unwrap_err()
                .to_string()
                .contains("nope")
        );
        let tz = Schema::new(vec![Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        )]);
        assert!(
            create_table_ddl(&table(), &tz, &CreateTableOptions::default())
                .unwrap_err()
                .to_string()
                .contains("naive UTC")
        );
        let binary = Schema::new(vec![Field::new("b", DataType::Binary, true)]);
        assert!(create_table_ddl(&table(), &binary, &CreateTableOptions::default()).is_err());
    }
}
