//! The workbench's "what if" (docs/workbench.md): a case's claims re-run under the alternatives
//! the catalog declares ([`recite_core::settle::whatif`]). A claim is found again in the case's
//! stored inputs by its locator in the saved report, so what is re-run is the claim as the
//! agent wrote it; an alternative is chosen by its id among those listed for that claim, so a
//! request can only pick catalog names, never bring its own.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path as UrlPath, State};
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Value, json};

use recite_core::citation::{self, Citation};
use recite_core::claim::{self, Claimed};
use recite_core::report::ClaimReport;
use recite_core::resolve::{self, Resolved};
use recite_core::settle::Explanation;
use recite_core::settle::whatif::{self, Alternative};
use recite_core::transcript::{self, Document, Item, Locator};

use super::{Desk, claims, finish, load, turn};
use crate::extract::{self, BodyLimits, Pairs, Params, Query, json_response};
use crate::problem::{Problem, Stopped};

/// The largest what-if request body (`{"claim": K, "alternative": "…"}`).
const MAX_REQUEST: u64 = 64 * 1024;

/// Claims listed by one `GET …/alternatives` without `?claim=`: past this, ask claim by claim.
const MAX_LISTED: usize = 1000;

/// A claim of a case, found again in its inputs.
struct Found {
    locator: Locator,
    citation: Citation,
    numbers: Vec<Claimed>,
    resolved: Resolved,
    /// The measures it states a number for, and its explanations, from the saved report.
    claimed: Vec<String>,
    explanations: Vec<Explanation>,
}

/// Why a claim has no alternatives, in words (a claim without a citation, one that did not
/// resolve, an input that no longer holds it).
type Missing = String;

impl Desk {
    /// Claim `k` of the saved `report`, found again among the case's inputs' items (`items`, by
    /// locator).
    fn claim_at(&self, items: &Items<'_>, report: &Value, k: usize) -> Result<Found, Missing> {
        let all = claims(report);
        let rc = all
            .get(k)
            .ok_or_else(|| format!("the case has {} claim(s); there is no claim {k}", all.len()))?;
        let saved = &rc["locator"];
        let item = items
            .get(&saved.to_string())
            .ok_or_else(|| format!("the claim at {saved} is no longer found in the case's inputs"))?;
        let locator = item.locator.clone();
        let c = item.citation.as_ref().ok_or_else(|| format!("the claim at {locator} has no citation"))?;
        let citation =
            citation::parse(c).map_err(|_| format!("the claim's citation at {locator} is invalid"))?;
        let svc = &self.svc;
        let resolved =
            resolve::resolve(&citation, &svc.catalog, &svc.registry, &svc.engine).map_err(|why| {
                format!("the claim's citation at {locator} does not resolve: {}", why.0.join("; "))
            })?;
        let claimed = rc["measures"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["claims"].as_array().is_some_and(|a| !a.is_empty()))
            .filter_map(|m| m["name"].as_str().map(str::to_string))
            .collect();
        let explanations = serde_json::from_value(rc["explanations"].clone()).unwrap_or_default();
        let mark = self.svc.settle.decimal_mark;
        let numbers = item.result.as_ref().map(|r| claim::claimed(r, mark)).unwrap_or_default();
        Ok(Found { locator, citation, numbers, resolved, claimed, explanations })
    }

    fn alternatives_of(&self, f: &Found) -> Vec<Alternative> {
        let svc = &self.svc;
        whatif::alternatives(&f.resolved, &svc.catalog, &svc.registry, &f.claimed, &f.explanations)
    }
}

/// The items of a case's inputs by their locator as the report writes it (the first, when two
/// share one), so each claim is found once, not by a search over every item.
type Items<'a> = std::collections::HashMap<String, &'a Item>;

fn items(docs: &[Document]) -> Items<'_> {
    let mut by = Items::new();
    for i in docs.iter().flat_map(|d| &d.items) {
        if let Ok(at) = serde_json::to_string(&i.locator) {
            by.entry(at).or_insert(i);
        }
    }
    by
}

/// A case's inputs, read again, and its saved report.
fn read_case(desk: &Desk, id: &str, report_json: &str) -> Result<(Vec<Document>, Value), String> {
    let inputs = desk.ledger.inputs(id).map_err(|e| e.to_string())?;
    let docs = inputs.iter().map(|i| transcript::read_bytes(&i.name, &i.bytes)).collect();
    let report = serde_json::from_str(report_json).map_err(|e| format!("the saved report: {e}"))?;
    Ok((docs, report))
}

/// `…/alternatives`'s query: one claim's index, else every claim.
pub(super) struct Only(Option<usize>);

impl Params for Only {
    const ALLOWED: &'static [&'static str] = &["claim"];

    fn read(q: &Pairs) -> Result<Self, Problem> {
        match q.single("claim")? {
            None => Ok(Only(None)),
            Some(v) => v
                .parse::<usize>()
                .map(|k| Only(Some(k)))
                .map_err(|_| Problem::bad_request("query.claim", "a claim's index: 0, 1, …")),
        }
    }
}

/// `GET /v1/cases/{id}/alternatives[?claim=K]`: each claim's alternatives, the one its
/// explanation names first (`likely`). A claim that has none says why (`reason`).
pub(super) async fn alternatives(
    State(desk): State<Arc<Desk>>,
    UrlPath(id): UrlPath<String>,
    Query(Only(only)): Query<Only>,
) -> Result<Response, Problem> {
    let (id, case) = load(&desk, &id).await?;
    let svc = desk.svc.clone();
    let (permit, deadline, until) = turn(&svc).await?;
    let d = desk.clone();
    let job = tokio::task::spawn_blocking(move || -> Result<_, Stopped> {
        let _turn = permit;
        let (docs, report) = read_case(&d, &id, &case.report_json)?;
        let items = items(&docs);
        let count = claims(&report).len();
        let wanted: Vec<usize> = match only {
            Some(k) if k >= count => {
                return Ok(Err(Problem::bad_request(
                    "query.claim",
                    format!("the case has {count} claim(s); there is no claim {k}"),
                )));
            }
            Some(k) => vec![k],
            None => (0..count.min(MAX_LISTED)).collect(),
        };
        let mut listed = Vec::with_capacity(wanted.len());
        for k in wanted {
            if std::time::Instant::now() >= until {
                return Err(Stopped::TimedOut);
            }
            listed.push(match d.claim_at(&items, &report, k) {
                Ok(f) => json!({
                    "claim": k,
                    "locator": f.locator,
                    "study": f.resolved.study,
                    "period": f.resolved.period,
                    "column": f.resolved.rows.column,
                    "claimed": f.claimed,
                    "alternatives": d.alternatives_of(&f),
                }),
                Err(why) => json!({ "claim": k, "alternatives": [], "reason": why }),
            });
        }
        Ok(Ok(json!({ "id": id, "claims": listed, "truncated": only.is_none() && count > MAX_LISTED })))
    });
    Ok(json_response(&finish(&svc, deadline, job).await??))
}

/// `POST /v1/cases/{id}/whatif`'s body.
#[derive(Debug, Default, Deserialize)]
struct WhatIf {
    /// The claim's index in the case's report.
    #[serde(default)]
    claim: Field<u64>,
    /// The alternative's id, as `…/alternatives` lists it.
    #[serde(default)]
    alternative: Field<String>,
}

/// A field read if it has the type asked for, else missing.
#[derive(Debug)]
struct Field<T>(Option<T>);

impl<T> Default for Field<T> {
    fn default() -> Self {
        Field(None)
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Field<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Field(serde_json::from_value(Value::deserialize(d)?).ok()))
    }
}

/// `POST /v1/cases/{id}/whatif` with `{"claim": K, "alternative": ID}`: claim `K` re-run under
/// the alternative `ID` (one of those `…/alternatives` lists for it), with the verdict it would
/// get and the claim as the JSON report would write it (`report_claim`).
pub(super) async fn run(
    State(desk): State<Arc<Desk>>,
    UrlPath(id): UrlPath<String>,
    body: Body,
) -> Result<Response, Problem> {
    let svc = desk.svc.clone();
    let limits = BodyLimits { max: MAX_REQUEST };
    let body = extract::read_within(body, limits).await?;
    let asked: Value =
        serde_json::from_slice(&body).map_err(|e| Problem::bad_request("body", format!("not JSON: {e}")))?;
    // Any JSON is read as the request, a field absent or of another type as missing: each
    // field's problem names it.
    let asked: WhatIf = serde_json::from_value(asked).unwrap_or_default();
    let k =
        asked.claim.0.ok_or_else(|| {
            Problem::bad_request("body.claim", "a claim's index (0, 1, …) in the case's report")
        })? as usize;
    let alt_id = asked.alternative.0.ok_or_else(|| {
        Problem::bad_request("body.alternative", "an alternative's id, as …/alternatives lists it")
    })?;
    let (id, case) = load(&desk, &id).await?;
    let (permit, deadline, until) = turn(&svc).await?;
    let d = desk.clone();
    let job = tokio::task::spawn_blocking(move || -> Result<_, Stopped> {
        let _turn = permit;
        let (docs, report) = read_case(&d, &id, &case.report_json)?;
        let items = items(&docs);
        let f = match d.claim_at(&items, &report, k) {
            Ok(f) => f,
            Err(why) => {
                return Ok(Err(Problem {
                    status: 422,
                    title: "unprocessable",
                    ..Problem::bad_request("body.claim", format!("claim {k}: {why}"))
                }));
            }
        };
        let listed = d.alternatives_of(&f);
        let Some(alt) = whatif::find(&listed, &alt_id) else {
            let shown: String = alt_id.chars().take(200).collect();
            return Ok(Err(Problem {
                status: 422,
                title: "unprocessable",
                ..Problem::bad_request(
                    "body.alternative",
                    format!(
                        "{shown:?} is not an alternative of claim {k}; GET /v1/cases/{id}/alternatives?claim={k} lists them"
                    ),
                )
            }));
        };
        let method = d.svc.settle.method();
        let ran = recite_core::scan::with_deadline(Some(until), || {
            whatif::settle(&f.citation, &f.numbers, alt, &d.svc.engine, method)
        });
        let (settlement, _) = ran.map_err(|e| Stopped::Failed(e.to_string()))?;
        let verdict = settlement.verdict;
        let reasons = settlement.reasons.clone();
        let report_claim =
            recite_core::report::json::claim_value(&ClaimReport { locator: f.locator, settlement });
        Ok(Ok(json!({
            "claim": k,
            "alternative": alt,
            "verdict": verdict,
            "reasons": reasons,
            "report_claim": report_claim,
        })))
    });
    Ok(json_response(&finish(&svc, deadline, job).await??))
}
