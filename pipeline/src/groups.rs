//! Feature-sized candidates (issue 26): test files grouped by the code they test, so that a
//! feature can span test files (`carve tasks --module-groups`).
//!
//! The *home module* of a test file is the non-test source file holding the most of its
//! tests' entry points (the definitions their test code calls directly, see
//! [`carve_tracer::classify::entry_points`]); ties go to the file holding the most of the
//! non-test definitions those tests execute, then to the path, ascending. A test file whose
//! tests call no repository code has no home. Every home of two or more test files gives one
//! candidate: the tests of all of them, named `<module>-module` (the module's file stem, or
//! its folder for a package's `__init__`). Deterministic: the trace and the index decide.

use std::collections::{BTreeMap, BTreeSet};

use carve_languages::DefinitionIndex;
use carve_tracer::trace::Trace;

use crate::TestId;

/// The home module of the tests `tests` (of one test file), if any.
pub fn home_module(index: &DefinitionIndex, trace: &Trace, tests: &BTreeSet<TestId>) -> Option<String> {
    let traced: BTreeSet<TestId> = tests.iter().filter(|t| trace.tests.contains_key(*t)).cloned().collect();
    let entries = carve_tracer::classify::entry_points(index, trace, &traced).ok()?;
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
    // Most entry points, then most executed definitions, then the smallest path.
    score.into_iter().max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0))).map(|(path, _)| path.to_string())
}

/// A group of test files with one home module: a candidate of their tests together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleGroup {
    /// `<module>-module`, made unique among the groups (see [`module_groups`]).
    pub slug: String,
    /// The home module (a source file).
    pub module: String,
    /// The grouped test files, sorted.
    pub test_files: Vec<String>,
    /// Their tests.
    pub tests: BTreeSet<TestId>,
}

/// One group per home module of two or more of the test files `by_file` (file -> its
/// tests), in module order. Two modules of one stem (`a/util.py`, `b/util.py`) would share
/// a slug: each then takes its folders, nearest first, until the slugs differ.
pub fn module_groups(
    index: &DefinitionIndex,
    trace: &Trace,
    by_file: &BTreeMap<String, BTreeSet<TestId>>,
) -> Vec<ModuleGroup> {
    let mut homes: BTreeMap<String, Vec<(&String, &BTreeSet<TestId>)>> = BTreeMap::new();
    for (file, tests) in by_file {
        if let Some(home) = home_module(index, trace, tests) {
            homes.entry(home).or_default().push((file, tests));
        }
    }
    let groups: Vec<(String, Vec<(&String, &BTreeSet<TestId>)>)> =
        homes.into_iter().filter(|(_, files)| files.len() >= 2).collect();
    let mut stems: BTreeMap<String, usize> = BTreeMap::new();
    for (home, _) in &groups {
        *stems.entry(module_slug(home)).or_default() += 1;
    }
    groups
        .into_iter()
        .map(|(module, files)| {
            let slug = match stems[&module_slug(&module)] {
                1 => module_slug(&module),
                _ => path_slug(&module),
            };
            ModuleGroup {
                slug: format!("{slug}-module"),
                test_files: files.iter().map(|(f, _)| f.to_string()).collect(),
                tests: files.into_iter().flat_map(|(_, t)| t.iter().cloned()).collect(),
                module,
            }
        })
        .collect()
}

/// The whole path as a slug, for modules whose stems collide: `a/util.py` -> `a-util`.
fn path_slug(path: &str) -> String {
    let stem = path.rsplit_once('.').map_or(path, |(s, _)| s);
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

    #[test]
    fn module_slugs_name_the_module_or_its_package() {
        assert_eq!(module_slug("src/attr/_make.py"), "make");
        assert_eq!(module_slug("pkg/__init__.py"), "pkg");
        assert_eq!(module_slug("src/index.ts"), "src");
        assert_eq!(module_slug("money.test.ts"), "money");
        assert_eq!(path_slug("src/a/util.py"), "src-a-util");
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
