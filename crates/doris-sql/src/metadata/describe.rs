//! The `DESC <table>` row parser.

use super::Aggregation;
use crate::error::{Result, SqlError};
use crate::types::DorisType;

/// One raw row of `DESC <table>`: the six columns `Field`, `Type`, `Null`, `Key`, `Default`,
/// `Extra`, as text (`Default` is a SQL NULL when there is no default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescRow {
    /// `Field`
    pub field: String,
    /// `Type`
    pub type_text: String,
    /// `Null`: `Yes` / `No` in Doris (MySQL-style `YES` / `NO` also accepted).
    pub null: String,
    /// `Key`: `true` / `false` in Doris (`PRI` / empty also accepted).
    pub key: String,
    /// `Default`
    pub default: Option<String>,
    /// `Extra`: the aggregation and markers, comma-joined (`NONE`, `SUM`, `AUTO_INCREMENT`, …).
    pub extra: String,
}

/// One parsed `DESC` column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescColumn {
    /// The column name.
    pub name: String,
    /// The parsed type.
    pub ty: DorisType,
    /// Whether NULL is allowed.
    pub nullable: bool,
    /// Whether the column is a key column.
    pub is_key: bool,
    /// The default as text, if any.
    pub default: Option<String>,
    /// The aggregation of an AGGREGATE table's value column.
    pub aggregation: Option<Aggregation>,
    /// The other `Extra` markers (e.g. `AUTO_INCREMENT`, `BLOOM_FILTER`, `GENERATED`).
    pub extras: Vec<String>,
}

/// Parses `DESC` rows; errors name the column and the cell that is wrong.
///
/// ```
/// use doris_sql::{parse_describe, DescRow, DorisType};
/// let row = DescRow {
///     field: "id".into(), type_text: "bigint".into(), null: "No".into(),
///     key: "true".into(), default: None, extra: "".into(),
/// };
/// let cols = parse_describe(&[row]).unwrap();
/// assert_eq!((cols[0].ty.clone(), cols[0].nullable, cols[0].is_key), (DorisType::BigInt, false, true));
/// ```
pub fn parse_describe(rows: &[DescRow]) -> Result<Vec<DescColumn>> {
    if rows.is_empty() {
        return Err(SqlError::MetadataParse("DESC returned no columns".into()));
    }
    let mut columns: Vec<DescColumn> = Vec::with_capacity(rows.len());
    for row in rows {
        let bad =
            |what: &str| SqlError::MetadataParse(format!("DESC column {:?}: {what}", row.field));
        if row.field.is_empty() {
            return Err(SqlError::MetadataParse(
                "DESC has a column with an empty name".into(),
            ));
        }
        if columns
            .iter()
            .any(|c| c.name.eq_ignore_ascii_case(&row.field))
        {
            return Err(bad("listed twice"));
        }
        let ty = row
            .type_text
            .parse()
            .map_err(|e| bad(&format!("bad Type: {e}")))?;
        let nullable = match row.null.trim().to_ascii_lowercase().as_str() {
            "yes" => true,
            "no" => false,
            _ => return Err(bad("Null is neither Yes nor No")),
        };
        let is_key = match row.key.trim().to_ascii_lowercase().as_str() {
            "true" | "pri" => true,
            "false" | "" => false,
            _ => return Err(bad("Key is neither true nor false")),
        };
        let mut aggregation = None;
        let mut extras = Vec::new();
        for marker in row
            .extra
            .split(',')
            .map(str::trim)
            .filter(|m| !m.is_empty())
        {
            if let Some(a) = Aggregation::parse(marker) {
                aggregation = Some(a);
            } else if !marker.eq_ignore_ascii_case("NONE") {
                extras.push(marker.to_owned());
            }
        }
        columns.push(DescColumn {
            name: row.field.clone(),
            ty,
            nullable,
            is_key,
            default: row.default.clone(),
            aggregation,
            extras,
        });
    }
    Ok(columns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{KeyModel, TableSchema, parse_show_create};

    fn row(field: &str, ty: &str, null: &str, key: &str, extra: &str) -> DescRow {
        DescRow {
            field: field.into(),
            type_text: ty.into(),
            null: null.into(),
            key: key.into(),
            default: None,
            extra: extra.into(),
        }
    }

    #[test]
    fn parses_doris_conventions() {
        let rows = vec![
            row("k", "INT", "No", "true", ""),
            row("dd", "DECIMAL", "Yes", "false", "NONE"),
            row("s", "bigint", "YES", "false", "SUM"),
            row("g", "int", "Yes", "false", "NONE,GENERATED"),
            row("a", "bigint", "No", "false", "AUTO_INCREMENT"),
        ];
        let cols = parse_describe(&rows).unwrap();
        assert!(cols[0].is_key && !cols[0].nullable);
        assert_eq!(
            cols[1].ty,
            DorisType::Decimal {
                precision: 9,
                scale: 0
            }
        );
        assert_eq!(cols[1].aggregation, None);
        assert_eq!(cols[2].aggregation, Some(Aggregation::Sum));
        assert_eq!(cols[3].extras, vec!["GENERATED"]);
        let schema = TableSchema::from_describe("t", &cols);
        assert_eq!(schema.key_model, Some(KeyModel::Aggregate));
        assert_eq!(schema.key_columns, vec!["k"]);
        assert!(schema.columns[4].auto_increment);
    }

    #[test]
    fn bad_rows_are_typed_errors() {
        let cases = [
            (vec![], "no columns"),
            (vec![row("", "INT", "Yes", "false", "")], "empty name"),
            (vec![row("a", "NOPE", "Yes", "false", "")], "bad Type"),
            (vec![row("a", "INT", "maybe", "false", "")], "Null"),
            (vec![row("a", "INT", "Yes", "1", "")], "Key"),
            (
                vec![
                    row("a", "INT", "Yes", "false", ""),
                    row("A", "INT", "Yes", "false", ""),
                ],
                "twice",
            ),
        ];
        for (rows, expected) in cases {
            let e = parse_describe(&rows).unwrap_err().to_string();
            assert!(e.contains(expected), "{e}");
        }
    }

    #[test]
    fn reconcile_checks_agreement() {
        let create = parse_show_create(
            "CREATE TABLE t (`id` bigint NOT NULL, `v` decimal(10,2) NULL) UNIQUE KEY(`id`) \
             DISTRIBUTED BY HASH(`id`) BUCKETS 1",
        )
        .unwrap();
        let good = parse_describe(&[
            row("id", "bigint", "No", "true", ""),
            row("v", "DECIMAL", "Yes", "false", "NONE"),
        ])
        .unwrap();
        create.reconcile(&good).unwrap();
        let reordered = parse_describe(&[
            row("v", "DECIMAL", "Yes", "false", "NONE"),
            row("id", "bigint", "No", "true", ""),
        ])
        .unwrap();
        assert!(
            create
                .reconcile(&reordered)
                .unwrap_err()
                .to_string()
                .contains("order")
        );
        let nullable_key = parse_describe(&[
            row("id", "bigint", "Yes", "true", ""),
            row("v", "DECIMAL", "Yes", "false", "NONE"),
        ])
        .unwrap();
        assert!(create.reconcile(&nullable_key).is_err());
        assert!(create.reconcile(&good[..1]).is_err());
    }
}
