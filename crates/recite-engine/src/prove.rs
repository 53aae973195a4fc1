//! Proving a data layer against its data (`recite catalog check`): files exist, declared
//! columns and weights exist with the right types, every filter (period, base, breakdown cell)
//! and weight runs on the data within the size limits, no name belongs to two studies. What
//! passes here does not fail at run time.

use std::path::PathBuf;

use crate::catalog::{self, Catalog, Study};
use crate::citation::check_iso8601;
use crate::engine::Engine;

/// The proof of a whole data layer.
#[derive(Debug, Clone, Default)]
pub struct Proof {
    /// The folder proved.
    pub root: PathBuf,
    /// `study.toml` files that cannot be used, each with why.
    pub broken: Vec<(PathBuf, String)>,
    /// Names (or aliases) declared by several studies: each time, every owner's name and file.
    pub ambiguous: Vec<Vec<(String, PathBuf)>>,
    /// Every usable study, with its problems (none when proved).
    pub studies: Vec<StudyProof>,
}

impl Proof {
    /// True when the folder holds no `study.toml` at all.
    pub fn is_empty(&self) -> bool {
        self.studies.is_empty() && self.broken.is_empty()
    }

    /// How many errors: broken files, ambiguous names and study problems.
    pub fn errors(&self) -> usize {
        self.broken.len()
            + self.ambiguous.len()
            + self.studies.iter().map(|s| s.problems.len()).sum::<usize>()
    }

    /// The proof as `recite catalog check` prints it: one line per error or proved study.
    pub fn render(&self) -> String {
        use std::fmt::Write as _;
        let mut o = String::new();
        if self.is_empty() {
            let _ = writeln!(o, "no study.toml under {}", self.root.display());
            return o;
        }
        for (file, error) in &self.broken {
            let _ = writeln!(o, "✗ {}: {error}", file.display());
        }
        for owners in &self.ambiguous {
            let list: Vec<String> = owners.iter().map(|(n, f)| format!("{n:?} ({})", f.display())).collect();
            let _ = writeln!(
                o,
                "✗ one name (or alias) for several studies: {}; citations naming it are UNVERIFIABLE",
                list.join(" and ")
            );
        }
        for s in &self.studies {
            if s.problems.is_empty() {
                let _ = writeln!(
                    o,
                    "✓ {} ({}): {} table(s), {} period(s), {} base(s)",
                    s.name,
                    s.file.display(),
                    s.tables,
                    s.periods,
                    s.bases
                );
            }
            for p in &s.problems {
                let _ = writeln!(o, "✗ {}: {p}", s.file.display());
            }
        }
        let errors = self.errors();
        if errors > 0 {
            let _ = writeln!(o, "{errors} error(s)");
        }
        o
    }
}

/// One study, proved.
#[derive(Debug, Clone)]
pub struct StudyProof {
    /// The study's name.
    pub name: String,
    /// Its `study.toml`.
    pub file: PathBuf,
    /// Tables, periods and bases declared.
    pub tables: usize,
    /// Periods declared.
    pub periods: usize,
    /// Bases declared.
    pub bases: usize,
    /// What is wrong with it, each naming its entry.
    pub problems: Vec<Problem>,
}

/// One thing wrong with a study, naming its entry (`table "t": …`, `base "b": filter …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// What is wrong, in words.
    pub message: String,
    /// The declared name most likely meant, for a name that is not there.
    pub did_you_mean: Option<String>,
}

impl From<String> for Problem {
    fn from(message: String) -> Problem {
        Problem { message, did_you_mean: None }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        match &self.did_you_mean {
            Some(s) => write!(f, "; did you mean {s:?}?"),
            None => Ok(()),
        }
    }
}

/// Proves every study of `cat` against its data.
pub fn prove(cat: &Catalog, engine: &Engine) -> Proof {
    Proof {
        root: cat.root.clone(),
        broken: cat.broken.iter().map(|b| (b.file.clone(), b.error.clone())).collect(),
        ambiguous: cat.ambiguities().into_iter().map(|(_, owners)| owners).collect(),
        studies: cat
            .studies
            .iter()
            .map(|s| StudyProof {
                name: s.study.name.clone(),
                file: s.file.clone(),
                tables: s.tables.len(),
                periods: s.periods.len(),
                bases: s.bases.len(),
                problems: prove_study(s, engine),
            })
            .collect(),
    }
}

/// Every problem of one study, each naming its entry. Every declared filter and weight is run
/// against the data, so what passes here does not fail at run time.
pub fn prove_study(study: &Study, engine: &Engine) -> Vec<Problem> {
    let mut p: Vec<Problem> = Vec::new();
    let say = |p: &mut Vec<Problem>, message: String| p.push(message.into());
    if study.tables.is_empty() {
        say(&mut p, "declares no [[tables]]".into());
    }
    for period in &study.periods {
        if let Some(f) = &period.fielded
            && let Err(e) = check_iso8601(f)
        {
            say(&mut p, format!("period {:?}: {e}", period.name));
        }
    }
    if let Some(e) = study.too_many_cells() {
        say(&mut p, format!("{e} (every claim on the study would be UNVERIFIABLE)"));
    }
    // Size limits first, once per filter: a filter past them is never handed to DataFusion.
    let mut sized = |what: String, sql: &str| match catalog::check_filter_size(sql) {
        Ok(()) => true,
        Err(e) => {
            p.push(format!("{what}: filter {:?} {e}", catalog::shorten(sql)).into());
            false
        }
    };
    let periods: Vec<_> =
        study.periods.iter().filter(|x| sized(format!("period {:?}", x.name), &x.filter)).collect();
    let bases: Vec<_> =
        study.bases.iter().filter(|x| sized(format!("base {:?}", x.name), &x.filter)).collect();
    let cells: Vec<_> = study
        .cells()
        .filter(|(b, cell)| sized(format!("breakdown {:?} cell {:?}", b.name, cell.name), &cell.filter))
        .collect();
    for t in &study.tables {
        let at = format!("table {:?}", t.name);
        let schema = match crate::resolve::Schemas::schema(engine, study, t) {
            Ok(s) => s,
            Err(e) => {
                say(&mut p, format!("{at}: path {:?}: {e}", t.path));
                continue;
            }
        };
        // By name, once: Arrow looks a name up field by field, and a starter of a wide file
        // declares every column (20,000 lookups among 20,000 fields).
        let mut fields: std::collections::HashMap<&str, bool> = std::collections::HashMap::new();
        for f in schema.fields().iter() {
            fields.entry(f.name().as_str()).or_insert(f.data_type().is_numeric());
        }
        let numeric = |name: &str| fields.get(name).copied().ok_or(());
        for (name, col) in &t.columns {
            match numeric(name) {
                Err(_) => p.push(Problem {
                    message: format!("{at}: declared column {name:?} is not in {}", t.path),
                    did_you_mean: catalog::suggest(name, schema.fields().iter().map(|f| f.name().as_str()))
                        .into_iter()
                        .next(),
                }),
                Ok(false) if !col.values.is_empty() => {
                    say(&mut p, format!("{at}: column {name:?} has value labels but is not numeric"))
                }
                _ => {}
            }
            for k in col.values.keys() {
                if k.trim().parse::<f64>().is_err() {
                    say(&mut p, format!("{at}: column {name:?}: value label key {k:?} is not a number"));
                }
            }
        }
        let location = t.location(study);
        for w in &t.weights {
            match numeric(w) {
                Err(_) => say(&mut p, format!("{at}: weight {w:?} is not a column of {}", t.path)),
                Ok(false) => say(&mut p, format!("{at}: weight {w:?} is not numeric")),
                Ok(true) => {
                    if let Err(e) = engine.check_weight(&location, w) {
                        say(&mut p, format!("{at}: weight {w:?} {e}"));
                    }
                }
            }
        }
        // Replicate weights: the pattern, the method's needs, and each column as a weight (all
        // of them in one scan of the table).
        if let Some(r) = &t.replicates {
            match r.resolve(schema.fields().iter().map(|f| f.name().as_str())) {
                Err(e) => say(&mut p, format!("{at}: replicates: {e}")),
                Ok(rep) => {
                    let (numbers, other): (Vec<&str>, Vec<&str>) =
                        rep.columns.iter().map(String::as_str).partition(|w| numeric(w).unwrap_or(false));
                    for w in other {
                        say(&mut p, format!("{at}: replicate weight {w:?} is not numeric"));
                    }
                    for (w, checked) in numbers.iter().zip(engine.check_weights(&location, &numbers)) {
                        if let Err(e) = checked {
                            say(&mut p, format!("{at}: replicate weight {w:?} {e}"));
                        }
                    }
                }
            }
        }
        if let Some(d) = &t.design {
            for (role, c) in [("strata", &d.strata), ("psu", &d.psu)] {
                if numeric(c).is_err() {
                    say(&mut p, format!("{at}: design {role} column {c:?} is not a column of {}", t.path));
                }
            }
        }
        // {column} in a base filter is run with every declared numeric column a citation may
        // name (or, with none declared, the first numeric column of the table).
        let mut probes: Vec<String> =
            t.columns.keys().filter(|c| numeric(c).unwrap_or(false)).cloned().collect();
        if probes.is_empty() {
            probes.extend(
                schema.fields().iter().find(|f| f.data_type().is_numeric()).map(|f| f.name().clone()),
            );
        }
        for period in &periods {
            if let Err(e) = engine.check_filter(&location, &period.filter) {
                say(&mut p, format!("period {:?}: filter {:?} on {at}: {e}", period.name, period.filter));
            }
        }
        for base in &bases {
            let columns: Vec<&String> = if base.filter.contains("{column}") {
                probes.iter().collect()
            } else {
                probes.iter().take(1).collect()
            };
            for column in columns {
                if let Err(e) = engine.check_filter(&location, &catalog::base_filter(base, column)) {
                    let with = if base.filter.contains("{column}") {
                        format!(" with {{column}} = {column:?}")
                    } else {
                        String::new()
                    };
                    say(&mut p, format!("base {:?}: filter {:?}{with} on {at}: {e}", base.name, base.filter));
                    break;
                }
            }
        }
        // A declared universe is read by the answer audit as who answered: it must be true of
        // every row that holds an answer.
        for (name, col) in &t.columns {
            let Some(u) = &col.universe else { continue };
            let what = format!("{at}: column {name:?}: universe {:?}", u.name);
            if numeric(name).is_err() {
                continue;
            }
            if let Err(e) = catalog::check_filter_size(&u.filter) {
                say(&mut p, format!("{what}: filter {:?} {e}", catalog::shorten(&u.filter)));
                continue;
            }
            match engine.check_universe(&location, name, col, &u.filter) {
                Err(e) => say(&mut p, format!("{what}: filter {:?}: {e}", u.filter)),
                Ok(c) if c.outside > 0 => say(
                    &mut p,
                    format!(
                        "{what}: {} of the {} rows that answer it are outside its filter {:?}: \
                         the question is asked of more people than that",
                        c.outside, c.answered, u.filter
                    ),
                ),
                Ok(_) => {}
            }
        }
        for (b, cell) in &cells {
            if let Err(e) = engine.check_filter(&location, &cell.filter) {
                say(
                    &mut p,
                    format!(
                        "breakdown {:?} cell {:?}: filter {:?} on {at}: {e}",
                        b.name, cell.name, cell.filter
                    ),
                );
            }
        }
    }
    p
}
