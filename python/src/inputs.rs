//! The inputs of a check: paths (files, folders, globs, expanded by the command line's rules)
//! and documents handed over as bytes (a dict, an SDK object, a string), which are spooled to
//! a private folder so the batch reads them as it reads files: JSON lines stream, others are
//! read whole, and each keeps the name it was given in the report.

use std::sync::Arc;

use recite_core::check::Source;
use recite_core::files;

use crate::errors::{Error, Kind};

/// An input as Python hands it over: its name, and its bytes unless it is a path.
pub type Given = (String, Option<Vec<u8>>);

/// The sources of a batch, and the files that hold them for as long as a report may read them
/// again (`Report.to_html` re-runs the batch).
pub struct Inputs {
    /// What the batch reads, in the order given.
    pub sources: Vec<Source>,
    _documents: Option<tempfile::TempDir>,
    _pipes: files::StdinSpool,
}

/// Expands the paths and spools the documents, in order. A path that does not exist or a glob
/// that matches nothing is an [`Kind::Input`] error naming it; a file that cannot be read is a
/// finding of the report, as on the command line.
pub fn gather(given: Vec<Given>, max_input_size: u64) -> Result<Arc<Inputs>, Error> {
    let mut found = Vec::new();
    let mut documents: Option<tempfile::TempDir> = None;
    for (i, (name, bytes)) in given.into_iter().enumerate() {
        match bytes {
            None if name == "-" => {
                return Err(Error::new(
                    Kind::Input,
                    "standard input is not read from Python: pass the text or bytes",
                )
                .at(name));
            }
            None => {
                let expanded = files::expand_inputs(std::slice::from_ref(&name))
                    .map_err(|e| Error::from_error(Kind::Input, &e).at(name.clone()))?;
                found.extend(expanded.into_iter().map(|s| (s, None)));
            }
            Some(bytes) => {
                let dir = match &mut documents {
                    Some(d) => d,
                    none => none.insert(spool_folder()?),
                };
                let path = dir.path().join(format!("input-{i}"));
                std::fs::write(&path, bytes).map_err(|e| {
                    Error::new(Kind::Input, format!("cannot spool {name}: {e}")).at(name.clone())
                })?;
                found.push((files::Source::File(path.display().to_string()), Some(name)));
            }
        }
    }
    let plain: Vec<files::Source> = found.iter().map(|(s, _)| s.clone()).collect();
    let pipes =
        files::StdinSpool::new(&plain, max_input_size).map_err(|e| Error::from_error(Kind::Input, &e))?;
    let sources = pipes
        .sources(&plain)
        .into_iter()
        .zip(found)
        .map(|(source, (_, name))| rename(source, name))
        .collect();
    Ok(Arc::new(Inputs { sources, _documents: documents, _pipes: pipes }))
}

/// A spooled document reported under the name it was given, not its spool file's.
fn rename(source: Source, given: Option<String>) -> Source {
    match (source, given) {
        (Source::File { path, .. }, Some(name)) => Source::File { name, path },
        (Source::Refused { rule, message, .. }, Some(name)) => Source::Refused { name, rule, message },
        (source, None) => source,
    }
}

fn spool_folder() -> Result<tempfile::TempDir, Error> {
    tempfile::Builder::new().prefix("recite-inputs-").tempdir().map_err(|e| {
        Error::new(Kind::Input, format!("cannot make a folder for the inputs given as objects: {e}"))
    })
}
