//! A Go file's imports made to match what its text uses, after FeatureArc put a definition
//! back at an older text (a per-definition state): the older text may no longer use a
//! package the final file imports (`"math" imported and not used`: go-humanize's `comma`
//! chain) or use one the final file dropped (`undefined: unsafe`: google/uuid's `array`).
//! Go refuses to build either way. Only what another version of the same file shows is
//! touched: an import goes when its binding is unused here and another version that imports
//! the same path uses that binding (so the binding is the package's name, not a guess from
//! its path: `gopkg.in/yaml.v2` binds `yaml`); an import is added when this text uses a
//! binding no import here binds, declares no variable of that name, and another version
//! imports a path under that binding and uses it.

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::Node;

use super::{binding, deletion_range, parse, selector_roots};
use crate::edit::{Edit, MaskError};

/// One import spec: its path and alias as written (`None`: no alias).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Spec {
    path: String,
    alias: Option<String>,
}

impl Spec {
    fn text(&self) -> String {
        match &self.alias {
            Some(a) => format!("{a} \"{}\"", self.path),
            None => format!("\"{}\"", self.path),
        }
    }
}

/// The import specs of a parsed file, each with its node and binding.
fn specs<'t>(root: Node<'t>, text: &str) -> Vec<(Node<'t>, Spec, Option<String>)> {
    let mut out = Vec::new();
    let mut c = root.walk();
    for decl in root.named_children(&mut c).filter(|n| n.kind() == "import_declaration") {
        let mut nodes = Vec::new();
        let mut cc = decl.walk();
        for ch in decl.named_children(&mut cc) {
            match ch.kind() {
                "import_spec" => nodes.push(ch),
                "import_spec_list" => {
                    let mut lc = ch.walk();
                    nodes.extend(ch.named_children(&mut lc).filter(|s| s.kind() == "import_spec"));
                }
                _ => {}
            }
        }
        for n in nodes {
            let Some(p) = n.child_by_field_name("path") else { continue };
            let path = text[p.byte_range()].trim_matches(|c| c == '"' || c == '`').to_string();
            let alias = n.child_by_field_name("name").map(|a| text[a.byte_range()].to_string());
            out.push((n, Spec { path, alias }, binding(n, text)));
        }
    }
    out
}

/// Names the file declares as variables, parameters, constants or results (a selector on
/// one of them, `u.String()`, is not a package).
fn declared_names(root: Node, text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        let names: Vec<Node> = match n.kind() {
            "parameter_declaration" | "variadic_parameter_declaration" | "var_spec" | "const_spec" => {
                let mut c = n.walk();
                n.children_by_field_name("name", &mut c).collect()
            }
            "short_var_declaration" | "range_clause" | "type_switch_statement" => {
                let field = if n.kind() == "type_switch_statement" { "alias" } else { "left" };
                let mut c = n.walk();
                n.children_by_field_name(field, &mut c)
                    .flat_map(|l| {
                        let mut lc = l.walk();
                        let mut ids: Vec<Node> = l.named_children(&mut lc).collect();
                        ids.push(l);
                        ids
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        out.extend(names.into_iter().filter(|i| i.kind() == "identifier").map(|i| text[i.byte_range()].to_string()));
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    out
}

/// Per binding, the specs other versions import under it and use it for (a binding's
/// first such spec, by path, wins).
fn known_bindings(others: &[&str]) -> Result<BTreeMap<String, BTreeSet<Spec>>, MaskError> {
    let mut known: BTreeMap<String, BTreeSet<Spec>> = BTreeMap::new();
    for other in others {
        let tree = parse(other, "other version")?;
        let used = selector_roots(tree.root_node(), other);
        for (_, spec, b) in specs(tree.root_node(), other) {
            if let Some(b) = b.filter(|b| used.contains(b)) {
                known.entry(b).or_default().insert(spec);
            }
        }
    }
    Ok(known)
}

/// Edits that make `source`'s imports match its use of packages, by what `others` (other
/// versions of the same file) show (see the module docs). `path` names the file in errors.
pub fn reconcile_imports(source: &str, path: &str, others: &[&str]) -> Result<Vec<Edit>, MaskError> {
    let tree = parse(source, path)?;
    let root = tree.root_node();
    let used = selector_roots(root, source);
    let known = known_bindings(others)?;
    let present = specs(root, source);
    let mut edits = Vec::new();
    // Unused imports whose binding another version proves.
    let unused: Vec<Node> = present
        .iter()
        .filter(|(_, spec, b)| {
            b.as_ref().is_some_and(|b| !used.contains(b) && known.get(b).is_some_and(|s| s.contains(spec)))
        })
        .map(|(n, _, _)| *n)
        .collect();
    edits.extend(delete_specs(source, root, &unused));
    // Bindings used and not imported that another version imports.
    let bound: BTreeSet<&String> = present.iter().filter_map(|(_, _, b)| b.as_ref()).collect();
    let declared = declared_names(root, source);
    let missing: Vec<&Spec> = used
        .iter()
        .filter(|u| !bound.contains(u) && !declared.contains(*u))
        .filter_map(|u| known.get(u).and_then(|s| s.iter().next()))
        .collect();
    if let Some(edit) = insert_specs(source, root, &present, &unused, &missing) {
        edits.push(edit);
    }
    Ok(edits)
}

/// Deletions of the spec nodes `gone`; a declaration whose specs all go is deleted whole.
fn delete_specs(source: &str, root: Node, gone: &[Node]) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut c = root.walk();
    for decl in root.named_children(&mut c).filter(|n| n.kind() == "import_declaration") {
        let mine: Vec<&Node> = gone.iter().filter(|g| decl.byte_range().contains(&g.start_byte())).collect();
        if mine.is_empty() {
            continue;
        }
        let total = specs_in(decl);
        if mine.len() == total {
            let (s, e) = deletion_range(source, decl);
            edits.push(Edit::delete(s, e));
        } else {
            edits.extend(mine.into_iter().map(|g| {
                let (s, e) = deletion_range(source, *g);
                Edit::delete(s, e)
            }));
        }
    }
    edits
}

fn specs_in(decl: Node) -> usize {
    let mut count = 0;
    let mut stack = vec![decl];
    while let Some(n) = stack.pop() {
        if n.kind() == "import_spec" {
            count += 1;
            continue;
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    count
}

/// One insertion adding `missing`: into a parenthesised import list that stays, else as a
/// new declaration after the last import declaration that stays, else after the package
/// clause.
fn insert_specs(
    source: &str,
    root: Node,
    present: &[(Node, Spec, Option<String>)],
    gone: &[Node],
    missing: &[&Spec],
) -> Option<Edit> {
    if missing.is_empty() {
        return None;
    }
    let mut c = root.walk();
    let decls: Vec<Node> = root.named_children(&mut c).filter(|n| n.kind() == "import_declaration").collect();
    let stays =
        |d: &Node| present.iter().any(|(n, _, _)| d.byte_range().contains(&n.start_byte()) && !gone.contains(n));
    let list = decls.iter().filter(|d| stays(d)).find_map(|d| {
        let mut dc = d.walk();
        d.named_children(&mut dc).find(|ch| ch.kind() == "import_spec_list")
    });
    if let Some(list) = list {
        let lines: String = missing.iter().map(|s| format!("\t{}\n", s.text())).collect();
        // Before the closing parenthesis, at the start of its line.
        let close = list.end_byte() - 1;
        let at = source[..close].rfind('\n').map(|i| i + 1).filter(|&i| source[i..close].trim().is_empty());
        return Some(match at {
            Some(at) => Edit { position: at, deleted_length: 0, inserted_text: lines },
            None => Edit { position: close, deleted_length: 0, inserted_text: format!("\n{lines}") },
        });
    }
    let decl_text: String = missing.iter().map(|s| format!("import {}\n", s.text())).collect();
    let after = decls.iter().rev().find(|d| stays(d)).copied().or_else(|| {
        let mut pc = root.walk();
        root.named_children(&mut pc).find(|n| n.kind() == "package_clause")
    })?;
    Some(Edit { position: after.end_byte(), deleted_length: 0, inserted_text: format!("\n\n{}", decl_text.trim_end()) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::apply;

    fn reconciled(source: &str, others: &[&str]) -> String {
        apply(source, &reconcile_imports(source, "k.go", others).unwrap()).unwrap()
    }

    /// go-humanize `comma` / google/uuid `array`: the definition put back at its older text
    /// uses `bytes`, which the final file no longer imports, and no longer uses `strings`.
    #[test]
    fn an_older_definitions_imports_replace_the_final_files() {
        let before = "package k\n\nimport (\n\t\"bytes\"\n\t\"fmt\"\n)\n\nfunc M(b []byte) bool { return bytes.HasPrefix(b, []byte(fmt.Sprint(1))) }\n";
        let final_ = "package k\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\nfunc M(b []byte) bool { return strings.HasPrefix(string(b), fmt.Sprint(1)) }\n";
        let state = "package k\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\nfunc M(b []byte) bool { return bytes.HasPrefix(b, []byte(fmt.Sprint(1))) }\n";
        assert_eq!(
            reconciled(state, &[before, final_]),
            before.replace("\"bytes\"\n\t\"fmt\"", "\"fmt\"\n\t\"bytes\"")
        );
    }

    /// A lone import that goes takes its declaration along; one added with no import list
    /// left becomes a declaration of its own.
    #[test]
    fn a_lone_import_is_replaced_by_a_declaration_of_its_own() {
        let final_ = "package k\n\nimport \"math\"\n\nfunc F() float64 { return math.Pi }\n";
        let older = "package k\n\nimport \"os\"\n\nfunc F() float64 { return float64(os.Getpid()) }\n";
        let state = "package k\n\nimport \"math\"\n\nfunc F() float64 { return float64(os.Getpid()) }\n";
        let got = reconciled(state, &[final_, older]);
        assert!(got.contains("import \"os\"") && !got.contains("math"), "{got}");
    }

    /// Nothing another version does not show: an unused import no version uses under that
    /// binding stays (the binding may not be the package's name), a selector on a variable
    /// is not a package, and a package no version imports is not guessed.
    #[test]
    fn only_what_another_version_shows_is_touched() {
        let state = "package k\n\nimport yaml \"gopkg.in/yaml.v2\"\n\nfunc F(bytes []byte) int { return bytes.Len() + sort.X }\n";
        let other = "package k\n\nimport \"bytes\"\n\nfunc G() { bytes.NewBuffer(nil) }\n";
        assert_eq!(reconciled(state, &[other]), state);
    }
}
