//! `recite catalog init`: a starter `study.toml` from data files (`.sav`/`.zsav`, Parquet, CSV,
//! Arrow IPC), for the analyst to confirm.
//!
//! Everything the files say is written down (SPSS variable labels, value labels, user-missing
//! codes); everything guessed is marked `# GUESS` with how it was guessed; everything only a
//! human can decide is marked `# DECIDE`. The result passes `recite catalog check` unedited:
//! a guess that would fail it (a weight with negative values) is written commented out.
//!
//! Every name and label is written as a one-line TOML string (control characters escaped), and
//! every comment on one line, so any name a file holds gives a `study.toml` that parses. Time
//! and memory are linear in the columns: columns are looked up by name through indexes, and
//! the engine profiles every column in one scan. SPSS value labels past [`MAX_VALUE_LABELS`] a
//! column, or past [`VALUE_LABEL_BYTES`] in all, are left out (with a note): recite reads them
//! from the file, so the starter stays within what `catalog check` reads.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use crate::catalog::{self, Column};
use crate::engine::{ColumnProfile, Engine};
use crate::sav;

/// Most distinct whole values a column may have for its codes to be listed.
pub const MAX_CODES: usize = 30;
/// Most distinct values a wave column may have (one period each).
pub const MAX_WAVES: usize = 60;
/// Most SPSS value labels written for one column; a column with more is left to the file's.
pub const MAX_VALUE_LABELS: usize = 1000;
/// Most bytes of SPSS value labels written in all (a quarter of what `catalog check` reads).
pub const VALUE_LABEL_BYTES: usize = (crate::catalog::MAX_STUDY_BYTES / 4) as usize;

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
    /// Where each column is in `dictionary` and in `profiles`: a look-up per column, not a
    /// walk of every column.
    meta_at: HashMap<String, usize>,
    profile_at: HashMap<String, usize>,
}

impl Source {
    fn new(
        name: String,
        path: String,
        dictionary: Option<sav::Dictionary>,
        profiles: Vec<ColumnProfile>,
        location: PathBuf,
    ) -> Source {
        let meta_at = dictionary
            .iter()
            .flat_map(|d| d.columns.iter().enumerate().map(|(i, (n, _))| (n.clone(), i)))
            .collect();
        let profile_at = profiles.iter().enumerate().map(|(i, p)| (p.name.clone(), i)).collect();
        Source { name, path, dictionary, profiles, location, meta_at, profile_at }
    }

    fn meta(&self, column: &str) -> Column {
        self.meta_ref(column).cloned().unwrap_or_default()
    }

    fn meta_ref(&self, column: &str) -> Option<&Column> {
        let d = self.dictionary.as_ref()?;
        self.meta_at.get(column).map(|&i| &d.columns[i].1)
    }

    fn label(&self, column: &str) -> &str {
        self.meta_ref(column).map_or("", |c| c.label.as_str())
    }

    fn profile(&self, column: &str) -> Option<&ColumnProfile> {
        self.profile_at.get(column).map(|&i| &self.profiles[i])
    }
}

/// What is left of the value-label budget, and the columns whose labels it left out.
struct Labels {
    bytes_left: usize,
    left_out: Vec<String>,
}

/// Why no starter catalog could be written; each names the file at fault.
#[derive(Debug, thiserror::Error)]
pub enum StarterError {
    /// No data file was given.
    #[error("no data file given")]
    NoFiles,
    /// A location holds a secret (a password, a query string), which study.toml must not.
    #[error("{0}")]
    Secret(String),
    /// A PostgreSQL location that does not parse.
    #[error("{location} {error}")]
    Postgres {
        /// The location, as given.
        location: String,
        /// Why.
        error: crate::postgres::PostgresError,
    },
    /// A file that cannot be read, or is not a regular file.
    #[error("{}: {error}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// Why, worded to follow its path.
        error: String,
    },
    /// An SPSS file's dictionary cannot be read.
    #[error("{}: {error}", path.display())]
    Dictionary {
        /// The file.
        path: PathBuf,
        /// Why.
        error: sav::SavError,
    },
    /// The table cannot be profiled.
    #[error("{}: {error}", path.display())]
    Profile {
        /// The file or location.
        path: PathBuf,
        /// Why.
        error: crate::engine::ProfileError,
    },
}

/// Writes the text of a starter `study.toml` for `files`, to be saved in `out_dir`.
pub fn starter(
    files: &[PathBuf],
    out_dir: &Path,
    name: Option<&str>,
    engine: &Engine,
) -> Result<String, StarterError> {
    if files.is_empty() {
        return Err(StarterError::NoFiles);
    }
    let mut sources: Vec<Source> = Vec::new();
    for file in files {
        let text = file.to_string_lossy();
        if crate::postgres::is_location(&text) {
            // A table on a PostgreSQL server, written into the catalog as it is (a password is
            // refused: it would be shared with study.toml; PGPASSWORD gives it).
            if crate::catalog::location_has_password(&text) {
                return Err(StarterError::Secret(format!(
                    "{}: the URL holds a password, which recite will not write into study.toml: \
                     give it through PGPASSWORD, or name an environment variable in [connections] \
                     (docs/catalog.md, \"PostgreSQL tables\")",
                    crate::objstore::redact(&text)
                )));
            }
            let on_server = crate::postgres::Source::of_location(&text)
                .map_err(|error| StarterError::Postgres { location: text.to_string(), error })?;
            let profiles = engine
                .profile(file, MAX_CODES.max(MAX_WAVES))
                .map_err(|error| StarterError::Profile { path: file.clone(), error })?;
            let mut table = on_server.table.rsplit('.').next().unwrap_or("table").to_string();
            while sources.iter().any(|s| s.name == table) {
                table.push('_');
            }
            sources.push(Source::new(table, text.into_owned(), None, profiles, file.clone()));
            continue;
        }
        if crate::catalog::url_scheme(&file.to_string_lossy()).is_some() {
            // On object storage: written into the catalog as it is; the engine reads it (or
            // says why it cannot: an SPSS file, a build without the `object-store` feature).
            // study.toml is meant to be shared: a URL carrying a secret is refused, not written.
            let text = file.to_string_lossy();
            let shown = crate::objstore::redact(&text);
            if shown != text {
                return Err(StarterError::Secret(format!(
                    "{shown}: the URL holds a secret (user:password@, a query string, a fragment or \
                     ;parameters), which recite will not write into study.toml: name the object \
                     alone and give credentials through the environment (docs/catalog.md)"
                )));
            }
            let profiles = engine
                .profile(file, MAX_CODES.max(MAX_WAVES))
                .map_err(|error| StarterError::Profile { path: file.clone(), error })?;
            let mut table = table_name(file);
            while sources.iter().any(|s| s.name == table) {
                table.push('_');
            }
            let path = file.to_string_lossy().into_owned();
            sources.push(Source::new(table, path, None, profiles, file.clone()));
            continue;
        }
        let meta = std::fs::metadata(file)
            .map_err(|e| StarterError::File { path: file.clone(), error: format!("cannot be read: {e}") })?;
        if !meta.is_file() {
            return Err(StarterError::File { path: file.clone(), error: "is not a regular file".into() });
        }
        let location = file
            .canonicalize()
            .map_err(|e| StarterError::File { path: file.clone(), error: e.to_string() })?;
        let dictionary = if sav::is_sav(file) {
            Some(
                sav::dictionary(&location)
                    .map_err(|error| StarterError::Dictionary { path: file.clone(), error })?,
            )
        } else {
            None
        };
        let profiles = engine
            .profile(&location, MAX_CODES.max(MAX_WAVES))
            .map_err(|error| StarterError::Profile { path: file.clone(), error })?;
        let mut table = table_name(file);
        while sources.iter().any(|s| s.name == table) {
            table.push('_');
        }
        sources.push(Source::new(table, relative_path(&location, out_dir), dictionary, profiles, location));
    }
    let wave = guess_wave(&sources);
    let mut o = String::new();
    let first = &sources[0];
    let file_label = first.dictionary.as_ref().map(|d| d.file_label.clone()).filter(|l| !l.is_empty());
    let study_name = name.map(String::from).or(file_label).unwrap_or_else(|| first.name.clone());
    let listed: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let _ = writeln!(o, "# Starter catalog written by `recite catalog init {}`.", line(&listed.join(" ")));
    let _ = writeln!(
        o,
        "# Lines marked GUESS were guessed from the data: confirm them. Lines marked DECIDE need a\n\
         # human. Then run `recite catalog check --data {}`. Reference: docs/catalog.md.\n",
        line(&out_dir.display().to_string())
    );
    let _ = writeln!(o, "[study]");
    let _ = writeln!(o, "# DECIDE: the name (and aliases) agents put in a citation's `study`.");
    let _ = writeln!(o, "name = {}", q(&study_name));
    let _ = writeln!(o, "aliases = []");
    let _ = writeln!(o, "description = {}\n", q(&format!("Starter catalog for {}", listed.join(", "))));
    let _ = writeln!(o, "# DECIDE: small-base warnings, on the unweighted count (recite's defaults).");
    let _ = writeln!(o, "[thresholds]\nlow = 100\nvery_low = 50\n");
    let mut labels = Labels { bytes_left: VALUE_LABEL_BYTES, left_out: Vec::new() };
    for s in &sources {
        table(&mut o, s, engine, wave.as_ref().map(|w| w.column.as_str()), &mut labels);
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
    if !labels.left_out.is_empty() {
        let shown: Vec<String> = labels.left_out.iter().take(20).map(|c| format!("{c:?}")).collect();
        let more = labels.left_out.len().saturating_sub(shown.len());
        let _ = writeln!(
            o,
            "\n# Left out: the SPSS value labels of {} columns ({}{}), over {MAX_VALUE_LABELS} a column or\n\
             # {VALUE_LABEL_BYTES} bytes in all. recite reads them from the file; declare `values` to replace them.",
            labels.left_out.len(),
            line(&shown.join(", ")),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        );
    }
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
        let label = first.label(&p.name).to_lowercase();
        const EXACT: [&str; 8] = ["wave", "waves", "welle", "vague", "period", "round", "wave_id", "waveid"];
        let (score, why) = if EXACT.contains(&name.as_str()) {
            (3, format!("its name is {:?}", p.name))
        } else if ["wave", "period", "welle"].iter().any(|w| name.contains(w)) {
            (2, format!("its name {:?} says wave or period", p.name))
        } else if ["wave", "period", "welle", "round"].iter().any(|w| label.contains(w)) {
            (1, format!("its label {:?} says wave or period", first.label(&p.name)))
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

fn table(o: &mut String, s: &Source, engine: &Engine, wave: Option<&str>, labels: &mut Labels) {
    let _ = writeln!(o, "[[tables]]");
    let _ = writeln!(o, "name = {}", q(&s.name));
    let _ = writeln!(o, "path = {}", q(&s.path));
    let spss_weight = s.dictionary.as_ref().and_then(|d| d.weight.clone());
    let mut candidates = Vec::new();
    for p in s.profiles.iter().filter(|p| p.numeric) {
        let label = s.label(&p.name);
        let why = if spss_weight.as_deref() == Some(p.name.as_str()) {
            "SPSS weights the file by it".to_string()
        } else if looks_like_weight(&p.name) {
            format!("its name {:?} says weight", p.name)
        } else if label.to_lowercase().contains("weight") {
            format!("its label {label:?} says weight")
        } else {
            continue;
        };
        candidates.push((p.name.as_str(), why));
    }
    // Every candidate in one scan of the table.
    let names: Vec<&str> = candidates.iter().map(|(n, _)| *n).collect();
    let checked = if names.is_empty() { Vec::new() } else { engine.check_weights(&s.location, &names) };
    let mut weights = Vec::new();
    let mut refused = Vec::new();
    for ((name, why), result) in candidates.into_iter().zip(checked) {
        match result {
            Ok(()) => weights.push((name.to_string(), why)),
            Err(e) => refused.push((name.to_string(), format!("{why}, but it {e}"))),
        }
    }
    for (w, why) in &weights {
        let _ = writeln!(o, "# GUESS: weight {w:?}: {}.", line(why));
    }
    for (w, why) in &refused {
        let _ = writeln!(o, "# Not a weight as it stands: {w:?}: {}.", line(why));
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
    let routings = routings(s, engine, wave, &weights);
    for p in &s.profiles {
        let routed = routings.iter().find(|r| r.target == p.name);
        column(o, s, p, questions.get(&p.name), wave == Some(p.name.as_str()), routed, labels);
    }
}

/// The routing the data shows (docs/catalog.md, "Universe"): columns answered on some rows
/// only, against the coded columns that may route them — those ending as the routed column
/// does first (`q30r5` after `s14r5`: one brand of two grids), then in the file's order. A
/// scan that fails proposes nothing: a starter never fails for a guess.
fn routings(
    s: &Source,
    engine: &Engine,
    wave: Option<&str>,
    weights: &[(String, String)],
) -> Vec<crate::engine::universe::Routing> {
    let targets: Vec<&str> = s
        .profiles
        .iter()
        .filter(|p| p.numeric && p.nulls > 0 && p.nulls < p.rows)
        .map(|p| p.name.as_str())
        .collect();
    if targets.is_empty() {
        return Vec::new();
    }
    let is_weight = |n: &str| weights.iter().any(|(w, _)| w == n);
    let coded: Vec<&str> = s
        .profiles
        .iter()
        .filter(|p| p.numeric && p.integral && p.nulls == 0 && (2..=MAX_CODES).contains(&p.values.len()))
        .filter(|p| Some(p.name.as_str()) != wave && !is_weight(&p.name))
        .map(|p| p.name.as_str())
        .collect();
    // Conditions that end as some routed column does (`s14r5`, `q30r5`: one brand of two
    // grids) first, then the file's order; one grouped aggregate each, at most
    // MAX_CONDITIONS, every open target counted in each.
    let tail = |c: &str| {
        let shared = |t: &str| t.chars().rev().zip(c.chars().rev()).take_while(|(a, b)| a == b).count();
        targets.iter().filter(|t| **t != c).map(|t| shared(t)).max().unwrap_or(0).min(2)
    };
    let mut conditions = coded;
    conditions.sort_by_key(|c| std::cmp::Reverse(tail(c)));
    engine.routings(&s.location, &targets, &conditions).unwrap_or_default()
}

fn column(
    o: &mut String,
    s: &Source,
    p: &ColumnProfile,
    question: Option<&String>,
    is_wave: bool,
    routed: Option<&crate::engine::universe::Routing>,
    labels: &mut Labels,
) {
    let meta = s.meta(&p.name);
    let _ = writeln!(o, "[tables.columns.{}]", key(&p.name));
    if !p.numeric {
        let _ = writeln!(o, "# {}: citations cannot compute on it (only numbers).", line(&p.data_type));
    }
    if meta.label.is_empty() {
        let _ = writeln!(o, "# DECIDE: what the column holds, in words.");
    }
    let _ = writeln!(o, "label = {}", q(&meta.label));
    if let Some(question) = question {
        let _ = writeln!(o, "# GUESS: one question with its siblings (columns named {}…).", line(question));
        let _ = writeln!(o, "question = {}", q(question));
    }
    let mut values: BTreeMap<String, String> = BTreeMap::new();
    // SPSS labels past the cap stay in the file, which recite reads them from.
    let label_bytes: usize = meta.values.iter().map(|(k, v)| k.len() + v.len() + 8).sum();
    let too_many = meta.values.len() > MAX_VALUE_LABELS || label_bytes > labels.bytes_left;
    if p.numeric && too_many {
        let _ = writeln!(
            o,
            "# {} value labels in the SPSS file, left out here (over the cap): recite reads them from\n\
             # the file; declaring `values` replaces them.",
            meta.values.len()
        );
        labels.left_out.push(p.name.clone());
    } else if p.numeric {
        labels.bytes_left -= label_bytes;
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
    if let Some(r) = routed {
        universe(o, s, r);
    }
    let _ = writeln!(o);
}

/// `universe = …` for a routed column, as a guess: the condition's codes as a range where they
/// are its top or bottom codes, else as a list; named by the condition's label and the codes'.
fn universe(o: &mut String, s: &Source, r: &crate::engine::universe::Routing) {
    let all = s.profile(&r.condition).map(|p| p.values.clone()).unwrap_or_default();
    let quoted = crate::catalog::quote_ident(&r.condition);
    let k = r.codes.len();
    let filter = if all.len() > k && all[all.len() - k..] == r.codes[..] {
        format!("{quoted} >= {}", num(r.codes[0]))
    } else if all.len() > k && all[..k] == r.codes[..] {
        format!("{quoted} <= {}", num(r.codes[k - 1]))
    } else {
        let list: Vec<String> = r.codes.iter().map(|c| num(*c)).collect();
        format!("{quoted} IN ({})", list.join(", "))
    };
    let meta = s.meta(&r.condition);
    let who: Vec<String> =
        r.codes.iter().map(|c| meta.label_of(*c).map_or_else(|| num(*c), str::to_string)).collect();
    let of = if meta.label.is_empty() { r.condition.clone() } else { meta.label.clone() };
    let _ = writeln!(
        o,
        "# GUESS: asked only where {} is {} ({} rows answer it, none elsewhere): who answers it,\n\
         # which the answer audit reads as the population of its figures. DECIDE the name.",
        line(&r.condition),
        line(&who.join(" or ")),
        r.answered
    );
    let _ = writeln!(
        o,
        "universe = {{ name = {}, filter = {} }}",
        q(&format!("{of}: {}", who.join(" or "))),
        q(&filter)
    );
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

/// A TOML basic string on one line: quotes, backslashes and every control character escaped,
/// so no name or label can end the line, the string, or the key it is written as.
fn q(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(o, "\\u{:04X}", u32::from(c));
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A TOML key: bare when it can be, else a one-line quoted key (empty included).
fn key(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        s.to_string()
    } else {
        q(s)
    }
}

/// Text for a comment: control characters escaped, so it cannot end the comment's line.
fn line(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    s.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// A TOML number.
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 { format!("{}", v as i64) } else { format!("{v:?}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names no file should hold, and some do: every one must be written as TOML that parses
    /// back to itself.
    const HOSTILE: [&str; 22] = [
        "",
        "a\"b",
        "a\\b",
        "a\nb",
        "a\r\nb",
        "tab\there",
        "nul\u{0}",
        "del\u{7f}",
        "\u{1b}[31mred",
        "\u{85}next",
        "é",
        "日本語",
        "🎉",
        "'",
        "\"\"\"",
        "'''x",
        "a.b",
        "[x]",
        "#c",
        "k = v",
        " lead",
        "x\n[study]\nname = \"evil\"",
    ];

    #[test]
    fn generated_names_round_trip_as_toml_whatever_they_hold() {
        for name in HOSTILE {
            let text = format!(
                "# {}\n[t.{}]\nlabel = {}\nv = {{ {} = {} }}\n",
                line(name),
                key(name),
                q(name),
                q(name),
                q(name)
            );
            let parsed: toml::Table =
                toml::from_str(&text).unwrap_or_else(|e| panic!("{name:?}: {e}\n{text}"));
            let t = parsed["t"].as_table().unwrap();
            assert_eq!(t.keys().collect::<Vec<_>>(), [name], "{text}");
            assert_eq!(t[name]["label"].as_str(), Some(name), "{text}");
            assert_eq!(t[name]["v"][name].as_str(), Some(name), "{text}");
            assert_eq!(text.lines().count(), 4, "one line each: {text}");
        }
    }

    /// An Arrow IPC file of one whole-number column per name, in `dir`.
    fn arrow_file(dir: &Path, names: &[&str]) -> PathBuf {
        use datafusion::arrow::array::{ArrayRef, Int64Array};
        use datafusion::arrow::datatypes::{DataType, Field, Schema};
        let fields: Vec<Field> = names.iter().map(|n| Field::new(*n, DataType::Int64, true)).collect();
        let schema = std::sync::Arc::new(Schema::new(fields));
        let columns: Vec<ArrayRef> = names
            .iter()
            .enumerate()
            .map(|(i, _)| std::sync::Arc::new(Int64Array::from(vec![1, 2, i as i64 % 3])) as ArrayRef)
            .collect();
        let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
        let path = dir.join("hostile.arrow");
        let mut w = datafusion::arrow::ipc::writer::FileWriter::try_new(
            std::fs::File::create(&path).unwrap(),
            &schema,
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
        path
    }

    use datafusion::arrow::array::RecordBatch;

    #[test]
    fn starter_of_hostile_column_names_parses_back_with_every_name() {
        let dir = tempfile::tempdir().unwrap();
        let file = arrow_file(dir.path(), &HOSTILE);
        let out = dir.path().join("out");
        let text = starter(&[file], &out, None, &Engine::new()).unwrap();
        let parsed: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let columns = parsed["tables"][0]["columns"].as_table().unwrap();
        let mut written: Vec<&str> = columns.keys().map(String::as_str).collect();
        let mut want = HOSTILE.to_vec();
        written.sort_unstable();
        want.sort_unstable();
        assert_eq!(written, want);
        assert_eq!(parsed["study"]["name"].as_str(), Some("hostile"), "a name injected no [study]");
        crate::catalog::Study::parse(&text, &out.join("study.toml")).unwrap();
    }

    #[test]
    fn value_labels_past_the_cap_are_left_to_the_file() {
        use arrow_57::array::{ArrayRef, Float64Array};
        use arrow_57::datatypes::{DataType, Field, Schema};
        let schema = std::sync::Arc::new(Schema::new(vec![
            Field::new("many", DataType::Float64, true),
            Field::new("few", DataType::Float64, true),
        ]));
        let column = || std::sync::Arc::new(Float64Array::from(vec![1.0, 2.0, 3.0])) as ArrayRef;
        let batch =
            arrow_57::record_batch::RecordBatch::try_new(schema.clone(), vec![column(), column()]).unwrap();
        let mut meta = ambers::SpssMetadata::from_arrow_schema(&schema);
        let n = MAX_VALUE_LABELS + 500;
        let mut many = meta.variable_value_labels.get("many").cloned().unwrap_or_default();
        for i in 0..n {
            many.insert(ambers::Value::Numeric(i as f64), format!("label {i}"));
        }
        let mut few = meta.variable_value_labels.get("few").cloned().unwrap_or_default();
        few.insert(ambers::Value::Numeric(1.0), "one".to_string());
        meta.variable_value_labels.insert("many".into(), many);
        meta.variable_value_labels.insert("few".into(), few);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("labels.sav");
        let sink = std::fs::File::create(&file).unwrap();
        ambers::write_sav_to_writer(sink, &batch, &meta, ambers::Compression::None, None).unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        let text = starter(&[file], &out, None, &Engine::new()).unwrap();
        assert!(text.contains(&format!("# {n} value labels in the SPSS file, left out here")), "{text}");
        assert!(text.contains("values = { \"1\" = \"one\" }"), "{text}");
        assert!(!text.contains("label 1499"), "the labels past the cap are not written");
        assert!(text.contains("# Left out: the SPSS value labels of 1 columns (\"many\")"), "{text}");
        // Nothing is lost: the catalog reads them from the file.
        let mut study = crate::catalog::Study::parse(&text, &out.join("study.toml")).unwrap();
        crate::sav::adopt_dictionaries(&mut study);
        assert_eq!(study.tables[0].columns["many"].values.len(), n);
        assert_eq!(study.tables[0].columns["few"].values.len(), 1);
    }

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
