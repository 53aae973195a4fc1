//! A `.sav` file as ambers should read it: bytecode-compressed data (SPSS's default) decoded on
//! the fly and served as the uncompressed `.sav` it stands for, so ambers streams it.
//!
//! ambers 0.4.6 reads a bytecode-compressed data section whole into memory before the first
//! row; its uncompressed reader takes rows from the reader as it goes. [`SavSource`] shows ambers
//! the file's own header and dictionary with the compression field set to 0, then the rows,
//! decompressed through a 1 MiB window. Every value is decoded exactly as ambers decodes it
//! (code − bias as a little-endian double, eight spaces, system-missing, raw bytes), so the
//! numbers are the same; what differs is that a short or damaged data section is an error
//! naming the byte, where ambers stops quietly at the last whole row.
//!
//! The data section is a run of 8-byte command blocks, each followed by the raw 8-byte values
//! its `253` codes announce. Blocks do not align with rows: a row may end mid-block.
//!
//! Every file's dictionary is walked here before ambers sees it, and a `.zsav`'s trailer is
//! checked against the file and [`MAX_ZSAV_BLOCK`]: ambers allocates what a file declares
//! (a negative or huge block size panics or takes gigabytes), so a declared size it would
//! trust is refused here first, naming the byte.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

/// The fixed file header's length; the dictionary records follow it.
const HEADER_LEN: u64 = 176;
/// Where the header's compression field sits (an i32).
const COMPRESSION_AT: usize = 72;
/// Input window for the compressed data.
const WINDOW: usize = 1 << 20;
/// ambers' system-missing value (−f64::MAX), as it writes it for code 255.
const SYSMIS: [u8; 8] = 0xFFEF_FFFF_FFFF_FFFFu64.to_le_bytes();
const SPACES: [u8; 8] = [b' '; 8];
/// Largest `.zsav` block recite lets ambers decompress: ambers holds about three at once.
/// SPSS, PSPP and ReadStat write blocks of 0x3FF000 bytes (just under 4 MiB).
pub const MAX_ZSAV_BLOCK: u64 = 16 << 20;
/// Bytes of the `.zsav` zlib header (after the dictionary) and of the trailer's fixed part and
/// of each of its block entries.
const ZHEADER_LEN: u64 = 24;
const ZENTRY_LEN: u64 = 24;

/// What the header and dictionary of a `.sav` say about its data section.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// 0 none, 1 bytecode, 2 zlib (`.zsav`).
    pub compression: i32,
    /// Byte offset where the data section starts.
    pub data_start: u64,
    /// 8-byte values per row (one per variable record, string continuations included).
    pub slots: usize,
    /// Rows the header declares; `None` where the writer did not know (−1).
    pub rows: Option<u64>,
    /// Added to a stored code to get its value back (`value = code − bias`).
    pub bias: f64,
    /// The file's length.
    pub file_len: u64,
}

/// Why a `.sav` file cannot be given to ambers, worded to follow the file's path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// The file cannot be read (the system's words).
    #[error("cannot be read: {0}")]
    Unreadable(String),
    /// Its dictionary, or a `.zsav`'s zlib header or trailer, declares what the file does not hold.
    #[error("is not a readable SPSS file: {0}")]
    Damaged(Damage),
    /// Written big-endian: ambers decodes every value as little-endian.
    #[error("is a big-endian SPSS file, which recite cannot read yet")]
    BigEndian,
    /// A layout code other than 2 or 3.
    #[error("has an unknown layout code {code} in its header")]
    UnknownLayout { code: i32 },
    /// An uncompressed data section that ends inside a row.
    #[error(
        "is cut short: its data ends at byte {file_len} inside row {row} (rows are {row_bytes} bytes from byte {data_start})"
    )]
    CutShort { file_len: u64, row: u64, row_bytes: u64, data_start: u64 },
    /// An uncompressed data section of other whole rows than the header declares.
    #[error(
        "holds {whole} rows but its header declares {declared} (data from byte {data_start} to {file_len})"
    )]
    RowCount { whole: u64, declared: u64, data_start: u64, file_len: u64 },
}

/// What a dictionary, or a `.zsav`'s zlib header and trailer, gets wrong, naming the byte.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Damage {
    /// A record runs past the end of the file.
    #[error("its dictionary runs past the end of the file (at byte {at})")]
    DictionaryPastEnd { at: u64 },
    /// A count or size that must not be negative.
    #[error("{what} is negative ({n}) at byte {at}")]
    Negative { what: &'static str, n: i32, at: u64 },
    /// A variable record with a missing-value count outside -3 to 3.
    #[error("the variable record at byte {at} declares {missing} missing values")]
    MissingValues { at: u64, missing: i32 },
    /// Value labels not followed by the record naming their variables.
    #[error("the value labels at byte {at} are not followed by their variables (byte {next})")]
    LabelsWithoutVariables { at: u64, next: u64 },
    /// A record type the format does not have.
    #[error("its dictionary has a record of unknown type {record} at byte {at}")]
    UnknownRecord { record: i32, at: u64 },
    /// A dictionary without one variable.
    #[error("its dictionary defines no variables")]
    NoVariables,
    /// A `.zsav` part that runs past the end of the file.
    #[error("its {what} at byte {at} runs past the end of the file ({len} bytes)")]
    PastEnd { what: &'static str, at: u64, len: u64 },
    /// The file could not be read while it was checked (the system's words).
    #[error("{0}")]
    Io(String),
    /// The zlib header's trailer offset lies outside the data.
    #[error(
        "its zlib header at byte {header} puts the trailer at byte {trailer}, outside the file's data (bytes {first} to {len})"
    )]
    TrailerOutside { header: u64, trailer: i64, first: u64, len: u64 },
    /// A negative block count (`at`: the count's byte).
    #[error("its trailer at byte {trailer_at} declares {count} blocks (byte {at})")]
    BlockCount { trailer_at: u64, count: i32, at: u64 },
    /// More block entries than the file holds.
    #[error(
        "its trailer at byte {trailer_at} declares {blocks} blocks, whose entries run past the end of the file ({len} bytes)"
    )]
    EntriesPastEnd { trailer_at: u64, blocks: u64, len: u64 },
    /// A block size of 0, negative, or over what recite decompresses at once (`at`: its byte).
    #[error(
        "its trailer at byte {trailer_at} declares blocks of {block_size} bytes (byte {at}), outside 1 to the {max} bytes recite decompresses at once",
        max = MAX_ZSAV_BLOCK
    )]
    BlockSize { trailer_at: u64, block_size: i32, at: u64 },
    /// A block that unpacks to more than the block size.
    #[error(
        "block {n} of its trailer (byte {at}) declares {unpacked} bytes uncompressed, outside 0 to the block size {block_size}"
    )]
    Unpacked { n: u64, at: u64, unpacked: i32, block_size: i32 },
    /// A block's compressed bytes outside the file's blocks.
    #[error(
        "block {n} of its trailer (byte {at}) declares {packed} compressed bytes at byte {offset}, outside the file's blocks (bytes {first} to {trailer_at})"
    )]
    Packed { n: u64, at: u64, packed: i32, offset: i64, first: u64, trailer_at: u64 },
}

/// Little-endian reads over the dictionary, tracking the offset for error messages.
struct Records<'a, R: Read> {
    r: &'a mut R,
    at: u64,
    len: u64,
}

impl<R: Read> Records<'_, R> {
    fn bytes(&mut self, n: u64) -> Result<(), Damage> {
        if self.at.saturating_add(n) > self.len {
            return Err(Damage::DictionaryPastEnd { at: self.at });
        }
        io::copy(&mut self.r.by_ref().take(n), &mut io::sink()).map_err(|e| Damage::Io(e.to_string()))?;
        self.at += n;
        Ok(())
    }

    fn i32(&mut self) -> Result<i32, Damage> {
        let mut b = [0; 4];
        self.r.read_exact(&mut b).map_err(|_| Damage::DictionaryPastEnd { at: self.at })?;
        self.at += 4;
        Ok(i32::from_le_bytes(b))
    }

    /// A non-negative count read at the current offset.
    fn count(&mut self, what: &'static str) -> Result<u64, Damage> {
        let at = self.at;
        let n = self.i32()?;
        u64::try_from(n).map_err(|_| Damage::Negative { what, n, at })
    }
}

impl Layout {
    /// Reads the header: `None` when the file does not start like a `.sav` (ambers then says
    /// what it is not). The layout it returns has not walked the dictionary yet.
    fn header<R: Read>(r: &mut R, file_len: u64) -> Result<Option<Layout>, LayoutError> {
        let mut header = [0u8; HEADER_LEN as usize];
        if r.read_exact(&mut header).is_err() || !matches!(&header[..4], b"$FL2" | b"$FL3") {
            return Ok(None);
        }
        let i32_at = |at: usize| i32::from_le_bytes(header[at..at + 4].try_into().expect("4 bytes"));
        match i32_at(64) {
            2 | 3 => {}
            // ambers decodes every value as little-endian, so a big-endian file would be misread.
            _ if matches!(i32::from_be_bytes(header[64..68].try_into().expect("4 bytes")), 2 | 3) => {
                return Err(LayoutError::BigEndian);
            }
            code => return Err(LayoutError::UnknownLayout { code }),
        }
        Ok(Some(Layout {
            compression: i32_at(COMPRESSION_AT),
            data_start: HEADER_LEN,
            slots: 0,
            rows: u64::try_from(i32_at(80)).ok(),
            bias: f64::from_le_bytes(header[84..92].try_into().expect("8 bytes")),
            file_len,
        }))
    }

    /// Walks the dictionary records (the reader just past the header) to where the data
    /// starts, counting the values a row holds.
    fn dictionary<R: Read>(mut self, r: &mut R) -> Result<Layout, Damage> {
        let file_len = self.file_len;
        let mut rec = Records { r, at: HEADER_LEN, len: file_len };
        let mut slots = 0usize;
        loop {
            let at = rec.at;
            match rec.i32()? {
                2 => {
                    rec.i32()?; // type
                    let has_label = rec.i32()?;
                    let missing = rec.i32()?;
                    rec.bytes(16)?; // print and write formats, short name
                    if has_label == 1 {
                        let n = rec.count("a variable label's length")?;
                        rec.bytes(n.div_ceil(4) * 4)?;
                    }
                    if !(-3..=3).contains(&missing) {
                        return Err(Damage::MissingValues { at, missing });
                    }
                    rec.bytes(8 * u64::from(missing.unsigned_abs()))?;
                    slots += 1;
                }
                3 => {
                    for _ in 0..rec.count("a value label count")? {
                        rec.bytes(8)?;
                        let mut len = [0u8; 1];
                        rec.r.read_exact(&mut len).map_err(|_| Damage::DictionaryPastEnd { at: rec.at })?;
                        rec.at += 1;
                        rec.bytes((u64::from(len[0]) + 1).div_ceil(8) * 8 - 1)?;
                    }
                    let next = rec.at;
                    if rec.i32()? != 4 {
                        return Err(Damage::LabelsWithoutVariables { at, next });
                    }
                    let n = rec.count("a value label variable count")?;
                    rec.bytes(4 * n)?;
                }
                6 => {
                    let n = rec.count("a document line count")?;
                    rec.bytes(80 * n)?;
                }
                7 => {
                    rec.i32()?; // subtype
                    let size = rec.count("an extension record's size")?;
                    let n = rec.count("an extension record's count")?;
                    rec.bytes(size.saturating_mul(n))?;
                }
                999 => {
                    rec.bytes(4)?;
                    break;
                }
                record => return Err(Damage::UnknownRecord { record, at }),
            }
        }
        if slots == 0 {
            return Err(Damage::NoVariables);
        }
        self.data_start = rec.at;
        self.slots = slots;
        Ok(self)
    }

    /// Checks a `.zsav`'s zlib header and trailer against the file and [`MAX_ZSAV_BLOCK`]
    /// before ambers allocates what they declare: the trailer and every block inside the file,
    /// every size non-negative, no block larger than the trailer's block size.
    fn check_zsav(&self, file: &mut File) -> Result<(), Damage> {
        let len = self.file_len;
        let first = self.data_start + ZHEADER_LEN;
        let past_end = |what: &'static str, at: u64| Damage::PastEnd { what, at, len };
        if first > len {
            return Err(past_end("zlib header", self.data_start));
        }
        file.seek(SeekFrom::Start(self.data_start)).map_err(|e| Damage::Io(e.to_string()))?;
        let mut r = io::BufReader::new(file);
        let mut fixed = [0u8; 24];
        r.read_exact(&mut fixed).map_err(|_| past_end("zlib header", self.data_start))?;
        let i64_at = |b: &[u8; 24], i: usize| i64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let i32_at = |b: &[u8; 24], i: usize| i32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let trailer = i64_at(&fixed, 8);
        let trailer_at = u64::try_from(trailer)
            .ok()
            .filter(|t| *t >= first && t.saturating_add(ZENTRY_LEN) <= len)
            .ok_or(Damage::TrailerOutside { header: self.data_start, trailer, first, len })?;
        r.seek(SeekFrom::Start(trailer_at)).map_err(|e| Damage::Io(e.to_string()))?;
        r.read_exact(&mut fixed).map_err(|_| past_end("trailer", trailer_at))?;
        let block_size = i32_at(&fixed, 16);
        let count = i32_at(&fixed, 20);
        let blocks = u64::try_from(count).map_err(|_| Damage::BlockCount {
            trailer_at,
            count,
            at: trailer_at + 20,
        })?;
        if trailer_at + ZENTRY_LEN + blocks * ZENTRY_LEN > len {
            return Err(Damage::EntriesPastEnd { trailer_at, blocks, len });
        }
        let size = u64::try_from(block_size).unwrap_or(0);
        if blocks > 0 && (size == 0 || size > MAX_ZSAV_BLOCK) {
            return Err(Damage::BlockSize { trailer_at, block_size, at: trailer_at + 16 });
        }
        for n in 1..=blocks {
            let at = trailer_at + n * ZENTRY_LEN;
            r.read_exact(&mut fixed).map_err(|_| past_end("trailer", trailer_at))?;
            let (offset, unpacked, packed) = (i64_at(&fixed, 8), i32_at(&fixed, 16), i32_at(&fixed, 20));
            if !(0..=block_size).contains(&unpacked) {
                return Err(Damage::Unpacked { n, at, unpacked, block_size });
            }
            let inside = u64::try_from(offset)
                .ok()
                .zip(u64::try_from(packed).ok())
                .filter(|(o, p)| *o >= first && o.saturating_add(*p) <= trailer_at);
            if inside.is_none() {
                return Err(Damage::Packed { n, at, packed, offset, first, trailer_at });
            }
        }
        Ok(())
    }

    /// Bytes per row, uncompressed.
    pub fn row_bytes(&self) -> u64 {
        8 * self.slots as u64
    }

    /// An uncompressed data section that is not whole rows, or not the rows the header
    /// declares, is damaged: ambers would drop the partial row without a word.
    pub fn check_uncompressed(&self) -> Result<(), LayoutError> {
        let data = self.file_len.saturating_sub(self.data_start);
        let whole = data / self.row_bytes();
        if !data.is_multiple_of(self.row_bytes()) {
            return Err(LayoutError::CutShort {
                file_len: self.file_len,
                row: whole + 1,
                row_bytes: self.row_bytes(),
                data_start: self.data_start,
            });
        }
        match self.rows {
            Some(declared) if declared != whole => Err(LayoutError::RowCount {
                whole,
                declared,
                data_start: self.data_start,
                file_len: self.file_len,
            }),
            _ => Ok(()),
        }
    }
}

/// The file ambers reads: passed through as it is, or, for a bytecode-compressed file, shown as
/// its uncompressed equivalent.
pub enum SavSource {
    /// Uncompressed and `.zsav` files (ambers streams both itself), with where recite's walk
    /// of the dictionary found the data (none for a file that is not a `.sav`, which ambers
    /// refuses).
    Plain(io::BufReader<File>, Option<Layout>),
    /// A bytecode-compressed file, decompressed as it is read.
    Bytecode(Box<Decompressed>),
}

impl SavSource {
    /// Opens `path` for ambers: walks the dictionary (every declared size checked against the
    /// file), checks an uncompressed file's size against its header and a `.zsav`'s trailer.
    pub fn open(mut file: File) -> Result<SavSource, LayoutError> {
        let unreadable = |e: io::Error| LayoutError::Unreadable(e.to_string());
        let file_len = file.metadata().map_err(unreadable)?.len();
        let mut r = io::BufReader::new(&mut file);
        let layout = match Layout::header(&mut r, file_len)? {
            // ambers would trust what a dictionary we cannot walk declares: refused here.
            Some(h) => Some(h.dictionary(&mut r).map_err(LayoutError::Damaged)?),
            None => None,
        };
        drop(r);
        if let Some(l) = layout.as_ref().filter(|l| l.compression == 2) {
            l.check_zsav(&mut file).map_err(LayoutError::Damaged)?;
        }
        file.seek(SeekFrom::Start(0)).map_err(unreadable)?;
        match layout {
            Some(l) if l.compression == 1 => Ok(SavSource::Bytecode(Box::new(Decompressed::new(file, l)))),
            l => {
                if let Some(l) = l.as_ref().filter(|l| l.compression == 0) {
                    l.check_uncompressed()?;
                }
                Ok(SavSource::Plain(io::BufReader::with_capacity(WINDOW, file), l))
            }
        }
    }

    /// Bytes of one uncompressed row, where recite's walk of the dictionary found them.
    pub fn row_bytes(&self) -> Option<u64> {
        match self {
            SavSource::Plain(_, layout) => layout.as_ref().map(Layout::row_bytes),
            SavSource::Bytecode(d) => Some(d.layout.row_bytes()),
        }
    }
}

impl Read for SavSource {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            SavSource::Plain(r, _) => r.read(buf),
            SavSource::Bytecode(d) => d.read(buf),
        }
    }
}

impl Seek for SavSource {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        match self {
            SavSource::Plain(r, layout) => {
                let at = r.seek(to)?;
                // ambers asks where its dictionary ended: the checks above hold only if it is
                // where ours did.
                if let (SeekFrom::Current(0), Some(l)) = (to, layout.as_ref())
                    && at > HEADER_LEN
                    && at != l.data_start
                {
                    return Err(damaged(format!(
                        "its dictionary ends at byte {at} by ambers' reading and {} by recite's",
                        l.data_start
                    )));
                }
                Ok(at)
            }
            SavSource::Bytecode(d) => d.seek(to),
        }
    }
}

/// A damaged data section, with the byte it was found at.
fn damaged(text: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, text)
}

/// A bytecode-compressed `.sav`, read as the uncompressed `.sav` it stands for.
pub struct Decompressed {
    file: File,
    layout: Layout,
    /// Position in the view (header, dictionary, then `slots × 8` bytes a row).
    pos: u64,
    /// Length of the view: the header's row count decoded, or a bound where it is unknown.
    len: u64,
    /// The decoder has begun reading the data section.
    started: bool,
    ended: bool,
    window: Box<[u8]>,
    /// Unread bytes of `window` are `at..end`; `window[0]` is at file offset `window_offset`.
    at: usize,
    end: usize,
    window_offset: u64,
    commands: [u8; 8],
    /// The next command in `commands` (8: read a new block).
    next: usize,
    /// Values of the current row delivered so far.
    slot: usize,
    /// Whole rows delivered.
    rows: u64,
    /// A value handed out in part (a read shorter than 8 bytes): `pending[pending_at..]` is left.
    pending: [u8; 8],
    pending_at: usize,
    values: [[u8; 8]; 256],
}

impl Decompressed {
    fn new(file: File, layout: Layout) -> Decompressed {
        let mut values = [[0u8; 8]; 256];
        for (code, v) in values.iter_mut().enumerate().take(252).skip(1) {
            *v = (code as f64 - layout.bias).to_le_bytes();
        }
        let len = match layout.rows {
            Some(n) => layout.data_start.saturating_add(n.saturating_mul(layout.row_bytes())),
            // Each command byte stands for at most 8 bytes: at most 8× the compressed bytes.
            None => layout.data_start.saturating_add(8 * layout.file_len.saturating_sub(layout.data_start)),
        };
        Decompressed {
            file,
            pos: 0,
            len,
            started: false,
            ended: false,
            window: vec![0; WINDOW].into_boxed_slice(),
            at: 0,
            end: 0,
            window_offset: layout.data_start,
            commands: [0; 8],
            next: 8,
            slot: 0,
            rows: 0,
            pending: [0; 8],
            pending_at: 8,
            values,
            layout,
        }
    }

    /// File offset of the next unread compressed byte.
    fn offset(&self) -> u64 {
        self.window_offset + self.at as u64
    }

    /// Makes `n` (≤ 8) unread bytes available; `false` at the end of the file.
    fn want(&mut self, n: usize) -> io::Result<bool> {
        if self.end - self.at >= n {
            return Ok(true);
        }
        self.window.copy_within(self.at..self.end, 0);
        self.window_offset += self.at as u64;
        self.end -= self.at;
        self.at = 0;
        while self.end < n {
            match self.file.read(&mut self.window[self.end..]) {
                Ok(0) => return Ok(false),
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// A raw value (code 253) on the fast path: the command is consumed with it.
    #[inline]
    fn take8_after_command(&mut self) -> [u8; 8] {
        self.next += 1;
        self.take8()
    }

    #[inline]
    fn take8(&mut self) -> [u8; 8] {
        let v: [u8; 8] = self.window[self.at..self.at + 8].try_into().expect("8 bytes");
        self.at += 8;
        v
    }

    fn declared(&self) -> String {
        match self.layout.rows {
            Some(n) => format!("; the header declares {n} rows"),
            None => String::new(),
        }
    }

    /// The data section has ended (an end code, or the end of the file at a block boundary).
    fn finish(&mut self) -> io::Result<()> {
        let at = self.offset();
        if self.slot != 0 {
            return Err(damaged(format!(
                "compressed data ends at byte {at} inside row {} (after {} of its {} values){}",
                self.rows + 1,
                self.slot,
                self.layout.slots,
                self.declared()
            )));
        }
        if let Some(n) = self.layout.rows.filter(|n| *n != self.rows) {
            return Err(damaged(format!(
                "compressed data ends at byte {at} after {} rows, but the header declares {n}",
                self.rows
            )));
        }
        self.ended = true;
        Ok(())
    }

    /// The next 8-byte value of the data, `None` at its end.
    #[inline]
    fn value(&mut self) -> io::Result<Option<[u8; 8]>> {
        loop {
            if self.next == 8 {
                if !self.want(8)? {
                    if self.end > self.at {
                        return Err(damaged(format!(
                            "compressed data ends at byte {} inside a command block (row {}){}",
                            self.window_offset + self.end as u64,
                            self.rows + 1,
                            self.declared()
                        )));
                    }
                    self.finish()?;
                    return Ok(None);
                }
                self.commands = self.take8();
                self.next = 0;
            }
            let code = self.commands[self.next];
            self.next += 1;
            let v = match code {
                0 => continue,
                1..=251 => self.values[code as usize],
                252 => {
                    self.finish()?;
                    return Ok(None);
                }
                253 => {
                    if !self.want(8)? {
                        return Err(damaged(format!(
                            "compressed data ends at byte {} inside an uncompressed value of row {}{}",
                            self.window_offset + self.end as u64,
                            self.rows + 1,
                            self.declared()
                        )));
                    }
                    self.take8()
                }
                254 => SPACES,
                255 => SYSMIS,
            };
            if self.slot == 0 && self.layout.rows == Some(self.rows) {
                return Err(damaged(format!(
                    "compressed data holds more rows than the {} its header declares (row {} starts before byte {})",
                    self.rows,
                    self.rows + 1,
                    self.offset()
                )));
            }
            self.slot += 1;
            if self.slot == self.layout.slots {
                self.slot = 0;
                self.rows += 1;
            }
            return Ok(Some(v));
        }
    }

    /// Decodes into `buf`; returns the bytes written (0 at the end of the data).
    fn decode(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut w = 0;
        if self.pending_at < 8 {
            let n = (8 - self.pending_at).min(buf.len());
            buf[..n].copy_from_slice(&self.pending[self.pending_at..self.pending_at + n]);
            self.pending_at += n;
            return Ok(n);
        }
        if self.ended {
            return Ok(0);
        }
        while w + 8 <= buf.len() {
            // Fast path, while the window holds a whole block and every raw value it may
            // announce, and short of a row's last value (rows are counted on the careful path).
            while w + 8 <= buf.len()
                && self.end - self.at >= 72
                && self.slot + 1 < self.layout.slots
                && (self.slot > 0 || self.layout.rows != Some(self.rows))
            {
                if self.next == 8 {
                    self.commands = self.take8();
                    self.next = 0;
                }
                let code = self.commands[self.next];
                let v = match code {
                    0 => {
                        self.next += 1;
                        continue;
                    }
                    1..=251 => self.values[code as usize],
                    253 => self.take8_after_command(),
                    254 => SPACES,
                    255 => SYSMIS,
                    252 => break, // the end code: the careful path below says whether it may be here
                };
                if code != 253 {
                    self.next += 1;
                }
                buf[w..w + 8].copy_from_slice(&v);
                w += 8;
                self.slot += 1;
            }
            if w + 8 > buf.len() {
                break;
            }
            match self.value()? {
                Some(v) => buf[w..w + 8].copy_from_slice(&v),
                None => return Ok(w),
            }
            w += 8;
        }
        if w == 0 && !buf.is_empty() {
            // A read shorter than one value: hand it out in pieces.
            let Some(v) = self.value()? else { return Ok(0) };
            self.pending = v;
            self.pending_at = buf.len();
            buf.copy_from_slice(&v[..buf.len()]);
            return Ok(buf.len());
        }
        Ok(w)
    }
}

impl Read for Decompressed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let start = self.layout.data_start;
        if self.pos < start {
            // The header and dictionary, as they are but for the compression field.
            if self.started {
                return Err(io::Error::other("the dictionary cannot be read again once rows are"));
            }
            let room = ((start - self.pos) as usize).min(buf.len());
            let n = self.file.read(&mut buf[..room])?;
            for (i, b) in buf[..n].iter_mut().enumerate() {
                let at = self.pos as usize + i;
                if (COMPRESSION_AT..COMPRESSION_AT + 4).contains(&at) {
                    *b = 0;
                }
            }
            self.pos += n as u64;
            return Ok(n);
        }
        if self.pos > start && !self.started {
            return Ok(0); // at the end, after a seek there
        }
        self.started = true;
        let n = self.decode(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Decompressed {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        match to {
            SeekFrom::Start(at) if !self.started && at <= self.layout.data_start => {
                self.file.seek(SeekFrom::Start(at))?;
                self.pos = at;
            }
            SeekFrom::End(0) if !self.started => self.pos = self.len,
            SeekFrom::Current(0) => {
                // ambers asks where its dictionary ended; it must be where ours did, or the
                // rows would be read from the wrong place.
                if !self.started && self.pos > HEADER_LEN && self.pos != self.layout.data_start {
                    return Err(damaged(format!(
                        "its dictionary ends at byte {} by ambers' reading and {} by recite's",
                        self.pos, self.layout.data_start
                    )));
                }
            }
            SeekFrom::Start(at) if at == self.pos => {}
            other => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!("a compressed .sav is read front to back ({other:?} at byte {})", self.pos),
                ));
            }
        }
        Ok(self.pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal `.sav`: header, `slots` numeric variables, terminator, then `data`.
    fn file(slots: usize, rows: i32, compression: i32, data: &[u8]) -> tempfile::NamedTempFile {
        let mut b = Vec::new();
        b.extend(b"$FL2");
        b.extend([b' '; 60]);
        for v in [2, slots as i32, compression, 0, rows] {
            b.extend(v.to_le_bytes());
        }
        b.extend(100f64.to_le_bytes());
        b.extend([b' '; 84]);
        for i in 0..slots {
            for v in [2i32, 0, 0, 0, 0x050800, 0x050800] {
                b.extend(v.to_le_bytes());
            }
            b.extend(format!("V{i:<7}").as_bytes());
        }
        b.extend(999i32.to_le_bytes());
        b.extend(0i32.to_le_bytes());
        b.extend(data);
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, &b).unwrap();
        f
    }

    fn rows_of(f: &tempfile::NamedTempFile) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
        let SavSource::Bytecode(mut d) = SavSource::open(File::open(f.path()).unwrap())? else {
            panic!("not read as bytecode")
        };
        let start = d.layout.data_start;
        let mut head = vec![0; start as usize];
        d.read_exact(&mut head).unwrap();
        assert_eq!(&head[72..76], &[0; 4], "shown uncompressed");
        let mut out = Vec::new();
        // Reads of every size: values must come out whole whatever the caller's buffer.
        let mut buf = [0u8; 4096];
        for size in [13, 4096, 1, 800, 7].into_iter().cycle() {
            match d.read(&mut buf[..size]) {
                Ok(0) => return Ok(out),
                Ok(n) => out.extend(&buf[..n]),
                Err(e) => return Err(e.into()),
            }
        }
        unreachable!("the sizes cycle forever")
    }

    fn f(x: f64) -> [u8; 8] {
        x.to_le_bytes()
    }

    #[test]
    fn bytecode_decodes_every_code_across_row_boundaries() {
        // 3 values a row, 2 rows; the first block spans both rows, 0 pads the last.
        let raw = f(1234.5);
        let mut data = vec![101, 253, 255, 254, 100, 1, 0, 0];
        data.extend(raw);
        data.extend([252, 0, 0, 0, 0, 0, 0, 0]);
        let out = rows_of(&file(3, 2, 1, &data)).unwrap();
        let want: Vec<u8> = [f(1.0), raw, SYSMIS, SPACES, f(0.0), f(-99.0)].concat();
        assert_eq!(out, want);
    }

    #[test]
    fn bytecode_cut_short_names_the_byte() {
        // A row of 3 values where the data stops after 2.
        let t = file(3, 1, 1, &[101, 102, 0, 0, 0, 0, 0, 0]);
        let e = rows_of(&t).unwrap_err().to_string();
        assert!(e.contains("inside row 1 (after 2 of its 3 values)"), "{e}");
        assert!(e.contains("at byte"), "{e}");
        // A raw value announced but missing.
        let e = rows_of(&file(1, 1, 1, &[253, 0, 0, 0, 0, 0, 0, 0, 1, 2])).unwrap_err().to_string();
        assert!(e.contains("inside an uncompressed value of row 1"), "{e}");
        // Fewer whole rows than declared.
        let e = rows_of(&file(1, 3, 1, &[101, 102, 0, 0, 0, 0, 0, 0])).unwrap_err().to_string();
        assert!(e.contains("after 2 rows, but the header declares 3"), "{e}");
        // More rows than declared.
        let e = rows_of(&file(1, 1, 1, &[101, 102, 0, 0, 0, 0, 0, 0])).unwrap_err().to_string();
        assert!(e.contains("more rows than the 1"), "{e}");
        // A partial command block.
        let e = rows_of(&file(1, 1, 1, &[101, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3])).unwrap_err().to_string();
        assert!(e.contains("inside a command block"), "{e}");
    }

    /// Compresses `values` as SPSS does: small whole numbers as codes, the rest raw.
    fn compress(values: &[[u8; 8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for block in values.chunks(8) {
            let mut commands = [0u8; 8];
            let mut raw: Vec<u8> = Vec::new();
            for (c, v) in commands.iter_mut().zip(block) {
                let x = f64::from_le_bytes(*v);
                *c = if *v == SYSMIS {
                    255
                } else if *v == SPACES {
                    254
                } else if x.fract() == 0.0 && (-99.0..=151.0).contains(&x) {
                    (x + 100.0) as u8
                } else {
                    raw.extend(v);
                    253
                };
            }
            out.extend(commands);
            out.extend(raw);
        }
        out
    }

    #[test]
    fn bytecode_round_trips_many_rows_whatever_the_read_size() {
        // Enough rows for the fast path (a full window), every kind of value, rows of 5.
        let values: Vec<[u8; 8]> = (0..50_000u32)
            .map(|i| match i % 7 {
                0 => SYSMIS,
                1 => SPACES,
                2 => f(f64::from(i % 250) - 99.0),
                3 => f(f64::from(i) * 0.25),
                _ => f(f64::from(i % 5)),
            })
            .collect();
        let t = file(5, 10_000, 1, &compress(&values));
        assert_eq!(rows_of(&t).unwrap(), values.concat());
        // One row more than the header says: found on whatever path the row starts.
        let e = rows_of(&file(5, 9_999, 1, &compress(&values))).unwrap_err().to_string();
        assert!(e.contains("more rows than the 9999"), "{e}");
        let e = rows_of(&file(5, 10_001, 1, &compress(&values))).unwrap_err().to_string();
        assert!(e.contains("after 10000 rows, but the header declares 10001"), "{e}");
    }

    #[test]
    fn bytecode_with_unknown_row_count_reads_to_the_end() {
        let out = rows_of(&file(2, -1, 1, &[101, 102, 103, 104, 0, 0, 0, 0])).unwrap();
        assert_eq!(out, [f(1.0), f(2.0), f(3.0), f(4.0)].concat());
    }

    #[test]
    fn uncompressed_data_must_be_the_declared_whole_rows() {
        let whole = file(2, 2, 0, &[0; 32]);
        assert!(SavSource::open(File::open(whole.path()).unwrap()).is_ok());
        let cut = file(2, 2, 0, &[0; 30]);
        let e = SavSource::open(File::open(cut.path()).unwrap()).err().unwrap().to_string();
        assert!(e.contains("inside row 2"), "{e}");
        let short = file(2, 3, 0, &[0; 32]);
        let e = SavSource::open(File::open(short.path()).unwrap()).err().unwrap().to_string();
        assert!(e.contains("holds 2 rows but its header declares 3"), "{e}");
    }
}
