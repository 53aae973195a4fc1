//! A claim written as prose beside its citation ("44% of aware adults considered Versant in
//! W6"): the numbers the answer audit's reader finds in it (`recite_core::answers::find`, which
//! leaves waves, dates, list numbers and bare ranges alone) become the claimed numbers the
//! citation is settled against. A level (a percentage or a plain number) is claimed for the
//! one measure its sentence names, when it names exactly one (a word of the base's name, such
//! as "aware" in "aware adults", names the population, not a measure), else for whichever
//! measure it matches, as an unnamed `--claim` is; a count is claimed as the base n. A change
//! (points, a relative change) or a range end is no level of the cited figure: it is said to be
//! unpaired, never settled.

use recite_core::answers::{self, Kind, Stated};
use recite_core::claim::{DecimalMark, fold};
use recite_core::extractor::Measure;
use serde_json::{Value, json};

/// What a prose claim states about its citation.
#[derive(Debug, Default, PartialEq)]
pub struct Reading {
    /// The claims to settle, as `recite verify --claim` takes them (`Considered=44%`).
    pub claims: Vec<String>,
    /// Each number paired with a claim: its text and the claim.
    pub paired: Vec<Value>,
    /// Each number that could not be: its text and why.
    pub unpaired: Vec<Value>,
}

impl Reading {
    /// What the prose was read as, for the settlement's artifact.
    pub fn to_json(&self) -> Value {
        json!({ "paired": self.paired, "unpaired": self.unpaired })
    }
}

/// Reads the numbers of `text` as claims on a citation whose function computes `measures` over
/// the base named `base`; values are written in `mark`, the convention the service reads
/// claims in.
pub fn read(text: &str, measures: &[Measure], base: &str, mark: DecimalMark) -> Reading {
    let sentences = answers::find::sentences(text);
    let population: Vec<String> = words(base).map(fold).collect();
    let mut out = Reading::default();
    for s in answers::find(text) {
        let sentence = sentences.get(s.sentence).map_or(text, |&(a, b)| &text[a..b]);
        let level = match s.kind {
            _ if s.range.is_some() => Err("an end of a range: no one level to settle"),
            Kind::Points => Err("a difference in points: a change, not a level the citation computes"),
            Kind::Relative => Err("a relative change: not a level the citation computes"),
            Kind::Percent => Ok(format!("{}%", shown(&s, mark))),
            Kind::Number => Ok(shown(&s, mark)),
            Kind::Count => Ok(format!("n={}", shown(&s, mark))),
        };
        match level {
            Err(why) => out.unpaired.push(json!({ "number": s.text, "why": why })),
            Ok(value) => {
                let measure =
                    (s.kind != Kind::Count).then(|| named(sentence, measures, &population)).flatten();
                let claim = match &measure {
                    Some(m) => format!("{m}={value}"),
                    None => value,
                };
                out.paired.push(json!({ "number": s.text, "claim": claim }));
                out.claims.push(claim);
            }
        }
    }
    out
}

/// The value as written, in the service's decimal mark.
fn shown(s: &Stated, mark: DecimalMark) -> String {
    let text = format!("{:.*}", usize::try_from(s.decimals).unwrap_or(0), s.value);
    match mark {
        DecimalMark::Comma => text.replace('.', ","),
        _ => text,
    }
}

/// The words of `text`.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty())
}

/// The one measure `sentence` names, words of the population aside; none when it names none
/// or several.
fn named(sentence: &str, measures: &[Measure], population: &[String]) -> Option<String> {
    let mut found: Vec<&str> = Vec::new();
    for w in words(sentence).filter(|w| !population.contains(&fold(w))) {
        for m in measures.iter().filter(|m| m.answers_to(w)) {
            if !found.contains(&m.name.as_str()) {
                found.push(&m.name);
            }
        }
    }
    match found.as_slice() {
        [one] => Some((*one).to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use recite_core::claim::DecimalMark;
    use recite_core::extractor::{Kind, Measure};

    use super::read;

    fn funnel() -> Vec<Measure> {
        ["Aware", "Familiar", "Considered", "Purchased"]
            .iter()
            .map(|n| Measure { name: n.to_string(), aliases: Vec::new(), kind: Kind::Mean })
            .collect()
    }

    #[test]
    fn a_sentence_claims_the_measure_it_names_and_not_its_population() {
        let base = "Adults 18-74, aware of brand";
        let r = read("44% of aware adults considered Versant in W6", &funnel(), base, DecimalMark::Dot);
        assert_eq!(r.claims, ["Considered=44%"]);
        assert!(r.unpaired.is_empty(), "{:?}", r.unpaired);
        let r = read("Considered: 47.0% (n = 4,654). That is +2.5 pts.", &funnel(), base, DecimalMark::Dot);
        assert_eq!(r.claims, ["Considered=47.0%", "n=4654"]);
        assert_eq!(r.unpaired.len(), 1, "{:?}", r.unpaired);
        assert!(r.unpaired[0]["number"].as_str().is_some_and(|n| n.contains("2.5")), "{:?}", r.unpaired);
    }

    #[test]
    fn a_sentence_naming_two_measures_leaves_the_number_unnamed() {
        let r = read("Familiar and considered: 44%.", &funnel(), "All adults", DecimalMark::Comma);
        assert_eq!(r.claims, ["44%"]);
        let r = read("Considered by 44.5% of them.", &funnel(), "All adults", DecimalMark::Comma);
        assert_eq!(r.claims, ["Considered=44,5%"]);
    }
}
