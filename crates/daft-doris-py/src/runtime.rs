//! The Tokio runtime shared by every call of the binding.

use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use pyo3::{PyResult, Python};

/// The process's runtime, started on first use. Two worker threads are enough: the work
/// is network waits and decoding, and Daft runs its own threads beside it.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("daft-doris")
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("cannot start the Tokio runtime: {e}"))
    })
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
    py.detach(move || runtime().block_on(make()))
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
    py.detach(move || {
        runtime().block_on(async move {
            let work = make();
            tokio::pin!(work);
            loop {
                tokio::select! {
                    out = &mut work => return out,
                    () = tokio::time::sleep(Duration::from_millis(100)) => {
                        Python::attach(|py| py.check_signals())?;
                    }
                }
            }
        })
    })
}
