//! The Versant Mega Tracker: a deterministic, seeded, synthetic monthly brand tracker.
//!
//! [`write_versant`] writes `versant_flat.parquet` and its catalog, `study.toml`, for any
//! [`VersantSpec`]; the committed `datasets/versant/` is the default spec
//! (`cargo run -- generate versant --rows 50000 --out datasets/versant`).
//!
//! - Rows are respondents, wave by wave; each row is a pure function of (seed, row index), drawn
//!   from a documented [`SplitMix64`] rather than the `rand` crate, so the stream never changes with a
//!   dependency version. The file is byte-identical for one spec and one parquet crate version.
//! - Generation streams in batches (run in parallel, written in order), so large instances
//!   (millions of rows, hundreds of columns) never sit in memory.
//! - Weights are computed first: raking needs every respondent of a wave, but only their weighting
//!   cell, so a cheap first pass counts cells and [`rake`] works on the 32 cell counts.
#![warn(missing_docs)]

mod model;
mod rake;
mod rng;

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Float64Array, Int8Array, Int8Builder, Int32Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::error::ArrowError;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::basic::{Compression, ZstdLevel};
use datafusion::parquet::errors::ParquetError;
use datafusion::parquet::file::metadata::KeyValue;
use datafusion::parquet::file::properties::WriterProperties;
use rayon::prelude::*;

pub use model::{
    AGE_BAND_TARGETS, AGE_BANDS, AGREEMENT, BRAND_NAMES, DONT_KNOW, FUNNEL_STAGES, GENDER_TARGETS, GENDERS,
    REGION_TARGETS, REGIONS, SATISFACTION, VERSANT, brand_name, statement,
};
pub use rake::{Margin, RAKE_MAX_ITERATIONS, RAKE_TOLERANCE, RakeError, Raking, rake};
pub use rng::{SplitMix64, mix64};

use model::{Demographics, WaveShocks, attitude, attitude_stream, brand_answers, demographics};

/// The seed of the committed dataset.
pub const DEFAULT_SEED: u64 = 20_252_513;
/// The table name, and the file stem of the Parquet file.
pub const TABLE_NAME: &str = "versant_flat";
/// The Parquet file [`write_versant`] writes.
pub const FILE_NAME: &str = "versant_flat.parquet";
/// The catalog file [`write_versant`] writes beside it.
pub const STUDY_FILE: &str = "study.toml";
/// The study name citations use.
pub const STUDY_NAME: &str = "Versant Mega Tracker";

/// Rows generated per batch (one parallel work item).
const BATCH_ROWS: usize = 8192;
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
/// Fieldwork (first day, last day) of W1-W8; later waves use the 3rd to the 18th.
const FIELDED_DAYS: [(u32, u32); 8] =
    [(3, 20), (1, 16), (5, 22), (2, 18), (2, 19), (2, 19), (4, 21), (1, 18)];

/// What to generate. [`VersantSpec::default`] is the committed dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersantSpec {
    /// Total rows (respondents), split as evenly as possible across waves, earlier waves first.
    pub respondents: usize,
    /// Monthly waves, W1 = November 2025 (1-120).
    pub waves: usize,
    /// Brands (5-60; brand 5 is Versant, brands past the twelfth are "Brand 13", …).
    pub brands: usize,
    /// The seed; any value gives a complete, different sample.
    pub seed: u64,
    /// Extra attitude items `q40r1`… (agreement 1-5), to make wide tables for benchmarks.
    pub extra_questions: usize,
    /// Maximum rows per Parquet row group.
    pub row_group_size: usize,
}

impl Default for VersantSpec {
    fn default() -> Self {
        Self {
            respondents: 50_000,
            waves: 8,
            brands: 12,
            seed: DEFAULT_SEED,
            extra_questions: 0,
            row_group_size: 10_000,
        }
    }
}

impl VersantSpec {
    /// Checks the spec can be generated (sizes in range, every weighting cell plausible).
    pub fn validate(&self) -> Result<(), SpecError> {
        if !(1..=120).contains(&self.waves) {
            return Err(SpecError::Waves(self.waves));
        }
        if !(VERSANT..=60).contains(&self.brands) {
            return Err(SpecError::Brands(self.brands));
        }
        if self.extra_questions > 2000 {
            return Err(SpecError::ExtraQuestions);
        }
        if self.row_group_size == 0 {
            return Err(SpecError::RowGroupSize);
        }
        if self.respondents < 100 * self.waves {
            return Err(SpecError::TooFewRespondents { waves: self.waves });
        }
        if self.respondents > i32::MAX as usize {
            return Err(SpecError::TooManyRespondents);
        }
        Ok(())
    }

    /// Rows per wave.
    pub fn wave_sizes(&self) -> Vec<usize> {
        let (base, extra) = (self.respondents / self.waves, self.respondents % self.waves);
        (0..self.waves).map(|w| base + usize::from(w < extra)).collect()
    }

    /// The Arrow schema of the table: `wave, respondent_id, age, gender, region`, then `s14r*`,
    /// `q20r*`, `q30r*`, `q40r*`, then `main_weight, alt_weight`.
    pub fn schema(&self) -> SchemaRef {
        let int8 = |name: String, nullable| Field::new(name, DataType::Int8, nullable);
        let mut fields = vec![
            Field::new("wave", DataType::Int8, false),
            Field::new("respondent_id", DataType::Int32, false),
            int8("age".into(), false),
            int8("gender".into(), false),
            int8("region".into(), false),
        ];
        fields.extend((1..=self.brands).map(|b| int8(format!("s14r{b}"), false)));
        fields.extend((1..=self.brands).map(|b| int8(format!("q20r{b}"), true)));
        fields.extend((1..=self.brands).map(|b| int8(format!("q30r{b}"), true)));
        fields.extend((1..=self.extra_questions).map(|i| int8(format!("q40r{i}"), false)));
        fields.push(Field::new("main_weight", DataType::Float64, false));
        fields.push(Field::new("alt_weight", DataType::Float64, false));
        Arc::new(Schema::new(fields))
    }

    /// A one-line description of the spec, stored in the Parquet footer as `recite.synth`.
    pub fn provenance(&self) -> String {
        format!(
            "recite::synth versant v1; seed={}; respondents={}; waves={}; brands={}; extra_questions={}",
            self.seed, self.respondents, self.waves, self.brands, self.extra_questions
        )
    }
}

/// The name of wave `w` (1-based), e.g. `W6 (April 2026)`.
pub fn wave_name(w: usize) -> String {
    let (year, month) = wave_month(w);
    format!("W{w} ({} {year})", MONTHS[month as usize - 1])
}

/// The fieldwork interval of wave `w` (1-based), ISO 8601, e.g. `2026-04-02/2026-04-19`.
pub fn wave_fielded(w: usize) -> String {
    let (year, month) = wave_month(w);
    let (first, last) = FIELDED_DAYS.get(w - 1).copied().unwrap_or((3, 18));
    format!("{year}-{month:02}-{first:02}/{year}-{month:02}-{last:02}")
}

/// (year, month) of wave `w`: W1 is November 2025, one wave a month.
fn wave_month(w: usize) -> (usize, u32) {
    let months = 2025 * 12 + 10 + (w - 1); // months since year 0, January = 0
    (months / 12, (months % 12) as u32 + 1)
}

/// The weights of one wave, by weighting cell (age band × gender × region, see [`weight_cell`]).
#[derive(Debug, Clone, PartialEq)]
pub struct WaveWeights {
    /// 1-based wave.
    pub wave: usize,
    /// Respondents in the wave.
    pub n: usize,
    /// Respondents per cell.
    pub counts: Vec<f64>,
    /// `main_weight`: raked to age band, gender and region.
    pub main: Raking,
    /// `alt_weight`: raked to age band and gender only.
    pub alt: Raking,
}

/// The weighting cell (0..32) of an age band index (0-3), gender code (1-2) and region code (1-4).
pub fn weight_cell(band: usize, gender: i8, region: i8) -> usize {
    band * 8 + (gender as usize - 1) * 4 + (region as usize - 1)
}

const CELLS: usize = 32;

/// Rakes both weights for every wave (the first pass of [`write_versant`]).
pub fn wave_weights(spec: &VersantSpec) -> Result<Vec<WaveWeights>, SynthError> {
    spec.validate()?;
    let band_of: Vec<usize> = (0..CELLS).map(|c| c / 8).collect();
    let gender_of: Vec<usize> = (0..CELLS).map(|c| (c / 4) % 2).collect();
    let region_of: Vec<usize> = (0..CELLS).map(|c| c % 4).collect();
    let band = Margin { category_of_cell: &band_of, targets: &AGE_BAND_TARGETS };
    let gender = Margin { category_of_cell: &gender_of, targets: &GENDER_TARGETS };
    let region = Margin { category_of_cell: &region_of, targets: &REGION_TARGETS };

    let mut start = 0;
    let mut out = Vec::with_capacity(spec.waves);
    for (w, n) in spec.wave_sizes().into_iter().enumerate() {
        let counts = (start..start + n)
            .into_par_iter()
            .fold(
                || [0u64; CELLS],
                |mut acc, i| {
                    acc[demographics(spec.seed, i as u64).cell()] += 1;
                    acc
                },
            )
            .reduce(|| [0u64; CELLS], |a, b| std::array::from_fn(|c| a[c] + b[c]));
        let counts: Vec<f64> = counts.iter().map(|&c| c as f64).collect();
        let wave = w + 1;
        let raked = |weight: &'static str, margins: &[Margin<'_>]| {
            rake(&counts, margins).map_err(|source| SynthError::Rake { weight, wave, source })
        };
        let main = raked("main_weight", &[band, gender, region])?;
        let alt = raked("alt_weight", &[band, gender])?;
        out.push(WaveWeights { wave, n, counts, main, alt });
        start += n;
    }
    Ok(out)
}

/// Everything needed to make any batch of rows.
struct Generator {
    spec: VersantSpec,
    schema: SchemaRef,
    weights: Vec<WaveWeights>,
    /// First row index of each wave, plus the total at the end.
    starts: Vec<usize>,
    shocks: WaveShocks,
}

impl Generator {
    fn new(spec: &VersantSpec) -> Result<Self, SynthError> {
        let weights = wave_weights(spec)?;
        let mut starts = vec![0];
        for n in spec.wave_sizes() {
            starts.push(starts.last().unwrap() + n);
        }
        Ok(Self {
            spec: spec.clone(),
            schema: spec.schema(),
            weights,
            starts,
            shocks: WaveShocks::new(spec.seed, spec.waves, spec.brands),
        })
    }

    /// Rows `start..end` as one record batch.
    fn batch(&self, start: usize, end: usize) -> Result<RecordBatch, SynthError> {
        let (seed, brands, n) = (self.spec.seed, self.spec.brands, end - start);
        let mut wave = Vec::with_capacity(n);
        let mut id = Vec::with_capacity(n);
        let (mut age, mut gender, mut region) =
            (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let mut funnel: Vec<Vec<i8>> = (0..brands).map(|_| Vec::with_capacity(n)).collect();
        let mut recommend: Vec<Int8Builder> = (0..brands).map(|_| Int8Builder::with_capacity(n)).collect();
        let mut satisfaction: Vec<Int8Builder> = (0..brands).map(|_| Int8Builder::with_capacity(n)).collect();
        let mut attitudes: Vec<Vec<i8>> =
            (0..self.spec.extra_questions).map(|_| Vec::with_capacity(n)).collect();
        let (mut main, mut alt) = (Vec::with_capacity(n), Vec::with_capacity(n));

        let mut w = self.starts.partition_point(|&s| s <= start); // 1-based wave of `start`
        for i in start..end {
            while i >= self.starts[w] {
                w += 1;
            }
            let d: Demographics = demographics(seed, i as u64);
            wave.push(w as i8);
            id.push(i as i32 + 1);
            age.push(d.age);
            gender.push(d.gender);
            region.push(d.region);
            for b in 1..=brands {
                let a = brand_answers(seed, i as u64, w, b, &d, &self.shocks);
                funnel[b - 1].push(a.funnel);
                recommend[b - 1].append_option(a.recommend);
                satisfaction[b - 1].append_option(a.satisfaction);
            }
            if !attitudes.is_empty() {
                let mut r = attitude_stream(seed, i as u64);
                for (item, column) in attitudes.iter_mut().enumerate() {
                    column.push(attitude(&mut r, item + 1, &d));
                }
            }
            let cell = d.cell();
            main.push(self.weights[w - 1].main.weights[cell]);
            alt.push(self.weights[w - 1].alt.weights[cell]);
        }

        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(Int8Array::from(wave)),
            Arc::new(Int32Array::from(id)),
            Arc::new(Int8Array::from(age)),
            Arc::new(Int8Array::from(gender)),
            Arc::new(Int8Array::from(region)),
        ];
        columns.extend(funnel.into_iter().map(|c| Arc::new(Int8Array::from(c)) as ArrayRef));
        columns.extend(recommend.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef));
        columns.extend(satisfaction.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef));
        columns.extend(attitudes.into_iter().map(|c| Arc::new(Int8Array::from(c)) as ArrayRef));
        columns.push(Arc::new(Float64Array::from(main)));
        columns.push(Arc::new(Float64Array::from(alt)));
        Ok(RecordBatch::try_new(self.schema.clone(), columns)?)
    }
}

/// The rows of a spec as record batches of at most `batch_rows` rows, in file order, generated
/// lazily (for in-memory tables or other file formats; [`write_versant`] is the usual entry).
pub struct VersantBatches {
    generator: Generator,
    next: usize,
    batch_rows: usize,
}

impl VersantBatches {
    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.generator.schema.clone()
    }

    /// The raked weights of every wave.
    pub fn weights(&self) -> &[WaveWeights] {
        &self.generator.weights
    }
}

impl Iterator for VersantBatches {
    type Item = Result<RecordBatch, SynthError>;

    fn next(&mut self) -> Option<Self::Item> {
        let total = self.generator.spec.respondents;
        (self.next < total).then(|| {
            let end = (self.next + self.batch_rows).min(total);
            let batch = self.generator.batch(self.next, end);
            self.next = end;
            batch
        })
    }
}

/// Generates a spec as batches (the weights are raked up front).
pub fn versant_batches(spec: &VersantSpec, batch_rows: usize) -> Result<VersantBatches, SynthError> {
    if batch_rows == 0 {
        return Err(SpecError::BatchRows.into());
    }
    Ok(VersantBatches { generator: Generator::new(spec)?, next: 0, batch_rows })
}

/// Writes `versant_flat.parquet` (zstd, row groups of `spec.row_group_size`) and `study.toml`
/// into `out_dir`, creating it if needed. Both are written to a temporary name and renamed, so a
/// failed run never leaves a half-written file under the real name.
pub fn write_versant(spec: &VersantSpec, out_dir: &Path) -> Result<(), SynthError> {
    let generator = Generator::new(spec)?;
    let at = |path: &Path, did: &'static str| {
        let path = path.to_path_buf();
        move |source| SynthError::File { did, path, source }
    };
    std::fs::create_dir_all(out_dir).map_err(at(out_dir, "creating"))?;

    let path = out_dir.join(FILE_NAME);
    let tmp = out_dir.join(format!("{FILE_NAME}.tmp"));
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3)?))
        .set_max_row_group_row_count(Some(spec.row_group_size))
        .set_key_value_metadata(Some(vec![KeyValue::new("recite.synth".into(), spec.provenance())]))
        .build();
    let file = File::create(&tmp).map_err(at(&tmp, "creating"))?;
    let mut writer = ArrowWriter::try_new(BufWriter::new(file), generator.schema.clone(), Some(props))?;

    let total = spec.respondents;
    let batches = total.div_ceil(BATCH_ROWS);
    let group = 2 * rayon::current_num_threads().max(1);
    for first in (0..batches).step_by(group) {
        let made: Vec<Result<RecordBatch, SynthError>> = (first..(first + group).min(batches))
            .into_par_iter()
            .map(|b| generator.batch(b * BATCH_ROWS, ((b + 1) * BATCH_ROWS).min(total)))
            .collect();
        for batch in made {
            writer.write(&batch?)?;
        }
    }
    writer.into_inner()?.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, &path).map_err(|source| SynthError::Rename {
        from: tmp.clone(),
        to: path.clone(),
        source,
    })?;

    let study = out_dir.join(STUDY_FILE);
    let tmp = out_dir.join(format!("{STUDY_FILE}.tmp"));
    std::fs::write(&tmp, study_toml(spec)).map_err(at(&tmp, "writing"))?;
    std::fs::rename(&tmp, &study).map_err(at(&tmp, "renaming"))?;
    Ok(())
}

/// A [`VersantSpec`] that cannot be generated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Waves out of 1–120.
    #[error("waves must be 1-120, not {0}")]
    Waves(usize),
    /// Brands out of range.
    #[error("brands must be {VERSANT}-60, not {0}")]
    Brands(usize),
    /// Too many extra questions.
    #[error("extra_questions must be at most 2000")]
    ExtraQuestions,
    /// Row groups of no rows.
    #[error("row_group_size must be positive")]
    RowGroupSize,
    /// Fewer than 100 respondents a wave.
    #[error(
        "respondents must be at least 100 per wave ({} for {waves} waves), so every weighting category is filled",
        100 * waves
    )]
    TooFewRespondents {
        /// The waves asked for.
        waves: usize,
    },
    /// More respondents than an Int32 id holds.
    #[error("respondents must fit an Int32 respondent_id")]
    TooManyRespondents,
    /// Batches of no rows.
    #[error("batch_rows must be positive")]
    BatchRows,
}

/// Why the dataset could not be generated or written.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    /// The spec is out of range.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A wave's weights do not rake.
    #[error("{weight}, wave {wave}")]
    Rake {
        /// `main_weight` or `alt_weight`.
        weight: &'static str,
        /// The wave.
        wave: usize,
        /// Why.
        source: RakeError,
    },
    /// A batch could not be assembled.
    #[error(transparent)]
    Arrow(#[from] ArrowError),
    /// The Parquet file could not be written.
    #[error(transparent)]
    Parquet(#[from] ParquetError),
    /// A file or folder could not be made (`did`: creating, writing, renaming).
    #[error("{did} {}", path.display())]
    File {
        /// What was being done.
        did: &'static str,
        /// To what.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The finished file could not be renamed into place.
    #[error("renaming {} to {}", from.display(), to.display())]
    Rename {
        /// The temporary name.
        from: PathBuf,
        /// The real one.
        to: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
    /// Syncing the written file failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// A TOML basic string.
fn q(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// An inline table of value labels, `{ "code" = "label", … }`.
fn labels<'a>(pairs: impl IntoIterator<Item = (i64, &'a str)>) -> String {
    let items: Vec<String> =
        pairs.into_iter().map(|(code, label)| format!("\"{code}\" = {}", q(label))).collect();
    format!("{{ {} }}", items.join(", "))
}

fn share_table<'a>(names: impl IntoIterator<Item = &'a str>, targets: &[f64]) -> String {
    let items: Vec<String> = names.into_iter().zip(targets).map(|(n, t)| format!("{} = {t}", q(n))).collect();
    format!("{{ {} }}", items.join(", "))
}

/// The command that regenerates a spec's files into `out`.
pub fn regenerate_command(spec: &VersantSpec, out: &str) -> String {
    let d = VersantSpec::default();
    let mut cmd = format!("cargo run -- generate versant --rows {} --out {out}", spec.respondents);
    for (flag, value, default) in [
        ("--seed", spec.seed, d.seed),
        ("--waves", spec.waves as u64, d.waves as u64),
        ("--brands", spec.brands as u64, d.brands as u64),
        ("--extra-questions", spec.extra_questions as u64, d.extra_questions as u64),
        ("--row-group-size", spec.row_group_size as u64, d.row_group_size as u64),
    ] {
        if value != default {
            cmd.push_str(&format!(" {flag} {value}"));
        }
    }
    cmd
}

/// `50000` as `50,000`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The catalog (`study.toml`, see docs/catalog.md) describing the file a spec generates.
pub fn study_toml(spec: &VersantSpec) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let brands: Vec<String> = (1..=spec.brands).map(brand_name).collect();
    let funnel_labels = labels(FUNNEL_STAGES.iter().enumerate().map(|(i, s)| (i as i64, *s)));
    let satisfaction_labels =
        labels(SATISFACTION.iter().enumerate().map(|(i, s)| (i as i64 + 1, *s)).chain([(9, "Don't know")]));
    let agreement_labels = labels(AGREEMENT.iter().enumerate().map(|(i, s)| (i as i64 + 1, *s)));
    let waves: Vec<String> = (1..=spec.waves).map(wave_name).collect();

    let _ = writeln!(
        t,
        "# Generated by recite::synth::study_toml with the Parquet file; do not edit by hand.\n\
         # Regenerate both with\n#   {}\n",
        regenerate_command(spec, "datasets/versant")
    );
    let _ = writeln!(t, "[study]\nname = {}\naliases = [\"Versant\", \"Versant tracker\"]", q(STUDY_NAME));
    let _ = writeln!(
        t,
        "description = {}\n",
        q(&format!(
            "Synthetic monthly brand tracker (not real data): {} adults 18-74 over {} waves, {} to {}, \
             {} brands with a purchase funnel, recommendation and satisfaction. Made by recite::synth.",
            thousands(spec.respondents),
            spec.waves,
            waves[0],
            waves[spec.waves - 1],
            spec.brands
        ))
    );
    let _ = writeln!(t, "[thresholds]\nlow = 100\nvery_low = 50\n");

    let _ = writeln!(
        t,
        "[[tables]]\nname = {}\npath = {}\nweights = [\"main_weight\", \"alt_weight\"]\n",
        q(TABLE_NAME),
        q(FILE_NAME)
    );
    let mut column = |name: &str, body: String| {
        let _ = writeln!(t, "[tables.columns.{name}]\n{body}");
    };
    column(
        "wave",
        format!(
            "label = \"Wave\"\nvalues = {}\n",
            labels(waves.iter().enumerate().map(|(i, w)| (i as i64 + 1, w.as_str())))
        ),
    );
    column("respondent_id", "label = \"Respondent ID\"\n".into());
    column("age", "label = \"Age (years)\"\n".into());
    column(
        "gender",
        format!("label = \"Gender\"\nvalues = {}\n", labels([(1, GENDERS[0]), (2, GENDERS[1])])),
    );
    column(
        "region",
        format!(
            "label = \"Region\"\nvalues = {}\n",
            labels(REGIONS.iter().enumerate().map(|(i, r)| (i as i64 + 1, *r)))
        ),
    );
    for (b, brand) in brands.iter().enumerate().map(|(i, n)| (i + 1, n)) {
        column(
            &format!("s14r{b}"),
            format!(
                "label = {}\nquestion = \"s14\"\nvalues = {funnel_labels}\n",
                q(&format!("Brand funnel: {brand}"))
            ),
        );
    }
    for (b, brand) in brands.iter().enumerate().map(|(i, n)| (i + 1, n)) {
        column(
            &format!("q20r{b}"),
            format!(
                "label = {}\nquestion = \"q20\"\nscale = [0, 10]\n\
                 values = {{ \"0\" = \"Not at all likely\", \"10\" = \"Extremely likely\" }}\n\
                 share = [9, 10]\n\
                 universe = {{ name = {}, filter = \"s14r{b} >= 2\" }}\n",
                q(&format!("Likelihood to recommend: {brand}")),
                q(&format!("Adults familiar with {brand}"))
            ),
        );
    }
    for (b, brand) in brands.iter().enumerate().map(|(i, n)| (i + 1, n)) {
        column(
            &format!("q30r{b}"),
            format!(
                "label = {}\nquestion = \"q30\"\nvalues = {satisfaction_labels}\nmissing = [9]\nshare = [4, 5]\n\
                 universe = {{ name = {}, filter = \"s14r{b} >= 4\" }}\n",
                q(&format!("Satisfaction: {brand}")),
                q(&format!("Purchasers of {brand}"))
            ),
        );
    }
    for i in 1..=spec.extra_questions {
        column(
            &format!("q40r{i}"),
            format!(
                "label = {}\nquestion = \"q40\"\nvalues = {agreement_labels}\nshare = [4, 5]\n",
                q(&format!("Agreement: {}", statement(i)))
            ),
        );
    }
    column(
        "main_weight",
        "label = \"Main weight (raked: age band x gender x region margins; mean 1 in each wave)\"\n".into(),
    );
    column(
        "alt_weight",
        "label = \"Alternative weight (raked: age band x gender margins; mean 1 in each wave)\"\n".into(),
    );

    for w in 1..=spec.waves {
        let (year, month) = wave_month(w);
        let _ = writeln!(
            t,
            "[[periods]]\nname = {}\naliases = [\"W{w}\", {}]\nfilter = \"wave = {w}\"\nfielded = {}\n",
            q(&wave_name(w)),
            q(&format!("{} {year}", MONTHS[month as usize - 1])),
            q(&wave_fielded(w))
        );
    }

    let _ = writeln!(
        t,
        "# {{column}} is the cited column, quoted: for a q20/q30 citation it is that column, not the funnel.\n"
    );
    for (name, filter) in [
        ("All adults 18-74", "age BETWEEN 18 AND 74"),
        ("Adults 18-74, aware of brand", "age BETWEEN 18 AND 74 AND {column} >= 1"),
        ("Adults 18-74, familiar with brand", "age BETWEEN 18 AND 74 AND {column} >= 2"),
        ("Purchasers of brand", "{column} >= 4"),
        ("Women 18-74", "age BETWEEN 18 AND 74 AND gender = 2"),
    ] {
        let _ = writeln!(t, "[[bases]]\nname = {}\nfilter = {}\n", q(name), q(filter));
    }

    let cells = |items: Vec<(String, String)>| {
        let rows: Vec<String> =
            items.iter().map(|(n, f)| format!("  {{ name = {}, filter = {} }},", q(n), q(f))).collect();
        format!("cells = [\n{}\n]", rows.join("\n"))
    };
    let age_cells =
        AGE_BANDS.iter().map(|(n, lo, hi)| (n.to_string(), format!("age BETWEEN {lo} AND {hi}"))).collect();
    let gender_cells =
        GENDERS.iter().enumerate().map(|(i, g)| (g.to_string(), format!("gender = {}", i + 1))).collect();
    let region_cells =
        REGIONS.iter().enumerate().map(|(i, r)| (r.to_string(), format!("region = {}", i + 1))).collect();
    for (name, c) in [("age band", age_cells), ("gender", gender_cells), ("region", region_cells)] {
        let _ = writeln!(t, "[[breakdowns]]\nname = {}\n{}\n", q(name), cells(c));
    }

    let band_names = AGE_BANDS.iter().map(|(n, _, _)| *n);
    let _ = writeln!(
        t,
        "[weighting]\n\
         method = \"raking (iterative proportional fitting) of respondent weights, separately in each wave\"\n\
         convergence = \"max absolute error of a weighted margin share < {RAKE_TOLERANCE:e}, or {RAKE_MAX_ITERATIONS} iterations\"\n\
         normalisation = \"mean weight 1 within each wave\"\n\
         population = \"adults 18-74\"\n\n\
         [weighting.main_weight]\nmargins = [\"age band\", \"gender\", \"region\"]\n\n\
         [weighting.alt_weight]\nmargins = [\"age band\", \"gender\"]\n\n\
         [weighting.targets]\n\"age band\" = {}\ngender = {}\nregion = {}",
        share_table(band_names, &AGE_BAND_TARGETS),
        share_table(GENDERS, &GENDER_TARGETS),
        share_table(REGIONS, &REGION_TARGETS)
    );
    t
}
