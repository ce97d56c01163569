//! The catalog calls of `daft_doris.DorisCatalog`: conversion only; the statements are
//! `doris_read::catalog`'s, the `CREATE TABLE` options `doris_read::catalog::table_options`'.
//! [`CatalogOptions`] checks a catalog's own settings when it is made.

use std::future::Future;

use doris_connection::OptionValue;
use doris_mysql::Session;
use doris_read::ReadError;
use doris_read::catalog;
use doris_sql::TableRef;
use pyo3::prelude::*;
use pyo3_arrow::PySchema;

use crate::args;
use crate::connection::DorisConnection;
use crate::errors::{read_error, sql_error};
use crate::runtime::block_on;

/// Runs `call` on a session opened on the connection's FE.
fn run<T, F, Fut>(py: Python<'_>, connection: PyRef<'_, DorisConnection>, call: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce(Session) -> Fut + Send,
    Fut: Future<Output = Result<T, ReadError>>,
{
    let endpoint = connection.resolve(py)?.mysql();
    block_on(
        py,
        || async move { call(Session::open(&endpoint).await?).await },
    )
    .map_err(read_error)
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
    run(py, connection, |mut s| async move {
        catalog::list_databases(&mut s, prefix.as_deref()).await
    })
}

/// The `(database, table)` pairs a catalog's listing pattern names
/// (`doris_read::catalog::find_tables`; staging tables and the ledger left out).
#[pyfunction]
#[pyo3(signature = (connection, pattern=None))]
pub(crate) fn catalog_find_tables(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    pattern: Option<String>,
) -> PyResult<Vec<(String, String)>> {
    run(py, connection, |mut s| async move {
        let internal = doris_write::staging::is_internal_table;
        catalog::find_tables(&mut s, pattern.as_deref(), internal).await
    })
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
    run(py, connection, |mut s| async move {
        match table {
            Some(table) => catalog::has_table(&mut s, &database, &table).await,
            None => catalog::has_database(&mut s, &database).await,
        }
    })
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
    run(py, connection, |mut s| async move {
        match create {
            true => catalog::create_database(&mut s, &database, if_not_exists).await,
            false => catalog::drop_database(&mut s, &database).await,
        }
    })
}

/// `CREATE TABLE` from a pyarrow schema and the `properties` Daft's catalog API handed
/// over (a mapping, or `None`), read by `doris_read::catalog::table_options`.
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
    let properties = match args::given(properties) {
        Some(properties) => args::option("properties", &properties)?,
        None => OptionValue::Null,
    };
    let mut options = catalog::table_options(&properties).map_err(sql_error)?;
    options.if_not_exists = if_not_exists;
    let schema = schema.into_inner().as_ref().clone();
    let table = table_ref(database, table)?;
    run(py, connection, |mut s| async move {
        catalog::create_table(&mut s, &table, &schema, &options).await
    })
}

/// `DROP TABLE`.
#[pyfunction]
pub(crate) fn catalog_drop_table(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    database: &str,
    table: &str,
) -> PyResult<()> {
    let table = table_ref(database, table)?;
    run(py, connection, |mut s| async move {
        catalog::drop_table(&mut s, &table).await
    })
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
            flight_port: args::rule("flight_port", flight_port, OptionValue::port)?,
        })
    }

    fn __repr__(&self) -> String {
        format!("{self:?}")
    }
}
