//! Self-contained HTML pages (no network: inline CSS, inline SVG charts from
//! [`crate::charts`]) for `carve arc report --html` and `carve report --html`.

use crate::Error;
use crate::bootstrap::Estimate;
use crate::charts;
use crate::report::{AgentSummary, ArcReport, GradeReport};

const STYLE: &str = "body{font-family:sans-serif;margin:2em;color:#222;max-width:1100px}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}\
th:first-child,td:first-child{text-align:left}figure{margin:1.5em 0}figcaption{color:#555;font-size:90%}\
code{background:#f4f4f4;padding:0 3px}.muted{color:#777}pre{background:#f7f7f7;padding:8px;overflow:auto}\
#definitions td,#definitions th{text-align:left}.extracted{color:#a40000}.remained{color:#005a9c}.add{color:#1a7f37}.del{color:#cf222e}";

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

pub(crate) fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head>\n<body>\n<h1>{}</h1>\n{body}</body></html>\n",
        escape(title),
        escape(title)
    )
}

fn cell(e: &Estimate) -> String {
    match (e.value, e.ci) {
        (Some(v), Some(ci)) => {
            format!("{:.1}% <span class=\"muted\">[{:.1}, {:.1}]</span>", v * 100.0, ci.low * 100.0, ci.high * 100.0)
        }
        (Some(v), None) => format!("{:.1}%", v * 100.0),
        _ => "<span class=\"muted\">—</span>".into(),
    }
}

fn figure(id: &str, svg: Result<String, String>, caption: &str) -> Result<String, Error> {
    let svg = svg.map_err(Error::Environment)?;
    Ok(format!("<figure id=\"{id}\">{svg}<figcaption>{}</figcaption></figure>\n", escape(caption)))
}

fn agent_row(a: &AgentSummary) -> String {
    format!(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        escape(&a.agent),
        a.runs,
        cell(&a.m0),
        cell(&a.gate),
        cell(&a.cont),
        cell(&a.stage_f2p),
        cell(&a.depth),
        cell(&a.chain_p2p_failure),
        cell(&a.in_chain_regression),
        cell(&a.pure_regression),
        cell(&a.last_stage_overestimate),
    )
}

/// The page of `carve arc report`.
pub fn arc_page(r: &ArcReport) -> Result<String, Error> {
    let mut b = format!(
        "<p>{} runs on {} tasks. Intervals: {:.0}% bootstrap over tasks, {} resamples, seed {}.</p>\n",
        r.all.runs,
        r.all.tasks,
        r.level * 100.0,
        r.resamples,
        r.seed
    );
    b.push_str("<table id=\"metrics\"><tr><th>agent</th><th>runs</th><th>m0</th><th>Gate</th><th>Cont.</th><th>stage F2P</th><th>Depth</th><th>chain P2P fail</th><th>in-chain regression</th><th>pure regression</th><th>last stage ok, gate fails</th></tr>\n");
    for a in r.agents.iter().chain(std::iter::once(&r.all)) {
        b.push_str(&agent_row(a));
    }
    b.push_str("</table>\n");
    let g = &r.group_comparison;
    b.push_str(&format!(
        "<p id=\"groups\">Next-stage F2P success within {} task–stage groups that hold both conditions (groups weighted equally): after a passed stage {}, after a failed stage {}. Pooled over all runs: {} vs {}.</p>\n",
        g.groups,
        cell(&g.after_pass),
        cell(&g.after_fail),
        cell(&g.pooled_after_pass),
        cell(&g.pooled_after_fail)
    ));
    b.push_str(&figure(
        "survival",
        charts::survival(r),
        "Share of runs whose stages m0…mk all pass, among chains longer than k.",
    )?);
    b.push_str(&figure("m0-gate", charts::m0_vs_gate(r), "First-stage pass rate and chain-gate pass rate per agent.")?);
    b.push_str(&figure(
        "gate-by-length",
        charts::gate_by_length(r),
        "Share of runs whose chain gate passes, by the chain's number of stages.",
    )?);
    b.push_str(&figure(
        "first-break",
        charts::first_break(r),
        "complete: every gate passes; gate fails: every stage passes but the chain gate fails; recovered: a stage failed yet the chain gate passes; mk: the first failed stage of a run that did not recover.",
    )?);
    if !r.excluded.is_empty() {
        b.push_str("<h2>Excluded runs</h2><ul>\n");
        for e in &r.excluded {
            b.push_str(&format!(
                "<li><code>{}</code>: {}</li>\n",
                escape(&e.path.display().to_string()),
                escape(&e.reason)
            ));
        }
        b.push_str("</ul>\n");
    }
    Ok(page("FeatureArc report", &b))
}

/// The page of `carve report` (L1/L2 grading).
pub fn grade_page(r: &GradeReport) -> Result<String, Error> {
    let mut b = format!(
        "<p>Intervals: {:.0}% bootstrap over instances, {} resamples, seed {}.</p>\n<table id=\"metrics\"><tr><th>model</th><th>level</th><th>instances</th><th>resolved</th><th>passed rate</th><th>patch refused or not applied</th><th>errors</th></tr>\n",
        r.level * 100.0,
        r.resamples,
        r.seed
    );
    for m in &r.models {
        b.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            escape(&m.model),
            m.level.map_or("all".into(), |l| format!("L{l}")),
            m.instances,
            cell(&m.resolved_rate),
            cell(&m.passed_rate),
            m.patch_problems,
            m.errors
        ));
    }
    b.push_str("</table>\n");
    b.push_str(&figure(
        "rates",
        charts::grade_rates(r),
        "Resolved: every F2P and P2P test passes. Passed rate: mean share of F2P tests passing.",
    )?);
    Ok(page("Grading report", &b))
}
