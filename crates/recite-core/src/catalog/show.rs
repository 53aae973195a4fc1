//! The data layer in words (`recite catalog show`): every study in brief, or one in full.

use std::fmt::Write as _;

use crate::catalog::{self, Catalog, Study};

/// Every study in brief (name, aliases, description, file, tables with their weights), then
/// the `study.toml` files that cannot be used.
pub fn summary(cat: &Catalog) -> String {
    let mut o = String::new();
    for s in &cat.studies {
        let aliases = if s.study.aliases.is_empty() {
            String::new()
        } else {
            format!(" (also {})", s.study.aliases.join(", "))
        };
        let _ = writeln!(o, "{}{aliases}\n  {}\n  {}", s.study.name, s.study.description, s.file.display());
        for t in &s.tables {
            let _ = writeln!(
                o,
                "  table {}: {} declared columns, weights {}",
                t.name,
                t.columns.len(),
                list(&t.weights)
            );
        }
        o.push('\n');
    }
    for b in &cat.broken {
        let _ = writeln!(o, "(cannot be used) {}: {}", b.file.display(), b.error);
    }
    o
}

/// One study in full: its tables and their columns (labels, codes, missing values), periods,
/// bases, breakdowns and weighting.
pub fn describe(s: &Study) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{}\n  {}\n  file {}", s.study.name, s.study.description, s.file.display());
    if !s.study.aliases.is_empty() {
        let _ = writeln!(o, "  aliases {}", list(&s.study.aliases));
    }
    for t in &s.tables {
        let _ = writeln!(o, "\ntable {} ({})", t.name, t.path);
        let _ = writeln!(o, "  weights {}", list(&t.weights));
        if let Some(d) = &t.design {
            let _ = writeln!(o, "  design: strata {}, PSU {}", d.strata, d.psu);
        }
        let mut cols: Vec<_> = t.columns.iter().collect();
        cols.sort_by_key(|(n, _)| catalog::natural_key(n));
        for (n, c) in cols {
            let mut extra = Vec::new();
            let codes = c.codes();
            if !codes.is_empty() {
                extra.push(
                    codes
                        .iter()
                        .map(|(k, l)| format!("{}={l}", catalog::num(*k)))
                        .collect::<Vec<_>>()
                        .join(", "),
                );
            }
            if !c.missing.is_empty() {
                extra.push(format!("missing {:?}", c.missing));
            }
            for [lo, hi] in &c.missing_ranges {
                extra.push(format!("missing {lo} to {hi}"));
            }
            let extra = if extra.is_empty() { String::new() } else { format!("  [{}]", extra.join("; ")) };
            let _ = writeln!(o, "  {n:<14} {}{extra}", c.label);
        }
    }
    let _ = writeln!(o, "\nperiods");
    for p in &s.periods {
        let _ = writeln!(o, "  {:<22} {}  {}", p.name, p.filter, p.fielded.as_deref().unwrap_or(""));
    }
    let _ = writeln!(o, "\nbases");
    for b in &s.bases {
        let _ = writeln!(o, "  {:<34} {}", b.name, b.filter);
    }
    if !s.breakdowns.is_empty() {
        let _ = writeln!(
            o,
            "\nbreakdowns (audited for bases under {}; very low under {})",
            s.thresholds.low, s.thresholds.very_low
        );
        for b in &s.breakdowns {
            let _ = writeln!(
                o,
                "  {}: {}",
                b.name,
                b.cells.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
            );
        }
    }
    if let Some(w) = &s.weighting {
        let _ = writeln!(
            o,
            "\nweighting\n{}",
            toml::to_string_pretty(w)
                .unwrap_or_default()
                .lines()
                .map(|l| format!("  {l}\n"))
                .collect::<String>()
        );
    }
    o
}

fn list(v: &[String]) -> String {
    if v.is_empty() { "(none)".into() } else { v.join(", ") }
}
