//! The Markdown report, for pasting into a ticket: a summary table, then every claim not
//! reproduced with its comparison.

use std::fmt::Write as _;
use std::io::{self, Write as _};

use rayon::prelude::*;

use super::stream::{self, Closing, InputHead, InputTail, Spool};
use super::{ClaimReport, Report};

/// Input text as an inert Markdown table cell or list item (see [`super::escape::markdown`]).
fn cell(s: &str) -> String {
    super::escape::markdown(s)
}

/// The report as Markdown.
pub fn render(report: &Report) -> String {
    stream::render_whole(report, Writer::new)
}

/// The Markdown report, written as it goes: the summary table comes first, so the inputs are
/// spooled; within an input, the list of claims not reproduced and of numbers not compared
/// (which follow the claims table) are spooled until the input ends.
pub struct Writer {
    out: Box<dyn io::Write>,
    body: Spool,
    details: Spool,
    not_compared: Spool,
    claims: usize,
}

impl Writer {
    /// A Markdown report to `out`.
    pub fn new(out: Box<dyn io::Write>) -> Writer {
        Writer { out, body: Spool::new(), details: Spool::new(), not_compared: Spool::new(), claims: 0 }
    }
}

impl Writer {
    /// Writes one claim rendered by [`claim_text`], the claims table's head before the first.
    fn rendered(&mut self, [rows, details, not_compared]: &[String; 3]) -> io::Result<()> {
        if self.claims == 0 {
            let mut o = String::new();
            let _ = writeln!(
                o,
                "| verdict | where | claim | measure | claimed | recomputed | base n (claimed → data) |"
            );
            let _ = writeln!(o, "|---|---|---|---|---:|---:|---:|");
            self.body.write_all(o.as_bytes())?;
        }
        self.claims += 1;
        self.body.write_all(rows.as_bytes())?;
        self.details.write_all(details.as_bytes())?;
        self.not_compared.write_all(not_compared.as_bytes())
    }
}

/// One claim's rows of the claims table, its details (when it has any) and its numbers not
/// compared.
fn claim_text(c: &ClaimReport) -> [String; 3] {
    let mut o = String::new();
    let st = &c.settlement;
    // A versioned table's version is part of what was re-run: `… @ Delta v0`.
    let what = st
        .rerun
        .as_ref()
        .map(|r| match &r.data_version {
            Some(v) if v.format == crate::version::UNVERSIONED_FORMAT => {
                format!("{} @ PostgreSQL, unversioned", r.label())
            }
            Some(v) => format!("{} @ Delta v{}", r.label(), v.version),
            None => r.label(),
        })
        .unwrap_or_default();
    let base = st.base.as_ref().map(|b| format!("{} → {}", b.claimed_n, b.facts.n)).unwrap_or_default();
    let compared: Vec<_> = st.measures.iter().flat_map(|m| m.claims.iter().map(move |cl| (m, cl))).collect();
    if compared.is_empty() {
        let why = st.reasons.first().cloned().unwrap_or_default();
        let _ = writeln!(
            o,
            "| **{}** | {} | {} | {} | | | {base} |",
            st.verdict.as_str(),
            cell(&c.locator.to_string()),
            cell(&what),
            cell(&why)
        );
    }
    for (m, cl) in compared {
        let _ = writeln!(
            o,
            "| **{}** | {} | {} | {} | {} | {} | {base} |",
            st.verdict.as_str(),
            cell(&c.locator.to_string()),
            cell(&what),
            cell(&m.name),
            cell(&cl.claimed.text),
            cl.recomputed(0)
        );
    }
    let mut details = String::new();
    if super::text::needs_details(c) {
        let d = &mut details;
        let _ = writeln!(d, "- **{}** at {}", c.settlement.verdict.as_str(), cell(&c.locator.to_string()));
        for r in &c.settlement.reasons {
            let _ = writeln!(d, "  - {}", cell(r));
        }
        for e in &c.settlement.explanations {
            let _ = writeln!(d, "  - likely: {}", cell(&e.message));
        }
        for w in &c.settlement.warnings_audit {
            let _ = writeln!(d, "  - warning audit ({}): {}", cell(w.kind.as_str()), cell(&w.message));
        }
    }
    // Every number found but not compared is listed, so nothing is dropped silently.
    let mut not_compared = String::new();
    for n in &c.settlement.not_compared {
        let _ = writeln!(
            not_compared,
            "- not compared at `{}`: {} = {} ({})",
            cell(&c.locator.to_string()),
            cell(n.key.as_deref().unwrap_or("(no key)")),
            cell(&n.text),
            cell(n.why_not_compared())
        );
    }
    [o, details, not_compared]
}

impl stream::Writer for Writer {
    fn begin_input(&mut self, head: InputHead<'_>) -> io::Result<()> {
        self.claims = 0;
        writeln!(self.body, "### {}\n", cell(head.file))
    }

    fn claim(&mut self, c: &ClaimReport) -> io::Result<()> {
        let parts = claim_text(c);
        self.rendered(&parts)
    }

    fn claims(&mut self, cs: &[ClaimReport]) -> io::Result<()> {
        let parts: Vec<[String; 3]> = cs.par_iter().map(claim_text).collect();
        parts.iter().try_for_each(|p| self.rendered(p))
    }

    fn end_input(&mut self, tail: InputTail<'_>) -> io::Result<()> {
        let mut o = String::new();
        if self.claims > 0 {
            o.push('\n');
        }
        let _ = writeln!(o, "{}.\n", tail.coverage.line());
        super::answers::markdown(&mut o, tail.answers);
        self.body.write_all(o.as_bytes())?;
        self.details.drain_to(&mut self.body)?;
        self.not_compared.drain_to(&mut self.body)?;
        let mut o = String::new();
        let moca = tail.moca;
        if !moca.is_empty() {
            let citations: usize = moca.iter().map(|e| e.citations.len()).sum();
            let passed: usize = moca.iter().flat_map(|e| &e.citations).filter(|c| c.passed).count();
            let _ = writeln!(
                o,
                "`moca.citations`: {} event(s), {citations} citation(s), {passed} passed the record rules.\n",
                moca.len()
            );
        }
        if !tail.findings.is_empty() {
            let _ = writeln!(o, "\n| level | rule | where | finding |\n|---|---|---|---|");
            for f in tail.findings {
                let _ = writeln!(
                    o,
                    "| {} | {} | {} | {} |",
                    f.level,
                    cell(&f.rule),
                    cell(&f.locator.to_string()),
                    cell(&f.message)
                );
            }
        }
        o.push('\n');
        self.body.write_all(o.as_bytes())
    }

    fn finish(&mut self, c: Closing<'_>) -> io::Result<()> {
        let mut o = String::new();
        let s = c.summary;
        let _ = writeln!(o, "## recite: {} claims checked\n", s.claims);
        let _ = writeln!(o, "| verdict | claims |\n|---|---:|");
        for (v, n) in &s.verdicts {
            let _ = writeln!(o, "| {} | {n} |", v.as_str());
        }
        let _ = writeln!(
            o,
            "\n{} finding(s). Scanned {} table(s), {} rows, in {} scan(s). In all: {}.\n",
            s.findings,
            c.stats.tables_scanned,
            c.stats.rows_scanned,
            c.stats.scans,
            s.coverage.line()
        );
        if let Some(d) = c.data_layer {
            let _ = writeln!(o, "data layer: {} ({})\n", cell(&d.path), cell(d.source.as_str()));
            if let Some(w) = &d.warning {
                let _ = writeln!(o, "**warning:** {}\n", cell(w));
            }
        }
        self.out.write_all(o.as_bytes())?;
        self.body.drain_to(&mut self.out)?;
        self.out.flush()
    }
}
