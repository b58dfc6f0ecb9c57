//! The report's pictures, drawn by `plotters` into SVG text (no fonts
//! needed: its SVG backend writes `<text>` elements the browser sets).

use crate::time::format_ns;
use plotters::prelude::*;
pub use plotters::style::RGBColor;

/// Colours of the series, in order.
pub const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(23, 190, 207),
];
/// Damage.
pub const RED: RGBColor = RGBColor(214, 39, 40);
/// Quiet gaps.
pub const AMBER: RGBColor = RGBColor(255, 170, 0);
/// Id and sequence gaps.
pub const PURPLE: RGBColor = RGBColor(170, 0, 170);

/// A time axis: seconds from `origin` (ns) shown as UTC clock times.
#[derive(Clone, Copy, Debug)]
pub struct TimeAxis {
    /// ns at x = 0.
    pub origin: i64,
    /// Seconds the axis spans.
    pub span_s: f64,
}

impl TimeAxis {
    /// `x` as a clock time (with ms on short spans).
    pub fn label(&self, x: f64) -> String {
        let t = format_ns(self.origin + (x * 1e9) as i64);
        let end = if self.span_s < 30.0 { 23 } else { 19 };
        t.get(11..end).unwrap_or(&t).to_string()
    }

    /// ns as x.
    pub fn x(&self, ns: i64) -> f64 {
        (ns - self.origin) as f64 / 1e9
    }

    fn range(&self) -> std::ops::Range<f64> {
        0.0..self.span_s.max(1e-3)
    }
}

/// One line of a line chart.
pub struct Line<'a> {
    /// Its legend.
    pub name: String,
    /// Points (x seconds, y); NaN y values are left out.
    pub points: &'a [(f64, f64)],
}

fn err(e: impl std::fmt::Display) -> String {
    format!(
        "<p class=\"err\">chart not drawn: {}</p>",
        super::html::escape(&e.to_string())
    )
}

/// A line chart of `lines` over `axis`, `w` by `h` pixels.
pub fn lines(
    title: &str,
    y_desc: &str,
    axis: TimeAxis,
    lines: &[Line<'_>],
    size: (u32, u32),
) -> String {
    let mut svg = String::new();
    let r = draw_lines(&mut svg, title, y_desc, axis, lines, size);
    match r {
        Ok(()) => svg,
        Err(e) => err(e),
    }
}

fn y_range(lines: &[Line<'_>]) -> (f64, f64) {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for p in lines
        .iter()
        .flat_map(|l| l.points.iter())
        .filter(|p| p.1.is_finite())
    {
        lo = lo.min(p.1);
        hi = hi.max(p.1);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(hi.abs() * 1e-6).max(1e-9);
    (lo - pad, hi + pad)
}

fn draw_lines(
    svg: &mut String,
    title: &str,
    y_desc: &str,
    axis: TimeAxis,
    lines: &[Line<'_>],
    size: (u32, u32),
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(svg, size).into_drawing_area();
    root.fill(&WHITE)?;
    let (lo, hi) = y_range(lines);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 15))
        .margin(6)
        .x_label_area_size(28)
        .y_label_area_size(70)
        .build_cartesian_2d(axis.range(), lo..hi)?;
    chart
        .configure_mesh()
        .x_labels(6)
        .y_labels(5)
        .x_label_formatter(&|x| axis.label(*x))
        .y_label_formatter(&|y| short_number(*y))
        .y_desc(y_desc)
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for (i, l) in lines.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        // NaN points split the line: a bucket without data is not drawn.
        let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for &p in l.points {
            if p.1.is_finite() {
                if let Some(r) = runs.last_mut() {
                    r.push(p);
                }
            } else if runs.last().is_some_and(|r| !r.is_empty()) {
                runs.push(Vec::new());
            }
        }
        let mut first = true;
        for r in runs.into_iter().filter(|r| !r.is_empty()) {
            let s = chart.draw_series(LineSeries::new(r, c.stroke_width(2)))?;
            if std::mem::take(&mut first) {
                s.label(l.name.as_str()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2))
                });
            }
        }
    }
    if lines.len() > 1 || lines.iter().any(|l| !l.name.is_empty()) {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// A span on a timeline row.
pub struct Span {
    /// Row.
    pub row: usize,
    /// Start and end, ns.
    pub from: i64,
    /// End, ns.
    pub to: i64,
    /// Fill.
    pub color: RGBColor,
}

/// Rows of spans over time (segments per series, gaps), `rows` named.
pub fn timeline(
    title: &str,
    axis: TimeAxis,
    rows: &[String],
    spans: &[Span],
    size: (u32, u32),
) -> String {
    let mut svg = String::new();
    match draw_timeline(&mut svg, title, axis, rows, spans, size) {
        Ok(()) => svg,
        Err(e) => err(e),
    }
}

fn draw_timeline(
    svg: &mut String,
    title: &str,
    axis: TimeAxis,
    rows: &[String],
    spans: &[Span],
    size: (u32, u32),
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(svg, size).into_drawing_area();
    root.fill(&WHITE)?;
    let n = rows.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 15))
        .margin(6)
        .x_label_area_size(28)
        .y_label_area_size(110)
        .build_cartesian_2d(axis.range(), -0.5..n - 0.5)?;
    chart
        .configure_mesh()
        .x_labels(6)
        .y_labels(rows.len().max(1) + 1)
        .x_label_formatter(&|x| axis.label(*x))
        .y_label_formatter(&|y| {
            // Rows sit on whole numbers; other ticks stay blank.
            let i = y.round();
            if (y - i).abs() < 1e-6 && i >= 0.0 {
                rows.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .disable_y_mesh()
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    // Very short spans are widened to a visible sliver.
    let min_w = axis.span_s / 600.0;
    chart.draw_series(spans.iter().map(|s| {
        let x0 = axis.x(s.from);
        let x1 = axis.x(s.to).max(x0 + min_w);
        let y = s.row as f64;
        Rectangle::new([(x0, y - 0.35), (x1, y + 0.35)], s.color.mix(0.85).filled())
    }))?;
    root.present()?;
    Ok(())
}

/// A number in few characters: 1.2k, 3.4M, 0.0012.
pub fn short_number(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if a == 0.0 {
        "0".to_string()
    } else if a >= 10.0 {
        // Prices move in cents: keep them apart on a narrow axis.
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}
