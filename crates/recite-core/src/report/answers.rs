//! The answer audit's section in each report format. Every string from the input (answer text,
//! measure names, numbers as written) is escaped for its format.

use std::fmt::Write;

use html_escape::{encode_double_quoted_attribute, encode_text};

use crate::answers::{Answer, StatedNumber, Status, summary};

use super::escape::{self, for_terminal};

/// One number in one line: `44.2% TRACED claim #1 Considered (claimed 44.2, recomputed 44.2%)`.
fn line(n: &StatedNumber) -> String {
    let mut s = format!("{} {}", n.text, n.status.as_str());
    if let (Some(c), Some(m)) = (n.claim, &n.measure) {
        let _ = write!(s, " claim #{} {m}", c + 1);
    }
    if let Some(r) = &n.record {
        let _ = write!(s, " record {r}");
    }
    let mut detail = Vec::new();
    if let Some(c) = &n.claimed {
        // A MOCA record is not a claim re-run: it states its numbers.
        let verb = if n.record.is_some() { "the record states" } else { "claimed" };
        detail.push(format!("{verb} {c}"));
    }
    if let Some(r) = &n.recomputed {
        detail.push(format!("recomputed {r}"));
    }
    if !detail.is_empty() {
        let _ = write!(s, " ({})", detail.join(", "));
    }
    if let Some(a) = &n.attribution {
        let label = if n.status == Status::Misattributed { "MISATTRIBUTED" } else { "ATTRIBUTION UNSURE" };
        let _ = write!(s, " {label}: {a}");
    }
    if n.ambiguous {
        let _ = write!(s, " AMBIGUOUS: {}", n.candidates.join("; "));
    }
    s
}

/// Whether a number's status fails JUnit: UNCITED, MISQUOTED, MISATTRIBUTED.
fn fails(s: Status) -> bool {
    matches!(s, Status::Misquoted | Status::Uncited | Status::Misattributed)
}

/// Where an answer is, in words, and what became of it when the user was not shown it.
fn heading(a: &Answer) -> String {
    let at = match &a.message_id {
        Some(id) => format!("{} turn {} (message {id})", a.role, a.turn + 1),
        None => format!("{} turn {}", a.role, a.turn + 1),
    };
    if a.shown.is_answer() { at } else { format!("{at}, {}; not audited", a.shown.why()) }
}

/// The text report's section for one input.
pub fn text(o: &mut String, answers: &[Answer]) {
    for a in answers {
        if !a.shown.is_answer() {
            let text = clip(a.text.trim(), 90);
            let _ = writeln!(o, "  not the answer, {}  “{}”", for_terminal(&heading(a)), for_terminal(&text));
            continue;
        }
        let _ = writeln!(o, "  answer, {}: {}", for_terminal(&heading(a)), summary(&a.counts));
        // Each sentence's numbers, gathered once (not one pass over every number per sentence).
        let mut by_sentence: Vec<Vec<&StatedNumber>> = vec![Vec::new(); a.sentences.len()];
        for n in &a.numbers {
            if let Some(v) = by_sentence.get_mut(n.sentence) {
                v.push(n);
            }
        }
        for (si, s) in a.sentences.iter().enumerate() {
            let sentence = a.text.get(s.start..s.end).unwrap_or("").trim();
            let _ = writeln!(
                o,
                "    sentence {}: {}  “{}”",
                si + 1,
                summary(&s.counts),
                for_terminal(&clip(sentence, 90))
            );
            for n in &by_sentence[si] {
                let _ = writeln!(o, "      {}", for_terminal(&line(n)));
            }
        }
    }
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max - 1).collect::<String>())
    }
}

/// Input text as HTML text: capped, control and bidi characters shown as `\u{…}`, escaped.
fn html(s: &str) -> String {
    encode_text(&escape::visible(&escape::cap(s))).into_owned()
}

/// Input text as a double-quoted attribute value: as [`html`], on one line.
fn attr(s: &str) -> String {
    encode_double_quoted_attribute(&escape::visible_line(&escape::cap(s))).into_owned()
}

/// The Markdown report's section for one input.
pub fn markdown(o: &mut String, answers: &[Answer]) {
    for a in answers {
        if !a.shown.is_answer() {
            let text = escape::markdown(&clip(a.text.trim(), 90));
            let _ = writeln!(o, "**Not the answer, {}**: “{text}”\n", escape::markdown(&heading(a)));
            continue;
        }
        let _ = writeln!(
            o,
            "**Answer, {}**: {}\n",
            escape::markdown(&heading(a)),
            escape::markdown(&summary(&a.counts))
        );
        let _ = writeln!(
            o,
            "| sentence | number | status | traced to | claimed | recomputed |\n|---:|---:|---|---|---:|---:|"
        );
        for n in &a.numbers {
            let mut to = match (n.claim, &n.measure) {
                (Some(c), Some(m)) if n.ambiguous => {
                    format!("claim #{} {m} (ambiguous: {})", c + 1, n.candidates.join("; "))
                }
                (Some(c), Some(m)) => format!("claim #{} {m}", c + 1),
                _ => match &n.record {
                    Some(r) if n.ambiguous => format!("record {r} (ambiguous: {})", n.candidates.join("; ")),
                    Some(r) => format!("record {r}"),
                    None => String::new(),
                },
            };
            if let Some(a) = &n.attribution {
                let _ = write!(to, " ({a})");
            }
            let _ = writeln!(
                o,
                "| {} | {} | **{}** | {} | {} | {} |",
                n.sentence + 1,
                escape::markdown(&n.text),
                n.status.as_str(),
                escape::markdown(&to),
                escape::markdown(n.claimed.as_deref().unwrap_or("")),
                escape::markdown(n.recomputed.as_deref().unwrap_or(""))
            );
        }
        o.push('\n');
    }
}

/// CSS for the highlighted numbers (the page's CSP allows inline style, never script). A number's
/// status, citation and recomputed value (`data-tip`) show beside it on hover and on keyboard
/// focus alike, by CSS alone.
pub const HTML_STYLE: &str = "\
.ans{position:relative;border-bottom:2px solid;padding:0 1px;border-radius:2px;outline-offset:2px}\
.ans:focus{outline:2px solid #1d2330}\
.ans:hover::after,.ans:focus::after{content:attr(data-tip);position:absolute;left:0;top:100%;z-index:2;\
margin-top:4px;background:#1d2330;color:#fff;font-size:12px;font-weight:400;padding:3px 7px;border-radius:4px;\
width:max-content;max-width:36em;white-space:normal;pointer-events:none}\
.ans.TRACED{background:#e6f4ea;border-color:#1f8a4c}.ans.RECOMPUTED_ONLY{background:#eef3ff;border-color:#3b5bdb}\
.ans.TRACED_UNVERIFIED{background:#f3e8fa;border-color:#7b3fa0}.ans.TRACED_TO_DISCREPANT{background:#fde8e8;border-color:#c62828}\
.ans.MISQUOTED{background:#fde8e8;border-color:#8a1c1c;border-bottom-style:double}\
.ans.MISATTRIBUTED{background:#fde8e8;border-color:#8a1c1c;border-bottom-style:dotted}\
.ans.ATTRIBUTION_UNSURE{background:#fff8e1;border-color:#8a6d00;border-bottom-style:dotted}.ans.UNCITED{background:#fff3e0;border-color:#c77700;border-bottom-style:dashed}\
.ans-summary{font-size:13px;margin:4px 0}";

/// The answer text with every stated number highlighted in place by status; the status,
/// citation and recomputed value are its tip (shown on hover and keyboard focus: each number is
/// a tab stop) and its accessible label. Everything from the input is escaped,
/// control and bidi characters shown, and the text cut at [`escape::MAX_TURN_CHARS`] like any
/// turn (the numbers past the cut are still listed by [`html_summary`]).
pub fn html_text(a: &Answer) -> String {
    let shown = a.text.char_indices().nth(escape::MAX_TURN_CHARS).map_or(a.text.len(), |(i, _)| i);
    let part = |from: usize, to: usize| encode_text(&escape::visible(&a.text[from..to])).into_owned();
    let mut o = String::new();
    let mut at = 0;
    for n in &a.numbers {
        if n.start < at
            || n.end > shown
            || !a.text.is_char_boundary(n.start)
            || !a.text.is_char_boundary(n.end)
        {
            continue;
        }
        o.push_str(&part(at, n.start));
        let _ = write!(
            o,
            "<mark class=\"ans {st}\" tabindex=\"0\" data-tip=\"{l}\" aria-label=\"{l}\" data-status=\"{st}\">{}</mark>",
            part(n.start, n.end),
            st = n.status.as_str(),
            l = attr(&line(n))
        );
        at = n.end;
    }
    o.push_str(&part(at, shown));
    if shown < a.text.len() {
        let _ = write!(o, "… ({} bytes)", a.text.len());
    }
    o
}

/// The summary line under an audited answer, and its numbers listed for screen readers.
pub fn html_summary(a: &Answer) -> String {
    if !a.shown.is_answer() {
        return format!(
            "<div class=\"ans-summary\"><b>Not the answer:</b> {}; not audited</div>",
            html(a.shown.why())
        );
    }
    let mut o = format!("<div class=\"ans-summary\"><b>Answer audit:</b> {}", html(&summary(&a.counts)));
    let _ = write!(o, "<details><summary>every number ({})</summary><ul>", a.numbers.len());
    for n in &a.numbers {
        let _ = write!(
            o,
            "<li><span class=\"badge {}\">{}</span> {}</li>",
            n.status.as_str(),
            n.status.as_str(),
            html(&line(n))
        );
    }
    o.push_str("</ul></details></div>");
    o
}

/// JUnit test cases: one per stated number; UNCITED, MISQUOTED and MISATTRIBUTED fail, and an
/// ATTRIBUTION_UNSURE one passes with its reason as `system-out`.
pub fn junit(o: &mut String, file: &str, answers: &[Answer]) {
    use super::escape::xml;
    for a in answers {
        for n in &a.numbers {
            let name = format!("answer {} · {} {}", heading(a), n.text, n.status.as_str());
            let _ = write!(o, "    <testcase classname=\"{}\" name=\"{}\"", xml(file), xml(&name));
            if fails(n.status) {
                let _ = writeln!(
                    o,
                    ">\n      <failure type=\"{}\" message=\"{}\"/>\n    </testcase>",
                    n.status.as_str(),
                    xml(&format!("{}: {}", n.status.as_str(), n.why))
                );
            } else if n.attribution.is_some() {
                // Passing, but unsure of its attribution: say why.
                let _ = writeln!(
                    o,
                    ">\n      <system-out>{}</system-out>\n    </testcase>",
                    xml(&format!("{}: {}", n.status.as_str(), n.why))
                );
            } else {
                let _ = writeln!(o, "/>");
            }
        }
    }
}

/// Stated numbers of `answers` that fail JUnit (UNCITED, MISQUOTED, MISATTRIBUTED).
pub fn junit_failures(answers: &[Answer]) -> usize {
    answers.iter().flat_map(|a| &a.numbers).filter(|n| fails(n.status)).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Turn;

    #[test]
    fn answers_html_escapes_the_answer_and_highlights_each_number() {
        let text = "<script>alert(1)</script> \"x\" 58% & <b>more</b>";
        let turn = Turn { role: "assistant".into(), text: text.into(), ..Turn::default() };
        let a = crate::answers::audit_text(0, &turn, &crate::answers::find(text), &[]);
        let html = html_text(&a);
        assert!(!html.contains("<script") && !html.contains("<b>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(
            html.contains("<mark class=\"ans UNCITED\" tabindex=\"0\" data-tip=\"58% UNCITED\""),
            "{html}"
        );
        assert!(html_summary(&a).contains("1 uncited"));
    }
}
