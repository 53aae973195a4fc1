//! The HTML report's chart of a claimed measure across the periods of its study
//! ([`Settlement::series`]): one point a period with its 95% interval as whiskers, in the study's
//! order; the cited period's point a filled square with heavier whiskers and a bold label that
//! says so; the claimed value a diamond on the cited period and a dashed line across, labelled
//! `claimed 44%`. It reads without colour (shape, weight, dashes and words carry everything) and
//! without sight: `role="img"` with a `<title>` and a `<desc>` holding every value in words, and
//! a visually hidden table of the same values.
//!
//! Inline SVG written by recite, nothing loaded: the page's Content-Security-Policy stands. Every
//! string is escaped as the rest of the page; every number is written with a fixed number of
//! decimals, so the same settlement draws the same bytes.

use std::fmt::Write as _;

use super::escape::html as text;
use crate::extractor::Unit;
use crate::settle::verdict::{Comparison, Series, SeriesPoint, Settlement};

/// The drawing's width (the page scales it down to fit, never up).
const WIDTH: f64 = 440.0;
/// Room left of the plot: the y axis's labels.
const LEFT: f64 = 56.0;
/// Room right of the plot: the claimed value's label.
const RIGHT: f64 = 118.0;
/// Room above the plot.
const TOP: f64 = 14.0;
/// The plot's height.
const PLOT: f64 = 110.0;
/// Characters of a period's name shown under its point (the whole name is in the description).
const LABEL_CHARS: usize = 16;
/// Characters of the claim as written shown in its label.
const CLAIM_CHARS: usize = 10;
/// Average width of a label's character at the chart's font size, to decide whether the
/// periods' names fit side by side or are set at a slant.
const CHAR_WIDTH: f64 = 6.2;
/// The same in bold (the claimed value's label), to wrap it within [`RIGHT`]: "claimed 1.0
/// (100%)" on one line ran past the drawing's edge.
const BOLD_CHAR_WIDTH: f64 = 6.8;
/// The claimed value's label's line height.
const LINE: f64 = 12.0;

/// The ink: the report's text colour. The claimed value's is the report's DISCREPANT red, on
/// top of its own shape and dashes.
const INK: &str = "#1d2330";
const CLAIM: &str = "#b3261e";
const GRID: &str = "#dde1e7";

/// Writes the charts of the settlement's series (nothing when it has none) as one panel of
/// small multiples: the charts of a unit share one scale (`scale`), so a move of 3 points is
/// as tall in each and the measures of a claim compare at a glance, while each chart's axis
/// starts where its own values are.
pub fn write(o: &mut String, s: &Settlement) {
    if s.series.is_empty() {
        return;
    }
    let claims_of = |series: &Series| {
        s.measures.iter().find(|m| m.name == series.measure).map_or(&[][..], |m| &m.claims[..])
    };
    let extent_of = |x: &Series| {
        let claimed: Vec<f64> = claims_of(x).iter().map(|c| claimed(x.unit, c)).collect();
        extent(x.unit, &x.points, &claimed)
    };
    o.push_str("<div class=\"charts\">");
    for series in &s.series {
        let same: Vec<(f64, f64)> =
            s.series.iter().filter(|x| x.unit == series.unit).map(extent_of).collect();
        let axis = window(series.unit, &scale(series.unit, &same), extent_of(series));
        chart(o, series, claims_of(series), axis);
    }
    o.push_str("</div>");
}

/// A value in the units the chart shows: percent for a proportion.
fn shown(unit: Unit, v: f64) -> f64 {
    if unit == Unit::Proportion { v * 100.0 } else { v }
}

/// A claimed number in the units the chart shows.
fn claimed(unit: Unit, c: &Comparison) -> f64 {
    if unit == Unit::Proportion && !c.percent { c.claimed.value * 100.0 } else { c.claimed.value }
}

/// A value in words, as the details table writes it: `44.32%`, or `86.5012`.
fn word(unit: Unit, v: f64) -> String {
    if unit == Unit::Proportion { format!("{:.2}%", v * 100.0) } else { format!("{v:.4}") }
}

/// `s` cut to `max` characters with an ellipsis.
/// `label`'s words in lines that fit the room right of the plot (a word longer than a line
/// keeps a line of its own).
fn wrap(label: &str) -> Vec<String> {
    let room = ((RIGHT - 8.0) / BOLD_CHAR_WIDTH).floor() as usize;
    let mut lines: Vec<String> = Vec::new();
    for word in label.split(' ') {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= room => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

fn short(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((end, _)) => format!("{}…", &s[..end]),
    }
}

/// Round ticks for `[lo, hi]`: the first, the last, the step and the decimals to write them with.
fn ticks(lo: f64, hi: f64) -> (f64, f64, f64, usize) {
    let raw = (hi - lo) / 4.0;
    let exp = raw.log10().floor();
    let mag = 10f64.powf(exp);
    // A hair over a round ratio (0.2 / 0.1) is that ratio.
    let (nice, extra) = match raw / mag - 1e-9 {
        f if f <= 1.0 => (1.0, 0),
        f if f <= 2.0 => (2.0, 0),
        f if f <= 2.5 => (2.5, usize::from(exp <= 0.0)),
        f if f <= 5.0 => (5.0, 0),
        _ => (10.0, 0),
    };
    let step = nice * mag;
    let decimals = (-exp).max(0.0) as usize + extra;
    ((lo / step).floor() * step, (hi / step).ceil() * step, step, decimals)
}

/// A chart's own values in the units it shows: the lowest and highest of every value,
/// interval end and claimed value (`(0, 0)` when it has none).
fn extent(unit: Unit, points: &[SeriesPoint], claimed: &[f64]) -> (f64, f64) {
    let all = points
        .iter()
        .flat_map(|p| [p.value, p.ci_low, p.ci_high])
        .flatten()
        .map(|v| shown(unit, v))
        .chain(claimed.iter().copied())
        .filter(|v| v.is_finite());
    all.fold(None, |r: Option<(f64, f64)>, v| Some(r.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v)))))
        .unwrap_or((0.0, 0.0))
}

/// The scale the charts of one unit in a panel share: ticks of `step` (written with `decimals`),
/// `steps` of them from each chart's lowest tick to its highest. Chosen from the panel's own
/// values (the step from the widest chart's width, every chart's values padded by a tenth of
/// it), so a 44% vs 47% dispute is a visible gap rather than a hair on a 0-100% axis. Where every chart of the unit is flat, a
/// proportion is drawn on the whole 0-100% scale (a 100% line as such, not zoomed into noise)
/// and another unit's value within 5% of itself.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Scale {
    step: f64,
    steps: usize,
    decimals: usize,
    /// The padding each chart's values get above and below before its ticks are chosen.
    pad: f64,
}

/// The share of the widest chart's width added above and below every chart's values.
const PAD: f64 = 0.1;

fn scale(unit: Unit, extents: &[(f64, f64)]) -> Scale {
    let widest = extents.iter().map(|(lo, hi)| hi - lo).fold(0.0, f64::max);
    if widest < 1e-9 {
        let (lo, hi) = match unit {
            Unit::Proportion => (0.0, 100.0),
            _ => {
                let big = extents.iter().map(|(lo, _)| lo.abs()).fold(0.0, f64::max);
                let pad = (big * 0.05).max(1.0);
                (-pad, pad)
            }
        };
        let (lo, hi, step, decimals) = ticks(lo, hi);
        return Scale { step, steps: ((hi - lo) / step).round() as usize, decimals, pad: 0.0 };
    }
    // The step from the values' own width (round ticks: 2 points, not 2.5), the padding only
    // in where each chart's ticks start and end.
    let pad = widest * PAD;
    let (_, _, mut step, mut decimals) = ticks(0.0, widest);
    if unit == Unit::Proportion && step > 25.0 {
        // Ticks that divide 0-100%: a share's axis never runs past either end.
        (step, decimals) = (25.0, 0);
    }
    let steps = extents
        .iter()
        .map(|&e| {
            let (lo, hi) = rounded(unit, e, pad, step);
            ((hi - lo) / step).round() as usize
        })
        .max()
        .unwrap_or(1)
        .max(1);
    Scale { step, steps, decimals, pad }
}

/// A chart's values, padded, widened to the scale's ticks (a proportion's kept within 0-100%).
fn rounded(unit: Unit, (lo, hi): (f64, f64), pad: f64, step: f64) -> (f64, f64) {
    let (lo, hi) = (((lo - pad) / step).floor() * step, ((hi + pad) / step).ceil() * step);
    if unit == Unit::Proportion { (lo.max(0.0), hi.min(100.0)) } else { (lo, hi) }
}

/// One chart's y axis on the panel's scale: `steps` ticks around its own values (the spare ones
/// shared above and below), a proportion's within 0-100%. The lowest and highest ticks, the
/// step and the decimals.
fn window(unit: Unit, scale: &Scale, own: (f64, f64)) -> (f64, f64, f64, usize) {
    let Scale { step, steps, decimals, pad } = *scale;
    let span = steps as f64 * step;
    let mut lo = if pad > 0.0 {
        let (lo, hi) = rounded(unit, own, pad, step);
        let spare = steps.saturating_sub(((hi - lo) / step).round() as usize);
        lo - (spare / 2) as f64 * step
    } else if unit == Unit::Proportion {
        0.0
    } else {
        // Every chart of the unit flat: each centred on its value.
        ((own.0 / step).round() - (steps / 2) as f64) * step
    };
    if unit == Unit::Proportion {
        if lo + span > 100.0 {
            lo = 100.0 - span;
        }
        lo = lo.max(0.0);
    }
    (lo, lo + span, step, decimals)
}

fn chart(o: &mut String, series: &Series, claims: &[Comparison], axis_range: (f64, f64, f64, usize)) {
    let unit = series.unit;
    let points = &series.points;
    let n = points.len().max(1);
    let claimed_at: Vec<f64> = claims.iter().map(|c| claimed(unit, c)).collect();
    let (lo, hi, step, decimals) = axis_range;
    let labels: Vec<String> = points
        .iter()
        .map(|p| {
            let name = short(&p.period, LABEL_CHARS);
            if p.cited { format!("{name} (cited)") } else { name }
        })
        .collect();
    let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64 * CHAR_WIDTH;
    let slanted = widest > (WIDTH - LEFT - RIGHT) / n as f64 - 4.0;
    // A label set at −35° reaches down sin 35° of its length and left cos 35° of it: the first
    // one must not run off the drawing.
    let left =
        if slanted { LEFT.max(widest * 0.82 + 8.0 - (WIDTH - LEFT - RIGHT) / n as f64 / 2.0) } else { LEFT };
    let bottom = if slanted { 26.0 + widest * 0.574 } else { 34.0 };
    let plot_w = WIDTH - left - RIGHT;
    let slot = plot_w / n as f64;
    let x = |i: usize| left + (i as f64 + 0.5) * slot;
    let y = |v: f64| TOP + (hi - v.clamp(lo, hi)) / (hi - lo) * PLOT;
    let height = (TOP + PLOT + bottom).ceil();
    let cited = points.iter().find(|p| p.cited);
    let cited_name = cited.map_or("", |p| p.period.as_str());
    let axis = |v: f64| {
        if unit == Unit::Proportion { format!("{v:.decimals$}%") } else { format!("{v:.decimals$}") }
    };

    // The words: a title naming what is drawn, a description giving every value.
    let claims_words: Vec<String> = claims.iter().map(|c| c.claimed.text.clone()).collect();
    let claimed_words = if claims_words.is_empty() {
        String::new()
    } else {
        format!("claimed {} on {cited_name}", claims_words.join(", "))
    };
    let title = format!(
        "{}{}{claimed_words}; each period of the study, with its 95% interval",
        series.measure,
        if claimed_words.is_empty() { "" } else { ": " }
    );
    let mut desc = format!("{} periods, in the study's order. ", points.len());
    let each: Vec<String> = points
        .iter()
        .map(|p| {
            let what = if p.cited { ", the cited period," } else { "" };
            match (p.value, p.ci_low, p.ci_high) {
                (Some(v), Some(l), Some(h)) => format!(
                    "{}{what} {} (95% interval {} to {}{})",
                    p.period,
                    word(unit, v),
                    word(unit, l),
                    word(unit, h),
                    p.n.map(|n| format!(", base n {n}")).unwrap_or_default()
                ),
                _ => format!(
                    "{}{what} no estimate ({})",
                    p.period,
                    p.reason.as_deref().unwrap_or("not computed")
                ),
            }
        })
        .collect();
    desc.push_str(&each.join("; "));
    desc.push('.');
    for c in claims {
        let _ = write!(desc, " Claimed: {} on {cited_name}.", c.claimed.text);
    }

    // The visible title: the measure, and what was claimed of it.
    let _ = write!(
        o,
        "<div class=\"chart\"><p class=\"chart-title\"><span class=\"chart-measure\">{}</span>",
        text(&series.measure)
    );
    if !claims_words.is_empty() {
        let _ = write!(o, " <span class=\"muted\">claimed {}</span>", text(&claims_words.join(", ")));
    }
    o.push_str("</p>");
    let _ = write!(
        o,
        "<svg class=\"chart-svg\" role=\"img\" viewBox=\"0 0 {WIDTH:.0} {height:.0}\" \
width=\"{WIDTH:.0}\" height=\"{height:.0}\" font-family=\"system-ui, sans-serif\" font-size=\"11\" fill=\"{INK}\">\
<title>{}</title><desc>{}</desc>",
        text(&title),
        text(&desc)
    );

    // The y axis: a grid line and a label at each tick.
    o.push_str("<g class=\"chart-axis\">");
    let count = (((hi - lo) / step).round() as usize).min(20);
    for k in 0..=count {
        let v = lo + k as f64 * step;
        if v > hi + step * 1e-6 {
            break;
        }
        let yy = y(v);
        let _ = write!(
            o,
            "<line x1=\"{left:.1}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" stroke=\"{GRID}\" stroke-width=\"1\"></line>\
<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left + plot_w,
            left - 6.0,
            yy + 4.0,
            text(&axis(v))
        );
    }
    let _ = write!(
        o,
        "<line x1=\"{left:.1}\" y1=\"{TOP:.1}\" x2=\"{left:.1}\" y2=\"{:.1}\" stroke=\"{INK}\" stroke-width=\"1\"></line></g>",
        TOP + PLOT
    );

    // The periods: a label under each point, the cited one bold.
    o.push_str("<g class=\"chart-periods\">");
    for (i, (p, label)) in points.iter().zip(&labels).enumerate() {
        let (xx, yy) = (x(i), TOP + PLOT + 16.0);
        let weight = if p.cited { " font-weight=\"700\"" } else { "" };
        if slanted {
            let _ = write!(
                o,
                "<text x=\"{xx:.1}\" y=\"{yy:.1}\" text-anchor=\"end\" transform=\"rotate(-35 {xx:.1} {yy:.1})\"{weight}>{}</text>",
                text(label)
            );
        } else {
            let _ = write!(
                o,
                "<text x=\"{xx:.1}\" y=\"{yy:.1}\" text-anchor=\"middle\"{weight}>{}</text>",
                text(label)
            );
        }
    }
    o.push_str("</g>");

    // The claimed value: a dashed line across, its label at the right, a diamond on the cited
    // period.
    let cited_i = points.iter().position(|p| p.cited);
    for (c, v) in claims.iter().zip(&claimed_at) {
        let yy = y(*v);
        let mut label = format!("claimed {}", short(&c.claimed.text, CLAIM_CHARS));
        // A share claimed as a fraction, on an axis in percent: said in both.
        if unit == Unit::Proportion && !c.percent {
            let d = (c.claimed.decimals - 2).clamp(0, 8) as usize;
            let _ = write!(label, " ({v:.d$}%)");
        }
        // One line when it fits (the usual "claimed 44%"), else lines centred on the dashes.
        let lines = wrap(&label);
        let lx = left + plot_w + 6.0;
        let _ = write!(
            o,
            "<g class=\"chart-claimed\"><line x1=\"{left:.1}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" stroke=\"{CLAIM}\" \
stroke-width=\"1.5\" stroke-dasharray=\"6 4\"></line><text x=\"{lx:.1}\" y=\"{:.1}\" fill=\"{CLAIM}\" font-weight=\"700\">",
            left + plot_w,
            yy + 4.0 - (lines.len() - 1) as f64 * LINE / 2.0,
        );
        match lines.as_slice() {
            [one] => o.push_str(&text(one)),
            _ => {
                for (i, line) in lines.iter().enumerate() {
                    let dy = if i == 0 { 0.0 } else { LINE };
                    let _ = write!(o, "<tspan x=\"{lx:.1}\" dy=\"{dy:.0}\">{}</tspan>", text(line));
                }
            }
        }
        o.push_str("</text>");
        if let Some(i) = cited_i {
            let (xx, d) = (x(i), 7.0);
            let _ = write!(
                o,
                "<polygon points=\"{:.1},{yy:.1} {xx:.1},{:.1} {:.1},{yy:.1} {xx:.1},{:.1}\" fill=\"none\" stroke=\"{CLAIM}\" stroke-width=\"2\"></polygon>",
                xx - d,
                yy - d,
                xx + d,
                yy + d
            );
        }
        o.push_str("</g>");
    }

    // The points: the interval as whiskers, the value as a circle (the cited period's a filled
    // square, heavier); a period without an estimate says so where its point would be.
    o.push_str("<g class=\"chart-points\">");
    for (i, p) in points.iter().enumerate() {
        let xx = x(i);
        let (Some(v), Some(l), Some(h)) = (p.value, p.ci_low, p.ci_high) else {
            let _ = write!(
                o,
                "<text x=\"{xx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-style=\"italic\">none</text>",
                TOP + PLOT - 4.0
            );
            continue;
        };
        let (yv, yl, yh) = (y(shown(unit, v)), y(shown(unit, l)), y(shown(unit, h)));
        let (w, cap) = if p.cited { (2.5, 6.0) } else { (1.2, 4.0) };
        let _ = write!(
            o,
            "<line x1=\"{xx:.1}\" y1=\"{yl:.1}\" x2=\"{xx:.1}\" y2=\"{yh:.1}\" stroke=\"{INK}\" stroke-width=\"{w}\"></line>\
<line x1=\"{:.1}\" y1=\"{yl:.1}\" x2=\"{:.1}\" y2=\"{yl:.1}\" stroke=\"{INK}\" stroke-width=\"{w}\"></line>\
<line x1=\"{:.1}\" y1=\"{yh:.1}\" x2=\"{:.1}\" y2=\"{yh:.1}\" stroke=\"{INK}\" stroke-width=\"{w}\"></line>",
            xx - cap,
            xx + cap,
            xx - cap,
            xx + cap
        );
        if p.cited {
            let _ = write!(
                o,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"9\" height=\"9\" fill=\"{INK}\"></rect>",
                xx - 4.5,
                yv - 4.5
            );
        } else {
            let _ = write!(
                o,
                "<circle cx=\"{xx:.1}\" cy=\"{yv:.1}\" r=\"3.5\" fill=\"#fff\" stroke=\"{INK}\" stroke-width=\"1.5\"></circle>"
            );
        }
    }
    o.push_str("</g></svg>");

    // The same values as a table, for a screen reader (and a copy and paste).
    let _ = write!(
        o,
        "<table class=\"sr-only\"><caption>{}</caption><tr><th>period</th><th>{}</th><th>95% CI</th><th>base n</th><th>note</th></tr>",
        text(&title),
        text(&series.measure)
    );
    for p in points {
        let (val, ci) = match (p.value, p.ci_low, p.ci_high) {
            (Some(v), Some(l), Some(h)) => (word(unit, v), format!("[{}, {}]", word(unit, l), word(unit, h))),
            _ => ("—".to_string(), String::new()),
        };
        let mut note = Vec::new();
        if p.cited {
            note.push("cited period".to_string());
            note.extend(claims_words.iter().map(|c| format!("claimed {c}")));
        }
        note.extend(p.reason.iter().cloned());
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{val}</td><td>{ci}</td><td>{}</td><td>{}</td></tr>",
            text(&p.period),
            p.n.map(|n| n.to_string()).unwrap_or_default(),
            text(&note.join("; "))
        );
    }
    o.push_str("</table></div>");
}

#[cfg(test)]
mod tests {
    use super::{Unit, scale, ticks, window};

    fn near(got: (f64, f64, f64, usize), want: (f64, f64, f64, usize)) {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(
            close(got.0, want.0) && close(got.1, want.1) && close(got.2, want.2) && got.3 == want.3,
            "{got:?}"
        );
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        // 41.2%–47.9%: steps of 2pp from 40% to 48%.
        near(ticks(41.2, 47.9), (40.0, 48.0, 2.0, 0));
        // A narrow range: steps of 0.2 with one decimal (0.2 / 0.1 is 2, not a hair over).
        near(ticks(10.1, 10.9), (10.0, 11.0, 0.2, 1));
        // Steps of 2.5 take one more decimal; of 25, none.
        near(ticks(0.0, 9.0), (0.0, 10.0, 2.5, 1));
        near(ticks(0.0, 90.0), (0.0, 100.0, 25.0, 0));
        // Values in the thousands.
        near(ticks(1200.0, 4100.0), (1000.0, 5000.0, 1000.0, 0));
    }

    /// The funnel of the bundled W6 claim, each measure's extent across the eight waves (values,
    /// intervals and the claimed value, in percent), as its panel draws them.
    const FUNNEL: [(f64, f64); 5] = [(100.0, 100.0), (68.9, 75.7), (40.5, 48.4), (24.8, 32.2), (11.4, 17.1)];

    #[test]
    fn a_panel_shares_one_scale_and_each_chart_starts_where_its_values_are() {
        let s = scale(Unit::Proportion, &FUNNEL);
        let axes: Vec<_> = FUNNEL.iter().map(|&e| window(Unit::Proportion, &s, e)).collect();
        for (&(lo, hi), &(a, b, step, _)) in FUNNEL.iter().zip(&axes) {
            // The same height of values in every chart, each holding its own values.
            assert!((b - a - s.steps as f64 * s.step).abs() < 1e-9 && step == s.step, "{axes:?}");
            assert!(a <= lo && hi <= b && a >= 0.0 && b <= 100.0, "{lo}-{hi} in {a}-{b}");
            // Ticks on round values.
            assert!((a / step - (a / step).round()).abs() < 1e-9, "{a} by {step}");
        }
        // Considered: W5's 46.7% and W6's 44.2% are a fifth of the plot apart, not 2.5% of it.
        let (a, b, ..) = axes[2];
        assert!(2.5 / (b - a) > 0.15, "{a}-{b}");
        // Aware, 100% each wave: a line at the top of the axis, at 100%.
        assert_eq!(axes[0].1, 100.0);
    }

    #[test]
    fn a_flat_share_alone_is_drawn_on_the_whole_scale() {
        let s = scale(Unit::Proportion, &[(100.0, 100.0)]);
        near(window(Unit::Proportion, &s, (100.0, 100.0)), (0.0, 100.0, 25.0, 0));
        // A flat value of another unit is centred on itself.
        let s = scale(Unit::Value, &[(5.0, 5.0)]);
        let (lo, hi, ..) = window(Unit::Value, &s, (5.0, 5.0));
        assert!(lo < 5.0 && 5.0 < hi && hi - lo <= 4.0, "{lo}-{hi}");
    }
}
