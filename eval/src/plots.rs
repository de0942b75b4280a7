//! General charts for pages other than the reports' (the dataset summary of `carve-dataset`):
//! grouped bars over named categories, and a histogram with reference lines. Same look as
//! the reports' charts (plotters' SVG backend, Tableau colours).

use plotters::prelude::*;

use crate::charts::{Res, category_label, color, err, legend, svg};

/// One series of a bar chart: its name and a value per category.
pub struct Series<'a> {
    pub name: &'a str,
    pub values: Vec<f64>,
}

/// Grouped vertical bars: one group per category (`names`), one bar per series.
pub fn bars(caption: &str, names: &[String], series: &[Series<'_>], y_desc: &str) -> Res {
    let n = names.len().max(1);
    let top = series.iter().flat_map(|s| s.values.iter().copied()).fold(0.0f64, f64::max).max(1.0) * 1.12;
    let k = series.len().max(1) as f64;
    svg(|root| {
        let mut chart = ChartBuilder::on(root)
            .caption(caption, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(60)
            .y_label_area_size(56)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..top)
            .map_err(err)?;
        let label = category_label(names.iter().map(|s| short(s, 18)).collect());
        chart
            .configure_mesh()
            .x_labels(n * 2 + 1)
            .x_label_formatter(&label)
            .y_desc(y_desc)
            .disable_x_mesh()
            .draw()
            .map_err(err)?;
        let width = 0.8 / k;
        for (si, s) in series.iter().enumerate() {
            let c = color(si);
            let offset = -0.4 + width * (si as f64 + 0.5);
            let rects: Vec<Rectangle<(f64, f64)>> = s
                .values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let x = i as f64 + offset;
                    Rectangle::new([(x - width * 0.45, 0.0), (x + width * 0.45, *v)], c.mix(0.8).filled())
                })
                .collect();
            let name = s.name.to_string();
            chart
                .draw_series(rects)
                .map_err(err)?
                .label(name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
        }
        legend(&mut chart)
    })
}

/// A histogram of `values` in `bins` equal bins, with vertical reference lines (`(x, name)`).
pub fn histogram(caption: &str, values: &[f64], bins: usize, x_desc: &str, marks: &[(f64, &str)]) -> Res {
    let bins = bins.max(1);
    let hi = values.iter().copied().chain(marks.iter().map(|m| m.0)).fold(1.0f64, f64::max) * 1.05;
    let step = hi / bins as f64;
    let mut counts = vec![0usize; bins];
    for v in values {
        counts[((v / step) as usize).min(bins - 1)] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(0).max(1) as f64 * 1.15;
    svg(|root| {
        let mut chart = ChartBuilder::on(root)
            .caption(caption, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(48)
            .build_cartesian_2d(0f64..hi, 0f64..top)
            .map_err(err)?;
        chart.configure_mesh().x_desc(x_desc).y_desc("tasks").disable_x_mesh().draw().map_err(err)?;
        let c = color(0);
        chart
            .draw_series(counts.iter().enumerate().map(|(i, n)| {
                let x0 = i as f64 * step;
                Rectangle::new([(x0, 0.0), (x0 + step * 0.95, *n as f64)], c.mix(0.8).filled())
            }))
            .map_err(err)?;
        for (mi, (x, name)) in marks.iter().enumerate() {
            let mc = color(mi + 1);
            let name = name.to_string();
            chart
                .draw_series(LineSeries::new(vec![(*x, 0.0), (*x, top)], mc.stroke_width(2)))
                .map_err(err)?
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], mc.stroke_width(2)));
        }
        legend(&mut chart)
    })
}

/// At most `n` characters, with `…` when cut.
fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { format!("{}…", s.chars().take(n - 1).collect::<String>()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_and_histograms_draw_svg() {
        let names = vec!["a/b".to_string(), "c/d".to_string()];
        let s = bars("yield", &names, &[Series { name: "tasks", values: vec![3.0, 0.0] }], "tasks").unwrap();
        assert!(s.starts_with("<svg") && s.contains("yield") && s.contains("a/b"), "{s}");
        let h = histogram("lines", &[1.0, 5.0, 50.0], 10, "lines", &[(790.0, "FeatureBench mean")]).unwrap();
        assert!(h.contains("FeatureBench mean"), "{h}");
    }
}
