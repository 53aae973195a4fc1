//! The two scan plans agree: the grouped scan (sums per code, one grouping set per cited
//! column) and the summed scan (one `SUM(CASE …)` per sum) give the same base counts, cells,
//! estimates and standard errors, on a generated claim set and on the NHANES II design.
//! (The statistics themselves are checked against published figures in `statistics.rs`.)

use std::path::Path;

use recite::catalog::Catalog;
use recite::claimset::{ClaimSpec, generate};
use recite::compare::Settlement;
use recite::engine::Engine;
use recite::extractor::Registry;
use recite::pipeline::{self, Claim, Options};
use serde_json::json;

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1e-9 * a.abs().max(1.0), "{what}: grouped {a} vs summed {b}");
}

fn same(a: &[Settlement], b: &[Settlement]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x.verdict, y.verdict, "{:?} vs {:?}", x.reasons, y.reasons);
        let (bx, by) = (x.base.as_ref().unwrap(), y.base.as_ref().unwrap());
        assert_eq!(bx.facts.n, by.facts.n);
        close(bx.facts.weighted, by.facts.weighted, "Σw");
        close(bx.facts.effective, by.facts.effective, "effective base");
        assert_eq!(x.warnings_audit, y.warnings_audit);
        for (mx, my) in x.measures.iter().zip(&y.measures) {
            match (mx.estimate, my.estimate) {
                (Some(ex), Some(ey)) => {
                    close(ex.value, ey.value, &mx.name);
                    close(ex.se, ey.se, &format!("SE of {}", mx.name));
                }
                (None, None) => {}
                other => panic!("{}: {other:?}", mx.name),
            }
        }
    }
}

#[test]
fn grouped_and_summed_scans_agree_on_versant_claims() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets");
    let catalog = Catalog::load(&data).unwrap();
    let registry = Registry::load(None).unwrap();
    let spec = ClaimSpec { study: "Versant".into(), count: 300, wrong: 0.2, seed: 11 };
    let made = generate(&spec, &catalog, &registry, &Engine::new()).unwrap();
    let claims: Vec<Claim> = made
        .iter()
        .map(|c| Claim {
            citation: c.line["citation"].clone(),
            numbers: recite::claim::leaves(&c.line["result"]),
        })
        .collect();
    let opts = Options { explain: false, ..Options::default() };
    let (grouped, gs) = pipeline::settle_all(&claims, &catalog, &registry, &Engine::new(), opts);
    let (summed, ss) = pipeline::settle_all(&claims, &catalog, &registry, &Engine::summed_only(), opts);
    assert_eq!((gs.scans, ss.scans), (1, 1));
    assert_eq!(gs.rows_scanned, ss.rows_scanned);
    same(&grouped, &summed);
    // The generator's wrong claims are exactly the ones not reproduced.
    let wrong = made.iter().filter(|c| c.wrong).count();
    let not_reproduced = grouped.iter().filter(|s| s.verdict != recite::compare::Verdict::Reproduced).count();
    assert_eq!(wrong, not_reproduced);
}

#[test]
fn grouped_and_summed_scans_agree_on_a_design() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets");
    let catalog = Catalog::load(&data).unwrap();
    let registry = Registry::load(None).unwrap();
    let claims: Vec<Claim> = [("zinc", "extractMean", "All examined persons"), ("diabetes", "extractShare", "White"), ("race", "extractDistribution", "All examined persons")]
        .iter()
        .map(|(column, function, base)| Claim {
            citation: json!({"study": "NHANES II", "period": "1976-1980", "base": {"name": base, "n": 1},
                             "weight": "finalwgt", "source": {"table": "nhanes2", "column": column, "function": function}}),
            numbers: vec![],
        })
        .collect();
    let opts = Options { explain: false, ..Options::default() };
    let (grouped, _) = pipeline::settle_all(&claims, &catalog, &registry, &Engine::new(), opts);
    let (summed, _) = pipeline::settle_all(&claims, &catalog, &registry, &Engine::summed_only(), opts);
    same(&grouped, &summed);
}
