//! `_native.check_write_options` and the write spec every writer is built from: the
//! options Python was given (only those), converted into `doris_write::WriteSpec`, whose
//! `check` holds every rule (ranges, combinations, the label grammar, the Stream Load
//! options). A value of the wrong type is converted into one the rule refuses, so it is
//! named by the same message as a wrong value.

use std::collections::BTreeMap;

use doris_sql::WriteOperation;
use doris_write::atomic::CommitRecord;
use doris_write::{WriteDisposition, WriteSpec, parse_format};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};

use crate::args;
use crate::errors::{ErrorClass, load_error, raise};

fn config(message: &str) -> PyErr {
    raise(ErrorClass::ConfigurationError, message.to_owned())
}

/// The option names a write takes (`DorisWriteOptions`' keys); each one left out takes
/// [`WriteSpec::new`]'s default.
pub(crate) const OPTION_NAMES: [&str; 16] = [
    "operation",
    "format",
    "batch_rows",
    "batch_bytes",
    "label_prefix",
    "idempotence_key",
    "max_filter_ratio",
    "strict_mode",
    "request_timeout_seconds",
    "load_timeout_seconds",
    "load_properties",
    "two_phase_commit",
    "max_retries",
    "atomic",
    "write_mode",
    "commit_ledger",
];

/// The spec of the write `options` (`DorisWriteOptions`, the keys given), checked
/// (`WriteSpec::check`). A key left out keeps `WriteSpec::new`'s default; an unknown key
/// is refused by name.
pub(crate) fn write_spec(options: &Bound<'_, PyDict>) -> PyResult<WriteSpec> {
    for key in options.keys() {
        let key: String = key
            .extract()
            .map_err(|_| config("write option names must be strings"))?;
        if !OPTION_NAMES.contains(&key.as_str()) {
            return Err(config(&format!("{key:?} is not a write option")));
        }
    }
    let given = |name: &str| options.get_item(name);
    let operation: WriteOperation = match given("operation")? {
        Some(value) => args::named(&value).map_err(|e: String| config(&e))?,
        None => WriteOperation::Load,
    };
    let mut spec = WriteSpec::new(operation);
    if let Some(value) = given("format")? {
        spec.format = parse_format(optional_text(&value).as_deref()).map_err(|e| load_error(&e))?;
    }
    if let Some(value) = given("batch_rows")? {
        spec.batch_rows = usize::try_from(integer(&value)).unwrap_or(0);
    }
    if let Some(value) = given("batch_bytes")? {
        spec.batch_bytes = u64::try_from(integer(&value)).unwrap_or(0);
    }
    if let Some(value) = given("label_prefix")? {
        spec.label_prefix = text(&value);
    }
    if let Some(value) = given("idempotence_key")? {
        spec.idempotence_key = optional_text(&value);
    }
    if let Some(value) = given("max_filter_ratio")? {
        spec.max_filter_ratio = number(&value);
    }
    if let Some(value) = given("strict_mode")? {
        spec.strict_mode = args::flag("strict_mode", &value)?;
    }
    if let Some(value) = given("request_timeout_seconds")? {
        spec.timeout = if value.is_none() {
            None
        } else {
            Some(args::seconds("request_timeout_seconds", &value)?)
        };
    }
    if let Some(value) = given("load_timeout_seconds")? {
        spec.load_timeout = if value.is_none() {
            None
        } else {
            Some(args::seconds("load_timeout_seconds", &value)?)
        };
    }
    // `None` is 1.1's default, passed explicitly: no properties.
    if let Some(value) = given("load_properties")?
        && !value.is_none()
    {
        spec.load_properties = properties(&value)?;
    }
    if let Some(value) = given("two_phase_commit")? {
        spec.two_phase_commit = args::flag("two_phase_commit", &value)?;
    }
    if let Some(value) = given("max_retries")? {
        spec.max_retries = u32::try_from(integer(&value)).unwrap_or(u32::MAX);
    }
    if let Some(value) = given("atomic")? {
        spec.atomic = if value.is_none() {
            None
        } else {
            Some(args::flag("atomic", &value)?)
        };
    }
    if let Some(value) = given("write_mode")? {
        spec.overwrite = args::named::<WriteDisposition>(&value)
            .map_err(|e| load_error(&e))?
            .overwrites();
    }
    if let Some(value) = given("commit_ledger")? {
        spec.commit_record = match optional_text(&value) {
            Some(name) => CommitRecord::Ledger(name),
            None => CommitRecord::LabelOnly,
        };
    }
    spec.check().map_err(|e| load_error(&e))?;
    Ok(spec)
}

/// Checks a write's options (`DorisWriteOptions`) before anything runs; a bad one is a
/// `ConfigurationError` that names it and the rule (never the value).
#[pyfunction]
pub(crate) fn check_write_options(options: Bound<'_, PyDict>) -> PyResult<()> {
    write_spec(&options).map(|_| ())
}

/// Refuses a write whose engine may retry its tasks (Daft's Ray runner) unless it keeps
/// its guarantee under retries (`WriteSpec::check_retried_tasks`).
#[pyfunction]
pub(crate) fn check_retried_tasks(options: Bound<'_, PyDict>) -> PyResult<()> {
    write_spec(&options)?
        .check_retried_tasks()
        .map_err(|e| load_error(&e))
}

/// A string: anything else is the empty string, which every name's rule refuses.
fn text(value: &Bound<'_, PyAny>) -> String {
    value
        .cast::<PyString>()
        .map(|s| s.to_string())
        .unwrap_or_default()
}

/// `None`, or a string as [`text`] takes it.
fn optional_text(value: &Bound<'_, PyAny>) -> Option<String> {
    (!value.is_none()).then(|| text(value))
}

/// An integer (a `bool` is not one): anything else is -1, which every count's rule refuses.
fn integer(value: &Bound<'_, PyAny>) -> i64 {
    if value.is_instance_of::<PyBool>() || !value.is_instance_of::<PyInt>() {
        return -1;
    }
    value.extract::<i64>().unwrap_or(-1)
}

/// A number (int or float, not a bool): anything else is NaN, which every rule refuses.
fn number(value: &Bound<'_, PyAny>) -> f64 {
    if value.is_instance_of::<PyBool>()
        || !(value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>())
    {
        return f64::NAN;
    }
    value.extract::<f64>().unwrap_or(f64::NAN)
}

/// `load_properties`: a mapping of strings to strings, or `(key, value)` pairs; keys not
/// empty.
fn properties(value: &Bound<'_, PyAny>) -> PyResult<BTreeMap<String, String>> {
    let pairs: Vec<Bound<'_, PyAny>> = if let Ok(mapping) = value.cast::<PyMapping>() {
        mapping.items()?.try_iter()?.collect::<PyResult<_>>()?
    } else if value.is_instance_of::<PyTuple>() || value.is_instance_of::<PyList>() {
        value.try_iter()?.collect::<PyResult<_>>()?
    } else {
        return Err(config(
            "load_properties must be a mapping of strings or (key, value) pairs",
        ));
    };
    let mut out = BTreeMap::new();
    for pair in pairs {
        let (key, item): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair
            .extract()
            .map_err(|_| config("load_properties must be (key, value) pairs"))?;
        let key = key
            .cast::<PyString>()
            .ok()
            .map(|k| k.to_string())
            .filter(|k| !k.is_empty())
            .ok_or_else(|| config("load_properties keys must be non-empty strings"))?;
        let item = item
            .cast::<PyString>()
            .map_err(|_| config("load_properties values must be strings"))?
            .to_string();
        out.insert(key, item);
    }
    Ok(out)
}
