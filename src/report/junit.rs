//! The JUnit XML report: one testcase per claim (and one per finding), so CI systems show
//! failures natively. Every piece of text is XML-escaped.

use std::fmt::Write;

use super::Report;
use crate::input::Level;
use crate::settle::Verdict;

/// Escapes text for XML attributes and content, capped ([`super::escape::cap`]); replaces
/// characters XML 1.0 cannot carry with U+FFFD.
pub fn xml(s: &str) -> String {
    let s = super::escape::cap(s);
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\t' | '\n' | '\r' => o.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => o.push('\u{FFFD}'),
            c => o.push(c),
        }
    }
    o
}

/// The report as JUnit XML.
pub fn render(report: &Report) -> String {
    let mut o = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let stated = |i: &super::Input| i.answers.iter().map(|a| a.numbers.len()).sum::<usize>();
    let total: usize = report.inputs.iter().map(|i| i.claims.len() + i.findings.len() + stated(i)).sum();
    let failures: usize = report
        .inputs
        .iter()
        .map(|i| {
            i.claims.iter().filter(|c| c.settlement.verdict != Verdict::Reproduced).count()
                + i.findings.iter().filter(|f| f.level != Level::Note).count()
                + crate::answers::render::junit_failures(&i.answers)
        })
        .sum();
    let _ = writeln!(o, "<testsuites name=\"recite\" tests=\"{total}\" failures=\"{failures}\">");
    for input in &report.inputs {
        let fails = input.claims.iter().filter(|c| c.settlement.verdict != Verdict::Reproduced).count()
            + input.findings.iter().filter(|f| f.level != Level::Note).count()
            + crate::answers::render::junit_failures(&input.answers);
        let _ = writeln!(
            o,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{fails}\">",
            xml(&input.file),
            input.claims.len() + input.findings.len() + stated(input)
        );
        if let Some(d) = &report.data_layer {
            let _ = writeln!(o, "    <properties>");
            let _ = writeln!(o, "      <property name=\"data layer\" value=\"{}\"/>", xml(&d.line()));
            if let Some(w) = &d.warning {
                let _ = writeln!(o, "      <property name=\"data layer warning\" value=\"{}\"/>", xml(w));
            }
            let _ = writeln!(o, "    </properties>");
        }
        for c in &input.claims {
            let s = &c.settlement;
            let name = match &s.rerun {
                Some(r) => format!("{} @ {}", r.label(), c.locator),
                None => c.locator.to_string(),
            };
            let _ = write!(o, "    <testcase classname=\"{}\" name=\"{}\"", xml(&input.file), xml(&name));
            if s.verdict == Verdict::Reproduced {
                let _ = writeln!(o, "/>");
            } else {
                let _ = writeln!(
                    o,
                    ">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>",
                    s.verdict.as_str(),
                    xml(&format!(
                        "{}: {}",
                        s.verdict.as_str(),
                        s.reasons.first().cloned().unwrap_or_default()
                    )),
                    xml(&s.reasons.join("\n"))
                );
            }
        }
        for f in &input.findings {
            let _ = write!(
                o,
                "    <testcase classname=\"{}\" name=\"{}\"",
                xml(&input.file),
                xml(&format!("{} @ {}", f.rule, f.locator))
            );
            if f.level == Level::Note {
                let _ = writeln!(o, "/>");
            } else {
                let _ = writeln!(
                    o,
                    ">\n      <failure type=\"{}\" message=\"{}\"/>\n    </testcase>",
                    f.level,
                    xml(&f.message)
                );
            }
        }
        crate::answers::render::junit(&mut o, &input.file, &input.answers);
        let _ = writeln!(o, "  </testsuite>");
    }
    o.push_str("</testsuites>\n");
    o
}
