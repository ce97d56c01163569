//! Rust errors raised as the exception classes of `daft_doris.errors`.
//!
//! The classes are defined in Python (so users can import, subclass and document them);
//! [`ErrorClass`] names each one once. Every crate's error says its kind
//! (`doris_sql::ErrorKind`), which picks the class (one table for reads, one for writes,
//! with the few variants 1.1 gives a class of their own) and becomes the exception's `kind`
//! attribute. Texts
//! come from the Rust crates, which never put a password, a bound value or a response
//! body into an error.

use doris_jobs::admin::JobError;
use doris_read::{ErrorKind, ReadError};
use doris_streamload::{LoaderError, StreamLoadError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyType};

/// Declares [`ErrorClass`] with one variant per class of `daft_doris.errors`, named as in
/// Python (so a class is named once; `test_every_error_the_binding_raises_has_a_class_and_a_kind`
/// checks each exists).
macro_rules! error_classes {
    ($($name:ident),* $(,)?) => {
        /// An exception class of `daft_doris.errors`.
        // Each variant is its Python class's exact name, `…Error` included.
        #[allow(clippy::enum_variant_names)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum ErrorClass {
            $(
                #[doc = concat!("`daft_doris.errors.", stringify!($name), "`.")]
                $name,
            )*
        }

        impl ErrorClass {
            /// Every class.
            pub(crate) const ALL: &[ErrorClass] = &[$(ErrorClass::$name),*];

            /// The class's name in `daft_doris.errors`.
            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(ErrorClass::$name => stringify!($name),)*
                }
            }
        }
    };
}

error_classes!(
    AuthenticationError,
    ConfigurationError,
    DatabaseObjectNotFoundError,
    DatabasePermissionError,
    DiscoveryError,
    DorisAmbiguousWriteError,
    DorisLabelExistsError,
    DorisMetadataError,
    DorisPartialCommitError,
    DorisReleaseError,
    DorisStreamingJobError,
    DorisTableCompatibilityError,
    DorisTimeoutError,
    DorisWriteAuthenticationError,
    DorisWriteError,
    DorisWritePermissionError,
    SchemaError,
    StagingOrderError,
    TransportError,
);

impl ErrorClass {
    /// An exception of this class with `message` (the class looked up in
    /// `daft_doris.errors` when raised; if that import fails, its error is raised).
    pub(crate) fn error(self, message: String) -> PyErr {
        Python::attach(|py| {
            let class = py
                .import("daft_doris.errors")
                .and_then(|module| module.getattr(self.name()))
                .and_then(|class| class.cast_into::<PyType>().map_err(PyErr::from));
            match class {
                Ok(class) => PyErr::from_type(class, (message,)),
                Err(e) => e,
            }
        })
    }
}

/// The names of `doris_sql::ErrorKind`, in order (`_native.ERROR_KINDS`).
pub(crate) fn kind_names() -> Vec<&'static str> {
    ErrorKind::ALL.iter().map(|k| k.as_str()).collect()
}

/// The classes the binding raises (`_native.ERROR_CLASSES`).
pub(crate) fn class_names() -> Vec<&'static str> {
    ErrorClass::ALL.iter().map(|c| c.name()).collect()
}

/// Builds an exception of `class` with `message`.
pub(crate) fn raise(class: ErrorClass, message: impl Into<String>) -> PyErr {
    class.error(message.into())
}

/// Builds an exception of `class` with `message` whose `kind` attribute is `kind`'s name
/// (the crates' one error vocabulary, `doris_sql::ErrorKind`; each Python class also
/// carries its usual kind as a class attribute).
fn raise_kind(class: ErrorClass, kind: ErrorKind, message: String) -> PyErr {
    let err = raise(class, message);
    Python::attach(|py| {
        // Setting an attribute on a fresh exception instance cannot fail.
        let _ = err.value(py).setattr("kind", kind.as_str());
    });
    err
}

/// The class a read, catalog or job error of `kind` is raised as (1.1's read classes).
fn read_class(kind: ErrorKind) -> ErrorClass {
    match kind {
        ErrorKind::Configuration => ErrorClass::ConfigurationError,
        ErrorKind::Authentication => ErrorClass::AuthenticationError,
        ErrorKind::Permission => ErrorClass::DatabasePermissionError,
        ErrorKind::NotFound => ErrorClass::DatabaseObjectNotFoundError,
        ErrorKind::Incompatible => ErrorClass::SchemaError,
        ErrorKind::Timeout => ErrorClass::DorisTimeoutError,
        _ => ErrorClass::TransportError,
    }
}

/// The class a write error of `kind` is raised as (1.1's write classes).
fn write_class(kind: ErrorKind) -> ErrorClass {
    match kind {
        ErrorKind::Configuration => ErrorClass::ConfigurationError,
        ErrorKind::Authentication => ErrorClass::DorisWriteAuthenticationError,
        ErrorKind::Permission => ErrorClass::DorisWritePermissionError,
        ErrorKind::Incompatible => ErrorClass::DorisTableCompatibilityError,
        ErrorKind::Ambiguous => ErrorClass::DorisAmbiguousWriteError,
        _ => ErrorClass::DorisWriteError,
    }
}

/// A read error as its exception class: by its kind, except planning (`DiscoveryError`),
/// which has a class of its own.
pub(crate) fn read_error(e: ReadError) -> PyErr {
    let class = match &e {
        ReadError::Planning(_) => ErrorClass::DiscoveryError,
        other => read_class(other.kind()),
    };
    raise_kind(class, e.kind(), e.to_string())
}

/// A `doris-sql` error from checking a caller's arguments: a `ConfigurationError`, or
/// `StagingOrderError` for files that would sort at or below a job's offset.
pub(crate) fn sql_error(e: doris_sql::SqlError) -> PyErr {
    let class = match &e {
        doris_sql::SqlError::StagingOrder(_) => ErrorClass::StagingOrderError,
        _ => ErrorClass::ConfigurationError,
    };
    raise_kind(class, e.kind(), e.to_string())
}

/// A streaming job's error: Doris's refusal of the statement (a job that is not paused, a
/// name in use, a property it refuses) and a job paused before the awaited file are a
/// `DorisStreamingJobError`; anything else is a read error's class by its kind.
pub(crate) fn job_error(e: JobError) -> PyErr {
    let class = if e.is_refusal() || matches!(e, JobError::Paused { .. }) {
        ErrorClass::DorisStreamingJobError
    } else {
        read_class(e.kind())
    };
    raise_kind(class, e.kind(), e.to_string())
}

/// A metadata error of the writer's table check (`SHOW CREATE TABLE` / `DESC`).
pub(crate) fn write_metadata_error(e: ReadError) -> PyErr {
    let kind = e.kind();
    match e {
        ReadError::Metadata(m) => raise_kind(
            ErrorClass::DorisMetadataError,
            kind,
            format!("the table's metadata cannot be understood: {m}"),
        ),
        ReadError::MetadataParse(source) => raise_kind(
            ErrorClass::DorisMetadataError,
            kind,
            format!("the table's metadata cannot be understood: {source}"),
        ),
        ReadError::Transport(_) | ReadError::Timeout(_) | ReadError::Query { .. } => raise_kind(
            ErrorClass::DiscoveryError,
            kind,
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
    let err = raise_kind(load_error_class(e), e.kind(), e.to_string());
    with_fields(&err, e);
    err
}

/// A failed loader as the exception class of its error, with that error's fields and the
/// labels of the pre-committed loads it aborted (`aborted`) or could not abort (`left`).
pub(crate) fn loader_error(e: &LoaderError) -> PyErr {
    let err = raise_kind(load_error_class(&e.error), e.kind(), e.to_string());
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

/// Sets `e`'s fields (`StreamLoadError::fields`) as attributes of the exception `err`, and
/// the error a partial settlement wraps as `__cause__`.
fn with_fields(err: &PyErr, e: &StreamLoadError) {
    Python::attach(|py| {
        let value = err.value(py);
        if let Ok(fields) = pythonize::pythonize(py, &e.fields())
            && let Ok(fields) = fields.cast_into::<PyDict>()
        {
            for (name, field) in fields.iter() {
                if let Ok(name) = name.cast_into::<PyString>() {
                    // Setting an attribute on a fresh exception instance cannot fail.
                    let _ = value.setattr(name, field);
                }
            }
        }
        if let StreamLoadError::PartialCommit { source, .. } = e {
            err.set_cause(py, Some(load_error(source)));
        }
    });
}

/// The exception class of a Stream Load error: by its kind, except an existing label, a
/// partial two-phase settlement and a release that cannot run the write, which have
/// classes of their own, and a refused redirect, a `DorisWriteError` as in 1.1.
pub(crate) fn load_error_class(e: &StreamLoadError) -> ErrorClass {
    match e {
        StreamLoadError::LabelExists { .. } => ErrorClass::DorisLabelExistsError,
        StreamLoadError::PartialCommit { .. } => ErrorClass::DorisPartialCommitError,
        StreamLoadError::UnsupportedRelease { .. } => ErrorClass::DorisReleaseError,
        StreamLoadError::RedirectRefused { .. } => ErrorClass::DorisWriteError,
        other => write_class(other.kind()),
    }
}
