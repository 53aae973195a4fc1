//! Attribution: what a cited claim covers — its period, its population and its column label
//! (the brand, for a brand tracker) — in the catalog's own words, so that the audit can tell a
//! true number attributed to the wrong wave, people or brand (docs/answers.md, "Attribution").
//! No model and no network: only the names, aliases, labels and breakdown cells the study
//! declares.

use crate::catalog::{BaseDef, Catalog, Table, Universe};

/// One dimension a citation is specific in.
#[derive(Debug, Clone, PartialEq)]
pub struct Dim {
    /// `period`, `population` or `column label`.
    pub what: &'static str,
    /// How the catalog names what the citation covers (`W6 (April 2026)`).
    pub cited: String,
    /// Lower-case phrases that name the cited option (`w6`, `april 2026`).
    pub marks: Vec<String>,
    /// The study's other options: how each is named, and the lower-case phrases naming it.
    pub others: Vec<(String, Vec<String>)>,
}

/// What a cited claim covers, dimension by dimension.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Covers {
    /// The dimensions the catalog lets recite read.
    pub dims: Vec<Dim>,
    /// The cited base, for population words the catalog has no option for.
    pub base: Option<Base>,
}

/// The cited base, in words: a sentence's population phrase (`among men`) whose population
/// words it does not have leaves the attribution unsure (docs/answers.md).
#[derive(Debug, Clone, PartialEq)]
pub struct Base {
    /// How the citation (or the catalog) names it.
    pub name: String,
    /// The lower-case words of its name and aliases (`adults`, `aware`, `brand`).
    pub words: Vec<String>,
    /// The age bands and ages its name and aliases state (`18-74`).
    pub ages: Vec<String>,
}

/// Words that name a population (people), whatever the catalog: in a population phrase
/// (`among women`, `of non-users`) each must be a word of the cited base.
const POPULATION_WORDS: &[&str] = &[
    "men",
    "man",
    "women",
    "woman",
    "male",
    "males",
    "female",
    "females",
    "boys",
    "girls",
    "adults",
    "adult",
    "teens",
    "teenagers",
    "youth",
    "young",
    "younger",
    "older",
    "seniors",
    "pensioners",
    "retirees",
    "students",
    "parents",
    "mothers",
    "fathers",
    "mums",
    "moms",
    "dads",
    "children",
    "kids",
    "users",
    "non-users",
    "nonusers",
    "lapsed",
    "rejecters",
    "considerers",
    "customers",
    "buyers",
    "purchasers",
    "shoppers",
    "owners",
    "subscribers",
    "members",
    "millennials",
    "boomers",
    "households",
    "families",
    "employees",
    "workers",
    "voters",
    "graduates",
    "homeowners",
    "renters",
    "drivers",
    "smokers",
    "non-smokers",
    "patients",
    "visitors",
    "viewers",
    "listeners",
    "readers",
];

/// An age band or age as a phrase writes it (`18-34`, `18–34s`, `65+`, `under-35s`), in the
/// form [`Base::ages`] holds (`18-34`, `65`, `under-35`).
fn age(w: &str) -> Option<String> {
    if !w.contains(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let a = w.replace(['–', '—', '‑'], "-");
    let a = a.trim_end_matches(['s', '+']);
    (a.contains('-') || w.ends_with('+')).then(|| a.to_string())
}

/// Whether `w` (lower case) names a population: a population word or an age band.
pub fn population_word(w: &str) -> bool {
    POPULATION_WORDS.contains(&w) || age(w).is_some()
}

/// Whether the cited base has the population word `w` (any other word passes): the same
/// word, singular or plural, or the same first five letters (`purchasers`, `purchaser`); an
/// age band only when the base states that band.
pub fn base_has(base: &Base, w: &str) -> bool {
    if let Some(a) = age(w) {
        return base.ages.contains(&a);
    }
    if !POPULATION_WORDS.contains(&w) {
        return true;
    }
    let one = |x: &str| x.strip_suffix('s').unwrap_or(x).to_string();
    let five = |x: &str| x.chars().take(5).collect::<String>();
    base.words
        .iter()
        .any(|b| one(b) == one(w) || (b.chars().count() >= 5 && w.chars().count() >= 5 && five(b) == five(w)))
}

/// Whether the cited base's own words say `w` (lower case): the same word, singular or
/// plural, or the same first five letters; an age band when the base states it. Unlike
/// [`base_has`], a word that names no population is not passed: this weighs how much of a
/// sentence's population phrase one base covers beside another.
pub fn base_says(base: &Base, w: &str) -> bool {
    if let Some(a) = age(w) {
        return base.ages.contains(&a);
    }
    let one = |x: &str| x.strip_suffix('s').unwrap_or(x).to_string();
    let five = |x: &str| x.chars().take(5).collect::<String>();
    w.chars().count() >= 3
        && !STOPWORDS.contains(&w)
        && base.words.iter().any(|b| {
            one(b) == one(w) || (b.chars().count() >= 5 && w.chars().count() >= 5 && five(b) == five(w))
        })
}

/// The base named `name` (with `aliases`), in words.
fn base_words(name: &str, aliases: &[String]) -> Base {
    let all: Vec<&str> = std::iter::once(name).chain(aliases.iter().map(String::as_str)).collect();
    let mut words: Vec<String> = all.iter().flat_map(|n| words(n, 1)).collect();
    words.sort();
    words.dedup();
    let mut ages: Vec<String> = all
        .iter()
        .flat_map(|n| n.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')')))
        .filter_map(|t| age(&t.to_lowercase()).or_else(|| t.parse::<u32>().ok().map(|n| n.to_string())))
        .collect();
    ages.sort();
    ages.dedup();
    Base { name: name.to_string(), words, ages }
}

/// The cited base as the rows that answer a routed column are: its words and ages, and the
/// universe's (`All adults 18-74` asked of `Purchasers of Versant`).
fn answering(base: Base, universe: &Universe) -> Base {
    let u = base_words(&universe.name, &universe.aliases);
    let mut words = base.words;
    words.extend(u.words);
    words.sort();
    words.dedup();
    let mut ages = base.ages;
    ages.extend(u.ages);
    ages.sort();
    ages.dedup();
    Base { name: format!("{} (asked of {})", base.name, universe.name), words, ages }
}

/// Words that never tell two populations apart.
const STOPWORDS: &[&str] = &[
    "with", "from", "that", "this", "than", "into", "over", "under", "among", "about", "have", "were",
    "been", "their", "them", "they", "only", "each",
];

/// The lower-case words of `s` of at least `min` letters.
fn words(s: &str, min: usize) -> Vec<String> {
    s.split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= min)
        .map(str::to_lowercase)
        .collect()
}

/// The words of each option that no other option has: what tells it apart.
fn distinct(options: &[(String, Vec<String>)]) -> Vec<Vec<String>> {
    // How many options use each word: linear in the options, as a grid may have thousands.
    let mut used: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (_, ws) in options {
        let mut own: Vec<&str> = ws.iter().map(String::as_str).collect();
        own.sort_unstable();
        own.dedup();
        for w in own {
            *used.entry(w).or_default() += 1;
        }
    }
    options
        .iter()
        .map(|(_, ws)| {
            let mut own: Vec<String> =
                ws.iter().filter(|w| used.get(w.as_str()) == Some(&1)).cloned().collect();
            own.sort();
            own.dedup();
            own
        })
        .collect()
}

/// Most sibling columns a cited column's label is told apart from (the nearest in the grid's
/// order): brands, items and statements of one question, far more than any real grid has, and
/// a bound on the work and memory a hostile catalog can cost per citation.
pub const MAX_ATTRIBUTION_SIBLINGS: usize = 256;

/// What the citation covers, when the catalog knows its study: the period (its name and
/// aliases against the study's other periods), the population (the words that tell its base
/// apart from the study's other bases and breakdown cells, measure words left out) and the
/// column label (the words that tell the cited column apart from the other columns of its
/// question: `Versant` of `Brand funnel: Versant`).
pub fn covers(catalog: &Catalog, citation: &serde_json::Value) -> Option<Covers> {
    let text = |p: &str| citation.pointer(p).and_then(serde_json::Value::as_str);
    // The base as the citation names it, even for a study the catalog does not know.
    let stated_base = text("/base/name").filter(|b| !b.trim().is_empty()).map(|b| base_words(b, &[]));
    let Some(study) = text("/study").and_then(|s| catalog.study(s).ok()) else {
        return stated_base.map(|base| Covers { dims: Vec::new(), base: Some(base) });
    };
    let table: Option<&Table> = text("/source/table").and_then(|t| study.table(t).ok());
    let column = text("/source/column");
    // Who answers the cited column when routing asks it of fewer people (satisfaction of
    // purchasers): the rows of the figure are the base's *and* these, whatever the base's name.
    let universe = match (table, column) {
        (Some(t), Some(c)) => t.column_meta(c).universe,
        _ => None,
    };
    let base = text("/base/name")
        .and_then(|b| study.base(b).ok())
        .map(|d| base_words(&d.name, &d.aliases))
        .or(stated_base)
        .map(|b| match &universe {
            Some(u) => answering(b, u),
            None => b,
        });
    let mut dims = Vec::new();
    let names = |name: &String, aliases: &[String]| -> Vec<String> {
        std::iter::once(name)
            .chain(aliases)
            .map(|n| n.trim().to_lowercase())
            .filter(|n| !n.is_empty())
            .collect()
    };
    if let Some(p) = text("/period").and_then(|p| study.period(p).ok()) {
        dims.push(Dim {
            what: "period",
            cited: p.name.clone(),
            marks: names(&p.name, &p.aliases),
            others: study
                .periods
                .iter()
                .filter(|o| o.name != p.name)
                .map(|o| (o.name.clone(), names(&o.name, &o.aliases)))
                .collect(),
        });
    }
    // Measure words (the cited column's value labels, by their six-letter stem) never name a
    // population: `familiar` is a funnel stage before it is `familiar with brand`.
    let measures: Vec<String> = match (table, column) {
        (Some(t), Some(c)) => {
            t.column_meta(c).values.values().map(|v| super::words::stem(v.as_str())).collect()
        }
        _ => Vec::new(),
    };
    if let Some(b) = text("/base/name").and_then(|b| study.base(b).ok()) {
        let content = |s: &str| -> Vec<String> {
            words(s, 4)
                .into_iter()
                .filter(|w| !STOPWORDS.contains(&w.as_str()))
                .filter(|w| !measures.iter().any(|m| m.len() >= 4 && w.starts_with(m.as_str())))
                .collect()
        };
        let of_base = |d: &BaseDef| -> Vec<String> {
            std::iter::once(&d.name).chain(&d.aliases).flat_map(|n| content(n.as_str())).collect()
        };
        // The universe's words name people, not the column's brand (`Purchasers of Versant`).
        let label: Vec<String> = match (table, column) {
            (Some(t), Some(c)) => words(&t.column_meta(c).label, 1),
            _ => Vec::new(),
        };
        let universe_words: Vec<String> = universe
            .iter()
            .flat_map(|u| std::iter::once(&u.name).chain(&u.aliases))
            .flat_map(|n| content(n.as_str()))
            .filter(|w| !label.contains(w))
            .collect();
        let mut options: Vec<(String, Vec<String>)> = study
            .bases
            .iter()
            .map(|d| {
                let mut words = of_base(d);
                if d.name == b.name {
                    words.extend(universe_words.iter().cloned());
                }
                (d.name.clone(), words)
            })
            .collect();
        // Breakdown cells are populations a sentence may name (`Female`); a citation never
        // covers one.
        options.extend(
            study.breakdowns.iter().flat_map(|br| &br.cells).map(|c| (c.name.clone(), content(&c.name))),
        );
        let own = distinct(&options);
        if let Some(ci) = study.bases.iter().position(|d| d.name == b.name) {
            let others: Vec<(String, Vec<String>)> = options
                .iter()
                .zip(&own)
                .enumerate()
                .filter(|(j, (_, marks))| *j != ci && !marks.is_empty())
                .map(|(_, ((name, _), marks))| (name.clone(), marks.clone()))
                .collect();
            if !others.is_empty() {
                dims.push(Dim { what: "population", cited: b.name.clone(), marks: own[ci].clone(), others });
            }
        }
    }
    if let (Some(t), Some(c)) = (table, column) {
        let (siblings, _) = t.nearest_siblings(c, MAX_ATTRIBUTION_SIBLINGS);
        if !siblings.is_empty() {
            let label = |name: &str| {
                let l = t.column_meta(name).label;
                if l.is_empty() { name.to_string() } else { l }
            };
            let options: Vec<(String, Vec<String>)> = std::iter::once(c)
                .chain(siblings.iter().copied())
                .map(|n| {
                    let l = label(n);
                    let ws = words(&l, 3);
                    (l, ws)
                })
                .collect();
            let own = distinct(&options);
            let others: Vec<(String, Vec<String>)> = options
                .iter()
                .zip(&own)
                .skip(1)
                .filter(|(_, marks)| !marks.is_empty())
                .map(|((name, _), marks)| (name.clone(), marks.clone()))
                .collect();
            if !own[0].is_empty() && !others.is_empty() {
                dims.push(Dim {
                    what: "column label",
                    cited: options[0].0.clone(),
                    marks: own[0].clone(),
                    others,
                });
            }
        }
    }
    (!dims.is_empty() || base.is_some()).then_some(Covers { dims, base })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_covers_reads_period_population_and_brand_from_the_catalog() {
        let catalog =
            Catalog::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets")).unwrap();
        let citation = serde_json::json!({
            "study": "Versant Mega Tracker", "period": "W6 (April 2026)",
            "base": {"name": "Adults 18-74, aware of brand", "n": 4654}, "weight": "main_weight",
            "source": {"table": "versant_flat", "column": "s14r5", "function": "extractFunnel"}
        });
        let c = covers(&catalog, &citation).unwrap();
        let dim = |what: &str| c.dims.iter().find(|d| d.what == what).unwrap();
        let period = dim("period");
        assert!(period.marks.contains(&"w6".to_string()), "{period:?}");
        assert!(period.others.iter().any(|(n, m)| n == "W5 (March 2026)" && m.contains(&"w5".to_string())));
        let population = dim("population");
        assert!(population.marks.is_empty(), "aware adults has no word of its own: {population:?}");
        let women = population.others.iter().find(|(n, _)| n == "Women 18-74").unwrap();
        assert_eq!(women.1, ["women"]);
        // Funnel stages are measures, not populations: `familiar` never names a base.
        assert!(population.others.iter().all(|(_, m)| !m.iter().any(|w| w.starts_with("famili"))));
        let brand = dim("column label");
        assert_eq!(brand.marks, ["versant"]);
        assert!(brand.others.iter().any(|(n, m)| n == "Brand funnel: Northwind" && m == &["northwind"]));
    }
}
