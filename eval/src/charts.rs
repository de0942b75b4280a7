//! SVG charts drawn with `plotters` (its SVG backend; text is left to the browser).

use plotters::prelude::*;

use crate::bootstrap::Estimate;
use crate::report::{AgentSummary, ArcReport, GradeReport};

const W: u32 = 720;
const H: u32 = 360;

fn pct(v: Option<f64>) -> f64 {
    v.unwrap_or(0.0) * 100.0
}

/// Tableau's ten categorical colours (distinguishable, readable on white).
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

pub(crate) fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

pub(crate) type Res = Result<String, String>;
pub(crate) type Area<'b> = DrawingArea<SVGBackend<'b>, plotters::coord::Shift>;
pub(crate) type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    plotters::coord::cartesian::Cartesian2d<
        plotters::coord::types::RangedCoordf64,
        plotters::coord::types::RangedCoordf64,
    >,
>;

/// One chart's SVG: a white canvas `draw` paints on.
pub(crate) fn svg(draw: impl FnOnce(&Area<'_>) -> Result<(), String>) -> Res {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        draw(&root)?;
        root.present().map_err(err)?;
    }
    Ok(buf)
}

/// A chart titled `caption` with x over `x` and a percentage y axis (0–100 with head room).
fn percent_chart<'a, 'b>(root: &'a Area<'b>, caption: &str, x: std::ops::Range<f64>) -> Result<Chart<'a, 'b>, String> {
    ChartBuilder::on(root)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(x, -3f64..112f64)
        .map_err(err)
}

/// Axis labels naming category `i` at the whole number `i` (nothing between).
pub(crate) fn category_label(names: Vec<String>) -> impl Fn(&f64) -> String {
    move |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 {
            names.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    }
}

/// A percentage chart over named categories at x = 0, 1, …
fn category_chart<'a, 'b>(
    root: &'a Area<'b>,
    caption: &str,
    names: Vec<String>,
    y_desc: &str,
    x_desc: Option<&str>,
) -> Result<Chart<'a, 'b>, String> {
    let n = names.len().max(1);
    let mut chart = percent_chart(root, caption, -0.5f64..(n as f64 - 0.5))?;
    let label = category_label(names);
    let mut mesh = chart.configure_mesh();
    mesh.x_labels(n * 2 + 1).x_label_formatter(&label).y_label_formatter(&pct_label).y_desc(y_desc);
    if let Some(d) = x_desc {
        mesh.x_desc(d);
    }
    mesh.draw().map_err(err)?;
    Ok(chart)
}

/// The series' legend, top right.
pub(crate) fn legend<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>) -> Result<(), String> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(err)
}

/// The y axis shows 0–100 (the range has head room so points at 100% are not cut).
fn pct_label(y: &f64) -> String {
    if (0.0..=100.0).contains(y) { format!("{y:.0}") } else { String::new() }
}

pub(crate) fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("drawing a chart failed: {e:?}")
}

/// Survival at m_k over stages, one line per agent.
pub fn survival(r: &ArcReport) -> Res {
    let stages = r.all.survival.len().max(1);
    svg(|root| {
        let mut chart = percent_chart(root, "Survival over stages", -0.2f64..(stages as f64 - 0.8))?;
        chart
            .configure_mesh()
            .x_labels(stages)
            .x_label_formatter(&|x| format!("m{}", x.round() as i64))
            .y_label_formatter(&pct_label)
            .y_desc("runs with m0…mk all passed (%)")
            .x_desc("stage")
            .draw()
            .map_err(err)?;
        for (i, a) in r.agents.iter().enumerate() {
            let pts: Vec<(f64, f64)> = a
                .survival
                .iter()
                .enumerate()
                .filter(|(_, e)| e.value.is_some())
                .map(|(k, e)| (k as f64, pct(e.value)))
                .collect();
            let c = color(i);
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                .map_err(err)?
                .label(a.agent.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
            chart.draw_series(pts.iter().map(|p| Circle::new(*p, 4, c.filled()))).map_err(err)?;
        }
        legend(&mut chart)
    })
}

fn interval(e: &Estimate) -> (f64, f64, f64) {
    let v = pct(e.value);
    e.ci.map_or((v, v, v), |c| (c.low * 100.0, v, c.high * 100.0))
}

/// First stage (hollow) and chain gate (filled) per agent, with their intervals.
pub fn m0_vs_gate(r: &ArcReport) -> Res {
    let names: Vec<String> = r.agents.iter().map(|a| a.agent.clone()).collect();
    svg(|root| {
        let caption = "First stage (m0, hollow) vs chain gate (filled), 95% intervals";
        let mut chart = category_chart(root, caption, names, "tasks passed (%)", None)?;
        for (i, a) in r.agents.iter().enumerate() {
            let c = color(i);
            let x = i as f64;
            for (dx, e, filled) in [(-0.12, &a.m0, false), (0.12, &a.gate, true)] {
                let (lo, v, hi) = interval(e);
                chart
                    .draw_series(std::iter::once(ErrorBar::new_vertical(x + dx, lo, v, hi, c.stroke_width(2), 10)))
                    .map_err(err)?;
                let style = if filled { c.filled() } else { c.stroke_width(2) };
                chart.draw_series(std::iter::once(Circle::new((x + dx, v), 6, style))).map_err(err)?;
            }
        }
        Ok(())
    })
}

/// Chain-gate pass rate by chain length (FeatureArc figure 5b): one series per agent, points
/// side by side at each number of stages, with their intervals.
pub fn gate_by_length(r: &ArcReport) -> Res {
    let lengths: Vec<usize> = r.all.gate_by_length.keys().copied().collect();
    let agents = r.agents.len().max(1);
    let labels: Vec<String> = lengths.iter().map(|l| format!("{l} stages")).collect();
    svg(|root| {
        let caption = "Chain gate by chain length, 95% intervals";
        let mut chart = category_chart(root, caption, labels, "chain gate passed (%)", Some("chain length"))?;
        let width = 0.6 / agents as f64;
        for (i, a) in r.agents.iter().enumerate() {
            let c = color(i);
            let dx = -0.3 + width * (i as f64 + 0.5);
            let pts: Vec<(f64, (f64, f64, f64))> = lengths
                .iter()
                .enumerate()
                .filter_map(|(j, l)| {
                    a.gate_by_length.get(l).filter(|e| e.value.is_some()).map(|e| (j as f64 + dx, interval(e)))
                })
                .collect();
            chart
                .draw_series(
                    pts.iter().map(|(x, (lo, v, hi))| ErrorBar::new_vertical(*x, *lo, *v, *hi, c.stroke_width(2), 8)),
                )
                .map_err(err)?;
            chart
                .draw_series(pts.iter().map(|(x, (_, v, _))| Circle::new((*x, *v), 5, c.filled())))
                .map_err(err)?
                .label(a.agent.clone())
                .legend(move |(x, y)| Circle::new((x + 8, y), 5, c.filled()));
        }
        legend(&mut chart)
    })
}

/// Categories of figure 6a in drawing order.
fn break_order(a: &[&AgentSummary]) -> Vec<String> {
    let mut keys: Vec<String> = vec!["complete".into(), "gate fails".into(), "recovered".into()];
    let mut stages: Vec<usize> = a
        .iter()
        .flat_map(|s| s.first_break.keys())
        .filter_map(|k| k.strip_prefix('m').and_then(|n| n.parse().ok()))
        .collect();
    stages.sort_unstable();
    stages.dedup();
    keys.extend(stages.into_iter().map(|k| format!("m{k}")));
    keys
}

/// Where runs first break, as shares of each agent's runs (stacked bars).
pub fn first_break(r: &ArcReport) -> Res {
    let rows: Vec<&AgentSummary> = r.agents.iter().chain(std::iter::once(&r.all)).collect();
    let keys = break_order(&rows);
    let names: Vec<String> = rows.iter().map(|a| a.agent.clone()).collect();
    let n = rows.len();
    svg(|root| {
        let mut chart = ChartBuilder::on(root)
            .caption("Where runs first break (share of runs)", ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(110)
            .build_cartesian_2d(0f64..140f64, -0.5f64..(n as f64 - 0.5))
            .map_err(err)?;
        let label = category_label(names);
        // The legend sits right of the 100% mark; no grid or labels there.
        let x_label = |x: &f64| if *x <= 100.0 { format!("{x:.0}") } else { String::new() };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_labels(n * 2 + 1)
            .y_label_formatter(&label)
            .x_label_formatter(&x_label)
            .x_desc("runs (%)")
            .draw()
            .map_err(err)?;
        for (ki, key) in keys.iter().enumerate() {
            let c = color(ki);
            let mut bars = Vec::new();
            for (i, a) in rows.iter().enumerate() {
                let total: usize = a.first_break.values().sum();
                if total == 0 {
                    continue;
                }
                let before: usize = keys[..ki].iter().map(|k| a.first_break.get(k).copied().unwrap_or(0)).sum();
                let here = a.first_break.get(key).copied().unwrap_or(0);
                if here == 0 {
                    continue;
                }
                let (x0, x1) = (before as f64 * 100.0 / total as f64, (before + here) as f64 * 100.0 / total as f64);
                let y = i as f64;
                bars.push(Rectangle::new([(x0, y - 0.3), (x1, y + 0.3)], c.filled()));
            }
            chart
                .draw_series(bars)
                .map_err(err)?
                .label(key.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
        }
        legend(&mut chart)
    })
}

/// Resolved and passed rate per model and level, with 95% intervals.
pub fn grade_rates(r: &GradeReport) -> Res {
    let rows: Vec<String> =
        r.models.iter().map(|m| format!("{} {}", m.model, m.level.map_or("all".into(), |l| format!("L{l}")))).collect();
    svg(|root| {
        let caption = "Resolved rate and passed rate per model, 95% intervals";
        let mut chart = category_chart(root, caption, rows, "%", None)?;
        for (si, (name, pick)) in [("resolved", 0usize), ("passed", 1usize)].iter().enumerate() {
            let c = color(si);
            let mut bars = Vec::new();
            let mut errs = Vec::new();
            for (i, m) in r.models.iter().enumerate() {
                let e = if *pick == 0 { &m.resolved_rate } else { &m.passed_rate };
                let (lo, v, hi) = interval(e);
                let x = i as f64 + if *pick == 0 { -0.2 } else { 0.2 };
                bars.push(Rectangle::new([(x - 0.17, 0.0), (x + 0.17, v)], c.mix(0.75).filled()));
                errs.push(ErrorBar::new_vertical(x, lo, v, hi, BLACK.stroke_width(1), 8));
            }
            chart
                .draw_series(bars)
                .map_err(err)?
                .label(name.to_string())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
            chart.draw_series(errs).map_err(err)?;
        }
        legend(&mut chart)
    })
}
