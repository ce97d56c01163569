//! The catalog calls of `daft_doris.DorisCatalog`: conversion only; the statements are
//! `doris_read::catalog`'s, the `CREATE TABLE` options `doris_sql`'s. [`CatalogOptions`]
//! checks a catalog's own settings when it is made.

use doris_mysql::Session;
use doris_read::ReadError;
use doris_read::catalog;
use doris_sql::{CreateTableOptions, TableRef};
use pyo3::prelude::*;
use pyo3::types::{PyMapping, PyString};
use pyo3_arrow::PySchema;

use crate::args;
use crate::connection::DorisConnection;
use crate::errors::{ErrorClass, raise, read_error, sql_error};
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

fn run(py: Python<'_>, connection: PyRef<'_, DorisConnection>, call: Call) -> PyResult<Answer> {
    let links = connection.resolve(py)?;
    let endpoint = links.mysql();
    block_on(py, || async move {
        let mut s = Session::open(&endpoint).await?;
        Ok::<_, ReadError>(match call {
            Call::ListDatabases(p) => {
                Answer::Names(catalog::list_databases(&mut s, p.as_deref()).await?)
            }
            Call::ListTables(db, p) => Answer::Names(
                catalog::list_tables(
                    &mut s,
                    &db,
                    p.as_deref(),
                    doris_write::staging::is_internal_table,
                )
                .await?,
            ),
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
    TableRef::new(database, table).map_err(sql_error)
}

/// User databases (prefix-filtered, sorted).
#[pyfunction]
#[pyo3(signature = (connection, prefix=None))]
pub(crate) fn catalog_list_databases(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    prefix: Option<String>,
) -> PyResult<Vec<String>> {
    run(py, connection, Call::ListDatabases(prefix)).map(names)
}

/// Tables of a database (prefix-filtered, sorted, staging tables left out).
#[pyfunction]
#[pyo3(signature = (connection, database, prefix=None))]
pub(crate) fn catalog_list_tables(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    database: String,
    prefix: Option<String>,
) -> PyResult<Vec<String>> {
    run(py, connection, Call::ListTables(database, prefix)).map(names)
}

/// Whether a database (`table=None`) or a table exists.
#[pyfunction]
#[pyo3(signature = (connection, database, table=None))]
pub(crate) fn catalog_exists(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    database: String,
    table: Option<String>,
) -> PyResult<bool> {
    let call = match table {
        Some(t) => Call::HasTable(database, t),
        None => Call::HasDatabase(database),
    };
    match run(py, connection, call)? {
        Answer::Flag(f) => Ok(f),
        _ => Ok(false),
    }
}

/// `CREATE DATABASE` / `DROP DATABASE`.
#[pyfunction]
pub(crate) fn catalog_database(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    database: String,
    create: bool,
    if_not_exists: bool,
) -> PyResult<()> {
    let call = if create {
        Call::CreateDatabase(database, if_not_exists)
    } else {
        Call::DropDatabase(database)
    };
    run(py, connection, call).map(|_| ())
}

/// `CREATE TABLE` from a pyarrow schema and the `properties` Daft's catalog API handed
/// over (a mapping, or `None`), read by `CreateTableOptions::from_properties`: `key_model`,
/// `key_columns` (comma-separated, or a list of names), `buckets`; every other key is a
/// Doris table property. Values may be strings, numbers or booleans.
#[pyfunction]
#[pyo3(signature = (connection, database, table, schema, properties=None, if_not_exists=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn catalog_create_table(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    database: &str,
    table: &str,
    schema: PySchema,
    properties: Option<Bound<'_, PyAny>>,
    if_not_exists: bool,
) -> PyResult<()> {
    let pairs = table_properties(properties)?;
    let mut options = CreateTableOptions::from_properties(pairs).map_err(sql_error)?;
    options.if_not_exists = if_not_exists;
    let schema = schema.into_inner().as_ref().clone();
    run(
        py,
        connection,
        Call::CreateTable(table_ref(database, table)?, schema, options),
    )
    .map(|_| ())
}

/// The `(key, text)` pairs of a properties mapping, in its order.
fn table_properties(properties: Option<Bound<'_, PyAny>>) -> PyResult<Vec<(String, String)>> {
    let Some(properties) = args::given(properties) else {
        return Ok(Vec::new());
    };
    let mapping = properties.cast::<PyMapping>().map_err(|_| {
        raise(
            ErrorClass::ConfigurationError,
            "properties must be a mapping",
        )
    })?;
    let mut pairs = Vec::new();
    for item in mapping.items()?.iter() {
        let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
        let key: String = key.extract().map_err(|_| {
            raise(
                ErrorClass::ConfigurationError,
                "properties keys must be strings",
            )
        })?;
        let text = if key == "key_columns" && !value.is_instance_of::<PyString>() {
            let names = args::items("properties key_columns", &value)?
                .iter()
                .map(|n| args::identifier("a key column name", n))
                .collect::<PyResult<Vec<_>>>()?;
            if names.iter().any(|n| n.contains(',')) {
                return Err(raise(
                    ErrorClass::ConfigurationError,
                    "key column names must not contain ','",
                ));
            }
            names.join(",")
        } else {
            args::option(&format!("the value of property {key}"), &value)?
                .property_text(&key)
                .map_err(|e| raise(ErrorClass::ConfigurationError, e.to_string()))?
        };
        pairs.push((key, text));
    }
    Ok(pairs)
}

/// `DROP TABLE`.
#[pyfunction]
pub(crate) fn catalog_drop_table(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    database: &str,
    table: &str,
) -> PyResult<()> {
    run(py, connection, Call::DropTable(table_ref(database, table)?)).map(|_| ())
}

/// A `DorisCatalog`'s own settings, checked when it is made: its name, the transport of
/// its reads and the FE's Flight port.
#[pyclass(frozen, get_all, module = "daft_doris._native")]
#[derive(Debug, Clone)]
pub(crate) struct CatalogOptions {
    /// The catalog's name.
    name: String,
    /// `"mysql"` or `"flight"`.
    transport: String,
    /// The FE's Arrow Flight SQL port.
    flight_port: u16,
}

#[pymethods]
impl CatalogOptions {
    /// Checks each setting; a bad one is a `ConfigurationError` naming it and the rule.
    #[new]
    #[pyo3(signature = (*, name, transport, flight_port))]
    fn new(
        name: &Bound<'_, PyAny>,
        transport: &Bound<'_, PyAny>,
        flight_port: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        Ok(Self {
            name: args::identifier("name", name)?,
            transport: args::named::<doris_read::TransportKind>(transport)
                .map_err(read_error)?
                .as_str()
                .to_owned(),
            flight_port: args::port("flight_port", flight_port)?,
        })
    }

    fn __repr__(&self) -> String {
        format!("{self:?}")
    }
}
