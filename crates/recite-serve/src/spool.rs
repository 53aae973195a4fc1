//! A check's inputs spooled to private temporary files, as `recite check -` spools standard
//! input (the batch reads each more than once, by path). Each file is closed once written and
//! removed when the spool is dropped, so a check of the 1,024 parts a multipart body may have
//! holds no descriptor per part. Nothing here names a server path to the caller: a failure
//! says which input, and the system's reason.

use std::collections::HashMap;
use std::io::{Read as _, Write as _};

use recite_core::check::{self, Refusal};

/// The spooled inputs, in order.
pub struct Spool {
    files: Vec<(String, tempfile::TempPath)>,
    /// The input's name by the path it was spooled to.
    names: HashMap<String, String>,
}

/// An input could not be spooled (no space, no descriptor left for a moment…).
#[derive(Debug)]
pub struct SpoolError(std::io::Error);

impl std::fmt::Display for SpoolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot spool the input: {}", without_path(&self.0))
    }
}

impl std::error::Error for SpoolError {}

/// The system's reason alone: tempfile's errors name the temporary file's path.
fn without_path(e: &std::io::Error) -> std::io::Error {
    match e.raw_os_error() {
        Some(code) => std::io::Error::from_raw_os_error(code),
        None => std::io::Error::from(e.kind()),
    }
}

impl Spool {
    /// Writes each `(name, bytes)` to a temporary file of its own, closed once written.
    pub fn new(inputs: &[(&str, &[u8])]) -> Result<Spool, SpoolError> {
        let mut files = Vec::with_capacity(inputs.len());
        let mut names = HashMap::with_capacity(inputs.len());
        for (name, body) in inputs {
            let mut tmp = tempfile::NamedTempFile::new().map_err(SpoolError)?;
            tmp.write_all(body).and_then(|_| tmp.flush()).map_err(SpoolError)?;
            // Closed here; the path lives (and is removed) with the spool.
            let path = tmp.into_temp_path();
            names.insert(path.to_string_lossy().into_owned(), name.to_string());
            files.push((name.to_string(), path));
        }
        Ok(Spool { files, names })
    }

    /// The batch's sources, in order.
    pub fn sources(&self) -> Vec<check::Source> {
        self.files
            .iter()
            .map(|(name, path)| check::Source::File {
                name: name.clone(),
                path: path.to_string_lossy().into_owned(),
            })
            .collect()
    }

    /// Reads a spooled input, at most `max` bytes (its size was checked before it was spooled);
    /// a failure names the input, not where it was spooled.
    pub fn read(&self, path: &str, max: u64) -> Result<Vec<u8>, Refusal> {
        let name = self.names.get(path).map_or("the input", String::as_str);
        let mut buf = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(max.saturating_add(1)).read_to_end(&mut buf))
            .map_err(|e| ("input/unreadable", format!("cannot read {name}: {}", without_path(&e))))?;
        if buf.len() as u64 > max {
            let why = format!("{name} is larger than --max-input-size ({max} bytes); not read");
            return Err(("input/too-large", why));
        }
        Ok(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::Spool;

    /// The descriptors this process has open.
    fn open_descriptors() -> usize {
        std::fs::read_dir("/proc/self/fd").map(|d| d.count()).unwrap_or(0)
    }

    #[test]
    fn a_thousand_inputs_hold_no_descriptor_and_are_removed() {
        let bodies: Vec<(String, Vec<u8>)> =
            (0..1024).map(|i| (format!("part {i}"), format!("{{\"n\": {i}}}").into_bytes())).collect();
        let inputs: Vec<(&str, &[u8])> = bodies.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
        let before = open_descriptors();
        let spool = Spool::new(&inputs).unwrap();
        // Other tests run beside this one: allow them a few descriptors, never one per part.
        assert!(open_descriptors() < before + 64, "{} open, {before} before", open_descriptors());
        let sources = spool.sources();
        assert_eq!(sources.len(), 1024);
        let recite_core::check::Source::File { name, path } = &sources[7] else { panic!("{:?}", sources[7]) };
        assert_eq!(name, "part 7");
        assert_eq!(spool.read(path, 1 << 20).unwrap(), b"{\"n\": 7}");
        let (rule, why) = spool.read(path, 3).unwrap_err();
        assert_eq!(rule, "input/too-large");
        assert!(why.starts_with("part 7 ") && !why.contains(path.as_str()), "{why}");
        let path = path.clone();
        drop(spool);
        assert!(!std::path::Path::new(&path).exists());
    }
}
