//! recite's integration tests, one test binary (each `tests/*.rs` would be its own binary,
//! and each links DataFusion). Run one module with `cargo test --test it check_cli::`.

mod agui;
mod agui_validate;
#[cfg(feature = "serve")]
mod browser;
mod cache;
mod check_cli;
#[cfg(feature = "ballista")]
mod cluster;
mod deadline;
mod delta;
mod engine_plans;
mod explain;
mod features;
mod frameworks;
mod golden;
mod html_report;
mod moca;
mod numbers;
mod objstore;
mod postgres;
#[cfg(feature = "agents")]
mod probe;
#[cfg(feature = "agents")]
mod probe_frameworks;
mod readers;
mod readme;
mod report_schema;
mod sav;
mod scale;
mod sdk_corpus;
mod series;
#[cfg(feature = "serve")]
mod serve;
#[cfg(feature = "agents")]
mod serve_agents;
#[cfg(feature = "serve")]
mod serve_guard;
#[cfg(feature = "agents")]
mod serve_jsonrpc;
#[cfg(feature = "agents")]
mod serve_self;
mod statistics;
mod strings;
mod support;
mod synth;
mod verify_cli;
mod warnings;
#[cfg(feature = "serve")]
mod workbench;
