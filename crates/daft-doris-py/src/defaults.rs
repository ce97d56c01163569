//! `_native.DEFAULTS` and `_native.OPTION_NAMES`: the crates' defaults and option names as
//! the Python signatures state them. The signatures read their default values from here,
//! so each lives once, in the crate that applies it (`ConnectionOptions::defaults`,
//! `ReadOptions::defaults`, `WriteSpec::option_defaults`, `doris_jobs`' staging and waiting
//! constants); Python holds none of its own.

use doris_connection::{ConnectionOptions, OptionValue};
use doris_jobs::StagePlan;
use doris_jobs::admin::{DEFAULT_POLL, DEFAULT_WAIT};
use doris_read::options::ReadOptions;
use doris_write::WriteSpec;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `{"connection": {...}, "read": {...}, "write": {...}, "jobs": {...}}`, keyed by the
/// Python argument names.
pub(crate) fn defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let jobs = vec![
        (
            "timeout_seconds",
            OptionValue::Float(DEFAULT_WAIT.as_secs_f64()),
        ),
        (
            "poll_seconds",
            OptionValue::Float(DEFAULT_POLL.as_secs_f64()),
        ),
        (
            "prefix",
            OptionValue::Text(StagePlan::DEFAULT_PREFIX.into()),
        ),
        (
            "file_format",
            OptionValue::Text(StagePlan::DEFAULT_FORMAT.into()),
        ),
        (
            "rows_per_file",
            OptionValue::Int(StagePlan::DEFAULT_ROWS_PER_FILE as i64),
        ),
    ];
    let all = PyDict::new(py);
    for (group, values) in [
        ("connection", ConnectionOptions::defaults()),
        ("read", ReadOptions::defaults()),
        ("write", WriteSpec::option_defaults()),
        ("jobs", jobs),
    ] {
        let dict = PyDict::new(py);
        for (name, value) in values {
            dict.set_item(name, crate::args::to_python(py, &value)?)?;
        }
        all.set_item(group, dict)?;
    }
    Ok(all)
}

/// `{"connection": [...], "read": [...], "write": [...], "jobs": [...]}`: the option names
/// each crate reads by name (`ConnectionOptions::NAMES`, `ReadOptions::NAMES`,
/// `WriteSpec::OPTION_NAMES`, `JobSettings::NAMES`), which the Python signatures and typed
/// dicts declare (checked by `tests/python/test_parity.py`).
pub(crate) fn option_names(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let all = PyDict::new(py);
    all.set_item("connection", ConnectionOptions::NAMES)?;
    all.set_item("read", ReadOptions::NAMES)?;
    all.set_item("write", WriteSpec::OPTION_NAMES)?;
    all.set_item("jobs", doris_jobs::JobSettings::NAMES)?;
    Ok(all)
}
