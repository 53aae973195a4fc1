//! A check's report as it is written on a blocking thread and read by the request: the
//! writer ([`Sink`]) hands pieces of up to 64 KiB over a bounded channel, waiting while the
//! caller is not reading but never past the request's deadline; the reader ([`Streaming`])
//! takes them until the end, or the problem that stopped the check.

use std::time::Duration;

use axum::body::Bytes;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::problem::{Problem, Stopped};

/// A piece of a report being written by a check, or its end.
#[derive(Debug)]
pub(crate) enum Chunk {
    Data(Bytes),
    Done(Result<(), Stopped>),
}

/// A check's report as it is written: [`Streaming::next`] until `None`.
pub struct Streaming {
    rx: mpsc::Receiver<Chunk>,
    deadline: Instant,
    limit: Duration,
    ended: bool,
}

impl Streaming {
    /// The report read from `rx` until `deadline`, the end of a request whose time limit is
    /// `limit`.
    pub(crate) fn new(rx: mpsc::Receiver<Chunk>, deadline: Instant, limit: Duration) -> Streaming {
        Streaming { rx, deadline, limit, ended: false }
    }

    /// The next piece of the report, `None` once it is complete, or why it stopped (after
    /// which there is nothing more).
    pub async fn next(&mut self) -> Option<Result<Bytes, Problem>> {
        if self.ended {
            return None;
        }
        let got = tokio::time::timeout_at(self.deadline, self.rx.recv()).await;
        let out = match got {
            Err(_) => Some(Err(Problem::time_limit(self.limit))),
            Ok(None) => Some(Err(Problem::internal("the check stopped without finishing its report"))),
            Ok(Some(Chunk::Data(b))) => return Some(Ok(b)),
            Ok(Some(Chunk::Done(Ok(())))) => None,
            Ok(Some(Chunk::Done(Err(stopped)))) => Some(Err(stopped.problem(self.limit))),
        };
        self.ended = true;
        out
    }

    /// The whole report (for the front ends that answer in one message).
    #[cfg(feature = "agents")]
    pub async fn collect(mut self) -> Result<Vec<u8>, Problem> {
        let mut all = Vec::new();
        while let Some(piece) = self.next().await {
            all.extend_from_slice(&piece?);
        }
        Ok(all)
    }
}

/// Where a check running on a blocking thread writes its report: in pieces of up to 64 KiB to
/// the request, failing once the caller has gone or the time limit has passed, which stops
/// the check at its next write.
pub(crate) struct Sink {
    tx: mpsc::Sender<Chunk>,
    buf: Vec<u8>,
    deadline: std::time::Instant,
    runtime: tokio::runtime::Handle,
}

impl Sink {
    /// A sink into `tx` until `deadline`; made on the runtime the request runs on.
    pub(crate) fn new(tx: mpsc::Sender<Chunk>, deadline: std::time::Instant) -> Sink {
        Sink { tx, buf: Vec::new(), deadline, runtime: tokio::runtime::Handle::current() }
    }

    fn send(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let data = Bytes::from(std::mem::take(&mut self.buf));
        self.put(Chunk::Data(data))
    }

    /// Sends `chunk`, waiting while the request is not reading (its buffer full) but never past
    /// the deadline: a caller that stops reading cannot hold a turn beyond the time limit. On
    /// a blocking thread, which may wait on the runtime.
    pub(crate) fn put(&self, chunk: Chunk) -> std::io::Result<()> {
        let until = Instant::from_std(self.deadline);
        match self.runtime.block_on(tokio::time::timeout_at(until, self.tx.send(chunk))) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the caller went away")),
            Err(_) => Err(timed_out()),
        }
    }
}

fn timed_out() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::TimedOut, "the request's time limit passed")
}

impl std::io::Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if std::time::Instant::now() >= self.deadline {
            return Err(timed_out());
        }
        self.buf.extend_from_slice(b);
        if self.buf.len() >= 1 << 16 {
            self.send()?;
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.send()
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        let _ = self.send();
    }
}
