//! A scan started under a deadline (`recite::scan::with_deadline`, what `recite serve` sets from
//! its `--time-limit`) is given up once it passes: its claims fail, saying so, rather than the
//! scan running on and holding the service's turn. Without a deadline the same claims reproduce.

use std::time::{Duration, Instant};

use recite::settle::pipeline::{self, Claim};
use recite::settle::verdict::Verdict;

use crate::support::{fixture, root};

fn claims() -> Vec<Claim> {
    let citation: serde_json::Value =
        serde_json::from_str(&fixture("../../examples/citations/versant-w6-considered.json")).unwrap();
    let citation = citation.get("citation").cloned().unwrap_or(citation);
    vec![Claim { citation, numbers: Vec::new() }]
}

#[test]
fn a_scan_past_its_deadline_fails_its_claims_and_says_why() {
    let catalog = recite::catalog::Catalog::load(&root().join("datasets")).unwrap();
    let registry = recite::extractor::Registry::load(None).unwrap();
    let engine = recite::engine::Engine::new();
    let claims = claims();
    let run = |deadline: Option<Instant>| {
        recite::scan::with_deadline(deadline, || {
            pipeline::try_settle_all(&claims, &catalog, &registry, &engine, Default::default())
        })
    };
    let (free, _) = run(None).unwrap();
    assert_eq!(free[0].verdict, Verdict::Reproduced, "{:?}", free[0]);
    // The whole run fails (an engine fault, not a verdict on the claim), naming the time limit.
    let late = run(Some(Instant::now() - Duration::from_secs(1))).map(|(s, _)| s);
    let said = format!("{late:?}");
    assert!(late.is_err() && said.contains(recite::scan::PAST_DEADLINE), "{said}");
    // The deadline was this thread's for that call only.
    assert_eq!(recite::scan::deadline(), None);
    let (again, _) = run(None).unwrap();
    assert_eq!(again[0].verdict, Verdict::Reproduced);
}
