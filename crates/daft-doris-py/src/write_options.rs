//! The write spec every writer is built from: the options Python was given (only those,
//! `DorisWriteOptions`' keys) converted into named options and read by
//! `doris_write::WriteSpec::from_options`, which holds every name and rule.

use doris_write::WriteSpec;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::args;
use crate::errors::load_error;

/// The spec of the write `options` (`DorisWriteOptions`, the keys given), checked.
pub(crate) fn write_spec(options: &Bound<'_, PyDict>) -> PyResult<WriteSpec> {
    WriteSpec::from_options(args::options("", options)?).map_err(|e| load_error(&e))
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
