//! Rust errors raised as the exception classes of `daft_doris.errors`.
//!
//! The classes are defined in Python (so users can import, subclass and document them);
//! this module looks the class up by name and raises it with the error's text. Texts
//! come from the Rust crates, which never put a password, a bound value or a response
//! body into an error.

use doris_read::ReadError;
use doris_streamload::StreamLoadError;
use pyo3::prelude::*;

/// Builds an exception of the class `name` of `daft_doris.errors`.
pub(crate) fn raise(name: &str, message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| {
        let made = py
            .import("daft_doris.errors")
            .and_then(|m| m.getattr(name))
            .and_then(|class| class.call1((message.clone(),)));
        match made {
            Ok(exception) => PyErr::from_value(exception),
            Err(e) => e,
        }
    })
}

/// A read error as its exception class.
pub(crate) fn read_error(e: ReadError) -> PyErr {
    let class = match &e {
        ReadError::Config(_) | ReadError::LocationRefused { .. } => "ConfigurationError",
        ReadError::Auth(_) => "AuthenticationError",
        ReadError::Permission(_) => "DatabasePermissionError",
        ReadError::NotFound(_) => "DatabaseObjectNotFoundError",
        ReadError::UnsupportedColumn { .. } | ReadError::Decode { .. } => "SchemaError",
        ReadError::Metadata(_) => "SchemaError",
        ReadError::Planning(_) => "DiscoveryError",
        ReadError::Timeout(_) => "DorisTimeoutError",
        _ => "TransportError",
    };
    raise(class, e.to_string())
}

/// A metadata error of the writer's table check (`SHOW CREATE TABLE` / `DESC`).
pub(crate) fn write_metadata_error(e: ReadError) -> PyErr {
    match e {
        ReadError::Metadata(m) => raise(
            "DorisMetadataError",
            format!("the table's metadata cannot be understood: {m}"),
        ),
        ReadError::Transport(_) | ReadError::Timeout(_) | ReadError::Query { .. } => raise(
            "DiscoveryError",
            format!("Doris table metadata discovery failed: {e}"),
        ),
        other => read_error(other),
    }
}

/// A Stream Load error as its exception class.
pub(crate) fn load_error(e: &StreamLoadError) -> PyErr {
    raise(load_error_class(e), e.to_string())
}

/// The exception class of a Stream Load error.
pub(crate) fn load_error_class(e: &StreamLoadError) -> &'static str {
    match e {
        StreamLoadError::Config(_) => "ConfigurationError",
        StreamLoadError::Auth { .. } => "DorisWriteAuthenticationError",
        StreamLoadError::LabelExists { .. } => "DorisLabelExistsError",
        StreamLoadError::Ambiguous { .. } | StreamLoadError::CounterMismatch { .. } => {
            "DorisAmbiguousWriteError"
        }
        StreamLoadError::PartialCommit { .. } => "DorisPartialCommitError",
        StreamLoadError::Privilege { .. } => "DorisWritePermissionError",
        StreamLoadError::Encode(_) | StreamLoadError::ValueRejected { .. } => {
            "DorisTableCompatibilityError"
        }
        _ => "DorisWriteError",
    }
}
