//! `recite cache`: what the sufficient-statistics cache holds, and clearing it.

const USAGE: &str = "\
Examples:
  recite check transcripts/ --cache ~/.cache/recite      fill the cache, or answer from it
  recite cache show --cache ~/.cache/recite              entries per table, bytes, damage
  RECITE_CACHE=~/.cache/recite recite cache clear        remove every entry

The cache keeps, per set of base rows a claim was settled on (table, column, period, base,
weight, missing codes, cells), the sums the scan computed: a later check or verify answers claims
on those rows without scanning. It is off unless --cache DIR or RECITE_CACHE names a folder. An
entry is used only while the table's files (size, times, inode, Parquet footer or content) and
the declarations it was computed under are unchanged; a damaged entry is rebuilt. Jobs whose
declarations call now(), current_date, random() or another volatile function are never cached.

Trust: DIR/recite-sums-v4 must be yours and writable by you alone (recite creates it so); a
folder or entry that is a link, another user's or group/other-writable is refused with a
warning and its claims scanned. Anyone who can write the folder can forge an entry.

Limit: for a Parquet file the identity is its metadata and footer, not its content. A program
that changes data pages in place (a writer through a shared mmap, a tool that restores size and
times) without touching the footer is not noticed: pass --cache-verify content (every file is
then hashed whole before an entry answers, one more read of the table per run), or clear the
cache after such a write. CSV, Arrow and SPSS files are hashed whole. docs/cache.md.";

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, anyhow};

use recite::engine::{Engine, cache};

/// Where the cache is: `--cache DIR`, else $RECITE_CACHE; off when neither names a folder.
#[derive(Debug, Clone, clap::Args)]
pub struct CacheArgs {
    /// Keep the sums of each scan in DIR and answer later claims on the same rows from them
    /// (docs/cache.md). Off unless given. DIR/recite-sums-v4 must be yours and writable by you
    /// alone; what the cache trusts and what it cannot notice: `recite cache show --help`.
    #[arg(long, value_name = "DIR", env = "RECITE_CACHE")]
    pub cache: Option<PathBuf>,
    /// What proves a table's files unchanged before the cache answers: `identity` (size, times,
    /// inode, Parquet footer) or `content` (also every file hashed whole, once per run; notices
    /// writes through a shared mmap that keep all the rest). docs/cache.md.
    #[arg(long, value_enum, value_name = "HOW", default_value_t, env = "RECITE_CACHE_VERIFY")]
    pub cache_verify: super::choices::CacheVerifyArg,
}

impl CacheArgs {
    /// The cache folder, if one is named.
    pub fn dir(&self) -> Option<PathBuf> {
        self.cache.clone().filter(|d| !d.as_os_str().is_empty())
    }

    /// The engine `engine` names, with the cache when one is named.
    pub fn engine(&self, engine: &super::EngineArgs) -> Result<Engine> {
        // The cache is checked first: a bad folder fails before a cluster is asked.
        // An untrusted folder costs the run its cache, never a verdict: a warning, then scans.
        let cache = match self.dir().map(|d| cache::Cache::open(&d)) {
            None => None,
            Some(Ok(c)) => Some(c.verifying(self.cache_verify.into())),
            Some(Err(cache::OpenError::Untrusted(e))) => {
                super::warn(&format!("recite: warning: --cache: {e}"));
                None
            }
            Some(Err(e)) => return Err(anyhow!("--cache: {e}")),
        };
        let engine = engine.engine()?;
        Ok(match cache {
            Some(c) => engine.with_cache(c),
            None => engine,
        })
    }
}

/// Show or clear the sufficient-statistics cache.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Entries per table, their size, and any that fail their checksum.
    #[command(after_help = USAGE)]
    Show(CacheArgs),
    /// Remove every entry of the cache (only recite's own files in it).
    #[command(after_help = USAGE)]
    Clear(CacheArgs),
}

/// Runs `recite cache …`.
pub fn run(c: Command) -> Result<ExitCode> {
    let (Command::Show(a) | Command::Clear(a)) = &c;
    let dir = a.dir().ok_or_else(|| anyhow!("no cache folder: pass --cache DIR or set RECITE_CACHE"))?;
    let mut o = String::new();
    match c {
        Command::Show(_) => {
            let s = cache::show(&dir)?;
            say!(
                o,
                "{}: {} entries, {} bytes",
                s.folder.display(),
                s.tables.values().map(|t| t.0).sum::<usize>(),
                s.bytes
            );
            for (table, (entries, bytes)) in &s.tables {
                say!(o, "  {table}: {entries} entries, {bytes} bytes");
            }
            if s.corrupt > 0 {
                say!(o, "  {} damaged entries (rebuilt when next needed)", s.corrupt);
            }
            for why in &s.untrusted {
                say!(o, "  not trusted, never read: {why}");
            }
        }
        Command::Clear(_) => {
            let removed = cache::clear(&dir)?;
            say!(o, "removed {removed} entries from {}", dir.join(cache::FOLDER).display());
        }
    }
    super::write_output(None, &recite::objstore::redact(&o))?;
    Ok(ExitCode::SUCCESS)
}
