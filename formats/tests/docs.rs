//! `docs/formats.md` documents every field of every format: each property name of a type's
//! JSON schema (nested types and every `reason` included) appears as `` `name` `` in the
//! format's section of the page. Adding a field to a type without documenting it fails here.

use std::collections::BTreeSet;
use std::path::Path;

/// The page's section under `heading` (a line starting with it), down to the next heading
/// of the same or a higher level.
fn section<'a>(page: &'a str, heading: &str) -> &'a str {
    let start = page.find(&format!("\n{heading}")).unwrap_or_else(|| panic!("docs/formats.md has no `{heading}`"));
    let level = heading.chars().take_while(|c| *c == '#').count();
    let body = &page[start + 1..];
    let end = body
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .find(|&i| {
            let hashes = body[i..].chars().take_while(|c| *c == '#').count();
            hashes > 0 && hashes <= level && body[i..].chars().nth(hashes) == Some(' ')
        })
        .unwrap_or(body.len());
    &body[..end]
}

/// Every property name in a schema, and every `const` value of a `reason` tag.
fn names(schema: &serde_json::Value, out: &mut BTreeSet<String>) {
    match schema {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::Object(props)) = map.get("properties") {
                for (name, prop) in props {
                    out.insert(name.clone());
                    if name == "reason" {
                        if let Some(v) = prop.get("const").and_then(|c| c.as_str()) {
                            out.insert(v.to_string());
                        }
                    }
                }
            }
            map.values().for_each(|v| names(v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| names(v, out)),
        _ => {}
    }
}

fn undocumented(schema: schemars::Schema, headings: &[&str]) -> Vec<String> {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/formats.md")).unwrap();
    let text: String = headings.iter().map(|h| section(&page, h)).collect();
    let mut all = BTreeSet::new();
    names(&schema.to_value(), &mut all);
    assert!(all.len() > 3, "the schema lists its fields: {all:?}");
    all.into_iter().filter(|n| !text.contains(&format!("`{n}`"))).collect()
}

macro_rules! documented {
    ($name:ident, $ty:ty, $($heading:literal),+) => {
        #[test]
        fn $name() {
            let missing = undocumented(schemars::schema_for!($ty), &[$($heading),+]);
            assert!(missing.is_empty(), "docs/formats.md ({}) does not name these fields: {missing:?}", [$($heading),+].join(", "));
        }
    };
}

documented!(instance, carve_formats::instance::Instance, "## Task");
documented!(audit, carve_formats::audit::Audit, "## Audit", "## Classification");
documented!(contract, carve_formats::contract::Contract, "## Contract");
documented!(validation, carve_formats::validation::Validation, "## Validation");
documented!(chain, carve_formats::chain::ChainFile, "## Chain bundle");
documented!(gate, carve_formats::gate::GateValidation, "## Chain bundle");
documented!(grade, carve_formats::results::GradeRun, "## Evaluation results", "### Grading");
documented!(arc_run, carve_formats::results::ArcRun, "## Evaluation results", "### Chain run");

#[test]
fn a_section_ends_at_the_next_heading_of_its_level() {
    let page = "# t\n\n## A\n`x`\n### A.1\n`y`\n## B\n`z`\n";
    assert_eq!(section(page, "## A"), "## A\n`x`\n### A.1\n`y`\n");
    assert_eq!(section(page, "### A.1"), "### A.1\n`y`\n");
}
