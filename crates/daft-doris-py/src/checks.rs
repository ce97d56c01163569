//! The argument checks the Python signatures call before anything else runs
//! (`daft_doris._native.check_*`, `read_ca_file`): the same rules as the native
//! constructors (`args`), so Python decides nothing itself.

use std::collections::HashSet;
use std::io::Read as _;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::args;
use crate::errors::{ErrorClass, raise};

/// Largest CA file read, in bytes.
pub(crate) const MAX_CA_FILE_BYTES: u64 = 1 << 20;

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
    args::flag(what, value)
}

/// One of `allowed`; returns it.
#[pyfunction]
pub(crate) fn check_choice(
    what: &str,
    value: &Bound<'_, PyAny>,
    allowed: Vec<String>,
) -> PyResult<String> {
    let allowed: Vec<&str> = allowed.iter().map(String::as_str).collect();
    args::choice(what, value, &allowed).map(str::to_owned)
}

/// `columns=`: `None`, or a non-empty iterable of distinct column names (a lone string is
/// refused, not split into letters); returns them as a list.
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
    let items = value.try_iter().map_err(|_| single())?;
    let mut names = Vec::new();
    for item in items {
        names.push(args::identifier("column name", &item?)?);
    }
    if names.is_empty() {
        return Err(config("columns must name at least one column".into()));
    }
    if names.iter().collect::<HashSet<_>>().len() != names.len() {
        return Err(config("columns must not repeat a name".into()));
    }
    Ok(Some(names))
}

/// The PEM text of the CA file at `path` (`None`: none), read now, where the connection
/// is configured: at most [`MAX_CA_FILE_BYTES`], and it must hold a PEM certificate.
/// `name` is the argument the path came in (`tls_ca_file`, `ssl_ca`).
#[pyfunction]
pub(crate) fn read_ca_file(name: &str, path: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if path.is_none() {
        return Ok(None);
    }
    let path: String = path
        .extract()
        .ok()
        .filter(|p: &String| !p.is_empty())
        .ok_or_else(|| config(format!("{name} must be the path of a PEM file")))?;
    let mut data = Vec::new();
    std::fs::File::open(&path)
        .and_then(|f| f.take(MAX_CA_FILE_BYTES + 1).read_to_end(&mut data))
        .map_err(|e| config(format!("{name} {path} cannot be read: {}", io_reason(&e))))?;
    if data.len() as u64 > MAX_CA_FILE_BYTES {
        return Err(config(format!(
            "{name} {path} is larger than {MAX_CA_FILE_BYTES} bytes"
        )));
    }
    let text = String::from_utf8_lossy(&data).into_owned();
    if !text.contains("-----BEGIN CERTIFICATE-----") {
        return Err(config(format!("{name} {path} holds no PEM certificate")));
    }
    Ok(Some(text))
}

/// What went wrong opening or reading a file, in the words `strerror` uses.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "Permission denied".into(),
        std::io::ErrorKind::IsADirectory => "Is a directory".into(),
        _ => e.to_string(),
    }
}
