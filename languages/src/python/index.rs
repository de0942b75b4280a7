//! The Python definition index: every function, method and class (nested ones included)
//! of a set of Python files, with signatures, docstrings, imports, `__all__`, and the
//! definitions each one names, resolved statically.
//!
//! Two passes. `parse` reads one file at a time (one tree alive per worker, dropped when
//! the file is done) and keeps plain data; `link` resolves names across files. Both run
//! in parallel with rayon; results are sorted, so the index is deterministic.
//!
//! What resolution understands: top-level and nested definitions; `import m`,
//! `import a.b as c`, `from m import x as y`, relative imports, `from m import *`,
//! re-exports through any chain of modules (typically a package `__init__.py`); absolute
//! imports looked up under the repository root, `src/`, and the importing file's first
//! non-package ancestor directory (what pytest and scripts put on `sys.path`); Python's
//! scopes (parameters and assigned names shadow, `global`/`nonlocal` do not, class
//! bodies are invisible to methods); `mod.attr`, `Class.method`, `self.method` /
//! `cls.method` (including methods inherited from repository base classes).
//!
//! Limits, on purpose: no type inference (`obj.method()` on a local or parameter resolves
//! to nothing, nor does `super().method()`); names bound by assignment at module level
//! (`handler = make()`) are not definitions; comprehension and lambda variables do not
//! shadow; `__all__` is read only from literal lists/tuples; conditional imports are
//! taken as written (the binding in effect by position, else the last one), so
//! `self.prop` names the last definition of a property (its setter, whose decorator in
//! turn needs the getter). Unresolved names are dropped: references only ever point at
//! definitions in the index.
//!
//! Shape of the result: `import a, b` gives one [`Import`](crate::index::Import) per
//! module (sharing the statement's span) with no names; `from m import *` lists one name
//! `*` without a target; `from __future__ import x` is listed with module `__future__`.
//! A name's `target` is a definition (never a module); `resolved_path` may name a file
//! that was skipped for a syntax error.

mod link;
mod modules;
mod parse;
mod queries;
mod signature;
#[cfg(test)]
mod tests;

pub use modules::is_test_path;

use std::path::Path;

use rayon::prelude::*;

use crate::index::{Definition, FileIndex, IndexError};

/// Python files indexed together.
pub type PythonIndex = crate::index::LanguageIndex;

/// Index one file on its own (imports resolve only to itself). `path` is the file's
/// repository-relative, `/`-separated path; it decides the module name and test status.
pub fn index_source(path: &str, source: &[u8]) -> Result<(FileIndex, Vec<Definition>), IndexError> {
    let parsed = parse::parse_file(&mut parse::new_parser(), path, source)?;
    let all_paths = [path.to_string()];
    let files = [parsed];
    let linker = link::Linker::new(&files, &all_paths);
    Ok(linker.link_file(0))
}

/// Index files held in memory: `(repository-relative path, bytes)`.
pub fn index_sources(sources: &[(String, Vec<u8>)]) -> PythonIndex {
    let paths: Vec<String> = sources.iter().map(|(p, _)| p.clone()).collect();
    let parsed: Vec<Result<parse::ParsedFile, IndexError>> = sources
        .par_iter()
        .map_init(parse::new_parser, |parser, (path, bytes)| parse::parse_file(parser, path, bytes))
        .collect();
    finish(paths, parsed)
}

/// Index the files `paths` (repository-relative, `/`-separated) under `root`. Each file is
/// read, parsed and reduced to plain data by one worker; unreadable or unparsable files
/// are skipped and reported.
pub fn index_files(root: &Path, paths: &[String]) -> PythonIndex {
    let parsed = crate::walk::parse_files(root, paths, parse::new_parser, parse::parse_file);
    let mut index = finish(paths.to_vec(), parsed);
    index.config_references = config_references(root, &index.definitions);
    index
}

/// The test-configuration files at the repository's root whose dotted names pytest imports
/// (`filterwarnings`, `-p` plugins and the like).
const CONFIG_FILES: [&str; 4] = ["pyproject.toml", "pytest.ini", "setup.cfg", "tox.ini"];

/// Top-level definitions the root's test-configuration files name by dotted path
/// (`pkg.warnings.InsecureKeyWarning`, found as `pkg/warnings.py`, `pkg/warnings/__init__.py`
/// or the same under `src/`).
fn config_references(root: &Path, definitions: &[Definition]) -> Vec<crate::index::ConfigReference> {
    let top: std::collections::BTreeSet<&str> =
        definitions.iter().filter(|d| d.parent.is_none()).map(|d| d.id.as_str()).collect();
    let mut out = Vec::new();
    for name in CONFIG_FILES {
        let Ok(text) = std::fs::read_to_string(root.join(name)) else { continue };
        for (i, line) in text.lines().enumerate() {
            for dotted in dotted_names(line) {
                let Some((module, def)) = dotted.rsplit_once('.') else { continue };
                let m = module.replace('.', "/");
                let candidates = [
                    format!("{m}.py"),
                    format!("{m}/__init__.py"),
                    format!("src/{m}.py"),
                    format!("src/{m}/__init__.py"),
                ];
                if let Some(id) = candidates.iter().map(|f| format!("{f}::{def}")).find(|id| top.contains(id.as_str()))
                {
                    out.push(crate::index::ConfigReference {
                        path: name.to_string(),
                        line: i + 1,
                        target: id,
                        removable: lone_entry(line, dotted),
                    });
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Whether `line` holds one list entry naming `dotted` and nothing else: a quoted TOML array
/// element (`    "ignore::pkg.W",`) or an indented ini continuation line (`    ignore::pkg.W`),
/// so that deleting the line leaves the list valid.
fn lone_entry(line: &str, dotted: &str) -> bool {
    let indented = line.starts_with([' ', '\t']);
    let entry = line.trim().trim_end_matches(',').trim_end();
    let quoted = |q: char| entry.len() >= 2 && entry.starts_with(q) && entry.ends_with(q);
    let inner = if quoted('"') || quoted('\'') { &entry[1..entry.len() - 1] } else { entry };
    let plain = !inner.contains(['"', '\'', '=', '[', ']', ',', '#', ' ']);
    indented && plain && inner.contains(dotted)
}

/// The dotted names (`a.b.C`, two parts at least) in `line`.
fn dotted_names(line: &str) -> Vec<&str> {
    let is_part = |c: char| c.is_alphanumeric() || c == '_' || c == '.';
    line.split(|c: char| !is_part(c))
        .map(|w| w.trim_matches('.'))
        .filter(|w| {
            w.contains('.') && w.split('.').all(|p| p.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_'))
        })
        .collect()
}

fn finish(mut paths: Vec<String>, results: Vec<Result<parse::ParsedFile, IndexError>>) -> PythonIndex {
    let (files, skipped) = crate::index::split_parsed(paths.iter().zip(results), |f| &f.path);
    paths.sort();
    paths.dedup();
    let linker = link::Linker::new(&files, &paths);
    let linked: Vec<(FileIndex, Vec<Definition>)> =
        (0..files.len()).into_par_iter().map(|i| linker.link_file(i)).collect();
    PythonIndex::from_linked(linked, skipped)
}
