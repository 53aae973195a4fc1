//! How claims are settled, from the keyword arguments `verify` and `check` share (the command
//! line's `--interval`, `--df`, `--no-explain`, `--series`, `--decimal-mark`).

use recite_core::claim::DecimalMark;
use recite_core::settle::session::Options;
use recite_core::stats::{DfRule, Interval};

use crate::errors::{Error, Kind};

/// The keyword arguments that say how claims are settled, each spelled as on the command line
/// (`korn-graubard`, `full-design`, `comma`).
#[derive(Debug, Clone, Copy)]
pub struct Spelled<'a> {
    /// `interval=`.
    pub interval: &'a str,
    /// `df=`.
    pub df: &'a str,
    /// `explain=`.
    pub explain: bool,
    /// `series=`.
    pub series: bool,
    /// `decimal_mark=`.
    pub decimal_mark: &'a str,
}

/// The settlement options the keyword arguments `s` spell.
pub fn options(s: Spelled<'_>) -> Result<Options, Error> {
    let usage = |what: &str, e: String| Error::new(Kind::Usage, format!("{what}: {e}"));
    Ok(Options {
        interval: s.interval.parse::<Interval>().map_err(|e| usage("interval", e.to_string()))?,
        df: s.df.parse::<DfRule>().map_err(|e| usage("df", e.to_string()))?,
        explain: s.explain,
        series: s.series,
        decimal_mark: s
            .decimal_mark
            .parse::<DecimalMark>()
            .map_err(|e| usage("decimal_mark", e.to_string()))?,
    })
}
