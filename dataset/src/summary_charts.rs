//! The summary page's sections after the repository table: yield per language, rejections by
//! reason, task sizes beside FeatureBench's means, and time per stage — each a chart
//! (`carve_eval::plots`) with its numbers in a table.

use carve_eval::plots::{Series, bars, histogram};
use carve_formats::dataset::Summary;

use crate::{Error, Result};

fn figure(id: &str, svg: std::result::Result<String, String>, caption: &str) -> Result<String> {
    let svg = svg.map_err(Error::msg)?;
    Ok(format!("<figure id=\"{id}\">{svg}<figcaption>{caption}</figcaption></figure>\n"))
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

pub fn sections(s: &Summary) -> Result<String> {
    let mut b = String::new();
    // Yield per language.
    let langs: Vec<String> = s.languages.keys().cloned().collect();
    let y = |f: fn(&carve_formats::dataset::LanguageYield) -> usize| -> Vec<f64> {
        s.languages.values().map(|l| f(l) as f64).collect()
    };
    b.push_str("<h2>Yield per language</h2>\n");
    b.push_str(&figure(
        "languages",
        bars(
            "Repositories, repositories done, and tasks per language",
            &langs,
            &[
                Series { name: "repositories", values: y(|l| l.repositories) },
                Series { name: "done", values: y(|l| l.done) },
                Series { name: "tasks", values: y(|l| l.tasks) },
            ],
            "count",
        ),
        "A repository is done when it was set up and traced; its tasks are validated and re-checked.",
    )?);
    // Rejections.
    b.push_str("<h2>Rejections by reason</h2>\n<table id=\"rejections\"><tr><th>reason</th><th>count</th></tr>\n");
    let mut reasons: Vec<(&String, &usize)> = s.rejections.iter().collect();
    reasons.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (r, n) in &reasons {
        b.push_str(&format!("<tr><td>{}</td><td>{n}</td></tr>\n", esc(r)));
    }
    b.push_str("</table>\n");
    if !reasons.is_empty() {
        let top: Vec<(&String, &usize)> = reasons.iter().take(12).copied().collect();
        b.push_str(&figure(
            "rejection-chart",
            bars(
                "Rejections by reason (the 12 most common)",
                &top.iter().map(|(r, _)| r.to_string()).collect::<Vec<_>>(),
                &[Series { name: "rejections", values: top.iter().map(|(_, n)| **n as f64).collect() }],
                "candidates",
            ),
            "A reason is the words of the rejection before its first colon.",
        )?);
    }
    b.push_str(&sizes_and_stages(s)?);
    Ok(b)
}

/// Task sizes beside FeatureBench's means, and time per stage.
fn sizes_and_stages(s: &Summary) -> Result<String> {
    let mut b = String::new();
    // Sizes.
    b.push_str("<h2>Task sizes</h2>\n<table id=\"sizes\"><tr><th>size</th><th>tasks</th><th>mean</th><th>median</th><th>p90</th><th>max</th><th>FeatureBench mean</th></tr>\n");
    for (k, d) in &s.sizes {
        let fb = s.featurebench_means.get(k).copied().unwrap_or(f64::NAN);
        b.push_str(&format!(
            "<tr><td>{k}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.0}</td><td>{:.0}</td><td>{fb}</td></tr>\n",
            d.count, d.mean, d.median, d.p90, d.max
        ));
    }
    b.push_str("</table>\n");
    for (k, d) in &s.sizes {
        let fb = s.featurebench_means.get(k).copied().unwrap_or(0.0);
        b.push_str(&figure(
            &format!("size-{k}"),
            histogram(
                &format!("Tasks by {k} removed"),
                &d.values,
                20,
                k,
                &[(d.mean, "mean here"), (fb, "FeatureBench mean")],
            ),
            &format!("{k}: the FeatureBench-style size of each task (instance.json's `{k}`)."),
        )?);
    }
    // Stages.
    b.push_str(
        "<h2>Time per stage</h2>\n<table id=\"stages\"><tr><th>stage</th><th>seconds</th><th>CPU seconds</th></tr>\n",
    );
    for (k, t) in &s.stages {
        b.push_str(&format!("<tr><td>{k}</td><td>{:.1}</td><td>{:.1}</td></tr>\n", t.seconds, t.cpu_seconds));
    }
    b.push_str("</table>\n");
    let per_task = s.cpu_seconds_per_task.map_or("—".to_string(), |c| format!("{c:.1}"));
    b.push_str(&format!("<p id=\"cpu-per-task\">CPU seconds per validated task: {per_task}</p>\n"));
    if !s.stages.is_empty() {
        let names: Vec<String> = s.stages.keys().cloned().collect();
        b.push_str(&figure(
            "stage-chart",
            bars(
                "Wall and CPU seconds per stage, over every repository",
                &names,
                &[
                    Series { name: "seconds", values: s.stages.values().map(|t| t.seconds).collect() },
                    Series { name: "CPU seconds", values: s.stages.values().map(|t| t.cpu_seconds).collect() },
                ],
                "seconds",
            ),
            "CPU seconds count carve and every test process it waited for.",
        )?);
    }
    Ok(b)
}
