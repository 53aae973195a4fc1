//! The audit of a conversation: each answer's exchange and its cited numbers, the bounds of
//! one input, and each answer's stated numbers traced sentence by sentence.

use std::collections::{BTreeMap, HashMap};

use super::answer::{Answer, Sentence, StatedNumber};
use super::bounds::{MAX_INPUT_COMPARISONS, MAX_INPUT_NUMBERS, MAX_NUMBERS, NotAudited, Unaudited};
use super::context::Context;
use super::find::{self, Stated, find};
use super::source::Source;
use super::status::{Status, doubt};
use super::trace::trace;
use crate::input::{Shown, Turn};

/// The audit of one conversation: its answers, those cut short, and those not audited at all.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Audit {
    /// The audited answers, in turn order.
    pub answers: Vec<Answer>,
    /// The answers whose later numbers were not audited ([`MAX_NUMBERS`],
    /// [`MAX_INPUT_NUMBERS`]).
    pub not_audited: Vec<NotAudited>,
    /// The answers after the input reached [`MAX_INPUT_NUMBERS`].
    pub unaudited: Option<Unaudited>,
}

impl Audit {
    /// The findings for every number not audited.
    pub fn findings(&self, file: &str) -> Vec<crate::input::Finding> {
        let mut out: Vec<_> = self.not_audited.iter().map(|n| n.finding(file)).collect();
        out.extend(self.unaudited.iter().map(|u| u.finding(file)));
        out
    }
}

/// Audits every agent turn of a conversation that the user was shown as the answer (a turn the
/// run took back, [`Turn::shown`], is listed with no number audited): `sources[i]` are the
/// cited numbers of claim `i`.
/// A turn's exchange runs from the user message before it to the next user message (the A2A
/// task, the AG-UI run); a conversation with no user turn is one exchange.
pub fn audit(turns: &[Turn], sources: &[Vec<Source>]) -> Audit {
    audit_cited(turns, sources, &HashMap::new())
}

/// [`audit`], where `cited` holds, by message id, the numbers of the records `moca.citations`
/// events cite for that assistant message ([`super::record_sources`]): that message's numbers are also
/// traced to them, and a number inside one of their markers (`[12]`) is not a stated number.
pub fn audit_cited(turns: &[Turn], sources: &[Vec<Source>], cited: &HashMap<String, Vec<Source>>) -> Audit {
    audit_within(turns, sources, cited, MAX_INPUT_NUMBERS, MAX_INPUT_COMPARISONS)
}

/// [`audit_cited`], tracing at most `budget` numbers and making at most `comparisons`
/// comparisons of a number with a cited value in all; past either, no later answer is traced.
pub(super) fn audit_within(
    turns: &[Turn],
    sources: &[Vec<Source>],
    cited: &HashMap<String, Vec<Source>>,
    mut budget: usize,
    mut comparisons: usize,
) -> Audit {
    let mut out = Audit::default();
    let is_user = |t: &Turn| t.role.eq_ignore_ascii_case("user");
    // Each turn's exchange, found once: [the turn after the last user turn before it, the next
    // user turn).
    let mut from = vec![0; turns.len()];
    let mut to = vec![turns.len(); turns.len()];
    for i in 1..turns.len() {
        from[i] = if is_user(&turns[i - 1]) { i } else { from[i - 1] };
    }
    for i in (0..turns.len().saturating_sub(1)).rev() {
        to[i] = if is_user(&turns[i + 1]) { i + 1 } else { to[i + 1] };
    }
    // The cited numbers of the exchange last used: answers of one exchange share them.
    let mut exchange: Option<((usize, usize), Vec<Source>)> = None;
    for (ti, turn) in turns.iter().enumerate() {
        let role = turn.role.to_lowercase();
        if !matches!(role.as_str(), "agent" | "assistant" | "model") || turn.text.trim().is_empty() {
            continue;
        }
        // What the user finally saw is the answer; text the run took back is listed, not audited.
        if !turn.shown.is_answer() {
            out.answers.push(set_aside(ti, turn));
            continue;
        }
        let records = turn.message_id.as_ref().and_then(|id| cited.get(id));
        let mut stated = find(&turn.text);
        if let Some(records) = records {
            let mut markers: Vec<(usize, usize)> = records
                .iter()
                .filter_map(|s| s.record.as_ref())
                .flat_map(|r| r.refs.iter().filter(|m| !m.is_empty()))
                .flat_map(|m| turn.text.match_indices(m.as_str()).map(|(p, m)| (p, p + m.len())))
                .collect();
            markers.sort_unstable();
            // The furthest end among the markers starting at or before each one.
            let reach: Vec<usize> = markers
                .iter()
                .scan(0, |r, &(_, b)| {
                    *r = b.max(*r);
                    Some(*r)
                })
                .collect();
            stated.retain(|n| {
                let k = markers.partition_point(|&(a, _)| a <= n.start);
                k == 0 || reach[k - 1] < n.end
            });
        }
        if stated.is_empty() {
            continue;
        }
        let span = (from[ti], to[ti]);
        if exchange.as_ref().is_none_or(|(k, _)| *k != span) {
            let scope: Vec<Source> = turns[span.0..span.1]
                .iter()
                .flat_map(|t| t.items.iter())
                .filter_map(|&i| sources.get(i))
                .flatten()
                .cloned()
                .collect();
            exchange = Some((span, scope));
        }
        let scope = exchange.as_ref().map_or(&[][..], |(_, s)| s.as_slice());
        // Each number is compared with every cited value of its exchange (and the records).
        let width = (scope.len() + records.map_or(0, Vec::len)).max(1);
        let by_input = budget.min(comparisons / width);
        let keep = stated.len().min(MAX_NUMBERS).min(by_input);
        if keep == 0 {
            budget = 0;
            let u = out.unaudited.get_or_insert(Unaudited {
                answers: 0,
                numbers: 0,
                first_turn: ti,
                last_turn: ti,
            });
            u.answers += 1;
            u.numbers += stated.len();
            u.last_turn = ti;
            continue;
        }
        budget -= keep;
        comparisons -= keep * width;
        if stated.len() > keep {
            let by_input = keep < stated.len().min(MAX_NUMBERS);
            if by_input {
                // No later answer is traced: what is not audited stays one stretch of turns.
                budget = 0;
            }
            out.not_audited.push(NotAudited {
                turn: ti,
                message_id: turn.message_id.clone(),
                found: stated.len(),
                audited: keep,
                from: stated[keep].start,
                by_input,
            });
            stated.truncate(keep);
        }
        let answer = match records {
            Some(r) => audit_text(ti, turn, &stated, &[scope, r.as_slice()].concat()),
            None => audit_text(ti, turn, &stated, scope),
        };
        out.answers.push(answer);
    }
    out
}

/// Audits one text against the sources of its exchange. The second end of a range takes the
/// status of the first: a range is one statement (docs/answers.md).
pub fn audit_text(ti: usize, turn: &Turn, stated: &[Stated], scope: &[Source]) -> Answer {
    let spans = find::sentences(&turn.text);
    let lines = find::line_subjects(&turn.text);
    // The numbers of each sentence, indexed once per sentence.
    let mut by_sentence: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (k, s) in stated.iter().enumerate() {
        by_sentence.entry(s.sentence).or_default().push(k);
    }
    let mut traced: Vec<Option<StatedNumber>> = vec![None; stated.len()];
    for (&si, ks) in &by_sentence {
        let span = spans.get(si).copied().unwrap_or((0, turn.text.len()));
        let mine: Vec<&Stated> = ks.iter().map(|&k| &stated[k]).collect();
        let subjects = mine.iter().map(|n| find::subject_of(&turn.text, &lines, n.start)).collect();
        let ctx = Context::new(&turn.text, span, &mine, subjects);
        // A range's first end, waiting for its second.
        let mut first_end: Option<usize> = None;
        for &k in ks {
            let s = &stated[k];
            let copy = first_end.take().filter(|&f| s.range.is_some() && stated[f].range == s.range);
            let n = match copy.and_then(|f| traced[f].as_ref()) {
                Some(f) => StatedNumber { text: s.text.clone(), start: s.start, end: s.end, ..f.clone() },
                None => {
                    if s.range.is_some() {
                        first_end = Some(k);
                    }
                    trace(s, &ctx, scope)
                }
            };
            traced[k] = Some(n);
        }
    }
    let mut numbers: Vec<StatedNumber> = traced.into_iter().flatten().collect();
    let zero = || Status::ALL.iter().map(|s| (*s, 0)).collect::<BTreeMap<_, _>>();
    let mut counts = zero();
    for n in &numbers {
        *counts.entry(n.status).or_default() += 1;
    }
    // Sentence indices in numbers point into `sentences` (only those with numbers).
    let mut mine: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (k, n) in numbers.iter().enumerate() {
        mine.entry(n.sentence).or_default().push(k);
    }
    let mut sentences = Vec::with_capacity(mine.len());
    for (si, ks) in &mine {
        let (a, b) = spans.get(*si).copied().unwrap_or((0, 0));
        let mut c = BTreeMap::new();
        for &k in ks {
            *c.entry(numbers[k].status).or_default() += 1;
        }
        let worst = ks.iter().map(|&k| numbers[k].status).max_by_key(|s| doubt(*s));
        for &k in ks {
            numbers[k].sentence = sentences.len();
        }
        sentences.push(Sentence { start: a, end: b, counts: c, worst });
    }
    Answer {
        turn: ti,
        role: turn.role.clone(),
        message_id: turn.message_id.clone(),
        text: turn.text.clone(),
        counts,
        numbers,
        sentences,
        shown: Shown::Answer,
    }
}

/// A turn whose text the user was not shown as the answer (retracted, interrupted, errored):
/// listed as such, its numbers not audited.
fn set_aside(ti: usize, turn: &Turn) -> Answer {
    Answer {
        turn: ti,
        role: turn.role.clone(),
        message_id: turn.message_id.clone(),
        text: turn.text.clone(),
        counts: Status::ALL.iter().map(|s| (*s, 0)).collect(),
        numbers: Vec::new(),
        sentences: Vec::new(),
        shown: turn.shown,
    }
}
