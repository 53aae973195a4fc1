//! What proves a table's files unchanged (their identity, docs/cache.md), and which jobs are
//! never cached (their declarations call a function not fixed by its arguments).

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use datafusion::prelude::SessionContext;
use tokio::runtime::Runtime;

use super::Verify;
use super::digest::Digest;
use crate::engine::Job;
use crate::engine::register::Tables;

pub(super) fn canonical(location: &Path) -> String {
    if crate::catalog::url_scheme(&location.to_string_lossy()).is_some() {
        // No secret is written into the cache: an http(s) query is never sent (the key's
        // identity says which object answered), and userinfo names no other object.
        return crate::objstore::redact(&location.to_string_lossy()).into_owned();
    }
    location.canonicalize().unwrap_or_else(|_| location.to_path_buf()).to_string_lossy().into_owned()
}

/// The identity of a table's files and of how they are read, as text: one line per file (path,
/// size, modification and change times, inode, fingerprint), then the declared CSV format. The
/// files are those the location names ([`files_of`]) and those DataFusion's listing of it
/// reads (`listed`, canonical paths), which a glob's own matches need not include (a Spark
/// `x.parquet/` folder, hive `part=2/` folders). `None` when a file cannot be listed or read,
/// or there is none: nothing is cached for that table.
fn identity(
    location: &Path,
    csv: Option<&crate::catalog::CsvFormat>,
    listed: Vec<PathBuf>,
    verify: Verify,
) -> Option<String> {
    // Canonical paths: `--data d` and `--data /abs/d` name the same files.
    let location = location.canonicalize().unwrap_or_else(|_| location.to_path_buf());
    let mut files = files_of(&location)?;
    files.extend(listed);
    files.sort();
    files.dedup();
    if files.is_empty() {
        return None;
    }
    let mut out = String::new();
    for f in &files {
        let meta = std::fs::metadata(f).ok()?;
        let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
        #[cfg(unix)]
        let changed =
            format!("{}.{:09} ino {} dev {}", meta.ctime(), meta.ctime_nsec(), meta.ino(), meta.dev());
        #[cfg(not(unix))]
        let changed = String::new();
        let print = fingerprint(f, meta.len(), verify)?;
        out.push_str(&format!(
            "{}\tsize {}\tmodified {modified}\tchanged {changed}\t{print}\n",
            f.display(),
            meta.len()
        ));
    }
    if let Some(c) = csv {
        out.push_str(&format!("csv {c:?}\n"));
    }
    Some(out)
}

/// The files a table location names: a file, every file under a folder, or a glob's matches.
fn files_of(location: &Path) -> Option<Vec<PathBuf>> {
    let text = location.to_string_lossy();
    if text.contains(['*', '?', '[']) {
        return Some(glob::glob(&text).ok()?.filter_map(Result::ok).filter(|p| p.is_file()).collect());
    }
    if location.is_dir() {
        let mut found = Vec::new();
        let mut stack = vec![location.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).ok()? {
                let p = e.ok()?.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    found.push(p);
                }
            }
        }
        return Some(found);
    }
    location.is_file().then(|| vec![location.to_path_buf()])
}

/// A Parquet file's footer digest (its schema, row groups, sizes and statistics: reading it
/// costs a few kilobytes), or the digest of a whole other file; of every file whole under
/// [`Verify::Content`].
fn fingerprint(path: &Path, size: u64, verify: Verify) -> Option<String> {
    let mut f = std::fs::File::open(path).ok()?;
    let parquet =
        verify == Verify::Identity && path.extension().is_some_and(|e| e.eq_ignore_ascii_case("parquet"));
    if parquet && size >= 12 {
        let mut tail = [0u8; 8];
        f.seek(SeekFrom::End(-8)).ok()?;
        f.read_exact(&mut tail).ok()?;
        let len = u64::from(u32::from_le_bytes(tail[..4].try_into().expect("4 bytes")));
        if &tail[4..] == b"PAR1" && len + 8 <= size {
            let mut footer = vec![0u8; len as usize + 8];
            f.seek(SeekFrom::End(-(len as i64) - 8)).ok()?;
            f.read_exact(&mut footer).ok()?;
            return Some(format!("footer {}", Digest::of(&footer).hex()));
        }
        f.seek(SeekFrom::Start(0)).ok()?;
    }
    // Whole chunks (a short read must not change the digest), the last one shorter.
    let mut d = Digest::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let mut n = 0;
        while n < buf.len() {
            match f.read(&mut buf[n..]).ok()? {
                0 => break,
                k => n += k,
            }
        }
        d.bytes(&buf[..n]);
        if n < buf.len() {
            break;
        }
    }
    Some(format!("content {}", d.hex()))
}

/// Tells the identity of a table as an engine reads it: its files listed as its scans list
/// them (on its runtime, with its session's settings), its objects on object storage, and the
/// CSV format its catalog declared.
pub(in crate::engine) struct Identifier<'e> {
    rt: &'e Runtime,
    ctx: &'e SessionContext,
    tables: &'e Tables,
}

impl<'e> Identifier<'e> {
    /// The identities of the tables an engine reads on `rt` in `ctx`, registered in `tables`.
    pub(in crate::engine) fn new(
        rt: &'e Runtime,
        ctx: &'e SessionContext,
        tables: &'e Tables,
    ) -> Identifier<'e> {
        Identifier { rt, ctx, tables }
    }

    /// The session the engine reads in (its functions tell which declarations are volatile).
    pub(super) fn session(&self) -> &SessionContext {
        self.ctx
    }

    /// [`Identifier::identity`] of a table with the CSV format the catalog declared for it.
    pub(in crate::engine) fn declared_identity(&self, location: &Path, verify: Verify) -> Option<String> {
        self.identity(location, self.tables.declared_csv(location).as_ref(), verify)
    }

    /// The identity of a table's files ([`identity`]), or of its objects when it is on object
    /// storage ([`Identifier::object_identity`]).
    fn identity(
        &self,
        location: &Path,
        csv: Option<&crate::catalog::CsvFormat>,
        verify: Verify,
    ) -> Option<String> {
        if let Some((root, version)) = crate::delta::of_location(location) {
            // A version of a Delta table: its commit files and the data files it reads; the
            // latest (a bare folder, whose version moves) is never cached.
            return identity(location, None, self.delta_files(&root, version?)?, verify);
        }
        if crate::postgres::is_location(&location.to_string_lossy()) {
            // A PostgreSQL table keeps no versions and no identity proves it unchanged: its
            // scans are never cached.
            return None;
        }
        if crate::catalog::url_scheme(&location.to_string_lossy()).is_none() {
            return identity(location, csv, self.listed(location)?, verify);
        }
        let mut out = self.object_identity(location)?;
        if let Some(c) = csv {
            out.push_str(&format!("csv {c:?}\n"));
        }
        Some(out)
    }

    /// The files version `version` of the Delta table at `root` is made of (canonical paths).
    #[cfg(feature = "delta")]
    fn delta_files(&self, root: &Path, version: u64) -> Option<Vec<PathBuf>> {
        let files = self.rt.block_on(crate::delta::files(root, version))?;
        files.iter().map(|f| f.canonicalize().ok()).collect()
    }

    /// Without the `delta` feature no Delta table is read, so none is cached.
    #[cfg(not(feature = "delta"))]
    fn delta_files(&self, _root: &Path, _version: u64) -> Option<Vec<PathBuf>> {
        None
    }

    /// The files DataFusion reads for a table on disk that names a folder or a glob, listed as
    /// its listing table lists them (the local store's recursive walk, then its file extension
    /// and `ListingTableUrl::contains`, with this session's `ignore_subdirectory`), as
    /// canonical paths; empty for one file. `None` when the listing fails.
    fn listed(&self, location: &Path) -> Option<Vec<PathBuf>> {
        use datafusion::datasource::listing::ListingTableUrl;
        use datafusion::object_store::ObjectStore;
        use datafusion::object_store::local::LocalFileSystem;
        use futures::TryStreamExt;
        let text = location.to_string_lossy();
        let glob = text.contains(['*', '?', '[']);
        if !glob && !location.is_dir() {
            return Some(Vec::new());
        }
        // The extension the engine lists the table's files by.
        let ext = crate::engine::listing_extension(&text);
        let text = if glob || text.ends_with('/') { text.to_string() } else { format!("{text}/") };
        let url = ListingTableUrl::parse(&text).ok()?;
        if !url.is_collection() {
            return Some(Vec::new());
        }
        let ignore = self.ctx.state().config_options().execution.listing_table_ignore_subdirectory;
        let store = LocalFileSystem::new();
        let found: Vec<datafusion::object_store::ObjectMeta> =
            self.rt.block_on(store.list(Some(url.prefix())).try_collect()).ok()?;
        found
            .iter()
            .filter(|m| m.location.as_ref().ends_with(ext) && url.contains(&m.location, ignore))
            .map(|m| store.path_to_filesystem(&m.location).ok()?.canonicalize().ok())
            .collect()
    }

    /// The identity of a table on object storage, for the cache (docs/cache.md): per object,
    /// its URL, size, ETag, version and last-modified time, listed from the store. `None`
    /// (nothing cached) when the store cannot be listed, nothing matches, or an object has no
    /// ETag: an entry recite cannot identify is never trusted.
    #[cfg(feature = "object-store")]
    fn object_identity(&self, location: &Path) -> Option<String> {
        let text = location.to_string_lossy();
        let text = crate::objstore::without_query(&text);
        let url = crate::objstore::listing_url(&text).ok()?;
        let runtime = self.ctx.runtime_env();
        crate::objstore::register_stores(&runtime, url.get_url()).ok()?;
        let ignore = self.ctx.state().config_options().execution.listing_table_ignore_subdirectory;
        let objects = self
            .rt
            .block_on(crate::objstore::objects(
                &runtime,
                &url,
                crate::engine::listing_extension(&text),
                ignore,
            ))
            .ok()?;
        if objects.is_empty() {
            return None;
        }
        let store = url.object_store();
        let mut out = String::new();
        for m in &objects {
            let etag = m.e_tag.as_deref()?;
            out.push_str(&format!(
                "{}/{}\tsize {}\tetag {etag}\tversion {}\tmodified {}\n",
                crate::objstore::redact(store.as_str()).trim_end_matches('/'),
                m.location,
                m.size,
                m.version.as_deref().unwrap_or("-"),
                m.last_modified.timestamp_nanos_opt().unwrap_or(i64::MIN),
            ));
        }
        Some(out)
    }

    /// Without the feature no table on object storage is read, so none is identified.
    #[cfg(not(feature = "object-store"))]
    fn object_identity(&self, _location: &Path) -> Option<String> {
        None
    }
}

/// A file's stamp for [`FileDigests`]: size, modification and change times, inode and device,
/// and what the digest covers; its digest is taken again when any moved (a server's engine
/// lives long).
type Stamp = (u64, u128, i64, i64, u64, u64, Verify);

/// The digests [`Identifier::file_digests`] took, by canonical file path, so that a batch's
/// claims on one table read its footer once.
#[derive(Default)]
pub(in crate::engine) struct FileDigests(Mutex<HashMap<PathBuf, (Stamp, recite_core::version::FileDigest)>>);

impl Identifier<'_> {
    /// The files a scan of the table at `location` (plain files on disk) reads, each by its name
    /// relative to `root` (the study's folder; `../…` for a file outside it that study.toml
    /// names relative to it, the absolute path where it names it so), size and the cache's fingerprint of it (a
    /// Parquet footer, or the whole content: [`fingerprint`]), sorted by name. Empty for a
    /// table on object storage, a server or a Delta table, and when a file cannot be read (the
    /// scan says why). Taken once per file while its size, times and inode stay (`known`).
    pub(in crate::engine) fn file_digests(
        &self,
        location: &Path,
        root: &Path,
        verify: Verify,
        known: &FileDigests,
    ) -> Vec<recite_core::version::FileDigest> {
        use recite_core::version::{DigestOf, FileDigest};
        let text = location.to_string_lossy();
        if crate::catalog::url_scheme(&text).is_some()
            || crate::postgres::is_location(&text)
            || crate::delta::of_location(location).is_some()
        {
            return Vec::new();
        }
        // A location study.toml wrote relative to its folder (`../x.sav` too) names its files
        // relative to it; one written absolute (as `catalog init` writes a file outside the
        // output folder) keeps its absolute names: each file named as the catalog names it.
        let written_relative = location.starts_with(root);
        let location = location.canonicalize().unwrap_or_else(|_| location.to_path_buf());
        let Some(mut files) = files_of(&location) else { return Vec::new() };
        files.extend(self.listed(&location).unwrap_or_default());
        files.sort();
        files.dedup();
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let mut out = Vec::with_capacity(files.len());
        for f in files {
            let Ok(meta) = std::fs::metadata(&f) else { return Vec::new() };
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            let stamp: Stamp =
                (meta.len(), modified, meta.ctime(), meta.ctime_nsec(), meta.ino(), meta.dev(), verify);
            // Named per call: two studies may read one file from different folders.
            let name = match f.strip_prefix(&root) {
                Ok(inside) => inside.to_path_buf(),
                Err(_) if written_relative => pathdiff::diff_paths(&f, &root).unwrap_or_else(|| f.clone()),
                Err(_) => f.clone(),
            };
            let name = name.display().to_string();
            let was = known.0.lock().ok().and_then(|m| m.get(&f).cloned());
            if let Some((was, digest)) = was
                && was == stamp
            {
                out.push(FileDigest { name, ..digest });
                continue;
            }
            let Some(print) = fingerprint(&f, meta.len(), verify) else { return Vec::new() };
            let (of, digest) = match print.split_once(' ') {
                Some(("footer", hex)) => (DigestOf::Footer, hex.to_string()),
                Some((_, hex)) => (DigestOf::Content, hex.to_string()),
                None => (DigestOf::Content, print.clone()),
            };
            let digest = FileDigest { name, bytes: meta.len(), of, digest };
            if let Ok(mut m) = known.0.lock() {
                m.insert(f, (stamp, digest.clone()));
            }
            out.push(digest);
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

/// The first function a job's declarations (period, base and cells' filters) call whose
/// result is not fixed by its arguments (`now()`, `current_date`, `random()`: any
/// DataFusion function not `Immutable`), or that is unknown; `None` when there is none.
/// Such a job's rows change with the clock or by chance, so they are never cached.
pub(super) fn volatile_call(
    job: &Job,
    funcs: &HashMap<String, Arc<datafusion::logical_expr::ScalarUDF>>,
) -> Option<String> {
    let r = &job.rows;
    let filters = r.period_filter.iter().chain(&r.base_filter).map(String::as_str);
    filters.chain(job.cells.iter().map(|(_, _, f)| f.as_str())).find_map(|sql| volatile_in(sql, funcs))
}

/// The first call in `sql` of a function that is not `Immutable` in `funcs` (or unknown, or a
/// niladic SQL function such as `CURRENT_DATE`); `None` when every call is to a fixed function.
fn volatile_in(
    sql: &str,
    funcs: &HashMap<String, Arc<datafusion::logical_expr::ScalarUDF>>,
) -> Option<String> {
    use datafusion::logical_expr::Volatility;
    use sqlparser::dialect::GenericDialect;
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, Tokenizer};
    /// SQL's functions written without parentheses, all of them of the moment or the session.
    const NILADIC: [&str; 10] = [
        "current_date",
        "current_time",
        "current_timestamp",
        "localtime",
        "localtimestamp",
        "current_user",
        "session_user",
        "current_role",
        "current_catalog",
        "current_schema",
    ];
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, sql).tokenize() else {
        return Some("(a filter that does not tokenize)".into());
    };
    let tokens: Vec<&Token> = tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_))).collect();
    for (i, t) in tokens.iter().enumerate() {
        let Token::Word(w) = t else { continue };
        let called = matches!(tokens.get(i + 1), Some(Token::LParen));
        // After a `.` a word is a field or a qualified name's part, not a function of its own.
        let qualified = i > 0 && matches!(tokens[i - 1], Token::Period);
        let name = if w.quote_style.is_some() { w.value.clone() } else { w.value.to_lowercase() };
        if w.quote_style.is_none() && !qualified && NILADIC.contains(&name.as_str()) {
            return Some(name);
        }
        match funcs.get(&name) {
            Some(f)
                if f.signature().volatility != Volatility::Immutable
                    && (called || w.quote_style.is_none()) =>
            {
                return Some(format!("{name}()"));
            }
            Some(_) => {}
            // Not a function recite knows: a keyword (`IN (`, `CAST(`), or doubt.
            None if called && (w.quote_style.is_some() || w.keyword == Keyword::NoKeyword) => {
                return Some(format!("{name}()"));
            }
            None => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_calling_volatile_functions_are_told_from_fixed_ones() {
        let ctx = datafusion::prelude::SessionContext::new();
        let state = ctx.state();
        let funcs = state.scalar_functions();
        for fixed in [
            "wave = 6",
            "wave IN (5, 6) AND age BETWEEN 18 AND 74",
            "CAST(age AS INT) > 3 OR abs(age) < 2",
            "coalesce(\"s14r5\", 0) >= 1 AND name LIKE 'a%' AND NOT (x IS NULL)",
            "EXTRACT(year FROM ts) = 2026 AND ts > TIMESTAMP '2026-01-01'",
        ] {
            assert_eq!(volatile_in(fixed, funcs), None, "{fixed}");
        }
        for (volatile, call) in [
            ("ts > now() - INTERVAL '30 days'", "now()"),
            ("ts::date = CURRENT_DATE", "current_date"),
            ("random() < 0.5", "random()"),
            ("NOW () IS NOT NULL", "now()"),
            ("my_own_udf(x) = 1", "my_own_udf()"),
        ] {
            assert_eq!(volatile_in(volatile, funcs).as_deref(), Some(call), "{volatile}");
        }
    }
}
