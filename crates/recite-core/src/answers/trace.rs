//! Tracing: one stated number of an answer matched with the cited values of its exchange
//! ([`trace`]), as a level, a change in points ([`trace_change`]) or a relative change
//! ([`trace_relative`]); the status it gets and why, in words.

use std::collections::HashMap;

use super::answer::StatedNumber;
use super::context::{Context, work};
use super::find::{Kind, Stated};
use super::source::Source;
use super::status::{Status, doubt};
use crate::claim::{Claimed, fold};
use crate::extractor::Unit;
use crate::settle::compare::{compare, reads_as_percent};
use crate::settle::verdict::{Verdict, show};
use crate::stats::Estimate;

/// Whether `stated` agrees with `value` (a fraction for proportions) at its shown precision,
/// by the claims' half-unit rule.
fn agrees(stated: &Stated, unit: Unit, value: f64, count: bool) -> bool {
    if count || stated.kind == Kind::Count {
        return count && stated.decimals == 0 && stated.value == value;
    }
    let percent = matches!(stated.kind, Kind::Percent | Kind::Points | Kind::Relative);
    if percent && unit != Unit::Proportion {
        return false;
    }
    // A range agrees with any value inside it, each end at its shown precision.
    if let Some((lo, hi)) = stated.range {
        let v = if percent { value * 100.0 } else { value };
        let half = stated.half_unit();
        return v >= lo - half - 1e-9 && v <= hi + half + 1e-9;
    }
    let claimed = Claimed {
        text: stated.text.clone(),
        value: stated.value,
        decimals: stated.decimals,
        percent,
        key: None,
        pointer: String::new(),
        unreadable: None,
        word: false,
    };
    let e = Estimate {
        value,
        se: 0.0,
        df: 0.0,
        ci_low: value,
        ci_high: value,
        deff: None,
        sample: crate::stats::Sample::BaseRows,
    };
    compare(unit, Some(&e), &claimed).is_some_and(|c| c.matched)
}

/// A claimed number in its measure's units (a fraction for a proportion), and the unit to
/// compare in (a number of unknown unit is read as a proportion when it reads as one).
fn claimed_value(src: &Source, c: &Claimed) -> (Unit, f64) {
    let unit = src.unit.unwrap_or(if c.percent || (c.decimals > 0 && c.value.abs() <= 1.0) {
        Unit::Proportion
    } else {
        Unit::Value
    });
    let v = if unit == Unit::Proportion && reads_as_percent(unit, c) { c.value / 100.0 } else { c.value };
    (unit, v)
}

/// The status of a stated number that repeats `src`'s claimed number. A number that matched
/// its recomputed value is TRACED even when another number of the same claim did not (the same
/// re-run reproduced it); a wrong base n leaves every number of its claim in doubt.
fn traced_status(src: &Source) -> Status {
    if let Some(r) = &src.record {
        return r.status;
    }
    match src.verdict {
        Verdict::Invalid | Verdict::Unverifiable => Status::TracedUnverified,
        _ if src.recomputed.is_none() => Status::TracedUnverified,
        Verdict::Reproduced | Verdict::Discrepant if src.matched => Status::Traced,
        _ => Status::TracedToDiscrepant,
    }
}

/// How a report names a source: `claim #1 Considered`, or the cited record.
fn key_of(s: &Source) -> String {
    match &s.record {
        Some(r) => format!("record {}", r.label),
        None => format!("claim #{} {}", s.claim + 1, s.measure),
    }
}

/// Traces one stated number to the sources of its exchange; `ctx` is its sentence, indexed.
pub fn trace(stated: &Stated, ctx: &Context, sources: &[Source]) -> StatedNumber {
    work(sources.len());
    let out = uncited(stated);
    // Changes: traced to two cited values of the same measure.
    match stated.kind {
        Kind::Points => return trace_change(stated, ctx, sources, out),
        Kind::Relative => return trace_relative(stated, ctx, sources, out),
        _ => {}
    }
    let (by_claim, by_rec) = agreeing(stated, ctx, sources);
    let tier = if by_claim.is_empty() { &by_rec } else { &by_claim };
    if tier.is_empty() || coincides(stated, ctx, sources, tier) {
        return misquoted(stated, ctx, sources, out);
    }
    attributed(stated, ctx, &by_claim, &by_rec, out)
}

/// A stated number before tracing: UNCITED, pointing at nothing.
fn uncited(stated: &Stated) -> StatedNumber {
    StatedNumber {
        text: stated.text.clone(),
        start: stated.start,
        end: stated.end,
        sentence: stated.sentence,
        kind: stated.kind,
        status: Status::Uncited,
        claim: None,
        measure: None,
        record: None,
        claimed: None,
        recomputed: None,
        ambiguous: false,
        candidates: Vec::new(),
        attribution: None,
        why: "no citation of this exchange states or recomputes this number".into(),
    }
}

/// `src`'s recomputed value as the stated number writes it: a percentage for a share the
/// sentence states as one, at the stated precision.
fn recomputed_shown(stated: &Stated, src: &Source) -> Option<String> {
    let percent = matches!(stated.kind, Kind::Percent | Kind::Points);
    src.recomputed.map(|v| {
        if src.count {
            format!("{v}")
        } else if src.unit == Some(Unit::Proportion) && (percent || stated.value.abs() > 1.0) {
            show(v * 100.0, stated.decimals, true)
        } else {
            show(v, stated.decimals.max(0), false)
        }
    })
}

/// Points a stated number at `src` and shows `src`'s claimed and recomputed values.
fn quote(out: &mut StatedNumber, stated: &Stated, src: &Source) {
    point_at(out, src);
    out.claimed = src.claimed.as_ref().map(|c| c.text.clone());
    out.recomputed = recomputed_shown(stated, src);
}

/// The sources whose claimed value the number agrees with, and those whose recomputed value it
/// agrees with. A range is loose: it only traces to a measure its sentence names.
fn agreeing<'s>(stated: &Stated, ctx: &Context, sources: &'s [Source]) -> (Vec<&'s Source>, Vec<&'s Source>) {
    let named = |s: &&Source| stated.range.is_none() || ctx.names(s, stated.start, false).is_some();
    let by_claim = sources
        .iter()
        .filter(|s| {
            s.claimed.as_ref().is_some_and(|c| {
                let (unit, v) = claimed_value(s, c);
                agrees(stated, unit, v, s.count)
            })
        })
        .filter(named)
        .collect();
    let by_rec = sources
        .iter()
        .filter(|s| s.recomputed.is_some_and(|v| s.unit.is_some_and(|u| agrees(stated, u, v, s.count))))
        .filter(named)
        .collect();
    (by_claim, by_rec)
}

/// Whether the value only coincides with measures the sentence does not name, next to a cited
/// measure it does name (`consideration is 48%` against detractors 47.6%): a misquote, then.
fn coincides(stated: &Stated, ctx: &Context, sources: &[Source], tier: &[&Source]) -> bool {
    tier.iter().all(|s| !s.count && ctx.names(s, stated.start, false).is_none())
        && sources.iter().any(|s| {
            !s.count
                && (stated.kind == Kind::Number || s.unit.is_none_or(|u| u == Unit::Proportion))
                && ctx.names(s, stated.start, true).is_some()
        })
}

/// Attribution of a number that repeats cited values: keep the candidates whose period,
/// population and column label the sentence does not contradict; when it contradicts every
/// one, the number is MISATTRIBUTED: a true number given to the wrong wave, people or brand.
fn attributed(
    stated: &Stated,
    ctx: &Context,
    by_claim: &[&Source],
    by_rec: &[&Source],
    out: StatedNumber,
) -> StatedNumber {
    let (tier, mut recomputed_only) = if by_claim.is_empty() { (by_rec, true) } else { (by_claim, false) };
    let mut fit = fitting(ctx, stated.start, tier, tier);
    // The contradicted are dropped before claimed goes before recomputed: `Among women, 20%
    // purchased Versant` repeats Corvana's claimed 19.6% (another brand and base) and the
    // women's recomputed 19.5%, which nothing contradicts. Only a recomputed value whose
    // attribution is sure outweighs a claimed one the sentence gives the wrong brand: under
    // `among aware adults`, the women's 19.5% may be about other people; Corvana's is
    // another brand's.
    if fit.is_empty() && !recomputed_only {
        fit = fitting(ctx, stated.start, by_rec, tier);
        fit.retain(|s| ctx.unsure(s, stated.start).is_none());
        recomputed_only = true;
    }
    if fit.is_empty() {
        return misattributed(stated, ctx, tier.to_vec(), out);
    }
    let picked = narrow(fit, ctx, stated.start);
    let out = traced(stated, &picked, recomputed_only, out);
    unsure(ctx, stated.start, &picked, out)
}

/// The `candidates` the sentence does not contradict. None when those left are only measures it
/// does not name while it names one of the contradicted or of `tier`: they may only coincide,
/// the one it names having been given another wave, people or brand.
fn fitting<'s>(ctx: &Context, at: usize, candidates: &[&'s Source], tier: &[&'s Source]) -> Vec<&'s Source> {
    let named = |s: &&Source| ctx.names(s, at, false).is_some();
    let mut fit: Vec<&Source> =
        candidates.iter().copied().filter(|s| ctx.contradiction(s, at).is_none()).collect();
    if !fit.iter().any(named) && candidates.iter().chain(tier).any(named) {
        fit.clear();
    }
    fit
}

/// A number the sentence gives another period, population or brand than every candidate's:
/// MISATTRIBUTED, pointing at the nearest.
fn misattributed(stated: &Stated, ctx: &Context, tier: Vec<&Source>, mut out: StatedNumber) -> StatedNumber {
    let first = narrow(tier, ctx, stated.start)[0];
    let said = ctx.contradiction(first, stated.start).unwrap_or_default();
    out.status = Status::Misattributed;
    quote(&mut out, stated, first);
    out.why = format!("repeats the cited {}, but {said}", first.measure);
    out.attribution = Some(said);
    out
}

/// A number traced to the `picked` candidates: the most doubtful status of theirs (or
/// RECOMPUTED_ONLY), and ambiguous, never TRACED, when they are several cited measures.
fn traced(stated: &Stated, picked: &[&Source], recomputed_only: bool, mut out: StatedNumber) -> StatedNumber {
    let status_of = |s: &Source| if recomputed_only { Status::RecomputedOnly } else { traced_status(s) };
    let worst = picked.iter().copied().max_by_key(|s| doubt(status_of(s))).unwrap_or(picked[0]);
    let mut keys: Vec<String> = picked.iter().map(|s| key_of(s)).collect();
    keys.dedup();
    out.status = status_of(worst);
    quote(&mut out, stated, worst);
    out.why = repeats_why(worst, out.status);
    if keys.len() > 1 {
        ambiguous(&mut out, keys, "cited measures");
    }
    out
}

/// Marks a number that several cited `what` (measures, pairs) fit as ambiguous. Unsure which
/// citation it repeats, it is never counted as TRACED.
fn ambiguous(out: &mut StatedNumber, keys: Vec<String>, what: &str) {
    out.ambiguous = true;
    out.why.push_str(&format!(" (ambiguous: {} {what} fit)", keys.len()));
    out.candidates = listed(keys);
    if out.status == Status::Traced {
        out.status = Status::TracedUnverified;
        out.why.push_str("; which one the sentence means is not known");
    }
}

/// Why a number that repeats `worst` has `status`, in words.
fn repeats_why(worst: &Source, status: Status) -> String {
    if let Some(r) = &worst.record {
        return match status {
            Status::Traced => format!("stated by the cited record {} ({})", r.label, r.why),
            _ => format!("repeats the cited record {}, not checked: {}", r.label, r.why),
        };
    }
    let m = &worst.measure;
    match status {
        Status::Traced => format!("the cited {m} that recite reproduced"),
        Status::TracedToDiscrepant => format!("repeats the cited {m}, which the data does not support"),
        Status::TracedUnverified => {
            format!("repeats the cited {m}, which could not be re-run or was not checked")
        }
        _ => format!("recite's recomputed {m}, which the tool did not state so"),
    }
}

/// Unsure whom, when or which brand the sentence gives it: never counted as TRACED.
fn unsure(ctx: &Context, at: usize, picked: &[&Source], mut out: StatedNumber) -> StatedNumber {
    let Some(said) = picked.iter().find_map(|s| ctx.unsure(s, at)) else {
        return out;
    };
    if doubt(out.status) < doubt(Status::AttributionUnsure) {
        out.status = Status::AttributionUnsure;
    }
    out.why = format!("{}, but {said}", out.why);
    out.attribution = Some(said);
    out
}

/// Not a cited number: MISQUOTED when the sentence is about a cited measure of the same kind
/// (the nearest it names), else left UNCITED.
fn misquoted(stated: &Stated, ctx: &Context, sources: &[Source], mut out: StatedNumber) -> StatedNumber {
    let about = about(stated, ctx, sources);
    let Some(&(d, first)) = about.first() else {
        return out;
    };
    let nearest: Vec<&Source> = about.iter().filter(|(e, _)| *e == d).map(|(_, s)| *s).collect();
    let mut keys: Vec<String> = nearest.iter().map(|s| key_of(s)).collect();
    keys.dedup();
    out.status = Status::Misquoted;
    quote(&mut out, stated, first);
    out.why = match &first.record {
        Some(r) => {
            // Every number of that record's kind, so the reader sees what it does say.
            let said: Vec<&str> = nearest
                .iter()
                .filter(|s| s.record.as_ref().is_some_and(|x| x.label == r.label))
                .filter_map(|s| s.claimed.as_ref().map(|c| c.text.as_str()))
                .collect();
            out.claimed = Some(said.join(", "));
            format!(
                "the sentence refers to the cited record {}, but {} is not a number it states ({})",
                r.label,
                stated.text,
                said.join(", ")
            )
        }
        None => format!(
            "the sentence is about the cited {}, but {} is neither its claimed ({}) nor its recomputed value ({})",
            first.measure,
            stated.text,
            out.claimed.as_deref().unwrap_or("not stated"),
            out.recomputed.as_deref().unwrap_or("not re-run")
        ),
    };
    if keys.len() > 1 {
        out.ambiguous = true;
        out.candidates = listed(keys);
    }
    out
}

/// The cited measures of the number's kind its sentence is about, each with how far from the
/// number it names them, nearest first.
fn about<'s>(stated: &Stated, ctx: &Context, sources: &'s [Source]) -> Vec<(usize, &'s Source)> {
    let compatible = |s: &Source| match stated.kind {
        Kind::Count => s.count,
        Kind::Percent => s.unit.is_none_or(|u| u == Unit::Proportion) && !s.count,
        _ => !s.count,
    };
    let mut about: Vec<(usize, &Source)> = sources
        .iter()
        .filter(|s| compatible(s) && !degenerate(s) && ctx.measure_of_another(s, stated.start).is_none())
        .filter_map(|s| {
            // A count stated as `n =` is about a base.
            let d = if s.count && s.record.is_none() { Some(0) } else { ctx.names(s, stated.start, true) };
            d.map(|d| (d, s))
        })
        .collect();
    about.sort_by_key(|(d, _)| *d);
    about
}

/// Whether `src` is a share its base fixes, that the tool did not state: `Aware` among the
/// aware is 100% by construction, so a sentence's other awareness figure (`awareness of the
/// new campaign is 33%`) is about something else, not a misquote of it.
fn degenerate(src: &Source) -> bool {
    src.claimed.is_none()
        && src.unit == Some(Unit::Proportion)
        && src.recomputed.is_some_and(|v| v == 0.0 || v == 1.0)
}

/// Candidates a stated number lists at most: past them, one more entry counts the rest (an
/// exchange of 2,000 identical citations gave each number 4,000 candidates, 96 KB of report).
pub const MAX_CANDIDATES: usize = 20;

/// `keys` as a number lists them: the first [`MAX_CANDIDATES`], then `… and N more`.
fn listed(mut keys: Vec<String>) -> Vec<String> {
    if keys.len() > MAX_CANDIDATES {
        let more = keys.len() - MAX_CANDIDATES;
        keys.truncate(MAX_CANDIDATES);
        keys.push(format!("… and {more} more"));
    }
    keys
}

/// Points a stated number at its source: a claim and measure, or a MOCA-cited record.
fn point_at(out: &mut StatedNumber, src: &Source) {
    match &src.record {
        Some(r) => out.record = Some(r.label.clone()),
        None => {
            out.claim = Some(src.claim);
            out.measure = Some(src.measure.clone());
        }
    }
}

/// Several candidates: keep those whose measure the sentence mentions nearest to the number,
/// then those whose base n it states. What is left and still differs is ambiguous.
fn narrow<'a>(tier: Vec<&'a Source>, ctx: &Context, at: usize) -> Vec<&'a Source> {
    let distinct = |v: &[&Source]| {
        let mut k: Vec<(usize, &str)> = v.iter().map(|s| (s.claim, s.measure.as_str())).collect();
        k.sort();
        k.dedup();
        k.len()
    };
    let mut picked = tier;
    if distinct(&picked) > 1 {
        // Those whose measure the sentence names nearest to the number: in `Among aware adults,
        // 70% are familiar`, familiar, not the Aware that `aware adults` also names.
        let named: Vec<(usize, &Source)> =
            picked.iter().filter_map(|s| ctx.names(s, at, false).map(|d| (d, *s))).collect();
        if let Some(nearest) = named.iter().map(|(d, _)| *d).min() {
            picked = named.into_iter().filter(|(d, _)| *d == nearest).map(|(_, s)| s).collect();
        }
    }
    if distinct(&picked) > 1 {
        // Those whose cited base the sentence's population phrase says most of: `Among
        // adults aware of Versant, 44%` is the aware adults' 44%, not all adults'. Before any
        // rule that settles a tie by doubt: the attribution is sure here.
        let said: Vec<usize> = picked.iter().map(|s| ctx.population_said(s, at)).collect();
        let most = said.iter().copied().max().unwrap_or(0);
        if most > 0 && said.iter().any(|&n| n < most) {
            picked = picked.into_iter().zip(said).filter(|(_, n)| *n == most).map(|(s, _)| s).collect();
        }
    }
    if distinct(&picked) > 1 {
        let based: Vec<&Source> = picked
            .iter()
            .copied()
            .filter(|s| s.base_n.is_some_and(|n| ctx.counts.contains(&(n as f64))))
            .collect();
        if !based.is_empty() {
            picked = based;
        }
    }
    picked
}

/// How much the pair (`x`, `y`) of cited values (fractions) changed, in the units of `stated`:
/// points, or for a relative change percent of the starting value (rising from the lower, or
/// falling from the higher, as the change word says; either when it says neither).
fn changes(stated: &Stated, x: f64, y: f64) -> Vec<f64> {
    let (hi, lo) = if x >= y { (x, y) } else { (y, x) };
    if stated.kind != Kind::Relative {
        return vec![(hi - lo) * 100.0];
    }
    if lo <= 0.0 {
        return Vec::new();
    }
    let up = (hi - lo) / lo * 100.0;
    let down = (hi - lo) / hi * 100.0;
    match stated.direction {
        1 => vec![up],
        -1 => vec![down],
        _ => vec![up, down],
    }
}

/// Two cited values of one measure from two claims, a change may be traced to.
type Pair<'s> = (&'s Source, &'s Source);

/// Traces a change to two cited values of one measure from two claims (two waves, two
/// brands): in points, their difference; for a relative change, their ratio. TRACED (or the
/// more doubtful status of the two) when it matches the claimed values' change,
/// RECOMPUTED_ONLY when it matches only recite's; several pairs are narrowed like levels (the
/// measure named, the base n stated) and what is left is ambiguous, never TRACED. A change
/// that fits no pair, in a sentence naming a measure cited twice, is MISQUOTED against that
/// pair (`up 1.9 points` when the cited waves moved 2.4), or against none when no pair fits
/// what the sentence names (`Corvana's purchase fell 12% since W5`, no Corvana W5 cited).
fn trace_change(stated: &Stated, ctx: &Context, sources: &[Source], out: StatedNumber) -> StatedNumber {
    let props = shares(sources);
    let pairs = pairs(ctx, stated.start, &props);
    let (tier, recomputed_only) = fitting_pairs(stated, &pairs);
    // A change that only coincides with pairs of a measure the sentence does not name, next to
    // a measure it names that is cited twice, is a misquote (as for levels); next to a measure
    // it names that no pair has (cited once, or no share: `the NPS gap is 5 points`), it is no
    // change of a pair at all.
    let named_pair = |(a, _): &Pair| ctx.names(a, stated.start, true).is_some();
    let names_unpaired = || sources.iter().any(|s| ctx.names(s, stated.start, true).is_some());
    let coincidence = !tier.iter().any(named_pair) && (pairs.iter().any(named_pair) || names_unpaired());
    if !tier.is_empty() && !coincidence {
        return traced_change(stated, ctx, tier, recomputed_only, out);
    }
    // No pair fits: a change the sentence states about a measure cited twice is a misquote.
    let named: Vec<Pair> = pairs.iter().copied().filter(named_pair).collect();
    if !named.is_empty() {
        return misquoted_change(stated, &named, out);
    }
    match cited_twice(ctx, stated.start, &props) {
        Some(a) => unpaired_change(a, out),
        None => uncited_change(stated, out),
    }
}

/// The shares a change may be between: re-run ones, and those of a result that was not re-run
/// (no unit) that read as shares, whose changes are TRACED_UNVERIFIED, not UNCITED.
fn shares(sources: &[Source]) -> Vec<&Source> {
    let share = |s: &Source| match s.unit {
        Some(u) => u == Unit::Proportion,
        None => s.claimed.as_ref().is_some_and(|c| claimed_value(s, c).0 == Unit::Proportion),
    };
    sources.iter().filter(|s| share(s) && s.record.is_none() && !degenerate(s)).collect()
}

/// The pairs of shares of one measure from two claims that differ in what the sentence allows
/// a change between.
fn pairs<'s>(ctx: &Context, at: usize, props: &[&'s Source]) -> Vec<Pair<'s>> {
    let mut pairs = Vec::new();
    for (i, &a) in props.iter().enumerate() {
        for &b in &props[i + 1..] {
            if fold(&a.measure) == fold(&b.measure)
                && a.claim != b.claim
                && (ctx.fits_pair(a, b, at) || states_both(ctx, at, a, b))
            {
                pairs.push((a, b));
            }
        }
    }
    work(pairs.len());
    pairs
}

/// Whether the sentence itself states both values of the pair as two of its levels (`31.5%
/// … against 44.2% …, a gap of 12.7 points`): a change between them is derived from what the
/// reader was shown, whatever the two are of, so it may be traced to that pair though the
/// sentence's words would not pair them by themselves.
fn states_both(ctx: &Context, at: usize, a: &Source, b: &Source) -> bool {
    let says = |s: &Source, l: &Stated| {
        s.claimed.as_ref().is_some_and(|c| {
            let (unit, v) = claimed_value(s, c);
            agrees(l, unit, v, s.count)
        }) || s.recomputed.is_some_and(|v| s.unit.is_some_and(|u| agrees(l, u, v, s.count)))
    };
    // The levels nearest the change, a few each side: the operands stand next to what is
    // derived from them, and the work per change stays constant in a long sentence.
    let k = ctx.stated_levels.partition_point(|l| l.start < at);
    let levels =
        &ctx.stated_levels[k.saturating_sub(NEAR_OPERANDS)..(k + NEAR_OPERANDS).min(ctx.stated_levels.len())];
    levels
        .iter()
        .enumerate()
        .any(|(i, l)| says(a, l) && levels.iter().enumerate().any(|(j, m)| j != i && says(b, m)))
}

/// Levels each side of a change that may be what it is derived from.
const NEAR_OPERANDS: usize = 3;

/// A cited number as claimed, in its measure's units.
fn claimed_of(s: &Source) -> Option<f64> {
    s.claimed.as_ref().map(|c| claimed_value(s, c).1)
}

/// The pairs whose claimed values changed by the stated amount; when none did, those whose
/// recomputed values did (and `true`: RECOMPUTED_ONLY).
fn fitting_pairs<'s>(stated: &Stated, pairs: &[Pair<'s>]) -> (Vec<Pair<'s>>, bool) {
    let fits = |x: f64, y: f64| {
        changes(stated, x, y).iter().any(|c| (c - stated.value.abs()).abs() <= stated.half_unit() + 1e-9)
    };
    let by_claim: Vec<Pair> = pairs
        .iter()
        .copied()
        .filter(|(a, b)| claimed_of(a).zip(claimed_of(b)).is_some_and(|(x, y)| fits(x, y)))
        .collect();
    if !by_claim.is_empty() {
        return (by_claim, false);
    }
    let by_rec = pairs
        .iter()
        .copied()
        .filter(|(a, b)| a.recomputed.zip(b.recomputed).is_some_and(|(x, y)| fits(x, y)));
    (by_rec.collect(), true)
}

/// Narrowed as levels are: the pairs whose measure the sentence names, then those whose base n
/// it states (each only when it leaves some out, and some in).
fn narrow_pairs<'s>(ctx: &Context, at: usize, tier: Vec<Pair<'s>>) -> Vec<Pair<'s>> {
    let mut picked = tier;
    // Those whose two ends are the two options the sentence contrasts (`Versant's
    // consideration is 1.4 times Corvana's`: Versant's against Corvana's, not two of Versant's).
    let contrasted: Vec<Pair> = picked.iter().copied().filter(|(a, b)| ctx.contrasts(a, b, at)).collect();
    if !contrasted.is_empty() && contrasted.len() < picked.len() {
        picked = contrasted;
    }
    let named: Vec<Pair> = picked.iter().copied().filter(|(a, _)| ctx.names(a, at, true).is_some()).collect();
    if !named.is_empty() && named.len() < picked.len() {
        picked = named;
    }
    let stated_n = |s: &Source| s.base_n.is_some_and(|n| ctx.counts.contains(&(n as f64)));
    let based: Vec<Pair> = picked.iter().copied().filter(|(a, b)| stated_n(a) || stated_n(b)).collect();
    if !based.is_empty() && based.len() < picked.len() {
        picked = based;
    }
    picked
}

/// What a change is called in words: a difference in points, or a relative change.
fn change_word(stated: &Stated) -> &'static str {
    if stated.kind == Kind::Relative { "relative change" } else { "difference" }
}

/// How a report names each pair (`claims #1 and #2 Considered`), sorted, each once.
fn pair_keys(pairs: &[Pair]) -> Vec<String> {
    let mut keys: Vec<String> = pairs
        .iter()
        .map(|(a, b)| format!("claims #{} and #{} {}", a.claim + 1, b.claim + 1, a.measure))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// A change traced to the pairs of `tier`: the most doubtful status of the pair's two (or
/// RECOMPUTED_ONLY), and ambiguous, never TRACED, when several pairs are left.
fn traced_change(
    stated: &Stated,
    ctx: &Context,
    tier: Vec<Pair>,
    recomputed_only: bool,
    mut out: StatedNumber,
) -> StatedNumber {
    let picked = narrow_pairs(ctx, stated.start, tier);
    let status_of = |(a, b): Pair| {
        if recomputed_only {
            return Status::RecomputedOnly;
        }
        [traced_status(a), traced_status(b)].into_iter().max_by_key(|s| doubt(*s)).unwrap_or(Status::Traced)
    };
    let worst = picked.iter().copied().max_by_key(|p| doubt(status_of(*p))).unwrap_or(picked[0]);
    let (a, b) = worst;
    out.status = status_of(worst);
    out.claim = Some(a.claim);
    out.measure = Some(a.measure.clone());
    out.why = format!(
        "the {} between the cited {} of claims #{} and #{}",
        change_word(stated),
        a.measure,
        a.claim + 1,
        b.claim + 1
    );
    let keys = pair_keys(&picked);
    if keys.len() > 1 {
        ambiguous(&mut out, keys, "cited pairs");
    }
    out
}

/// A change of a measure the sentence names, that none of its cited pairs (`named`) made:
/// MISQUOTED against the first, showing that pair's claimed and recomputed changes.
fn misquoted_change(stated: &Stated, named: &[Pair], mut out: StatedNumber) -> StatedNumber {
    let (a, b) = named[0];
    let diff = |x: Option<f64>, y: Option<f64>| {
        x.zip(y)
            .and_then(|(x, y)| changes(stated, x, y).first().copied())
            .map(|v| show(v, stated.decimals, stated.kind == Kind::Relative))
    };
    out.status = Status::Misquoted;
    out.claim = Some(a.claim);
    out.measure = Some(a.measure.clone());
    out.claimed = diff(claimed_of(a), claimed_of(b));
    out.recomputed = diff(a.recomputed, b.recomputed);
    out.why = format!(
        "the sentence states a change in the cited {}, but {} is not the {} between claims #{} and #{} (claimed {}, recomputed {})",
        a.measure,
        stated.text,
        change_word(stated),
        a.claim + 1,
        b.claim + 1,
        out.claimed.as_deref().unwrap_or("not stated"),
        out.recomputed.as_deref().unwrap_or("not re-run")
    );
    let keys = pair_keys(named);
    if keys.len() > 1 {
        out.ambiguous = true;
        out.candidates = listed(keys);
    }
    out
}

/// A share the sentence names whose measure two claims cite, though no pair of them fits the
/// waves, brands and populations the sentence names (`Corvana's purchase fell 12% since W5`,
/// no Corvana W5 cited).
fn cited_twice<'s>(ctx: &Context, at: usize, props: &[&'s Source]) -> Option<&'s Source> {
    let mut claims_of: HashMap<String, (usize, usize)> = HashMap::new();
    for s in props {
        let e = claims_of.entry(fold(&s.measure)).or_insert((s.claim, s.claim));
        e.1 = e.1.max(s.claim);
        e.0 = e.0.min(s.claim);
    }
    props.iter().copied().find(|s| {
        claims_of.get(&fold(&s.measure)).is_some_and(|(a, b)| a != b) && ctx.names(s, at, true).is_some()
    })
}

/// The change the sentence states of `a`'s measure, cited twice, is one no two cited results
/// say: MISQUOTED.
fn unpaired_change(a: &Source, mut out: StatedNumber) -> StatedNumber {
    out.status = Status::Misquoted;
    out.claim = Some(a.claim);
    out.measure = Some(a.measure.clone());
    out.why = format!(
        "the sentence states a change in the cited {}, but no two cited results of it fit the waves, brands and populations the sentence names",
        a.measure
    );
    out
}

/// A change no two cited values of one measure made: left UNCITED.
fn uncited_change(stated: &Stated, mut out: StatedNumber) -> StatedNumber {
    out.why = if stated.kind == Kind::Relative {
        "no two cited values of one measure changed by this share".into()
    } else {
        "no two cited values of one measure differ by this many points".into()
    };
    out
}

/// Whether a status says the number repeats something cited (not UNCITED or MISQUOTED).
fn repeats(s: Status) -> bool {
    !matches!(s, Status::Uncited | Status::Misquoted)
}

/// Traces a relative change (`rose 12%`, `fell by a fifth`) to the ratio of two cited values
/// ([`trace_change`]). Analysts also write a change in points, or a level, after a change word
/// (`fell 2.8%` for 2.8 points, `fell 27%` for `fell to 27%`): when the number matches one of
/// those readings, alone or besides the relative one, which one the sentence means is not
/// known, so the number is marked ambiguous and never TRACED (docs/answers.md).
fn trace_relative(stated: &Stated, ctx: &Context, sources: &[Source], out: StatedNumber) -> StatedNumber {
    let relative = trace_change(stated, ctx, sources, out.clone());
    let reading = |kind: Kind| Stated { kind, direction: 0, ..stated.clone() };
    // A fraction word is never a change in points or a level (`fell by a fifth`).
    let written = stated.tolerance.is_none();
    let points = written.then(|| trace_change(&reading(Kind::Points), ctx, sources, out.clone()));
    let level = written.then(|| trace(&reading(Kind::Percent), ctx, sources));
    // A cited record states the number as written (`rose 12%` in the record's text): the
    // answer repeats it, whatever it means.
    if let Some(l) = level.as_ref().filter(|l| l.record.is_some() && repeats(l.status)) {
        return StatedNumber { kind: Kind::Relative, ..l.clone() };
    }
    let others: Vec<(&str, &StatedNumber)> =
        [("a change in points", points.as_ref()), ("a level", level.as_ref())]
            .into_iter()
            .filter_map(|(w, n)| n.filter(|n| repeats(n.status)).map(|n| (w, n)))
            .collect();
    if others.is_empty() {
        return relative;
    }
    let mut readings: Vec<(&str, &StatedNumber)> = Vec::new();
    if repeats(relative.status) {
        readings.push(("a relative change", &relative));
    }
    readings.extend(others);
    let (_, worst) = *readings.iter().max_by_key(|(_, n)| doubt(n.status)).unwrap_or(&readings[0]);
    let mut n = worst.clone();
    n.kind = Kind::Relative;
    n.ambiguous = true;
    // Every reading, the relative one even when it repeats nothing (`MISQUOTED: ...`).
    let mut all = readings.clone();
    if !repeats(relative.status) {
        all.insert(0, ("a relative change", &relative));
    }
    n.candidates = all
        .iter()
        .map(|(w, r)| match (r.claim, &r.measure) {
            (Some(c), Some(m)) => format!("as {w}: {} claim #{} {m}", r.status, c + 1),
            _ => format!("as {w}: {} ({})", r.status, r.why),
        })
        .collect();
    if doubt(n.status) < doubt(Status::TracedUnverified) {
        n.status = Status::TracedUnverified;
    }
    let read = readings.iter().map(|(w, _)| *w).collect::<Vec<_>>().join(" or ");
    n.why = format!(
        "a percentage after a change word: read as {read}, it repeats {}; which one the sentence means is not known",
        worst.why
    );
    n
}
