//! One reviewable text form of a definition index for snapshots, the same for every
//! language (the JSON snapshot has every field; this shows what a reviewer checks): per
//! file its imports, module-level references and exports, then each definition with its
//! span, signature facts, parent, references and load references, indented by nesting.

use serde::Serialize;
use serde_json::Value;
use std::fmt::Write;

/// The summary of `index` (a `DefinitionIndex`, read through its serialized form).
pub fn index_summary(index: &impl Serialize) -> String {
    let index = serde_json::to_value(index).expect("the index serializes");
    let mut out = String::new();
    let files = index["files"].as_object().cloned().unwrap_or_default();
    for (path, f) in &files {
        let test = if f["is_test"].as_bool() == Some(true) { " (test)" } else { "" };
        let _ = writeln!(out, "file {path}{test} module={} lines={}", or_dash(&f["module"]), f["lines"]);
        for i in list(&f["imports"]) {
            let names: Vec<String> = list(&i["names"])
                .iter()
                .map(|n| {
                    let alias = n["alias"].as_str().map(|a| format!(" as {a}")).unwrap_or_default();
                    format!("{}{alias} -> {}", str_of(&n["name"]), or_dash(&n["target"]))
                })
                .collect();
            let local = if i["module_level"].as_bool() == Some(false) { " (local)" } else { "" };
            let _ = writeln!(
                out,
                "  import {} => {}{local} [{}]",
                str_of(&i["module"]),
                or_dash(&i["resolved_path"]),
                names.join(", ")
            );
        }
        for r in list(&f["module_references"]) {
            let _ = writeln!(out, "  module ref L{} -> {}", r["line"], str_of(&r["target"]));
        }
        for b in list(&f["value_bindings"]) {
            let targets: Vec<String> =
                list(&b["targets"]).iter().map(|t| format!("L{} {}", t["line"], str_of(&t["target"]))).collect();
            let named_by: Vec<&str> = list(&b["named_by"]).iter().map(|n| str_of(n)).collect();
            let _ = writeln!(
                out,
                "  binding L{} {}{}{} -> [{}] named by [{}]",
                b["span"]["start_line"],
                str_of(&b["name"]),
                if b["entry"].as_bool() == Some(true) { " (entry)" } else { "" },
                b["class"].as_str().map(|c| format!(" in {c}")).unwrap_or_default(),
                targets.join(", "),
                named_by.join(", ")
            );
        }
        for e in list(&f["exported"]) {
            let _ = writeln!(out, "  export {}", str_of(e));
        }
        for id in list(&f["definitions"]) {
            let d = &index["definitions"][str_of(id)];
            definition(&mut out, d);
        }
    }
    for s in list(&index["skipped"]) {
        let _ = writeln!(out, "skipped {}: {}", str_of(&s["path"]), str_of(&s["reason"]));
    }
    out
}

fn definition(out: &mut String, d: &Value) {
    let qualname = str_of(&d["qualname"]);
    let pad = "  ".repeat(qualname.matches('.').count() + 1);
    let span = &d["span"];
    let test = if d["is_test"].as_bool() == Some(true) { " (test)" } else { "" };
    let _ = writeln!(
        out,
        "{pad}{} {qualname} L{}-{} def_line={}{test}",
        str_of(&d["kind"]),
        span["start_line"],
        span["end_line"],
        d["def_line"]
    );
    let sig = &d["signature"];
    let _ = writeln!(out, "{pad}  sig: {}", str_of(&sig["text"]).lines().next().unwrap_or(""));
    for key in ["receiver", "type_parameters", "returns"] {
        if let Some(v) = sig[key].as_str() {
            let _ = writeln!(out, "{pad}  {key}: {v}");
        }
    }
    let params: Vec<String> = list(&sig["parameters"])
        .iter()
        .map(|p| {
            let annotation = p["annotation"].as_str().map(|a| format!(": {a}")).unwrap_or_default();
            let kind = match p["kind"].as_str() {
                Some("positional_or_keyword") | None => String::new(),
                Some(k) => format!(" ({k})"),
            };
            format!("{}{annotation}{kind}", str_of(&p["name"]))
        })
        .collect();
    if !params.is_empty() {
        let _ = writeln!(out, "{pad}  params: {}", params.join(", "));
    }
    for key in ["decorators", "bases"] {
        let items: Vec<&str> = list(&sig[key]).iter().map(str_of).collect();
        if !items.is_empty() {
            let _ = writeln!(out, "{pad}  {key}: {}", items.join(", "));
        }
    }
    if let Some(doc) = d["docstring"].as_str() {
        let _ = writeln!(out, "{pad}  doc: {}", doc.replace('\n', " / "));
    }
    if let Some(p) = d["parent"].as_str() {
        let _ = writeln!(out, "{pad}  parent: {p}");
    }
    for r in list(&d["references"]) {
        let _ = writeln!(out, "{pad}  -> {}", str_of(r));
    }
    for l in list(&d["load_references"]) {
        let _ = writeln!(out, "{pad}  => {} ({})", str_of(&l["target"]), str_of(&l["role"]));
    }
}

fn list(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or(&[])
}

fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn or_dash(v: &Value) -> &str {
    v.as_str().unwrap_or("-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_fact_nested_by_qualified_name() {
        let index = serde_json::json!({
            "files": {"a.py": {"lines": 4, "module": "a", "definitions": ["a.py::C", "a.py::C.m"],
                "imports": [{"module": "os", "names": [{"name": "path", "alias": "p"}], "module_level": true}]}},
            "definitions": {
                "a.py::C": {"kind": "class", "qualname": "C", "span": {"start_line": 1, "end_line": 3}, "def_line": 1,
                    "signature": {"text": "class C:", "parameters": []}},
                "a.py::C.m": {"kind": "method", "qualname": "C.m", "span": {"start_line": 2, "end_line": 3}, "def_line": 2,
                    "signature": {"text": "def m(self, *xs)", "parameters": [{"name": "self", "kind": "positional_or_keyword"},
                        {"name": "xs", "kind": "var_positional"}]}, "parent": "a.py::C", "references": ["a.py::C"]},
            },
        });
        let want = "file a.py module=a lines=4
  import os => - [path as p -> -]
  class C L1-3 def_line=1
    sig: class C:
    method C.m L2-3 def_line=2
      sig: def m(self, *xs)
      params: self, xs (var_positional)
      parent: a.py::C
      -> a.py::C
";
        assert_eq!(index_summary(&index), want);
    }
}
