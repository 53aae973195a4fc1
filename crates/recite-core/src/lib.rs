//! recite re-executes the citations AI agents attach to numbers, and settles disputes about them.
//!
//! The path of one claim, one module per stage (dependencies point down this list):
//!
//! - [`transcript`]: input files → [`transcript::Item`]s (where found, claimed result, citation),
//!   with what they find as the plain data of [`input`] (locators, findings, turns), which the
//!   reports use without depending on any reader;
//! - [`citation`]: an Upperhand v1 citation Part, parsed and validated;
//! - [`claim`]: the claimed numbers, kept as text so their shown precision survives;
//! - [`catalog`] and [`extractor`]: the declared data layer and the registered functions;
//!   [`sav`] reads SPSS files and their dictionaries into it; [`transcode`] converts CSV files
//!   in other encodings or with decimal commas for the engine;
//! - [`resolve`]: citation + catalog + registry → what to compute, by catalog names only;
//! - [`scan`]: the contract between settlement and the engine: jobs, the sufficient statistics
//!   of [`scan::sums`], outcomes, errors, what a run read, and the [`scan::Scan`] trait;
//! - [`engine`]: DataFusion, every measure of every item on one table in one scan, returning
//!   those sums;
//! - [`stats`]: standard errors, intervals, effective base, from those sums;
//! - [`settle`]: claimed vs recomputed → a verdict ([`settle::compare`]), what the agent most
//!   likely computed instead ([`settle::explain`]), and the whole path for many claims, fused
//!   per table, in memory ([`settle::pipeline`]);
//! - [`report`]: text, JSON, JSON lines, Markdown, HTML, JUnit, each written as claims come.
//!
//! [`verify`] settles one citation file in full (`recite verify`); [`check`] runs a batch
//! (`recite check`), streamed: claims read, settled and written in bounded chunks, every claim on
//! one table still in one scan; [`prove::prove()`] proves a data layer against its data
//! (`recite catalog check`).
//!
//! Without the default `engine` feature only the reading half builds (transcript, input,
//! citation, claim, json, catalog, extractor, moca, card): what the fuzz targets need, without
//! DataFusion.
//!
//! With the `ballista` feature, [`engine`] can run its scans on an Apache Ballista cluster
//! (`--engine ballista://HOST:PORT`), and `cluster` is recite's own scheduler and executor
//! (`recite cluster scheduler|executor`; docs/cluster.md).
//!
//! [`answers`] traces every number of an agent's answer text to the cited, re-run results.
//!
//! [`json`] is the JSON toolkit they all share (pointers, numeric leaves, citation shape, media
//! types, base64). [`moca`] checks MOCA `moca.citations` events in AG-UI logs; [`synth`] makes
//! the Versant data and [`claimset`] claim sets over it, for benchmarks.

#[cfg(feature = "engine")]
pub mod answers;
pub mod card;
pub mod catalog;
#[cfg(feature = "engine")]
pub mod check;
pub mod citation;
pub mod claim;
#[cfg(feature = "engine")]
pub mod claimset;
#[cfg(feature = "ballista")]
pub mod cluster;
#[cfg(feature = "engine")]
pub mod engine;
pub mod extractor;
pub mod input;
pub mod json;
pub mod moca;
#[cfg(feature = "engine")]
pub mod objstore;
#[cfg(feature = "engine")]
pub mod prove;
pub mod redact;
#[cfg(feature = "engine")]
pub mod report;
#[cfg(feature = "engine")]
pub mod resolve;
#[cfg(feature = "engine")]
pub mod sav;
#[cfg(feature = "engine")]
pub mod scan;
#[cfg(feature = "engine")]
pub mod settle;
#[cfg(feature = "engine")]
pub mod starter;
#[cfg(feature = "engine")]
pub mod stats;
#[cfg(feature = "engine")]
pub mod synth;
#[cfg(feature = "engine")]
pub mod transcode;
pub mod transcript;
#[cfg(feature = "engine")]
pub mod verify;
