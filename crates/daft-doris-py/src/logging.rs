//! The crates' `tracing` events, forwarded to Python's `logging` under the logger
//! `daft_doris` (INFO: one line per load, per read and per publish; DEBUG: attempts,
//! redirects, retries). The message is the event's text followed by its fields as
//! `key=value`; the crates put no password, token, SQL text or bound value in an event.
//!
//! Installed as the process's `tracing` subscriber when the module is imported, unless the
//! process has one already (a host application that subscribes itself keeps its own).
//!
//! The logger's level is read whenever Python calls into the module (it holds the GIL
//! then, see `runtime`), so an event below it costs no GIL: only a line that will be
//! logged takes the GIL, from whatever thread emits it.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU32, Ordering};

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::{Layer, Registry};

/// Forwards events to `logging.getLogger("daft_doris")`.
struct PythonLogging;

/// `logging`'s number for a `tracing` level.
fn python_level(level: &Level) -> u32 {
    match *level {
        Level::ERROR => 40,
        Level::WARN => 30,
        Level::INFO => 20,
        Level::DEBUG => 10,
        Level::TRACE => 5,
    }
}

/// The event's message, then its other fields as `key=value`.
#[derive(Default)]
struct Line {
    message: String,
    fields: String,
}

impl Visit for Line {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value}", field.name());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }
}

static LOGGER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The logger's effective level as last read (`logging.WARNING` until then).
static THRESHOLD: AtomicU32 = AtomicU32::new(30);

/// `logging.getLogger("daft_doris")`.
fn logger(py: Python<'_>) -> PyResult<&Py<PyAny>> {
    LOGGER.get_or_try_init(py, || {
        py.import("logging")?
            .call_method1("getLogger", ("daft_doris",))
            .map(Bound::unbind)
    })
}

/// Reads the logger's effective level (called with the GIL held, on every native call).
pub(crate) fn refresh_level(py: Python<'_>) {
    let level = logger(py).and_then(|l| l.bind(py).call_method0("getEffectiveLevel")?.extract());
    if let Ok(level) = level {
        THRESHOLD.store(level, Ordering::Relaxed);
    }
}

/// Whether an event comes from the project's crates (`doris_read`, `doris_streamload`,
/// …): the HTTP, gRPC and SQL libraries beneath them are not forwarded.
fn ours(metadata: &Metadata<'_>) -> bool {
    metadata.target().starts_with("doris_")
}

impl<S: Subscriber> Layer<S> for PythonLogging {
    fn enabled(&self, metadata: &Metadata<'_>, _ctx: Context<'_, S>) -> bool {
        ours(metadata)
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if !ours(event.metadata()) {
            return;
        }
        let level = python_level(event.metadata().level());
        // Once the interpreter is exiting no line takes the GIL (`runtime::shutdown`).
        if level < THRESHOLD.load(Ordering::Relaxed) || crate::runtime::exiting() {
            return;
        }
        // `try_attach`: an event from a runtime thread while the interpreter shuts down is
        // dropped, not a crash.
        // A thread Python ends while it waits for the GIL (the interpreter finalizing) is
        // parked, not unwound into an abort (`runtime::HangOnThreadExit`).
        let guard = crate::runtime::HangOnThreadExit;
        let _ = Python::try_attach(|py| -> PyResult<()> {
            let logger = logger(py)?.bind(py);
            if !logger.call_method1("isEnabledFor", (level,))?.is_truthy()? {
                return Ok(());
            }
            let mut line = Line::default();
            event.record(&mut line);
            logger.call_method1("log", (level, format!("{}{}", line.message, line.fields)))?;
            Ok(())
        });
        guard.disarm();
    }
}

/// Makes [`PythonLogging`] the process's subscriber, unless one is set already.
pub(crate) fn install() {
    let subscriber = Registry::default().with(PythonLogging);
    let _ = tracing::subscriber::set_global_default(subscriber);
}
