//! Arguments taken from Python as they come (any object) and checked here, once: a wrong
//! type or value is a `ConfigurationError` that names the argument and the rule, never the
//! value (it may be a secret pasted into the wrong argument). The limits are the package's
//! documented ones.

use doris_connection::ConnectionSettingsError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyList, PyMapping, PyTuple};
use serde::de::DeserializeOwned;

use crate::errors::{ErrorClass, raise};

fn config(message: String) -> PyErr {
    raise(ErrorClass::ConfigurationError, message)
}

/// `value` unless it is missing or `None`.
pub(crate) fn given(value: Option<Bound<'_, PyAny>>) -> Option<Bound<'_, PyAny>> {
    value.filter(|v| !v.is_none())
}

/// A name parsed by the crate type that owns its choices (its `FromStr`): a value that is
/// not a string is parsed as the empty string, which every such type refuses with the
/// names it accepts.
pub(crate) fn named<T: std::str::FromStr>(value: &Bound<'_, PyAny>) -> Result<T, T::Err> {
    value.extract::<String>().unwrap_or_default().parse()
}

/// A database, table or column name: a non-empty string without NUL.
pub(crate) fn identifier(name: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    value
        .extract::<String>()
        .ok()
        .filter(|s| !s.is_empty() && !s.contains('\0'))
        .ok_or_else(|| {
            config(format!(
                "{name} must be a non-empty string without NUL characters"
            ))
        })
}

/// A Python value built of dicts (string keys), lists, tuples, strings, integers, floats,
/// booleans and `None`, deserialized into `T` (the filter IR, query parameters) by
/// pythonize. Nothing of the value is shown if it does not fit (serde's messages quote the
/// value they met): only what was expected.
pub(crate) fn from_python<T: DeserializeOwned>(
    what: &str,
    value: &Bound<'_, PyAny>,
) -> PyResult<T> {
    // The deepest nesting doris-sql takes (a cyclic list or dict ends here too).
    if nesting(value, 0) > doris_sql::Expr::MAX_DEPTH {
        return Err(config(format!(
            "invalid {what}: nested deeper than {} levels",
            doris_sql::Expr::MAX_DEPTH
        )));
    }
    pythonize::depythonize(value)
        .map_err(|_| config(format!("invalid {what}: not the expected structure")))
}

/// How deep `value`'s lists, tuples and dicts nest, counted no further than one level past
/// doris-sql's limit.
fn nesting(value: &Bound<'_, PyAny>, depth: usize) -> usize {
    if depth > doris_sql::Expr::MAX_DEPTH {
        return depth;
    }
    let children: Vec<Bound<'_, PyAny>> = if let Ok(list) = value.cast::<PyList>() {
        list.iter().collect()
    } else if let Ok(tuple) = value.cast::<PyTuple>() {
        tuple.iter().collect()
    } else if let Ok(dict) = value.cast::<PyDict>() {
        dict.values().iter().collect()
    } else {
        return depth;
    };
    children
        .iter()
        .map(|child| nesting(child, depth + 1))
        .max()
        .unwrap_or(depth)
}

/// The keywords of `options` as named options (`doris_connection::OptionValue`: `None`,
/// bools, numbers, strings, lists and tuples, mappings), for the crates' `from_options`,
/// which hold the names and the rules; each value as [`option`] converts it, named after
/// `prefix` (`"mysql_options "`, or nothing).
pub(crate) fn options(
    prefix: &str,
    options: &Bound<'_, PyDict>,
) -> PyResult<Vec<(String, doris_connection::OptionValue)>> {
    keyed(prefix, options, &option)
}

/// The entries of `dict` (string keys), each value converted by `convert` under its name
/// (`prefix` and the key).
fn keyed(
    prefix: &str,
    dict: &Bound<'_, PyDict>,
    convert: &dyn Fn(&str, &Bound<'_, PyAny>) -> PyResult<doris_connection::OptionValue>,
) -> PyResult<Vec<(String, doris_connection::OptionValue)>> {
    dict.iter()
        .map(|(key, value)| {
            let key: String = key
                .extract()
                .map_err(|_| config("option names must be strings".into()))?;
            let value = convert(&format!("{prefix}{key}"), &value)?;
            Ok((key, value))
        })
        .collect()
}

/// One option's value: a scalar by pythonize (UTF-8 bytes read as text, as PyMySQL takes
/// its `server_public_key`), a list or tuple and a mapping item by item, so that a value of
/// another type is refused naming `name`, and within a mapping (PyMySQL's `mysql_options`,
/// a job's `session`) naming `name` and the key.
pub(crate) fn option(
    name: &str,
    value: &Bound<'_, PyAny>,
) -> PyResult<doris_connection::OptionValue> {
    nested_option(name, value, 0)
}

/// [`option`] at `depth` lists or mappings down: a cyclic list or mapping ends at
/// doris-sql's nesting limit, not in a stack overflow.
fn nested_option(
    name: &str,
    value: &Bound<'_, PyAny>,
    depth: usize,
) -> PyResult<doris_connection::OptionValue> {
    let nested = value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>();
    let mapping = value.cast::<PyMapping>().ok();
    if (nested || mapping.is_some()) && depth >= doris_sql::Expr::MAX_DEPTH {
        return Err(config(format!("{name} is nested too deeply")));
    }
    if nested {
        let items = value
            .try_iter()?
            .map(|item| nested_option(name, &item?, depth + 1));
        return Ok(doris_connection::OptionValue::List(
            items.collect::<PyResult<_>>()?,
        ));
    }
    if let Some(mapping) = mapping {
        let given = PyDict::new(value.py());
        given.update(mapping)?;
        let inner = |name: &str, item: &Bound<'_, PyAny>| nested_option(name, item, depth + 1);
        let items = keyed(&format!("{name} "), &given, &inner)?;
        return Ok(doris_connection::OptionValue::Map(
            items.into_iter().collect(),
        ));
    }
    pythonize::depythonize(value).or_else(|_| {
        // An integer beyond 64 bits: a number every integer rule refuses, by its own words.
        if value.is_instance_of::<PyInt>()
            && let Ok(number) = value.extract::<f64>()
        {
            return Ok(doris_connection::OptionValue::Float(number));
        }
        Err(config(format!(
            "{name} must be a bool, number, string, list or mapping of them (so that it can \
             travel to the workers)"
        )))
    })
}

/// `value` (any serializable type) as the Python tree [`from_python`] reads back: dicts,
/// lists, strings, numbers, booleans and `None` (pythonize).
pub(crate) fn to_python<T: serde::Serialize>(py: Python<'_>, value: &T) -> PyResult<Py<PyAny>> {
    pythonize::pythonize(py, value)
        .map(Bound::unbind)
        .map_err(|e| config(format!("unserializable value: {e}")))
}

/// One argument read by one of `doris_connection::OptionValue`'s rules (`int_in`,
/// `seconds`, `port`, `flag`: the crates' own), a `ConfigurationError` naming it.
pub(crate) fn rule<T>(
    name: &str,
    value: &Bound<'_, PyAny>,
    read: impl FnOnce(&doris_connection::OptionValue, &str) -> Result<T, ConnectionSettingsError>,
) -> PyResult<T> {
    read(&option(name, value)?, name).map_err(|e| config(e.to_string()))
}
