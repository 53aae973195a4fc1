//! Reports written as the claims are settled: every format is a [`Writer`] fed input by input,
//! claim by claim, so no report is ever held whole.
//!
//! A format whose opening needs the totals (JSON, Markdown, HTML, JUnit put the summary first)
//! writes its body to a [`Spool`] (memory up to [`SPOOL_IN_MEMORY`], then an unnamed temporary
//! file) and, in [`Writer::finish`], the opening then the spooled body. [`write_whole`] feeds a
//! [`Report`] already in memory through the same writers (`verify`, tests).

use std::collections::BTreeMap;
use std::io::{self, Read, Seek, Write};

use super::{ClaimReport, Coverage, DataLayer, Report, Summary};
use crate::answers::Answer;
use crate::input::{Finding, Format, Turn};
use crate::moca::MocaEvent;
use crate::settle::ScanStats;

/// Bytes a [`Spool`] keeps in memory before it moves to a temporary file: a report body of up
/// to ~20k claims (a 10k-claim JSON report is 31 MB) is never written twice. Past it, writing
/// the body to the file, reading it back and writing it again cost 40-80 ms of such a run.
pub const SPOOL_IN_MEMORY: usize = 64 << 20;

/// What is known of an input before its claims: its name, format and conversation.
#[derive(Debug, Clone, Copy)]
pub struct InputHead<'a> {
    /// The file as named (`-` for standard input).
    pub file: &'a str,
    /// The detected format; none when the file could not be read.
    pub format: Option<Format>,
    /// The conversation (the HTML report places claims in it).
    pub turns: &'a [Turn],
}

/// What is known of an input once its claims are settled.
#[derive(Debug, Clone, Copy)]
pub struct InputTail<'a> {
    /// Findings, capped as in the report.
    pub findings: &'a [Finding],
    /// MOCA `moca.citations` events.
    pub moca: &'a [MocaEvent],
    /// The answer-text audit.
    pub answers: &'a [Answer],
    /// What the input held and how much of it was checked.
    pub coverage: Coverage,
}

/// What is known once every input is written: the report's opening fields.
#[derive(Debug, Clone, Copy)]
pub struct Closing<'a> {
    /// Counts by verdict and of findings.
    pub summary: &'a Summary,
    /// What the run read.
    pub stats: &'a ScanStats,
    /// The data layer that answered.
    pub data_layer: Option<&'a DataLayer>,
    /// Phase timings, with `--timings`.
    pub timings: Option<&'a BTreeMap<String, f64>>,
    /// Inputs written.
    pub inputs: usize,
}

/// A report format, fed in order: for each input [`begin_input`](Writer::begin_input), its
/// claims, [`end_input`](Writer::end_input); then [`finish`](Writer::finish) once.
pub trait Writer {
    /// An input starts.
    fn begin_input(&mut self, head: InputHead<'_>) -> io::Result<()>;
    /// One claim of the current input, in document order.
    fn claim(&mut self, c: &ClaimReport) -> io::Result<()>;
    /// Claims of the current input, in document order: the very bytes [`claim`](Writer::claim)
    /// writes for each in turn. Every format renders a claim from the claim alone, so this
    /// renders the chunk in parallel and then writes it in order.
    fn claims(&mut self, cs: &[ClaimReport]) -> io::Result<()> {
        cs.iter().try_for_each(|c| self.claim(c))
    }
    /// Claims of the current input handed over, as [`claims`](Writer::claims) takes them: a
    /// writer that keeps the claims (a report held in memory) takes them without a copy.
    fn owned_claims(&mut self, cs: Vec<ClaimReport>) -> io::Result<()> {
        self.claims(&cs)
    }
    /// The current input ends.
    fn end_input(&mut self, tail: InputTail<'_>) -> io::Result<()>;
    /// Writes what is left (the opening, for formats that put totals first) and flushes.
    fn finish(&mut self, closing: Closing<'_>) -> io::Result<()>;
}

/// Several report writers fed by one run (the workbench's JSON and HTML reports of a case; a
/// re-run's report beside the JSON it is compared with).
pub struct Tee(pub Vec<Box<dyn Writer>>);

impl Writer for Tee {
    fn begin_input(&mut self, head: InputHead<'_>) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|w| w.begin_input(head))
    }
    fn claim(&mut self, c: &ClaimReport) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|w| w.claim(c))
    }
    fn claims(&mut self, cs: &[ClaimReport]) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|w| w.claims(cs))
    }
    fn end_input(&mut self, tail: InputTail<'_>) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|w| w.end_input(tail))
    }
    fn finish(&mut self, closing: Closing<'_>) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|w| w.finish(closing))
    }
}

/// Claims rendered at a time when a report held in memory is written (a run's own chunk).
const WHOLE_CHUNK: usize = 1024;

/// Feeds a whole report through `w`.
pub fn write_whole(report: &Report, w: &mut dyn Writer) -> io::Result<()> {
    for input in &report.inputs {
        w.begin_input(InputHead { file: &input.file, format: input.format, turns: &input.turns })?;
        // In chunks, as a run hands them over: each chunk is rendered in parallel.
        for chunk in input.claims.chunks(WHOLE_CHUNK) {
            w.claims(chunk)?;
        }
        w.end_input(InputTail {
            findings: &input.findings,
            moca: &input.moca,
            answers: &input.answers,
            coverage: input.coverage,
        })?;
    }
    w.finish(Closing {
        summary: &report.summary,
        stats: &report.stats,
        data_layer: report.data_layer.as_ref(),
        timings: report.timings.as_ref(),
        inputs: report.inputs.len(),
    })
}

/// Renders a whole report with the writer `make` builds over a buffer, as text.
pub fn render_whole<W: Writer>(report: &Report, make: impl FnOnce(Box<dyn Write>) -> W) -> String {
    let buf = SharedBuf::default();
    let mut w = make(Box::new(buf.clone()));
    write_whole(report, &mut w).expect("writing to memory does not fail");
    drop(w);
    let bytes = std::mem::take(&mut *buf.0.lock().unwrap_or_else(|e| e.into_inner()));
    String::from_utf8(bytes).expect("reports are UTF-8")
}

/// A byte buffer that can be handed to a writer and read back afterwards.
#[derive(Clone, Default)]
struct SharedBuf(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Write for SharedBuf {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Bytes to be written later: in memory up to [`SPOOL_IN_MEMORY`], then in an unnamed
/// temporary file (removed by the system when closed).
#[derive(Debug)]
pub struct Spool {
    memory: Vec<u8>,
    file: Option<std::fs::File>,
    len: u64,
    /// Bytes kept in memory: [`SPOOL_IN_MEMORY`] but in tests.
    limit: usize,
}

impl Default for Spool {
    fn default() -> Spool {
        Spool { memory: Vec::new(), file: None, len: 0, limit: SPOOL_IN_MEMORY }
    }
}

impl Spool {
    /// An empty spool.
    pub fn new() -> Spool {
        Spool::default()
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies everything written to `out` and empties the spool.
    pub fn drain_to(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if let Some(mut f) = self.file.take() {
            f.write_all(&self.memory)?;
            f.rewind()?;
            // In chunks of 1 MiB, not `io::copy`'s 8 KiB: a few reads and writes per MB.
            let mut chunk = vec![0; 1 << 20];
            loop {
                match f.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => out.write_all(&chunk[..n])?,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        } else {
            out.write_all(&self.memory)?;
        }
        self.memory.clear();
        self.len = 0;
        Ok(())
    }
}

/// Bytes a [`Spool`] gathers before each write to its temporary file, once it has one: the
/// memory bound is given back then (a million claims held 64 MiB more to the end otherwise).
const FILE_BUFFER: usize = 1 << 20;

impl Write for Spool {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        if self.file.is_none() && self.memory.capacity() == 0 {
            // The whole bound at once: pages are only taken when written, and a growing body
            // is never copied to a larger buffer (a 31 MB body was copied five times, 10% of a
            // warm run).
            self.memory.reserve_exact(self.limit);
        }
        let bound = if self.file.is_some() { FILE_BUFFER.min(self.limit) } else { self.limit };
        if self.memory.len() + b.len() > bound {
            let first = self.file.is_none();
            let f = match &mut self.file {
                Some(f) => f,
                None => self.file.insert(tempfile::tempfile()?),
            };
            f.write_all(&self.memory)?;
            f.write_all(b)?;
            if first {
                self.memory = Vec::with_capacity(FILE_BUFFER.min(self.limit));
            } else {
                self.memory.clear();
            }
        } else {
            self.memory.extend_from_slice(b);
        }
        self.len += b.len() as u64;
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spool_past_its_memory_gives_back_every_byte_in_order() {
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for limit in [1 << 30, 1 << 20, 1000] {
            let mut spool = Spool { limit, ..Spool::new() };
            for piece in data.chunks(4093) {
                spool.write_all(piece).unwrap();
            }
            assert_eq!(spool.file.is_some(), limit < data.len(), "limit {limit}");
            let mut out = Vec::new();
            spool.drain_to(&mut out).unwrap();
            assert!(out == data, "limit {limit}: {} bytes back of {}", out.len(), data.len());
            assert!(spool.is_empty());
        }
    }
}
