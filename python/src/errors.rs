//! recite's errors as the typed Python exceptions of `recite.errors`, carrying where the problem
//! is and the names nearest to an unknown one.
//!
//! The exception classes are Python's (`python/recite/errors.py`, with docstrings a notebook
//! shows); this side only says which one to raise. An [`Error`] is plain data, so the worker
//! thread that does the engine's work can hand it back.

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Which exception of `recite.errors` to raise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A citation, a tool result or a claimed number that cannot be read.
    Citation,
    /// The data layer (a folder of studies) cannot be read.
    DataLayer,
    /// An extractor declaration cannot be read.
    Extractor,
    /// An input of a check (a file, folder or glob) does not exist.
    Input,
    /// The engine failed: no outcome can be trusted.
    Engine,
    /// An argument recite does not understand.
    Usage,
}

impl Kind {
    /// The class's name in `recite.errors`.
    fn class(self) -> &'static str {
        match self {
            Kind::Citation => "CitationError",
            Kind::DataLayer => "DataLayerError",
            Kind::Extractor => "ExtractorError",
            Kind::Input => "InputError",
            Kind::Engine => "EngineError",
            Kind::Usage => "UsageError",
        }
    }
}

/// An error bound for Python: its kind, message, location and suggestions.
#[derive(Debug, Clone)]
pub struct Error {
    kind: Kind,
    message: String,
    location: Option<String>,
    suggestions: Vec<String>,
}

impl Error {
    /// An error of `kind`, in words.
    pub fn new(kind: Kind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into(), location: None, suggestions: Vec::new() }
    }

    /// Where: a file, a folder, a table's name.
    pub fn at(mut self, location: impl Into<String>) -> Error {
        self.location = Some(location.into());
        self
    }

    /// The declared names nearest to an unknown one, best first.
    pub fn suggesting(mut self, suggestions: Vec<String>) -> Error {
        self.suggestions = suggestions;
        self
    }

    /// An error of `kind` from a library's typed error, with its causes (`what: why`, as the
    /// command line words them).
    pub fn from_error(kind: Kind, e: &(dyn std::error::Error + 'static)) -> Error {
        Error::new(kind, recite_core::causes::with_causes(e))
    }
}

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        // Failing to build the typed exception (recite.errors not importable) raises that
        // failure instead: never a silent generic error.
        Python::attach(|py| typed(py, &e).unwrap_or_else(|failure| failure))
    }
}

fn typed(py: Python<'_>, e: &Error) -> PyResult<PyErr> {
    let class = py.import("recite.errors")?.getattr(e.kind.class())?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("location", e.location.as_deref())?;
    kwargs.set_item("suggestions", e.suggestions.clone())?;
    Ok(PyErr::from_value(class.call((e.message.as_str(),), Some(&kwargs))?))
}
