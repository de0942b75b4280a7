//! TypeScript Level 2 (from scratch): the feature is written as the module
//! `agent_code/index.ts` at the project root, and the F2P test files import its objects from
//! there: `import { X, helper } from "../src/m.js"` (X extracted) becomes
//! `import { X } from "../agent_code/index.js"` and `import { helper } from "../src/m.js"`
//! (the specifier keeps the original's extension style: `.js`, `.ts` or none).
//!
//! The reference solution re-exports the original implementation (`export { X } from
//! "../src/m.js";`), as Python's does, so the Level 2 gold patch restores the repository too.
//!
//! Limits, on purpose: only named imports move (a statement that also has a default or
//! namespace binding is left as it is, and so is `m.X` through `import * as m`); only
//! module-level definitions move.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::edit::Edit;
use crate::index::{DefinitionIndex, FileIndex, NodeId};
use crate::interface::{Level2Packaging, Level2Sources};

/// TypeScript's Level 2 packaging.
pub struct TypeScriptLevel2;

fn package_dir(package: &str) -> &str {
    package.rsplit('/').next().unwrap_or(package)
}

/// The extension a relative specifier is written with: `.js`, `.ts`, `.mjs`… or none.
fn extension_of(spec: &str) -> &str {
    let last = spec.rsplit('/').next().unwrap_or(spec);
    match last.rfind('.') {
        Some(i) if i > 0 => &last[i..],
        _ => "",
    }
}

/// `to` (repository-relative, without extension) as a specifier relative to the folder of
/// the repository-relative file `from`.
fn relative(from: &str, to: &str) -> String {
    let from_dir: Vec<&str> =
        from.split('/').collect::<Vec<_>>().split_last().map(|(_, d)| d.to_vec()).unwrap_or_default();
    let to_parts: Vec<&str> = to.split('/').collect();
    let common = from_dir.iter().zip(&to_parts).take_while(|(a, b)| a == b).count();
    let ups = from_dir.len() - common;
    let rest = to_parts[common..].join("/");
    if ups == 0 { format!("./{rest}") } else { format!("{}{rest}", "../".repeat(ups)) }
}

fn strip_ts_extension(path: &str) -> &str {
    for ext in [".d.ts", ".tsx", ".mts", ".cts", ".ts"] {
        if let Some(p) = path.strip_suffix(ext) {
            return p;
        }
    }
    path
}

/// The extension the repository's test files write relative specifiers with (the most
/// common one among their imports; `.js` on a tie).
fn test_import_extension(index: &DefinitionIndex) -> &'static str {
    let (mut js, mut none, mut ts) = (0usize, 0usize, 0usize);
    for f in index.files.values().filter(|f| f.is_test) {
        for imp in f.imports.iter().filter(|i| i.module.starts_with('.')) {
            match extension_of(&imp.module) {
                ".js" => js += 1,
                ".ts" => ts += 1,
                "" => none += 1,
                _ => {}
            }
        }
    }
    if none > js && none >= ts {
        ""
    } else if ts > js {
        ".ts"
    } else {
        ".js"
    }
}

impl Level2Packaging for TypeScriptLevel2 {
    fn init_file(&self, package: &str) -> String {
        format!("{}/index.ts", package_dir(package))
    }

    fn reference(&self, sources: &Level2Sources<'_>) -> Result<String, String> {
        let dir = package_dir(sources.package);
        let ext = test_import_extension(sources.index);
        let mut out = String::from("// Reference solution: re-exports the original implementation.\n");
        for (module, name) in sources.names {
            let spec = relative(&format!("{dir}/index.ts"), strip_ts_extension(module));
            let _ = writeln!(out, "export {{ {name} }} from \"{spec}{ext}\";");
        }
        Ok(out)
    }

    fn empty(&self, _package: &str) -> String {
        "// Empty solution: exports nothing.\nexport {};\n".to_string()
    }

    fn describe(&self, package: &str) -> String {
        let dir = package_dir(package);
        format!(
            "a TypeScript module `{dir}/index.ts` at the project root (the folder\n`{dir}/`), which the tests import"
        )
    }

    fn import_line(&self, package: &str, name: &str) -> String {
        format!("import {{ {name} }} from \"./{}/index.js\";", package_dir(package))
    }

    fn rewrite_test_imports(
        &self,
        _root: &std::path::Path,
        source: &str,
        file: &FileIndex,
        index: &DefinitionIndex,
        extracted: &BTreeSet<NodeId>,
        package: &str,
    ) -> Vec<Edit> {
        rewrite(source, file, index, extracted, package)
    }
}

fn rewrite(
    source: &str,
    file: &FileIndex,
    index: &DefinitionIndex,
    extracted: &BTreeSet<NodeId>,
    package: &str,
) -> Vec<Edit> {
    let movable = |id: &Option<NodeId>| {
        id.as_ref().is_some_and(|t| extracted.contains(t) && index.get(t).is_some_and(|d| d.parent.is_none()))
    };
    let mut edits = Vec::new();
    for imp in file.imports.iter().filter(|i| i.module_level && !i.names.is_empty()) {
        let (start, end) = (imp.span.start_byte, imp.span.end_byte);
        let Some(stmt) = source.get(start..end) else { continue };
        if !stmt.starts_with("import") || !imp.names.iter().any(|n| movable(&n.target)) {
            continue;
        }
        if imp.names.iter().any(|n| n.name == "default" || n.name == "*") {
            continue;
        }
        let spec_text = |n: &crate::index::ImportedName| source.get(n.span.start_byte..n.span.end_byte).map(str::trim);
        let (go, stay): (Vec<_>, Vec<_>) = imp.names.iter().partition(|n| movable(&n.target));
        let (Some(go), Some(stay)) = (
            go.iter().map(|n| spec_text(n)).collect::<Option<Vec<_>>>(),
            stay.iter().map(|n| spec_text(n)).collect::<Option<Vec<_>>>(),
        ) else {
            continue;
        };
        let head = if stmt.starts_with("import type") { "import type" } else { "import" };
        let semi = if stmt.trim_end().ends_with(';') { ";" } else { "" };
        let target = relative(&file.path, &format!("{}/index", package_dir(package)));
        let mut text = format!("{head} {{ {} }} from \"{target}{}\"{semi}", go.join(", "), extension_of(&imp.module));
        if !stay.is_empty() {
            let quote = if stmt.contains('\'') && !stmt.contains('"') { '\'' } else { '"' };
            let _ = write!(text, "\n{head} {{ {} }} from {quote}{}{quote}{semi}", stay.join(", "), imp.module);
        }
        edits.push(Edit::replace(start, end, text));
    }
    edits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specifiers_are_relative_to_the_importing_file() {
        assert_eq!(relative("tests/a.test.ts", "agent_code/index"), "../agent_code/index");
        assert_eq!(relative("a.test.ts", "agent_code/index"), "./agent_code/index");
        assert_eq!(relative("agent_code/index.ts", "src/money/money"), "../src/money/money");
        assert_eq!(relative("packages/x/tests/t.ts", "agent_code/index"), "../../../agent_code/index");
        assert_eq!(extension_of("../src/m.js"), ".js");
        assert_eq!(extension_of("../src/m"), "");
        assert_eq!(extension_of("../src/.hidden/m"), "");
    }
}
