//! `recite catalog init`: a starter `study.toml` from data files (`.sav`/`.zsav`, Parquet, CSV,
//! Arrow IPC), for the analyst to confirm.
//!
//! Everything the files say is written down (SPSS variable labels, value labels, user-missing
//! codes); everything guessed is marked `# GUESS` with how it was guessed; everything only a
//! human can decide is marked `# DECIDE`. The result passes `recite catalog check` unedited:
//! a guess that would fail it (a weight with negative values) is written commented out.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use crate::catalog::{self, Column};
use crate::engine::{ColumnProfile, Engine};
use crate::sav;

/// Most distinct whole values a column may have for its codes to be listed.
pub const MAX_CODES: usize = 30;
/// Most distinct values a wave column may have (one period each).
pub const MAX_WAVES: usize = 60;

/// One data file, read for the starter catalog.
struct Source {
    /// The table name (from the file name).
    name: String,
    /// The path written into `study.toml` (relative to its folder when possible).
    path: String,
    /// What the SPSS dictionary says, for `.sav` files.
    dictionary: Option<sav::Dictionary>,
    profiles: Vec<ColumnProfile>,
    location: PathBuf,
}

impl Source {
    fn meta(&self, column: &str) -> Column {
        self.dictionary
            .as_ref()
            .and_then(|d| d.columns.iter().find(|(n, _)| n == column))
            .map(|(_, c)| c.clone())
            .unwrap_or_default()
    }

    fn profile(&self, column: &str) -> Option<&ColumnProfile> {
        self.profiles.iter().find(|p| p.name == column)
    }
}

/// Writes the text of a starter `study.toml` for `files`, to be saved in `out_dir`.
pub fn starter(
    files: &[PathBuf],
    out_dir: &Path,
    name: Option<&str>,
    engine: &Engine,
) -> Result<String, String> {
    if files.is_empty() {
        return Err("no data file given".into());
    }
    let mut sources: Vec<Source> = Vec::new();
    for file in files {
        if crate::catalog::url_scheme(&file.to_string_lossy()).is_some() {
            // On object storage: written into the catalog as it is; the engine reads it (or
            // says why it cannot: an SPSS file, a build without the `object-store` feature).
            let profiles = engine
                .profile(file, MAX_CODES.max(MAX_WAVES))
                .map_err(|e| format!("{}: {e}", file.display()))?;
            let mut table = table_name(file);
            while sources.iter().any(|s| s.name == table) {
                table.push('_');
            }
            let path = file.to_string_lossy().into_owned();
            sources.push(Source { name: table, path, dictionary: None, profiles, location: file.clone() });
            continue;
        }
        let meta = std::fs::metadata(file).map_err(|e| format!("{}: cannot be read: {e}", file.display()))?;
        if !meta.is_file() {
            return Err(format!("{}: is not a regular file", file.display()));
        }
        let location = file.canonicalize().map_err(|e| format!("{}: {e}", file.display()))?;
        let dictionary = if sav::is_sav(file) {
            Some(sav::dictionary(&location).map_err(|e| format!("{}: {e}", file.display()))?)
        } else {
            None
        };
        let profiles = engine
            .profile(&location, MAX_CODES.max(MAX_WAVES))
            .map_err(|e| format!("{}: {e}", file.display()))?;
        let mut table = table_name(file);
        while sources.iter().any(|s| s.name == table) {
            table.push('_');
        }
        sources.push(Source {
            name: table,
            path: relative_path(&location, out_dir),
            dictionary,
            profiles,
            location,
        });
    }
    let wave = guess_wave(&sources);
    let mut o = String::new();
    let first = &sources[0];
    let file_label = first.dictionary.as_ref().map(|d| d.file_label.clone()).filter(|l| !l.is_empty());
    let study_name = name.map(String::from).or(file_label).unwrap_or_else(|| first.name.clone());
    let listed: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let _ = writeln!(o, "# Starter catalog written by `recite catalog init {}`.", listed.join(" "));
    let _ = writeln!(
        o,
        "# Lines marked GUESS were guessed from the data: confirm them. Lines marked DECIDE need a\n\
         # human. Then run `recite catalog check --data {}`. Reference: docs/catalog.md.\n",
        out_dir.display()
    );
    let _ = writeln!(o, "[study]");
    let _ = writeln!(o, "# DECIDE: the name (and aliases) agents put in a citation's `study`.");
    let _ = writeln!(o, "name = {}", q(&study_name));
    let _ = writeln!(o, "aliases = []");
    let _ = writeln!(o, "description = {}\n", q(&format!("Starter catalog for {}", listed.join(", "))));
    let _ = writeln!(o, "# DECIDE: small-base warnings, on the unweighted count (recite's defaults).");
    let _ = writeln!(o, "[thresholds]\nlow = 100\nvery_low = 50\n");
    for s in &sources {
        table(&mut o, s, engine, wave.as_ref().map(|w| w.column.as_str()));
    }
    periods(&mut o, &sources, wave.as_ref());
    let _ = writeln!(o, "# DECIDE: the bases agents cite, by the names they use, e.g.");
    let _ = writeln!(o, "#   [[bases]]");
    let _ = writeln!(o, "#   name = \"Adults 18-74, aware of brand\"");
    let _ = writeln!(
        o,
        "#   filter = \"age BETWEEN 18 AND 74 AND {{column}} >= 1\"   # {{column}}: the cited column"
    );
    let _ = writeln!(o, "# This one keeps every row of the period: recite already leaves out no-answer and");
    let _ = writeln!(o, "# missing codes of the cited column.");
    let _ = writeln!(o, "[[bases]]\nname = \"All respondents\"\nfilter = \"TRUE\"\n");
    let _ = writeln!(o, "# DECIDE: breakdowns whose cells are audited for small bases, e.g.");
    let _ = writeln!(o, "#   [[breakdowns]]");
    let _ = writeln!(o, "#   name = \"age band\"");
    let _ = writeln!(o, "#   cells = [{{ name = \"18-34\", filter = \"age BETWEEN 18 AND 34\" }}]");
    Ok(o)
}

/// The wave (period) column guessed, and why.
struct Wave {
    column: String,
    why: String,
}

/// The wave column: whole numbers with at most [`MAX_WAVES`] distinct values, in every table,
/// whose name or label says wave/period/round.
fn guess_wave(sources: &[Source]) -> Option<Wave> {
    let first = &sources[0];
    let mut best: Option<(u8, &ColumnProfile, String)> = None;
    for p in &first.profiles {
        if !p.numeric || !p.integral || p.values.is_empty() || p.values.len() > MAX_WAVES {
            continue;
        }
        if !sources.iter().all(|s| s.profile(&p.name).is_some_and(|q| q.numeric && q.integral)) {
            continue;
        }
        let name = p.name.to_lowercase();
        let label = first.meta(&p.name).label.to_lowercase();
        const EXACT: [&str; 8] = ["wave", "waves", "welle", "vague", "period", "round", "wave_id", "waveid"];
        let (score, why) = if EXACT.contains(&name.as_str()) {
            (3, format!("its name is {:?}", p.name))
        } else if ["wave", "period", "welle"].iter().any(|w| name.contains(w)) {
            (2, format!("its name {:?} says wave or period", p.name))
        } else if ["wave", "period", "welle", "round"].iter().any(|w| label.contains(w)) {
            (1, format!("its label {:?} says wave or period", first.meta(&p.name).label))
        } else {
            continue;
        };
        if best.as_ref().is_none_or(|(s, _, _)| score > *s) {
            best = Some((score, p, why));
        }
    }
    best.map(|(_, p, why)| Wave {
        column: p.name.clone(),
        why: format!("{why}; {} distinct whole values", p.values.len()),
    })
}

fn table(o: &mut String, s: &Source, engine: &Engine, wave: Option<&str>) {
    let _ = writeln!(o, "[[tables]]");
    let _ = writeln!(o, "name = {}", q(&s.name));
    let _ = writeln!(o, "path = {}", q(&s.path));
    let spss_weight = s.dictionary.as_ref().and_then(|d| d.weight.clone());
    let mut weights = Vec::new();
    let mut refused = Vec::new();
    for p in s.profiles.iter().filter(|p| p.numeric) {
        let label = s.meta(&p.name).label;
        let why = if spss_weight.as_deref() == Some(p.name.as_str()) {
            "SPSS weights the file by it".to_string()
        } else if looks_like_weight(&p.name) {
            format!("its name {:?} says weight", p.name)
        } else if label.to_lowercase().contains("weight") {
            format!("its label {label:?} says weight")
        } else {
            continue;
        };
        match engine.check_weight(&s.location, &p.name) {
            Ok(()) => weights.push((p.name.clone(), why)),
            Err(e) => refused.push((p.name.clone(), format!("{why}, but it {e}"))),
        }
    }
    for (w, why) in &weights {
        let _ = writeln!(o, "# GUESS: weight {w:?}: {why}.");
    }
    for (w, why) in &refused {
        let _ = writeln!(o, "# Not a weight as it stands: {w:?}: {why}.");
    }
    if weights.is_empty() {
        let _ =
            writeln!(o, "# DECIDE: no weight column found; list the columns citations may name as `weight`.");
    }
    let names: Vec<String> = weights.iter().map(|(w, _)| q(w)).collect();
    let _ = writeln!(o, "weights = [{}]", names.join(", "));
    let _ = writeln!(
        o,
        "# DECIDE: a sampling design, if the data has one: design = {{ strata = \"…\", psu = \"…\" }}\n"
    );
    let questions = guess_questions(s.profiles.iter().map(|p| p.name.as_str()));
    for p in &s.profiles {
        column(o, s, p, questions.get(&p.name), wave == Some(p.name.as_str()));
    }
}

fn column(o: &mut String, s: &Source, p: &ColumnProfile, question: Option<&String>, is_wave: bool) {
    let meta = s.meta(&p.name);
    let _ = writeln!(o, "[tables.columns.{}]", key(&p.name));
    if !p.numeric {
        let _ = writeln!(o, "# {}: citations cannot compute on it (only numbers).", p.data_type);
    }
    if meta.label.is_empty() {
        let _ = writeln!(o, "# DECIDE: what the column holds, in words.");
    }
    let _ = writeln!(o, "label = {}", q(&meta.label));
    if let Some(question) = question {
        let _ = writeln!(o, "# GUESS: one question with its siblings (columns named {question}…).");
        let _ = writeln!(o, "question = {}", q(question));
    }
    let mut values: BTreeMap<String, String> = BTreeMap::new();
    if p.numeric {
        let mut labelled: Vec<(f64, String)> =
            meta.values.iter().filter_map(|(k, v)| k.parse::<f64>().ok().map(|c| (c, v.clone()))).collect();
        labelled.sort_by(|a, b| a.0.total_cmp(&b.0));
        let unlabelled: Vec<f64> = p
            .values
            .iter()
            .copied()
            .filter(|v| !labelled.iter().any(|(c, _)| c == v) && !meta.is_missing(*v))
            .collect();
        if !labelled.is_empty() {
            if !unlabelled.is_empty() && p.values.len() <= MAX_CODES {
                let list: Vec<String> = unlabelled.iter().map(|v| sav::code_key(*v)).collect();
                let _ = writeln!(o, "# DECIDE: codes in the data without a label: {}", list.join(", "));
            }
            values.extend(labelled.into_iter().map(|(c, l)| (sav::code_key(c), l)));
        } else if !p.values.is_empty() && p.values.len() <= MAX_CODES && !is_wave {
            let _ = writeln!(
                o,
                "# DECIDE: the codes found in the data, each standing for itself: replace with the\n\
                 # questionnaire's labels (the funnel and distribution measures are named by them)."
            );
            values.extend(unlabelled.iter().map(|v| (sav::code_key(*v), sav::code_key(*v))));
        }
        if is_wave && values.is_empty() {
            values.extend(p.values.iter().map(|v| (sav::code_key(*v), sav::code_key(*v))));
        }
    }
    if !values.is_empty() {
        let mut pairs: Vec<(&String, &String)> = values.iter().collect();
        pairs.sort_by(|a, b| {
            let (x, y) = (a.0.parse::<f64>().unwrap_or(f64::MAX), b.0.parse::<f64>().unwrap_or(f64::MAX));
            x.total_cmp(&y)
        });
        let body: Vec<String> = pairs.iter().map(|(k, v)| format!("{} = {}", q(k), q(v))).collect();
        let _ = writeln!(o, "values = {{ {} }}", body.join(", "));
    }
    if !meta.missing.is_empty() || !meta.missing_ranges.is_empty() {
        let _ = writeln!(o, "# From the SPSS dictionary (user-missing): not data.");
    }
    if !meta.missing.is_empty() {
        let list: Vec<String> = meta.missing.iter().map(|v| num(*v)).collect();
        let _ = writeln!(o, "missing = [{}]", list.join(", "));
    }
    if !meta.missing_ranges.is_empty() {
        let list: Vec<String> =
            meta.missing_ranges.iter().map(|[a, b]| format!("[{}, {}]", num(*a), num(*b))).collect();
        let _ = writeln!(o, "missing_ranges = [{}]", list.join(", "));
    }
    let _ = writeln!(o);
}

fn periods(o: &mut String, sources: &[Source], wave: Option<&Wave>) {
    let Some(wave) = wave else {
        let _ = writeln!(
            o,
            "# DECIDE: no wave or period column found, so one period holds every row. Declare the"
        );
        let _ = writeln!(
            o,
            "# periods agents cite, each with a filter selecting its rows (e.g. \"fieldwork_month = 4\")."
        );
        let _ = writeln!(o, "[[periods]]\nname = \"All data\"\nfilter = \"TRUE\"\n");
        return;
    };
    let first = &sources[0];
    let meta = first.meta(&wave.column);
    let label = if meta.label.is_empty() { wave.column.clone() } else { meta.label.clone() };
    let _ = writeln!(o, "# GUESS: the wave (period) column is {:?}: {}.", wave.column, wave.why);
    let _ =
        writeln!(o, "# One period per value. DECIDE: the names agents cite, and `fielded` (ISO-8601 dates).");
    let values = first.profile(&wave.column).map(|p| p.values.clone()).unwrap_or_default();
    let mut used: Vec<String> = Vec::new();
    for v in values {
        let code = sav::code_key(v);
        let mut name = meta.label_of(v).map(String::from).unwrap_or_else(|| format!("{label} {code}"));
        if used.iter().any(|u| catalog::fold_human(u) == catalog::fold_human(&name)) {
            name = format!("{name} ({code})");
        }
        let short = format!("W{code}");
        let aliases = if catalog::fold_human(&name) != catalog::fold_human(&short)
            && !used.iter().any(|u| catalog::fold_human(u) == catalog::fold_human(&short))
        {
            format!("[{}]", q(&short))
        } else {
            "[]".to_string()
        };
        let _ = writeln!(o, "[[periods]]");
        let _ = writeln!(o, "name = {}", q(&name));
        let _ = writeln!(o, "aliases = {aliases}");
        let _ = writeln!(o, "filter = {}", q(&format!("{} = {code}", catalog::quote_ident(&wave.column))));
        let _ = writeln!(o);
        used.push(name);
        used.push(short);
    }
}

/// A weight by its name: weight, wgt, wt, pond…
fn looks_like_weight(name: &str) -> bool {
    let n = name.to_lowercase();
    n.contains("weight")
        || n.contains("wgt")
        || n.contains("wght")
        || n.starts_with("pond")
        || n == "wt"
        || n == "w"
        || n.starts_with("wt_")
        || n.ends_with("_wt")
        || n.ends_with("_w")
}

/// Columns named like a grid (`s14r1`, `s14r2`; `q5_1`, `q5_2`): the stem, when two or more
/// columns share it.
fn guess_questions<'a>(names: impl Iterator<Item = &'a str>) -> BTreeMap<String, String> {
    let stem = |n: &str| -> Option<String> {
        let digits = n.len() - n.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return None;
        }
        let head = &n[..n.len() - digits];
        let head = head.strip_suffix(['r', 'R', '_'])?;
        (head.chars().last().is_some_and(|c| c.is_ascii_digit())).then(|| head.to_string())
    };
    let names: Vec<&str> = names.collect();
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for n in &names {
        if let Some(s) = stem(n) {
            *count.entry(s).or_default() += 1;
        }
    }
    names.iter().filter_map(|n| stem(n).filter(|s| count[s] >= 2).map(|s| (n.to_string(), s))).collect()
}

/// A table name from a file name: its stem, reduced to letters, digits and `_`.
fn table_name(file: &Path) -> String {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("data");
    let mut name: String = stem.chars().map(|c| if c.is_alphanumeric() { c } else { '_' }).collect();
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, 't');
    }
    name
}

/// `file` as seen from `dir` (both made absolute): relative when they share a root.
fn relative_path(file: &Path, dir: &Path) -> String {
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let dir = dir.canonicalize().unwrap_or(dir);
    let (f, d): (Vec<Component>, Vec<Component>) = (file.components().collect(), dir.components().collect());
    let common = f.iter().zip(&d).take_while(|(a, b)| a == b).count();
    // Nothing shared but the root: an absolute path says more than a climb to `/`.
    if common <= 1 {
        return file.display().to_string();
    }
    let mut rel = PathBuf::new();
    for _ in common..d.len() {
        rel.push("..");
    }
    for c in &f[common..] {
        rel.push(c.as_os_str());
    }
    rel.display().to_string()
}

/// A TOML string.
fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A TOML key: bare when it can be.
fn key(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        s.to_string()
    } else {
        q(s)
    }
}

/// A TOML number.
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 { format!("{}", v as i64) } else { format!("{v:?}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_columns_are_grouped_by_stem() {
        let q = guess_questions(["s14r1", "s14r2", "s14r10", "q5_1", "q5_2", "age", "q7r1"].into_iter());
        assert_eq!(q.get("s14r10").map(String::as_str), Some("s14"));
        assert_eq!(q.get("q5_2").map(String::as_str), Some("q5"));
        assert!(!q.contains_key("age") && !q.contains_key("q7r1"), "{q:?}");
    }

    #[test]
    fn paths_are_written_relative_to_the_catalog() {
        assert_eq!(relative_path(Path::new("/data/x/f.sav"), Path::new("/data/y")), "../x/f.sav");
        assert_eq!(relative_path(Path::new("/data/x/f.sav"), Path::new("/tmp/y")), "/data/x/f.sav");
        assert_eq!(table_name(Path::new("/a/2024 wave-1.sav")), "t2024_wave_1");
    }
}
