//! The Tokio runtime shared by every call of the binding, and its end at interpreter exit.
//!
//! The runtime starts on first use. [`shutdown`], which the module registers with Python's
//! `atexit`, marks the interpreter as exiting and, when no call is running, ends the
//! runtime, so that none of its threads (a read's producer, a guard relay) outlives the
//! interpreter's `atexit` stage. From then on no thread of ours takes the GIL: the log
//! bridge drops its lines, and a call that ends in a thread Python will not let back in (a
//! daemon thread: Python 3.11 to 3.13 end such a thread with `pthread_exit` when it asks for
//! the GIL, which aborts the process when it unwinds through Rust frames) parks that thread
//! for good instead of returning. pyo3's own "is Python finalizing" check exists only for
//! Python ≥ 3.13, and the wheel is abi3 for 3.11.

use std::future::Future;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pyo3::{PyResult, Python, pyfunction};
use tokio::runtime::{Handle, Runtime};

/// Set by [`shutdown`]: the interpreter is exiting.
static EXITING: AtomicBool = AtomicBool::new(false);

/// Whether the interpreter is exiting ([`shutdown`] ran): no thread may take the GIL.
pub(crate) fn exiting() -> bool {
    EXITING.load(Ordering::SeqCst)
}

/// After a call's work, in a thread that released the GIL: when the interpreter is
/// exiting, this thread would be ended by `pthread_exit` on taking it back (Python < 3.14),
/// so it waits here for the process to end instead.
fn park_if_exiting() {
    while exiting() {
        std::thread::park();
    }
}

/// Held across every stretch of code that may take the GIL back: if Python ends the thread
/// there (`pthread_exit` when a thread asks for the GIL of an interpreter that is
/// finalizing, Python 3.11 to 3.13), the forced unwind reaches this guard before pyo3's
/// panic catcher, which would abort the process ("exception not rethrown"); the guard parks
/// the thread for good instead, as Python 3.14 does. A Rust panic passes through.
pub(crate) struct HangOnThreadExit;

impl HangOnThreadExit {
    /// Ends the guarded stretch: nothing unwound through it.
    pub(crate) fn disarm(self) {
        std::mem::forget(self);
    }
}

impl Drop for HangOnThreadExit {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            loop {
                std::thread::park();
            }
        }
    }
}

/// The runtime (`None` before first use and after [`shutdown`]) and the calls running on it.
struct Shared {
    runtime: Option<Runtime>,
    calls: usize,
}

static SHARED: Mutex<Shared> = Mutex::new(Shared {
    runtime: None,
    calls: 0,
});

fn shared() -> std::sync::MutexGuard<'static, Shared> {
    SHARED.lock().unwrap_or_else(|p| p.into_inner())
}

/// One call on the runtime: counted while it lasts, so [`shutdown`] never ends the runtime
/// under it.
struct Call(Handle);

impl Drop for Call {
    fn drop(&mut self) {
        shared().calls -= 1;
    }
}

/// Enters a call on the process's runtime, started on first use (again, if a call comes
/// after [`shutdown`]). Two worker threads are enough: the work is network waits and
/// decoding, and Daft runs its own threads beside it.
fn enter() -> Call {
    let mut shared = shared();
    let handle = match &shared.runtime {
        Some(runtime) => runtime.handle().clone(),
        None => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("daft-doris")
                .enable_all()
                .build()
                .unwrap_or_else(|e| panic!("cannot start the Tokio runtime: {e}"));
            let handle = runtime.handle().clone();
            shared.runtime = Some(runtime);
            handle
        }
    };
    shared.calls += 1;
    Call(handle)
}

/// Registered with `atexit` when the module is imported: log lines stop taking the GIL,
/// and, unless a call is still running (in a daemon thread), the runtime's tasks are
/// cancelled and its threads stopped (given a second, with the GIL released so a thread
/// waiting for it can finish).
#[pyfunction]
pub(crate) fn shutdown(py: Python<'_>) {
    EXITING.store(true, Ordering::SeqCst);
    let idle = {
        let mut shared = shared();
        if shared.calls == 0 {
            shared.runtime.take()
        } else {
            None
        }
    };
    if let Some(runtime) = idle {
        py.detach(move || runtime.shutdown_timeout(Duration::from_secs(1)));
    }
}

/// Runs the future `make` returns to completion with the GIL released.
///
/// The future is created on the releasing thread, so it need not be `Send` (sqlx's
/// futures are not provably `Send` for every lifetime).
pub(crate) fn block_on<M, F>(py: Python<'_>, make: M) -> F::Output
where
    M: FnOnce() -> F + Send,
    F: Future,
    F::Output: Send,
{
    crate::logging::refresh_level(py);
    let guard = HangOnThreadExit;
    let out = py.detach(move || {
        let call = enter();
        let out = call.0.block_on(make());
        drop(call);
        park_if_exiting();
        out
    });
    guard.disarm();
    out
}

/// Like [`block_on`], for waits that may last minutes: every 100 ms the calling thread
/// takes the GIL to run pending signal handlers, so Ctrl-C ends the wait with
/// `KeyboardInterrupt` (the future is dropped, which cancels it).
pub(crate) fn block_on_interruptible<M, F, T>(py: Python<'_>, make: M) -> PyResult<T>
where
    M: FnOnce() -> F + Send,
    F: Future<Output = PyResult<T>>,
    T: Send,
{
    crate::logging::refresh_level(py);
    let guard = HangOnThreadExit;
    let out = py.detach(move || {
        let call = enter();
        let out = call.0.block_on(async move {
            let work = make();
            tokio::pin!(work);
            loop {
                tokio::select! {
                    out = &mut work => return out,
                    () = tokio::time::sleep(Duration::from_millis(100)) => {
                        // Signals are Python's: not once it is exiting.
                        if !exiting() {
                            Python::attach(|py| py.check_signals())?;
                        }
                    }
                }
            }
        });
        drop(call);
        park_if_exiting();
        out
    });
    guard.disarm();
    out
}
