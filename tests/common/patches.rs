//! The patch contract of every Level 1 bundle the end-to-end tests make (issue 29, item 8):
//! `mask.patch` removes the feature's code and the F2P tests, `test.patch` alone puts the F2P
//! tests back (so a harness that applies the agent's patch and then `test_patch` gets the
//! hidden tests), `gold.patch` holds no test code, and gold + test in either order give the
//! original files. [`check_tasks_out`] runs after every `carve tasks` of the tests
//! (`carve_ok`), so no fixture bundle escapes it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use carve_core::patch::{apply_patch, patch_paths};
use carve_languages::index::DefinitionIndex;

/// Check every Level 1 bundle under `out` (folders holding an `instance.json`) against the
/// repository `repo` it was carved from. Returns how many bundles were checked.
pub fn check_tasks_out(repo: &Path, out: &Path) -> usize {
    let mut bundles = Vec::new();
    find_bundles(out, &mut bundles);
    let mut checked = 0;
    for bundle in bundles {
        let inst: serde_json::Value = serde_json::from_str(&super::read(&bundle.join("instance.json"))).unwrap();
        if inst["level"].as_u64() == Some(1) {
            check_bundle(repo, &bundle, &inst);
            checked += 1;
            let lines = |f: &str| super::read(&bundle.join(f)).lines().count();
            eprintln!(
                "patch contract ok: {} (gold.patch {} lines, test.patch {} lines)",
                bundle.file_name().unwrap().to_string_lossy(),
                lines("gold.patch"),
                lines("test.patch")
            );
        }
    }
    checked
}

fn find_bundles(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries.into_iter().filter(|p| p.is_dir() && !p.is_symlink()) {
        if p.join("instance.json").is_file() && p.join("mask.patch").is_file() {
            out.push(p);
        } else {
            find_bundles(&p, out);
        }
    }
}

/// The files `patch_paths` names, copied from `repo` (those that exist) into a new folder.
fn small_tree(repo: &Path, files: &BTreeSet<String>, at: &Path) {
    for rel in files {
        let src = repo.join(rel);
        if src.is_file() {
            std::fs::create_dir_all(at.join(rel).parent().unwrap()).unwrap();
            std::fs::copy(&src, at.join(rel)).unwrap();
        }
    }
    std::fs::create_dir_all(at).unwrap();
}

fn contents(root: &Path, files: &BTreeSet<String>) -> BTreeMap<String, Option<String>> {
    files.iter().map(|f| (f.clone(), std::fs::read_to_string(root.join(f)).ok())).collect()
}

/// One bundle: see the module's documentation.
pub fn check_bundle(repo: &Path, bundle: &Path, inst: &serde_json::Value) {
    let name = bundle.display();
    let read = |f: &str| super::read(&bundle.join(f));
    let (mask, gold, test) = (read("mask.patch"), read("gold.patch"), read("test.patch"));
    assert_eq!(inst["test_patch"].as_str(), Some(test.as_str()), "{name}: instance.json test_patch is not test.patch");
    assert_eq!(inst["patch"].as_str(), Some(gold.as_str()), "{name}: instance.json patch is not gold.patch");
    let touched: BTreeSet<String> = patch_paths(&mask).into_iter().collect();
    for p in patch_paths(&gold).into_iter().chain(patch_paths(&test)) {
        assert!(touched.contains(&p), "{name}: {p} is patched but mask.patch does not touch it");
    }
    let work = tempfile::tempdir().unwrap();
    let scratch = work.path().join("p.patch");
    // masked, masked + gold, masked + test, masked + gold + test, masked + test + gold.
    let state = |label: &str, patches: &[(&str, &str)]| -> BTreeMap<String, Option<String>> {
        let tree = work.path().join(label);
        small_tree(repo, &touched, &tree);
        for (which, patch) in [("mask.patch", mask.as_str())].iter().chain(patches) {
            if let Err(e) = apply_patch(&tree, patch, false, &scratch) {
                panic!("{name}: {which} does not apply after {label:?}: {e}");
            }
        }
        contents(&tree, &touched)
    };
    let original = contents(repo, &touched);
    let masked = state("masked", &[]);
    let with_gold = state("masked+gold", &[("gold.patch", &gold)]);
    let with_test = state("masked+test", &[("test.patch", &test)]);
    for (label, order) in [
        ("gold then test", [("gold.patch", &gold), ("test.patch", &test)]),
        ("test then gold", [("test.patch", &test), ("gold.patch", &gold)]),
    ] {
        let order: Vec<(&str, &str)> = order.iter().map(|(n, p)| (*n, p.as_str())).collect();
        assert_eq!(
            state(label, &order),
            original,
            "{name}: masked + {label} is not the original for the touched files"
        );
    }

    let index = index_of(repo, &touched);
    // Every change of a test file is test code: gold leaves test files as masked, test.patch
    // alone gives them back whole.
    for (rel, file) in &index.files {
        if file.is_test {
            assert_eq!(with_gold[rel], masked[rel], "{name}: gold.patch changes the test file {rel}");
            assert_eq!(with_test[rel], original[rel], "{name}: test.patch does not give back the test file {rel}");
        }
    }
    // The F2P tests' own code: removed by the mask, back with test.patch alone, never with gold.
    let mut removed = 0;
    for t in inst["FAIL_TO_PASS"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()) {
        if carve_languages::doctest_owner(&index, t).is_some() {
            continue; // a doctest leaves with the definition that holds it: it is the feature's text
        }
        let Ok(ids) = carve_languages::test_definitions(repo, &index, t) else {
            continue; // its file is not touched: the test was not removed
        };
        for id in ids {
            let d = &index.definitions[&id];
            let text = &original[&d.path].as_deref().unwrap()[d.span.start_byte..d.span.end_byte];
            let has = |s: &BTreeMap<String, Option<String>>| s[&d.path].as_deref().is_some_and(|f| f.contains(text));
            if has(&masked) {
                continue; // kept (a test of a class that stays inherits it, …)
            }
            removed += 1;
            assert!(has(&with_test), "{name}: masked + test.patch does not restore {t} ({id}) as written:\n{text}");
            assert!(!has(&with_gold), "{name}: gold.patch restores the F2P test {t} ({id})");
        }
    }
    if removed > 0 {
        assert!(!test.trim().is_empty(), "{name}: {removed} F2P test definition(s) removed but test.patch is empty");
    }
    check_validation(bundle);
}

/// An index of the touched files that exist in `repo` (and the manifests the test-id
/// resolution reads from disk).
fn index_of(repo: &Path, touched: &BTreeSet<String>) -> DefinitionIndex {
    let sources: Vec<(String, Vec<u8>)> =
        touched.iter().filter_map(|f| std::fs::read(repo.join(f)).ok().map(|b| (f.clone(), b))).collect();
    DefinitionIndex::from_sources(&sources)
}

/// validation.json: the F2P tests fail on masked + test.patch, everything passes on
/// masked + gold.patch + test.patch.
fn check_validation(bundle: &Path) {
    let v: serde_json::Value = serde_json::from_str(&super::read(&bundle.join("validation.json"))).unwrap();
    let states = v["states"].as_array().unwrap();
    for want in ["masked+tests", "restored"] {
        let s = states.iter().find(|s| s["state"] == want);
        let s = s.unwrap_or_else(|| panic!("{}: validation.json has no state {want}", bundle.display()));
        assert_eq!(s["ok"], true, "{}: validation state {want} is not ok: {s:#}", bundle.display());
    }
}
