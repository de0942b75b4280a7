//! The Go definition index: top-level functions, methods (`Type.Method`, the receiver in
//! the signature), and types (struct, interface, named types, aliases, with their type
//! parameters) of a set of Go files, with doc comments, imports, the package import path
//! (from the nearest `go.mod` plus the directory) in `FileIndex::module`, and the
//! definitions each one names, resolved statically.
//!
//! Two passes, as for Python: `parse` turns one file into plain data (one tree alive per
//! worker; definitions and imports from `queries/go/*.scm`, names from one cursor walk in
//! `names`), `link` resolves names across files. Both are deterministic.
//!
//! Resolution: bare names resolve to package-level functions and types of the same
//! package (directory + package clause) across its files — test files see the package's
//! other files, not the other way round; `pkg.Name` / `pkg.Type` resolve through imports of
//! in-module packages (aliases and dot imports included); `x.Method` resolves to the
//! method of `x`'s type when `x` is a parameter, receiver or `var x T` / `x := T{…}` local,
//! and otherwise, when called (`expr.M(…)`), to every method of that name in the package
//! and the in-module packages the file imports (over-approximate on purpose: a missed
//! reference would delete code that remaining code still calls); field reads and method
//! values of unknown receivers name nothing. `main` of package main is a module reference
//! (the runtime calls it). A type references its methods that implement an
//! interface of the module (or a common standard-library one such as `Error`/`String`),
//! so removing such a method from a type that stays stubs it instead of deleting it.
//! Package-level var/const initializers are `module_references`, but for elements of their
//! composite literals that only name a definition (`"date": date` of a registry map), which
//! are entry `value_bindings` the mask deletes with what they name (see `entries`).
//! Package-level vars and consts are not definitions.
//!
//! Limits, on purpose: no type inference (`x := f()` gives `x` no type); a local shadows a
//! package-level name in the whole function, not just its block; promoted methods of
//! embedded types fall back to the by-name rule; build tags and `testdata/` are ignored
//! (every `.go` file is indexed).

mod entries;
mod kinds;
mod link;
mod names;
mod parse;
mod queries;
#[cfg(test)]
pub(crate) mod tests;

use std::collections::BTreeMap;
use std::path::Path;

use rayon::prelude::*;

use crate::index::{FileIndex, IndexError, SkippedFile};
use link::GoModule;
pub(crate) use link::module_path as module_path_of;

/// Go files indexed together.
pub type GoIndex = crate::index::LanguageIndex;

fn skipped(path: &str, e: &IndexError) -> SkippedFile {
    SkippedFile { path: path.to_string(), reason: e.to_string() }
}

fn finish(parsed: Vec<(String, Result<parse::ParsedFile, IndexError>)>, modules: &[GoModule]) -> GoIndex {
    let mut ok = Vec::new();
    let mut skipped_files = Vec::new();
    for (path, r) in parsed {
        match r {
            Ok(f) => ok.push(f),
            Err(e) => skipped_files.push(skipped(&path, &e)),
        }
    }
    skipped_files.sort_by(|a, b| a.path.cmp(&b.path));
    let (files, definitions) = link::link(ok, modules);
    GoIndex { files, definitions, skipped: skipped_files, config_references: Vec::new() }
}

/// Index files held in memory: `(repository-relative path, bytes)`. `go.mod` files among
/// them give the modules' paths; other non-`.go` entries are ignored.
pub fn index_sources(sources: &[(String, Vec<u8>)]) -> GoIndex {
    let mut modules: Vec<GoModule> = sources
        .iter()
        .filter(|(p, _)| p == "go.mod" || p.ends_with("/go.mod"))
        .filter_map(|(p, b)| {
            let path = link::module_path(std::str::from_utf8(b).ok()?)?;
            Some(GoModule { dir: p.strip_suffix("go.mod").unwrap_or("").trim_end_matches('/').to_string(), path })
        })
        .collect();
    modules.sort_by(|a, b| a.dir.cmp(&b.dir));
    let go: Vec<&(String, Vec<u8>)> = sources.iter().filter(|(p, _)| p.ends_with(".go")).collect();
    let parsed = go
        .par_iter()
        .map_init(parse::new_parser, |parser, (path, bytes)| (path.clone(), parse::parse_file(parser, path, bytes)))
        .collect();
    finish(parsed, &modules)
}

/// The modules enclosing `paths`: every `go.mod` found in their directories or above them,
/// up to `root`.
fn find_modules(root: &Path, paths: &[String]) -> Vec<GoModule> {
    let mut dirs: BTreeMap<String, Option<GoModule>> = BTreeMap::new();
    for p in paths {
        let mut dir = p.rsplit_once('/').map(|(d, _)| d.to_string()).unwrap_or_default();
        loop {
            if dirs.contains_key(&dir) {
                break;
            }
            let go_mod = root.join(&dir).join("go.mod");
            let module = std::fs::read_to_string(&go_mod)
                .ok()
                .and_then(|t| link::module_path(&t))
                .map(|path| GoModule { dir: dir.clone(), path });
            dirs.insert(dir.clone(), module);
            if dir.is_empty() {
                break;
            }
            dir = dir.rsplit_once('/').map(|(d, _)| d.to_string()).unwrap_or_default();
        }
    }
    dirs.into_values().flatten().collect()
}

/// Index the Go files `paths` (repository-relative, `/`-separated) under `root`, reading
/// the `go.mod` files above them for import paths.
pub fn index_files(root: &Path, paths: &[String]) -> GoIndex {
    let modules = find_modules(root, paths);
    let parsed = crate::walk::parse_files(root, paths, parse::new_parser, parse::parse_file);
    finish(paths.iter().cloned().zip(parsed).collect(), &modules)
}

/// The test function a `go test` id (`importpath/TestX/sub`, as the Go runner reports it)
/// runs: the `TestX` (or `BenchmarkX`, `ExampleX`, `FuzzX`) function of a test file of the
/// package `importpath`. `None` when no indexed test file of that package defines it.
pub fn test_definition(index: &crate::index::DefinitionIndex, test_id: &str) -> Option<crate::index::NodeId> {
    let mut candidates: Vec<(&str, &FileIndex)> = index
        .files
        .values()
        .filter(|f| f.language == crate::Language::Go && f.is_test)
        .filter_map(|f| {
            let module = f.module.as_deref()?;
            let rest = test_id.strip_prefix(module)?.strip_prefix('/')?;
            Some((rest, f))
        })
        .collect();
    // The longest import path first: `a/b/TestX` is in package `a/b`, not `a`.
    candidates.sort_by_key(|(rest, f)| (rest.len(), f.path.clone()));
    candidates.into_iter().find_map(|(rest, f)| {
        let name = rest.split('/').next()?;
        f.definitions
            .iter()
            .find(|id| {
                index.get(id).is_some_and(|d| d.qualname == name && d.kind == crate::index::DefinitionKind::Function)
            })
            .cloned()
    })
}

/// The definition a `go test` example documents, by Go's naming rule for examples:
/// `importpath/ExampleF` → func or type `F`, `ExampleT_M` → method `T.M`, each optionally
/// followed by `_suffix` (lower-case first letter), in the package's non-test files. A
/// package's example (`Example`, `Example_suffix`) and a name the package does not define
/// have none.
pub fn example_owner(index: &crate::index::DefinitionIndex, test_id: &str) -> Option<crate::index::NodeId> {
    if test_id.contains("::") || test_id.contains(" > ") {
        return None;
    }
    let (package, name) = test_id.rsplit_once('/')?;
    let rest = name.strip_prefix("Example")?;
    let parts: Vec<&str> = rest.split('_').collect();
    let upper = |p: &str| p.chars().next().is_some_and(char::is_uppercase);
    if !parts.first().is_some_and(|p| upper(p)) {
        return None;
    }
    let wanted = match parts.get(1) {
        Some(m) if upper(m) => format!("{}.{}", parts[0], m),
        _ => parts[0].to_string(),
    };
    index
        .files
        .values()
        .filter(|f| f.language == crate::Language::Go && !f.is_test && f.module.as_deref() == Some(package))
        .flat_map(|f| f.definitions.iter())
        .find(|id| index.get(id).is_some_and(|d| d.qualname == wanted))
        .cloned()
}

/// Why a `go test` id names no test function.
pub(crate) fn go_miss(index: &crate::index::DefinitionIndex, test: &str) -> String {
    let package = index
        .files
        .values()
        .filter(|f| f.language == crate::Language::Go && f.is_test)
        .filter_map(|f| f.module.as_deref())
        .filter(|m| test.strip_prefix(*m).is_some_and(|r| r.starts_with('/')))
        .max_by_key(|m| m.len());
    match package {
        Some(p) => {
            let name = test[p.len() + 1..].split('/').next().unwrap_or("");
            format!("no `_test.go` file of package {p} defines func {name}")
        }
        None => format!("no indexed `_test.go` file belongs to a package that {test} starts with"),
    }
}

/// Go test code: `*_test.go` files.
pub fn is_test_path(rel: &str) -> bool {
    rel.rsplit('/').next().is_some_and(|name| name.ends_with("_test.go"))
}
