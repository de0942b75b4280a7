//! Feature-sized candidates (issue 26): test files grouped by the code they test, so that a
//! feature can span test files, and modules (`carve tasks --module-groups`).
//!
//! **What a group is.** A group is the test files that test one piece of the repository's
//! code — one module, or one package (a folder of modules) smaller than the whole library —
//! taken as one candidate: their tests together are its F2P tests, so what they share is
//! extracted with what each reaches alone, instead of each file protecting the shared code
//! from the others. It is a *feature* because membership is decided by what the tests call
//! directly (their entry points, [`carve_tracer::classify::entry_points`]), never by size: a
//! group never takes test files that only pass through its code, and a package group never
//! takes every test file of the library (that would be the whole library, not a feature).
//! The line budget (`--max-lines`) then bounds what each candidate extracts, whole
//! definitions at a time, as for any candidate.
//!
//! **Which modules a test file tests.** Its source modules are ranked by the number of its
//! tests' entry points they hold, then by the number of non-test definitions its tests execute
//! there, then by path, ascending. The first is its *home module*. The second is a home too
//! when it holds at least [`SECOND_HOME_MIN_ENTRIES`] entry points and at least half as many as
//! the first: such a file tests two modules (`test_routes.py` calls the route functions and,
//! nearly as often, the point functions the routes are made of). A test file whose tests call
//! no repository code has no home.
//!
//! **The groups**, in this order (each after the candidates of one file each):
//! - *module groups*: one per module that is a home (first or second) of two or more test
//!   files — the tests of all of them, named `<module>-module` (the module's file stem, or its
//!   folder for a package's `__init__`);
//! - *package groups*: one per sub-package — a folder whose parent folder itself holds the
//!   first home module of some test file — holding the first home modules of two or more test
//!   files in two or more distinct modules, named `<folder>-package`. A top-level package
//!   (`toolz/`, `src/itsdangerous/`) is the library, not a feature: never a group, even when an
//!   alias package beside it (toolz's `tlz/`) leaves a test file out of it; nor is a folder
//!   holding the first home of every test file that has one.
//!
//! A group with the same test files as an earlier group is not made twice. A group whose
//! task turns out to be one of its files' (the same gold patch) is dropped after validation
//! ([`crate::candidates`]). Deterministic: the trace and the index decide.

use std::collections::{BTreeMap, BTreeSet};

use carve_languages::DefinitionIndex;
use carve_tracer::trace::Trace;

use crate::TestId;

/// The fewest entry points a test file's second-ranked module must hold to be a home of it.
pub const SECOND_HOME_MIN_ENTRIES: usize = 2;

/// The source modules the tests `tests` (of one test file) call, ranked (see the module
/// comment), with their entry points and executed definitions: most entry points first.
fn ranked_modules(index: &DefinitionIndex, trace: &Trace, tests: &BTreeSet<TestId>) -> Vec<(String, (usize, usize))> {
    let traced: BTreeSet<TestId> = tests.iter().filter(|t| trace.tests.contains_key(*t)).cloned().collect();
    let Ok(entries) = carve_tracer::classify::entry_points(index, trace, &traced) else { return Vec::new() };
    let source =
        |id: &str| index.get(id).filter(|d| !d.is_test && index.files.get(&d.path).is_some_and(|f| !f.is_test));
    let mut score: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for d in entries.keys().filter_map(|id| source(id)) {
        score.entry(d.path.as_str()).or_default().0 += 1;
    }
    let executed: BTreeSet<&str> =
        traced.iter().filter_map(|t| trace.tests.get(t)).flat_map(|t| t.hits.iter().map(String::as_str)).collect();
    for d in executed.into_iter().filter_map(source) {
        if let Some(s) = score.get_mut(d.path.as_str()) {
            s.1 += 1;
        }
    }
    let mut ranked: Vec<(String, (usize, usize))> = score.into_iter().map(|(p, s)| (p.to_string(), s)).collect();
    // Most entry points, then most executed definitions, then the smallest path (a stable
    // sort of paths in ascending order).
    ranked.sort_by(|a, b| b.1.cmp(&a.1));
    ranked
}

/// The home modules of the tests `tests` (of one test file): the first, and the second when
/// it holds at least [`SECOND_HOME_MIN_ENTRIES`] entry points and at least half as many as
/// the first. Empty when they call no repository code.
pub fn home_modules(index: &DefinitionIndex, trace: &Trace, tests: &BTreeSet<TestId>) -> Vec<String> {
    let ranked = ranked_modules(index, trace, tests);
    let mut homes = Vec::new();
    if let Some((first, (n, _))) = ranked.first() {
        homes.push(first.clone());
        if let Some((second, (m, _))) = ranked.get(1)
            && *m >= SECOND_HOME_MIN_ENTRIES
            && 2 * m >= *n
        {
            homes.push(second.clone());
        }
    }
    homes
}

/// The home module of the tests `tests` (of one test file), if any: the first of
/// [`home_modules`].
pub fn home_module(index: &DefinitionIndex, trace: &Trace, tests: &BTreeSet<TestId>) -> Option<String> {
    home_modules(index, trace, tests).into_iter().next()
}

/// What grouped a group's test files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupKind {
    /// They share a home module.
    Module,
    /// Their first home modules lie in one package (folder), in two or more modules.
    Package,
}

impl GroupKind {
    /// `module` or `package`, as bundles record it (`carve.group.kind`).
    pub fn as_str(self) -> &'static str {
        match self {
            GroupKind::Module => "module",
            GroupKind::Package => "package",
        }
    }
}

/// A group of test files that test one module or package: a candidate of their tests together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleGroup {
    /// `<module>-module` or `<folder>-package`, made unique among the groups (see [`module_groups`]).
    pub slug: String,
    pub kind: GroupKind,
    /// The home module (a source file), or the package's folder.
    pub module: String,
    /// The grouped test files, sorted.
    pub test_files: Vec<String>,
    /// Their tests.
    pub tests: BTreeSet<TestId>,
}

/// The groups of the test files `by_file` (file -> its tests): the module groups in module
/// order, then the package groups in folder order (see the module comment). Two modules or
/// folders of one name (`a/util.py`, `b/util.py`) would share a slug: each is then named by
/// its whole path (`a-util-module`).
pub fn module_groups(
    index: &DefinitionIndex,
    trace: &Trace,
    by_file: &BTreeMap<String, BTreeSet<TestId>>,
) -> Vec<ModuleGroup> {
    let homes: BTreeMap<&String, Vec<String>> = by_file
        .iter()
        .map(|(file, tests)| (file, home_modules(index, trace, tests)))
        .filter(|(_, h)| !h.is_empty())
        .collect();
    let mut out: Vec<ModuleGroup> = Vec::new();
    let mut seen: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut push = |out: &mut Vec<ModuleGroup>, kind: GroupKind, module: String, files: Vec<String>, name: String| {
        if files.len() < 2 || !seen.insert(files.clone()) {
            return;
        }
        let tests = files.iter().flat_map(|f| by_file[f].iter().cloned()).collect();
        out.push(ModuleGroup { slug: name, kind, module, test_files: files, tests });
    };

    // Module groups: the test files of which a module is a home, first or second.
    let mut by_module: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (file, hs) in &homes {
        for h in hs {
            by_module.entry(h.as_str()).or_default().push(file.to_string());
        }
    }
    let modules: Vec<(&str, Vec<String>)> = by_module.into_iter().filter(|(_, f)| f.len() >= 2).collect();
    let names = unique_names(modules.iter().map(|(m, _)| *m), module_slug, path_slug);
    for ((module, files), name) in modules.into_iter().zip(names) {
        push(&mut out, GroupKind::Module, module.to_string(), files, format!("{name}-module"));
    }

    // Package groups: the test files whose first home lies in a folder, below the whole library.
    let homed: Vec<String> = homes.keys().map(|f| f.to_string()).collect();
    let mut by_folder: BTreeMap<String, (Vec<String>, BTreeSet<&str>)> = BTreeMap::new();
    for (file, hs) in &homes {
        let first = hs[0].as_str();
        let mut folder = first;
        while let Some((parent, _)) = folder.rsplit_once('/') {
            let entry = by_folder.entry(parent.to_string()).or_default();
            entry.0.push(file.to_string());
            entry.1.insert(first);
            folder = parent;
        }
    }
    // A sub-package: its parent folder holds some test file's first home module itself. A
    // top-level package (`toolz/`, `src/itsdangerous/`) is the library, whatever else lies
    // beside it (toolz's `tlz/` alias package made `toolz/` look like a part of the code).
    let parent = |path: &str| -> String { path.rsplit_once('/').map_or(String::new(), |(p, _)| p.to_string()) };
    let home_folders: BTreeSet<String> = homes.values().map(|hs| parent(&hs[0])).collect();
    // (A sub-package never has the test files of a sub-package inside it: the inner one's
    // parent holds a first home, whose test file only the outer one has.)
    let folders: Vec<(String, Vec<String>)> = by_folder
        .into_iter()
        .filter(|(_, (files, modules))| files.len() >= 2 && modules.len() >= 2 && *files != homed)
        .filter(|(folder, _)| home_folders.contains(&parent(folder)))
        .map(|(folder, (files, _))| (folder, files))
        .collect();
    let names = unique_names(folders.iter().map(|(f, _)| f.as_str()), folder_slug, path_slug);
    for ((folder, files), name) in folders.into_iter().zip(names) {
        push(&mut out, GroupKind::Package, folder, files, format!("{name}-package"));
    }
    out
}

/// `short` of each path, or `long` for paths whose `short` another path shares.
fn unique_names<'a>(
    paths: impl Iterator<Item = &'a str> + Clone,
    short: fn(&str) -> String,
    long: fn(&str) -> String,
) -> Vec<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for p in paths.clone() {
        *counts.entry(short(p)).or_default() += 1;
    }
    paths.map(|p| if counts[&short(p)] == 1 { short(p) } else { long(p) }).collect()
}

/// `src/pkg/geo` -> `geo`; lower-case ASCII, `-` separated.
fn folder_slug(folder: &str) -> String {
    let last = folder.rsplit('/').next().unwrap_or(folder);
    let slug: String =
        last.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    let slug = slug.split('-').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("-");
    if slug.is_empty() { "root".to_string() } else { slug }
}

/// The whole path as a slug, for modules (folders) whose names collide: `a/util.py` -> `a-util`.
fn path_slug(path: &str) -> String {
    let stem = match path.rsplit_once('.') {
        Some((stem, ext)) if !ext.contains('/') => stem,
        _ => path,
    };
    let slug: String =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    slug.split('-').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("-")
}

/// `pkg/version.py` -> `version`; `pkg/__init__.py` -> `pkg`; lower-case ASCII, `-` separated.
fn module_slug(path: &str) -> String {
    let mut parts = path.rsplit('/');
    let file = parts.next().unwrap_or(path);
    let stem = file.split_once('.').map_or(file, |(s, _)| s);
    let stem = if matches!(stem, "__init__" | "index" | "mod" | "lib") { parts.next().unwrap_or(stem) } else { stem };
    let slug: String =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    let slug = slug.split('-').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("-");
    if slug.is_empty() { "root".to_string() } else { slug }
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_tracer::trace::{Caller, TRACE_VERSION, TestTrace, TraceMode};

    fn index() -> DefinitionIndex {
        let src = |s: &str| s.as_bytes().to_vec();
        DefinitionIndex::from_sources(&[
            ("pkg/__init__.py".to_string(), src("")),
            ("pkg/version.py".to_string(), src("def parse(v):\n    return v\n\ndef norm(v):\n    return v\n")),
            ("pkg/spec.py".to_string(), src("def match(s):\n    return s\n")),
            ("tests/test_version.py".to_string(), src("def test_parse():\n    pass\n")),
            ("tests/test_norm.py".to_string(), src("def test_norm():\n    pass\n")),
            ("tests/test_spec.py".to_string(), src("def test_match():\n    pass\n")),
        ])
    }

    fn trace(calls: &[(&str, &[&str])]) -> Trace {
        let mut tests = BTreeMap::new();
        for (test, callees) in calls {
            let mut t = TestTrace::default();
            for c in *callees {
                t.edges.insert((Caller::External, c.to_string()));
                t.hits.insert(c.to_string());
            }
            tests.insert(test.to_string(), t);
        }
        Trace { version: TRACE_VERSION, mode: TraceMode::Exact, tests, partial: Vec::new(), files: 1 }
    }

    #[test]
    fn test_files_that_call_one_module_most_form_a_group() {
        let index = index();
        let t = trace(&[
            ("tests/test_version.py::test_parse", &["pkg/version.py::parse"]),
            ("tests/test_norm.py::test_norm", &["pkg/version.py::norm", "pkg/spec.py::match"]),
            ("tests/test_spec.py::test_match", &["pkg/spec.py::match"]),
        ]);
        let by_file: BTreeMap<String, BTreeSet<TestId>> = [
            ("tests/test_version.py", "tests/test_version.py::test_parse"),
            ("tests/test_norm.py", "tests/test_norm.py::test_norm"),
            ("tests/test_spec.py", "tests/test_spec.py::test_match"),
        ]
        .iter()
        .map(|(f, t)| (f.to_string(), [t.to_string()].into()))
        .collect();
        // test_norm calls one definition of each module: the tie goes to the smaller path.
        assert_eq!(home_module(&index, &t, &by_file["tests/test_norm.py"]).as_deref(), Some("pkg/spec.py"));
        assert_eq!(home_module(&index, &t, &by_file["tests/test_version.py"]).as_deref(), Some("pkg/version.py"));
        let groups = module_groups(&index, &t, &by_file);
        assert_eq!(groups.len(), 1, "{groups:?}");
        assert_eq!(groups[0].slug, "spec-module");
        assert_eq!(groups[0].module, "pkg/spec.py");
        assert_eq!(groups[0].test_files, ["tests/test_norm.py", "tests/test_spec.py"]);
        let expected: BTreeSet<TestId> =
            ["tests/test_norm.py::test_norm", "tests/test_spec.py::test_match"].map(String::from).into();
        assert_eq!(groups[0].tests, expected);
        assert_eq!(module_groups(&index, &t, &by_file), groups, "the same inputs give the same groups");
    }

    /// `(file, source)` of each module and test file, and each test file's one test.
    fn repo(modules: &[(&str, &[&str])], test_files: &[&str]) -> (DefinitionIndex, BTreeMap<String, BTreeSet<TestId>>) {
        let mut sources: Vec<(String, Vec<u8>)> = modules
            .iter()
            .map(|(path, fns)| {
                let body: String = fns.iter().map(|f| format!("def {f}():\n    pass\n\n")).collect();
                (path.to_string(), body.into_bytes())
            })
            .collect();
        let mut by_file = BTreeMap::new();
        for f in test_files {
            sources.push((f.to_string(), b"def test_it():\n    pass\n".to_vec()));
            by_file.insert(f.to_string(), [format!("{f}::test_it")].into());
        }
        (DefinitionIndex::from_sources(&sources), by_file)
    }

    fn summary(groups: &[ModuleGroup]) -> Vec<(String, &'static str, String, Vec<String>)> {
        groups.iter().map(|g| (g.slug.clone(), g.kind.as_str(), g.module.clone(), g.test_files.clone())).collect()
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// test_routes.py calls three route functions and two point functions: it tests both
    /// modules, and joins both groups; test_labels.py calls one point function beside two
    /// name functions: a stray call, no home. The geo package (points and routes) is a group
    /// of its own; the top package, which holds every home, is the whole library: no group.
    #[test]
    fn a_test_file_that_tests_two_modules_joins_both_groups_and_packages_group_below_the_library() {
        let (index, by_file) = repo(
            &[
                ("pkg/__init__.py", &[]),
                ("pkg/geo/points.py", &["p1", "p2", "p3"]),
                ("pkg/geo/routes.py", &["r1", "r2", "r3", "r4", "r5"]),
                ("pkg/names.py", &["n1", "n2"]),
            ],
            &[
                "tests/test_points.py",
                "tests/test_routes.py",
                "tests/test_maps.py",
                "tests/test_names.py",
                "tests/test_labels.py",
            ],
        );
        let t = trace(&[
            ("tests/test_points.py::test_it", &["pkg/geo/points.py::p1", "pkg/geo/points.py::p2"]),
            (
                "tests/test_routes.py::test_it",
                &[
                    "pkg/geo/routes.py::r1",
                    "pkg/geo/routes.py::r2",
                    "pkg/geo/routes.py::r3",
                    "pkg/geo/points.py::p1",
                    "pkg/geo/points.py::p2",
                ],
            ),
            ("tests/test_maps.py::test_it", &["pkg/geo/routes.py::r4", "pkg/geo/routes.py::r5"]),
            ("tests/test_names.py::test_it", &["pkg/names.py::n1"]),
            ("tests/test_labels.py::test_it", &["pkg/names.py::n1", "pkg/names.py::n2", "pkg/geo/points.py::p3"]),
        ]);
        let homes = |f: &str| home_modules(&index, &t, &by_file[f]);
        assert_eq!(homes("tests/test_routes.py"), ["pkg/geo/routes.py", "pkg/geo/points.py"]);
        assert_eq!(homes("tests/test_labels.py"), ["pkg/names.py"], "one entry point is not a second home");
        assert_eq!(homes("tests/test_points.py"), ["pkg/geo/points.py"]);
        let groups = module_groups(&index, &t, &by_file);
        assert_eq!(
            summary(&groups),
            [
                (
                    "points-module".to_string(),
                    "module",
                    "pkg/geo/points.py".to_string(),
                    strings(&["tests/test_points.py", "tests/test_routes.py"])
                ),
                (
                    "routes-module".to_string(),
                    "module",
                    "pkg/geo/routes.py".to_string(),
                    strings(&["tests/test_maps.py", "tests/test_routes.py"])
                ),
                (
                    "names-module".to_string(),
                    "module",
                    "pkg/names.py".to_string(),
                    strings(&["tests/test_labels.py", "tests/test_names.py"])
                ),
                (
                    "geo-package".to_string(),
                    "package",
                    "pkg/geo".to_string(),
                    strings(&["tests/test_maps.py", "tests/test_points.py", "tests/test_routes.py"])
                ),
            ]
        );
        assert_eq!(groups[3].tests.len(), 3);
        assert_eq!(module_groups(&index, &t, &by_file), groups, "the same inputs give the same groups");
    }

    /// A second module is a home only with at least two entry points and half the first's.
    #[test]
    fn a_second_module_with_under_half_the_entry_points_is_no_home() {
        let (index, by_file) =
            repo(&[("m/a.py", &["a1", "a2", "a3", "a4", "a5"]), ("m/b.py", &["b1", "b2"])], &["tests/test_x.py"]);
        let calls = ["m/a.py::a1", "m/a.py::a2", "m/a.py::a3", "m/a.py::a4", "m/a.py::a5", "m/b.py::b1", "m/b.py::b2"];
        let t = trace(&[("tests/test_x.py::test_it", &calls)]);
        assert_eq!(home_modules(&index, &t, &by_file["tests/test_x.py"]), ["m/a.py"], "2 of 5: not half");
        let t = trace(&[("tests/test_x.py::test_it", &calls[1..])]);
        assert_eq!(home_modules(&index, &t, &by_file["tests/test_x.py"]), ["m/a.py", "m/b.py"], "2 of 4: half");
    }

    /// Test files that test one package's modules and nothing else are the whole library: no
    /// package group. A package group of the same files as a module group, and a module group
    /// of the same files as another, are not made twice; a top-level package is the library
    /// (toolz beside its `tlz/` alias) and a folder whose parent holds no module is no sub-package.
    #[test]
    fn groups_are_neither_the_whole_library_nor_made_twice() {
        let (index, by_file) =
            repo(&[("pkg/a.py", &["a1", "a2"]), ("pkg/b.py", &["b1", "b2"])], &["tests/test_a.py", "tests/test_b.py"]);
        let t = trace(&[
            ("tests/test_a.py::test_it", &["pkg/a.py::a1", "pkg/a.py::a2"]),
            ("tests/test_b.py::test_it", &["pkg/b.py::b1", "pkg/b.py::b2"]),
        ]);
        assert_eq!(module_groups(&index, &t, &by_file), [], "pkg holds every home: the whole library");

        // toolz: `tlz/` (an alias package) beside `toolz/`; `toolz/` is still the library,
        // `toolz/sandbox/` (beside toolz's own modules) a part of it.
        let (index, by_file) = repo(
            &[
                ("toolz/functoolz.py", &["f1", "f2"]),
                ("toolz/itertoolz.py", &["i1", "i2"]),
                ("toolz/sandbox/core.py", &["c1"]),
                ("toolz/sandbox/parallel.py", &["p1"]),
                ("tlz/__init__.py", &["t1"]),
            ],
            &[
                "tests/test_f.py",
                "tests/test_i.py",
                "tests/test_core.py",
                "tests/test_parallel.py",
                "tests/test_tlz.py",
            ],
        );
        let t = trace(&[
            ("tests/test_f.py::test_it", &["toolz/functoolz.py::f1"]),
            ("tests/test_i.py::test_it", &["toolz/itertoolz.py::i1"]),
            ("tests/test_core.py::test_it", &["toolz/sandbox/core.py::c1"]),
            ("tests/test_parallel.py::test_it", &["toolz/sandbox/parallel.py::p1"]),
            ("tests/test_tlz.py::test_it", &["tlz/__init__.py::t1"]),
        ]);
        assert_eq!(
            summary(&module_groups(&index, &t, &by_file)),
            [(
                "sandbox-package".to_string(),
                "package",
                "toolz/sandbox".to_string(),
                strings(&["tests/test_core.py", "tests/test_parallel.py"])
            )],
            "no toolz-package: a top-level package is the library"
        );

        let (index, by_file) = repo(
            &[("lib/core/sub/a.py", &["a1", "a2"]), ("lib/core/sub/b.py", &["b1", "b2"]), ("lib/c.py", &["c1"])],
            &["tests/test_1.py", "tests/test_2.py", "tests/test_3.py", "tests/test_4.py", "tests/test_5.py"],
        );
        let t = trace(&[
            // Both modules of lib/core/sub, tied: a.py first (the path), b.py second.
            (
                "tests/test_1.py::test_it",
                &["lib/core/sub/a.py::a1", "lib/core/sub/a.py::a2", "lib/core/sub/b.py::b1", "lib/core/sub/b.py::b2"],
            ),
            (
                "tests/test_2.py::test_it",
                &["lib/core/sub/a.py::a1", "lib/core/sub/a.py::a2", "lib/core/sub/b.py::b1", "lib/core/sub/b.py::b2"],
            ),
            ("tests/test_3.py::test_it", &["lib/core/sub/b.py::b1"]),
            ("tests/test_4.py::test_it", &["lib/c.py::c1"]),
            ("tests/test_5.py::test_it", &["lib/c.py::c1"]),
        ]);
        assert_eq!(
            summary(&module_groups(&index, &t, &by_file)),
            [
                // In module order (`lib/c.py` first); a.py's group; b.py's adds test_3.py.
                (
                    "c-module".to_string(),
                    "module",
                    "lib/c.py".to_string(),
                    strings(&["tests/test_4.py", "tests/test_5.py"])
                ),
                (
                    "a-module".to_string(),
                    "module",
                    "lib/core/sub/a.py".to_string(),
                    strings(&["tests/test_1.py", "tests/test_2.py"])
                ),
                (
                    "b-module".to_string(),
                    "module",
                    "lib/core/sub/b.py".to_string(),
                    strings(&["tests/test_1.py", "tests/test_2.py", "tests/test_3.py"])
                ),
                // lib/core (a sub-package: lib holds c.py) groups test_1..3 (first homes a.py
                // and b.py), but b-module has those files already; lib/core/sub is no
                // sub-package (lib/core holds no module itself); lib holds every home.
            ],
            "sub-package has b-module's files: not made twice"
        );
    }

    #[test]
    fn module_slugs_name_the_module_or_its_package() {
        assert_eq!(module_slug("src/attr/_make.py"), "make");
        assert_eq!(module_slug("pkg/__init__.py"), "pkg");
        assert_eq!(module_slug("src/index.ts"), "src");
        assert_eq!(module_slug("money.test.ts"), "money");
        assert_eq!(path_slug("src/a/util.py"), "src-a-util");
        assert_eq!(path_slug("src/my.pkg/geo"), "src-my-pkg-geo");
        assert_eq!(folder_slug("src/pkg/geo_tools"), "geo-tools");
    }

    #[test]
    fn modules_of_one_stem_get_their_paths_as_slugs() {
        let src = |s: &str| s.as_bytes().to_vec();
        let index = DefinitionIndex::from_sources(&[
            ("a/util.py".to_string(), src("def f():\n    pass\n")),
            ("b/util.py".to_string(), src("def g():\n    pass\n")),
            ("tests/test_1.py".to_string(), src("def test_1():\n    pass\n")),
            ("tests/test_2.py".to_string(), src("def test_2():\n    pass\n")),
            ("tests/test_3.py".to_string(), src("def test_3():\n    pass\n")),
            ("tests/test_4.py".to_string(), src("def test_4():\n    pass\n")),
        ]);
        let t = trace(&[
            ("tests/test_1.py::test_1", &["a/util.py::f"]),
            ("tests/test_2.py::test_2", &["a/util.py::f"]),
            ("tests/test_3.py::test_3", &["b/util.py::g"]),
            ("tests/test_4.py::test_4", &["b/util.py::g"]),
        ]);
        let by_file: BTreeMap<String, BTreeSet<TestId>> =
            (1..=4).map(|n| (format!("tests/test_{n}.py"), [format!("tests/test_{n}.py::test_{n}")].into())).collect();
        let slugs: Vec<String> = module_groups(&index, &t, &by_file).into_iter().map(|g| g.slug).collect();
        assert_eq!(slugs, ["a-util-module", "b-util-module"]);
    }
}
