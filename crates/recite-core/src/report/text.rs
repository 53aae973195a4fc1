//! The terminal report: what was re-run, each measure claimed vs recomputed, the verdict.
//!
//! Colour only when asked or when writing to a terminal with `NO_COLOR` unset.

use std::fmt::Write as _;
use std::io::{self, Write as _};

use rayon::prelude::*;

use super::escape::for_terminal as e;
use super::stream::{self, Closing, InputHead, InputTail, Spool};
use super::{ClaimReport, Report};
use crate::input::Level;
use crate::settle::verdict::{Comparison, Gap, MeasureRow, Settlement, Verdict, show};

/// Colours on or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Whether to write ANSI colour codes.
    pub color: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color { format!("\x1b[{code}m{s}\x1b[0m") } else { s.to_string() }
    }

    /// A verdict as a badge.
    pub fn badge(&self, v: Verdict) -> String {
        let code = match v {
            Verdict::Reproduced => "1;32",
            Verdict::BaseMismatch => "1;33",
            Verdict::Discrepant => "1;31",
            Verdict::Unverifiable => "1;35",
            Verdict::Invalid => "1;31",
        };
        self.paint(code, &format!("{:<13}", v.as_str()))
    }

    fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }

    fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
}

/// One settlement in full: the `verify` report.
pub fn settlement(s: &Settlement, st: Style) -> String {
    let mut o = String::new();
    if let Some(r) = &s.rerun {
        let _ = writeln!(o, "  study    {}", e(&r.study));
        let fielded = r.fielded.as_deref().map(|f| format!(", fielded {}", e(f))).unwrap_or_default();
        let _ = writeln!(
            o,
            "  period   {}  {}",
            e(&r.period),
            st.dim(&format!("[{}{fielded}]", e(&r.period_filter)))
        );
        let label =
            if r.column_label.is_empty() { String::new() } else { format!(" \"{}\"", e(&r.column_label)) };
        let _ = writeln!(o, "  source   {}.{}{label} × {}", e(&r.table), e(&r.column), e(&r.function));
        let _ = writeln!(o, "  weight   {}  {}", e(&r.weight), st.dim(&format!("[{}]", e(&r.design))));
        let _ = writeln!(o, "  base     {}  {}", e(&r.base), st.dim(&format!("[{}]", e(&r.base_filter))));
        if let Some(v) = &r.data_version {
            let _ = writeln!(o, "  data     {}", e(&v.describe()));
        }
        if !r.files.is_empty() {
            let _ = writeln!(o, "  data     {}", e(&crate::version::describe_files(&r.files)));
        }
        if let Some(est) = s.measures.iter().find_map(|m| m.estimate) {
            let _ = writeln!(o, "  sample   {}", st.dim(est.sample.describe()));
        }
        o.push('\n');
    }
    if !s.measures.is_empty() {
        let _ = writeln!(
            o,
            "  {:<26} {:>9} {:>11} {:>10} {:>9}  {:<19} {:>7}",
            "measure", "claimed", "recomputed", "tolerance", "SE", "95% CI", "deff"
        );
        for row in &s.measures {
            measure_lines(&mut o, row, st);
        }
    }
    if let Some(b) = &s.base {
        let mark = if b.matched { st.paint("32", "✓") } else { st.paint("31", "✗") };
        let _ = writeln!(
            o,
            "  {:<26} {:>9} {:>11} {:>10}  {mark}  {}",
            "base n",
            b.claimed_n,
            b.facts.n,
            "exact",
            st.dim(&format!(
                "Σw {}, effective base {:.1}",
                super::weight_total(b.facts.weighted),
                b.facts.effective
            ))
        );
        o.push('\n');
    }
    if !s.warnings.is_empty() || !s.warnings_audit.is_empty() {
        for w in &s.warnings {
            let _ = writeln!(o, "  {} {}", st.paint("1;33", "warning (claimed):"), e(w));
        }
        for a in &s.warnings_audit {
            let _ = writeln!(
                o,
                "  {} {}",
                st.paint("1;33", &format!("warning audit ({}):", a.kind.as_str())),
                e(&a.message)
            );
        }
        o.push('\n');
    }
    for c in &s.not_compared {
        let at = if c.pointer.is_empty() { String::new() } else { format!(" at {}", e(&c.pointer)) };
        let line = format!("not compared: {}{at}: {}", e(&c.text), e(c.why_not_compared()));
        let _ =
            writeln!(o, "  {}", if c.unreadable.is_some() { st.paint("31", &line) } else { st.dim(&line) });
    }
    for n in &s.notes {
        let _ = writeln!(o, "  {}", st.dim(&format!("note: {}", e(n))));
    }
    let _ = writeln!(o, "  {}", st.badge(s.verdict).trim_end());
    for r in &s.reasons {
        let _ = writeln!(o, "    {}", e(r));
    }
    if !s.explanations.is_empty() {
        let _ = writeln!(o, "  {}", st.bold("most likely explanation"));
        for (i, x) in s.explanations.iter().enumerate() {
            let line = format!("    {}. {}", i + 1, e(&x.message));
            let _ = writeln!(o, "{}", if i == 0 { line } else { st.dim(&line) });
        }
    }
    o
}

fn measure_lines(o: &mut String, row: &MeasureRow, st: Style) {
    let pct = row.in_percent();
    let (se, ci) = match &row.estimate {
        Some(e) if pct => (
            format!("{:.2}pp", e.se * 100.0),
            format!("[{:.1}%, {:.1}%]", e.ci_low * 100.0, e.ci_high * 100.0),
        ),
        Some(e) => (format!("{:.3}", e.se), format!("[{:.3}, {:.3}]", e.ci_low, e.ci_high)),
        None => ("—".into(), String::new()),
    };
    let deff = row.estimate.and_then(|e| e.deff).map(|d| format!("{d:.2}")).unwrap_or_default();
    let value = match &row.estimate {
        Some(e) if pct => format!("{:.1}%", e.value * 100.0),
        Some(e) => format!("{:.3}", e.value),
        None => "—".into(),
    };
    if row.claims.is_empty() {
        let line = format!(
            "  {:<26} {:>9} {:>11} {:>10} {:>9}  {:<19} {:>7}",
            clip(&row.name),
            "",
            value,
            "",
            se,
            ci,
            deff
        );
        let _ = writeln!(o, "{}", st.dim(&line));
        return;
    }
    for c in &row.claims {
        let _ = writeln!(
            o,
            "  {:<26} {:>9} {:>11} {:>10} {:>9}  {:<19} {:>7}  {}",
            st.bold(&format!("{:<26}", clip(&row.name))),
            e(&c.claimed.text),
            c.recomputed(1),
            format!(
                "±{}{}",
                show(c.tolerance, c.claimed.decimals + 1, false),
                if c.percent { "pp" } else { "" }
            ),
            se,
            ci,
            deff,
            mark(c, st)
        );
        if !c.matched {
            let unit = if pct { "pp" } else { "" };
            let z = c.z.map(|z| format!(", z = {z:+.2}")).unwrap_or_default();
            let class = match c.gap {
                Gap::WithinRounding => "within rounding",
                Gap::WithinSamplingError => "within sampling error, but not the data's number",
                Gap::OutsideSamplingError => "outside sampling error",
            };
            let _ = writeln!(
                o,
                "  {:<26} {}",
                "",
                st.dim(&format!("off by {:+.2}{unit}{z}: {class}", c.difference))
            );
        }
    }
}

fn mark(c: &Comparison, st: Style) -> String {
    if c.matched { st.paint("32", "✓") } else { st.paint("31", "✗") }
}

fn clip(s: &str) -> String {
    let s = e(s);
    if s.chars().count() <= 26 { s } else { format!("{}…", s.chars().take(25).collect::<String>()) }
}

/// A whole run: grouped by input, one line per claim, details for every claim not reproduced.
pub fn render(report: &Report, st: Style) -> String {
    stream::render_whole(report, |out| Writer::new(out, st))
}

/// The text report, written as it goes: each input's claim lines at once, the details of its
/// claims not reproduced (which follow its findings) spooled until the input ends; the totals
/// last.
pub struct Writer {
    out: Box<dyn io::Write>,
    st: Style,
    details: Spool,
}

impl Writer {
    /// A text report to `out`.
    pub fn new(out: Box<dyn io::Write>, st: Style) -> Writer {
        Writer { out, st, details: Spool::new() }
    }
}

impl Writer {
    /// Writes one claim rendered by [`claim_text`]: its line now, its details when the input ends.
    fn rendered(&mut self, line: &str, details: Option<&str>) -> io::Result<()> {
        self.out.write_all(line.as_bytes())?;
        match details {
            Some(d) => self.details.write_all(d.as_bytes()),
            None => Ok(()),
        }
    }
}

/// One claim's line, and its details when it has any: every claim not reproduced, and any
/// whose warnings the audit faults (warnings get the same prominence as values).
fn claim_text(c: &ClaimReport, st: Style) -> (String, Option<String>) {
    let line = format!("  {} {}\n", st.badge(c.settlement.verdict), one_line(c));
    let details = needs_details(c).then(|| {
        let mut o = String::new();
        let _ = writeln!(o, "\n  {} {}", st.bold("▸"), e(&c.locator.to_string()));
        for line in settlement(&c.settlement, st).lines() {
            let _ = writeln!(o, "  {line}");
        }
        o
    });
    (line, details)
}

impl stream::Writer for Writer {
    fn begin_input(&mut self, head: InputHead<'_>) -> io::Result<()> {
        let st = self.st;
        let format = head.format.map(|f| f.to_string()).unwrap_or_else(|| "unreadable".into());
        writeln!(self.out, "{} {}", st.bold(&e(head.file)), st.dim(&format!("({format})")))
    }

    fn claim(&mut self, c: &ClaimReport) -> io::Result<()> {
        let (line, details) = claim_text(c, self.st);
        self.rendered(&line, details.as_deref())
    }

    fn claims(&mut self, cs: &[ClaimReport]) -> io::Result<()> {
        let st = self.st;
        let texts: Vec<(String, Option<String>)> = cs.par_iter().map(|c| claim_text(c, st)).collect();
        texts.iter().try_for_each(|(line, details)| self.rendered(line, details.as_deref()))
    }

    fn end_input(&mut self, tail: InputTail<'_>) -> io::Result<()> {
        let st = self.st;
        let mut o = String::new();
        let _ = writeln!(o, "  {}", st.dim(&tail.coverage.line()));
        super::answers::text(&mut o, tail.answers);
        let moca = tail.moca;
        if !moca.is_empty() {
            let citations: usize = moca.iter().map(|e| e.citations.len()).sum();
            let passed: usize = moca.iter().flat_map(|e| &e.citations).filter(|c| c.passed).count();
            let ignored = moca.iter().filter(|e| e.ignored).count();
            let _ = writeln!(
                o,
                "  moca.citations: {} event{}, {citations} citation{} ({passed} passed the record rules){}",
                moca.len(),
                if moca.len() == 1 { "" } else { "s" },
                if citations == 1 { "" } else { "s" },
                if ignored > 0 {
                    format!(", {ignored} ignored for an unknown version")
                } else {
                    String::new()
                }
            );
        }
        for f in tail.findings {
            let level = match f.level {
                Level::Must => st.paint("1;31", "MUST  "),
                Level::Should => st.paint("1;33", "SHOULD"),
                Level::Note => st.dim("NOTE  "),
            };
            let _ = writeln!(
                o,
                "  {level} {} {}  {}",
                e(&f.rule),
                st.dim(&e(&f.locator.to_string())),
                e(&f.message)
            );
        }
        self.out.write_all(o.as_bytes())?;
        self.details.drain_to(&mut self.out)?;
        self.out.write_all(b"\n")
    }

    fn finish(&mut self, c: Closing<'_>) -> io::Result<()> {
        let st = self.st;
        let mut o = String::new();
        let s = c.summary;
        let counts: Vec<String> = s
            .verdicts
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(v, n)| format!("{n} {}", v.as_str().to_lowercase().replace('_', " ")))
            .collect();
        let _ = writeln!(
            o,
            "{} claims in {} input{}: {}; {} finding{}. Scanned {} table{} ({} rows) in {} scan{}.",
            s.claims,
            c.inputs,
            if c.inputs == 1 { "" } else { "s" },
            if counts.is_empty() { "none".into() } else { counts.join(", ") },
            s.findings,
            if s.findings == 1 { "" } else { "s" },
            c.stats.tables_scanned,
            if c.stats.tables_scanned == 1 { "" } else { "s" },
            c.stats.rows_scanned,
            c.stats.scans,
            if c.stats.scans == 1 { "" } else { "s" },
        );
        let _ = writeln!(o, "In all: {}.", s.coverage.line());
        if let Some(d) = c.data_layer {
            let _ = writeln!(o, "{}", e(&d.line()));
            if let Some(w) = &d.warning {
                let _ = writeln!(o, "{} {}", st.paint("1;33", "warning:"), e(w));
            }
        }
        self.out.write_all(o.as_bytes())?;
        self.out.flush()
    }
}

/// Whether a claim's details belong in a batch report.
pub fn needs_details(c: &ClaimReport) -> bool {
    c.settlement.verdict != Verdict::Reproduced || !c.settlement.warnings_audit.is_empty()
}

/// A claim in one line: where, what, and the headline comparison.
pub fn one_line(c: &ClaimReport) -> String {
    let s = &c.settlement;
    let what = match &s.rerun {
        Some(r) => e(&r.label()),
        None => String::new(),
    };
    let compared = || s.measures.iter().flat_map(|m| m.claims.iter().map(move |cl| (m, cl)));
    let number = |(m, cl): (&MeasureRow, &Comparison)| {
        format!("{} {} → {}", e(&m.name), e(&cl.claimed.text), cl.recomputed(1))
    };
    // The first number not reproduced; else base n when only it differs; else the first number.
    let headline = match (compared().find(|(_, cl)| !cl.matched), &s.base) {
        (Some(wrong), _) => number(wrong),
        (None, Some(b)) if !b.matched => format!("base n {} → {}", b.claimed_n, b.facts.n),
        _ => compared()
            .next()
            .map(number)
            .unwrap_or_else(|| s.reasons.first().map(|r| e(r)).unwrap_or_default()),
    };
    format!("{}  {what}  {headline}", e(&c.locator.to_string()))
}
