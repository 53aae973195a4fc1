//! The command line's spellings of the library's plain enums: clap's `ValueEnum`s (their docs
//! are `--help`'s), each mapped onto the library's type. The library knows nothing of clap;
//! the names here and the library's `name()` are checked equal below.

use std::ffi::OsStr;

use clap::ValueEnum;
use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;

use recite::engine::cache::Verify;
use recite::fail_on::{self, FailOn};
use recite::report::ReportFormat;
use recite::stats::{DfRule, Interval};

/// `--interval`: how to compute the interval of a proportion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IntervalArg {
    /// Logit transform, as R's `svyciprop(method = "logit")` and samplics (the default).
    Logit,
    /// Wilson score interval on the effective base.
    Wilson,
    /// Korn–Graubard (Clopper–Pearson on the effective base, df-adjusted).
    KornGraubard,
}

impl From<IntervalArg> for Interval {
    fn from(a: IntervalArg) -> Interval {
        match a {
            IntervalArg::Logit => Interval::Logit,
            IntervalArg::Wilson => Interval::Wilson,
            IntervalArg::KornGraubard => Interval::KornGraubard,
        }
    }
}

/// `--cache-verify`: what proves a table's files unchanged before a cache entry answers
/// (docs/cache.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum CacheVerifyArg {
    /// Size, times, inode and a Parquet file's footer (other files hashed whole): a write
    /// that keeps them all (through a shared mmap) is not noticed (the default).
    #[default]
    Identity,
    /// Also every file's whole content, hashed before any entry is used: the table is read
    /// once more per run, and any change to its bytes is noticed.
    Content,
}

impl From<CacheVerifyArg> for Verify {
    fn from(a: CacheVerifyArg) -> Verify {
        match a {
            CacheVerifyArg::Identity => Verify::Identity,
            CacheVerifyArg::Content => Verify::Content,
        }
    }
}

/// `--df`: where a designed estimate's degrees of freedom come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DfArg {
    /// The PSUs holding rows of the measure's domain (Σw > 0) minus the strata holding them, as
    /// R's `degf(subset(design, …))` (the default).
    Domain,
    /// Every PSU of the table minus every stratum, whatever the domain.
    FullDesign,
}

impl From<DfArg> for DfRule {
    fn from(a: DfArg) -> DfRule {
        match a {
            DfArg::Domain => DfRule::Domain,
            DfArg::FullDesign => DfRule::FullDesign,
        }
    }
}

/// `recite check --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Grouped by input, one line per claim, details for claims not reproduced.
    Text,
    /// The reference report (schema: docs/report.schema.json).
    Json,
    /// A line per claim as it is settled, a line per input, a summary line last (for
    /// pipelines; schema: docs/report-lines.schema.json).
    Jsonl,
    /// For pasting into a ticket.
    Markdown,
    /// One self-contained page: the conversation with a verdict beside every cited number.
    Html,
    /// One testcase per claim, for CI systems.
    Junit,
}

impl From<FormatArg> for ReportFormat {
    fn from(a: FormatArg) -> ReportFormat {
        match a {
            FormatArg::Text => ReportFormat::Text,
            FormatArg::Json => ReportFormat::Json,
            FormatArg::Jsonl => ReportFormat::Jsonl,
            FormatArg::Markdown => ReportFormat::Markdown,
            FormatArg::Html => ReportFormat::Html,
            FormatArg::Junit => ReportFormat::Junit,
        }
    }
}

/// One `--fail-on` item, as `--help` lists it (parsed by [`ListParser`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOnArg {
    /// A claim settled INVALID.
    Invalid,
    /// A claim settled UNVERIFIABLE.
    Unverifiable,
    /// A claim settled DISCREPANT.
    Discrepant,
    /// A claim settled BASE_MISMATCH.
    BaseMismatch,
    /// A claim settled REPRODUCED.
    Reproduced,
    /// A finding at level MUST.
    Must,
    /// A finding at level SHOULD.
    Should,
    /// A finding at level NOTE.
    Note,
    /// An answer number no citation supports.
    Uncited,
    /// An answer number about a cited measure that is neither its claimed nor recomputed value.
    Misquoted,
    /// An answer number repeating a cited number, given another period, population or brand
    /// than its citation covers.
    Misattributed,
    /// An answer number repeating a cited number, where recite cannot tell whether the sentence
    /// gives it the population, period or brand its citation covers.
    AttributionUnsure,
    /// An answer number repeating a cited number the data does not support.
    TracedToDiscrepant,
    /// An answer number repeating a cited number whose citation could not be re-run.
    TracedUnverified,
    /// An answer number that is recite's recomputed value, not the tool's.
    RecomputedOnly,
    /// An answer number repeating a cited number recite reproduced.
    Traced,
}

/// One `--fail-on` value: a comma-separated list of [`FailOn`] items.
#[derive(Debug, Clone)]
pub struct FailOnList(pub Vec<FailOn>);

/// Parses a `--fail-on` value with the library's [`fail_on::parse_list`]: an item matches
/// whatever its case or separators (`BASE_MISMATCH`, `base-mismatch`); blank items are skipped.
/// `--help` lists the items.
#[derive(Debug, Clone, Copy)]
pub struct ListParser;

impl TypedValueParser for ListParser {
    type Value = FailOnList;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<FailOnList, clap::Error> {
        match fail_on::parse_list(&value.to_string_lossy()) {
            Ok(list) => Ok(FailOnList(list)),
            Err(e) => {
                Err(clap::Error::raw(ErrorKind::InvalidValue, format!("--fail-on: {e}\n")).with_cmd(cmd))
            }
        }
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(FailOnArg::value_variants().iter().filter_map(ValueEnum::to_possible_value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names clap derives for each `ValueEnum`, in order.
    fn names<T: ValueEnum>() -> Vec<String> {
        T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value())
            .map(|p| p.get_name().to_string())
            .collect()
    }

    #[test]
    fn the_command_line_spells_every_choice_as_the_library_names_it() {
        assert_eq!(names::<IntervalArg>(), Interval::ALL.map(|v| v.name()));
        let mapped: Vec<Interval> = IntervalArg::value_variants().iter().map(|&a| a.into()).collect();
        assert_eq!(mapped, Interval::ALL);
        assert_eq!(names::<DfArg>(), DfRule::ALL.map(|v| v.name()));
        let mapped: Vec<DfRule> = DfArg::value_variants().iter().map(|&a| a.into()).collect();
        assert_eq!(mapped, DfRule::ALL);
        assert_eq!(names::<CacheVerifyArg>(), Verify::ALL.map(|v| v.name()));
        let mapped: Vec<Verify> = CacheVerifyArg::value_variants().iter().map(|&a| a.into()).collect();
        assert_eq!(mapped, Verify::ALL);
        assert_eq!(names::<FailOnArg>(), FailOn::ALL.map(|v| v.name()));
        assert_eq!(names::<FormatArg>(), ["text", "json", "jsonl", "markdown", "html", "junit"]);
    }
}
