//! The write options' rules (`_native.check_write_options`), checked once, here, when
//! `DorisWriteOptions` is made: every argument as Python passed it (a wrong type is named
//! like a wrong value), the combinations the package refuses, the label grammar of
//! `doris-streamload` and the Stream Load options as `TableWriter` will build them.

use std::collections::BTreeMap;

use doris_streamload::{Label, LabelScheme};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::args;
use crate::errors::{ErrorClass, load_error, raise};
use crate::write::{LoadSettings, load_options};

/// What a write does with its rows.
const OPERATIONS: &[&str] = &["load", "upsert", "partial_update", "delete"];
/// The Stream Load bodies the writer can send.
const FORMATS: &[&str] = &["arrow", "parquet", "json", "csv"];
/// Most rows of one load batch.
const MAX_BATCH_ROWS: i64 = 1_000_000;
/// Most bytes of one load batch.
const MAX_BATCH_BYTES: i64 = 1 << 30;
/// Most retries of one load.
const MAX_RETRIES: i64 = 20;
/// The longest label part a user names: prefix and idempotence key together leave room
/// for the content fingerprint, occurrence and sequence numbers within Doris's 128.
const MAX_PREFIX_AND_KEY: usize = 80;

fn config(message: &str) -> PyErr {
    raise(ErrorClass::ConfigurationError, message.to_owned())
}

/// Checks a write's options before anything runs; a bad one is a `ConfigurationError`
/// that names it and the rule (never the value).
#[pyfunction]
#[pyo3(signature = (
    *,
    operation,
    format,
    batch_rows,
    batch_bytes,
    label_prefix,
    idempotence_key,
    max_filter_ratio,
    strict_mode,
    request_timeout_seconds,
    load_properties,
    two_phase_commit,
    max_retries,
    atomic,
    overwrite,
    commit_ledger,
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_write_options(
    operation: Bound<'_, PyAny>,
    format: Bound<'_, PyAny>,
    batch_rows: Bound<'_, PyAny>,
    batch_bytes: Bound<'_, PyAny>,
    label_prefix: Bound<'_, PyAny>,
    idempotence_key: Bound<'_, PyAny>,
    max_filter_ratio: Bound<'_, PyAny>,
    strict_mode: Bound<'_, PyAny>,
    request_timeout_seconds: Bound<'_, PyAny>,
    load_properties: Bound<'_, PyAny>,
    two_phase_commit: Bound<'_, PyAny>,
    max_retries: Bound<'_, PyAny>,
    atomic: Bound<'_, PyAny>,
    overwrite: Bound<'_, PyAny>,
    commit_ledger: Bound<'_, PyAny>,
) -> PyResult<()> {
    if !commit_ledger.is_none() {
        let ledger: String = commit_ledger
            .cast::<PyString>()
            .map_err(|_| config("commit_ledger must be a table name or None"))?
            .to_string();
        doris_sql::validate_ident("table", &ledger).map_err(|e| {
            raise(
                ErrorClass::ConfigurationError,
                format!("commit_ledger: {e}"),
            )
        })?;
    }
    let operation = args::choice("operation", &operation, OPERATIONS)?;
    let format = if format.is_none() {
        None
    } else {
        Some(args::choice("format", &format, FORMATS)?)
    };
    if operation == "partial_update" && matches!(format, Some("parquet" | "csv")) {
        return Err(config("partial_update requires format='arrow' or 'json'"));
    }
    args::int_in("batch_rows", &batch_rows, 1, MAX_BATCH_ROWS)?;
    args::int_in("batch_bytes", &batch_bytes, 1, MAX_BATCH_BYTES)?;
    let max_filter_ratio = ratio(&max_filter_ratio)?;
    let strict_mode = args::flag("strict_mode", &strict_mode)?;
    let two_phase_commit = args::flag("two_phase_commit", &two_phase_commit)?;
    let request_timeout_seconds = if request_timeout_seconds.is_none() {
        None
    } else {
        Some(args::seconds("request_timeout_seconds", &request_timeout_seconds)?.as_secs_f64())
    };
    args::int_in("max_retries", &max_retries, 0, MAX_RETRIES)?;
    let atomic = args::flag("atomic", &atomic)?;
    let overwrite = args::flag("overwrite", &overwrite)?;
    if overwrite && !(atomic && operation == "load") {
        return Err(config(
            "write_mode='overwrite' replaces the table in one atomic transaction: it needs the \
             atomic mode and operation='load'",
        ));
    }
    if atomic && operation == "delete" {
        return Err(config(
            "atomic writes support operation='load', 'upsert' and 'partial_update' \
             (deletes are not staged; see docs/consistency.md)",
        ));
    }
    if atomic && two_phase_commit {
        return Err(config(
            "atomic writes commit once themselves: two_phase_commit does not apply",
        ));
    }
    let load_properties = properties(&load_properties)?;
    check_labels(&label_prefix, &idempotence_key)?;
    load_options(&LoadSettings {
        operation,
        format,
        max_filter_ratio,
        strict_mode,
        two_phase_commit,
        load_properties: &load_properties,
        request_timeout_seconds,
    })
    .map(|_| ())
}

/// `max_filter_ratio`: a number from 0 to 1.
fn ratio(value: &Bound<'_, PyAny>) -> PyResult<f64> {
    let refuse = || config("max_filter_ratio must be a number from 0 to 1");
    if value.is_instance_of::<PyBool>()
        || !(value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>())
    {
        return Err(refuse());
    }
    value
        .extract::<f64>()
        .ok()
        .filter(|r| (0.0..=1.0).contains(r))
        .ok_or_else(refuse)
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

/// The label parts: every label the write can make must fit `doris-streamload`'s grammar.
fn check_labels(prefix: &Bound<'_, PyAny>, key: &Bound<'_, PyAny>) -> PyResult<()> {
    const PREFIX_RULE: &str = "label_prefix must be 1-95 letters, digits, '-' or '_'";
    const KEY_RULE: &str = "idempotence_key must be 1-64 letters, digits, '-', '_' or ':'";
    let starts_alphanumeric = |s: &str| s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    let prefix: String = prefix
        .cast::<PyString>()
        .map_err(|_| config(PREFIX_RULE))?
        .to_string();
    if !starts_alphanumeric(&prefix)
        || prefix.len() > 95
        || prefix.contains(':')
        || Label::new(prefix.as_str()).is_err()
    {
        return Err(config(PREFIX_RULE));
    }
    if !key.is_none() {
        let key: String = key
            .cast::<PyString>()
            .map_err(|_| config(KEY_RULE))?
            .to_string();
        if !starts_alphanumeric(&key) || key.len() > 64 || Label::new(key.as_str()).is_err() {
            return Err(config(KEY_RULE));
        }
        if prefix.len() + key.len() > MAX_PREFIX_AND_KEY {
            return Err(config(
                "label_prefix and idempotence_key together must be at most 80 characters \
                 (labels also carry a content fingerprint and sequence numbers, 128 in all)",
            ));
        }
        // The longest label of the write: key, 16-digit fingerprint, occurrence, sequence.
        LabelScheme::Deterministic {
            prefix: prefix.clone(),
            key: format!("{key}_{}", "f".repeat(16)),
            partition: u32::MAX,
        }
        .validate()
        .map_err(|e| load_error(&e))?;
    }
    LabelScheme::Random { prefix }
        .validate()
        .map_err(|e| load_error(&e))
}
