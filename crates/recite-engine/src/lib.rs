//! recite's engine: what reads data, behind recite-core's [`recite_core::scan::Scan`].
//!
//! - [`engine`]: DataFusion, every measure of every job on one table in one scan, by the grouped
//!   or the summed plan, its sums kept between runs ([`engine::cache`]) and its scans run here or
//!   on an Apache Ballista cluster ([`engine::remote`]);
//! - [`sav`] reads SPSS files, and adopts their dictionaries into a loaded catalog
//!   ([`sav::load_catalog`]); [`transcode`] converts CSV files in other encodings or with decimal
//!   commas; [`objstore`] reads tables on object storage (feature `object-store`); [`delta`]
//!   reads Delta Lake tables at a version of their log (feature `delta`); [`postgres`] reads
//!   tables on a PostgreSQL server, scans pushed down to it (feature `postgres`);
//! - [`prove`] proves a data layer against its data (`recite catalog check`); [`starter`]
//!   writes a starter catalog for data files (`recite catalog init`);
//! - [`synth`] makes the Versant data and [`claimset`] claim sets over it, for benchmarks.
//!
//! With the `ballista` feature, `cluster` is recite's own scheduler and executor
//! (`recite cluster scheduler|executor`; docs/cluster.md).

// The core's modules, under the names this crate's modules have always used (`crate::catalog`).
use recite_core::{catalog, citation, extractor, redact, resolve, scan, settle};

pub mod claimset;
#[cfg(feature = "ballista")]
pub mod cluster;
pub mod delta;
pub mod engine;
pub mod objstore;
pub mod postgres;
pub mod prove;
pub mod sav;
pub mod starter;
pub mod synth;
pub mod transcode;
