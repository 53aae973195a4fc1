//! Claim sets on demand: N Upperhand claims over a study, a known share of them wrong.
//!
//! For benchmarks and scale tests. Citations are drawn deterministically (seeded SplitMix64)
//! over the study's periods, its first two bases, and every column of the funnel (`s14`),
//! recommendation (`q20`) and satisfaction (`q30`) questions with the extractors that fit them;
//! the true values come from recite itself (one fused run), then each claim states one measure
//! as an agent would (a percent with one decimal, a mean with one decimal, NPS in whole points),
//! shifted well outside its tolerance when it is one of the wrong ones.

use serde_json::{Value, json};

use crate::catalog::{Catalog, Study};
use crate::engine::Engine;
use crate::extractor::{Registry, Unit};
use crate::settle::pipeline::{self, Claim, Options};
use crate::synth::SplitMix64;

/// What to generate.
#[derive(Debug, Clone)]
pub struct ClaimSpec {
    /// The study (name or alias).
    pub study: String,
    /// How many claims.
    pub count: usize,
    /// The share of claims made wrong on purpose (0..=1).
    pub wrong: f64,
    /// The seed.
    pub seed: u64,
}

/// Which extractors a question's columns are cited with.
const PLAN: &[(&str, &[&str])] = &[
    ("s14", &["extractFunnel", "extractDistribution"]),
    ("q20", &["extractNPS", "extractMean", "extractTop2Box"]),
    ("q30", &["extractTopBox", "extractMean"]),
];

/// One generated claim: the JSON line, and whether it was made wrong.
#[derive(Debug, Clone)]
pub struct GeneratedClaim {
    /// `{"result": …, "citation": …}`.
    pub line: Value,
    /// Made wrong on purpose.
    pub wrong: bool,
}

/// Generates the claims (the engine computes their true values first).
pub fn generate(
    spec: &ClaimSpec,
    catalog: &Catalog,
    registry: &Registry,
    engine: &Engine,
) -> Result<Vec<GeneratedClaim>, GenerateError> {
    let study = catalog.study(&spec.study)?;
    let (table, columns) = columns(study)?;
    if study.periods.is_empty() || study.bases.is_empty() {
        return Err(GenerateError::NoPeriodsOrBases(study.study.name.clone()));
    }
    let weight = table_weight(study, &table);
    let bases: Vec<&str> = study.bases.iter().take(2).map(|b| b.name.as_str()).collect();
    let mut rng = SplitMix64::stream(spec.seed, 0xC1A1, 0);
    let mut citations = Vec::with_capacity(spec.count);
    for _ in 0..spec.count {
        let (column, function) = &columns[rng.below(columns.len() as u64) as usize];
        let period = &study.periods[rng.below(study.periods.len() as u64) as usize];
        let base = bases[rng.below(bases.len() as u64) as usize];
        let mut c = json!({
            "study": study.study.name, "period": period.name,
            "base": {"name": base, "n": 1},
            "source": {"table": table, "column": column, "function": function}
        });
        if let Some(w) = &weight {
            c["weight"] = json!(w);
        }
        if let Some(f) = &period.fielded {
            c["fielded"] = json!(f);
        }
        citations.push(c);
    }
    let claims: Vec<Claim> =
        citations.iter().map(|c| Claim { citation: c.clone(), numbers: Vec::new() }).collect();
    let opts = Options { explain: false, ..Options::default() };
    let (settled, _) = pipeline::settle_all(&claims, catalog, registry, engine, opts);
    let mut out = Vec::with_capacity(spec.count);
    for (mut c, s) in citations.into_iter().zip(settled) {
        let Some(base) = &s.base else { return Err(GenerateError::Unresolved(s.reasons.clone())) };
        c["base"]["n"] = json!(base.facts.n);
        let measured: Vec<_> = s.measures.iter().filter(|m| m.estimate.is_some()).collect();
        if measured.is_empty() {
            continue;
        }
        let m = measured[rng.below(measured.len() as u64) as usize];
        let e = m.estimate.expect("filtered above");
        let wrong = rng.bernoulli(spec.wrong);
        let mut sign = if rng.bernoulli(0.5) { 1.0 } else { -1.0 };
        let text = match (m.unit, m.name.as_str()) {
            (Unit::Proportion, _) => {
                // Shift towards the middle, so a wrong share never clamps back onto the truth.
                if wrong && (e.value * 100.0 + sign * 3.0 > 100.0 || e.value * 100.0 + sign * 3.0 < 0.0) {
                    sign = -sign;
                }
                let v = e.value * 100.0 + if wrong { sign * 3.0 } else { 0.0 };
                format!("{v:.1}%")
            }
            (_, "NPS") => format!("{:.0}", e.value + if wrong { sign * 6.0 } else { 0.0 }),
            _ => format!("{:.1}", e.value + if wrong { sign * (0.5 + e.se * 6.0) } else { 0.0 }),
        };
        let label = s.rerun.as_ref().map(|r| r.column_label.clone()).unwrap_or_default();
        let result = json!({"label": label, "period": c["period"], m.name.clone(): text, "n": base.facts.n});
        out.push(GeneratedClaim { line: json!({"result": result, "citation": c}), wrong });
    }
    Ok(out)
}

/// The first table of the study with columns of the planned questions, and (column, function)
/// pairs to cite.
fn columns(study: &Study) -> Result<(String, Vec<(String, String)>), GenerateError> {
    for t in &study.tables {
        let mut picks = Vec::new();
        for (question, functions) in PLAN {
            for (name, col) in &t.columns {
                if col.question.as_deref() == Some(*question) {
                    picks.extend(functions.iter().map(|f| (name.clone(), f.to_string())));
                }
            }
        }
        if !picks.is_empty() {
            picks.sort();
            return Ok((t.name.clone(), picks));
        }
    }
    Err(GenerateError::NoPlannedColumns(study.study.name.clone()))
}

/// Why claims could not be generated on a study.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// The study cannot be found or used.
    #[error(transparent)]
    Study(#[from] crate::catalog::StudyError),
    /// Nothing to cite a period or base of.
    #[error("study {0:?} declares no periods or no bases")]
    NoPeriodsOrBases(String),
    /// No column of the questions the generator cites.
    #[error("study {0:?} has no columns of the questions s14, q20 or q30")]
    NoPlannedColumns(String),
    /// A generated citation did not resolve (its reasons).
    #[error("a generated citation did not resolve: {0:?}")]
    Unresolved(Vec<String>),
}

fn table_weight(study: &Study, table: &str) -> Option<String> {
    study.tables.iter().find(|t| t.name == table).and_then(|t| t.weights.first().cloned())
}
