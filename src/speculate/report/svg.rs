//! `--plot OUT.svg`: measured and predicted speedup against draft length, one colour per
//! strategy, with the break-even line (speedup 1). Hand-written SVG: no plotting dependency,
//! and the file is small, text, and diffable.

use std::fmt::Write as _;
use std::path::Path;

use super::{KSetting, Report, ReportError, Run, write_atomic};
use crate::speculate::spread::Verdict;
use crate::speculate::strategy::Strategy;

const W: f64 = 760.0;
const H: f64 = 460.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 200.0;
const TOP: f64 = 72.0;
const BOTTOM: f64 = 64.0;

fn colour(s: Strategy) -> &'static str {
    match s {
        Strategy::None => "#7f7f7f",
        Strategy::Naive => "#d95f02",
        Strategy::Context => "#1b9e77",
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Nice tick step for a range.
fn step(range: f64) -> f64 {
    let raw = range / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(raw)
}

pub fn to_string(r: &Report) -> String {
    // x positions: fixed k values in order, then "auto" one step to the right.
    let mut ks: Vec<usize> =
        r.runs.iter().filter_map(|x| if let KSetting::Fixed(k) = x.k { Some(k) } else { None }).collect();
    ks.sort();
    ks.dedup();
    let has_auto = r.runs.iter().any(|x| x.k == KSetting::Auto);
    let max_k = ks.last().copied().unwrap_or(1).max(1);
    let x_auto = max_k as f64 + 1.0;
    let x_max = if has_auto { x_auto } else { max_k as f64 } + 0.5;
    let x_min = 0.5f64.min(ks.first().map_or(0.5, |&k| k as f64 - 0.5));
    let ys = r
        .runs
        .iter()
        .flat_map(|x| [x.speedup, x.predicted_speedup, x.speedup_ci.map(|c| c.high)])
        .flatten()
        .filter(|v| v.is_finite());
    let y_top = ys.fold(1.2f64, f64::max) * 1.1;
    let px = |x: f64| LEFT + (x - x_min) / (x_max - x_min) * (W - LEFT - RIGHT);
    let py = |y: f64| TOP + (1.0 - y / y_top) * (H - TOP - BOTTOM);
    let xk = |run: &Run| match run.k {
        KSetting::Fixed(k) => k as f64,
        KSetting::Auto => x_auto,
    };

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" font-size="15" font-weight="bold">Speedup against draft length</text>"#,
        LEFT
    );
    let _ = writeln!(
        s,
        r##"<text x="{}" y="40" fill="#444">target {}</text>
<text x="{}" y="56" fill="#444">draft {} · verify {} · {} prompts</text>"##,
        LEFT,
        esc(&r.target),
        LEFT,
        esc(r.draft.as_deref().unwrap_or("none")),
        r.settings.verify.name(),
        r.settings.prompts
    );
    // Grid and y ticks.
    let dy = step(y_top);
    let mut y = 0.0;
    while y <= y_top + 1e-9 {
        let _ = writeln!(
            s,
            r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#e5e5e5"/>"##,
            px(x_min),
            py(y),
            px(x_max),
            py(y)
        );
        let _ =
            writeln!(s, r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{:.2}</text>"#, px(x_min) - 6.0, py(y) + 4.0, y);
        y += dy;
    }
    // Axes.
    let _ = writeln!(
        s,
        r##"<line x1="{0:.1}" y1="{1:.1}" x2="{2:.1}" y2="{1:.1}" stroke="#333"/>"##,
        px(x_min),
        py(0.0),
        px(x_max)
    );
    let _ = writeln!(
        s,
        r##"<line x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="#333"/>"##,
        px(x_min),
        py(0.0),
        py(y_top)
    );
    for &k in &ks {
        let _ =
            writeln!(s, r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{k}</text>"#, px(k as f64), py(0.0) + 18.0);
    }
    if has_auto {
        let _ =
            writeln!(s, r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">auto</text>"#, px(x_auto), py(0.0) + 18.0);
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">draft length k</text>"#,
        (px(x_min) + px(x_max)) / 2.0,
        H - 18.0
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">speedup over the target alone</text>"#,
        (TOP + H - BOTTOM) / 2.0,
        (TOP + H - BOTTOM) / 2.0
    );
    // Break-even line.
    let _ = writeln!(
        s,
        r##"<line x1="{0:.1}" y1="{1:.1}" x2="{2:.1}" y2="{1:.1}" stroke="#c00" stroke-width="1.5" stroke-dasharray="2 3"/>"##,
        px(x_min),
        py(1.0),
        px(x_max)
    );
    let _ = writeln!(
        s,
        r##"<text x="{:.1}" y="{:.1}" fill="#c00">break-even (speedup 1)</text>"##,
        px(x_min) + 4.0,
        py(1.0) + 14.0
    );

    // Series per strategy: measured (solid, dots) and predicted (dashed, squares), fixed k
    // joined by lines; auto as lone markers.
    let mut legend = Vec::new();
    let mut strategies: Vec<Strategy> = r.runs.iter().map(|x| x.strategy).collect();
    strategies.sort();
    strategies.dedup();
    for st in strategies {
        let c = colour(st);
        let mut runs: Vec<&Run> = r.runs.iter().filter(|x| x.strategy == st).collect();
        runs.sort_by(|a, b| xk(a).total_cmp(&xk(b)));
        for (field, dash) in [(0, ""), (1, r#" stroke-dasharray="6 4""#)] {
            let pts: Vec<(f64, f64)> = runs
                .iter()
                .filter(|x| x.k != KSetting::Auto)
                .filter_map(|x| Some((xk(x), if field == 0 { x.speedup? } else { x.predicted_speedup? })))
                .collect();
            if pts.len() > 1 {
                let d: Vec<String> = pts.iter().map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y))).collect();
                let _ = writeln!(
                    s,
                    r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2"{dash}/>"#,
                    d.join(" ")
                );
            }
        }
        for x in &runs {
            if let Some(ci) = x.speedup_ci {
                // The 95% interval as a bar with caps.
                let (cx, lo, hi) = (px(xk(x)), py(ci.low), py(ci.high));
                let _ = writeln!(
                    s,
                    r#"<path d="M{:.1},{lo:.1}V{hi:.1}M{:.1},{lo:.1}H{:.1}M{:.1},{hi:.1}H{:.1}" stroke="{c}" stroke-width="1.2" fill="none"/>"#,
                    cx,
                    cx - 3.0,
                    cx + 3.0,
                    cx - 3.0,
                    cx + 3.0
                );
            }
            if let Some(v) = x.speedup {
                // Hollow: no measurable difference from the target alone (the interval holds 1).
                let same = x.speedup_verdict == Some(Verdict::NoMeasurableDifference);
                let ci = x.speedup_ci.map_or(String::new(), |ci| {
                    format!(" [{:.2}, {:.2}], {}", ci.low, ci.high, x.speedup_verdict.map_or("", Verdict::name))
                });
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{}" stroke="{c}" stroke-width="1.5"><title>{} measured {:.2}x{ci}, acceptance {}</title></circle>"#,
                    px(xk(x)),
                    py(v),
                    if same { "white" } else { c },
                    esc(&x.label()),
                    v,
                    super::pct(x.acceptance_rate)
                );
                if let Some(a) = x.acceptance_rate {
                    let _ = writeln!(
                        s,
                        r#"<text x="{:.1}" y="{:.1}" fill="{c}" font-size="10" text-anchor="middle">{:.0}%</text>"#,
                        px(xk(x)),
                        py(v) - 8.0,
                        100.0 * a
                    );
                }
            }
            if let Some(v) = x.predicted_speedup {
                let _ = writeln!(
                    s,
                    r#"<rect x="{:.1}" y="{:.1}" width="7" height="7" fill="white" stroke="{c}" stroke-width="1.5"><title>{} predicted {:.2}x</title></rect>"#,
                    px(xk(x)) - 3.5,
                    py(v) - 3.5,
                    esc(&x.label()),
                    v
                );
            }
        }
        legend.push((st, c));
    }
    // Legend.
    let lx = W - RIGHT + 20.0;
    let mut ly = TOP + 10.0;
    for (st, c) in legend {
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{c}" stroke-width="2"/><circle cx="{}" cy="{ly}" r="4" fill="{c}"/>"#,
            lx + 24.0,
            lx + 12.0
        );
        let _ = writeln!(s, r#"<text x="{}" y="{}">{} measured</text>"#, lx + 30.0, ly + 4.0, st);
        ly += 18.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{c}" stroke-width="2" stroke-dasharray="6 4"/><rect x="{}" y="{}" width="7" height="7" fill="white" stroke="{c}" stroke-width="1.5"/>"#,
            lx + 24.0,
            lx + 8.5,
            ly - 3.5
        );
        let _ = writeln!(s, r#"<text x="{}" y="{}">{} predicted</text>"#, lx + 30.0, ly + 4.0, st);
        ly += 24.0;
    }
    let _ = writeln!(s, r##"<text x="{lx}" y="{}" fill="#444" font-size="10">labels: acceptance</text>"##, ly + 4.0);
    let _ = writeln!(s, r##"<text x="{lx}" y="{}" fill="#444" font-size="10">(target tokens)</text>"##, ly + 18.0);
    let _ =
        writeln!(s, r##"<text x="{lx}" y="{}" fill="#444" font-size="10">predicted: Leviathan,</text>"##, ly + 36.0);
    let _ = writeln!(s, r##"<text x="{lx}" y="{}" fill="#444" font-size="10">measured α̂ and c</text>"##, ly + 50.0);
    let _ =
        writeln!(s, r##"<text x="{lx}" y="{}" fill="#444" font-size="10">bars: 95% interval over</text>"##, ly + 68.0);
    let _ =
        writeln!(s, r##"<text x="{lx}" y="{}" fill="#444" font-size="10">prompts; hollow dot: no</text>"##, ly + 82.0);
    let _ =
        writeln!(s, r##"<text x="{lx}" y="{}" fill="#444" font-size="10">measurable difference</text>"##, ly + 96.0);
    s.push_str("</svg>\n");
    s
}

pub fn write(r: &Report, path: &Path) -> Result<(), ReportError> {
    write_atomic(path, to_string(r).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speculate::report::sample::sample;

    /// Tags nest and close properly (a small checker instead of an XML dependency).
    fn assert_well_formed(svg: &str) {
        let mut stack = Vec::new();
        let mut rest = svg;
        while let Some(i) = rest.find('<') {
            let j = rest[i..].find('>').expect("tag closes") + i;
            let tag = &rest[i + 1..j];
            let name = |t: &str| t.split_whitespace().next().unwrap_or("").trim_end_matches('/').to_string();
            if let Some(closing) = tag.strip_prefix('/') {
                assert_eq!(stack.pop().as_deref(), Some(closing), "mismatched </{closing}>");
            } else if !tag.ends_with('/') {
                stack.push(name(tag));
            }
            rest = &rest[j + 1..];
        }
        assert!(stack.is_empty(), "unclosed: {stack:?}");
    }

    #[test]
    fn svg_is_well_formed_and_has_a_point_per_run() {
        let r = sample();
        let svg = to_string(r);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_well_formed(&svg);
        let measured = r.runs.iter().filter(|x| x.speedup.is_some()).count();
        let predicted = r.runs.iter().filter(|x| x.predicted_speedup.is_some()).count();
        let strategies = 3;
        assert_eq!(svg.matches("<circle cx").count(), measured + strategies, "one dot per run plus the legend");
        assert_eq!(svg.matches("<rect x").count(), predicted + strategies);
        assert!(svg.contains("break-even (speedup 1)") && svg.contains(">auto<"));
        let bars = r.runs.iter().filter(|x| x.speedup_ci.is_some()).count();
        assert!(bars > 0);
        assert_eq!(svg.matches("<path d=\"M").count(), bars, "one interval bar per run with an interval");
        let hollow = r.runs.iter().filter(|x| x.speedup_verdict == Some(Verdict::NoMeasurableDifference)).count();
        assert_eq!(svg.matches(r#"r="4" fill="white""#).count(), hollow);
    }

    #[test]
    fn sample_plot_file() {
        // Written where a developer can look at it (render with rsvg-convert).
        let p = std::env::temp_dir().join("reseam-speculate-sample.svg");
        write(sample(), &p).unwrap();
        assert!(std::fs::metadata(&p).unwrap().len() > 1000);
    }

    #[test]
    fn labels_are_escaped() {
        let mut r = sample().clone();
        r.target = "a<b&c".into();
        assert!(to_string(&r).contains("a&lt;b&amp;c"));
    }
}
