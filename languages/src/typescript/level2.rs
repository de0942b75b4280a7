//! TypeScript Level 2 (from scratch): the feature is written as the module
//! `agent_code/index.ts` at the project root, and the F2P test files import its objects from
//! there: `import { X, helper } from "../src/m.js"` (X extracted) becomes
//! `import { X } from "../agent_code/index.js"` and `import { helper } from "../src/m.js"`
//! (the specifier keeps the original's extension style: `.js`, `.ts` or none).
//!
//! The reference solution runs a copy of the feature's original code beside the masked
//! project, as Python's and Go's do: every file holding an extracted definition is copied
//! whole to `agent_code/<its path>` (a relative import of another copied file keeps its
//! specifier, one of a file that is not copied points back at the project's), and
//! `agent_code/index.ts` re-exports the feature's names from the copies. The gold patch is
//! the package alone, so `level2-reference` proves that a package written from scratch can
//! pass the rewritten tests with the project left masked (a test that reaches the feature
//! through code that stays fails there, and the task is refused).
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
        let ext = test_import_extension(sources.index);
        let mut out = String::from("// Reference solution: re-exports the copy of the original implementation.\n");
        for (module, name) in sources.names {
            let _ = writeln!(out, "export {{ {name} }} from \"{}\";", specifier_of(&format!("./{module}"), ext));
        }
        Ok(out)
    }

    /// The init file, then a copy of each file of the feature's code ([`copy_of`]).
    fn reference_files(&self, sources: &Level2Sources<'_>) -> Result<Vec<(String, String)>, String> {
        let dir = package_dir(sources.package);
        let copied = feature_files(sources);
        let mut files = vec![(self.init_file(sources.package), self.reference(sources)?)];
        for path in &copied {
            let full = sources.root.join(path);
            let text = std::fs::read_to_string(&full)
                .map_err(|e| format!("cannot read {} to copy it into the package: {e}", full.display()))?;
            let copy = match sources.index.files.get(path) {
                Some(file) => copy_of(&text, file, &copied, dir)?,
                None => text,
            };
            files.push((format!("{dir}/{path}"), copy));
        }
        Ok(files)
    }

    /// The reference re-exports its own copy of the feature: the project stays masked.
    fn reference_restores_original(&self) -> bool {
        false
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

/// A specifier for the repository-relative file `path` written as `./…` or `../…`: a
/// JavaScript file keeps its extension, a TypeScript one is written with `ext` instead.
fn specifier_of(path: &str, ext: &str) -> String {
    let stripped = strip_ts_extension(path);
    if stripped == path && !extension_of(path).is_empty() { path.to_string() } else { format!("{stripped}{ext}") }
}

/// The files of the feature's code: every non-test file that holds an extracted definition
/// or a name the package exposes (repository-relative, sorted).
fn feature_files(sources: &Level2Sources<'_>) -> BTreeSet<String> {
    let is_source = |path: &str| sources.index.files.get(path).is_none_or(|f| !f.is_test);
    let extracted = sources.extracted.iter().filter_map(|id| sources.index.get(id)).map(|d| d.path.clone());
    let named = sources.names.iter().map(|(module, _)| module.clone());
    extracted.chain(named).filter(|p| is_source(p)).collect()
}

/// `source`, the original text of `file`, as its copy `<dir>/<file.path>`: each relative
/// specifier of its imports and re-exports that names a file not `copied` is rewritten to
/// point at the project's file from the copy's folder (the others keep theirs: the copies
/// keep the project's layout).
fn copy_of(source: &str, file: &FileIndex, copied: &BTreeSet<String>, dir: &str) -> Result<String, String> {
    let folder = file.path.rsplit_once('/').map_or("", |(d, _)| d);
    let copy = format!("{dir}/{}", file.path);
    let mut edits = Vec::new();
    for imp in file.imports.iter().filter(|i| i.module.starts_with('.')) {
        if imp.resolved_path.as_ref().is_some_and(|p| copied.contains(p)) {
            continue;
        }
        let Some(target) = crate::typescript::index::link::normalize(&format!("{folder}/{}", imp.module)) else {
            continue;
        };
        let (start, end) = (imp.span.start_byte, imp.span.end_byte);
        let Some(stmt) = source.get(start..end) else { continue };
        let found = ['"', '\''].iter().find_map(|q| stmt.rfind(&format!("{q}{}{q}", imp.module)));
        let Some(at) = found else { continue };
        let at = start + at + 1;
        edits.push(Edit::replace(at, at + imp.module.len(), relative(&copy, &target)));
    }
    crate::edit::apply(source, &edits).map_err(|e| format!("cannot copy {} into the package: {e}", file.path))
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

    /// A copy's relative imports of files that are not copied point back at the project's,
    /// from the copy's folder; those of copied files, and package imports, stay as written.
    #[test]
    fn a_copy_imports_what_stays_from_the_project() {
        let source = "import { a } from \"./util/a.js\";\nimport { b } from '../lib/b';\nexport { c } from \"./c.js\";\nimport { it } from \"vitest\";\nexport const f = () => a + b;\n";
        let sources: Vec<(String, Vec<u8>)> = [
            ("src/m.ts", source),
            ("src/util/a.ts", "export const a = 1;\n"),
            ("lib/b.ts", "export const b = 2;\n"),
            ("src/c.ts", "export const c = 3;\n"),
        ]
        .iter()
        .map(|(p, s)| (p.to_string(), s.as_bytes().to_vec()))
        .collect();
        let index = DefinitionIndex::from_sources(&sources);
        let copied: BTreeSet<String> = ["src/m.ts", "src/c.ts"].iter().map(|p| p.to_string()).collect();
        let copy = copy_of(source, &index.files["src/m.ts"], &copied, "agent_code").unwrap();
        assert_eq!(
            copy,
            "import { a } from \"../../src/util/a.js\";\nimport { b } from '../../lib/b';\nexport { c } from \"./c.js\";\nimport { it } from \"vitest\";\nexport const f = () => a + b;\n"
        );
        assert_eq!(specifier_of("./src/m.ts", ".js"), "./src/m.js");
        assert_eq!(specifier_of("./src/m.mjs", ""), "./src/m.mjs");
    }
}
