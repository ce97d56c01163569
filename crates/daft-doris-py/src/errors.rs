//! Rust errors raised as the exception classes of `daft_doris.errors`.
//!
//! The classes are defined in Python (so users can import, subclass and document them);
//! [`ErrorClass`] names each one once, and each crate's error type maps to it here. Texts
//! come from the Rust crates, which never put a password, a bound value or a response
//! body into an error.

use doris_read::ReadError;
use doris_streamload::{LoaderError, StreamLoadError};
use pyo3::prelude::*;

/// The classes of `daft_doris.errors`, imported when first raised.
mod classes {
    pyo3::import_exception!(daft_doris.errors, AuthenticationError);
    pyo3::import_exception!(daft_doris.errors, ConfigurationError);
    pyo3::import_exception!(daft_doris.errors, DatabaseObjectNotFoundError);
    pyo3::import_exception!(daft_doris.errors, DatabasePermissionError);
    pyo3::import_exception!(daft_doris.errors, DiscoveryError);
    pyo3::import_exception!(daft_doris.errors, DorisAmbiguousWriteError);
    pyo3::import_exception!(daft_doris.errors, DorisLabelExistsError);
    pyo3::import_exception!(daft_doris.errors, DorisMetadataError);
    pyo3::import_exception!(daft_doris.errors, DorisPartialCommitError);
    pyo3::import_exception!(daft_doris.errors, DorisReleaseError);
    pyo3::import_exception!(daft_doris.errors, DorisStreamingJobError);
    pyo3::import_exception!(daft_doris.errors, DorisTableCompatibilityError);
    pyo3::import_exception!(daft_doris.errors, DorisTimeoutError);
    pyo3::import_exception!(daft_doris.errors, DorisWriteAuthenticationError);
    pyo3::import_exception!(daft_doris.errors, DorisWriteError);
    pyo3::import_exception!(daft_doris.errors, DorisWritePermissionError);
    pyo3::import_exception!(daft_doris.errors, SchemaError);
    pyo3::import_exception!(daft_doris.errors, StagingOrderError);
    pyo3::import_exception!(daft_doris.errors, TransportError);
}

/// An exception class of `daft_doris.errors` (named as in Python, so a class that does not
/// exist is a compile error, not a failure at raise time).
// Each variant is its Python class's exact name, `…Error` included.
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorClass {
    /// `daft_doris.errors.AuthenticationError`.
    AuthenticationError,
    /// `daft_doris.errors.ConfigurationError`.
    ConfigurationError,
    /// `daft_doris.errors.DatabaseObjectNotFoundError`.
    DatabaseObjectNotFoundError,
    /// `daft_doris.errors.DatabasePermissionError`.
    DatabasePermissionError,
    /// `daft_doris.errors.DiscoveryError`.
    DiscoveryError,
    /// `daft_doris.errors.DorisAmbiguousWriteError`.
    DorisAmbiguousWriteError,
    /// `daft_doris.errors.DorisLabelExistsError`.
    DorisLabelExistsError,
    /// `daft_doris.errors.DorisMetadataError`.
    DorisMetadataError,
    /// `daft_doris.errors.DorisPartialCommitError`.
    DorisPartialCommitError,
    /// `daft_doris.errors.DorisReleaseError`.
    DorisReleaseError,
    /// `daft_doris.errors.DorisStreamingJobError`.
    DorisStreamingJobError,
    /// `daft_doris.errors.DorisTableCompatibilityError`.
    DorisTableCompatibilityError,
    /// `daft_doris.errors.DorisTimeoutError`.
    DorisTimeoutError,
    /// `daft_doris.errors.DorisWriteAuthenticationError`.
    DorisWriteAuthenticationError,
    /// `daft_doris.errors.DorisWriteError`.
    DorisWriteError,
    /// `daft_doris.errors.DorisWritePermissionError`.
    DorisWritePermissionError,
    /// `daft_doris.errors.SchemaError`.
    SchemaError,
    /// `daft_doris.errors.StagingOrderError`.
    StagingOrderError,
    /// `daft_doris.errors.TransportError`.
    TransportError,
}

impl ErrorClass {
    /// An exception of this class with `message`.
    pub(crate) fn error(self, message: String) -> PyErr {
        match self {
            Self::AuthenticationError => classes::AuthenticationError::new_err(message),
            Self::ConfigurationError => classes::ConfigurationError::new_err(message),
            Self::DatabaseObjectNotFoundError => {
                classes::DatabaseObjectNotFoundError::new_err(message)
            }
            Self::DatabasePermissionError => classes::DatabasePermissionError::new_err(message),
            Self::DiscoveryError => classes::DiscoveryError::new_err(message),
            Self::DorisAmbiguousWriteError => classes::DorisAmbiguousWriteError::new_err(message),
            Self::DorisLabelExistsError => classes::DorisLabelExistsError::new_err(message),
            Self::DorisMetadataError => classes::DorisMetadataError::new_err(message),
            Self::DorisPartialCommitError => classes::DorisPartialCommitError::new_err(message),
            Self::DorisReleaseError => classes::DorisReleaseError::new_err(message),
            Self::DorisStreamingJobError => classes::DorisStreamingJobError::new_err(message),
            Self::DorisTableCompatibilityError => {
                classes::DorisTableCompatibilityError::new_err(message)
            }
            Self::DorisTimeoutError => classes::DorisTimeoutError::new_err(message),
            Self::DorisWriteAuthenticationError => {
                classes::DorisWriteAuthenticationError::new_err(message)
            }
            Self::DorisWriteError => classes::DorisWriteError::new_err(message),
            Self::DorisWritePermissionError => classes::DorisWritePermissionError::new_err(message),
            Self::SchemaError => classes::SchemaError::new_err(message),
            Self::StagingOrderError => classes::StagingOrderError::new_err(message),
            Self::TransportError => classes::TransportError::new_err(message),
        }
    }
}

/// Builds an exception of `class` with `message`.
pub(crate) fn raise(class: ErrorClass, message: impl Into<String>) -> PyErr {
    class.error(message.into())
}

/// A read error as its exception class.
pub(crate) fn read_error(e: ReadError) -> PyErr {
    let class = match &e {
        ReadError::Config(_) | ReadError::Statement(_) | ReadError::LocationRefused { .. } => {
            ErrorClass::ConfigurationError
        }
        ReadError::Auth(_) => ErrorClass::AuthenticationError,
        ReadError::Permission(_) => ErrorClass::DatabasePermissionError,
        ReadError::NotFound(_) => ErrorClass::DatabaseObjectNotFoundError,
        ReadError::UnsupportedColumn { .. } | ReadError::Decode { .. } => ErrorClass::SchemaError,
        ReadError::Metadata(_) | ReadError::MetadataParse(_) => ErrorClass::SchemaError,
        ReadError::Planning(_) => ErrorClass::DiscoveryError,
        ReadError::Timeout(_) => ErrorClass::DorisTimeoutError,
        ReadError::JobPaused { .. } => ErrorClass::DorisStreamingJobError,
        _ => ErrorClass::TransportError,
    };
    raise(class, e.to_string())
}

/// A `doris-sql` error from checking a caller's arguments: a `ConfigurationError`, or
/// `StagingOrderError` for files that would sort at or below a job's offset.
pub(crate) fn sql_error(e: doris_sql::SqlError) -> PyErr {
    let class = match &e {
        doris_sql::SqlError::StagingOrder(_) => ErrorClass::StagingOrderError,
        _ => ErrorClass::ConfigurationError,
    };
    raise(class, e.to_string())
}

/// An error of a streaming job's statement: Doris's refusal (a job that is not paused, a
/// name in use, a property it refuses) is a `DorisStreamingJobError`; anything else is a
/// read error's class.
pub(crate) fn job_error(e: ReadError) -> PyErr {
    match e {
        ReadError::Query { .. } => raise(ErrorClass::DorisStreamingJobError, e.to_string()),
        other => read_error(other),
    }
}

/// A metadata error of the writer's table check (`SHOW CREATE TABLE` / `DESC`).
pub(crate) fn write_metadata_error(e: ReadError) -> PyErr {
    match e {
        ReadError::Metadata(m) => raise(
            ErrorClass::DorisMetadataError,
            format!("the table's metadata cannot be understood: {m}"),
        ),
        ReadError::MetadataParse(source) => raise(
            ErrorClass::DorisMetadataError,
            format!("the table's metadata cannot be understood: {source}"),
        ),
        ReadError::Transport(_) | ReadError::Timeout(_) | ReadError::Query { .. } => raise(
            ErrorClass::DiscoveryError,
            format!("Doris table metadata discovery failed: {e}"),
        ),
        other => read_error(other),
    }
}

/// A Stream Load error as its exception class, with the error's fields as attributes
/// (`label`, `txn_id`, `status`, `error_url`, `attempts`, `column`, and for a partial
/// settlement `committed`, `aborted`, `left`; see `daft_doris.errors`) and the error it
/// wraps as `__cause__`.
pub(crate) fn load_error(e: &StreamLoadError) -> PyErr {
    let err = raise(load_error_class(e), e.to_string());
    with_fields(&err, e);
    err
}

/// A failed loader as the exception class of its error, with that error's fields and the
/// labels of the pre-committed loads it aborted (`aborted`) or could not abort (`left`).
pub(crate) fn loader_error(e: &LoaderError) -> PyErr {
    let err = raise(load_error_class(&e.error), e.to_string());
    with_fields(&err, &e.error);
    Python::attach(|py| {
        let value = err.value(py);
        for (name, list) in [("aborted", &e.aborted), ("left", &e.left_precommitted)] {
            if let Ok(items) = pyo3::types::PyList::new(py, list) {
                let _ = value.setattr(name, items);
            }
        }
    });
    err
}

/// Sets `e`'s fields as attributes of the exception `err` (and its cause as `__cause__`).
fn with_fields(err: &PyErr, e: &StreamLoadError) {
    Python::attach(|py| {
        let value = err.value(py);
        // Setting an attribute on a fresh exception instance cannot fail.
        let set = |name: &str, v: Bound<'_, PyAny>| {
            let _ = value.setattr(name, v);
        };
        match e {
            StreamLoadError::Rejected {
                label, error_url, ..
            } => {
                set("label", string(py, label));
                if let Some(url) = error_url {
                    set("error_url", string(py, url));
                }
            }
            StreamLoadError::LabelExists {
                label,
                existing,
                txn_id,
            } => {
                set("label", string(py, label));
                set(
                    "status",
                    string(py, &format!("{existing:?}").to_uppercase()),
                );
                if let Some(t) = txn_id {
                    set("txn_id", integer(py, *t));
                }
            }
            StreamLoadError::Ambiguous {
                label, attempts, ..
            }
            | StreamLoadError::Transport {
                label, attempts, ..
            } => {
                set("label", string(py, label));
                set("attempts", integer(py, i64::from(*attempts)));
            }
            StreamLoadError::CounterMismatch { label, .. }
            | StreamLoadError::OverwriteNotApplied { label, .. } => {
                set("label", string(py, label));
            }
            StreamLoadError::ValueRejected { column, .. } => set("column", string(py, column)),
            StreamLoadError::TwoPhase { status, .. } => set("status", string(py, status)),
            StreamLoadError::PartialCommit {
                committed,
                aborted,
                left,
                source,
            } => {
                for (name, list) in [
                    ("committed", committed),
                    ("aborted", aborted),
                    ("left", left),
                ] {
                    if let Ok(items) = pyo3::types::PyList::new(py, list) {
                        set(name, items.into_any());
                    }
                }
                err.set_cause(py, Some(load_error(source)));
            }
            _ => {}
        }
    });
}

fn string<'py>(py: Python<'py>, text: &str) -> Bound<'py, PyAny> {
    pyo3::types::PyString::new(py, text).into_any()
}

fn integer(py: Python<'_>, n: i64) -> Bound<'_, PyAny> {
    n.into_pyobject(py)
        .map_or_else(|_| py.None().into_bound(py), Bound::into_any)
}

/// The exception class of a Stream Load error.
pub(crate) fn load_error_class(e: &StreamLoadError) -> ErrorClass {
    match e {
        StreamLoadError::Config(_) | StreamLoadError::Statement(_) => {
            ErrorClass::ConfigurationError
        }
        StreamLoadError::Auth { .. } => ErrorClass::DorisWriteAuthenticationError,
        StreamLoadError::LabelExists { .. } => ErrorClass::DorisLabelExistsError,
        StreamLoadError::Ambiguous { .. } | StreamLoadError::CounterMismatch { .. } => {
            ErrorClass::DorisAmbiguousWriteError
        }
        StreamLoadError::PartialCommit { .. } => ErrorClass::DorisPartialCommitError,
        StreamLoadError::Privilege { .. } => ErrorClass::DorisWritePermissionError,
        StreamLoadError::UnsupportedRelease { .. } => ErrorClass::DorisReleaseError,
        StreamLoadError::Encode(_) | StreamLoadError::ValueRejected { .. } => {
            ErrorClass::DorisTableCompatibilityError
        }
        _ => ErrorClass::DorisWriteError,
    }
}
