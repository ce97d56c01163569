//! The native half of the Python package `daft_doris`, imported as `daft_doris._native`.
//!
//! Everything that talks to Doris lives in the Rust crates (`doris-read`, `doris-plan`,
//! `doris-streamload`, `doris-sql`); this crate only converts between Python and Rust:
//! typed requests in (`DorisConnection`, `ReadRequest`, …; values checked here), Arrow through the C data
//! interface (pyo3-arrow) both ways, and Rust errors raised as the package's own
//! exception classes (`daft_doris.errors`). Every
//! network wait runs on a shared Tokio runtime with the GIL released.
//!
//! The crates' `tracing` events go to Python's `logging` under `daft_doris` (`logging`).
//!
//! Passwords travel inside `DorisConnection` as the user gave them (a string, or a
//! `daft_doris.secrets.SecretRef` resolved on each worker), are resolved in the process
//! that connects, and are kept in `secrecy` types from there on.

mod args;
mod atomic;
mod catalog;
mod checks;
mod connection;
mod defaults;
mod diagnose;
mod errors;
mod jobs;
mod logging;
mod plan;
mod read;
mod read_options;
mod runtime;
mod write;

use pyo3::prelude::*;

/// The `daft_doris._native` module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    logging::install();
    // The runtime ends before the interpreter does (`runtime::shutdown`).
    let shutdown = wrap_pyfunction!(runtime::shutdown, m)?;
    m.py()
        .import("atexit")?
        .call_method1("register", (shutdown,))?;
    m.add("DEFAULTS", defaults::defaults(m.py())?)?;
    m.add("OPTION_NAMES", defaults::option_names(m.py())?)?;
    // The crates' error vocabulary and the classes raised from it, for the package's tests.
    m.add("ERROR_KINDS", errors::kind_names())?;
    m.add("ERROR_CLASSES", errors::class_names())?;
    m.add_class::<connection::DorisConnection>()?;
    m.add_function(wrap_pyfunction!(read::describe_table, m)?)?;
    m.add_class::<plan::ReadRequest>()?;
    m.add_function(wrap_pyfunction!(plan::plan_read, m)?)?;
    m.add_class::<read::BatchReader>()?;
    m.add_function(wrap_pyfunction!(read_options::check_unreadable_columns, m)?)?;
    m.add_function(wrap_pyfunction!(write::check_write_options, m)?)?;
    m.add_class::<write::WriteRun>()?;
    m.add_class::<write::WriteTask>()?;
    m.add_function(wrap_pyfunction!(atomic::atomic_cleanup, m)?)?;
    m.add_function(wrap_pyfunction!(atomic::atomic_cleanup_ledger, m)?)?;
    m.add_class::<catalog::CatalogOptions>()?;
    m.add_function(wrap_pyfunction!(catalog::catalog_list_databases, m)?)?;
    m.add_function(wrap_pyfunction!(catalog::catalog_find_tables, m)?)?;
    m.add_function(wrap_pyfunction!(catalog::catalog_exists, m)?)?;
    m.add_function(wrap_pyfunction!(catalog::catalog_database, m)?)?;
    m.add_function(wrap_pyfunction!(catalog::catalog_create_table, m)?)?;
    m.add_function(wrap_pyfunction!(catalog::catalog_drop_table, m)?)?;
    m.add_function(wrap_pyfunction!(diagnose::diagnose, m)?)?;
    m.add_class::<jobs::Insert>()?;
    m.add_class::<jobs::Stage>()?;
    m.add_function(wrap_pyfunction!(checks::check_identifier, m)?)?;
    m.add_function(wrap_pyfunction!(checks::qualified_name, m)?)?;
    m.add_function(wrap_pyfunction!(checks::check_flag, m)?)?;
    m.add_function(wrap_pyfunction!(checks::check_columns, m)?)?;
    m.add_function(wrap_pyfunction!(checks::secret_source, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::check_s3_source, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::check_job_name, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::redact_properties, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::job_wait, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::job_create, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::job_alter, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::job_control, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::job_list, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::task_list, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::jobs_schema, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::tasks_schema, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
