//! The HTML report: one self-contained page that shows each conversation with a verdict beside
//! every cited number; the recomputed value, base and sampling error open on click
//! (`<details>`), so the page needs no script at all.
//!
//! A claim settled with its series ([`Settlement::series`]) shows a chart of each claimed
//! measure across the periods of its study ([`super::chart`]).
//!
//! Every piece of transcript text is escaped; nothing is loaded from anywhere, and the page's
//! Content-Security-Policy (`default-src 'none'`) says so to the browser. MOCA citation records
//! are rendered by the spec's client rules: keyed by `node.ref`, trust shown as the Reader
//! contract says, record text as data, links only for http and https.

use std::fmt::Write as _;
use std::io::{self, Write as _};

use std::borrow::Cow;

use rayon::prelude::*;
use serde_json::Value;

use super::escape::{self, cap, cap_at, html as text, is_bidi_control, visible};
use super::stream::{self, Closing, InputHead, InputTail, Spool};
use super::{ClaimReport, Report};
use crate::answers::Answer;
use crate::input::Turn;
use crate::moca::MocaEvent;
use crate::settle::verdict::{Gap, Settlement, Verdict};

const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

const STYLE: &str = r#"
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:16px 28px}header h1{margin:0;font-size:20px}
main{max-width:1100px;margin:0 auto;padding:16px 28px}
.summary span{display:inline-block;margin-right:12px}.summary .stats{color:#c9ced8;font-size:13px}
section.input{background:#fff;border:1px solid #dde1e7;border-radius:8px;margin:18px 0;padding:12px 18px}
h2{font-size:16px;margin:4px 0 10px;font-family:ui-monospace,monospace}
.turn{border-left:4px solid #c9ced8;padding:6px 12px;margin:10px 0;background:#fafbfc}
.turn.user{border-color:#6b8afd}.turn.agent,.turn.assistant{border-color:#2fa36b}.turn.tool{border-color:#b07cd8}
.role{font-size:12px;text-transform:uppercase;color:#5b6474;letter-spacing:.04em}
.text{white-space:pre-wrap;margin:4px 0}
.claim{margin:6px 0;padding:6px 10px;border:1px solid #e3e6eb;border-radius:6px;background:#fff}
.claim[data-verdict=REPRODUCED]{border-left:4px solid #1f8a4c}.claim[data-verdict=DISCREPANT]{border-left:4px solid #c62828}
.claim[data-verdict=BASE_MISMATCH]{border-left:4px solid #c77700}.claim[data-verdict=UNVERIFIABLE]{border-left:4px solid #7b3fa0}
.claim[data-verdict=INVALID]{border-left:4px solid #8a1c1c}
.claim-verdict{margin:0 8px 0 0}
.cited,.uncompared{display:inline-block;white-space:nowrap;margin:2px 14px 2px 0}
.num{font-weight:600;font-family:ui-monospace,monospace}
.recomputed{font-size:12px;color:#c62828;font-family:ui-monospace,monospace}
.cited .badge{background:#fff;border:1.5px solid;padding:0 6px}.cited .REPRODUCED{color:#1f7a45}.cited .DISCREPANT{color:#c62828}
.cited .BASE_MISMATCH{color:#a15c00}.cited .UNVERIFIABLE{color:#7b3fa0}.cited .INVALID{color:#8a1c1c}
.why{font-size:13px;margin:2px 0}
.uncompared{color:#5b6474}
.badge{display:inline-block;font-size:11px;font-weight:700;padding:1px 7px;border-radius:10px;color:#fff;margin-left:6px;vertical-align:1px}
.REPRODUCED{background:#1f7a45}.DISCREPANT{background:#c62828}.BASE_MISMATCH{background:#8a5300}
.UNVERIFIABLE{background:#7b3fa0}.INVALID{background:#8a1c1c}
details summary{cursor:pointer}
table{border-collapse:collapse;margin:6px 0;font-size:13px}td,th{border:1px solid #e3e6eb;padding:3px 8px;text-align:left}
.muted{color:#5b6474;font-size:13px}
.finding{font-size:13px;margin:3px 0}.MUST{color:#b71c1c;font-weight:700}.SHOULD{color:#a15c00;font-weight:700}.NOTE{color:#5b6474}
.warn{color:#8a5a00;font-weight:600}
.record{border:1px solid #e3e6eb;border-radius:6px;padding:6px 10px;margin:6px 0;background:#fff}
.trust{display:inline-block;font-size:11px;padding:1px 6px;border-radius:4px;margin:1px 4px 2px 0;border:1px solid #9aa3b2}
.trust.attested{background:#e6f4ea;border-color:#1f8a4c}.trust.declared,.trust.none{background:#f1f3f6}
.trust-line{margin:3px 0}.record-text{font-size:13px;background:#fafbfc;padding:4px 8px;border-radius:4px;overflow-wrap:anywhere}
.moca{margin:8px 0}.text{overflow-wrap:anywhere}
.trust.flag{background:#fff3e0;border-color:#c77700;color:#8a4b00;font-weight:700}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:4px 12px;margin:6px 0}
.chart{margin:0}.chart svg{display:block;max-width:100%;height:auto}.chart-title{font-size:13px;font-weight:600;margin:2px 0}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
"#;

/// Tool results longer than this many characters are folded.
const TOOL_TEXT_SHOWN: usize = 400;

/// A conversation turn's text: as [`escape::html`], capped at [`escape::MAX_TURN_CHARS`].
fn turn_text(s: &str) -> Cow<'static, str> {
    Cow::Owned(html_escape::encode_text(&visible(&cap_at(s, escape::MAX_TURN_CHARS))).into_owned())
}

/// Input text as a double-quoted attribute value, capped.
fn attr(s: &str) -> Cow<'static, str> {
    Cow::Owned(html_escape::encode_double_quoted_attribute(&cap(s)).into_owned())
}

/// `n` and the thing counted, in the plural unless it is one: `1 claim`, `3 claims`.
fn counted(n: u64, one: &str) -> String {
    if n == 1 { format!("1 {one}") } else { format!("{n} {one}s") }
}

/// The report as one self-contained HTML page.
pub fn render(report: &Report) -> String {
    stream::render_whole(report, Writer::new)
}

/// The HTML report, written as it goes: the summary heads the page, so the inputs are spooled.
/// An input without a conversation streams claim by claim; one with a conversation (whose
/// turns the claims are placed in) is held until it ends, as its transcript was.
pub struct Writer {
    out: Box<dyn io::Write>,
    body: Spool,
    turns: Vec<Turn>,
    held: Vec<ClaimReport>,
}

impl Writer {
    /// An HTML report to `out`.
    pub fn new(out: Box<dyn io::Write>) -> Writer {
        Writer { out, body: Spool::new(), turns: Vec::new(), held: Vec::new() }
    }
}

impl stream::Writer for Writer {
    fn begin_input(&mut self, head: InputHead<'_>) -> io::Result<()> {
        let format = head.format.map(|f| f.to_string()).unwrap_or_else(|| "unreadable".into());
        self.turns = head.turns.to_vec();
        self.held.clear();
        writeln!(
            self.body,
            "<section class=\"input\"><h2>{} <span class=\"muted\">({format})</span></h2>",
            text(head.file)
        )
    }

    fn claim(&mut self, c: &ClaimReport) -> io::Result<()> {
        if self.turns.is_empty() {
            let mut o = String::new();
            render_claim(&mut o, c);
            self.body.write_all(o.as_bytes())
        } else {
            self.held.push(c.clone());
            Ok(())
        }
    }

    fn claims(&mut self, cs: &[ClaimReport]) -> io::Result<()> {
        if !self.turns.is_empty() {
            self.held.extend_from_slice(cs);
            return Ok(());
        }
        let texts: Vec<String> = cs
            .par_iter()
            .map(|c| {
                let mut o = String::new();
                render_claim(&mut o, c);
                o
            })
            .collect();
        texts.iter().try_for_each(|t| self.body.write_all(t.as_bytes()))
    }

    fn end_input(&mut self, tail: InputTail<'_>) -> io::Result<()> {
        let mut o = String::new();
        let turns = std::mem::take(&mut self.turns);
        let claims = std::mem::take(&mut self.held);
        let _ = write!(o, "<div class=\"coverage muted\">{}</div>", text(&tail.coverage.line()));
        render_turns(&mut o, &turns, &claims, tail.answers, tail.moca);
        let placed: Vec<&str> = turns.iter().filter_map(|t| t.message_id.as_deref()).collect();
        for ev in tail.moca.iter().filter(|e| !e.message_id.as_deref().is_some_and(|m| placed.contains(&m))) {
            render_moca(&mut o, ev, false);
        }
        if !tail.findings.is_empty() {
            o.push_str("<h3>Findings</h3>");
            for f in tail.findings {
                let level = f.level.as_str();
                let _ = write!(
                    o,
                    "<div class=\"finding\"><span class=\"{level}\">{level}</span> <code>{}</code> <span class=\"muted\">{}</span> {}</div>",
                    text(&f.rule),
                    text(&f.locator.to_string()),
                    text(&f.message)
                );
            }
        }
        o.push_str("</section>\n");
        self.body.write_all(o.as_bytes())
    }

    fn finish(&mut self, c: Closing<'_>) -> io::Result<()> {
        let mut o = String::new();
        let _ = write!(
            o,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\
<meta name=\"referrer\" content=\"no-referrer\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>recite report</title><style>{STYLE}{}</style></head><body>\n",
            super::answers::HTML_STYLE
        );
        let s = c.summary;
        let _ = write!(
            o,
            "<header><h1>recite: {} checked</h1><div class=\"summary\">",
            counted(s.claims as u64, "claim")
        );
        for (v, n) in &s.verdicts {
            let _ = write!(o, "<span><span class=\"badge {v}\">{v}</span> {n}</span>", v = v.as_str());
        }
        let _ = write!(
            o,
            "<span>{}</span><span class=\"stats coverage\">{}</span><span class=\"stats\">{} scanned, {}, {}</span>",
            counted(s.findings as u64, "finding"),
            text(&s.coverage.line()),
            counted(c.stats.tables_scanned as u64, "table"),
            counted(c.stats.rows_scanned, "row"),
            counted(c.stats.scans as u64, "scan")
        );
        if let Some(d) = c.data_layer {
            let _ = write!(o, "<span class=\"stats data-layer\">{}</span>", text(&d.line()));
            if let Some(w) = &d.warning {
                let _ = write!(o, "<span class=\"stats data-layer-warning\">warning: {}</span>", text(w));
            }
        }
        o.push_str("</div></header>\n<main>\n");
        self.out.write_all(o.as_bytes())?;
        self.body.drain_to(&mut self.out)?;
        self.out.write_all(b"</main></body></html>\n")?;
        self.out.flush()
    }
}

/// The conversation of an input with its claims and MOCA events placed in their turns, then
/// the claims no turn placed (none when there is no conversation: those were written as they
/// came).
fn render_turns(
    o: &mut String,
    turns: &[Turn],
    claims: &[ClaimReport],
    answers: &[Answer],
    moca: &[MocaEvent],
) {
    let mut shown = vec![false; claims.len()];
    // Each turn's answer looked up, not searched for (turns × answers was quadratic).
    let by_turn: std::collections::HashMap<usize, &Answer> =
        answers.iter().rev().map(|a| (a.turn, a)).collect();
    for (ti, turn) in turns.iter().enumerate() {
        let answer = by_turn.get(&ti).copied();
        let role = turn.role.to_lowercase();
        let class = match role.as_str() {
            "user" | "agent" | "assistant" | "tool" | "system" | "developer" => role.as_str(),
            _ => "other",
        };
        let _ = write!(o, "<div class=\"turn {class}\"><div class=\"role\">{}", text(&role));
        if let Some(id) = &turn.message_id {
            let _ = write!(o, " · <span class=\"muted\">{}</span>", text(id));
        }
        o.push_str("</div>");
        if class == "tool" && turn.text.chars().count() > TOOL_TEXT_SHOWN {
            // A tool result is often a long JSON blob: folded, as the citations are shown anyway.
            let _ = write!(
                o,
                "<details class=\"tool-text\"><summary>tool result ({} characters)</summary><div class=\"text\">{}</div></details>",
                turn.text.chars().count(),
                turn_text(&turn.text)
            );
        } else if let Some(a) = answer {
            let _ = write!(o, "<div class=\"text\">{}</div>", super::answers::html_text(a));
            o.push_str(&super::answers::html_summary(a));
        } else if !turn.text.is_empty() {
            let _ = write!(o, "<div class=\"text\">{}</div>", turn_text(&turn.text));
        }
        for &i in &turn.items {
            if let Some(c) = claims.get(i) {
                shown[i] = true;
                render_claim(o, c);
            }
        }
        if let Some(id) = &turn.message_id {
            for ev in moca.iter().filter(|e| e.message_id.as_deref() == Some(id.as_str())) {
                render_moca(o, ev, true);
            }
        }
        o.push_str("</div>\n");
    }
    // Claims not placed in a turn (readers without turns for every item).
    for (i, c) in claims.iter().enumerate() {
        if !shown[i] {
            render_claim(o, c);
        }
    }
}

/// One claim: the claim's verdict, then each claimed number with its own verdict beside it
/// (REPRODUCED when it is the data's number, DISCREPANT when not, BASE_MISMATCH when it is but
/// the base is not); the recomputed numbers, base and sampling error open on click.
fn render_claim(o: &mut String, c: &ClaimReport) {
    let s = &c.settlement;
    let v = s.verdict.as_str();
    let _ = write!(o, "<div class=\"claim\" data-verdict=\"{v}\">");
    let compared: Vec<_> = s.measures.iter().flat_map(|m| m.claims.iter().map(move |cl| (m, cl))).collect();
    if compared.is_empty() {
        let what = s.rerun.as_ref().map(|r| r.label()).unwrap_or_else(|| "citation".into());
        let _ = write!(
            o,
            "<span class=\"cited\" data-verdict=\"{v}\">{} <span class=\"badge {v}\">{v}</span></span>",
            text(&what)
        );
        if s.rerun.is_none()
            && let Some(why) = s.reasons.first()
        {
            let _ = write!(o, "<div class=\"why\">{}</div>", text(why));
        }
    } else {
        let _ =
            write!(o, "<span class=\"badge claim-verdict {v}\" title=\"the claim's verdict\">{v}</span> ");
    }
    let base_ok = s.base.as_ref().is_none_or(|b| b.matched);
    for (m, cl) in &compared {
        let nv = match s.verdict {
            Verdict::Invalid | Verdict::Unverifiable => s.verdict,
            _ if !cl.matched => Verdict::Discrepant,
            _ if !base_ok => Verdict::BaseMismatch,
            _ => Verdict::Reproduced,
        }
        .as_str();
        let recomputed = cl.recomputed(0);
        let _ = write!(
            o,
            "<span class=\"cited\" data-verdict=\"{nv}\" title=\"recomputed {}\">{}: <span class=\"num\">{}</span> <span class=\"badge {nv}\">{nv}</span>",
            attr(&recomputed),
            text(&m.name),
            text(&cl.claimed.text)
        );
        if !cl.matched {
            let _ = write!(o, " <span class=\"recomputed\">data: {}</span>", text(&recomputed));
        }
        o.push_str("</span> ");
    }
    for n in &s.not_compared {
        let _ = write!(
            o,
            "<span class=\"uncompared\" title=\"{}: not checked\">{}: {} <span class=\"muted\">not checked</span></span> ",
            text(n.why_not_compared()),
            text(n.key.as_deref().unwrap_or("(no key)")),
            text(&n.text)
        );
    }
    // The measure across the study's periods, when the run computed it.
    super::chart::write(o, s);
    let _ = write!(o, "<details><summary>recomputed, base and sampling error</summary>");
    details(o, s);
    o.push_str("</details></div>");
}

fn details(o: &mut String, s: &Settlement) {
    if let Some(r) = &s.rerun {
        let _ = write!(
            o,
            "<div class=\"muted\">{} · {} <code>{}</code> · {}.{} {} × {} · weight {} ({}) · base {} <code>{}</code></div>",
            text(&r.study),
            text(&r.period),
            text(&r.period_filter),
            text(&r.table),
            text(&r.column),
            text(&r.column_label),
            text(&r.function),
            text(&r.weight),
            text(&r.design),
            text(&r.base),
            text(&r.base_filter)
        );
        if let Some(v) = &r.data_version {
            let _ = write!(o, "<div class=\"muted\">data: {}</div>", text(&v.describe()));
        }
        if !r.files.is_empty() {
            let files = crate::version::describe_files(&r.files);
            let _ = write!(o, "<div class=\"muted\">data: {}</div>", text(&files));
        }
    }
    if !s.measures.is_empty() {
        o.push_str("<table><tr><th>measure</th><th>claimed</th><th>recomputed</th><th>SE</th><th>95% CI</th><th>gap</th></tr>");
        for m in &s.measures {
            let pct = m.in_percent();
            let (val, se, ci) = match &m.estimate {
                Some(e) if pct => (
                    format!("{:.2}%", e.value * 100.0),
                    format!("{:.2}pp", e.se * 100.0),
                    format!("[{:.2}%, {:.2}%]", e.ci_low * 100.0, e.ci_high * 100.0),
                ),
                Some(e) => (
                    format!("{:.4}", e.value),
                    format!("{:.4}", e.se),
                    format!("[{:.4}, {:.4}]", e.ci_low, e.ci_high),
                ),
                None => ("—".into(), String::new(), String::new()),
            };
            let claimed: Vec<String> = m.claims.iter().map(|c| c.claimed.text.clone()).collect();
            let gap: Vec<String> = m
                .claims
                .iter()
                .map(|c| match c.gap {
                    Gap::WithinRounding => "within rounding".to_string(),
                    Gap::WithinSamplingError => {
                        format!("{:+.2} {}, within sampling error", c.difference, if pct { "pp" } else { "" })
                    }
                    Gap::OutsideSamplingError => format!(
                        "{:+.2} {}, outside sampling error",
                        c.difference,
                        if pct { "pp" } else { "" }
                    ),
                })
                .collect();
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{val}</td><td>{se}</td><td>{ci}</td><td>{}</td></tr>",
                text(&m.name),
                text(&claimed.join(", ")),
                text(&gap.join("; "))
            );
        }
        o.push_str("</table>");
    }
    if let Some(b) = &s.base {
        let _ = write!(
            o,
            "<div>base n: claimed {} · recomputed <b>{}</b> · Σw {} · effective base {:.1}</div>",
            b.claimed_n,
            b.facts.n,
            super::weight_total(b.facts.weighted),
            b.facts.effective
        );
    }
    for w in &s.warnings {
        let _ = write!(o, "<div class=\"warn\">⚠ warning (claimed): {}</div>", text(w));
    }
    for w in &s.warnings_audit {
        let _ = write!(
            o,
            "<div class=\"warn\">⚠ warning audit ({}): {}</div>",
            text(w.kind.as_str()),
            text(&w.message)
        );
    }
    for r in &s.reasons {
        let _ = write!(o, "<div>{}</div>", text(r));
    }
    for (i, e) in s.explanations.iter().enumerate() {
        let lead = if i == 0 { "most likely" } else { "also possible" };
        let _ = write!(o, "<div class=\"explanation\"><b>{lead}:</b> {}</div>", text(&e.message));
    }
    for n in &s.notes {
        let _ = write!(o, "<div class=\"muted\">note: {}</div>", text(n));
    }
}

/// A MOCA `moca.citations` event by the client rules. `placed` is false for an event whose
/// messageId names no message of the transcript, which a client ignores.
fn render_moca(o: &mut String, ev: &MocaEvent, placed: bool) {
    let _ = write!(
        o,
        "<div class=\"moca\"><div class=\"role\">sources (moca.citations, event {})",
        ev.event_index
    );
    if let Some(id) = ev.message_id.as_deref().filter(|_| !placed) {
        let _ = write!(o, " · for message <span class=\"muted\">{}</span>", text(id));
    }
    let _ = write!(o, " · trust as of <span class=\"computed-at\">{}</span>", as_of(ev));
    o.push_str("</div>");
    if !placed {
        o.push_str(
            "<div class=\"muted\">not placed beside a message: its messageId names no message shown here (a client ignores such an event)</div>",
        );
    }
    if ev.ignored {
        o.push_str("<div class=\"muted\">ignored: unknown event version</div></div>");
        return;
    }
    if ev.citations.is_empty() {
        o.push_str("<div class=\"muted\">no sources</div>");
    }
    for c in &ev.citations {
        let r = &c.record;
        let key = c.key.clone().unwrap_or_else(|| "(no node.ref)".into());
        let _ = write!(o, "<div class=\"record\" data-key=\"{}\">", attr(&key));
        if let Some(m) = &c.marker {
            let _ = write!(o, "<b class=\"marker\">{}</b> ", text(m));
        }
        let title = str_at(r, "/node/title").unwrap_or_default();
        let _ = write!(o, "<span class=\"title\">{}</span> <code>{}</code> ", text(title), text(&key));
        if !c.passed {
            o.push_str("<span class=\"badge INVALID\">fails MOCA rules</span>");
        }
        o.push_str("<div class=\"trust-line\">");
        trust(o, r);
        let _ = write!(o, "<span class=\"muted as-of\">as of {}</span>", as_of(ev));
        o.push_str("</div>");
        if let Some(t) = str_at(r, "/text") {
            let _ = write!(o, "<div class=\"text record-text\">{}</div>", text(t));
        }
        for ptr in ["/node/url", "/node/source", "/package/url", "/url"] {
            if let Some(u) = str_at(r, ptr) {
                link(o, u);
            }
        }
        for e in r.get("evidence").and_then(Value::as_array).into_iter().flatten() {
            for ptr in ["/source/url", "/source/uri"] {
                if let Some(u) = str_at(e, ptr) {
                    link(o, u);
                }
            }
        }
        o.push_str("</div>");
    }
    o.push_str("</div>");
}

/// When the record's trust flags were true: the event's `computedAt`, escaped.
fn as_of(ev: &MocaEvent) -> String {
    match &ev.computed_at {
        Some(t) => text(t).into_owned(),
        None => "an unstated time (no computedAt): the flags may have changed since".into(),
    }
}

/// Trust as the Reader contract says (citation record `trust`): a declared verification
/// (`declaredVerified`, copied from the package, not checked) never looks like an attested review
/// (`attestedReviews`, verified against the trust root); stale, superseded, contested, out-of-force,
/// draft and deprecated nodes are flagged as such.
fn trust(o: &mut String, r: &Value) {
    let Some(t) = r.get("trust").filter(|t| t.is_object()) else {
        o.push_str("<span class=\"trust flag\">no trust information</span> ");
        return;
    };
    let list = |k: &str| t.get(k).and_then(Value::as_array).cloned().unwrap_or_default();
    let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(|s| text(s).into_owned());
    let attested = list("attestedReviews");
    let declared = list("declaredVerified");
    for a in &attested {
        let outcome = field(a, "outcome").unwrap_or_else(|| "no outcome".into());
        let good = a.get("outcome").and_then(Value::as_str) == Some("accurate");
        let _ = write!(
            o,
            "<span class=\"trust {}\">attested review: {outcome}{}{}{}</span> ",
            if good { "attested" } else { "flag" },
            field(a, "reviewer").map(|s| format!(" by {s}")).unwrap_or_default(),
            field(a, "reviewedAt").map(|s| format!(", {s}")).unwrap_or_default(),
            field(a, "signer").map(|s| format!(" (signed: {s})")).unwrap_or_default(),
        );
    }
    for d in &declared {
        let _ = write!(
            o,
            "<span class=\"trust declared\">declared verified{}{}: declared by the publisher (not reviewed)</span> ",
            field(d, "by").map(|s| format!(" by {s}")).unwrap_or_default(),
            field(d, "at").map(|s| format!(", {s}")).unwrap_or_default(),
        );
    }
    if attested.is_empty() && declared.is_empty() {
        o.push_str("<span class=\"trust none\">not verified, not reviewed</span> ");
    }
    if let Some(g) = t.get("generated").filter(|g| g.is_object()) {
        let _ = write!(
            o,
            "<span class=\"trust declared\">generated{}{}</span> ",
            field(g, "by").map(|s| format!(" by {s}")).unwrap_or_default(),
            field(g, "at").map(|s| format!(", {s}")).unwrap_or_default(),
        );
    }
    match t.get("status").and_then(Value::as_str) {
        Some("stable") | None => {}
        Some("draft") => o.push_str("<span class=\"trust flag\">DRAFT</span> "),
        Some("deprecated") => o.push_str("<span class=\"trust flag\">DEPRECATED</span> "),
        Some(other) => {
            let _ = write!(o, "<span class=\"trust flag\">status: {}</span> ", text(other));
        }
    }
    let flag = |k: &str| t.get(k).and_then(Value::as_bool);
    let names = |k: &str| {
        let l: Vec<String> = list(k).iter().filter_map(Value::as_str).map(|s| text(s).into_owned()).collect();
        if l.is_empty() { String::new() } else { format!(" by {}", l.join(", ")) }
    };
    if flag("stale") == Some(true) {
        let after = field(t, "staleAfter").map(|s| format!(" (after {s})")).unwrap_or_default();
        let _ = write!(o, "<span class=\"trust flag\">STALE{after}</span> ");
    }
    if flag("superseded") == Some(true) {
        let _ = write!(o, "<span class=\"trust flag\">SUPERSEDED{}</span> ", names("supersededBy"));
    }
    if flag("contested") == Some(true) {
        let _ = write!(o, "<span class=\"trust flag\">CONTESTED{}</span> ", names("contestedBy"));
    }
    if flag("inForce") == Some(false) {
        let from = field(t, "validFrom").map(|s| format!(" from {s}")).unwrap_or_default();
        let until = field(t, "validUntil").map(|s| format!(" until {s}")).unwrap_or_default();
        let window = if from.is_empty() && until.is_empty() {
            String::new()
        } else {
            format!(" (valid{from}{until})")
        };
        let _ = write!(o, "<span class=\"trust flag\">NOT IN FORCE{window}</span> ");
    }
    if r.pointer("/package/signed").and_then(Value::as_bool) == Some(false) {
        o.push_str("<span class=\"trust flag\">unsigned package</span> ");
    }
    let unmatched = r
        .get("evidence")
        .and_then(Value::as_array)
        .is_some_and(|ev| ev.iter().any(|e| e.get("matched").and_then(Value::as_bool) == Some(false)));
    if unmatched {
        o.push_str("<span class=\"trust flag\">evidence quote not found in its source</span> ");
    }
}

/// A link only for http and https; anything else is shown as inert text.
fn link(o: &mut String, url: &str) {
    let lower = url.trim().to_ascii_lowercase();
    if lower.starts_with("https://") || lower.starts_with("http://") {
        let _ = write!(
            o,
            "<div><a href=\"{}\" rel=\"noopener noreferrer nofollow\">{}</a></div>",
            attr(&percent_encode_bidi(url.trim())),
            // Bidi controls would make the link read as another address than the one it opens.
            text(&url.chars().filter(|c| !is_bidi_control(*c)).collect::<String>())
        );
    } else {
        let _ = write!(o, "<div class=\"muted\">link not followed: <code>{}</code></div>", text(url));
    }
}

/// `url` with its bidi controls percent-encoded (as a browser would send them), so none is
/// written raw into the page.
fn percent_encode_bidi(url: &str) -> String {
    let mut o = String::with_capacity(url.len());
    for c in url.chars() {
        if is_bidi_control(c) {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                o.push_str(&format!("%{b:02X}"));
            }
        } else {
            o.push(c);
        }
    }
    o
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> Option<&'a str> {
    v.pointer(ptr).and_then(Value::as_str)
}
