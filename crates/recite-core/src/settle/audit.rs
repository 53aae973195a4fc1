//! The warnings audit: the small-base cells of a claim's base, recomputed, against the warnings
//! the claim carried (docs/semantics.md).

use crate::citation::Citation;
use crate::claim::fold;
use crate::resolve::Resolved;
use crate::scan::Outcome;
use crate::settle::verdict::{AuditKind, WarningAudit};

/// Recomputes which cells of the base fall under the thresholds and compares with the warnings.
pub fn audit_warnings(c: &Citation, r: &Resolved, out: &Outcome, base_n: u64) -> Vec<WarningAudit> {
    let t = r.thresholds;
    let said = |cell: &str| c.warnings.iter().any(|w| names_cell(w, cell));
    let mut audit = Vec::new();
    for (b, cell, n) in &out.cells {
        // A cell the base cannot contain (the Male cell of "Women 18-74") is empty, not small:
        // there is no number for it to warn about.
        if *n > 0 && *n < t.low && !said(cell) {
            audit.push(WarningAudit {
                kind: AuditKind::Undisclosed,
                message: format!(
                    "the {cell} cell ({b}) has an unweighted base of {n}, under {}{}, and no warning says so",
                    if *n < t.very_low { t.very_low } else { t.low },
                    if *n < t.very_low { " (very low)" } else { "" }
                ),
            });
        }
    }
    if base_n < t.low && !c.warnings.iter().any(|w| fold(w).contains("base")) {
        audit.push(WarningAudit {
            kind: AuditKind::Undisclosed,
            message: format!(
                "the whole base has {base_n} respondents, under {}, and no warning says so",
                t.low
            ),
        });
    }
    for w in &c.warnings {
        let fw = fold(w);
        for (b, cell, n) in &out.cells {
            if names_cell(w, cell)
                && *n >= t.low
                && (fw.contains("base") || fw.contains("small") || fw.contains("low"))
            {
                audit.push(WarningAudit {
                    kind: AuditKind::Unsupported,
                    message: format!(
                        "the warning {w:?} is not supported: the {cell} cell ({b}) has {n} respondents"
                    ),
                });
            }
        }
    }
    audit
}

/// Whether a warning names a cell: the cell's name as whole words, case-insensitively, with any
/// punctuation between them ("65-74" in "the 65–74 cell"; not "West" in "Midwest" nor "Male" in
/// "Female").
fn names_cell(warning: &str, cell: &str) -> bool {
    let words = |s: &str| -> Vec<String> {
        s.split(|ch: char| !ch.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
    };
    let (w, c) = (words(warning), words(cell));
    !c.is_empty() && w.windows(c.len()).any(|win| win == c.as_slice())
}
