//! `recite catalog check` and `recite catalog show`: prove and list the data layer.

const USAGE: &str = "\
Examples:
  recite catalog check                  prove every study under ./datasets
  recite catalog check --data my/data   … under another folder
  recite catalog show                   list the studies
  recite catalog show Versant           tables, columns, labels, periods, bases, weights
  recite catalog init survey.sav --out data/survey
                                        a starter study.toml from a data file, to confirm

The data layer is one study.toml per folder: see docs/catalog.md.";

use std::process::ExitCode;

use anyhow::Result;

use recite::catalog::{self, Study};
use recite::citation::check_iso8601;
use recite::engine::Engine;

use super::DataArgs;

/// Prove or list the declared data layer (studies, tables, periods, bases, weights).
#[derive(Debug, clap::Subcommand)]
#[command(after_help = USAGE)]
pub enum Command {
    /// Load every study and prove it: files exist, declared columns and weights exist with the
    /// right types, every filter (period, base, breakdown cell) and weight runs on the data
    /// within the size limits, no name belongs to two studies. Exit 1 on any error.
    Check {
        #[command(flatten)]
        data: DataArgs,
    },
    /// Write a starter study.toml from data files (.sav/.zsav, .parquet, .csv, .arrow): every
    /// column with its labels, codes and missing codes; a guessed wave column (a period per
    /// value) and weights, marked GUESS; an "All respondents" base; DECIDE comments where a
    /// human must choose. `recite catalog check` passes on it as written.
    Init {
        /// The data files: one table each.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<std::path::PathBuf>,
        /// The folder to write study.toml into (created if missing).
        #[arg(long, value_name = "DIR")]
        out: std::path::PathBuf,
        /// The study's name (default: the SPSS file label, else the file name).
        #[arg(long)]
        name: Option<String>,
        /// Replace an existing study.toml.
        #[arg(long)]
        force: bool,
    },
    /// List the studies, or one study in full.
    Show {
        /// A study name or alias.
        study: Option<String>,
        #[command(flatten)]
        data: DataArgs,
    },
}

/// Runs `recite catalog …`.
pub fn run(c: Command) -> Result<ExitCode> {
    match c {
        Command::Check { data } => check(&data),
        Command::Show { study, data } => show(&data, study.as_deref()),
        Command::Init { files, out, name, force } => init(&files, &out, name.as_deref(), force),
    }
}

fn init(
    files: &[std::path::PathBuf],
    out: &std::path::Path,
    name: Option<&str>,
    force: bool,
) -> Result<ExitCode> {
    use anyhow::Context;
    let target = out.join("study.toml");
    if target.exists() && !force {
        anyhow::bail!("{} already exists: pass --force to replace it", target.display());
    }
    let text = recite::starter::starter(files, out, name, &Engine::new()).map_err(anyhow::Error::msg)?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let inputs: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    super::files::write_atomically(
        &target,
        &text,
        &super::files::identities(inputs.iter().map(String::as_str)),
    )?;
    super::warn(&format!(
        "wrote {}: confirm the GUESS lines, settle the DECIDE ones, then run `recite catalog check --data {}`",
        target.display(),
        out.display()
    ));
    Ok(ExitCode::SUCCESS)
}

fn check(data: &DataArgs) -> Result<ExitCode> {
    let mut o = String::new();
    let code = check_into(data, &mut o);
    super::write_output(None, &o)?;
    code
}

fn check_into(data: &DataArgs, o: &mut String) -> Result<ExitCode> {
    let root = data.data_dir();
    if root.is_file() {
        anyhow::bail!(
            "data folder {} is a file, not a folder (set --data DIR or RECITE_DATA)",
            root.display()
        );
    }
    let cat = data.catalog()?;
    if cat.studies.is_empty() && cat.broken.is_empty() {
        say!(o, "no study.toml under {}", cat.root.display());
        return Ok(ExitCode::from(1));
    }
    let engine = Engine::new();
    let mut errors = 0;
    for b in &cat.broken {
        errors += 1;
        say!(o, "✗ {}: {}", b.file.display(), b.error);
    }
    for (_, owners) in cat.ambiguities() {
        errors += 1;
        let list: Vec<String> = owners.iter().map(|(n, f)| format!("{n:?} ({})", f.display())).collect();
        say!(
            o,
            "✗ one name (or alias) for several studies: {}; citations naming it are UNVERIFIABLE",
            list.join(" and ")
        );
    }
    for study in &cat.studies {
        let problems = check_study(study, &engine);
        if problems.is_empty() {
            say!(
                o,
                "✓ {} ({}): {} table(s), {} period(s), {} base(s)",
                study.study.name,
                study.file.display(),
                study.tables.len(),
                study.periods.len(),
                study.bases.len()
            );
        } else {
            for p in &problems {
                say!(o, "✗ {}: {p}", study.file.display());
            }
            errors += problems.len();
        }
    }
    if errors > 0 {
        say!(o, "{errors} error(s)");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Every problem of one study, each naming its entry. Every declared filter and weight is run
/// against the data, so what passes here does not fail at run time.
pub fn check_study(study: &Study, engine: &Engine) -> Vec<String> {
    let mut p = Vec::new();
    if study.tables.is_empty() {
        p.push("declares no [[tables]]".into());
    }
    for period in &study.periods {
        if let Some(f) = &period.fielded
            && let Err(e) = check_iso8601(f)
        {
            p.push(format!("period {:?}: {e}", period.name));
        }
    }
    let n_cells: usize = study.breakdowns.iter().map(|b| b.cells.len()).sum();
    if n_cells > catalog::MAX_CELLS {
        p.push(format!(
            "declares {n_cells} breakdown cells; at most {} are supported (every claim on the study would be UNVERIFIABLE)",
            catalog::MAX_CELLS
        ));
    }
    // Size limits first, once per filter: a filter past them is never handed to DataFusion.
    let mut sized = |what: String, sql: &str| match catalog::check_filter_size(sql) {
        Ok(()) => true,
        Err(e) => {
            p.push(format!("{what}: filter {:?} {e}", catalog::shorten(sql)));
            false
        }
    };
    let periods: Vec<_> =
        study.periods.iter().filter(|x| sized(format!("period {:?}", x.name), &x.filter)).collect();
    let bases: Vec<_> =
        study.bases.iter().filter(|x| sized(format!("base {:?}", x.name), &x.filter)).collect();
    let mut cells = Vec::new();
    for b in &study.breakdowns {
        for cell in &b.cells {
            if sized(format!("breakdown {:?} cell {:?}", b.name, cell.name), &cell.filter) {
                cells.push((b, cell));
            }
        }
    }
    for t in &study.tables {
        let at = format!("table {:?}", t.name);
        let schema = match recite::resolve::Schemas::schema(engine, study, t) {
            Ok(s) => s,
            Err(e) => {
                p.push(format!("{at}: path {:?}: {e}", t.path));
                continue;
            }
        };
        let numeric = |name: &str| schema.field_with_name(name).map(|f| f.data_type().is_numeric());
        for (name, col) in &t.columns {
            match numeric(name) {
                Err(_) => p.push(format!(
                    "{at}: declared column {name:?} is not in {}{}",
                    t.path,
                    did_you_mean(name, schema.fields().iter().map(|f| f.name().as_str()))
                )),
                Ok(false) if !col.values.is_empty() => {
                    p.push(format!("{at}: column {name:?} has value labels but is not numeric"))
                }
                _ => {}
            }
            for k in col.values.keys() {
                if k.trim().parse::<f64>().is_err() {
                    p.push(format!("{at}: column {name:?}: value label key {k:?} is not a number"));
                }
            }
        }
        let location = t.location(study);
        for w in &t.weights {
            match numeric(w) {
                Err(_) => p.push(format!("{at}: weight {w:?} is not a column of {}", t.path)),
                Ok(false) => p.push(format!("{at}: weight {w:?} is not numeric")),
                Ok(true) => {
                    if let Err(e) = engine.check_weight(&location, w) {
                        p.push(format!("{at}: weight {w:?} {e}"));
                    }
                }
            }
        }
        // Replicate weights: the pattern, the method's needs, and each column as a weight (all
        // of them in one scan of the table).
        if let Some(r) = &t.replicates {
            match r.resolve(schema.fields().iter().map(|f| f.name().as_str())) {
                Err(e) => p.push(format!("{at}: replicates: {e}")),
                Ok(rep) => {
                    let (numbers, other): (Vec<&str>, Vec<&str>) =
                        rep.columns.iter().map(String::as_str).partition(|w| numeric(w).unwrap_or(false));
                    for w in other {
                        p.push(format!("{at}: replicate weight {w:?} is not numeric"));
                    }
                    for (w, checked) in numbers.iter().zip(engine.check_weights(&location, &numbers)) {
                        if let Err(e) = checked {
                            p.push(format!("{at}: replicate weight {w:?} {e}"));
                        }
                    }
                }
            }
        }
        if let Some(d) = &t.design {
            for (role, c) in [("strata", &d.strata), ("psu", &d.psu)] {
                if numeric(c).is_err() {
                    p.push(format!("{at}: design {role} column {c:?} is not a column of {}", t.path));
                }
            }
        }
        // {column} in a base filter is run with every declared numeric column a citation may
        // name (or, with none declared, the first numeric column of the table).
        let mut probes: Vec<String> =
            t.columns.keys().filter(|c| numeric(c).unwrap_or(false)).cloned().collect();
        if probes.is_empty() {
            probes.extend(
                schema.fields().iter().find(|f| f.data_type().is_numeric()).map(|f| f.name().clone()),
            );
        }
        for period in &periods {
            if let Err(e) = engine.check_filter(&location, &period.filter) {
                p.push(format!("period {:?}: filter {:?} on {at}: {e}", period.name, period.filter));
            }
        }
        for base in &bases {
            let columns: Vec<&String> = if base.filter.contains("{column}") {
                probes.iter().collect()
            } else {
                probes.iter().take(1).collect()
            };
            for column in columns {
                if let Err(e) = engine.check_filter(&location, &catalog::base_filter(base, column)) {
                    let with = if base.filter.contains("{column}") {
                        format!(" with {{column}} = {column:?}")
                    } else {
                        String::new()
                    };
                    p.push(format!("base {:?}: filter {:?}{with} on {at}: {e}", base.name, base.filter));
                    break;
                }
            }
        }
        for (b, cell) in &cells {
            if let Err(e) = engine.check_filter(&location, &cell.filter) {
                p.push(format!(
                    "breakdown {:?} cell {:?}: filter {:?} on {at}: {e}",
                    b.name, cell.name, cell.filter
                ));
            }
        }
    }
    p
}

fn did_you_mean<'a>(name: &str, names: impl IntoIterator<Item = &'a str>) -> String {
    match catalog::suggest(name, names).first() {
        Some(s) => format!("; did you mean {s:?}?"),
        None => String::new(),
    }
}

fn show(data: &DataArgs, which: Option<&str>) -> Result<ExitCode> {
    let mut o = String::new();
    let code = show_into(data, which, &mut o);
    super::write_output(None, &o)?;
    code
}

fn show_into(data: &DataArgs, which: Option<&str>, o: &mut String) -> Result<ExitCode> {
    let cat = data.catalog()?;
    let Some(name) = which else {
        for s in &cat.studies {
            let aliases = if s.study.aliases.is_empty() {
                String::new()
            } else {
                format!(" (also {})", s.study.aliases.join(", "))
            };
            say!(o, "{}{aliases}\n  {}\n  {}", s.study.name, s.study.description, s.file.display());
            for t in &s.tables {
                say!(
                    o,
                    "  table {}: {} declared columns, weights {}",
                    t.name,
                    t.columns.len(),
                    list(&t.weights)
                );
            }
            say!(o);
        }
        for b in &cat.broken {
            say!(o, "(cannot be used) {}: {}", b.file.display(), b.error);
        }
        return Ok(ExitCode::SUCCESS);
    };
    let s = match cat.study(name) {
        Ok(s) => s,
        Err(e) => anyhow::bail!("{e}"),
    };
    say!(o, "{}\n  {}\n  file {}", s.study.name, s.study.description, s.file.display());
    if !s.study.aliases.is_empty() {
        say!(o, "  aliases {}", list(&s.study.aliases));
    }
    for t in &s.tables {
        say!(o, "\ntable {} ({})", t.name, t.path);
        say!(o, "  weights {}", list(&t.weights));
        if let Some(d) = &t.design {
            say!(o, "  design: strata {}, PSU {}", d.strata, d.psu);
        }
        let mut cols: Vec<_> = t.columns.iter().collect();
        cols.sort_by_key(|(n, _)| catalog::natural_key(n));
        for (n, c) in cols {
            let mut extra = Vec::new();
            let codes = c.codes();
            if !codes.is_empty() {
                extra.push(
                    codes
                        .iter()
                        .map(|(k, l)| format!("{}={l}", recite::extractor::num(*k)))
                        .collect::<Vec<_>>()
                        .join(", "),
                );
            }
            if !c.missing.is_empty() {
                extra.push(format!("missing {:?}", c.missing));
            }
            for [lo, hi] in &c.missing_ranges {
                extra.push(format!("missing {lo} to {hi}"));
            }
            let extra = if extra.is_empty() { String::new() } else { format!("  [{}]", extra.join("; ")) };
            say!(o, "  {n:<14} {}{extra}", c.label);
        }
    }
    say!(o, "\nperiods");
    for p in &s.periods {
        say!(o, "  {:<22} {}  {}", p.name, p.filter, p.fielded.as_deref().unwrap_or(""));
    }
    say!(o, "\nbases");
    for b in &s.bases {
        say!(o, "  {:<34} {}", b.name, b.filter);
    }
    if !s.breakdowns.is_empty() {
        say!(
            o,
            "\nbreakdowns (audited for bases under {}; very low under {})",
            s.thresholds.low,
            s.thresholds.very_low
        );
        for b in &s.breakdowns {
            say!(
                o,
                "  {}: {}",
                b.name,
                b.cells.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
            );
        }
    }
    if let Some(w) = &s.weighting {
        say!(
            o,
            "\nweighting\n{}",
            toml::to_string_pretty(w)
                .unwrap_or_default()
                .lines()
                .map(|l| format!("  {l}\n"))
                .collect::<String>()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn list(v: &[String]) -> String {
    if v.is_empty() { "(none)".into() } else { v.join(", ") }
}
