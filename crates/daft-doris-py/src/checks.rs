//! The argument checks the Python signatures call before anything else runs
//! (`daft_doris._native.check_*`): the same rules as the native
//! constructors (`args`), so Python decides nothing itself.

use doris_connection::SecretRef;
use doris_connection::secrecy::ExposeSecret;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::args;
use crate::errors::{ErrorClass, raise};

fn config(message: String) -> PyErr {
    raise(ErrorClass::ConfigurationError, message)
}

/// A database, table or column name: a non-empty string without NUL; returns it.
#[pyfunction]
pub(crate) fn check_identifier(what: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    args::identifier(what, value)
}

/// The table `database`.`table` as Doris SQL names it (`doris_sql::TableRef`: each name
/// in backticks, an inner backtick doubled).
#[pyfunction]
pub(crate) fn qualified_name(database: &str, table: &str) -> PyResult<String> {
    doris_sql::TableRef::new(database, table)
        .map(|t| t.to_sql())
        .map_err(|e| config(e.to_string()))
}

/// A boolean switch (an integer is not one); returns it.
#[pyfunction]
pub(crate) fn check_flag(what: &str, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    args::rule(what, value, doris_connection::OptionValue::flag)
}

/// `columns=`: `None`, or an iterable of column names (a lone string is refused, not
/// split into letters) checked by `doris_sql::check_column_list`; returns them as a list.
#[pyfunction]
pub(crate) fn check_columns(value: &Bound<'_, PyAny>) -> PyResult<Option<Vec<String>>> {
    if value.is_none() {
        return Ok(None);
    }
    let single =
        || config("columns must be an iterable of column names, not a single string".into());
    if value.is_instance_of::<PyString>() || value.is_instance_of::<PyBytes>() {
        return Err(single());
    }
    let names = value
        .try_iter()
        .map_err(|_| single())?
        .map(|item| args::identifier("column name", &item?))
        .collect::<PyResult<Vec<_>>>()?;
    doris_sql::check_column_list(&names).map_err(crate::errors::sql_error)?;
    Ok(Some(names))
}

/// The password source `kind` (`env` or `file`) named `name` (a variable's name, a file's
/// path), checked by `doris_connection::SecretRef`'s rules; with `resolve`, its value in
/// this process.
#[pyfunction]
#[pyo3(signature = (kind, name, *, resolve))]
pub(crate) fn secret_source(
    kind: &str,
    name: &Bound<'_, PyAny>,
    resolve: bool,
) -> PyResult<Option<String>> {
    // Not a string: the empty name, which each rule refuses.
    let name: String = name.extract().unwrap_or_default();
    let source = match kind {
        "env" => SecretRef::env(name),
        _ => SecretRef::file(name),
    };
    let secret = |e: doris_connection::SecretError| config(e.to_string());
    let source = source.map_err(secret)?;
    if !resolve {
        return Ok(None);
    }
    let value = source.resolve().map_err(secret)?;
    Ok(Some(value.expose_secret().to_owned()))
}
