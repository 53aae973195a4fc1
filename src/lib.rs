//! recite re-executes the citations AI agents attach to numbers, and settles disputes about them.
//!
//! This package is the `recite` command line (`src/main.rs`, `src/cmd/`); its library re-exports
//! the two crates it is built from, so every module keeps its `recite::` path:
//!
//! - `recite-core` (crates/recite-core): readers, citations and claims, the catalog and the
//!   extractors, resolution, the scan contract ([`scan`]), statistics, settlement, the answer
//!   audit, MOCA and reports; no DataFusion, arrow or tokio;
//! - `recite-engine` (crates/recite-engine, feature `engine`): DataFusion behind
//!   [`scan::Scan`], SPSS files, transcoding, object stores, the sums cache, the cluster.

pub use recite_core::{
    answers, card, catalog, check, citation, claim, extractor, fail_on, files, input, json, moca, probe,
    redact, report, resolve, saved, scan, settle, stats, transcript, verify, version,
};
#[cfg(feature = "ballista")]
pub use recite_engine::cluster;
#[cfg(feature = "engine")]
pub use recite_engine::{claimset, delta, engine, objstore, prove, sav, starter, synth, transcode};
