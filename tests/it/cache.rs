//! The sufficient-statistics cache (`--cache DIR`, docs/cache.md): a warm cache answers claims
//! on cached rows without a scan (read from the JSON report's scan stats, never from timing);
//! reports are the same with and without it in every format; a changed file, filter or missing
//! code, and a damaged entry, are noticed and rescanned, never trusted.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::{code, command, recite, report, root, run_bounded, stderr, stdout};

/// `recite ARGS --cache DIR`.
fn cached(args: &[&str], dir: &Path) -> Output {
    let dir = dir.to_str().expect("a UTF-8 temporary folder");
    recite(&[args, &["--cache", dir]].concat())
}

/// A report without the line (or JSON object) that counts what was scanned, which says what the
/// cache saved and so differs by design.
fn without_stats(format: &str, text: &str) -> String {
    match format {
        "json" => {
            let mut v: Value = serde_json::from_str(text).expect("a JSON report");
            v.as_object_mut().expect("an object").remove("stats").expect("scan stats");
            serde_json::to_string_pretty(&v).unwrap()
        }
        "html" => {
            let start = text.find("<span class=\"stats\">").expect("the stats span");
            let end = start + text[start..].find("</span>").expect("its end");
            format!("{}{}", &text[..start], &text[end..])
        }
        _ => text
            .lines()
            .map(|l| match l.find("Scanned ") {
                Some(i) => &l[..i],
                None => l,
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

fn stats(out: &Output) -> Value {
    report(out)["stats"].clone()
}

/// The plans of a run's stats, as (table, plan, reason).
fn plans(out: &Output) -> Vec<(String, String, String)> {
    let s = stats(out);
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    s["plans"]
        .as_array()
        .map(|a| a.iter().map(|p| (text(&p["table"]), text(&p["plan"]), text(&p["reason"]))).collect())
        .unwrap_or_default()
}

/// What a run's cache plans say, summed over tables: (jobs answered, entries used, stale
/// entries, corrupt entries); what follows them (untrusted entries, jobs never cached) aside.
fn cache_counts(out: &Output) -> [usize; 4] {
    let mut sum = [0; 4];
    for (_, plan, why) in plans(out) {
        if plan != "cache" {
            continue;
        }
        let numbers: Vec<usize> = why.split([' ', ';']).filter_map(|w| w.parse().ok()).take(4).collect();
        assert_eq!(numbers.len(), 4, "{why}");
        for (s, n) in sum.iter_mut().zip(numbers) {
            *s += n;
        }
    }
    sum
}

/// A copy of the bundled Versant study in a temporary data layer, and claims over it.
struct Layer {
    dir: tempfile::TempDir,
}

impl Layer {
    fn new() -> Layer {
        let dir = tempfile::tempdir().unwrap();
        let study = dir.path().join("data/versant");
        std::fs::create_dir_all(&study).unwrap();
        for f in ["study.toml", "versant_flat.parquet"] {
            std::fs::copy(root().join("datasets/versant").join(f), study.join(f)).unwrap();
        }
        let layer = Layer { dir };
        let made = recite(&[
            "generate",
            "claims",
            "--data",
            layer.data().to_str().unwrap(),
            "--count",
            "120",
            "--seed",
            "5",
            "-o",
            layer.claims().to_str().unwrap(),
        ]);
        assert_eq!(code(&made), 0, "{}", stderr(&made));
        layer
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn claims(&self) -> PathBuf {
        self.dir.path().join("claims.jsonl")
    }

    fn parquet(&self) -> PathBuf {
        self.data().join("versant/versant_flat.parquet")
    }

    fn toml(&self) -> PathBuf {
        self.data().join("versant/study.toml")
    }

    fn cache(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    /// `recite check` of the claims as JSON, with the cache or without.
    fn check(&self, with_cache: bool) -> Output {
        self.check_with(with_cache, &[])
    }

    /// [`Layer::check`] with more arguments.
    fn check_with(&self, with_cache: bool, more: &[&str]) -> Output {
        let (claims, data) = (self.claims(), self.data());
        let args = ["check", claims.to_str().unwrap(), "--data", data.to_str().unwrap(), "--format", "json"];
        let args = [&args[..], more].concat();
        if with_cache { cached(&args, &self.cache()) } else { recite(&args) }
    }

    /// The entry files of the cache.
    fn entries(&self) -> Vec<PathBuf> {
        let folder = self.cache().join(recite::engine::cache::FOLDER);
        let mut v: Vec<PathBuf> = std::fs::read_dir(folder)
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        v.retain(|p| p.extension().is_some_and(|e| e == "arrow"));
        v.sort();
        v
    }
}

/// The same run's report with and without the cache, stats aside.
fn assert_same(a: &Output, b: &Output) {
    assert_eq!(code(a), code(b), "{}\n{}", stderr(a), stderr(b));
    assert_eq!(without_stats("json", &stdout(a)), without_stats("json", &stdout(b)));
}

#[test]
fn a_warm_cache_settles_every_claim_without_a_scan() {
    let layer = Layer::new();
    let fresh = layer.check(false);
    let cold = layer.check(true);
    let warm = layer.check(true);
    assert!(stats(&cold)["scans"].as_u64().unwrap() >= 1);
    assert!(!layer.entries().is_empty(), "the cold run wrote entries");
    let s = stats(&warm);
    assert_eq!((s["scans"].as_u64(), s["rows_scanned"].as_u64()), (Some(0), Some(0)), "{s}");
    assert_eq!(s["tables_scanned"].as_u64(), Some(0));
    assert_eq!(s["explanation_scans"].as_u64(), Some(0), "explanations come from the cache too");
    let p = plans(&warm);
    assert!(!p.is_empty() && p.iter().all(|(t, plan, _)| t == "versant_flat" && plan == "cache"), "{p:?}");
    let [hits, used, stale, corrupt] = cache_counts(&warm);
    assert!(hits > 0 && used > 0 && used <= hits, "{p:?}");
    assert_eq!((stale, corrupt), (0, 0), "{p:?}");
    assert!(plans(&cold).iter().all(|(_, plan, _)| plan != "cache"), "a cold cache answers nothing");
    assert_same(&fresh, &cold);
    assert_same(&fresh, &warm);
}

#[test]
fn new_claims_on_cached_rows_hit_and_other_columns_scan_only_themselves() {
    let layer = Layer::new();
    // Fill the cache with one brand's funnel only.
    let one = layer.dir.path().join("one.jsonl");
    let lines = std::fs::read_to_string(layer.claims()).unwrap();
    let column = |l: &str| {
        let v: Value = serde_json::from_str(l).unwrap();
        v["citation"]["source"]["column"].as_str().unwrap().to_string()
    };
    let first = column(lines.lines().next().unwrap());
    let same: Vec<&str> = lines.lines().filter(|l| column(l) == first).collect();
    std::fs::write(&one, same.join("\n")).unwrap();
    let data = layer.data();
    let args = |f: &Path| {
        ["check", f.to_str().unwrap(), "--data", data.to_str().unwrap(), "--format", "json", "--no-explain"]
            .map(String::from)
    };
    let a1 = args(&one);
    let a1: Vec<&str> = a1.iter().map(String::as_str).collect();
    let filled = cached(&a1, &layer.cache());
    assert_eq!(stats(&filled)["scans"].as_u64(), Some(1));
    // Then every claim: those on the cached column and rows hit, the rest are one scan.
    let all = layer.claims();
    let a2 = args(&all);
    let a2: Vec<&str> = a2.iter().map(String::as_str).collect();
    let mixed = cached(&a2, &layer.cache());
    let fresh = recite(&a2);
    assert_same(&fresh, &mixed);
    let p = plans(&mixed);
    assert!(cache_counts(&mixed)[0] >= same.len(), "every claim on {first} hits: {p:?}");
    assert_eq!(stats(&mixed)["scans"].as_u64(), Some(1), "the rest in one scan: {p:?}");
    assert!(stats(&mixed)["rows_scanned"].as_u64().unwrap() > 0);
}

#[test]
fn reports_are_byte_identical_with_and_without_the_cache_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let mut runs: Vec<(Vec<String>, &str)> = Vec::new();
    let owned = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    for format in ["json", "text", "markdown", "html", "junit"] {
        runs.push((owned(&["check", "examples/transcripts", "--format", format]), format));
    }
    for c in ["versant-w6-considered", "versant-w6-discrepant", "nhanes2-zinc"] {
        for format in ["json", "text"] {
            let file = format!("examples/citations/{c}.json");
            runs.push((owned(&["verify", &file, "--format", format]), format));
        }
    }
    // Twice through: the first fills the cache, the second reads it.
    for round in 0..2 {
        for (args, format) in &runs {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let args = args.as_slice();
            let fresh = recite(args);
            let with = cached(args, dir.path());
            assert_eq!(code(&fresh), code(&with), "{args:?}: {}", stderr(&with));
            if *format == "junit" {
                assert_eq!(stdout(&fresh), stdout(&with), "{args:?}, round {round}");
            } else {
                assert_eq!(
                    without_stats(format, &stdout(&fresh)),
                    without_stats(format, &stdout(&with)),
                    "{args:?}, round {round}"
                );
            }
        }
    }
}

#[test]
fn a_touched_or_rewritten_file_invalidates_its_entries() {
    let layer = Layer::new();
    let old = layer.check(false);
    layer.check(true);
    assert_eq!(stats(&layer.check(true))["scans"].as_u64(), Some(0));
    // Touched: same bytes, a new modification time.
    let f = std::fs::File::options().append(true).open(layer.parquet()).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5)).unwrap();
    drop(f);
    let touched = layer.check(true);
    assert!(stats(&touched)["scans"].as_u64().unwrap() >= 1, "a touched file is rescanned");
    assert!(cache_counts(&touched)[2] > 0, "{:?}", plans(&touched));
    assert_same(&layer.check(false), &touched);
    assert_eq!(stats(&layer.check(true))["scans"].as_u64(), Some(0), "and cached again");
    // Rewritten with other data, its modification time put back: the file's change time,
    // inode and footer still tell.
    let before = std::fs::metadata(layer.parquet()).unwrap().modified().unwrap();
    let other = layer.dir.path().join("other");
    let made =
        recite(&["generate", "versant", "--rows", "20000", "--seed", "99", "--out", other.to_str().unwrap()]);
    assert_eq!(code(&made), 0, "{}", stderr(&made));
    std::fs::copy(other.join("versant_flat.parquet"), layer.parquet()).unwrap();
    std::fs::File::options().append(true).open(layer.parquet()).unwrap().set_modified(before).unwrap();
    let rewritten = layer.check(true);
    assert!(stats(&rewritten)["scans"].as_u64().unwrap() >= 1, "a rewritten file is rescanned");
    let fresh = layer.check(false);
    assert_same(&fresh, &rewritten);
    assert_ne!(
        without_stats("json", &stdout(&fresh)),
        without_stats("json", &stdout(&old)),
        "the new data changes the report, so the cache had something to get wrong"
    );
}

#[test]
fn a_changed_filter_or_missing_code_rescans_what_depends_on_it() {
    let layer = Layer::new();
    layer.check(true);
    assert_eq!(stats(&layer.check(true))["scans"].as_u64(), Some(0));
    let toml = std::fs::read_to_string(layer.toml()).unwrap();
    for (from, to) in [
        // A period's filter: W6 now also takes W5's rows.
        ("filter = \"wave = 6\"", "filter = \"wave IN (5, 6)\""),
        // The bases' age range.
        ("age BETWEEN 18 AND 74", "age BETWEEN 25 AND 74"),
        // A missing code: 5 no longer counts as an answer.
        ("missing = [9]", "missing = [5, 9]"),
    ] {
        assert!(toml.contains(from), "{from}");
        std::fs::write(layer.toml(), toml.replace(from, to)).unwrap();
        let changed = layer.check(true);
        assert!(stats(&changed)["scans"].as_u64().unwrap() >= 1, "{to}: rescanned");
        assert_same(&layer.check(false), &changed);
        std::fs::write(layer.toml(), &toml).unwrap();
        assert_eq!(stats(&layer.check(true))["scans"].as_u64(), Some(0), "{to}: the old entries still hit");
    }
}

#[test]
fn a_damaged_entry_is_detected_and_rebuilt() {
    let layer = Layer::new();
    // Without explanations: every entry is then one the reported run reads.
    let check = |with_cache| layer.check_with(with_cache, &["--no-explain"]);
    let fresh = check(false);
    check(true);
    let entries = layer.entries();
    assert!(entries.len() >= 2);
    // One cut short, one with a value changed in place, one replaced by garbage.
    let bytes = std::fs::read(&entries[0]).unwrap();
    std::fs::write(&entries[0], &bytes[..bytes.len() * 2 / 3]).unwrap();
    let mut b = std::fs::read(&entries[1]).unwrap();
    let at = b.len() / 2;
    b[at] ^= 0x40;
    std::fs::write(&entries[1], &b).unwrap();
    std::fs::write(entries.last().unwrap(), b"not an arrow file").unwrap();
    let show = cached(&["cache", "show"], &layer.cache());
    assert_eq!(code(&show), 0, "{}", stderr(&show));
    assert!(stdout(&show).contains("damaged"), "{}", stdout(&show));
    let healed = check(true);
    assert!(stats(&healed)["scans"].as_u64().unwrap() >= 1, "damaged entries are rescanned");
    assert!(cache_counts(&healed)[3] >= 2, "{:?}", plans(&healed));
    assert_same(&fresh, &healed);
    assert_eq!(stats(&check(true))["scans"].as_u64(), Some(0), "rebuilt");
    assert!(!stdout(&cached(&["cache", "show"], &layer.cache())).contains("damaged"));
}

#[test]
fn cache_show_and_clear_touch_only_the_cache_folder() {
    let layer = Layer::new();
    layer.check(true);
    let keep = layer.cache().join("mine.txt");
    std::fs::write(&keep, "not recite's").unwrap();
    let show = stdout(&cached(&["cache", "show"], &layer.cache()));
    assert!(show.contains("versant_flat.parquet"), "{show}");
    let n = layer.entries().len();
    let cleared = cached(&["cache", "clear"], &layer.cache());
    assert_eq!(code(&cleared), 0, "{}", stderr(&cleared));
    assert!(stdout(&cleared).contains(&format!("removed {n} entries")), "{}", stdout(&cleared));
    assert!(layer.entries().is_empty());
    assert!(keep.exists(), "clear removes recite's entries only");
    assert!(stdout(&cached(&["cache", "show"], &layer.cache())).contains("0 entries"));
    let none = recite(&["cache", "show"]);
    assert_eq!(code(&none), 2);
    assert!(stderr(&none).contains("--cache DIR"), "{}", stderr(&none));
}

// The cache can only ever cost a scan, never a verdict (issue 23): each class of the hostile
// pass has its test.

/// A copy of the Versant data generated with `seed`: other numbers, the same columns.
fn other_versant(dir: &Path, seed: &str) -> PathBuf {
    let out = dir.join(format!("other-{seed}"));
    let made =
        recite(&["generate", "versant", "--rows", "20000", "--seed", seed, "--out", out.to_str().unwrap()]);
    assert_eq!(code(&made), 0, "{}", stderr(&made));
    out.join("versant_flat.parquet")
}

#[test]
fn a_glob_table_is_identified_by_every_file_datafusion_reads_under_it() {
    let layer = Layer::new();
    // `parts/*.parquet` holds a plain file, a Spark-style `x.parquet/` folder and a hive
    // `part=3/` folder: DataFusion reads all three, the glob itself matches only the first.
    let parts = layer.data().join("versant/parts");
    for sub in ["", "b.parquet", "part=3"] {
        std::fs::create_dir_all(parts.join(sub)).unwrap();
    }
    let spark = parts.join("b.parquet/part-00000.parquet");
    let hive = parts.join("part=3/c.parquet");
    for f in [parts.join("a.parquet"), spark.clone(), hive.clone()] {
        std::fs::copy(layer.parquet(), f).unwrap();
    }
    let toml = std::fs::read_to_string(layer.toml()).unwrap();
    assert!(toml.contains("path = \"versant_flat.parquet\""), "{toml}");
    std::fs::write(
        layer.toml(),
        toml.replace("path = \"versant_flat.parquet\"", "path = \"parts/*.parquet\""),
    )
    .unwrap();
    let first = layer.check(false);
    layer.check(true);
    assert_eq!(stats(&layer.check(true))["scans"].as_u64(), Some(0), "cached");
    let mut last = first;
    for (file, seed) in [(&spark, "91"), (&hive, "92")] {
        std::fs::copy(other_versant(layer.dir.path(), seed), file).unwrap();
        let fresh = layer.check(false);
        assert_ne!(
            without_stats("json", &stdout(&fresh)),
            without_stats("json", &stdout(&last)),
            "{}: the new data changes the report, so a stale entry would show",
            file.display()
        );
        let cached = layer.check(true);
        assert!(stats(&cached)["scans"].as_u64().unwrap() >= 1, "{}: rescanned", file.display());
        assert_same(&fresh, &cached);
        last = fresh;
    }
}

#[test]
fn an_entry_or_folder_another_user_could_have_written_is_refused_with_a_warning() {
    use std::os::unix::fs::PermissionsExt;
    let layer = Layer::new();
    let check = |with_cache| layer.check_with(with_cache, &["--no-explain"]);
    let fresh = check(false);
    check(true);
    assert_eq!(stats(&check(true))["scans"].as_u64(), Some(0));
    let entries = layer.entries();
    // An entry other users may write (its checksum is public: anyone could forge one).
    let mode = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    mode(&entries[0], 0o666);
    let show = stdout(&cached(&["cache", "show"], &layer.cache()));
    assert!(show.contains("not trusted"), "{show}");
    let out = check(true);
    assert!(stats(&out)["scans"].as_u64().unwrap() >= 1, "the entry is not used");
    assert!(stderr(&out).contains("warning") && stderr(&out).contains("go-w"), "{}", stderr(&out));
    assert!(plans(&out).iter().any(|(_, _, why)| why.contains("untrusted")), "{:?}", plans(&out));
    assert_same(&fresh, &out);
    // One owned by another user (only root can make one).
    if std::os::unix::fs::chown(&layer.entries()[0], Some(54_321), None).is_ok() {
        let out = check(true);
        assert!(stats(&out)["scans"].as_u64().unwrap() >= 1);
        assert!(stderr(&out).contains("54321"), "{}", stderr(&out));
        assert_same(&fresh, &out);
    }
    // A folder its group may write: not used at all, and the run is still right.
    let folder = layer.cache().join(recite::engine::cache::FOLDER);
    mode(&folder, 0o770);
    let out = check(true);
    assert_eq!(code(&out), code(&fresh), "{}", stderr(&out));
    assert!(stderr(&out).contains("not used") && stderr(&out).contains("go-w"), "{}", stderr(&out));
    assert!(stats(&out)["scans"].as_u64().unwrap() >= 1);
    assert_same(&fresh, &out);
    // A folder that is a link to another: not followed.
    mode(&folder, 0o700);
    let elsewhere = layer.dir.path().join("elsewhere");
    std::fs::rename(&folder, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &folder).unwrap();
    let out = check(true);
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    assert!(stats(&out)["scans"].as_u64().unwrap() >= 1);
    assert_same(&fresh, &out);
}

#[test]
fn a_period_declared_with_now_is_never_cached() {
    let layer = Layer::new();
    let toml = std::fs::read_to_string(layer.toml()).unwrap();
    let w6 = "filter = \"wave = 6\"";
    assert!(toml.contains(w6), "{toml}");
    // The same rows today; a period of "the last 30 days" would be other rows tomorrow.
    let volatile = "filter = \"wave = 6 AND now() IS NOT NULL\"";
    std::fs::write(layer.toml(), toml.replace(w6, volatile)).unwrap();
    let fresh = layer.check(false);
    layer.check(true);
    let warm = layer.check(true);
    assert!(stats(&warm)["scans"].as_u64().unwrap() >= 1, "W6's claims are scanned again");
    let p = plans(&warm);
    assert!(
        p.iter()
            .any(|(_, plan, why)| plan == "cache" && why.contains("never cached") && why.contains("now()")),
        "{p:?}"
    );
    assert_same(&fresh, &warm);
    // Every other period still answers from the cache.
    assert!(cache_counts(&warm)[0] > 0, "{p:?}");
}

#[test]
fn a_fifo_or_device_named_like_an_entry_neither_blocks_nor_exhausts_memory() {
    let layer = Layer::new();
    let check = |with_cache| layer.check_with(with_cache, &["--no-explain"]);
    let fresh = check(false);
    check(true);
    let entries = layer.entries();
    assert!(entries.len() >= 2);
    // A FIFO where an entry was (no writer: reading it would block for ever), and a link to
    // /dev/zero (reading it would never end).
    std::fs::remove_file(&entries[0]).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&entries[0]).status().unwrap();
    assert!(made.success());
    std::fs::remove_file(&entries[1]).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &entries[1]).unwrap();
    let cache = layer.cache();
    let (claims, data) = (layer.claims(), layer.data());
    let args = [
        "check",
        claims.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
        "--format",
        "json",
        "--no-explain",
        "--cache",
        cache.to_str().unwrap(),
    ];
    let show = run_bounded(command(&["cache", "show", "--cache", cache.to_str().unwrap()]), 60);
    assert_eq!(code(&show), 0, "{}", stderr(&show));
    assert!(stdout(&show).contains("not trusted"), "{}", stdout(&show));
    let out = run_bounded(command(&args), 120);
    assert!(stats(&out)["scans"].as_u64().unwrap() >= 1, "their rows are scanned");
    assert_same(&fresh, &out);
    assert!(
        stderr(&out).contains("not a regular file") || stderr(&out).contains("symbolic link"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stats(&run_bounded(command(&args), 120))["scans"].as_u64(), Some(0), "rebuilt");
}

#[test]
fn cache_clear_removes_only_recites_names_and_never_through_a_link() {
    let layer = Layer::new();
    layer.check(true);
    let folder = layer.cache().join(recite::engine::cache::FOLDER);
    // Not recite's names, in recite's folder: kept.
    for name in ["notes.arrow", ".tmp-keep-me-please", "mine.txt"] {
        std::fs::write(folder.join(name), "not recite's").unwrap();
    }
    let cleared = cached(&["cache", "clear"], &layer.cache());
    assert_eq!(code(&cleared), 0, "{}", stderr(&cleared));
    assert!(layer.entries().iter().all(|p| p.ends_with("notes.arrow")), "{:?}", layer.entries());
    for name in ["notes.arrow", ".tmp-keep-me-please", "mine.txt"] {
        assert!(folder.join(name).exists(), "{name} was removed");
    }
    // The folder a link to someone's data: nothing there is touched.
    let victim = layer.dir.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    let names = [
        "0123456789abcdef0123456789abcdef-0123456789abcdef0123456789abcdef.arrow",
        ".tmp-abc123",
        "data.arrow",
    ];
    for name in names {
        std::fs::write(victim.join(name), "precious").unwrap();
    }
    let linked = layer.dir.path().join("linked");
    std::fs::create_dir_all(&linked).unwrap();
    std::os::unix::fs::symlink(&victim, linked.join(recite::engine::cache::FOLDER)).unwrap();
    let out = cached(&["cache", "clear"], &linked);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    for name in names {
        assert_eq!(std::fs::read_to_string(victim.join(name)).unwrap(), "precious", "{name}");
    }
}

/// Writes `x.parquet` (pyarrow: 100 doubles 1..100, uncompressed, plain-encoded, so each value's
/// 8 bytes are in the file as they are), then holds it mapped shared: `dirty` writes one byte of
/// the value 11 as it is (the kernel stamps the file's times at that first write to the page),
/// `edit` writes 99 over 11 through the same dirty page, which no time stamp follows.
const MMAP_WRITER: &str = r#"
import mmap, struct, sys
import pyarrow as pa, pyarrow.parquet as pq
path = sys.argv[1]
pq.write_table(pa.table({"x": [float(v) for v in range(1, 101)]}), path,
               compression="NONE", use_dictionary=False, write_statistics=True)
data = open(path, "rb").read()
at = data.find(struct.pack("<3d", 11.0, 12.0, 13.0))
assert at > 0 and data.count(struct.pack("<3d", 11.0, 12.0, 13.0)) == 1, "the values are in the file once"
f = open(path, "r+b")
m = mmap.mmap(f.fileno(), 0)
print("written", flush=True)
for line in sys.stdin:
    if line.strip() == "dirty":
        m[at] = m[at]
    elif line.strip() == "edit":
        m[at:at + 8] = struct.pack("<d", 99.0)
    print(line.strip(), flush=True)
"#;

/// The Python with pyarrow that tests/postgres/install.sh installs (a cached, pinned venv).
fn pyarrow_python() -> Result<String, String> {
    let out = std::process::Command::new(root().join("tests/postgres/install.sh"))
        .output()
        .map_err(|e| format!("tests/postgres/install.sh: {e}"))?;
    if !out.status.success() {
        return Err(format!("tests/postgres/install.sh failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The verdict of a report's only claim.
fn only_verdict(out: &Output) -> String {
    let text = stdout(out);
    let verdicts: Vec<&str> = text
        .split("\"verdict\": \"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap_or_default())
        .collect();
    assert_eq!(verdicts.len(), 1, "{text}\n{}", stderr(out));
    verdicts[0].to_string()
}

/// What stat says of a file that a write is meant to move: size, modification and change times,
/// inode.
fn stamp(path: &Path) -> (u64, i64, i64, i64, i64, u64) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).unwrap();
    (m.len(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec(), m.ino())
}

/// issue 48 item 3: a Parquet file edited in place through a shared `mmap` keeps its size,
/// times, inode and footer, so the default identity (docs/cache.md) cannot tell, and a warm run
/// answers from the cache while a fresh run says DISCREPANT. `--cache-verify content` hashes
/// every file whole before an entry answers, and notices.
#[test]
fn an_mmap_edit_that_keeps_times_and_footer_is_noticed_under_cache_verify_content() {
    use std::io::{BufRead, Write};
    let test = "cache::an_mmap_edit_that_keeps_times_and_footer_is_noticed_under_cache_verify_content";
    let python = match pyarrow_python() {
        Ok(p) => p,
        Err(why) if std::env::var_os("RECITE_REQUIRE_PYARROW").is_some() => panic!("{why}"),
        Err(why) => return crate::support::say_skipped(test, &why),
    };
    let dir = tempfile::tempdir().unwrap();
    let (study, claim) = crate::support::a_mean_of_x(dir.path(), "Mapped", "x.parquet");
    let parquet = study.join("x.parquet");
    let script = dir.path().join("writer.py");
    std::fs::write(&script, MMAP_WRITER).unwrap();
    let mut writer = std::process::Command::new(&python)
        .arg(&script)
        .arg(&parquet)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut to = writer.stdin.take().unwrap();
    let mut from = std::io::BufReader::new(writer.stdout.take().unwrap());
    let mut say = |what: &str| {
        if what != "written" {
            writeln!(to, "{what}").unwrap();
        }
        let mut line = String::new();
        from.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), what, "the writer answers each step");
    };
    say("written");
    let (data, cache) = (dir.path().join("data"), dir.path().join("cache"));
    let run = |more: &[&str]| {
        let args = ["check", claim.to_str().unwrap(), "--data", data.to_str().unwrap(), "--format", "json"];
        recite(&[&args[..], more].concat())
    };
    let with_cache = |verify: &str| run(&["--cache", cache.to_str().unwrap(), "--cache-verify", verify]);
    say("dirty");
    assert_eq!(only_verdict(&run(&[])), "REPRODUCED");
    assert_eq!(only_verdict(&with_cache("identity")), "REPRODUCED", "the cold run fills the cache");
    let before = stamp(&parquet);
    say("edit");
    let kept = stamp(&parquet) == before;
    let fresh = run(&[]);
    assert_eq!(only_verdict(&fresh), "DISCREPANT", "the mean is now 51.38: {}", stdout(&fresh));
    let identity = with_cache("identity");
    if kept {
        // The hole, as documented: nothing the default identity reads has moved.
        assert_eq!(only_verdict(&identity), "REPRODUCED", "the default identity cannot see this write");
    } else {
        eprintln!("{test}: the kernel wrote the page back and stamped the file; the hole did not open");
    }
    let content = with_cache("content");
    assert_eq!(only_verdict(&content), "DISCREPANT", "content verification reads the new bytes");
    // The same report, but for what the file's digest covers: the report names the digest the
    // run verified with, the footer by default, the whole content under `--cache-verify content`.
    let files = |o: &Output| {
        let mut r = report(o);
        let claim = r["inputs"][0]["claims"][0]["rerun"].as_object_mut().expect("the claim's re-run");
        let files = claim.remove("files").expect("the files it read");
        r.as_object_mut().unwrap().remove("stats");
        (r, files)
    };
    let ((fresh_rest, fresh_files), (content_rest, content_files)) = (files(&fresh), files(&content));
    assert_eq!(fresh_rest, content_rest);
    assert_eq!(fresh_files[0]["name"], content_files[0]["name"]);
    assert_eq!(fresh_files[0]["bytes"], content_files[0]["bytes"]);
    assert_eq!(
        (fresh_files[0]["of"].as_str(), content_files[0]["of"].as_str()),
        (Some("footer"), Some("content"))
    );
    assert_eq!(only_verdict(&with_cache("content")), "DISCREPANT", "and caches them");
    drop(to);
    let _ = writer.wait();
}
