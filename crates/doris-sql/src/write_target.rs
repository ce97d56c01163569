//! Checking a whole write against a table before the first byte is sent.
//!
//! [`check_write_target`] compares the Arrow schema of the data with the table's schema
//! (from `SHOW CREATE TABLE` and `DESC`) for one [`WriteOperation`], and returns either
//! the columns to send with the value checks the writer still owes, or every problem
//! found at once (a user fixing a schema wants the whole list, not one error per run).
//!
//! Columns are matched by name (Doris names are case-insensitive), not by position: a
//! DataFrame's column order is an accident of how it was built.
//!
//! ```
//! use arrow_schema::{DataType, Field, Schema};
//! use doris_sql::{check_write_target, parse_show_create, WriteOperation};
//! let table = parse_show_create(
//!     "CREATE TABLE t (`id` bigint NOT NULL, `v` varchar(8) NULL) UNIQUE KEY(`id`) \
//!      PROPERTIES (\"enable_unique_key_merge_on_write\" = \"true\")").unwrap();
//! let data = Schema::new(vec![Field::new("v", DataType::Utf8, true), Field::new("id", DataType::Int64, false)]);
//! let target = check_write_target(&table, &data, WriteOperation::Upsert).unwrap();
//! assert_eq!(target.columns, ["v", "id"]);
//! let only_v = Schema::new(vec![Field::new("v", DataType::Utf8, true)]);
//! let err = check_write_target(&table, &only_v, WriteOperation::PartialUpdate).unwrap_err();
//! assert!(err.to_string().contains("key column id"));
//! ```

use std::fmt;

use arrow_schema::{DataType, Schema};

use crate::metadata::{KeyModel, TableSchema};
use crate::write_compat::{ValueCheck, check_writable};

/// What a write does to the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WriteOperation {
    /// Append rows; the table's key model applies (DUPLICATE keeps all, UNIQUE replaces,
    /// AGGREGATE aggregates). Every column must be present.
    Load,
    /// Replace whole rows of a UNIQUE table by key. Every column must be present.
    Upsert,
    /// Update some columns of existing rows of a merge-on-write UNIQUE table by key; the
    /// key columns must be present, the others are optional.
    PartialUpdate,
    /// Delete the rows of a UNIQUE table whose keys are sent (`merge_type: DELETE`);
    /// only key columns may be sent.
    Delete,
}

impl WriteOperation {
    /// The names [`FromStr`](std::str::FromStr) accepts, as the Python API spells them.
    pub const NAMES: [&'static str; 4] = ["load", "upsert", "partial_update", "delete"];

    /// The operation's name as the Python API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Load => "load",
            Self::Upsert => "upsert",
            Self::PartialUpdate => "partial_update",
            Self::Delete => "delete",
        }
    }
}

impl std::str::FromStr for WriteOperation {
    type Err = String;

    /// One of [`WriteOperation::NAMES`]; anything else is refused with a message naming
    /// them (never the value given).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "load" => Self::Load,
            "upsert" => Self::Upsert,
            "partial_update" => Self::PartialUpdate,
            "delete" => Self::Delete,
            _ => {
                return Err(format!(
                    "operation must be one of '{}'",
                    Self::NAMES.join("', '")
                ));
            }
        })
    }
}

/// How one data column is written.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnWrite {
    /// The data column's name (as the data spells it).
    pub name: String,
    /// The table column's name (as the table spells it).
    pub table_name: String,
    /// The Arrow type of the table column, when the data must be cast to it value by value
    /// (a narrower integer or decimal column, or a float into a DECIMAL column: each value
    /// is checked, never truncated or rounded).
    pub cast_to: Option<DataType>,
    /// The table column is NOT NULL: a null value is an error before upload.
    pub not_null: bool,
    /// Value checks the type cannot guarantee (string lengths, LARGEINT text, …).
    pub value_checks: Vec<ValueCheck>,
    /// A nested value (list, struct, map) written into a JSON column: sent as its JSON text
    /// ([`crate::WritePlan::json_text`]).
    pub json_text: bool,
}

/// A write that passed the check.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteTarget {
    /// The data columns, in data order (the `columns` header of the loads).
    pub columns: Vec<String>,
    /// Per data column, how it is written.
    pub column_writes: Vec<ColumnWrite>,
    /// Whether the loads are partial-column updates.
    pub partial: bool,
    /// Whether the loads delete by key.
    pub delete: bool,
}

/// Every reason a write cannot go to the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteTargetError {
    /// One line per problem.
    pub problems: Vec<String>,
}

impl fmt::Display for WriteTargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the data cannot be written to this table: ")?;
        f.write_str(&self.problems.join("; "))
    }
}

impl std::error::Error for WriteTargetError {}

impl WriteTargetError {
    /// Always [`ErrorKind::Incompatible`](crate::ErrorKind::Incompatible): the data does
    /// not fit the table.
    pub fn kind(&self) -> crate::ErrorKind {
        crate::ErrorKind::Incompatible
    }
}

/// Whether a narrower column can take the data by a value-checked cast.
fn value_cast_target(data: &DataType, column: &DataType) -> bool {
    use DataType::*;
    let int = |t: &DataType| {
        matches!(
            t,
            Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64
        )
    };
    match (data, column) {
        (a, b) if int(a) && int(b) => true,
        (a, Decimal128(_, _)) if int(a) => true,
        (Decimal128(_, s) | Decimal256(_, s), Decimal128(_, t)) => t >= s,
        // Each value is cast, then cast back and compared: only floats whose value the
        // decimal holds exactly (0.25, 10.5 into DECIMAL(p, 2)) are written.
        (Float32 | Float64, Decimal128(_, _) | Decimal256(_, _)) => true,
        _ => false,
    }
}

/// Checks `data` against `table` for `operation`.
pub fn check_write_target(
    table: &TableSchema,
    data: &Schema,
    operation: WriteOperation,
) -> Result<WriteTarget, WriteTargetError> {
    let mut problems = Vec::new();
    let model = table.key_model;
    match operation {
        WriteOperation::Upsert | WriteOperation::Delete if model != Some(KeyModel::Unique) => {
            problems.push(format!(
                "{} needs a UNIQUE KEY table, this table is {}",
                operation.as_str(),
                match model {
                    Some(KeyModel::Duplicate) => "DUPLICATE KEY",
                    Some(KeyModel::Aggregate) => "AGGREGATE KEY",
                    Some(KeyModel::Unique) => "UNIQUE KEY",
                    None => "of an unknown key model",
                }
            ));
        }
        WriteOperation::PartialUpdate
            if model != Some(KeyModel::Unique) || !table.merge_on_write =>
        {
            problems.push(
                "partial_update needs a merge-on-write UNIQUE KEY table \
                 (\"enable_unique_key_merge_on_write\" = \"true\")"
                    .into(),
            );
        }
        _ => {}
    }

    let mut seen: Vec<String> = Vec::new();
    let mut column_writes = Vec::new();
    for field in data.fields() {
        let lower = field.name().to_lowercase();
        if seen.contains(&lower) {
            problems.push(format!("column {} appears twice in the data", field.name()));
            continue;
        }
        seen.push(lower);
        let Some(column) = table.column(field.name()) else {
            problems.push(format!("column {} is not in the table", field.name()));
            continue;
        };
        if column.generated {
            problems.push(format!(
                "column {} is generated by Doris from other columns: leave it out of the data",
                field.name()
            ));
            continue;
        }
        if operation == WriteOperation::Delete && !column.is_key {
            problems.push(format!(
                "delete sends key columns only, {} is not a key column",
                field.name()
            ));
            continue;
        }
        let mut cast_to = None;
        let mut json_text = false;
        let value_checks = match check_writable(field.data_type(), &column.ty) {
            // An all-null column of Arrow's Null type is sent in the column's own type:
            // Doris (and its Arrow reader) knows no Null type.
            Ok(plan) if field.data_type() == &DataType::Null => {
                cast_to = column.ty.to_arrow().ok();
                plan.value_checks
            }
            Ok(plan) => {
                json_text = plan.json_text;
                plan.value_checks
            }
            Err(incompatible) => {
                match column.ty.to_arrow() {
                    Ok(target) if value_cast_target(field.data_type(), &target) => {
                        cast_to = Some(target);
                    }
                    _ => problems.push(format!("column {}: {incompatible}", field.name())),
                }
                Vec::new()
            }
        };
        column_writes.push(ColumnWrite {
            name: field.name().clone(),
            table_name: column.name.clone(),
            cast_to,
            not_null: !column.nullable,
            value_checks,
            json_text,
        });
    }

    for key in &table.key_columns {
        if !seen.contains(&key.to_lowercase()) {
            problems.push(format!("key column {key} is missing from the data"));
        }
    }
    if matches!(operation, WriteOperation::Load | WriteOperation::Upsert) {
        let missing: Vec<&str> = table
            .columns
            .iter()
            .filter(|c| {
                !c.is_key
                    && !c.auto_increment
                    && !c.generated
                    && !seen.contains(&c.name.to_lowercase())
            })
            .map(|c| c.name.as_str())
            .collect();
        if !missing.is_empty() {
            problems.push(format!(
                "{} writes whole rows but the data lacks {} (use partial_update to write some columns)",
                operation.as_str(),
                missing.join(", ")
            ));
        }
    }
    if !problems.is_empty() {
        return Err(WriteTargetError { problems });
    }
    Ok(WriteTarget {
        columns: column_writes.iter().map(|c| c.name.clone()).collect(),
        column_writes,
        partial: operation == WriteOperation::PartialUpdate,
        delete: operation == WriteOperation::Delete,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_show_create;
    use arrow_schema::Field;

    fn table(model: &str, mow: bool) -> TableSchema {
        let props = if mow {
            " PROPERTIES (\"enable_unique_key_merge_on_write\" = \"true\")"
        } else {
            ""
        };
        parse_show_create(&format!(
            "CREATE TABLE t (`id` int NOT NULL, `name` varchar(4) NOT NULL, `score` decimal(10, 2) NULL) \
             {model} KEY(`id`){props}"
        ))
        .unwrap()
    }

    /// A generated column is left out of the data: refused when sent, never "missing".
    #[test]
    fn a_generated_column_is_refused_in_the_data_and_not_asked_for() {
        let table = parse_show_create(
            "CREATE TABLE g (`id` int NOT NULL, `a` int NULL, `twice` int AS (`a` * 2) NULL) \
             DUPLICATE KEY(`id`)",
        )
        .unwrap();
        let without = schema(&[("id", DataType::Int32), ("a", DataType::Int32)]);
        let target = check_write_target(&table, &without, WriteOperation::Load).unwrap();
        assert_eq!(target.columns, ["id", "a"]);
        let with = schema(&[
            ("id", DataType::Int32),
            ("a", DataType::Int32),
            ("twice", DataType::Int32),
        ]);
        let e = check_write_target(&table, &with, WriteOperation::Load).unwrap_err();
        assert!(e.to_string().contains("column twice is generated"), "{e}");
    }

    fn schema(fields: &[(&str, DataType)]) -> Schema {
        Schema::new(
            fields
                .iter()
                .map(|(n, t)| Field::new(*n, t.clone(), true))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn an_all_null_column_is_sent_in_the_column_type() {
        let data = schema(&[
            ("id", DataType::Int32),
            ("name", DataType::Null),
            ("score", DataType::Null),
        ]);
        let t =
            check_write_target(&table("DUPLICATE", false), &data, WriteOperation::Load).unwrap();
        let name = &t.column_writes[1];
        assert!(
            matches!(name.cast_to, Some(DataType::Utf8 | DataType::LargeUtf8)),
            "{:?}",
            name.cast_to
        );
    }

    #[test]
    fn whole_rows_by_name_with_value_checked_narrowing() {
        let data = schema(&[
            ("score", DataType::Decimal128(9, 2)),
            ("NAME", DataType::Utf8),
            ("id", DataType::Int64),
        ]);
        let t =
            check_write_target(&table("DUPLICATE", false), &data, WriteOperation::Load).unwrap();
        assert_eq!(t.columns, ["score", "NAME", "id"]);
        let id = &t.column_writes[2];
        assert_eq!(id.cast_to, Some(DataType::Int32));
        assert!(id.not_null);
        assert_eq!(t.column_writes[1].table_name, "name");
        assert_eq!(
            t.column_writes[1].value_checks,
            [ValueCheck::MaxLength {
                limit: 4,
                characters: false
            }]
        );
    }

    #[test]
    fn floats_go_into_decimal_columns_by_a_value_checked_cast() {
        let data = schema(&[
            ("score", DataType::Float64),
            ("NAME", DataType::Utf8),
            ("id", DataType::Int32),
        ]);
        let t =
            check_write_target(&table("DUPLICATE", false), &data, WriteOperation::Load).unwrap();
        assert_eq!(
            t.column_writes[0].cast_to,
            Some(DataType::Decimal128(10, 2))
        );
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let data = schema(&[("id", DataType::Float64), ("extra", DataType::Utf8)]);
        let err = check_write_target(&table("DUPLICATE", false), &data, WriteOperation::Upsert)
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("upsert needs a UNIQUE KEY table"), "{text}");
        assert!(text.contains("column id: Arrow Float64"), "{text}");
        assert!(text.contains("column extra is not in the table"), "{text}");
        assert!(text.contains("lacks name, score"), "{text}");
    }

    #[test]
    fn partial_update_needs_merge_on_write_and_keys() {
        let data = schema(&[("score", DataType::Boolean)]);
        let err = check_write_target(
            &table("UNIQUE", false),
            &data,
            WriteOperation::PartialUpdate,
        )
        .unwrap_err();
        assert_eq!(err.problems.len(), 3, "{err}");
        let data = schema(&[("id", DataType::Int32), ("name", DataType::Utf8)]);
        let t = check_write_target(&table("UNIQUE", true), &data, WriteOperation::PartialUpdate)
            .unwrap();
        assert!(t.partial);
    }

    #[test]
    fn delete_sends_keys_only() {
        let keys = schema(&[("id", DataType::Int32)]);
        assert!(
            check_write_target(&table("UNIQUE", true), &keys, WriteOperation::Delete)
                .unwrap()
                .delete
        );
        let more = schema(&[("id", DataType::Int32), ("name", DataType::Utf8)]);
        let err =
            check_write_target(&table("UNIQUE", true), &more, WriteOperation::Delete).unwrap_err();
        assert!(err.to_string().contains("name is not a key column"));
        let err = check_write_target(&table("DUPLICATE", false), &keys, WriteOperation::Delete)
            .unwrap_err();
        assert!(err.to_string().contains("needs a UNIQUE KEY table"));
    }

    #[test]
    fn decimal_scale_is_never_reduced() {
        let data = schema(&[
            ("id", DataType::Int32),
            ("name", DataType::Utf8),
            ("score", DataType::Decimal128(10, 3)),
        ]);
        let err = check_write_target(&table("DUPLICATE", false), &data, WriteOperation::Load)
            .unwrap_err();
        assert!(err.to_string().contains("column score"), "{err}");
    }
}
