//! `summary.html`: the summary as a self-contained page (inline CSS and SVG, no network).

use carve_formats::dataset::Summary;

use crate::Result;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em;color:#222;max-width:1100px}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}\
th:first-child,td:first-child{text-align:left}.muted{color:#777}.failed{color:#a40000}";

/// The page of `summary`.
pub fn page(s: &Summary) -> Result<String> {
    let mut b = String::new();
    let count = |k: &str| s.repositories.get(k).copied().unwrap_or(0);
    b.push_str(&format!(
        "<p id=\"totals\">{} validated tasks from {} repositories ({} done, {} failed, {} pending).</p>\n",
        s.tasks,
        count("total"),
        count("done"),
        count("failed"),
        count("pending")
    ));
    b.push_str("<h2>Yield per repository</h2>\n<table id=\"repos\"><tr><th>repository</th><th>language</th><th>status</th><th>candidates</th><th>tasks</th><th>rejected</th><th>seconds</th><th>CPU seconds</th><th>reason</th></tr>\n");
    for r in &s.repos {
        let class = if r.status == "failed" { " class=\"failed\"" } else { "" };
        b.push_str(&format!(
            "<tr{class}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{:.0}</td><td style=\"text-align:left\">{}</td></tr>\n",
            esc(&r.name),
            esc(r.language.as_deref().unwrap_or("")),
            esc(&r.status),
            r.candidates,
            r.tasks,
            r.rejected,
            r.seconds,
            r.cpu_seconds,
            esc(r.reason.as_deref().unwrap_or(""))
        ));
    }
    b.push_str("</table>\n");
    b.push_str(&crate::summary_charts::sections(s)?);
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>carve dataset summary</title><style>{STYLE}</style></head>\n<body>\n<h1>carve dataset summary</h1>\n{b}</body></html>\n"
    ))
}
