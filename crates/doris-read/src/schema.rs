//! Schema discovery over MySQL: `DESC` through doris-sql's parser into Arrow.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use doris_sql::{
    DescColumn, DescRow, DorisType, TableRef, TableSchema, TimestampUnits, parse_describe,
    parse_show_create_checked,
};

use crate::error::{ReadError, bounded};
use doris_mysql::MySqlEndpoint;

/// One column of a table, as a read sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadColumn {
    /// Name.
    pub name: String,
    /// Doris type.
    pub doris_type: DorisType,
    /// Nullable.
    pub nullable: bool,
    /// The Arrow type, or why there is none.
    pub arrow_type: Result<DataType, String>,
}

/// A table's columns in table order.
#[derive(Debug, Clone, PartialEq)]
pub struct TableLayout {
    /// The table.
    pub database: String,
    /// The table.
    pub table: String,
    /// Columns in table order.
    pub columns: Vec<ReadColumn>,
}

impl TableLayout {
    /// The Arrow schema of every column that has an Arrow form, in table order (the others
    /// are [`TableLayout::unreadable`]).
    pub fn readable_schema(&self) -> SchemaRef {
        let fields = self.columns.iter().filter_map(|c| {
            let t = c.arrow_type.as_ref().ok()?;
            Some(Field::new(&c.name, t.clone(), c.nullable))
        });
        Arc::new(Schema::new(fields.collect::<Vec<_>>()))
    }

    /// `(name, Doris type, reason)` of every column with no Arrow form, in table order:
    /// what a read that does not select them leaves out, and one that does refuses.
    pub fn unreadable(&self) -> Vec<(String, String, String)> {
        self.columns
            .iter()
            .filter_map(|c| {
                let reason = c.arrow_type.as_ref().err()?;
                Some((c.name.clone(), c.doris_type.to_sql(), reason.clone()))
            })
            .collect()
    }

    /// The Arrow schema of `names` (table order when `None`); fails on a column that does
    /// not exist or has no Arrow form.
    pub fn arrow_schema(&self, names: Option<&[String]>) -> Result<SchemaRef, ReadError> {
        let picked: Vec<&ReadColumn> = match names {
            None => self.columns.iter().collect(),
            Some(names) => names
                .iter()
                .map(|n| {
                    self.columns
                        .iter()
                        .find(|c| c.name.eq_ignore_ascii_case(n))
                        .ok_or_else(|| {
                            ReadError::NotFound(format!(
                                "column {n} is not in {}.{}",
                                self.database, self.table
                            ))
                        })
                })
                .collect::<Result<_, _>>()?,
        };
        let fields = picked
            .into_iter()
            .map(|c| match &c.arrow_type {
                Ok(t) => Ok(Field::new(&c.name, t.clone(), c.nullable)),
                Err(reason) => Err(ReadError::UnsupportedColumn {
                    column: c.name.clone(),
                    doris_type: c.doris_type.to_sql(),
                    reason: reason.clone(),
                }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Arc::new(Schema::new(fields)))
    }
}

/// Runs a metadata query on an open connection: its rows as text, capped in rows and bytes
/// ([`doris_mysql::query_text`]), within the endpoint's read timeout.
async fn metadata_rows(
    endpoint: &MySqlEndpoint,
    conn: &mut sqlx::MySqlConnection,
    sql: &str,
    what: &str,
) -> Result<Vec<Vec<Option<String>>>, ReadError> {
    let cut = doris_mysql::CutReason::default();
    let rows = bounded(endpoint.read_timeout, what, async {
        doris_mysql::query_text(conn, sql, &cut)
            .await
            .map_err(ReadError::from)
    })
    .await?;
    Ok(rows.rows)
}

/// Runs `DESC db.table` on an open connection and parses its rows.
async fn describe(
    endpoint: &MySqlEndpoint,
    conn: &mut sqlx::MySqlConnection,
    table_ref: &TableRef,
) -> Result<Vec<DescColumn>, ReadError> {
    let sql = format!("DESC {}", table_ref.to_sql());
    let rows = metadata_rows(endpoint, conn, &sql, "DESC").await?;
    let mut desc = Vec::with_capacity(rows.len());
    for mut row in rows {
        if row.len() < 6 {
            return Err(ReadError::Metadata(format!(
                "DESC returned {} columns, 6 expected",
                row.len()
            )));
        }
        let mut cell = |i: usize| row[i].take();
        desc.push(DescRow {
            field: cell(0).unwrap_or_default(),
            type_text: cell(1).unwrap_or_default(),
            null: cell(2).unwrap_or_default(),
            key: cell(3).unwrap_or_default(),
            default: cell(4),
            extra: cell(5).unwrap_or_default(),
        });
    }
    parse_describe(&desc).map_err(ReadError::MetadataParse)
}

/// Runs `DESC db.table` and maps every column, DATETIME as `timestamp[us]` whatever its
/// precision ([`TimestampUnits::default`]; [`discover_in`] chooses).
pub async fn discover(
    endpoint: &MySqlEndpoint,
    database: &str,
    table: &str,
) -> Result<TableLayout, ReadError> {
    discover_in(endpoint, database, table, TimestampUnits::default()).await
}

/// Runs `DESC db.table` and maps every column, DATETIME values in `units`.
pub async fn discover_in(
    endpoint: &MySqlEndpoint,
    database: &str,
    table: &str,
    units: TimestampUnits,
) -> Result<TableLayout, ReadError> {
    let table_ref = TableRef::new(database, table).map_err(ReadError::Statement)?;
    let mut conn = endpoint.connect().await?;
    let columns = describe(endpoint, &mut conn, &table_ref).await?;
    drop(conn);
    Ok(TableLayout {
        database: database.to_owned(),
        table: table.to_owned(),
        columns: columns
            .into_iter()
            .map(|c| ReadColumn {
                arrow_type: c.ty.to_arrow_in(units).map_err(|e| e.to_string()),
                name: c.name,
                doris_type: c.ty,
                nullable: c.nullable,
            })
            .collect(),
    })
}

/// Reads a table's full schema for a writer: `SHOW CREATE TABLE` (key model, keys,
/// merge-on-write, properties) checked against `DESC` (column order, nullability, keys).
pub async fn fetch_table_schema(
    endpoint: &MySqlEndpoint,
    database: &str,
    table: &str,
) -> Result<TableSchema, ReadError> {
    let mut conn = endpoint.connect().await?;
    table_schema_on(endpoint, &mut conn, database, table).await
}

/// [`fetch_table_schema`] over an open connection.
async fn table_schema_on(
    endpoint: &MySqlEndpoint,
    conn: &mut sqlx::MySqlConnection,
    database: &str,
    table: &str,
) -> Result<TableSchema, ReadError> {
    let table_ref = TableRef::new(database, table).map_err(ReadError::Statement)?;
    let sql = format!("SHOW CREATE TABLE {}", table_ref.to_sql());
    let rows = metadata_rows(endpoint, conn, &sql, "SHOW CREATE TABLE").await?;
    let text = rows
        .into_iter()
        .next()
        .filter(|row| row.len() >= 2)
        .and_then(|mut row| row[1].take())
        .ok_or_else(|| ReadError::Metadata("SHOW CREATE TABLE returned no statement".into()))?;
    // `DESC` names the columns unambiguously; the text is read against it (Doris prints a
    // backtick inside a name undoubled).
    let desc = describe(endpoint, conn, &table_ref).await?;
    parse_show_create_checked(&text, &desc).map_err(ReadError::MetadataParse)
}

/// [`fetch_table_schema`], and the server's Doris release (`None` when its
/// `@@version_comment` names none), over one connection: what a write checks before its
/// first byte.
pub async fn fetch_table_schema_and_release(
    endpoint: &MySqlEndpoint,
    database: &str,
    table: &str,
) -> Result<(TableSchema, Option<doris_sql::release::DorisRelease>), ReadError> {
    let mut conn = endpoint.connect().await?;
    let schema = table_schema_on(endpoint, &mut conn, database, table).await?;
    let rows = metadata_rows(
        endpoint,
        &mut conn,
        doris_sql::release::RELEASE_QUERY,
        "SELECT @@version_comment",
    )
    .await?;
    let comment = rows
        .into_iter()
        .next()
        .and_then(|row| row.into_iter().next())
        .flatten();
    Ok((
        schema,
        comment.and_then(|c| doris_sql::release::DorisRelease::from_version_comment(&c)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_parts_its_columns_into_readable_and_unreadable() {
        let column = |name: &str, doris_type, arrow_type| ReadColumn {
            name: name.to_owned(),
            doris_type,
            nullable: true,
            arrow_type,
        };
        let layout = TableLayout {
            database: "db".into(),
            table: "t".into(),
            columns: vec![
                column("id", DorisType::BigInt, Ok(DataType::Int64)),
                column("uv", DorisType::Hll, Err("no Arrow form".into())),
                column("name", DorisType::String, Ok(DataType::Utf8)),
            ],
        };
        let readable = layout.readable_schema();
        let names: Vec<&str> = readable
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        assert_eq!(names, ["id", "name"]);
        assert_eq!(
            layout.unreadable(),
            [(
                "uv".to_owned(),
                "HLL".to_owned(),
                "no Arrow form".to_owned()
            )]
        );
        assert!(
            layout.arrow_schema(None).is_err(),
            "every column asks for uv"
        );
    }
}
