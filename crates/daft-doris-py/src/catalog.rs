//! The catalog calls of `daft_doris.DorisCatalog`: conversion only; the statements are
//! `doris_read::catalog`'s.

use doris_read::ReadError;
use doris_read::catalog;
use doris_read::mysql::session::Session;
use doris_sql::{CreateTableOptions, KeyModel, TableRef};
use pyo3::prelude::*;
use pyo3_arrow::PySchema;

use crate::connection::Connection;
use crate::errors::{ErrorClass, raise, read_error};
use crate::runtime::block_on;

/// What one catalog call does with its session.
enum Call {
    ListDatabases(Option<String>),
    ListTables(String, Option<String>),
    HasDatabase(String),
    HasTable(String, String),
    CreateDatabase(String, bool),
    DropDatabase(String),
    CreateTable(TableRef, arrow_schema::Schema, CreateTableOptions),
    DropTable(TableRef),
}

/// The answer of a call: names, a yes/no, or nothing.
enum Answer {
    Names(Vec<String>),
    Flag(bool),
    Done,
}

fn run(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    call: Call,
) -> PyResult<Answer> {
    let connection: &Connection = &connection;
    let endpoint = connection.mysql(password, None);
    block_on(py, || async move {
        let mut s = Session::open(&endpoint).await?;
        Ok::<_, ReadError>(match call {
            Call::ListDatabases(p) => {
                Answer::Names(catalog::list_databases(&mut s, p.as_deref()).await?)
            }
            Call::ListTables(db, p) => {
                Answer::Names(catalog::list_tables(&mut s, &db, p.as_deref()).await?)
            }
            Call::HasDatabase(db) => Answer::Flag(catalog::has_database(&mut s, &db).await?),
            Call::HasTable(db, t) => Answer::Flag(catalog::has_table(&mut s, &db, &t).await?),
            Call::CreateDatabase(db, if_not) => {
                catalog::create_database(&mut s, &db, if_not).await?;
                Answer::Done
            }
            Call::DropDatabase(db) => {
                catalog::drop_database(&mut s, &db).await?;
                Answer::Done
            }
            Call::CreateTable(t, schema, options) => {
                catalog::create_table(&mut s, &t, &schema, &options).await?;
                Answer::Done
            }
            Call::DropTable(t) => {
                catalog::drop_table(&mut s, &t).await?;
                Answer::Done
            }
        })
    })
    .map_err(read_error)
}

fn names(answer: Answer) -> Vec<String> {
    match answer {
        Answer::Names(n) => n,
        _ => Vec::new(),
    }
}

fn table_ref(database: &str, table: &str) -> PyResult<TableRef> {
    TableRef::new(database, table).map_err(|e| raise(ErrorClass::ConfigurationError, e.to_string()))
}

/// User databases (prefix-filtered, sorted).
#[pyfunction]
#[pyo3(signature = (connection, password, prefix=None))]
pub(crate) fn catalog_list_databases(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    prefix: Option<String>,
) -> PyResult<Vec<String>> {
    run(py, connection, password, Call::ListDatabases(prefix)).map(names)
}

/// Tables of a database (prefix-filtered, sorted, staging tables left out).
#[pyfunction]
#[pyo3(signature = (connection, password, database, prefix=None))]
pub(crate) fn catalog_list_tables(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    database: String,
    prefix: Option<String>,
) -> PyResult<Vec<String>> {
    run(py, connection, password, Call::ListTables(database, prefix)).map(names)
}

/// Whether a database (`table=None`) or a table exists.
#[pyfunction]
#[pyo3(signature = (connection, password, database, table=None))]
pub(crate) fn catalog_exists(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    database: String,
    table: Option<String>,
) -> PyResult<bool> {
    let call = match table {
        Some(t) => Call::HasTable(database, t),
        None => Call::HasDatabase(database),
    };
    match run(py, connection, password, call)? {
        Answer::Flag(f) => Ok(f),
        _ => Ok(false),
    }
}

/// `CREATE DATABASE` / `DROP DATABASE`.
#[pyfunction]
pub(crate) fn catalog_database(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    database: String,
    create: bool,
    if_not_exists: bool,
) -> PyResult<()> {
    let call = if create {
        Call::CreateDatabase(database, if_not_exists)
    } else {
        Call::DropDatabase(database)
    };
    run(py, connection, password, call).map(|_| ())
}

/// `CREATE TABLE` from a pyarrow schema; `key_model` is `duplicate` or `unique`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn catalog_create_table(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    database: &str,
    table: &str,
    schema: PySchema,
    key_model: &str,
    key_columns: Vec<String>,
    buckets: Option<u32>,
    properties: Vec<(String, String)>,
    if_not_exists: bool,
) -> PyResult<()> {
    let key_model = match key_model {
        "duplicate" => KeyModel::Duplicate,
        "unique" => KeyModel::Unique,
        _ => {
            return Err(raise(
                ErrorClass::ConfigurationError,
                "key_model must be 'duplicate' or 'unique'",
            ));
        }
    };
    let options = CreateTableOptions {
        key_model,
        key_columns,
        buckets,
        properties,
        if_not_exists,
    };
    let schema = schema.into_inner().as_ref().clone();
    run(
        py,
        connection,
        password,
        Call::CreateTable(table_ref(database, table)?, schema, options),
    )
    .map(|_| ())
}

/// `DROP TABLE`.
#[pyfunction]
pub(crate) fn catalog_drop_table(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    database: &str,
    table: &str,
) -> PyResult<()> {
    run(
        py,
        connection,
        password,
        Call::DropTable(table_ref(database, table)?),
    )
    .map(|_| ())
}
