//! `_native.check_write_options` and the write spec every writer is built from: Python
//! arguments converted, as given, into `doris_streamload::write::WriteSpec`, whose
//! `check` holds every rule (ranges, combinations, the label grammar, the Stream Load
//! options). A value of the wrong type is converted into one the rule refuses, so it is
//! named by the same message as a wrong value.

use std::collections::BTreeMap;

use doris_sql::WriteOperation;
use doris_streamload::atomic::CommitRecord;
use doris_streamload::write::{WriteSpec, parse_format};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::args;
use crate::errors::{ErrorClass, load_error, raise};

fn config(message: &str) -> PyErr {
    raise(ErrorClass::ConfigurationError, message.to_owned())
}

/// The write options as Python passes them (`DorisWriteOptions`' fields).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct WriteArgs<'py> {
    operation: Bound<'py, PyAny>,
    format: Bound<'py, PyAny>,
    batch_rows: Bound<'py, PyAny>,
    batch_bytes: Bound<'py, PyAny>,
    label_prefix: Bound<'py, PyAny>,
    idempotence_key: Bound<'py, PyAny>,
    max_filter_ratio: Bound<'py, PyAny>,
    strict_mode: Bound<'py, PyAny>,
    request_timeout_seconds: Bound<'py, PyAny>,
    load_properties: Bound<'py, PyAny>,
    two_phase_commit: Bound<'py, PyAny>,
    max_retries: Bound<'py, PyAny>,
    atomic: Bound<'py, PyAny>,
    overwrite: Bound<'py, PyAny>,
    commit_ledger: Bound<'py, PyAny>,
}

/// The spec of `args`, checked (`WriteSpec::check`).
pub(crate) fn write_spec(args: &WriteArgs<'_>) -> PyResult<WriteSpec> {
    let operation: WriteOperation = args::named(&args.operation).map_err(|e: String| config(&e))?;
    let format = optional_text(&args.format);
    let spec = WriteSpec {
        operation,
        format: parse_format(format.as_deref()).map_err(|e| load_error(&e))?,
        batch_rows: usize::try_from(integer(&args.batch_rows)).unwrap_or(0),
        batch_bytes: u64::try_from(integer(&args.batch_bytes)).unwrap_or(0),
        label_prefix: text(&args.label_prefix),
        idempotence_key: optional_text(&args.idempotence_key),
        max_filter_ratio: number(&args.max_filter_ratio),
        strict_mode: args::flag("strict_mode", &args.strict_mode)?,
        timeout: if args.request_timeout_seconds.is_none() {
            None
        } else {
            Some(args::seconds(
                "request_timeout_seconds",
                &args.request_timeout_seconds,
            )?)
        },
        load_properties: properties(&args.load_properties)?,
        two_phase_commit: args::flag("two_phase_commit", &args.two_phase_commit)?,
        max_retries: u32::try_from(integer(&args.max_retries)).unwrap_or(u32::MAX),
        atomic: if args.atomic.is_none() {
            None
        } else {
            Some(args::flag("atomic", &args.atomic)?)
        },
        overwrite: args::flag("overwrite", &args.overwrite)?,
        commit_record: match optional_text(&args.commit_ledger) {
            Some(name) => CommitRecord::Ledger(name),
            None => CommitRecord::LabelOnly,
        },
    };
    spec.check().map_err(|e| load_error(&e))?;
    Ok(spec)
}

/// Checks a write's options before anything runs; a bad one is a `ConfigurationError`
/// that names it and the rule (never the value).
#[pyfunction]
#[pyo3(signature = (**options))]
pub(crate) fn check_write_options(options: Option<Bound<'_, pyo3::types::PyDict>>) -> PyResult<()> {
    let options = options.ok_or_else(|| config("no write options given"))?;
    let args: WriteArgs<'_> = options
        .extract()
        .map_err(|e| config(&format!("write options: {e}")))?;
    write_spec(&args).map(|_| ())
}

/// Refuses a write whose engine may retry its tasks (Daft's Ray runner) unless it keeps
/// its guarantee under retries (`WriteSpec::check_retried_tasks`).
#[pyfunction]
#[pyo3(signature = (**options))]
pub(crate) fn check_retried_tasks(options: Option<Bound<'_, pyo3::types::PyDict>>) -> PyResult<()> {
    let options = options.ok_or_else(|| config("no write options given"))?;
    let args: WriteArgs<'_> = options.extract()?;
    write_spec(&args)?
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

/// `load_properties`: `(key, value)` pairs of strings, keys not empty.
fn properties(value: &Bound<'_, PyAny>) -> PyResult<BTreeMap<String, String>> {
    let pairs: Vec<Bound<'_, PyAny>> =
        if value.is_instance_of::<PyTuple>() || value.is_instance_of::<PyList>() {
            value.try_iter()?.collect::<PyResult<_>>()?
        } else {
            return Err(config("load_properties must be (key, value) pairs"));
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
