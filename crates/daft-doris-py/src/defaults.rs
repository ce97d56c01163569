//! `_native.DEFAULTS`: the crates' defaults as the Python signatures state them. The
//! signatures read their default values from here, so each lives once, in the crate that
//! applies it; Python holds none of its own.

use doris_connection::{ConnectionSettings, SslMode};
use doris_plan::DiscoveryPolicy;
use doris_read::{BatchLimits, SplitKind, TaskCounts};
use doris_sql::WriteOperation;
use doris_write::atomic::CommitRecord;
use doris_write::{WriteDisposition, WriteSpec};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `{"connection": {...}, "read": {...}, "write": {...}, "jobs": {...}}`, keyed by the
/// Python argument names.
pub(crate) fn defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let connection = PyDict::new(py);
    connection.set_item("username", ConnectionSettings::DEFAULT_USER)?;
    connection.set_item("mysql_port", ConnectionSettings::DEFAULT_MYSQL_PORT)?;
    connection.set_item("http_port", ConnectionSettings::DEFAULT_HTTP_PORT)?;
    connection.set_item("flight_port", ConnectionSettings::DEFAULT_FLIGHT_PORT)?;
    connection.set_item(
        "connect_timeout_seconds",
        ConnectionSettings::DEFAULT_CONNECT_TIMEOUT.as_secs_f64(),
    )?;
    connection.set_item(
        "query_timeout_seconds",
        ConnectionSettings::DEFAULT_QUERY_TIMEOUT.as_secs_f64(),
    )?;
    // A writer's one timeout is the settings' answer timeout.
    connection.set_item(
        "request_timeout_seconds",
        ConnectionSettings::DEFAULT_QUERY_TIMEOUT.as_secs_f64(),
    )?;
    connection.set_item("mysql_ssl_mode", SslMode::default().name())?;

    let read = PyDict::new(py);
    let limits = BatchLimits::default();
    read.set_item("batch_rows", limits.rows)?;
    read.set_item("batch_bytes", limits.bytes)?;
    read.set_item("split", SplitKind::default().as_str())?;
    read.set_item("discovery_policy", DiscoveryPolicy::default().as_str())?;
    read.set_item("target_tasks", TaskCounts::DEFAULT.target)?;
    read.set_item("max_tasks", TaskCounts::DEFAULT.max)?;
    read.set_item(
        "unreadable_columns",
        doris_read::options::UnreadableColumns::default().name(),
    )?;
    read.set_item(
        "timestamp_units",
        doris_read::TimestampUnits::default().name(),
    )?;
    read.set_item(
        "planning_timeout_seconds",
        TaskCounts::DEFAULT_PLANNING_TIMEOUT.as_secs_f64(),
    )?;

    let write = PyDict::new(py);
    let spec = WriteSpec::new(WriteOperation::Load);
    write.set_item("operation", spec.operation.as_str())?;
    write.set_item("batch_rows", spec.batch_rows)?;
    write.set_item("batch_bytes", spec.batch_bytes)?;
    write.set_item("label_prefix", &spec.label_prefix)?;
    write.set_item("max_filter_ratio", spec.max_filter_ratio)?;
    write.set_item("strict_mode", spec.strict_mode)?;
    write.set_item("two_phase_commit", spec.two_phase_commit)?;
    write.set_item("max_retries", spec.max_retries)?;
    write.set_item("write_mode", WriteDisposition::default().as_str())?;
    write.set_item(
        "commit_ledger",
        match &spec.commit_record {
            CommitRecord::Ledger(name) => Some(name.as_str()),
            CommitRecord::LabelOnly => None,
        },
    )?;

    let jobs = PyDict::new(py);
    jobs.set_item(
        "timeout_seconds",
        doris_jobs::admin::DEFAULT_WAIT.as_secs_f64(),
    )?;
    jobs.set_item(
        "poll_seconds",
        doris_jobs::admin::DEFAULT_POLL.as_secs_f64(),
    )?;

    jobs.set_item("prefix", doris_jobs::StagePlan::DEFAULT_PREFIX)?;
    jobs.set_item("file_format", doris_jobs::StagePlan::DEFAULT_FORMAT)?;
    jobs.set_item(
        "rows_per_file",
        doris_jobs::StagePlan::DEFAULT_ROWS_PER_FILE,
    )?;

    let all = PyDict::new(py);
    all.set_item("connection", connection)?;
    all.set_item("read", read)?;
    all.set_item("write", write)?;
    all.set_item("jobs", jobs)?;
    Ok(all)
}

/// `{"connection": [...], "read": [...], "write": [...], "jobs": [...]}`: the option names
/// each crate reads by name (`ConnectionOptions::NAMES`, `ReadOptions::NAMES`,
/// `WriteSpec::OPTION_NAMES`, `JobSettings::NAMES`), which the Python signatures and typed
/// dicts declare (checked by `tests/python/test_parity.py`).
pub(crate) fn option_names(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let all = PyDict::new(py);
    all.set_item("connection", doris_connection::ConnectionOptions::NAMES)?;
    all.set_item("read", doris_read::options::ReadOptions::NAMES)?;
    all.set_item("write", WriteSpec::OPTION_NAMES)?;
    all.set_item("jobs", doris_jobs::JobSettings::NAMES)?;
    Ok(all)
}
