//! Pass 3: within each container, citations accompany its quantitative results (Upperhand: "a
//! Part of this media type in the same result"); an ADK tool result pairs with the citations
//! inside it first.

use serde_json::Value;

use super::RULE_MEDIA_TYPE;
use super::parts::{Cited, Kind, Located, classify, split_tool_response};
use super::walk::Container;
use crate::json::{is_quantitative, pointer_push};
use crate::transcript::agui::upperhand;
use crate::transcript::{
    CITATION_MEDIA_TYPE, Document, Finding, Item, Level, Locator, RULE_CONFORMANCE, RULE_PAIRING, Turn,
};

/// A citation or a result found in a container, with where it was found.
pub(super) struct Found {
    pub(super) value: Value,
    pub(super) pointer: String,
    /// The Part's index; `None` for what was read from metadata.
    pub(super) part: Option<usize>,
    pub(super) line: Option<usize>,
    pub(super) by_shape: bool,
}

/// Classifies a container's Parts, pairs its citations with its results, and records its turn.
/// User messages make no claims: only tool results in them (ADK may file those under the user
/// role) are read.
pub(super) fn read_container(doc: &mut Document, c: &Container) {
    let base = Locator {
        file: doc.file.clone(),
        task_id: c.task_id.clone(),
        message_id: if c.is_artifact { None } else { c.id.clone() },
        artifact_id: if c.is_artifact { c.id.clone() } else { None },
        ..Locator::default()
    };
    let claims = c.role != "user";
    let what = if c.is_artifact { "artifact" } else { "message" };
    let (mut texts, mut cits, mut results, mut items) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, p) in c.parts.iter().enumerate() {
        let found = |value: Value, pointer: String, by_shape: bool| Found {
            value,
            pointer,
            part: (!p.in_metadata).then_some(i),
            line: p.line,
            by_shape,
        };
        match classify(p, &base, &mut doc.findings) {
            Kind::Text(t) => texts.push(t),
            Kind::Citations(list, by_shape) if claims => {
                cits.extend(list.into_iter().map(|(v, ptr)| found(v, ptr, by_shape)));
            }
            Kind::Data(d, ptr) if claims => {
                let groups = within_part(&d, &ptr);
                if groups.iter().all(|(cits, _)| cits.is_empty()) {
                    if is_quantitative(&d) {
                        results.push(found(d, ptr, false));
                    }
                    continue;
                }
                let part_index = (!p.in_metadata).then_some(i);
                let at = Locator { line: p.line, part_index, pointer: ptr.clone(), ..base.clone() };
                let message = if p.in_metadata {
                    format!(
                        "the citation is in the metadata (as ADK's A2A export streams its session state), in no \
                         Part: read with the result beside it (Upperhand puts each citation in a Part of its own, \
                         with the media type {CITATION_MEDIA_TYPE})"
                    )
                } else {
                    format!(
                        "the citation is inside the data Part beside its result: paired within the Part (Upperhand \
                         puts each citation in a Part of its own, with the media type {CITATION_MEDIA_TYPE})"
                    )
                };
                doc.findings.push(Finding::new(at, RULE_CONFORMANCE, Level::Note, message));
                for (group_cits, result) in groups {
                    let group_cits = group_cits.into_iter().map(|(v, ptr, s)| found(v, ptr, s)).collect();
                    let result = result.map(|(v, ptr)| found(v, ptr, false)).into_iter().collect();
                    items.extend(pair(doc, &base, group_cits, result, "data Part"));
                }
            }
            Kind::ToolResult(d, ptr) => {
                let (tool_cits, result) = split_tool_response(&d, &ptr);
                let result = result.map(|(v, ptr)| found(v, ptr, false));
                if tool_cits.is_empty() {
                    results.extend(result);
                } else {
                    let tool_cits = tool_cits.into_iter().map(|(v, ptr, s)| found(v, ptr, s)).collect();
                    items.extend(pair(doc, &base, tool_cits, result.into_iter().collect(), "tool result"));
                }
            }
            _ => {}
        }
    }
    items.extend(pair(doc, &base, cits, results, what));
    items.sort_unstable();
    if !texts.is_empty() || !items.is_empty() {
        let message_id = base.message_id.clone();
        doc.turns.push(Turn {
            role: c.role.clone(),
            text: texts.join("\n"),
            items,
            message_id,
            ..Turn::default()
        });
    }
}

/// The citations a data Part holds beside its result (`{"result": …, "citation": …}`, as
/// `fasta2a` can write), each with the quantitative rest it accompanies: one group for the whole
/// value, or one per element for an array of such pairs. No citation in any group when there is
/// none.
fn within_part(data: &Value, ptr: &str) -> Vec<(Vec<Cited>, Option<Located>)> {
    let one = |v: &Value, ptr: &str| -> (Vec<Cited>, Option<Located>) {
        let split = upperhand::split(v, ptr);
        let cits = split.citations.into_iter().map(|f| (f.citation, f.pointer, f.by_shape)).collect();
        let rest = split.rest.filter(is_quantitative).map(|r| match r {
            // `{result, citation}` leaves `{result}`: the result itself.
            Value::Object(mut o) if o.len() == 1 && o.contains_key("result") => {
                (o.remove("result").unwrap_or_default(), pointer_push(ptr, "result"))
            }
            r => (r, ptr.to_string()),
        });
        (cits, rest)
    };
    if let Value::Array(items) = data {
        let each: Vec<_> = items.iter().enumerate().map(|(i, v)| one(v, &pointer_push(ptr, i))).collect();
        // `[{result, citation}, …]` pairs element by element; `[result, citation]` as a whole.
        if each.len() > 1 && each.iter().all(|(cits, rest)| !cits.is_empty() && rest.is_some()) {
            return each;
        }
    }
    vec![one(data, ptr)]
}

/// Pairs the citations of one container with its quantitative results, pushing Items and
/// findings; returns the indices of the Items pushed.
///
/// One citation takes every result (several become one array result). Several citations pair
/// with the results in order, with a NOTE saying so. What is left unpaired is pushed anyway
/// (so reports count it) with a conformance finding.
fn pair(doc: &mut Document, base: &Locator, cits: Vec<Found>, results: Vec<Found>, what: &str) -> Vec<usize> {
    let start = doc.items.len();
    for c in cits.iter().filter(|c| c.by_shape) {
        let message = format!(
            "citation recognised by its shape: the Part does not declare the media type {}",
            CITATION_MEDIA_TYPE
        );
        doc.findings.push(Finding::new(locate(base, c), RULE_MEDIA_TYPE, Level::Note, message));
    }
    if cits.len() == 1 {
        let mut cits = cits;
        let c = cits.remove(0);
        let result = match results.len() {
            0 => None,
            1 => results.into_iter().next().map(|r| r.value),
            _ => Some(Value::Array(results.into_iter().map(|r| r.value).collect())),
        };
        push(doc, base, Some(c), result.map(|v| (v, None)), what);
    } else {
        if cits.len() > 1 && !results.is_empty() {
            let message = format!(
                "{} citations and {} quantitative results in one {what}: paired in order",
                cits.len(),
                results.len()
            );
            let at = locate(base, &cits[0]);
            doc.findings.push(Finding::new(at, RULE_PAIRING, Level::Note, message));
        }
        let mut results = results.into_iter();
        for c in cits {
            let r = results.next().map(|r| (r.value, None));
            push(doc, base, Some(c), r, what);
        }
        for r in results {
            let at = locate(base, &r);
            push(doc, base, None, Some((r.value, Some(at))), what);
        }
    }
    (start..doc.items.len()).collect()
}

fn locate(base: &Locator, f: &Found) -> Locator {
    Locator { line: f.line, part_index: f.part, pointer: f.pointer.clone(), ..base.clone() }
}

/// Pushes one Item (and the conformance finding when one side is missing). `result` carries
/// the result's own locator when there is no citation to locate the Item by.
fn push(
    doc: &mut Document,
    base: &Locator,
    cit: Option<Found>,
    result: Option<(Value, Option<Locator>)>,
    what: &str,
) {
    let (locator, citation, by_shape) = match (&cit, &result) {
        (Some(c), _) => (locate(base, c), Some(c.value.clone()), c.by_shape),
        (None, Some((_, Some(at)))) => (at.clone(), None, false),
        (None, _) => (base.clone(), None, false),
    };
    let message = match (&citation, &result) {
        (Some(_), None) => Some(format!("a citation with no quantitative result in the same {what}")),
        (None, Some(_)) => Some(format!(
            "a quantitative result with no citation Part ({}) in the same {what}",
            CITATION_MEDIA_TYPE
        )),
        _ => None,
    };
    if let Some(message) = message {
        doc.findings.push(Finding::new(locator.clone(), RULE_CONFORMANCE, Level::Must, message));
    }
    doc.items.push(Item { locator, result: result.map(|(v, _)| v), citation, by_shape });
}
