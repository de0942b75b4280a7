//! The Rust definition index: free functions, inherent methods (`Type.method`), trait impl
//! methods (`Type.<Trait>.method`), trait items (`Trait.method`), structs, unions, enums,
//! traits, type aliases, impl blocks (`Type.<impl>` / `Type.<Trait>`, kind `Impl`), inline
//! modules (their names prefix the qualnames of what they contain: `shapes.Circle.area`)
//! and `macro_rules!` macros. Test code: files of a package's `tests/` directory, items
//! inside `#[cfg(test)]` modules (inline, or `#[cfg(test)] mod x;` files), and items with
//! a test attribute (`#[test]`, `#[tokio::test]` …).
//!
//! Two passes, as for Python: `parse` reads each file's tree once (one tree alive per
//! worker) and keeps plain data; `link` resolves paths across files. Which nodes are items,
//! attributes, doc comments and `use` items, and where an item's name and body are, comes
//! from `queries/rust/definitions.scm`, run on each item list (the file, then each `mod`,
//! `impl` and `trait` body) with a maximum start depth of one, so the query never walks
//! into function bodies. The names an item uses come from one cursor walk over it
//! (`refs`), which costs a fraction of a whole-tree query (see the `index_speed` benchmark).
//!
//! Shape of the result: spans cover an item's attributes and `///` docs; `body` is the
//! block (functions), the field or variant list, or the `{ … }` of an impl, trait or
//! module. An impl's `parent` is the definition of its type when that resolves (possibly
//! in another file), so removing a type takes its impls along; its trait is a
//! `load_references` entry (`base_class`), and a trait impl's type is one too
//! (`implementation`: the classifier keeps a trait impl while its type and trait stay, as
//! the mask does — `dyn` coercions, bounds and formatting use an impl by no path). A trait
//! impl's methods reference the trait items they implement. A struct's or enum's `signature.text` is the whole item (fields
//! and variants); a function's is its header up to the body; `receiver` is the self
//! parameter (`&mut self`). One [`Import`](crate::index::Import) per `use` item, with one
//! name per leaf of its tree (`b::C` for `use a::{b::C}`, `*` for globs).
//!
//! Limits, on purpose: no type inference — a method call `x.f()` names every method `f`
//! of the package; macros resolve by name within the package; items inside function
//! bodies are part of that function; `#[path]` attributes and `include!` are not followed;
//! `src/lib.rs` and `src/main.rs` share one namespace.

pub(super) mod crates;
mod link;
pub(super) mod parse;
mod refs;
#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod tests_support {
    pub(crate) use super::tests::{fixture_index, fixture_root};
}

pub use crates::is_test_path;
pub(crate) use parse::is_test_attribute;

use std::collections::HashMap;
use std::path::Path;

use rayon::prelude::*;

use crate::index::{Definition, FileIndex, IndexError};

/// Rust files indexed together.
pub type RustIndex = crate::index::LanguageIndex;

/// Index one file on its own (paths resolve only within it).
pub fn index_source(path: &str, source: &[u8]) -> Result<(FileIndex, Vec<Definition>), IndexError> {
    let parsed = parse::parse_file(&mut parse::new_parser(), path, source)?;
    let files = [parsed];
    let linker = link::Linker::new(&files, HashMap::new());
    Ok(linker.link_file(0))
}

/// Index files held in memory: `(repository-relative path, bytes)`. `Cargo.toml` entries
/// among them give the packages' crate names; other non-`.rs` entries are ignored.
pub fn index_sources(sources: &[(String, Vec<u8>)]) -> RustIndex {
    let mut crate_names = HashMap::new();
    for (path, bytes) in sources {
        if let Some(dir) = manifest_dir(path)
            && let Some(name) = package_name(&String::from_utf8_lossy(bytes))
        {
            crate_names.insert(dir.to_string(), name);
        }
    }
    let rs: Vec<&(String, Vec<u8>)> = sources.iter().filter(|(p, _)| p.ends_with(".rs")).collect();
    let paths: Vec<String> = rs.iter().map(|(p, _)| p.clone()).collect();
    let parsed = rs
        .par_iter()
        .map_init(parse::new_parser, |parser, (path, bytes)| parse::parse_file(parser, path, bytes))
        .collect();
    finish(paths, parsed, crate_names)
}

/// Index the `.rs` files `paths` (repository-relative) under `root`; each package's
/// `Cargo.toml` (found next to `src/`, `tests/` …) names its crate.
pub fn index_files(root: &Path, paths: &[String]) -> RustIndex {
    let mut crate_names = HashMap::new();
    for p in paths {
        let package = crates::locate(p).package;
        if crate_names.contains_key(&package) {
            continue;
        }
        let manifest =
            if package.is_empty() { root.join("Cargo.toml") } else { root.join(&package).join("Cargo.toml") };
        let name = std::fs::read_to_string(manifest).ok().and_then(|t| package_name(&t));
        crate_names.insert(package, name.unwrap_or_default());
    }
    crate_names.retain(|_, v| !v.is_empty());
    let parsed = crate::walk::parse_files(root, paths, parse::new_parser, parse::parse_file);
    finish(paths.to_vec(), parsed, crate_names)
}

fn manifest_dir(path: &str) -> Option<&str> {
    if path == "Cargo.toml" {
        return Some("");
    }
    path.strip_suffix("/Cargo.toml")
}

/// `name = "…"` of the `[package]` table (or `[lib]`, which overrides it).
pub(crate) fn package_name(manifest: &str) -> Option<String> {
    let mut table = "";
    let mut package = None;
    let mut lib = None;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            table = line;
            continue;
        }
        let Some(value) = line.strip_prefix("name").map(str::trim_start).and_then(|r| r.strip_prefix('=')) else {
            continue;
        };
        let value = value.trim().trim_matches('"').to_string();
        match table {
            "[package]" => package = Some(value),
            "[lib]" => lib = Some(value),
            _ => {}
        }
    }
    lib.or(package).map(|n| n.replace('-', "_"))
}

fn finish(
    mut paths: Vec<String>,
    results: Vec<Result<parse::ParsedFile, IndexError>>,
    crate_names: HashMap<String, String>,
) -> RustIndex {
    let (files, skipped) = crate::index::split_parsed(paths.iter().zip(results), |f| &f.path);
    paths.sort();
    let linker = link::Linker::new(&files, crate_names);
    let linked: Vec<(FileIndex, Vec<Definition>)> =
        (0..files.len()).into_par_iter().map(|i| linker.link_file(i)).collect();
    RustIndex::from_linked(linked, skipped)
}
