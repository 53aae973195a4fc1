//! The data layer: studies declared in `study.toml` files (see `docs/catalog.md`).
//!
//! Every name a citation uses is looked up here. Look-ups return the catalog's own entry, so
//! what reaches the engine is always a declared name, never the citation's text. Names people
//! write (study, period, base) match case- and space-insensitively; identifiers (table, column,
//! weight) match exactly, with case-insensitive matches offered as suggestions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// Every study found under a data root.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// The folder the studies were loaded from.
    pub root: PathBuf,
    /// The studies, sorted by name.
    pub studies: Vec<Study>,
}

/// One `study.toml`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Study {
    /// Name, aliases and description.
    pub study: StudyHeader,
    /// Small-base thresholds.
    #[serde(default)]
    pub thresholds: Thresholds,
    /// The tables of the study.
    #[serde(default)]
    pub tables: Vec<Table>,
    /// The declared periods (waves, date ranges, versions).
    #[serde(default)]
    pub periods: Vec<Period>,
    /// The declared bases (populations).
    #[serde(default)]
    pub bases: Vec<BaseDef>,
    /// Breakdowns whose cells are audited for small bases.
    #[serde(default)]
    pub breakdowns: Vec<Breakdown>,
    /// How the weights were made; free-form, shown by `catalog show`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weighting: Option<toml::Table>,
    /// The `study.toml` this came from.
    #[serde(skip)]
    pub file: PathBuf,
}

/// `[study]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StudyHeader {
    /// The name citations use.
    pub name: String,
    /// Other accepted names.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// One line on what the study is.
    #[serde(default)]
    pub description: String,
}

/// `[thresholds]`: small-base warnings on the unweighted count.
#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    /// Under this, a base is "low" (default 100).
    #[serde(default = "default_low")]
    pub low: u64,
    /// Under this, a base is "very low" (default 50).
    #[serde(default = "default_very_low")]
    pub very_low: u64,
}

fn default_low() -> u64 {
    100
}
fn default_very_low() -> u64 {
    50
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds { low: default_low(), very_low: default_very_low() }
    }
}

/// `[[tables]]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    /// The name citations use in `source.table`.
    pub name: String,
    /// File path or glob, relative to the `study.toml`.
    pub path: String,
    /// The only columns a citation may name as its weight.
    #[serde(default)]
    pub weights: Vec<String>,
    /// A sampling design, when the data has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub design: Option<Design>,
    /// Column metadata: labels, value labels, missing codes.
    #[serde(default)]
    pub columns: BTreeMap<String, Column>,
}

/// A stratified cluster design (PSUs sampled with replacement within strata).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Design {
    /// The stratum column.
    pub strata: String,
    /// The primary sampling unit column (numbered within stratum or globally).
    pub psu: String,
}

/// `[tables.columns.NAME]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Column {
    /// What the column holds, in words.
    #[serde(default)]
    pub label: String,
    /// The question the column belongs to; columns of one question are siblings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// Value labels, code → label (TOML keys are strings).
    #[serde(default)]
    pub values: BTreeMap<String, String>,
    /// Codes that mean no answer: excluded from the base, like nulls.
    #[serde(default)]
    pub missing: Vec<f64>,
    /// The code set that `extractShare` counts.
    #[serde(default)]
    pub share: Vec<f64>,
    /// The answer scale `[min, max]`, when the labels do not span it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<[f64; 2]>,
}

impl Column {
    /// Labelled codes in ascending order, missing codes left out. Keys that are not numbers
    /// are reported by `catalog check`.
    pub fn codes(&self) -> Vec<(f64, String)> {
        let mut codes: Vec<(f64, String)> = self
            .values
            .iter()
            .filter_map(|(k, v)| k.trim().parse::<f64>().ok().map(|c| (c, v.clone())))
            .filter(|(c, _)| !self.missing.contains(c))
            .collect();
        codes.sort_by(|a, b| a.0.total_cmp(&b.0));
        codes
    }

    /// The label of a code, if declared.
    pub fn label_of(&self, code: f64) -> Option<&str> {
        self.values.iter().find(|(k, _)| k.trim().parse::<f64>().ok() == Some(code)).map(|(_, v)| v.as_str())
    }

    /// The answer scale: declared, or spanned by the labelled codes.
    pub fn scale(&self) -> Option<[f64; 2]> {
        self.scale.or_else(|| {
            let codes = self.codes();
            Some([codes.first()?.0, codes.last()?.0])
        })
    }
}

/// `[[periods]]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Period {
    /// The name citations use in `period`.
    pub name: String,
    /// Other accepted names (e.g. `W6`).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// SQL filter selecting the period's rows (trusted: written by the data-layer owner).
    pub filter: String,
    /// When it was fielded (ISO-8601 date or interval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fielded: Option<String>,
}

/// `[[bases]]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BaseDef {
    /// The name citations use in `base.name`.
    pub name: String,
    /// Other accepted names.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// SQL filter; `{column}` stands for the cited column (quoted).
    pub filter: String,
}

/// `[[breakdowns]]`: cells audited for small bases.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Breakdown {
    /// E.g. `age band`.
    pub name: String,
    /// The cells.
    pub cells: Vec<Cell>,
}

/// One cell of a breakdown.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Cell {
    /// E.g. `65-74`.
    pub name: String,
    /// SQL filter selecting the cell.
    pub filter: String,
}

/// A failed look-up: what was asked, what kind of thing, and the nearest declared names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotFound {
    /// `study`, `period`, `table`, `column`, `weight`, `base`, `function`, `measure`.
    pub what: &'static str,
    /// The name asked for (shortened for display).
    pub asked: String,
    /// Where it was looked for, e.g. `study "Versant Mega Tracker"`.
    pub scope: String,
    /// Declared names nearest to it, best first.
    pub suggestions: Vec<String>,
    /// How many names are declared there.
    pub declared: usize,
}

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown {} {:?}", self.what, self.asked)?;
        if !self.scope.is_empty() {
            write!(f, " in {}", self.scope)?;
        }
        match self.suggestions.as_slice() {
            [] if self.declared == 0 => write!(f, " (none is declared)"),
            [] => Ok(()),
            [one] => write!(f, "; did you mean {one:?}?"),
            many => {
                let quoted: Vec<String> = many.iter().map(|s| format!("{s:?}")).collect();
                write!(f, "; did you mean one of {}?", quoted.join(", "))
            }
        }
    }
}

/// Shortens a name for messages, so a 10 MB string never floods a report.
pub fn shorten(s: &str) -> String {
    const MAX: usize = 80;
    if s.len() <= MAX {
        s.to_string()
    } else {
        format!("{}… ({} bytes)", &s[..s.floor_char_boundary(MAX)], s.len())
    }
}

/// Names folded for human matching: lower case, runs of spaces and punctuation as one space.
pub fn fold_human(s: &str) -> String {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The declared names nearest to `asked`, best first (at most 3).
pub fn suggest<'a>(asked: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    // Distances on long strings are costly and meaningless: nothing declared is that long.
    if asked.len() > 200 {
        return Vec::new();
    }
    let a = asked.to_lowercase();
    let mut scored: Vec<(f64, String)> = names
        .into_iter()
        .map(|n| {
            let score = strsim::jaro_winkler(&a, &n.to_lowercase());
            let bonus =
                if n.to_lowercase().contains(&a) || a.contains(&n.to_lowercase()) { 0.1 } else { 0.0 };
            (score + bonus, n.to_string())
        })
        .filter(|(s, _)| *s >= 0.75)
        .collect();
    scored.sort_by(|x, y| y.0.total_cmp(&x.0).then_with(|| x.1.cmp(&y.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, n)| n).collect()
}

fn not_found<'a>(
    what: &'static str,
    asked: &str,
    scope: String,
    names: impl IntoIterator<Item = &'a str> + Clone,
) -> NotFound {
    NotFound {
        what,
        asked: shorten(asked),
        scope,
        declared: names.clone().into_iter().count(),
        suggestions: suggest(asked, names),
    }
}

impl Catalog {
    /// Loads every `study.toml` in `root` and in its immediate sub-folders.
    pub fn load(root: &Path) -> Result<Catalog> {
        if !root.is_dir() {
            bail!("data folder {} does not exist (set --data DIR or RECITE_DATA)", root.display());
        }
        let mut files = Vec::new();
        if root.join("study.toml").is_file() {
            files.push(root.join("study.toml"));
        }
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
            .with_context(|| format!("reading data folder {}", root.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("study.toml").is_file())
            .collect();
        dirs.sort();
        files.extend(dirs.into_iter().map(|d| d.join("study.toml")));
        let mut studies = Vec::new();
        for file in files {
            studies.push(Study::load(&file)?);
        }
        studies.sort_by(|a, b| a.study.name.cmp(&b.study.name));
        for pair in studies.windows(2) {
            if fold_human(&pair[0].study.name) == fold_human(&pair[1].study.name) {
                bail!(
                    "two studies are named {:?}: {} and {}",
                    pair[1].study.name,
                    pair[0].file.display(),
                    pair[1].file.display()
                );
            }
        }
        Ok(Catalog { root: root.to_path_buf(), studies })
    }

    /// The study a citation names, by name or alias.
    pub fn study(&self, name: &str) -> Result<&Study, NotFound> {
        let f = fold_human(name);
        self.studies
            .iter()
            .find(|s| fold_human(&s.study.name) == f || s.study.aliases.iter().any(|a| fold_human(a) == f))
            .ok_or_else(|| {
                not_found(
                    "study",
                    name,
                    format!("data folder {}", self.root.display()),
                    self.studies
                        .iter()
                        .flat_map(|s| std::iter::once(&s.study.name).chain(&s.study.aliases))
                        .map(String::as_str),
                )
            })
    }
}

impl Study {
    /// Reads and parses one `study.toml`; errors name the file and the entry.
    pub fn load(file: &Path) -> Result<Study> {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let mut study: Study =
            toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
        study.file = file.to_path_buf();
        Ok(study)
    }

    /// The folder relative paths are resolved against.
    pub fn dir(&self) -> &Path {
        self.file.parent().unwrap_or(Path::new("."))
    }

    fn scope(&self) -> String {
        format!("study {:?}", self.study.name)
    }

    /// The table a citation names.
    pub fn table(&self, name: &str) -> Result<&Table, NotFound> {
        self.tables.iter().find(|t| t.name == name).ok_or_else(|| {
            not_found("table", name, self.scope(), self.tables.iter().map(|t| t.name.as_str()))
        })
    }

    /// The period a citation names, by name or alias.
    pub fn period(&self, name: &str) -> Result<&Period, NotFound> {
        let f = fold_human(name);
        self.periods
            .iter()
            .find(|p| fold_human(&p.name) == f || p.aliases.iter().any(|a| fold_human(a) == f))
            .ok_or_else(|| {
                not_found("period", name, self.scope(), self.periods.iter().map(|p| p.name.as_str()))
            })
    }

    /// The base a citation names, by name or alias.
    pub fn base(&self, name: &str) -> Result<&BaseDef, NotFound> {
        let f = fold_human(name);
        self.bases
            .iter()
            .find(|b| fold_human(&b.name) == f || b.aliases.iter().any(|a| fold_human(a) == f))
            .ok_or_else(|| not_found("base", name, self.scope(), self.bases.iter().map(|b| b.name.as_str())))
    }

    /// The period before and after `period`, in declared order.
    pub fn neighbours(&self, period: &Period) -> (Option<&Period>, Option<&Period>) {
        let i = self.periods.iter().position(|p| p.name == period.name);
        match i {
            Some(i) => (i.checked_sub(1).map(|j| &self.periods[j]), self.periods.get(i + 1)),
            None => (None, None),
        }
    }
}

impl Table {
    /// The weight a citation names: only declared weights are accepted.
    pub fn weight(&self, name: &str) -> Result<&str, NotFound> {
        self.weights.iter().find(|w| *w == name).map(String::as_str).ok_or_else(|| {
            not_found(
                "weight",
                name,
                format!("table {:?}", self.name),
                self.weights.iter().map(String::as_str),
            )
        })
    }

    /// The table's files: the path resolved against the study folder (a glob stays a glob).
    pub fn location(&self, study: &Study) -> PathBuf {
        study.dir().join(&self.path)
    }

    /// The metadata of a column (default when undeclared).
    pub fn column_meta(&self, name: &str) -> Column {
        self.columns.get(name).cloned().unwrap_or_default()
    }

    /// Columns of the same question as `column`, in declared order, `column` left out.
    pub fn siblings(&self, column: &str) -> Vec<&str> {
        let Some(q) = self.columns.get(column).and_then(|c| c.question.as_deref()) else { return Vec::new() };
        let mut s: Vec<&str> = self
            .columns
            .iter()
            .filter(|(n, c)| *n != column && c.question.as_deref() == Some(q))
            .map(|(n, _)| n.as_str())
            .collect();
        // Natural order, so s14r10 comes after s14r9.
        s.sort_by_key(|n| natural_key(n));
        s
    }
}

/// A sort key that orders embedded numbers by value.
pub fn natural_key(s: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut num: Option<u64> = None;
    for c in s.chars() {
        if let Some(d) = c.to_digit(10) {
            num = Some(num.unwrap_or(0).saturating_mul(10).saturating_add(d as u64));
        } else {
            if let Some(n) = num.take() {
                out.push((std::mem::take(&mut text), n));
            }
            text.push(c);
        }
    }
    out.push((text, num.unwrap_or(0)));
    out
}

/// The SQL identifier for a column: always quoted, quotes doubled, so no name can escape it.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A base filter with `{column}` replaced by the cited column's quoted identifier.
pub fn base_filter(base: &BaseDef, column: &str) -> String {
    base.filter.replace("{column}", &quote_ident(column))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_cannot_be_escaped() {
        assert_eq!(quote_ident(r#"s14r5"; DROP TABLE x; --"#), r#""s14r5""; DROP TABLE x; --""#);
    }

    #[test]
    fn suggestions_prefer_near_names() {
        let names = ["W5 (March 2026)", "W6 (April 2026)", "W7 (May 2026)"];
        assert_eq!(suggest("W6 (Apr 2026)", names)[0], "W6 (April 2026)");
        assert!(suggest(&"x".repeat(10_000_000), names).is_empty());
    }

    #[test]
    fn natural_order_of_columns() {
        let mut v = vec!["s14r10", "s14r2", "s14r1"];
        v.sort_by_key(|n| natural_key(n));
        assert_eq!(v, ["s14r1", "s14r2", "s14r10"]);
    }
}
