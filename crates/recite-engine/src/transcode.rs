//! CSV files DataFusion's reader cannot take as they are: another encoding than UTF-8, or a
//! decimal comma. They are converted once, streamed in chunks, into a UTF-8 copy with `.`
//! decimals in a cache folder keyed by the source's identity (path, size, modification time,
//! format), and the copy is what the engine reads. A copy rather than a streaming table so the
//! CSV reader keeps its type inference, projection and partitioned scans.

use std::hash::{Hash, Hasher};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use encoding_rs::{DecoderResult, Encoding};

use crate::catalog::CsvFormat;

/// Bumped when the conversion changes, so older cached copies are not reused.
const CONVERSION_VERSION: u32 = 1;

/// The encoding a declared label names (WHATWG labels; `latin-1` is taken as `latin1`).
pub fn encoding(label: &str) -> Result<&'static Encoding, TranscodeError> {
    let label = label.trim().to_ascii_lowercase();
    let label = if label == "latin-1" { "latin1".to_string() } else { label };
    Encoding::for_label(label.as_bytes()).ok_or(TranscodeError::UnknownEncoding(label))
}

/// Whether a declared decimal mark is a comma (`,`), a point (`.`), or an error.
pub fn decimal_comma(decimal: &str) -> Result<bool, TranscodeError> {
    match decimal {
        "," => Ok(true),
        "." => Ok(false),
        d => Err(TranscodeError::DecimalMark(d.to_string())),
    }
}

/// Why a CSV file could not be converted to the copy DataFusion reads.
#[derive(Debug, thiserror::Error)]
pub enum TranscodeError {
    /// An encoding label WHATWG does not know.
    #[error("the declared CSV encoding {0:?} is not known (e.g. \"windows-1252\", \"latin1\", \"utf-16\")")]
    UnknownEncoding(String),
    /// A decimal mark that is neither `,` nor `.`.
    #[error("the declared CSV decimal mark {0:?} is not \",\" or \".\"")]
    DecimalMark(String),
    /// The file cannot be read.
    #[error("cannot be read: {0}")]
    Unreadable(std::io::Error),
    /// The cache folder cannot be made or written in.
    #[error("cache folder {}: {error}", folder.display())]
    CacheFolder {
        /// The folder.
        folder: PathBuf,
        /// The system's error.
        error: std::io::Error,
    },
    /// The copy cannot be written.
    #[error("cache copy: {0}")]
    CacheCopy(std::io::Error),
    /// The copy cannot be put in place.
    #[error("cache copy {}: {error}", copy.display())]
    CacheCopyAt {
        /// The copy's path.
        copy: PathBuf,
        /// The system's error.
        error: std::io::Error,
    },
    /// Bytes that are not text in the declared encoding.
    #[error("line {line}: bytes that are not {encoding} text")]
    Malformed {
        /// The line.
        line: usize,
        /// The encoding's name.
        encoding: &'static str,
    },
}

/// The UTF-8, `.`-decimal copy of the CSV file at `source`, written to the cache on first use.
pub fn cached_copy(source: &Path, format: &CsvFormat, delimiter: u8) -> Result<PathBuf, TranscodeError> {
    let encoding = encoding(&format.encoding)?;
    let comma = decimal_comma(&format.decimal)?;
    let meta = std::fs::metadata(source).map_err(TranscodeError::Unreadable)?;
    let mut h = std::hash::DefaultHasher::new();
    (CONVERSION_VERSION, source.canonicalize().unwrap_or_else(|_| source.to_path_buf())).hash(&mut h);
    (meta.len(), meta.modified().ok(), encoding.name(), comma, delimiter).hash(&mut h);
    let dir = std::env::temp_dir().join("recite-csv");
    let folder = |error| TranscodeError::CacheFolder { folder: dir.clone(), error };
    std::fs::create_dir_all(&dir).map_err(folder)?;
    let copy = dir.join(format!("{:016x}.csv", h.finish()));
    if copy.is_file() {
        return Ok(copy);
    }
    // Written under a private name, then renamed: a reader never sees half a copy.
    let tmp = tempfile::NamedTempFile::new_in(&dir).map_err(folder)?;
    let input = std::fs::File::open(source).map_err(TranscodeError::Unreadable)?;
    let mut out = BufWriter::new(tmp.as_file());
    transcode(BufReader::new(input), &mut out, encoding, delimiter, comma)?;
    out.flush().map_err(TranscodeError::CacheCopy)?;
    drop(out);
    tmp.persist(&copy).map_err(|e| TranscodeError::CacheCopyAt { copy: copy.clone(), error: e.error })?;
    Ok(copy)
}

/// Converts CSV text in `encoding` (a byte-order mark, when present, decides) to UTF-8, and,
/// with `comma`, numbers written with a decimal comma to `.` decimals. Streamed: one chunk and
/// one field in memory at a time.
pub fn transcode(
    mut input: impl Read,
    mut output: impl Write,
    encoding: &'static Encoding,
    delimiter: u8,
    comma: bool,
) -> Result<(), TranscodeError> {
    let mut decoder = encoding.new_decoder();
    let mut fields =
        Fields { delimiter: delimiter as char, comma, field: String::new(), quoted: false, line: 1 };
    let mut buf = vec![0u8; 64 * 1024];
    let mut text = String::new();
    let write_err = TranscodeError::CacheCopy;
    loop {
        let n = input.read(&mut buf).map_err(TranscodeError::Unreadable)?;
        let last = n == 0;
        let mut src = &buf[..n];
        loop {
            text.clear();
            text.reserve(
                decoder.max_utf8_buffer_length_without_replacement(src.len()).unwrap_or(src.len() * 3) + 16,
            );
            let (result, read) = decoder.decode_to_string_without_replacement(src, &mut text, last);
            src = &src[read..];
            fields.feed(&text, &mut output).map_err(write_err)?;
            match result {
                DecoderResult::InputEmpty => break,
                DecoderResult::OutputFull => continue,
                DecoderResult::Malformed(..) => {
                    return Err(TranscodeError::Malformed { line: fields.line, encoding: encoding.name() });
                }
            }
        }
        if last {
            break;
        }
    }
    fields.end(&mut output).map_err(write_err)
}

/// Splits decoded text into fields (quotes respected) and writes each back, converted.
struct Fields {
    delimiter: char,
    comma: bool,
    field: String,
    quoted: bool,
    line: usize,
}

impl Fields {
    fn feed(&mut self, text: &str, out: &mut impl Write) -> std::io::Result<()> {
        for c in text.chars() {
            if c == '"' {
                // `""` inside quotes toggles twice: still inside.
                self.quoted = !self.quoted;
                self.field.push(c);
            } else if !self.quoted && (c == self.delimiter || c == '\n' || c == '\r') {
                self.flush(out)?;
                let mut b = [0u8; 4];
                out.write_all(c.encode_utf8(&mut b).as_bytes())?;
                if c == '\n' {
                    self.line += 1;
                }
            } else {
                self.line += usize::from(c == '\n');
                self.field.push(c);
            }
        }
        Ok(())
    }

    fn flush(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        let converted = if self.comma { decimal_comma_number(&self.field) } else { None };
        out.write_all(converted.as_deref().unwrap_or(&self.field).as_bytes())?;
        self.field.clear();
        Ok(())
    }

    fn end(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        self.flush(out)?;
        out.flush()
    }
}

/// A field that is a number written with a decimal comma (`0,44`, `-1.234,5`, `"12,5"`, `7`),
/// with `.` decimals and no grouping (`0.44`, `-1234.5`, `12.5`, `7`); `None` for any other
/// field, which is left as it is (text, dates like `01.02.2024`, `1.5`).
pub fn decimal_comma_number(field: &str) -> Option<String> {
    let inner = field.strip_prefix('"').and_then(|f| f.strip_suffix('"')).unwrap_or(field).trim();
    let (sign, rest) = match inner.strip_prefix(['-', '+']) {
        Some(r) => (&inner[..1], r),
        None => ("", inner),
    };
    let (whole, fraction) = match rest.split_once(',') {
        Some((w, f)) => (w, Some(f)),
        None => (rest, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(f) = fraction
        && !digits(f)
    {
        return None;
    }
    let grouped = {
        let mut groups = whole.split('.');
        let first = groups.next().unwrap_or("");
        (1..=3).contains(&first.len()) && digits(first) && groups.all(|g| g.len() == 3 && digits(g))
    };
    let whole_ok =
        digits(whole) || (whole.contains('.') && grouped) || (whole.is_empty() && fraction.is_some());
    if !whole_ok {
        return None;
    }
    let whole = if whole.is_empty() { "0".to_string() } else { whole.replace('.', "") };
    Some(match fraction {
        Some(f) => format!("{sign}{whole}.{f}"),
        None => format!("{sign}{whole}"),
    })
}
