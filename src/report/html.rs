//! The HTML report: one self-contained page that shows each conversation with a verdict beside
//! every cited number; the recomputed value, base and sampling error open on click
//! (`<details>`), so the page needs no script at all.
//!
//! Every piece of transcript text is escaped; nothing is loaded from anywhere, and the page's
//! Content-Security-Policy (`default-src 'none'`) says so to the browser. MOCA citation records
//! are rendered by the spec's client rules: keyed by `node.ref`, trust shown as the Reader
//! contract says, record text as data, links only for http and https.

use std::fmt::Write;

use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};
use serde_json::Value;

use super::{ClaimReport, Input, Report};
use crate::compare::{Gap, Settlement, show};
use crate::extractor::Unit;
use crate::moca::MocaEvent;
use crate::transcript::Level;

const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

const STYLE: &str = r#"
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:16px 28px}header h1{margin:0;font-size:20px}
main{max-width:1100px;margin:0 auto;padding:16px 28px}
.summary span{display:inline-block;margin-right:12px}
section.input{background:#fff;border:1px solid #dde1e7;border-radius:8px;margin:18px 0;padding:12px 18px}
h2{font-size:16px;margin:4px 0 10px;font-family:ui-monospace,monospace}
.turn{border-left:4px solid #c9ced8;padding:6px 12px;margin:10px 0;background:#fafbfc}
.turn.user{border-color:#6b8afd}.turn.agent,.turn.assistant{border-color:#2fa36b}.turn.tool{border-color:#b07cd8}
.role{font-size:12px;text-transform:uppercase;color:#5b6474;letter-spacing:.04em}
.text{white-space:pre-wrap;margin:4px 0}
.claim{margin:6px 0;padding:6px 10px;border:1px solid #e3e6eb;border-radius:6px;background:#fff}
.num{font-weight:600;font-family:ui-monospace,monospace}
.badge{display:inline-block;font-size:11px;font-weight:700;padding:1px 7px;border-radius:10px;color:#fff;margin-left:6px;vertical-align:1px}
.REPRODUCED{background:#1f8a4c}.DISCREPANT{background:#c62828}.BASE_MISMATCH{background:#c77700}
.UNVERIFIABLE{background:#7b3fa0}.INVALID{background:#8a1c1c}
details summary{cursor:pointer}
table{border-collapse:collapse;margin:6px 0;font-size:13px}td,th{border:1px solid #e3e6eb;padding:3px 8px;text-align:left}
.muted{color:#5b6474;font-size:13px}
.finding{font-size:13px;margin:3px 0}.MUST{color:#b71c1c;font-weight:700}.SHOULD{color:#a15c00;font-weight:700}.NOTE{color:#5b6474}
.warn{color:#8a5a00;font-weight:600}
.record{border:1px solid #e3e6eb;border-radius:6px;padding:6px 10px;margin:6px 0;background:#fff}
.trust{display:inline-block;font-size:11px;padding:1px 6px;border-radius:4px;margin-right:4px;border:1px solid #9aa3b2}
.trust.attested{background:#e6f4ea;border-color:#1f8a4c}.trust.declared{background:#f1f3f6}
.trust.flag{background:#fff3e0;border-color:#c77700;color:#8a4b00;font-weight:700}
"#;

/// The report as one self-contained HTML page.
pub fn render(report: &Report) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\
<meta name=\"referrer\" content=\"no-referrer\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>recite report</title><style>{STYLE}</style></head><body>\n"
    );
    let s = &report.summary;
    let _ = write!(o, "<header><h1>recite: {} claims checked</h1><div class=\"summary\">", s.claims);
    for (v, n) in &s.verdicts {
        let _ = write!(o, "<span><span class=\"badge {v}\">{v}</span> {n}</span>", v = v.as_str());
    }
    let _ = write!(
        o,
        "<span>{} findings</span><span class=\"muted\" style=\"color:#c9ced8\">{} table(s) scanned, {} rows, {} scan(s)</span></div></header>\n<main>\n",
        s.findings, report.stats.tables_scanned, report.stats.rows_scanned, report.stats.scans
    );
    for input in &report.inputs {
        render_input(&mut o, input);
    }
    o.push_str("</main></body></html>\n");
    o
}

fn render_input(o: &mut String, input: &Input) {
    let format = input.format.map(|f| format!("{f:?}")).unwrap_or_else(|| "unreadable".into());
    let _ = writeln!(
        o,
        "<section class=\"input\"><h2>{} <span class=\"muted\">({format})</span></h2>",
        text(&input.file)
    );
    let mut shown = vec![false; input.claims.len()];
    for turn in &input.turns {
        let role = turn.role.to_lowercase();
        let class: String = role.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
        let _ = write!(o, "<div class=\"turn {class}\"><div class=\"role\">{}", text(&role));
        if let Some(id) = &turn.message_id {
            let _ = write!(o, " · <span class=\"muted\">{}</span>", text(id));
        }
        o.push_str("</div>");
        if !turn.text.is_empty() {
            let _ = write!(o, "<div class=\"text\">{}</div>", text(&turn.text));
        }
        for &i in &turn.items {
            if let Some(c) = input.claims.get(i) {
                shown[i] = true;
                render_claim(o, c);
            }
        }
        if let Some(id) = &turn.message_id {
            for ev in input.moca.iter().filter(|e| e.message_id.as_deref() == Some(id.as_str())) {
                render_moca(o, ev);
            }
        }
        o.push_str("</div>\n");
    }
    // Claims not placed in a turn (plain inputs, or readers without turns).
    for (i, c) in input.claims.iter().enumerate() {
        if !shown[i] {
            render_claim(o, c);
        }
    }
    let placed: Vec<&str> = input.turns.iter().filter_map(|t| t.message_id.as_deref()).collect();
    for ev in input.moca.iter().filter(|e| !e.message_id.as_deref().is_some_and(|m| placed.contains(&m))) {
        render_moca(o, ev);
    }
    if !input.findings.is_empty() {
        o.push_str("<h3>Findings</h3>");
        for f in &input.findings {
            let level = match f.level {
                Level::Must => "MUST",
                Level::Should => "SHOULD",
                Level::Note => "NOTE",
            };
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
}

/// One claim: each claimed number with its verdict beside it; details on click.
fn render_claim(o: &mut String, c: &ClaimReport) {
    let s = &c.settlement;
    let v = s.verdict.as_str();
    let _ = write!(o, "<div class=\"claim\" data-verdict=\"{v}\">");
    let compared: Vec<_> = s.measures.iter().flat_map(|m| m.claims.iter().map(move |cl| (m, cl))).collect();
    if compared.is_empty() {
        let what = s
            .rerun
            .as_ref()
            .map(|r| format!("{} · {} · {}({})", r.period, r.base, r.function, r.column))
            .unwrap_or_default();
        let _ = write!(o, "<span class=\"cited\">{}</span><span class=\"badge {v}\">{v}</span>", text(&what));
    }
    for (m, cl) in &compared {
        let pct = m.unit == Unit::Proportion && (cl.claimed.percent || cl.claimed.value.abs() > 1.0);
        let mark = if cl.matched { "✓" } else { "✗" };
        let _ = write!(
            o,
            "<span class=\"cited\" title=\"recomputed {}\">{}: <span class=\"num\">{}</span> <span class=\"badge {v}\">{v} {mark}</span></span> ",
            attr(&show(cl.shown, cl.claimed.decimals + 1, pct)),
            text(&m.name),
            text(&cl.claimed.text)
        );
    }
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
    }
    if !s.measures.is_empty() {
        o.push_str("<table><tr><th>measure</th><th>claimed</th><th>recomputed</th><th>SE</th><th>95% CI</th><th>gap</th></tr>");
        for m in &s.measures {
            let pct = m.unit == Unit::Proportion;
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
            "<div>base n: claimed {} · recomputed <b>{}</b> · Σw {:.1} · effective base {:.1}</div>",
            b.claimed_n, b.facts.n, b.facts.weighted, b.facts.effective
        );
    }
    for w in &s.warnings {
        let _ = write!(o, "<div class=\"warn\">⚠ warning (claimed): {}</div>", text(w));
    }
    for w in &s.warnings_audit {
        let _ =
            write!(o, "<div class=\"warn\">⚠ warning audit ({}): {}</div>", text(&w.kind), text(&w.message));
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

/// A MOCA `moca.citations` event by the client rules.
fn render_moca(o: &mut String, ev: &MocaEvent) {
    let _ = write!(
        o,
        "<div class=\"moca\"><div class=\"role\">sources (moca.citations, event {})",
        ev.event_index
    );
    if let Some(t) = &ev.computed_at {
        let _ = write!(o, " · trust as of <span class=\"computed-at\">{}</span>", text(t));
    }
    o.push_str("</div>");
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
            let _ = write!(o, "<b>{}</b> ", text(m));
        }
        let title = str_at(r, "/node/title").unwrap_or_default();
        let _ = write!(o, "<span>{}</span> <code>{}</code> ", text(title), text(&key));
        if !c.passed {
            o.push_str("<span class=\"badge INVALID\">fails MOCA rules</span>");
        }
        o.push_str("<div>");
        trust(o, r);
        o.push_str("</div>");
        if let Some(t) = str_at(r, "/text") {
            let _ = write!(o, "<div class=\"text record-text\">{}</div>", text(t));
        }
        for ptr in ["/node/url", "/node/source", "/package/url", "/url"] {
            if let Some(u) = str_at(r, ptr) {
                link(o, u);
            }
        }
        o.push_str("</div>");
    }
    o.push_str("</div>");
}

/// Trust as the Reader contract says: a declared verification never looks like an attested
/// review; stale, superseded, contested and out-of-force nodes are marked as such.
fn trust(o: &mut String, r: &Value) {
    let t = r.get("trust");
    let verification = t.and_then(|t| t.get("verification")).and_then(Value::as_str).unwrap_or("unknown");
    match verification {
        "attested" => o.push_str("<span class=\"trust attested\">attested review</span>"),
        "declared" => {
            o.push_str("<span class=\"trust declared\">declared by the publisher (not reviewed)</span>")
        }
        other => {
            let _ = write!(
                o,
                "<span class=\"trust declared\">verification: {} (not reviewed)</span>",
                text(other)
            );
        }
    }
    let flag = |k: &str| t.and_then(|t| t.get(k)).and_then(Value::as_bool);
    for (k, label) in [("stale", "STALE"), ("superseded", "SUPERSEDED"), ("contested", "CONTESTED")] {
        if flag(k) == Some(true) {
            let _ = write!(o, "<span class=\"trust flag\">{label}</span>");
        }
    }
    if flag("inForce") == Some(false) {
        o.push_str("<span class=\"trust flag\">NOT IN FORCE</span>");
    }
}

/// A link only for http and https; anything else is shown as inert text.
fn link(o: &mut String, url: &str) {
    let lower = url.trim().to_ascii_lowercase();
    if lower.starts_with("https://") || lower.starts_with("http://") {
        let _ = write!(
            o,
            "<div><a href=\"{}\" rel=\"noopener noreferrer nofollow\">{}</a></div>",
            attr(url.trim()),
            text(url)
        );
    } else {
        let _ = write!(o, "<div class=\"muted\">link not followed: <code>{}</code></div>", text(url));
    }
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> Option<&'a str> {
    v.pointer(ptr).and_then(Value::as_str)
}
