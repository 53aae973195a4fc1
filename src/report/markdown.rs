//! The Markdown report, for pasting into a ticket: a summary table, then every claim not
//! reproduced with its comparison.

use std::fmt::Write;

use super::Report;

/// Input text as an inert Markdown table cell or list item (see [`super::escape::markdown`]).
fn cell(s: &str) -> String {
    super::escape::markdown(s)
}

/// The report as Markdown.
pub fn render(report: &Report) -> String {
    let mut o = String::new();
    let s = &report.summary;
    let _ = writeln!(o, "## recite: {} claims checked\n", s.claims);
    let _ = writeln!(o, "| verdict | claims |\n|---|---:|");
    for (v, n) in &s.verdicts {
        let _ = writeln!(o, "| {} | {n} |", v.as_str());
    }
    let _ = writeln!(
        o,
        "\n{} finding(s). Scanned {} table(s), {} rows, in {} scan(s).\n",
        s.findings, report.stats.tables_scanned, report.stats.rows_scanned, report.stats.scans
    );
    if let Some(d) = &report.data_layer {
        let _ = writeln!(o, "data layer: {} ({})\n", cell(&d.path), cell(d.source.as_str()));
        if let Some(w) = &d.warning {
            let _ = writeln!(o, "**warning:** {}\n", cell(w));
        }
    }
    for input in &report.inputs {
        let _ = writeln!(o, "### {}\n", cell(&input.file));
        if !input.claims.is_empty() {
            let _ = writeln!(
                o,
                "| verdict | where | claim | measure | claimed | recomputed | base n (claimed → data) |"
            );
            let _ = writeln!(o, "|---|---|---|---|---:|---:|---:|");
            for c in &input.claims {
                let st = &c.settlement;
                let what = st.rerun.as_ref().map(|r| r.label()).unwrap_or_default();
                let base =
                    st.base.as_ref().map(|b| format!("{} → {}", b.claimed_n, b.facts.n)).unwrap_or_default();
                let compared: Vec<_> =
                    st.measures.iter().flat_map(|m| m.claims.iter().map(move |cl| (m, cl))).collect();
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
            }
            o.push('\n');
        }
        crate::answers::render::markdown(&mut o, &input.answers);
        for c in input.claims.iter().filter(|c| super::text::needs_details(c)) {
            let _ =
                writeln!(o, "- **{}** at {}", c.settlement.verdict.as_str(), cell(&c.locator.to_string()));
            for r in &c.settlement.reasons {
                let _ = writeln!(o, "  - {}", cell(r));
            }
            for e in &c.settlement.explanations {
                let _ = writeln!(o, "  - likely: {}", cell(&e.message));
            }
            for w in &c.settlement.warnings_audit {
                let _ = writeln!(o, "  - warning audit ({}): {}", cell(w.kind.as_str()), cell(&w.message));
            }
        }
        // Every number found but not compared is listed, so nothing is dropped silently.
        for c in &input.claims {
            for n in &c.settlement.not_compared {
                let _ = writeln!(
                    o,
                    "- not compared at `{}`: {} = {} ({})",
                    cell(&c.locator.to_string()),
                    cell(n.key.as_deref().unwrap_or("(no key)")),
                    cell(&n.text),
                    cell(n.why_not_compared())
                );
            }
        }
        if !input.moca.is_empty() {
            let citations: usize = input.moca.iter().map(|e| e.citations.len()).sum();
            let passed: usize = input.moca.iter().flat_map(|e| &e.citations).filter(|c| c.passed).count();
            let _ = writeln!(
                o,
                "`moca.citations`: {} event(s), {citations} citation(s), {passed} passed the record rules.\n",
                input.moca.len()
            );
        }
        if !input.findings.is_empty() {
            let _ = writeln!(o, "\n| level | rule | where | finding |\n|---|---|---|---|");
            for f in &input.findings {
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
    }
    o
}
