//! `recite._recite`: the compiled half of the `recite` Python package (python/recite/), over
//! recite-core and recite-engine, never the command line.
//!
//! Each function takes what Python hands it (names, bytes, keyword options), does the engine's
//! work on a worker thread with the GIL released (`worker`), and returns an object holding the
//! settled result in Rust: the JSON, text, HTML and JUnit reports are recite's own writers, and
//! frames cross as Arrow tables (`frame`). Polars stays on the Python side.

use pyo3::prelude::*;

mod catalog;
mod check;
mod collect;
mod errors;
mod frame;
mod inputs;
mod layer;
mod settle;
mod verify;
mod worker;

#[pymodule]
fn _recite(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("BUNDLED_DATA", layer::bundled().display().to_string())?;
    m.add("DEFAULT_FAIL_ON", recite_core::fail_on::DEFAULT)?;
    m.add_class::<catalog::Catalog>()?;
    m.add_class::<verify::Settlement>()?;
    m.add_class::<check::Report>()?;
    m.add_function(wrap_pyfunction!(verify::verify, m)?)?;
    m.add_function(wrap_pyfunction!(check::check, m)?)?;
    m.add_function(wrap_pyfunction!(check::fail_on_items, m)?)?;
    Ok(())
}
