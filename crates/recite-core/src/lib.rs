//! recite's core: everything but the engine. recite re-executes the citations AI agents attach to
//! numbers, and settles disputes about them; this crate holds no DataFusion, arrow or tokio
//! (`recite-engine` runs the scans behind [`scan::Scan`]; the `recite` package re-exports both and
//! is the command line).
//!
//! The path of one claim, one module per stage (dependencies point down this list):
//!
//! - [`transcript`]: input files → [`transcript::Item`]s (where found, claimed result, citation),
//!   with what they find as the plain data of [`input`] (locators, findings, turns), which the
//!   reports use without depending on any reader;
//! - [`citation`]: an Upperhand v1 citation Part, parsed and validated;
//! - [`claim`]: the claimed numbers, kept as text so their shown precision survives;
//! - [`catalog`] and [`extractor`]: the declared data layer and the registered functions (the
//!   engine reads SPSS dictionaries into it, and converts CSV files in other encodings);
//! - [`resolve`]: citation + catalog + registry → what to compute, by catalog names only;
//! - [`scan`]: the contract between settlement and the engine: jobs, the sufficient statistics
//!   of [`scan::sums`], outcomes, errors, what a run read, and the [`scan::Scan`] trait;
//! - the engine (`recite-engine`): DataFusion, every measure of every item on one table in one
//!   scan, returning those sums;
//! - [`stats`]: standard errors, intervals, effective base, from those sums;
//! - [`settle`]: claimed vs recomputed → a verdict ([`settle::compare`]), what the agent most
//!   likely computed instead ([`settle::explain`]), and the whole path for many claims, fused
//!   per table, in memory ([`settle::pipeline`]);
//! - [`report`]: text, JSON, JSON lines, Markdown, HTML, JUnit, each written as claims come.
//!
//! [`verify`] settles one citation file in full (`recite verify`); [`check`] runs a batch
//! (`recite check`), streamed: claims read, settled and written in bounded chunks, every claim on
//! one table still in one scan; both take any [`scan::Scan`]. The fuzz targets (fuzz/) build this
//! crate alone, in a minute instead of DataFusion's twenty.
//!
//! [`files`] finds and reads a batch's input files and writes reports without overwriting an
//! input; [`fail_on`] is what makes a batch fail (`--fail-on`). Every front end (the command line,
//! the Python package) applies their rules.
//! [`version`] names the versions of a table a claim may be pinned to and says which one a
//! settlement ran on (Delta Lake tables keep every version).
//!
//! [`answers`] traces every number of an agent's answer text to the cited, re-run results.
//!
//! [`json`] is the JSON toolkit they all share (pointers, numeric leaves, citation shape, media
//! types, base64); [`redact`] hides the secrets of URLs in every message. [`moca`] checks MOCA
//! `moca.citations` events in AG-UI logs. [`probe`] is `recite probe` without the network: the calls
//! a card asks for and the conformance of their replies.

pub mod answers;
pub mod card;
pub mod catalog;
pub mod causes;
pub mod check;
pub mod citation;
pub mod claim;
pub mod extractor;
pub mod fail_on;
pub mod files;
pub mod input;
pub mod json;
pub mod moca;
pub mod probe;
pub mod redact;
pub mod report;
pub mod resolve;
pub mod saved;
pub mod scan;
pub mod settle;
pub mod stats;
pub mod transcript;
pub mod verify;
pub mod version;
