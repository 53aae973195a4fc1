//! The registry of extractor functions, declared as data in `extractors/*.toml`.
//!
//! An extractor is a list of measures of a few kinds (share, mean, ratio, difference, count,
//! total), each over the base rows. Templates (`each = "stage"`, `{label}`, `{code}`) are
//! expanded against the cited column's catalog metadata, so one declaration serves every
//! brand's funnel. Predicates are a tiny language over the cited column `x`, parsed here into
//! [`Pred`] values: numbers only, so nothing from a citation or a label can reach SQL.

use std::num::ParseFloatError;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::catalog::{Column, NotFound, suggest};

/// The extractors that ship with recite, compiled into the binary.
const BUNDLED: &[(&str, &str)] = &[
    ("extractors/funnel.toml", include_str!("../extractors/funnel.toml")),
    ("extractors/share.toml", include_str!("../extractors/share.toml")),
    ("extractors/topbox.toml", include_str!("../extractors/topbox.toml")),
    ("extractors/top2box.toml", include_str!("../extractors/top2box.toml")),
    ("extractors/mean.toml", include_str!("../extractors/mean.toml")),
    ("extractors/nps.toml", include_str!("../extractors/nps.toml")),
    ("extractors/distribution.toml", include_str!("../extractors/distribution.toml")),
];

/// One extractor file.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Extractor {
    /// The function name citations use in `source.function`.
    pub name: String,
    /// What it computes, in one line.
    pub summary: String,
    /// What the cited column must declare in the catalog.
    #[serde(default)]
    pub needs: Needs,
    /// The measures, in report order.
    pub measures: Vec<MeasureDef>,
    /// The file it came from.
    #[serde(skip)]
    pub file: String,
}

/// Column metadata an extractor relies on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Needs {
    /// Nothing.
    #[default]
    None,
    /// Value labels (funnel stages, distribution codes).
    Labels,
    /// A declared `share` code set.
    Share,
    /// An answer scale (declared or spanned by labels).
    Scale,
}

/// How a measure template repeats over the column's codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Each {
    /// Every labelled code.
    Code,
    /// Every labelled code but the lowest (funnel stages above "not aware").
    Stage,
    /// Each pair of adjacent stages: `{code}` then `{next}`.
    Step,
}

/// A measure as declared: exactly one of the kind fields is set.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MeasureDef {
    /// Name template.
    pub name: String,
    /// Other names a result may use for it (templates too).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Repetition over codes.
    #[serde(default)]
    pub each: Option<Each>,
    /// `share = "PRED"`: Σw·1\[pred\] / Σw.
    #[serde(default)]
    pub share: Option<String>,
    /// `mean = "x"`: Σw·x / Σw.
    #[serde(default)]
    pub mean: Option<String>,
    /// `ratio = ["NUM", "DEN"]`: Σw·1\[num\] / Σw·1\[den\].
    #[serde(default)]
    pub ratio: Option<[String; 2]>,
    /// `difference = ["A", "B"]`: scale·(A − B), over measures named earlier.
    #[serde(default)]
    pub difference: Option<[String; 2]>,
    /// Multiplier of a difference (100 for points).
    #[serde(default)]
    pub scale: Option<f64>,
    /// `count = true`: Σw.
    #[serde(default)]
    pub count: Option<bool>,
    /// `total = "x"`: Σw·x.
    #[serde(default)]
    pub total: Option<String>,
}

/// A comparison in a predicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Op {
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Op {
    /// The SQL spelling.
    pub fn sql(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ne => "<>",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }
}

/// One clause over the cited column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Clause {
    /// `x OP value`.
    Cmp(Op, f64),
    /// `x in [a, b, …]`.
    In(Vec<f64>),
}

/// A conjunction of clauses over the cited column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pred(pub Vec<Clause>);

impl std::fmt::Display for Pred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, c) in self.0.iter().enumerate() {
            if i > 0 {
                write!(f, " and ")?;
            }
            match c {
                Clause::Cmp(op, v) => write!(f, "x {} {}", op.sql(), num(*v))?,
                Clause::In(vs) => {
                    let list: Vec<String> = vs.iter().map(|v| num(*v)).collect();
                    write!(f, "x in [{}]", list.join(", "))?
                }
            }
        }
        Ok(())
    }
}

impl Pred {
    /// Whether the value `x` satisfies the predicate.
    pub fn matches(&self, x: f64) -> bool {
        self.0.iter().all(|c| match c {
            Clause::Cmp(op, v) => match op {
                Op::Eq => x == *v,
                Op::Ne => x != *v,
                Op::Lt => x < *v,
                Op::Le => x <= *v,
                Op::Gt => x > *v,
                Op::Ge => x >= *v,
            },
            Clause::In(vs) => vs.contains(&x),
        })
    }

    /// The conjunction of two predicates, simplified so equal conditions are spelled alike:
    /// identical clauses once, `x >= a and x >= b` as `x >= max(a, b)` (likewise <=, >, <),
    /// clauses in a fixed order. Aggregates are shared by their spelling, so this is what lets
    /// Σw²·1[x ≥ 3]·1[x ≥ 3] and Σw²·1[x ≥ 3] be computed once.
    pub fn and(&self, other: &Pred) -> Pred {
        let mut out: Vec<Clause> = Vec::new();
        for c in self.0.iter().chain(&other.0) {
            let merged = out.iter_mut().find_map(|o| match (o, c) {
                (Clause::Cmp(op_o, v_o), Clause::Cmp(op_c, v_c)) if op_o == op_c => match op_c {
                    Op::Ge | Op::Gt => {
                        *v_o = v_o.max(*v_c);
                        Some(())
                    }
                    Op::Le | Op::Lt => {
                        *v_o = v_o.min(*v_c);
                        Some(())
                    }
                    _ if v_o == v_c => Some(()),
                    _ => None,
                },
                (o, c) if o == c => Some(()),
                _ => None,
            });
            if merged.is_none() {
                out.push(c.clone());
            }
        }
        out.sort_by_key(|c| format!("{c:?}"));
        Pred(out)
    }
}

pub use crate::catalog::num;

/// What a measure computes, expanded for one column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Kind {
    /// Σw·1\[pred\] / Σw.
    Share(Pred),
    /// Σw·x / Σw.
    Mean,
    /// Σw·1\[num\] / Σw·1\[den\].
    Ratio(Pred, Pred),
    /// scale·(m\[a\] − m\[b\]), indices of earlier measures.
    Difference {
        /// The first measure.
        a: usize,
        /// The measure subtracted.
        b: usize,
        /// The multiplier.
        scale: f64,
    },
    /// Σw.
    Count,
    /// Σw·x.
    Total,
}

/// The unit a measure is in, which decides how claims are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// A fraction in [0, 1]; claims may be fractions or percents.
    Proportion,
    /// The column's own units (means, totals, counts, differences in points).
    Value,
}

/// A measure expanded for one column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measure {
    /// Its name, e.g. `Considered` or `Aware → Familiar`.
    pub name: String,
    /// Other names a result may use.
    pub aliases: Vec<String>,
    /// What it computes.
    pub kind: Kind,
}

impl Measure {
    /// The unit of the measure's value.
    pub fn unit(&self) -> Unit {
        match self.kind {
            Kind::Share(_) | Kind::Ratio(..) => Unit::Proportion,
            _ => Unit::Value,
        }
    }

    /// Whether a result key names this measure (names folded to letters and digits).
    pub fn answers_to(&self, key: &str) -> bool {
        self.answers_to_folded(&crate::claim::fold(key))
    }

    /// [`Measure::answers_to`] of a key already folded ([`crate::claim::fold`]): its names
    /// are folded as they are compared, into no new string (once per claim and measure).
    pub fn answers_to_folded(&self, folded: &str) -> bool {
        !folded.is_empty()
            && std::iter::once(&self.name).chain(&self.aliases).any(|n| crate::claim::folds_to(n, folded))
    }
}

/// All registered extractors.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    /// By name, in load order.
    pub extractors: Vec<Extractor>,
}

impl Registry {
    /// The bundled extractors, plus every `*.toml` in `extra` (which may override by name).
    pub fn load(extra: Option<&Path>) -> Result<Registry, RegistryError> {
        let mut reg = Registry::default();
        for (file, text) in BUNDLED {
            reg.add(file, text)?;
        }
        if let Some(dir) = extra {
            let mut files: Vec<_> = std::fs::read_dir(dir)
                .map_err(|source| RegistryError::ReadFolder { folder: dir.to_path_buf(), source })?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .collect();
            files.sort();
            for f in files {
                let text = std::fs::read_to_string(&f)
                    .map_err(|source| RegistryError::ReadFile { file: f.clone(), source })?;
                reg.add(&f.display().to_string(), &text)?;
            }
        }
        Ok(reg)
    }

    /// Adds one extractor declared in TOML `text` (from `file`, for messages), replacing one of
    /// the same name; refused when it does not parse or validate.
    pub fn add(&mut self, file: &str, text: &str) -> Result<(), RegistryError> {
        let mut ex: Extractor =
            toml::from_str(text).map_err(|error| RegistryError::Parse { file: file.to_string(), error })?;
        ex.file = file.to_string();
        ex.validate().map_err(|source| RegistryError::Invalid {
            file: file.to_string(),
            extractor: ex.name.clone(),
            source,
        })?;
        self.extractors.retain(|e| e.name != ex.name);
        self.extractors.push(ex);
        Ok(())
    }

    /// The extractor a citation names (exact name).
    pub fn get(&self, name: &str) -> Result<&Extractor, NotFound> {
        self.extractors.iter().find(|e| e.name == name).ok_or_else(|| {
            let names = self.extractors.iter().map(|e| e.name.as_str());
            let mut suggestions = suggest(name, names.clone());
            if suggestions.is_empty() {
                suggestions = names.map(str::to_string).collect();
            }
            NotFound {
                what: "function",
                asked: crate::catalog::shorten(name),
                scope: "the extractor registry".into(),
                declared: self.extractors.len(),
                suggestions,
            }
        })
    }
}

impl Extractor {
    /// Checks the declaration once at load time, against a column with a six-point scale.
    fn validate(&self) -> Result<(), ExpandError> {
        if self.measures.is_empty() {
            return Err(ExpandError::NoMeasures);
        }
        let probe = Column {
            values: (0..6).map(|c| (c.to_string(), format!("code {c}"))).collect(),
            share: vec![1.0],
            ..Column::default()
        };
        self.expand(&probe).map(|_| ())
    }

    /// Expands the measures for one column's metadata.
    pub fn expand(&self, column: &Column) -> Result<Vec<Measure>, ExpandError> {
        let codes = column.codes();
        match self.needs {
            Needs::Labels if codes.len() < 2 => {
                return Err(ExpandError::NeedsLabels { extractor: self.name.clone() });
            }
            Needs::Share if column.share.is_empty() => {
                return Err(ExpandError::NeedsShare { extractor: self.name.clone() });
            }
            Needs::Scale if column.scale().is_none() => {
                return Err(ExpandError::NeedsScale { extractor: self.name.clone() });
            }
            _ => {}
        }
        let scale = column.scale();
        let mut out: Vec<Measure> = Vec::new();
        for def in &self.measures {
            let vars: Vec<Vec<(&str, String)>> = match def.each {
                None => vec![vec![]],
                Some(Each::Code) => {
                    codes.iter().map(|(c, l)| vec![("code", num(*c)), ("label", l.clone())]).collect()
                }
                Some(Each::Stage) => {
                    codes.iter().skip(1).map(|(c, l)| vec![("code", num(*c)), ("label", l.clone())]).collect()
                }
                Some(Each::Step) => codes
                    .iter()
                    .skip(1)
                    .zip(codes.iter().skip(2))
                    .map(|((c, l), (n, nl))| {
                        vec![
                            ("code", num(*c)),
                            ("label", l.clone()),
                            ("next", num(*n)),
                            ("next_label", nl.clone()),
                        ]
                    })
                    .collect(),
            };
            for mut v in vars {
                if let Some([lo, hi]) = scale {
                    v.push(("top", num(hi)));
                    v.push(("top2", num((hi - 1.0).max(lo))));
                }
                let share_set: Vec<String> = column.share.iter().map(|c| num(*c)).collect();
                v.push(("share", format!("[{}]", share_set.join(", "))));
                let fill = |t: &str| fill(t, &v);
                let kind = match (&def.share, &def.mean, &def.ratio, &def.difference, def.count, &def.total) {
                    (Some(p), None, None, None, None, None) => Kind::Share(parse_pred(&fill(p)?)?),
                    (None, Some(_), None, None, None, None) => Kind::Mean,
                    (None, None, Some([a, b]), None, None, None) => {
                        Kind::Ratio(parse_pred(&fill(a)?)?, parse_pred(&fill(b)?)?)
                    }
                    (None, None, None, Some([a, b]), None, None) => {
                        let find = |n: &str| -> Result<usize, ExpandError> {
                            let n = fill(n)?;
                            out.iter().position(|m| m.name == n).ok_or(ExpandError::UndeclaredDifference(n))
                        };
                        Kind::Difference { a: find(a)?, b: find(b)?, scale: def.scale.unwrap_or(1.0) }
                    }
                    (None, None, None, None, Some(true), None) => Kind::Count,
                    (None, None, None, None, None, Some(_)) => Kind::Total,
                    _ => return Err(ExpandError::NotOneKind { measure: def.name.clone() }),
                };
                let name = fill(&def.name)?;
                let aliases = def.aliases.iter().map(|a| fill(a)).collect::<Result<Vec<_>, _>>()?;
                out.push(Measure { name, aliases, kind });
            }
        }
        Ok(out)
    }
}

/// Replaces `{var}` in a template; an unknown variable is an error in the extractor file.
fn fill(template: &str, vars: &[(&str, String)]) -> Result<String, TemplateError> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find('}')
            .ok_or_else(|| TemplateError::Unclosed { template: template.to_string() })?
            + start;
        let var = &rest[start + 1..end];
        let value = vars.iter().find(|(k, _)| *k == var).ok_or_else(|| TemplateError::Unavailable {
            var: var.to_string(),
            template: template.to_string(),
        })?;
        out.push_str(&value.1);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Parses `x >= 3`, `x in [4, 5]`, `x >= 7 and x <= 8`.
pub fn parse_pred(text: &str) -> Result<Pred, PredicateError> {
    let text_owned = || text.to_string();
    let mut clauses = Vec::new();
    for part in text.split(" and ") {
        let part = part.trim();
        let rest = part.strip_prefix('x').ok_or_else(|| PredicateError::NoX { predicate: text_owned() })?;
        let rest = rest.trim_start();
        if let Some(list) = rest.strip_prefix("in") {
            let list = list.trim();
            let inner = list
                .strip_prefix('[')
                .and_then(|l| l.strip_suffix(']'))
                .ok_or_else(|| PredicateError::NotAList { predicate: text_owned() })?;
            let values = inner
                .split(',')
                .filter(|s| !s.trim().is_empty())
                .map(|s| {
                    s.trim().parse::<f64>().map_err(|source| PredicateError::NotANumber {
                        predicate: text_owned(),
                        value: s.to_string(),
                        source,
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            if values.is_empty() {
                return Err(PredicateError::EmptyList { predicate: text_owned() });
            }
            clauses.push(Clause::In(values));
            continue;
        }
        let (op, value) =
            [("!=", Op::Ne), (">=", Op::Ge), ("<=", Op::Le), ("=", Op::Eq), (">", Op::Gt), ("<", Op::Lt)]
                .iter()
                .find_map(|(s, op)| rest.strip_prefix(s).map(|v| (*op, v.trim())))
                .ok_or_else(|| PredicateError::NoComparison { predicate: text_owned() })?;
        let value: f64 = value.parse().map_err(|source| PredicateError::NotANumber {
            predicate: text_owned(),
            value: value.to_string(),
            source,
        })?;
        clauses.push(Clause::Cmp(op, value));
    }
    Ok(Pred(clauses))
}

/// Why the registry could not be loaded or an extractor added to it.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The extractors folder cannot be listed.
    #[error("reading extractors folder {}", folder.display())]
    ReadFolder {
        /// The folder (`--extractors`).
        folder: PathBuf,
        /// Why it cannot be listed.
        source: std::io::Error,
    },
    /// An extractor file cannot be read.
    #[error("reading {}", file.display())]
    ReadFile {
        /// The file.
        file: PathBuf,
        /// Why it cannot be read.
        source: std::io::Error,
    },
    /// An extractor file is not valid TOML for an extractor (the message names the line).
    #[error("{file}: {error}")]
    Parse {
        /// The file, as messages name it.
        file: String,
        /// TOML's error (in the message, not a cause: it is the whole of what is wrong).
        error: toml::de::Error,
    },
    /// An extractor parses but does not expand on a six-point scale.
    #[error("{file}: extractor {extractor:?}")]
    Invalid {
        /// The file, as messages name it.
        file: String,
        /// The extractor's name.
        extractor: String,
        /// What is wrong with it.
        source: ExpandError,
    },
}

/// Why an extractor's measures cannot be expanded for a column.
#[derive(Debug, thiserror::Error)]
pub enum ExpandError {
    /// The extractor declares no measure.
    #[error("declares no measures")]
    NoMeasures,
    /// The extractor needs value labels the column lacks.
    #[error("{extractor} needs value labels on the column (at least two labelled codes)")]
    NeedsLabels {
        /// The extractor's name.
        extractor: String,
    },
    /// The extractor needs the column's code set.
    #[error("{extractor} needs the column to declare its code set (`share = [...]` in study.toml)")]
    NeedsShare {
        /// The extractor's name.
        extractor: String,
    },
    /// The extractor needs an answer scale.
    #[error("{extractor} needs an answer scale (`scale = [min, max]` or value labels)")]
    NeedsScale {
        /// The extractor's name.
        extractor: String,
    },
    /// A difference names a measure not declared before it.
    #[error("difference names {0:?}, which is not declared before it")]
    UndeclaredDifference(String),
    /// A measure sets none or several of the kinds.
    #[error("measure {measure:?} must set exactly one of share, mean, ratio, difference, count, total")]
    NotOneKind {
        /// The measure's name (its template).
        measure: String,
    },
    /// A name or predicate template does not fill.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// A predicate does not parse.
    #[error(transparent)]
    Predicate(#[from] PredicateError),
}

/// A `{var}` template that cannot be filled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// A `{` without its `}`.
    #[error("unclosed {{ in {template:?}")]
    Unclosed {
        /// The template.
        template: String,
    },
    /// A variable the measure does not provide (e.g. `{next}` outside `each = "step"`).
    #[error("{{{var}}} in {template:?} is not available here")]
    Unavailable {
        /// The variable.
        var: String,
        /// The template.
        template: String,
    },
}

/// A predicate over `x` that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PredicateError {
    /// A clause that does not start with `x`.
    #[error("predicate {predicate:?}: each clause starts with x")]
    NoX {
        /// The predicate.
        predicate: String,
    },
    /// `in` without a bracketed list.
    #[error("predicate {predicate:?}: `in` takes a list [a, b]")]
    NotAList {
        /// The predicate.
        predicate: String,
    },
    /// A value that is not a number.
    #[error("predicate {predicate:?}: {value:?} is not a number")]
    NotANumber {
        /// The predicate.
        predicate: String,
        /// The value as written.
        value: String,
        /// Why it is not a number.
        source: ParseFloatError,
    },
    /// `in []`.
    #[error("predicate {predicate:?}: empty list")]
    EmptyList {
        /// The predicate.
        predicate: String,
    },
    /// No comparison operator.
    #[error("predicate {predicate:?}: expected a comparison (=, !=, <, <=, >, >=) or in")]
    NoComparison {
        /// The predicate.
        predicate: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn funnel_column() -> Column {
        let labels = ["Not aware", "Aware", "Familiar", "Considered", "Purchased", "Loyal"];
        Column {
            values: labels.iter().enumerate().map(|(i, l)| (i.to_string(), l.to_string())).collect(),
            ..Column::default()
        }
    }

    #[test]
    fn funnel_expands_to_stages_and_conversions() {
        let reg = Registry::load(None).unwrap();
        let ms = reg.get("extractFunnel").unwrap().expand(&funnel_column()).unwrap();
        let names: Vec<&str> = ms.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "Aware",
                "Familiar",
                "Considered",
                "Purchased",
                "Loyal",
                "Aware → Familiar",
                "Familiar → Considered",
                "Considered → Purchased",
                "Purchased → Loyal"
            ]
        );
        assert_eq!(ms[2].kind, Kind::Share(Pred(vec![Clause::Cmp(Op::Ge, 3.0)])));
        assert!(ms[5].answers_to("aware_to_familiar"));
    }

    #[test]
    fn unknown_function_lists_registered_ones() {
        let reg = Registry::load(None).unwrap();
        let err = reg.get("extractFunel").unwrap_err();
        assert_eq!(err.suggestions[0], "extractFunnel");
        assert!(reg.get("zzz").unwrap_err().suggestions.len() >= 7);
    }

    #[test]
    fn predicates_parse() {
        assert_eq!(
            parse_pred("x >= 7 and x <= 8").unwrap(),
            Pred(vec![Clause::Cmp(Op::Ge, 7.0), Clause::Cmp(Op::Le, 8.0)])
        );
        assert_eq!(parse_pred("x in [4, 5]").unwrap(), Pred(vec![Clause::In(vec![4.0, 5.0])]));
        assert!(parse_pred("y >= 1").is_err());
        assert!(parse_pred("x >= 1; DROP TABLE t").is_err());
    }
}
