//! The engine's work off the interpreter: on its own thread, with the GIL released, and Ctrl-C
//! still heard.
//!
//! A scan cannot be stopped part way, so the caller does not wait for it: every
//! [`SIGNAL_CHECK`] the waiting thread asks Python whether a signal came (`KeyboardInterrupt` in
//! a notebook), and if one did it returns at once, leaving the worker to finish its scan in the
//! background and drop what it computed.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// How often a wait looks for Ctrl-C: quick enough to feel immediate.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// Runs `work` on a worker thread and waits for it with the GIL released; a signal Python
/// raises for (Ctrl-C) ends the wait with that exception.
pub fn run<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("recite-worker".into())
        .spawn(move || {
            // The caller may have gone (interrupted): nobody to tell.
            let _ = tx.send(work());
        })
        .map_err(|e| PyRuntimeError::new_err(format!("recite cannot start its worker thread: {e}")))?;
    py.detach(move || {
        loop {
            match rx.recv_timeout(SIGNAL_CHECK) {
                Ok(done) => return Ok(done),
                Err(RecvTimeoutError::Timeout) => Python::attach(|py| py.check_signals())?,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(PyRuntimeError::new_err(
                        "recite's worker stopped without an answer (a panic, printed above): please report it",
                    ));
                }
            }
        }
    })
}
