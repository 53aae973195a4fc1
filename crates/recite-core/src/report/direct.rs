//! A report body past the page cache (`O_DIRECT`): spooled to a temporary file and moved to the
//! report's file in whole blocks, straight between memory and the disk.
//!
//! A million claims' body is 3.4 GB. Through the page cache it was written twice at ext4's
//! ~500 MB/s of one core (the spool, then the report), 14 s of CPU on a 2-core machine, the
//! second copy a serial tail after the run (`copy_file_range` 5.6 s, then `fsync` 1 s). Past it
//! the disk takes 1.8 GB/s and the CPU waits. The bytes are the same: the report's opening is
//! written last into the first block, its length known only then (the summary, the timings), so
//! the body still moves once, block-aligned on the report's side by a copy in memory.
//!
//! The spool's blocks are given back to the file system as they are read (a punched hole), so
//! the report and its spool take the report's size on disk, not twice it.
//!
//! Every file here is opened with `O_DIRECT` where the file system takes it; where it does not,
//! [`DirectSpool::create`] and [`move_to`] say so and the caller goes through the page cache.

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom};
use std::os::unix::fs::{FileExt, OpenOptionsExt};

/// The alignment `O_DIRECT` asks of addresses, offsets and lengths (a page: safe for any
/// logical block size up to it).
const BLOCK: usize = 4096;

/// Bytes a [`DirectSpool`] gathers before each write: what memory the spool holds past its
/// in-memory bound.
const SPOOL_CHUNK: usize = 4 << 20;

/// Bytes read and written at a time when a body moves to the report.
const MOVE_CHUNK: usize = 8 << 20;

/// A buffer whose bytes start at a [`BLOCK`]-aligned address, of a fixed capacity.
struct Aligned {
    raw: Vec<u8>,
    start: usize,
    cap: usize,
    len: usize,
}

impl Aligned {
    /// `None` if no aligned start could be found (the standard library may say so).
    fn new(cap: usize) -> Option<Aligned> {
        let raw = vec![0u8; cap + BLOCK];
        let start = raw.as_ptr().align_offset(BLOCK);
        (start < BLOCK).then_some(Aligned { raw, start, cap, len: 0 })
    }

    fn filled(&self) -> &[u8] {
        &self.raw[self.start..self.start + self.len]
    }

    /// Appends what fits of `b`; how much did.
    fn push(&mut self, b: &[u8]) -> usize {
        let n = b.len().min(self.cap - self.len);
        let at = self.start + self.len;
        self.raw[at..at + n].copy_from_slice(&b[..n]);
        self.len += n;
        n
    }

    fn is_full(&self) -> bool {
        self.len == self.cap
    }

    /// The filled bytes, padded with zeros to whole blocks.
    fn padded(&mut self) -> &[u8] {
        let end = self.len.div_ceil(BLOCK) * BLOCK;
        self.raw[self.start + self.len..self.start + end].fill(0);
        &self.raw[self.start..self.start + end]
    }
}

/// An unnamed temporary file written past the page cache, in whole blocks.
pub struct DirectSpool {
    file: File,
    staged: Aligned,
    /// Bytes on the file: whole [`SPOOL_CHUNK`]s.
    written: u64,
}

impl std::fmt::Debug for DirectSpool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectSpool").field("written", &self.written).finish()
    }
}

impl DirectSpool {
    /// A spool in the temporary folder; `None` where the file system takes no `O_DIRECT`
    /// (tmpfs) or no unnamed files.
    pub fn create() -> Option<DirectSpool> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_TMPFILE | libc::O_DIRECT)
            .open(std::env::temp_dir())
            .ok()?;
        Some(DirectSpool { file, staged: Aligned::new(SPOOL_CHUNK)?, written: 0 })
    }

    /// Appends `b`.
    pub fn write_all(&mut self, mut b: &[u8]) -> io::Result<()> {
        while !b.is_empty() {
            let n = self.staged.push(b);
            b = &b[n..];
            if self.staged.is_full() {
                self.file.write_all_at(self.staged.filled(), self.written)?;
                self.written += self.staged.len as u64;
                self.staged.len = 0;
            }
        }
        Ok(())
    }

    /// Bytes appended.
    fn len(&self) -> u64 {
        self.written + self.staged.len as u64
    }

    /// Writes what is staged (its last block padded): every byte is on the file, and how many.
    fn close(&mut self) -> io::Result<u64> {
        let len = self.len();
        if self.staged.len > 0 {
            let written = self.written;
            self.file.write_all_at(self.staged.padded(), written)?;
        }
        Ok(len)
    }

    /// Hands every byte appended to `f`, in order, a chunk at a time.
    pub fn read_out(mut self, f: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        let len = self.close()?;
        drop(std::mem::replace(&mut self.staged, Aligned { raw: Vec::new(), start: 0, cap: 0, len: 0 }));
        let mut buf = Aligned::new(MOVE_CHUNK).ok_or_else(|| io::Error::other("no aligned buffer"))?;
        let mut at = 0u64;
        while at < len {
            let want = (len - at).min(MOVE_CHUNK as u64) as usize;
            let whole = want.div_ceil(BLOCK) * BLOCK;
            let slot = &mut buf.raw[buf.start..buf.start + whole];
            let mut got = 0;
            while got < whole {
                match self.file.read_at(&mut slot[got..], at + got as u64) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            if got < want {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the report's spooled body came back short",
                ));
            }
            f(&slot[..want])?;
            // Given back as it is read: the report and its spool never take twice its size on
            // disk (a million claims' 3.4 GB each did not fit beside each other here).
            let hole = rustix::fs::FallocateFlags::PUNCH_HOLE | rustix::fs::FallocateFlags::KEEP_SIZE;
            let _ = rustix::fs::fallocate(&self.file, hole, at, whole as u64);
            at += want as u64;
        }
        Ok(())
    }
}

/// Moves every byte of `spool` to `out` at `at` (the end of what `out` holds, `unflushed`
/// bytes of it still in memory: they are written here too), past the page cache: whole blocks
/// through a second, `O_DIRECT` handle on the same file, the last part block through `out`.
/// Leaves `out` positioned after the body. `Ok(Err(spool))`, nothing written, where the
/// report's file system takes no `O_DIRECT`.
pub fn move_to(spool: DirectSpool, out: &mut File, unflushed: &[u8]) -> io::Result<Result<(), DirectSpool>> {
    use std::os::fd::AsRawFd;
    let Ok(direct) = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(format!("/proc/self/fd/{}", out.as_raw_fd()))
    else {
        return Ok(Err(spool));
    };
    let Some(mut staged) = Aligned::new(MOVE_CHUNK) else { return Ok(Err(spool)) };
    let flushed = out.stream_position()?;
    // The first block holds what `out` has of it already: read back, written again with the rest.
    let mut block_at = flushed - flushed % BLOCK as u64;
    let head = (flushed - block_at) as usize;
    out.read_exact_at(&mut staged.raw[staged.start..staged.start + head], block_at)?;
    staged.len = head;
    let put = |b: &[u8], staged: &mut Aligned, block_at: &mut u64| -> io::Result<()> {
        let mut b = b;
        while !b.is_empty() {
            let n = staged.push(b);
            b = &b[n..];
            if staged.is_full() {
                direct.write_all_at(staged.filled(), *block_at)?;
                *block_at += staged.len as u64;
                staged.len = 0;
            }
        }
        Ok(())
    };
    put(unflushed, &mut staged, &mut block_at)?;
    spool.read_out(&mut |b| put(b, &mut staged, &mut block_at))?;
    // Whole blocks past the page cache; the last part block through it, as `out` goes on.
    let whole = staged.len - staged.len % BLOCK;
    direct.write_all_at(&staged.filled()[..whole], block_at)?;
    out.write_all_at(&staged.filled()[whole..], block_at + whole as u64)?;
    out.seek(SeekFrom::Start(block_at + staged.len as u64))?;
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_body_moved_past_the_page_cache_lands_after_the_opening_byte_for_byte() {
        let data: Vec<u8> = (0..20_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for (opening, flushed) in [(0usize, 0usize), (517, 0), (517, 300), (9000, 4096), (4096, 0)] {
            let Some(mut spool) = DirectSpool::create() else {
                eprintln!("SKIPPED: the temporary folder takes no O_DIRECT");
                return;
            };
            for piece in data.chunks(100_003) {
                spool.write_all(piece).unwrap();
            }
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("report.json");
            let mut out =
                OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
            let head: Vec<u8> = (0..opening).map(|i| b'a' + (i % 26) as u8).collect();
            out.write_all(&head[..flushed]).unwrap();
            match move_to(spool, &mut out, &head[flushed..]).unwrap() {
                Ok(()) => {}
                Err(_) => {
                    eprintln!("SKIPPED: the report's folder takes no O_DIRECT");
                    return;
                }
            }
            out.write_all(b"closing").unwrap();
            drop(out);
            let mut back = Vec::new();
            File::open(&path).unwrap().read_to_end(&mut back).unwrap();
            let mut want = head.clone();
            want.extend_from_slice(&data);
            want.extend_from_slice(b"closing");
            assert!(back == want, "opening {opening}: {} bytes of {}", back.len(), want.len());
        }
    }
}
