//! The respondent model: who is sampled, and how they answer.
//!
//! Everything a row holds is a pure function of (seed, row index), drawn from per-purpose
//! [`SplitMix64`] streams: demographics, one stream per brand, one for the attitude battery.

use super::rng::SplitMix64;

/// Age bands used for weighting and breakdowns: (name, first age, last age).
pub const AGE_BANDS: [(&str, i8, i8); 4] =
    [("18-34", 18, 34), ("35-49", 35, 49), ("50-64", 50, 64), ("65-74", 65, 74)];
/// Gender labels, coded 1 and 2.
pub const GENDERS: [&str; 2] = ["Male", "Female"];
/// Region labels, coded 1 to 4.
pub const REGIONS: [&str; 4] = ["Northeast", "Midwest", "South", "West"];

/// Population shares of adults 18-74 by age band (the raking targets of both weights).
pub const AGE_BAND_TARGETS: [f64; 4] = [0.31, 0.27, 0.27, 0.15];
/// Population shares by gender (Male, Female).
pub const GENDER_TARGETS: [f64; 2] = [0.49, 0.51];
/// Population shares by region (Northeast, Midwest, South, West); `main_weight` only.
pub const REGION_TARGETS: [f64; 4] = [0.17, 0.21, 0.38, 0.24];

// The achieved sample is deliberately off target (online panels run young and female), so the
// weights matter: 65-74 is under half its population share.
const SAMPLE_AGE_BANDS: [f64; 4] = [0.40, 0.31, 0.23, 0.06];
const SAMPLE_FEMALE_BY_BAND: [f64; 4] = [0.61, 0.58, 0.56, 0.52];
const SAMPLE_REGIONS: [f64; 4] = [0.15, 0.23, 0.35, 0.27];

/// Funnel stage labels, coded 0 to 5: the furthest stage a respondent reached for a brand.
pub const FUNNEL_STAGES: [&str; 6] = ["Not aware", "Aware", "Familiar", "Considered", "Purchased", "Loyal"];
/// Satisfaction labels, coded 1 to 5 (9 = "Don't know", declared missing).
pub const SATISFACTION: [&str; 5] = [
    "Very dissatisfied",
    "Dissatisfied",
    "Neither satisfied nor dissatisfied",
    "Satisfied",
    "Very satisfied",
];
/// The satisfaction code for "Don't know".
pub const DONT_KNOW: i8 = 9;
/// Agreement labels of the attitude battery, coded 1 to 5.
pub const AGREEMENT: [&str; 5] = [
    "Strongly disagree",
    "Somewhat disagree",
    "Neither agree nor disagree",
    "Somewhat agree",
    "Strongly agree",
];

/// The tracked brands, in column order (`s14r1` is the first); brand 5 is Versant.
pub const BRAND_NAMES: [&str; 12] = [
    "Northwind",
    "Halcyon",
    "Brightline",
    "Corvana",
    "Versant",
    "Meridian",
    "Aldera",
    "Quillon",
    "Tessary",
    "Pinecrest",
    "Lumora",
    "Ostrel",
];
/// The 1-based number of the Versant brand (`s14r5`).
pub const VERSANT: usize = 5;

const STATEMENTS: [&str; 12] = [
    "I look for the best price before anything else",
    "I like to try new brands",
    "I stick with brands I know",
    "I trust online reviews",
    "Customer service matters more than price",
    "I am willing to pay more for quality",
    "I often recommend brands to friends",
    "Advertising helps me choose",
    "I prefer brands that share my values",
    "I switch providers when a better deal appears",
    "I research a lot before buying",
    "I feel overwhelmed by choice",
];

/// The name of brand `b` (1-based); brands beyond the twelve named ones are "Brand 13", ….
pub fn brand_name(b: usize) -> String {
    BRAND_NAMES.get(b - 1).map_or_else(|| format!("Brand {b}"), |s| (*s).to_string())
}

/// The text of attitude statement `i` (1-based).
pub fn statement(i: usize) -> String {
    STATEMENTS.get(i - 1).map_or_else(|| format!("Attitude statement {i}"), |s| (*s).to_string())
}

/// How one brand is known and used; probabilities are for the average respondent in W1.
struct BrandModel {
    /// P(aware) by age band.
    aware: [f64; 4],
    /// Log-odds of awareness for women minus men.
    female: f64,
    /// Log-odds shift of awareness by region.
    region: [f64; 4],
    /// Log-odds per wave on awareness (full under 50, half at 50-64, none at 65+).
    drift: f64,
    /// P(familiar | aware), P(considered | familiar), P(purchased | considered), P(loyal | purchased).
    conv: [f64; 4],
    /// Log-odds per wave on consideration.
    conv_drift: f64,
    /// Shift of the likelihood-to-recommend latent.
    recommend: f64,
}

#[rustfmt::skip]
const BRANDS: [BrandModel; 12] = [
    BrandModel { aware: [0.92, 0.94, 0.95, 0.95], female: 0.0, region: [0.1, 0.2, 0.0, -0.2], drift: 0.0,
        conv: [0.80, 0.50, 0.60, 0.40], conv_drift: -0.01, recommend: 0.3 },
    BrandModel { aware: [0.75, 0.78, 0.80, 0.78], female: 0.1, region: [0.2, 0.0, -0.1, 0.0], drift: 0.01,
        conv: [0.70, 0.45, 0.55, 0.35], conv_drift: 0.0, recommend: 0.0 },
    BrandModel { aware: [0.70, 0.62, 0.55, 0.45], female: -0.1, region: [0.0, -0.1, 0.1, 0.0], drift: 0.02,
        conv: [0.65, 0.45, 0.50, 0.30], conv_drift: 0.01, recommend: -0.2 },
    BrandModel { aware: [0.50, 0.55, 0.60, 0.62], female: 0.2, region: [0.1, 0.3, -0.2, -0.1], drift: -0.01,
        conv: [0.60, 0.40, 0.50, 0.35], conv_drift: 0.0, recommend: 0.2 },
    // Versant: a young brand with a spring campaign.
    BrandModel { aware: [0.88, 0.76, 0.55, 0.19], female: 0.15, region: [0.0, -0.1, -0.1, 0.25], drift: 0.035,
        conv: [0.72, 0.57, 0.55, 0.38], conv_drift: 0.03, recommend: 0.4 },
    BrandModel { aware: [0.60, 0.58, 0.52, 0.48], female: 0.0, region: [-0.1, 0.1, 0.1, -0.1], drift: 0.0,
        conv: [0.60, 0.40, 0.45, 0.30], conv_drift: -0.02, recommend: -0.3 },
    BrandModel { aware: [0.40, 0.35, 0.30, 0.25], female: -0.2, region: [0.3, 0.0, -0.2, 0.1], drift: 0.03,
        conv: [0.55, 0.40, 0.45, 0.30], conv_drift: 0.02, recommend: 0.1 },
    BrandModel { aware: [0.45, 0.30, 0.18, 0.10], female: 0.1, region: [0.0, 0.0, 0.0, 0.3], drift: 0.05,
        conv: [0.55, 0.50, 0.40, 0.25], conv_drift: 0.03, recommend: 0.5 },
    BrandModel { aware: [0.30, 0.28, 0.26, 0.24], female: 0.0, region: [0.0, 0.2, 0.0, -0.2], drift: -0.02,
        conv: [0.50, 0.35, 0.45, 0.30], conv_drift: 0.0, recommend: -0.4 },
    BrandModel { aware: [0.20, 0.22, 0.25, 0.30], female: 0.2, region: [0.4, 0.1, -0.3, 0.0], drift: 0.0,
        conv: [0.50, 0.40, 0.45, 0.35], conv_drift: 0.0, recommend: 0.2 },
    // Two niche brands: their aware bases are small everywhere and tiny in the older cells.
    BrandModel { aware: [0.10, 0.07, 0.05, 0.03], female: 0.0, region: [0.0, 0.0, 0.0, 0.3], drift: 0.04,
        conv: [0.55, 0.45, 0.40, 0.25], conv_drift: 0.02, recommend: 0.6 },
    BrandModel { aware: [0.06, 0.05, 0.04, 0.02], female: 0.2, region: [0.2, 0.0, 0.0, 0.0], drift: 0.0,
        conv: [0.50, 0.40, 0.40, 0.20], conv_drift: 0.0, recommend: -0.1 },
];

/// Log-odds shift of every conversion by age band: older respondents convert a little less.
const CONV_AGE: [f64; 4] = [0.10, 0.05, -0.05, -0.15];
/// Share of purchasers answering "Don't know" to satisfaction.
const DONT_KNOW_RATE: f64 = 0.03;

// Stream tags: one independent stream per purpose.
const TAG_DEMOGRAPHICS: u64 = 1;
const TAG_ATTITUDES: u64 = 2;
const TAG_WAVE_SHOCK: u64 = 3;
const TAG_BRAND: u64 = 1000;

fn logit(p: f64) -> f64 {
    (p / (1.0 - p)).ln()
}

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Demographics of one respondent (codes as written to the file).
#[derive(Debug, Clone, Copy)]
pub struct Demographics {
    /// Age in years, 18-74.
    pub age: i8,
    /// Index into [`AGE_BANDS`].
    pub band: usize,
    /// 1 Male, 2 Female.
    pub gender: i8,
    /// 1 Northeast … 4 West.
    pub region: i8,
    /// A personal "generosity" trait shared by all of a respondent's ratings.
    pub trait_score: f64,
}

impl Demographics {
    /// The weighting cell: age band × gender × region, 0..32.
    pub fn cell(&self) -> usize {
        super::weight_cell(self.band, self.gender, self.region)
    }
}

/// Draws the demographics of row `index` (0-based over the whole file).
pub fn demographics(seed: u64, index: u64) -> Demographics {
    let mut r = SplitMix64::stream(seed, TAG_DEMOGRAPHICS, index);
    let band = r.categorical(&SAMPLE_AGE_BANDS);
    let (_, lo, hi) = AGE_BANDS[band];
    let age = lo + r.below((hi - lo + 1) as u64) as i8;
    let gender = if r.bernoulli(SAMPLE_FEMALE_BY_BAND[band]) { 2 } else { 1 };
    let region = r.categorical(&SAMPLE_REGIONS) as i8 + 1;
    let trait_score = r.normal();
    Demographics { age, band, gender, region, trait_score }
}

/// Per-wave, per-brand log-odds shocks, so waves differ by more than sampling noise and trend.
pub struct WaveShocks {
    aware: Vec<f64>,
    conv: Vec<f64>,
    brands: usize,
}

impl WaveShocks {
    /// Shocks for `waves` waves and `brands` brands under `seed`.
    pub fn new(seed: u64, waves: usize, brands: usize) -> Self {
        let mut aware = Vec::with_capacity(waves * brands);
        let mut conv = Vec::with_capacity(waves * brands);
        for w in 0..waves {
            for b in 0..brands {
                let mut r = SplitMix64::stream(seed, TAG_WAVE_SHOCK, (w * 100_000 + b) as u64);
                aware.push(0.04 * r.normal());
                conv.push(0.06 * r.normal());
            }
        }
        Self { aware, conv, brands }
    }
}

/// One respondent's answers about one brand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrandAnswers {
    /// Furthest funnel stage, 0-5.
    pub funnel: i8,
    /// Likelihood to recommend 0-10; `None` unless familiar (funnel ≥ 2).
    pub recommend: Option<i8>,
    /// Satisfaction 1-5 or 9; `None` unless a purchaser (funnel ≥ 4).
    pub satisfaction: Option<i8>,
}

/// Draws the answers of row `index` (in 1-based `wave`) about brand `brand` (1-based).
pub fn brand_answers(
    seed: u64,
    index: u64,
    wave: usize,
    brand: usize,
    d: &Demographics,
    shocks: &WaveShocks,
) -> BrandAnswers {
    let m = &BRANDS[(brand - 1) % BRANDS.len()];
    let mut r = SplitMix64::stream(seed, TAG_BRAND + brand as u64, index);
    let affinity = r.normal();
    let step = (wave - 1) as f64;
    let shock = (wave - 1) * shocks.brands + (brand - 1);
    let female = if d.gender == 2 { 0.5 } else { -0.5 } * m.female;
    let drift_share = [1.0, 1.0, 0.5, 0.0][d.band];

    let aware = logit(m.aware[d.band])
        + female
        + m.region[d.region as usize - 1]
        + m.drift * step * drift_share
        + shocks.aware[shock]
        + 0.3 * affinity;
    let mut funnel = 0i8;
    if r.bernoulli(logistic(aware)) {
        funnel = 1;
        for (stage, p) in m.conv.iter().enumerate() {
            let mut x = logit(*p) + CONV_AGE[d.band] + 0.8 * affinity + shocks.conv[shock];
            if stage == 1 {
                x += m.conv_drift * step + 0.5 * female;
            }
            if !r.bernoulli(logistic(x)) {
                break;
            }
            funnel += 1;
        }
    }

    let recommend = (funnel >= 2).then(|| {
        let x = 5.0
            + m.recommend
            + 0.8 * f64::from(funnel - 2)
            + 1.2 * affinity
            + 0.6 * d.trait_score
            + 1.6 * r.normal();
        x.round().clamp(0.0, 10.0) as i8
    });
    let satisfaction = (funnel >= 4).then(|| {
        if r.bernoulli(DONT_KNOW_RATE) {
            return DONT_KNOW;
        }
        let x = 3.4
            + 0.1 * m.recommend
            + if funnel == 5 { 0.5 } else { 0.0 }
            + 0.35 * affinity
            + 0.2 * d.trait_score
            + 0.7 * r.normal();
        x.round().clamp(1.0, 5.0) as i8
    });
    BrandAnswers { funnel, recommend, satisfaction }
}

/// A stream for the attitude battery of row `index`.
pub fn attitude_stream(seed: u64, index: u64) -> SplitMix64 {
    SplitMix64::stream(seed, TAG_ATTITUDES, index)
}

/// Agreement 1-5 with attitude statement `item` (1-based), drawn from the row's attitude stream.
pub fn attitude(r: &mut SplitMix64, item: usize, d: &Demographics) -> i8 {
    // Item means and loadings vary by item but are fixed, not seeded: the questionnaire is the same.
    let h = super::rng::mix64(item as u64 ^ 0xA771_7DE5);
    let mean = 2.4 + 1.2 * ((h >> 11) as f64 / (1u64 << 53) as f64);
    let loading = 0.2 + 0.6 * ((h & 0xFFFF) as f64 / 65_536.0);
    let age = if item.is_multiple_of(3) { 0.15 * (d.band as f64 - 1.5) } else { 0.0 };
    let x = mean + loading * d.trait_score + age + 0.9 * r.normal();
    x.round().clamp(1.0, 5.0) as i8
}
