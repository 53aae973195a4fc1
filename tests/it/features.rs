//! The test modules a build leaves out with its features (`tests/it/main.rs`): the README's
//! `cargo test` builds the default features (`engine`, `serve`), so the cluster, the agents and
//! object stores are not compiled there; this names them as SKIPPED where a person sees it.
//! CI's last step builds every feature and runs them (`.ci/run`), with
//! `RECITE_REQUIRE_EVERY_FEATURE` set: there a missing feature is a failure.

/// `(feature, built, what the tests it leaves out cover)`.
const LEFT_OUT: [(&str, bool, &str); 3] = [
    ("ballista", cfg!(feature = "ballista"), "cluster (a real Ballista cluster on loopback)"),
    (
        "agents",
        cfg!(feature = "agents"),
        "probe, probe_frameworks, serve_agents, serve_jsonrpc, serve_self and the agents' parts of \
         serve, serve_guard and browser (the official A2A and MCP clients, live framework agents)",
    ),
    ("object-store", cfg!(feature = "object-store"), "objstore's s3:// and http(s):// tables (moto)"),
];

#[test]
fn the_tests_a_missing_feature_leaves_out_say_skipped() {
    let required =
        std::env::var_os("RECITE_REQUIRE_EVERY_FEATURE").is_some_and(|v| !v.is_empty() && v != "0");
    let missing: Vec<&str> = LEFT_OUT.iter().filter(|(_, built, _)| !built).map(|(f, ..)| *f).collect();
    assert!(
        !required || missing.is_empty(),
        "RECITE_REQUIRE_EVERY_FEATURE is set but this build has no {missing:?} feature"
    );
    for (feature, built, tests) in LEFT_OUT {
        if !built {
            crate::support::say_skipped(
                tests,
                &format!("this build has no `{feature}` feature (cargo test --features {feature})"),
            );
        }
    }
}
