//! How claims are settled, from the keyword arguments `verify` and `check` share (the command
//! line's `--interval`, `--df`, `--no-explain`, `--series`, `--decimal-mark`).

use recite_core::claim::DecimalMark;
use recite_core::settle::session::Options;
use recite_core::stats::{DfRule, Interval};

use crate::errors::{Error, Kind};

/// The settlement options, each spelled as on the command line (`korn-graubard`, `full-design`,
/// `comma`).
pub fn options(
    interval: &str,
    df: &str,
    explain: bool,
    series: bool,
    decimal_mark: &str,
) -> Result<Options, Error> {
    let usage = |what: &str, e: String| Error::new(Kind::Usage, format!("{what}: {e}"));
    Ok(Options {
        interval: interval.parse::<Interval>().map_err(|e| usage("interval", e.to_string()))?,
        df: df.parse::<DfRule>().map_err(|e| usage("df", e.to_string()))?,
        explain,
        series,
        decimal_mark: decimal_mark
            .parse::<DecimalMark>()
            .map_err(|e| usage("decimal_mark", e.to_string()))?,
    })
}
