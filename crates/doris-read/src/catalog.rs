//! A Doris FE as a catalog: databases are namespaces, tables are tables, over a MySQL
//! [`Session`]. What a catalog implementation of an engine (Daft's `Catalog`) calls.
//!
//! Listing hides Doris's system databases (`information_schema`, `mysql`,
//! `__internal_schema`), the staging tables of atomic writes (`daft_doris_stage_…`) and their
//! default commit ledger (`daft_doris_commits`; a ledger under another name is listed);
//! patterns are prefixes, matched case-sensitively as Doris names are. Creating a table builds its
//! DDL from an Arrow schema ([`doris_sql::create_table_ddl`]).

use arrow_schema::Schema;
use doris_connection::OptionValue;
use doris_sql::{CreateTableOptions, SqlError, TableRef, create_table_ddl, quote_ident};

use crate::error::ReadError;
use doris_mysql::Session;

/// Databases a catalog never lists.
const SYSTEM_DATABASES: [&str; 3] = ["information_schema", "mysql", "__internal_schema"];

fn config(e: doris_sql::SqlError) -> ReadError {
    ReadError::Statement(e)
}

fn first_column(rows: doris_mysql::TextRows) -> Vec<String> {
    rows.rows
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .collect()
}

/// The user databases whose names start with `prefix` (every one without), sorted.
pub async fn list_databases(
    session: &mut Session,
    prefix: Option<&str>,
) -> Result<Vec<String>, ReadError> {
    let mut names: Vec<String> = first_column(session.query("SHOW DATABASES").await?)
        .into_iter()
        .filter(|d| !SYSTEM_DATABASES.contains(&d.as_str()))
        .filter(|d| prefix.is_none_or(|p| d.starts_with(p)))
        .collect();
    names.sort();
    Ok(names)
}

/// The tables of `database` whose names start with `prefix`, sorted, without those
/// `hidden` names (e.g. `doris_write::staging::is_internal_table`: the staging tables and
/// commit ledger of atomic writes).
pub async fn list_tables(
    session: &mut Session,
    database: &str,
    prefix: Option<&str>,
    hidden: impl Fn(&str) -> bool,
) -> Result<Vec<String>, ReadError> {
    let sql = format!(
        "SHOW TABLES FROM {}",
        quote_ident("database", database).map_err(config)?
    );
    let mut names: Vec<String> = first_column(session.query(&sql).await?)
        .into_iter()
        .filter(|t| !hidden(t))
        .filter(|t| prefix.is_none_or(|p| t.starts_with(p)))
        .collect();
    names.sort();
    Ok(names)
}

/// The tables a catalog's listing pattern names, as `(database, table)` pairs in order:
/// every table (`None`), `"db.prefix"` (the tables of `db` starting with `prefix`), `"db"`
/// when it names a database (its tables), else a table-name prefix in every database;
/// without those `hidden` names, as [`list_tables`].
pub async fn find_tables(
    session: &mut Session,
    pattern: Option<&str>,
    hidden: impl Fn(&str) -> bool,
) -> Result<Vec<(String, String)>, ReadError> {
    let pattern = pattern.filter(|p| !p.is_empty());
    let (databases, prefix) = match pattern {
        Some(pattern) if pattern.contains('.') => {
            let (database, prefix) = pattern.split_once('.').unwrap_or((pattern, ""));
            (
                vec![database.to_owned()],
                Some(prefix).filter(|p| !p.is_empty()),
            )
        }
        Some(pattern) if has_database(session, pattern).await? => (vec![pattern.to_owned()], None),
        _ => (list_databases(session, None).await?, pattern),
    };
    let mut found = Vec::new();
    for database in databases {
        for table in list_tables(session, &database, prefix, &hidden).await? {
            found.push((database.clone(), table));
        }
    }
    Ok(found)
}

/// Whether `database` exists (and the user may see it).
pub async fn has_database(session: &mut Session, database: &str) -> Result<bool, ReadError> {
    Ok(list_databases(session, Some(database))
        .await?
        .iter()
        .any(|d| d == database))
}

/// Whether `database.table` exists (and the user may see it).
pub async fn has_table(
    session: &mut Session,
    database: &str,
    table: &str,
) -> Result<bool, ReadError> {
    if !has_database(session, database).await? {
        return Ok(false);
    }
    Ok(list_tables(session, database, Some(table), |_| false)
        .await?
        .iter()
        .any(|t| t == table))
}

/// `CREATE DATABASE [IF NOT EXISTS] database`.
pub async fn create_database(
    session: &mut Session,
    database: &str,
    if_not_exists: bool,
) -> Result<(), ReadError> {
    let sql = format!(
        "CREATE DATABASE {}{}",
        if if_not_exists { "IF NOT EXISTS " } else { "" },
        quote_ident("database", database).map_err(config)?
    );
    session
        .execute(&sql)
        .await
        .map(|_| ())
        .map_err(ReadError::from)
}

/// `DROP DATABASE database` (refused by Doris while it holds tables unless `FORCE`; not
/// sent here).
pub async fn drop_database(session: &mut Session, database: &str) -> Result<(), ReadError> {
    let sql = format!(
        "DROP DATABASE {}",
        quote_ident("database", database).map_err(config)?
    );
    session
        .execute(&sql)
        .await
        .map(|_| ())
        .map_err(ReadError::from)
}

/// The options of [`create_table`] from a catalog API's table properties (a mapping, or
/// `Null`: none), read by [`CreateTableOptions::from_properties`]: `key_model`,
/// `key_columns` (comma-separated, or a list of names, none holding a comma), `buckets`;
/// every other key is a Doris table property. Values may be strings, numbers or booleans
/// ([`OptionValue::property_text`]). Errors name the key, never its value.
///
/// ```
/// use doris_connection::OptionValue::{List, Map, Int, Text};
/// use doris_read::catalog::table_options;
/// let given = Map([
///     ("key_columns".to_owned(), List(vec![Text("id".into()), Text("day".into())])),
///     ("buckets".to_owned(), Int(8)),
/// ].into());
/// let options = table_options(&given).unwrap();
/// assert_eq!((options.key_columns, options.buckets), (vec!["id".to_owned(), "day".to_owned()], Some(8)));
/// assert!(table_options(&Text("buckets=8".into())).is_err());
/// ```
pub fn table_options(properties: &OptionValue) -> Result<CreateTableOptions, SqlError> {
    let invalid = |message: &str| SqlError::InvalidQuery(message.to_owned());
    let properties = match properties {
        OptionValue::Null => return Ok(CreateTableOptions::default()),
        OptionValue::Map(map) => map,
        _ => return Err(invalid("properties must be a mapping")),
    };
    let mut pairs = Vec::with_capacity(properties.len());
    for (key, value) in properties {
        let text = match (key.as_str(), value) {
            ("key_columns", OptionValue::List(names)) => {
                let names = names
                    .iter()
                    .map(|name| match name {
                        OptionValue::Text(name) if name.contains(',') => {
                            Err(invalid("key column names must not contain ','"))
                        }
                        OptionValue::Text(name) if !name.is_empty() => Ok(name.as_str()),
                        _ => Err(invalid("a key column name must be a non-empty string")),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                names.join(",")
            }
            _ => value
                .property_text(key)
                .map_err(|e| SqlError::InvalidQuery(e.to_string()))?,
        };
        pairs.push((key.clone(), text));
    }
    CreateTableOptions::from_properties(pairs)
}

/// Creates `table` with `schema`'s columns (see [`doris_sql::create_table_ddl`]).
pub async fn create_table(
    session: &mut Session,
    table: &TableRef,
    schema: &Schema,
    options: &CreateTableOptions,
) -> Result<(), ReadError> {
    let ddl = create_table_ddl(table, schema, options).map_err(config)?;
    session
        .execute(&ddl)
        .await
        .map(|_| ())
        .map_err(ReadError::from)
}

/// `DROP TABLE database.table`.
pub async fn drop_table(session: &mut Session, table: &TableRef) -> Result<(), ReadError> {
    session
        .execute(&format!("DROP TABLE {}", table.to_sql()))
        .await
        .map(|_| ())
        .map_err(ReadError::from)
}
