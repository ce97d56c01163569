//! `information_schema.tables`, made for each query from the catalog, as Doris's FE lists
//! table status (`FrontendServiceImpl.listTableStatus`, filled into the BE's
//! `SchemaTablesScanner`): Doris's 21 columns and types (`SchemaTable`), one row per table
//! the user holds a privilege on, `TABLE_CATALOG` `internal`, `TABLE_TYPE` `BASE TABLE`,
//! `ENGINE` `Doris`, `TABLE_COLLATION` `utf-8`, the row count and data length, the creation
//! time and the comment; what Doris leaves NULL is NULL. Other `information_schema`
//! tables are refused by name.
//!
//! The Arrow fields are lower case: Doris matches column names in any case, and the query
//! engine lowers unquoted names.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray, TimestampSecondArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use doris_sql::DorisType;

use crate::Shared;
use crate::mysql::Session;

/// The `information_schema` tables the emulator answers.
pub(super) const TABLES: &str = "tables";

/// The columns of `information_schema.tables`, in Doris's order, with Doris's types.
pub(super) fn columns() -> Vec<(&'static str, DorisType)> {
    let varchar = |n| DorisType::Varchar { length: Some(n) };
    let datetime = DorisType::DateTime { precision: 0 };
    vec![
        ("table_catalog", varchar(512)),
        ("table_schema", varchar(64)),
        ("table_name", varchar(64)),
        ("table_type", varchar(64)),
        ("engine", varchar(64)),
        ("version", DorisType::BigInt),
        ("row_format", varchar(10)),
        ("table_rows", DorisType::BigInt),
        ("avg_row_length", DorisType::BigInt),
        ("data_length", DorisType::BigInt),
        ("max_data_length", DorisType::BigInt),
        ("index_length", DorisType::BigInt),
        ("data_free", DorisType::BigInt),
        ("auto_increment", DorisType::BigInt),
        ("create_time", datetime.clone()),
        ("update_time", datetime.clone()),
        ("check_time", datetime),
        ("table_collation", varchar(32)),
        ("checksum", DorisType::BigInt),
        ("create_options", varchar(255)),
        ("table_comment", varchar(2048)),
    ]
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(
        columns()
            .into_iter()
            .map(|(name, ty)| {
                let arrow = match ty {
                    DorisType::BigInt => DataType::Int64,
                    DorisType::DateTime { .. } => DataType::Timestamp(TimeUnit::Second, None),
                    _ => DataType::Utf8,
                };
                Field::new(name, arrow, true)
            })
            .collect::<Vec<_>>(),
    ))
}

/// A table and its database.
type Listed = (String, Arc<crate::catalog::Table>);

/// One row per table `session`'s user may see, in database and table order.
pub(super) fn tables(shared: &Shared, session: &Session) -> Result<RecordBatch, String> {
    let mut rows: Vec<Listed> = Vec::new();
    let catalog = &shared.catalog;
    for db in catalog.database_names().map_err(|e| e.to_string())? {
        for name in catalog.table_names(&db).map_err(|e| e.to_string())? {
            if shared.users.has_any(&session.user, &db, Some(&name)) {
                rows.push((
                    db.clone(),
                    catalog.table(&db, &name).map_err(|e| e.to_string())?,
                ));
            }
        }
    }
    let text = |f: &dyn Fn(&Listed) -> Option<String>| -> ArrayRef {
        Arc::new(rows.iter().map(f).collect::<StringArray>())
    };
    let number = |f: &dyn Fn(&Listed) -> Option<i64>| -> ArrayRef {
        Arc::new(rows.iter().map(f).collect::<Int64Array>())
    };
    let none_text = || text(&|_| None);
    let none_number = || number(&|_| None);
    // The row count and the bytes the visible data holds (Doris: its cached statistics).
    let sizes: Vec<(i64, i64)> = rows
        .iter()
        .map(|(_, t)| {
            let batches = t.snapshot(None).unwrap_or_default();
            let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
            let bytes: usize = batches.iter().map(RecordBatch::get_array_memory_size).sum();
            (rows as i64, bytes as i64)
        })
        .collect();
    let size = |i: usize| sizes[i];
    let indexed = |f: &dyn Fn(usize) -> Option<i64>| -> ArrayRef {
        Arc::new((0..rows.len()).map(f).collect::<Int64Array>())
    };
    let columns: Vec<ArrayRef> = vec![
        text(&|_| Some("internal".to_owned())),
        text(&|(db, _)| Some(db.clone())),
        text(&|(_, t)| Some(t.schema.name.clone())),
        text(&|_| Some("BASE TABLE".to_owned())),
        text(&|_| Some("Doris".to_owned())),
        none_number(),
        none_text(),
        indexed(&|i| Some(size(i).0)),
        indexed(&|i| {
            Some(if size(i).0 == 0 {
                0
            } else {
                size(i).1 / size(i).0
            })
        }),
        indexed(&|i| Some(size(i).1)),
        none_number(),
        none_number(),
        none_number(),
        none_number(),
        Arc::new(
            rows.iter()
                .map(|(_, t)| (t.created > 0).then_some(t.created))
                .collect::<TimestampSecondArray>(),
        ),
        Arc::new(TimestampSecondArray::from(vec![None; rows.len()])),
        Arc::new(TimestampSecondArray::from(vec![None; rows.len()])),
        text(&|_| Some("utf-8".to_owned())),
        none_number(),
        none_text(),
        text(&|(_, t)| Some(t.schema.comment.clone().unwrap_or_default())),
    ];
    RecordBatch::try_new(schema(), columns).map_err(|e| e.to_string())
}
