//! `carve audit --format html`: one feature's classification as a page a person can read —
//! the extracted and remained definitions grouped by file with their reasons, the feature's
//! call graph (F2P tests → entry points → what the tests reached, the P2P-protected boundary
//! marked) drawn with `plotters`, and the masked diff when there is one.
//!
//! Input: the audit JSON (docs/formats.md "Audit"); the graph comes from the structured
//! reasons of its `classification` (`entry_point` = test → node, `reached` = from → node,
//! `member_of_extracted` = class → member).

use plotters::prelude::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::Error;
use crate::html::{escape, page};

struct Node {
    status: String,
    p2p: bool,
}

fn str_of<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

/// The nodes, the edges (from, to) and the F2P tests of the feature's graph.
type FeatureGraph = (BTreeMap<String, Node>, BTreeSet<(String, String)>, BTreeSet<String>);

/// One row of the definitions table: id, decision, reasons.
type Row<'a> = (String, &'a str, Vec<String>);

fn graph(audit: &Value) -> FeatureGraph {
    let mut nodes = BTreeMap::new();
    let mut edges = BTreeSet::new();
    let mut tests = BTreeSet::new();
    let empty = serde_json::Map::new();
    let all = audit["classification"]["nodes"].as_object().unwrap_or(&empty);
    for (id, d) in all {
        let reasons = d["reasons"].as_array().cloned().unwrap_or_default();
        let p2p = reasons.iter().any(|r| str_of(r, "reason") == Some("executed_by_p2p"));
        nodes.insert(id.clone(), Node { status: str_of(d, "status").unwrap_or("").to_string(), p2p });
        for r in &reasons {
            match str_of(r, "reason") {
                Some("entry_point") => {
                    if let Some(t) = str_of(r, "test") {
                        tests.insert(t.to_string());
                        edges.insert((t.to_string(), id.clone()));
                    }
                }
                Some("reached") => {
                    if let Some(f) = str_of(r, "from") {
                        edges.insert((f.to_string(), id.clone()));
                    }
                }
                Some("member_of_extracted") => {
                    if let Some(c) = str_of(r, "class") {
                        edges.insert((c.to_string(), id.clone()));
                    }
                }
                _ => {}
            }
        }
    }
    (nodes, edges, tests)
}

/// Column of each node: its distance from the F2P tests (tests are column 0).
fn layers(edges: &BTreeSet<(String, String)>, tests: &BTreeSet<String>) -> BTreeMap<String, usize> {
    let mut depth: BTreeMap<String, usize> = tests.iter().map(|t| (t.clone(), 0)).collect();
    let mut queue: VecDeque<String> = tests.iter().cloned().collect();
    while let Some(n) = queue.pop_front() {
        let d = depth[&n];
        for (_, to) in edges.range((n.clone(), String::new())..).take_while(|(f, _)| *f == n) {
            if !depth.contains_key(to) {
                depth.insert(to.clone(), d + 1);
                queue.push_back(to.clone());
            }
        }
    }
    depth
}

fn short(id: &str) -> String {
    let s = id.rsplit("::").next().unwrap_or(id);
    if s.chars().count() > 28 { format!("{}…", s.chars().take(27).collect::<String>()) } else { s.to_string() }
}

/// The call graph as SVG (at most `limit` nodes, the nearest to the tests).
fn graph_svg(audit: &Value, limit: usize) -> Result<(String, usize), String> {
    let (nodes, edges, tests) = graph(audit);
    let depth = layers(&edges, &tests);
    let mut order: Vec<(&String, &usize)> = depth.iter().collect();
    order.sort_by(|a, b| a.1.cmp(b.1).then(a.0.cmp(b.0)));
    let shown: Vec<(&String, usize)> = order.iter().take(limit).map(|(n, d)| (*n, **d)).collect();
    let hidden = order.len() - shown.len();
    let cols = shown.iter().map(|(_, d)| d + 1).max().unwrap_or(1);
    let mut rows: BTreeMap<usize, usize> = BTreeMap::new();
    let mut pos: BTreeMap<&str, (i32, i32)> = BTreeMap::new();
    let (cw, rh) = (230i32, 34i32);
    for (n, d) in &shown {
        let r = rows.entry(*d).or_insert(0);
        pos.insert(n.as_str(), (20 + *d as i32 * cw, 50 + *r as i32 * rh));
        *r += 1;
    }
    let max_rows = rows.values().copied().max().unwrap_or(1) as i32;
    let (w, h) = ((cols as i32 * cw + 40).max(500) as u32, (max_rows * rh + 110) as u32);
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (w, h)).into_drawing_area();
        let e = |x: DrawingAreaErrorKind<_>| format!("drawing the call graph failed: {x:?}");
        root.fill(&WHITE).map_err(e)?;
        let red = RGBColor(164, 0, 0);
        let blue = RGBColor(0, 90, 156);
        let grey = RGBColor(90, 90, 90);
        for (from, to) in &edges {
            if let (Some(a), Some(b)) = (pos.get(from.as_str()), pos.get(to.as_str())) {
                let (x0, y0) = (a.0 + 200, a.1 + 12);
                let (x1, y1) = (b.0, b.1 + 12);
                root.draw(&PathElement::new(vec![(x0, y0), (x1, y1)], grey.mix(0.5).stroke_width(1))).map_err(e)?;
                root.draw(&Circle::new((x1, y1), 3, grey.filled())).map_err(e)?;
            }
        }
        for (n, (x, y)) in &pos {
            let (fill, text) = if tests.contains(*n) {
                (RGBColor(240, 240, 240), BLACK)
            } else {
                match nodes.get(*n).map(|d| d.status.as_str()) {
                    Some("extracted") => (RGBColor(253, 226, 226), red),
                    _ => (RGBColor(222, 235, 250), blue),
                }
            };
            let boundary = nodes.get(*n).is_some_and(|d| d.p2p);
            root.draw(&Rectangle::new([(*x, *y), (x + 200, y + 24)], fill.filled())).map_err(e)?;
            let border = if boundary { blue.stroke_width(3) } else { grey.stroke_width(1) };
            root.draw(&Rectangle::new([(*x, *y), (x + 200, y + 24)], border)).map_err(e)?;
            let style = ("sans-serif", 12).into_font().color(&text);
            root.draw(&Text::new(short(n), (x + 6, y + 6), style)).map_err(e)?;
        }
        let legend = [
            ("F2P test", RGBColor(240, 240, 240), false),
            ("extracted", RGBColor(253, 226, 226), false),
            ("remained", RGBColor(222, 235, 250), false),
            ("P2P boundary (run by P2P tests)", RGBColor(222, 235, 250), true),
        ];
        for (i, (label, fill, thick)) in legend.iter().enumerate() {
            let x = 20 + i as i32 * 150;
            let y = 12;
            root.draw(&Rectangle::new([(x, y), (x + 18, y + 14)], fill.filled())).map_err(e)?;
            let border = if *thick { blue.stroke_width(3) } else { grey.stroke_width(1) };
            root.draw(&Rectangle::new([(x, y), (x + 18, y + 14)], border)).map_err(e)?;
            root.draw(&Text::new(label.to_string(), (x + 24, y + 1), ("sans-serif", 12).into_font())).map_err(e)?;
        }
        root.present().map_err(e)?;
    }
    Ok((buf, hidden))
}

fn diff_html(patch: &str) -> String {
    let mut s = String::from("<pre id=\"mask-diff\">");
    for l in patch.lines() {
        let class = if l.starts_with("+++") || l.starts_with("---") || l.starts_with("diff ") {
            ""
        } else if l.starts_with('+') {
            "add"
        } else if l.starts_with('-') {
            "del"
        } else {
            ""
        };
        if class.is_empty() {
            s.push_str(&escape(l));
        } else {
            s.push_str(&format!("<span class=\"{class}\">{}</span>", escape(l)));
        }
        s.push('\n');
    }
    s.push_str("</pre>\n");
    s
}

/// The page for one audit (`mask_patch`: the masked diff, when known).
pub fn audit_page(audit: &Value, mask_patch: Option<&str>) -> Result<String, Error> {
    if audit.get("version").and_then(Value::as_u64) != Some(1) {
        return Err(Error::Usage(
            "not an audit (version 1) JSON: expected `version`: 1 (docs/formats.md \"Audit\")".into(),
        ));
    }
    let feature = str_of(audit, "feature").unwrap_or("feature");
    let mut b = String::new();
    let f2p: Vec<&str> =
        audit["f2p"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    b.push_str(&format!(
        "<p>{} F2P tests, {} P2P tests. Entry points: {}.</p>\n<details><summary>F2P tests</summary><ul>",
        f2p.len(),
        audit["p2p_count"].as_u64().unwrap_or(0),
        audit["entry_points"]
            .as_array()
            .map(|a| a
                .iter()
                .filter_map(Value::as_str)
                .map(|e| format!("<code>{}</code>", escape(e)))
                .collect::<Vec<_>>()
                .join(", "))
            .unwrap_or_default()
    ));
    for t in &f2p {
        b.push_str(&format!("<li><code>{}</code></li>", escape(t)));
    }
    b.push_str("</ul></details>\n<h2>Definitions by file</h2>\n<table id=\"definitions\"><tr><th>definition</th><th>decision</th><th>reasons</th></tr>\n");
    let mut by_file: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    for (key, status) in [("extracted", "extracted"), ("remained", "remained")] {
        for d in audit[key].as_array().into_iter().flatten() {
            let id = str_of(d, "id").unwrap_or("").to_string();
            let file = id.split("::").next().unwrap_or("").to_string();
            let reasons = d["reasons"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).map(String::from).collect())
                .unwrap_or_default();
            by_file.entry(file).or_default().push((id, status, reasons));
        }
    }
    for (file, mut defs) in by_file {
        defs.sort();
        b.push_str(&format!("<tr><th colspan=\"3\" class=\"file\">{}</th></tr>\n", escape(&file)));
        for (id, status, reasons) in defs {
            let name = id.split_once("::").map_or(id.as_str(), |(_, n)| n);
            b.push_str(&format!(
                "<tr class=\"{status}\"><td><code>{}</code></td><td class=\"{status}\">{status}</td><td>{}</td></tr>\n",
                escape(name),
                reasons.iter().map(|r| escape(r)).collect::<Vec<_>>().join("<br>")
            ));
        }
    }
    b.push_str("</table>\n<h2>Call graph</h2>\n");
    let (svg, hidden) = graph_svg(audit, 80).map_err(Error::Environment)?;
    b.push_str(&format!(
        "<figure id=\"call-graph\">{svg}<figcaption>F2P tests (left) call the entry points; arrows follow the calls the F2P tests made. A thick blue border marks the P2P boundary: definitions P2P tests run, which stay.{}</figcaption></figure>\n",
        if hidden > 0 { format!(" {hidden} further definitions are not drawn.") } else { String::new() }
    ));
    if let Some(p) = mask_patch {
        b.push_str("<h2>Masked diff</h2>\n");
        b.push_str(&diff_html(p));
    }
    Ok(page(&format!("Audit of feature {feature}"), &b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_from_reasons_and_layers_from_the_tests() {
        let audit = serde_json::json!({"classification": {"nodes": {
            "p.py::a": {"status": "extracted", "reasons": [{"reason": "entry_point", "test": "t.py::test"}]},
            "p.py::b": {"status": "remained", "reasons": [{"reason": "executed_by_p2p", "test": "t.py::old", "others": 0}, {"reason": "reached", "from": "p.py::a"}]},
            "p.py::C": {"status": "extracted", "reasons": [{"reason": "reached", "from": "p.py::b"}]},
            "p.py::C.m": {"status": "extracted", "reasons": [{"reason": "member_of_extracted", "class": "p.py::C"}]}
        }}});
        let (nodes, edges, tests) = graph(&audit);
        assert!(nodes["p.py::b"].p2p && !nodes["p.py::a"].p2p);
        assert_eq!(tests.iter().collect::<Vec<_>>(), vec!["t.py::test"]);
        assert_eq!(edges.len(), 4);
        let d = layers(&edges, &tests);
        assert_eq!((d["t.py::test"], d["p.py::a"], d["p.py::b"], d["p.py::C"], d["p.py::C.m"]), (0, 1, 2, 3, 4));
    }
}
