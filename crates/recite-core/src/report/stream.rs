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
/// to ~12k claims (a 10k-claim JSON report is 34 MB) is never written twice. Past it the body
/// goes past the page cache (`report/direct.rs`); 40, not 64 MiB, keeps a million claims
/// under 300 MB with mimalloc's own overhead.
pub const SPOOL_IN_MEMORY: usize = 40 << 20;

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

/// Where a report is written. A regular file is kept as one, so a body spooled past memory
/// moves to it file to file in the kernel ([`Spool::drain_into`]: `copy_file_range`, through
/// [`io::copy`]) rather than read back into a buffer and written again (at a million claims,
/// 3 GB each way).
pub enum Output {
    /// A regular file (the temporary file `--output` is renamed from), written through a buffer.
    File(io::BufWriter<std::fs::File>),
    /// Any other writer: standard output, a device, memory.
    Other(Box<dyn Write>),
}

impl Output {
    /// A regular file, buffered as every report is.
    pub fn file(f: std::fs::File) -> Output {
        Output::File(io::BufWriter::with_capacity(1 << 16, f))
    }
}

impl From<Box<dyn Write>> for Output {
    fn from(w: Box<dyn Write>) -> Output {
        Output::Other(w)
    }
}

impl Write for Output {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Output::File(f) => f.write(b),
            Output::Other(w) => w.write(b),
        }
    }
    fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        match self {
            Output::File(f) => f.write_all(b),
            Output::Other(w) => w.write_all(b),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::File(f) => f.flush(),
            Output::Other(w) => w.flush(),
        }
    }
}

/// Bytes to be written later: in memory up to [`SPOOL_IN_MEMORY`], then in an unnamed
/// temporary file (removed by the system when closed).
#[derive(Debug)]
pub struct Spool {
    memory: Vec<u8>,
    file: Option<SpoolFile>,
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
        match self.file.take() {
            Some(SpoolFile::Direct(mut d)) => {
                d.write_all(&self.memory)?;
                d.read_out(&mut |b| out.write_all(b))?;
            }
            Some(SpoolFile::Paged(mut f)) => {
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
            }
            None => out.write_all(&self.memory)?,
        }
        self.memory.clear();
        self.len = 0;
        Ok(())
    }

    /// [`drain_to`](Spool::drain_to) into a report's [`Output`]: a body in a temporary file
    /// moves to an output file past the page cache (`report/direct.rs`), or in the kernel
    /// (`copy_file_range`) where the spool could not be opened so, never read back through a
    /// buffer and written again.
    pub fn drain_into(&mut self, out: &mut Output) -> io::Result<()> {
        if !matches!(out, Output::File(_)) || self.file.is_none() {
            return self.drain_to(out);
        }
        match self.file.take() {
            Some(SpoolFile::Direct(mut d)) => {
                d.write_all(&self.memory)?;
                let Output::File(buffered) = std::mem::replace(out, Output::Other(Box::new(io::sink())))
                else {
                    return Err(io::Error::other("the report's output changed"));
                };
                // Taken apart, not flushed: its bytes go with the body's first block.
                let (mut file, unflushed) = buffered.into_parts();
                let unflushed = unflushed.map_err(|_| io::Error::other("the report's output failed"))?;
                let moved = super::direct::move_to(d, &mut file, &unflushed);
                let mut buffered = io::BufWriter::with_capacity(1 << 16, file);
                let moved = match moved {
                    Ok(Ok(())) => Ok(()),
                    // No O_DIRECT on the report's side: through the page cache.
                    Ok(Err(d)) => buffered
                        .write_all(&unflushed)
                        .and_then(|_| d.read_out(&mut |b| buffered.write_all(b))),
                    Err(e) => Err(e),
                };
                *out = Output::File(buffered);
                moved?;
            }
            Some(SpoolFile::Paged(mut f)) => {
                let Output::File(o) = out else {
                    return Err(io::Error::other("the report's output changed"));
                };
                f.write_all(&self.memory)?;
                f.rewind()?;
                // File to buffered file: std flushes the buffer, then `copy_file_range`
                // (`sendfile`, or reads and writes, where the kernel cannot).
                let moved = io::copy(&mut f, o)?;
                if moved != self.len {
                    return Err(io::Error::other(format!(
                        "{moved} bytes of a {}-byte report body moved",
                        self.len
                    )));
                }
            }
            None => {}
        }
        self.memory = Vec::new();
        self.len = 0;
        Ok(())
    }
}

/// A [`Spool`]'s temporary file: past the page cache where the temporary folder takes it
/// (`report/direct.rs`), else an ordinary one.
#[derive(Debug)]
enum SpoolFile {
    Paged(std::fs::File),
    Direct(super::direct::DirectSpool),
}

impl SpoolFile {
    fn create() -> io::Result<SpoolFile> {
        Ok(match super::direct::DirectSpool::create() {
            Some(d) => SpoolFile::Direct(d),
            None => SpoolFile::Paged(tempfile::tempfile()?),
        })
    }

    fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        match self {
            SpoolFile::Paged(f) => f.write_all(b),
            SpoolFile::Direct(d) => d.write_all(b),
        }
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
                None => self.file.insert(SpoolFile::create()?),
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

/// Body bytes past which a [`SpoolBehind`] hands its spool to a thread of its own: a report of
/// a few hundred claims (a `verify`, a service request) never starts one.
const BEHIND_AFTER: u64 = 4 << 20;

/// Bytes gathered from small writes before they are handed to the spool's thread.
const BEHIND_PIECE: usize = 1 << 20;

/// Buffers in flight to the spool's thread: what the run may be ahead of the writes, in pieces
/// of about [`BEHIND_PIECE`] (a run's rendered buffers are ~1 MB).
const BEHIND_QUEUE: usize = 4;

const FAILED: &str = "the report's body could not be written";

fn failed() -> Behind {
    Behind::Failed(FAILED.to_string())
}

/// A [`Spool`] written behind the run: past `BEHIND_AFTER` (4 MiB), a thread of its own writes
/// what it is handed (to memory, then the temporary file) while the run settles and renders the
/// next chunk. Writing a million claims' 3 GB body was otherwise a serial stretch on one core
/// while the other waited. The bytes and their order are the spool's, whichever thread writes.
pub struct SpoolBehind {
    state: Behind,
    /// Small writes gathered into one piece for the thread.
    pending: Vec<u8>,
}

enum Behind {
    /// Written here, not past [`BEHIND_AFTER`] yet.
    Here(Spool),
    /// Written by its thread, which gives the spool back (or the first error) when joined.
    Thread { tx: std::sync::mpsc::SyncSender<Vec<u8>>, thread: std::thread::JoinHandle<io::Result<Spool>> },
    /// Failed, and why (the error was given once; every later write gives this).
    Failed(String),
}

impl Default for SpoolBehind {
    fn default() -> SpoolBehind {
        SpoolBehind { state: Behind::Here(Spool::new()), pending: Vec::new() }
    }
}

impl SpoolBehind {
    /// An empty spool, written here until it grows.
    pub fn new() -> SpoolBehind {
        SpoolBehind::default()
    }

    /// Appends `piece` as it is, without a copy (a run's rendered buffer).
    pub fn hand(&mut self, piece: Vec<u8>) -> io::Result<()> {
        if let Behind::Here(spool) = &mut self.state {
            spool.write_all(&piece)?;
            if spool.len >= BEHIND_AFTER {
                self.start();
            }
            return Ok(());
        }
        self.send_pending()?;
        self.send(piece)
    }

    /// Everything handed, written: the spool back, or the first error its thread met.
    pub fn into_spool(mut self) -> io::Result<Spool> {
        self.send_pending()?;
        match std::mem::replace(&mut self.state, failed()) {
            Behind::Here(spool) => Ok(spool),
            Behind::Thread { tx, thread } => {
                drop(tx);
                thread
                    .join()
                    .unwrap_or_else(|_| Err(io::Error::other("the report's writing thread panicked")))
            }
            Behind::Failed(why) => Err(io::Error::other(why)),
        }
    }

    fn start(&mut self) {
        let Behind::Here(mut spool) = std::mem::replace(&mut self.state, failed()) else { return };
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(BEHIND_QUEUE);
        let spawned = std::thread::Builder::new().name("recite-report".into()).spawn(move || {
            // On an error the receiver is dropped: the next send fails and the run joins here.
            for piece in rx {
                spool.write_all(&piece)?;
            }
            Ok(spool)
        });
        self.state = match spawned {
            Ok(thread) => Behind::Thread { tx, thread },
            // The spool went with the closure that never ran: the report fails, never half written.
            Err(e) => Behind::Failed(format!("cannot start the report's writing thread: {e}")),
        };
    }

    fn send_pending(&mut self) -> io::Result<()> {
        if self.pending.is_empty() || !matches!(self.state, Behind::Thread { .. }) {
            return Ok(());
        }
        let piece = std::mem::replace(&mut self.pending, Vec::with_capacity(BEHIND_PIECE));
        self.send(piece)
    }

    fn send(&mut self, piece: Vec<u8>) -> io::Result<()> {
        let tx = match &mut self.state {
            Behind::Thread { tx, .. } => tx,
            Behind::Failed(why) => return Err(io::Error::other(why.clone())),
            Behind::Here(spool) => return spool.write_all(&piece),
        };
        if tx.send(piece).is_ok() {
            return Ok(());
        }
        // The thread stopped on an error: that error is the one to give.
        let Behind::Thread { tx, thread } = std::mem::replace(&mut self.state, failed()) else {
            return Err(io::Error::other(FAILED));
        };
        drop(tx);
        let e = match thread.join() {
            Ok(Err(e)) => e,
            _ => io::Error::other("the report's writing thread stopped"),
        };
        self.state = Behind::Failed(format!("{FAILED}: {e}"));
        Err(e)
    }
}

impl Write for SpoolBehind {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.write_all(b)?;
        Ok(b.len())
    }
    fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        match &mut self.state {
            Behind::Here(spool) => {
                spool.write_all(b)?;
                if spool.len >= BEHIND_AFTER {
                    self.start();
                }
                Ok(())
            }
            Behind::Thread { .. } => {
                self.pending.extend_from_slice(b);
                if self.pending.len() >= BEHIND_PIECE {
                    self.send_pending()?;
                }
                Ok(())
            }
            Behind::Failed(why) => Err(io::Error::other(why.clone())),
        }
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

    #[test]
    fn a_spool_written_behind_gives_back_every_byte_in_order() {
        // Past BEHIND_AFTER, so its thread writes most of it: small writes and handed buffers mixed.
        let data: Vec<u8> = (0..12_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for small in [1, 3] {
            let mut behind = SpoolBehind::new();
            for (k, piece) in data.chunks(100_003).enumerate() {
                if k % small == 0 {
                    piece.chunks(77).for_each(|p| behind.write_all(p).unwrap());
                } else {
                    behind.hand(piece.to_vec()).unwrap();
                }
            }
            assert!(matches!(behind.state, Behind::Thread { .. }));
            let mut spool = behind.into_spool().unwrap();
            assert_eq!(spool.len, data.len() as u64);
            let mut out = Vec::new();
            spool.drain_to(&mut out).unwrap();
            assert!(out == data, "{} bytes back of {}", out.len(), data.len());
        }
    }

    #[test]
    fn a_spool_drained_into_a_file_lands_between_what_was_written_before_and_after() {
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for limit in [1 << 30, 1 << 20, 1000] {
            let mut spool = Spool { limit, ..Spool::new() };
            for piece in data.chunks(4093) {
                spool.write_all(piece).unwrap();
            }
            let file = tempfile::tempfile().unwrap();
            let mut out = Output::file(file.try_clone().unwrap());
            // Still in the output's buffer when the body moves: it must go first.
            out.write_all(b"opening\n").unwrap();
            spool.drain_into(&mut out).unwrap();
            out.write_all(b"closing\n").unwrap();
            out.flush().unwrap();
            let mut back = Vec::new();
            let mut file = file;
            file.rewind().unwrap();
            file.read_to_end(&mut back).unwrap();
            let mut want = b"opening\n".to_vec();
            want.extend_from_slice(&data);
            want.extend_from_slice(b"closing\n");
            assert!(back == want, "limit {limit}: {} bytes of {}", back.len(), want.len());
            assert!(spool.is_empty());
        }
    }
}
