//! Protection policies (design.md §5, issue 26): which passing tests protect what they run,
//! and so how much of what the F2P tests reach a feature may take.
//!
//! - `all` (the default): every other stable passing test is P2P and protects everything it
//!   executes. The smallest, safest tasks.
//! - `sampled:N` (FeatureBench-compatible): the tests of at most `N` test files protect,
//!   chosen deterministically as FeatureBench chooses them: only files that run none of the
//!   feature's entry points qualify ([`sample`]), closest to the feature first among them
//!   ([`closest_files`]); they are the bundle's P2P tests. Every other test stays in the masked state unprotected; those that
//!   then fail are reported in the bundle (`broken_tests`), never silently.
//! - `feature`: no test protects what it runs. The feature is everything the F2P tests
//!   reach that loading or building needs not (import / collection time, the build, what
//!   the load and build repairs find); then the whole suite runs on the masked state and
//!   decides ([`triage`]): a test that fails there joins F2P, one that still passes is P2P,
//!   and one that fails only because its fixtures or set-up need extracted code is a
//!   repair (that code stays), not an F2P test.
//!
//! Code that runs at import or collection time and what the build needs stay under every
//! policy: those keep rules do not depend on the P2P tests.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::str::FromStr;

use carve_languages::NodeId;
use carve_tracer::trace::{Caller, TestTrace, Trace};

use crate::TestId;

/// FeatureBench draws its BFS line budget between 3,000 and 5,000 lines per task; carve's
/// default is the upper bound, so that no task FeatureBench could make is cut for size.
pub const DEFAULT_MAX_LINES: usize = 5000;

/// Which passing tests protect what they run (`--protect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protection {
    /// Every other stable passing test protects what it runs.
    #[default]
    All,
    /// The tests of this many test files, closest to the feature first, protect.
    Sampled(usize),
    /// No test protects; the suite on the masked state decides what is F2P and what P2P.
    Feature,
}

impl FromStr for Protection {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "all" => Ok(Protection::All),
            "feature" => Ok(Protection::Feature),
            other => match other.strip_prefix("sampled:").map(str::parse::<usize>) {
                Some(Ok(n)) if n > 0 => Ok(Protection::Sampled(n)),
                Some(_) => Err(format!("`{other}`: sampled:N takes a number of test files of at least 1")),
                None => Err(format!("`{other}` is no protection policy: use all, sampled:N (N test files) or feature")),
            },
        }
    }
}

impl fmt::Display for Protection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Protection::All => f.write_str("all"),
            Protection::Sampled(n) => write!(f, "sampled:{n}"),
            Protection::Feature => f.write_str("feature"),
        }
    }
}

impl serde::Serialize for Protection {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One test file ranked for `sampled:N`: how many definitions of the feature's reached code
/// its tests execute.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FileScore {
    pub file: String,
    pub shared: usize,
}

/// The test files of `tests` (the stable passing tests that are not the feature's), closest
/// to the feature first: by the number of distinct definitions of `reached` (what the BFS
/// reaches from the F2P tests' entry points) that the file's tests execute, most first;
/// ties by file path, ascending. Deterministic: the trace and the index decide.
/// `file_of` names a test's file ([`crate::test_definition_file`]).
pub fn closest_files(
    trace: &Trace,
    reached: &BTreeSet<NodeId>,
    tests: &BTreeSet<TestId>,
    file_of: impl Fn(&str) -> String,
) -> Vec<(FileScore, BTreeSet<TestId>)> {
    let mut by_file: BTreeMap<String, (BTreeSet<&str>, BTreeSet<TestId>)> = BTreeMap::new();
    for t in tests {
        let file = file_of(t);
        let entry = by_file.entry(file).or_default();
        entry.1.insert(t.clone());
        if let Some(tt) = trace.test(t) {
            entry.0.extend(tt.hits.iter().map(String::as_str).filter(|id| reached.contains(*id)));
        }
    }
    let mut ranked: Vec<(FileScore, BTreeSet<TestId>)> =
        by_file.into_iter().map(|(file, (shared, tests))| (FileScore { file, shared: shared.len() }, tests)).collect();
    ranked.sort_by(|a, b| b.0.shared.cmp(&a.0.shared).then_with(|| a.0.file.cmp(&b.0.file)));
    ranked
}

/// FeatureBench's `min_p2p_files`: the fewest P2P test files a `sampled:N` feature may have
/// before its entry points give way ([`sample`]).
pub const MIN_P2P_FILES: usize = 1;

/// What a protection policy chose besides its scope: under `sampled:N` the P2P test files
/// and the entry points that gave way ([`Sampled`]); empty under the other policies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choice {
    pub files: Vec<FileScore>,
    pub shared_entries: Vec<NodeId>,
}

/// What `sampled:N` chose ([`sample`]).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Sampled {
    /// The chosen files, closest to the feature first: their tests are the P2P tests.
    pub chosen: Vec<FileScore>,
    /// The tests of every other file: they stay in the masked state unprotected.
    pub unprotected: BTreeSet<TestId>,
    /// Entry points that too many test files run to leave [`MIN_P2P_FILES`] of them that
    /// run none, in the order they gave way (most used first): the chosen files may run
    /// them, and then protect them.
    pub shared_entries: Vec<NodeId>,
}

/// `sampled:N` as FeatureBench chooses its P2P files: only files whose tests run none of the
/// feature's entry points (its *top objects*, `entries`) are eligible, so that no P2P file
/// protects the feature wholesale — it may still protect the deeper code the feature shares
/// with the rest of the project. While fewer than [`MIN_P2P_FILES`] files are eligible, the
/// entry point the most files run gives way (ties: the smaller id) and the files are counted
/// again. Of the eligible files the `n` closest in `ranked` ([`closest_files`]'s order) are
/// chosen; FeatureBench draws them at random, carve takes them in that order, so the result
/// is deterministic and the P2P tests are those nearest the feature.
pub fn sample(
    trace: &Trace,
    entries: &BTreeSet<NodeId>,
    ranked: Vec<(FileScore, BTreeSet<TestId>)>,
    n: usize,
) -> Sampled {
    let runs: Vec<BTreeSet<&NodeId>> = ranked
        .iter()
        .map(|(_, tests)| {
            tests
                .iter()
                .filter_map(|t| trace.test(t))
                .flat_map(|tt| tt.hits.iter().filter(|h| entries.contains(*h)))
                .collect()
        })
        .collect();
    let mut working: BTreeSet<&NodeId> = entries.iter().collect();
    let mut shared_entries = Vec::new();
    let eligible = |working: &BTreeSet<&NodeId>| runs.iter().filter(|r| r.is_disjoint(working)).count();
    while !working.is_empty() && eligible(&working) < MIN_P2P_FILES.min(ranked.len()) {
        let used = |id: &NodeId| runs.iter().filter(|r| r.contains(id)).count();
        let Some(most) = working.iter().copied().max_by(|a, b| used(a).cmp(&used(b)).then_with(|| b.cmp(a))) else {
            break;
        };
        working.remove(most);
        shared_entries.push(most.clone());
    }
    let mut out = Sampled { shared_entries, ..Sampled::default() };
    for ((score, tests), run) in ranked.into_iter().zip(&runs) {
        if out.chosen.len() < n && run.is_disjoint(&working) {
            out.chosen.push(score);
        } else {
            out.unprotected.extend(tests);
        }
    }
    out
}

/// What the masked state's failures mean under the `feature` policy ([`triage`]).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Triage {
    /// Tests that fail because the feature went: they join F2P.
    pub join: BTreeSet<TestId>,
    /// Extracted definitions that only a failing test's fixtures or set-up reached: they
    /// stay (a repair), each with the first such test and fixture.
    pub keep: BTreeMap<NodeId, HelperNeed>,
}

/// An extracted definition a failing test needs only through its fixture `helper`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelperNeed {
    /// The first failing test (by id) that needs it.
    pub test: TestId,
    /// That test's message on the masked state.
    pub message: String,
    /// The fixture or set-up code that called it (a definition id, or `<module>PATH`).
    pub helper: String,
}

/// How a test's code reaches what it ran: each definition reached from the test's own code
/// (`None`) or only from a fixture (`Some(fixture)`), along the call edges it recorded.
fn reached_from<'t>(
    index: &carve_languages::DefinitionIndex,
    tt: &'t TestTrace,
) -> BTreeMap<&'t NodeId, Option<String>> {
    let test_side = |caller: &Caller| match caller {
        Caller::Node(id) => {
            index.get(id).is_none_or(|d| d.is_test || index.files.get(&d.path).is_some_and(|f| f.is_test))
        }
        Caller::Module(path) => index.files.get(path).is_none_or(|f| f.is_test),
        Caller::External => true,
    };
    let fixture = |caller: &Caller| match caller {
        Caller::Node(id) => carve_languages::is_test_fixture(index, id),
        // Module-level code of a test file runs at collection, for every test of the file.
        Caller::Module(_) => true,
        Caller::External => false,
    };
    let mut out: BTreeMap<&NodeId, Option<String>> = BTreeMap::new();
    let mut queue: VecDeque<&NodeId> = VecDeque::new();
    // Own code first, so that a definition both reach counts as the test's own.
    for own in [true, false] {
        for (caller, callee) in tt.edges.iter().filter(|(c, _)| test_side(c) && fixture(c) != own) {
            if !out.contains_key(callee) {
                out.insert(callee, (!own).then(|| caller.to_string()));
                queue.push_back(callee);
            }
        }
        while let Some(n) = queue.pop_front() {
            let how = out[n].clone();
            for (caller, callee) in &tt.edges {
                if matches!(caller, Caller::Node(from) if from == n) && !out.contains_key(callee) {
                    out.insert(callee, how.clone());
                    queue.push_back(callee);
                }
            }
        }
    }
    out
}

/// `feature`: sorts the tests that passed at baseline and fail on the masked state (with
/// their messages). A test whose run (in the trace) executed extracted definitions joins F2P
/// when its own code (its test function, or test code other than fixtures) reached one of
/// them, through any code; when only its fixtures and set-up
/// ([`carve_languages::is_test_fixture`]) or module-level test code reached them, it fails
/// for want of a helper: those definitions stay. A test the trace has no record of, or that
/// executed no extracted code the recorded calls lead to, joins F2P: the task's validation
/// then checks that restoring the feature restores it, so one that fails for another reason
/// is rejected, never kept silently.
///
/// Edges are those the trace recorded (by default the first caller of each callee per test),
/// so a definition a fixture called first and the test body later counts as the fixture's.
pub fn triage(
    index: &carve_languages::DefinitionIndex,
    trace: &Trace,
    extracted: &BTreeSet<NodeId>,
    failing: &BTreeMap<TestId, String>,
) -> Triage {
    let mut out = Triage::default();
    for (test, message) in failing {
        let Some(tt) = trace.test(test) else {
            out.join.insert(test.clone());
            continue;
        };
        let reached = reached_from(index, tt);
        let ran: Vec<(&NodeId, Option<&Option<String>>)> =
            tt.hits.iter().filter(|h| extracted.contains(*h)).map(|h| (h, reached.get(h))).collect();
        let by_fixture: Vec<(&NodeId, &String)> =
            ran.iter().filter_map(|(id, how)| Some((*id, how.and_then(|h| h.as_ref())?))).collect();
        let own = ran.iter().any(|(_, how)| matches!(how, Some(None)));
        if own || by_fixture.is_empty() {
            out.join.insert(test.clone());
            continue;
        }
        for (id, fixture) in by_fixture {
            out.keep.entry(id.clone()).or_insert_with(|| HelperNeed {
                test: test.clone(),
                message: message.clone(),
                helper: fixture.clone(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_and_print_as_written() {
        for text in ["all", "sampled:5", "feature"] {
            assert_eq!(text.parse::<Protection>().unwrap().to_string(), text);
        }
        assert_eq!("sampled:2".parse::<Protection>(), Ok(Protection::Sampled(2)));
        assert_eq!(Protection::default(), Protection::All);
        let err = "sampled:0".parse::<Protection>().unwrap_err();
        assert!(err.contains("at least 1"), "{err}");
        let err = "some".parse::<Protection>().unwrap_err();
        assert!(err.contains("all, sampled:N (N test files) or feature"), "{err}");
    }

    #[test]
    fn sampling_keeps_the_closest_files_that_run_no_entry_point() {
        let trace = trace_of(&[
            ("tests/test_b.py::t", &["pkg/a.py::feat", "pkg/a.py::helper"], &[]),
            ("tests/test_a.py::t", &["pkg/a.py::helper"], &[]),
            ("tests/test_c.py::t", &["pkg/a.py::helper"], &[]),
            ("tests/test_c.py::u", &[], &[]),
            ("tests/test_d.py::t", &[], &[]),
        ]);
        let ranked = vec![
            (FileScore { file: "tests/test_b.py".into(), shared: 2 }, ids(&["tests/test_b.py::t"])),
            (FileScore { file: "tests/test_a.py".into(), shared: 1 }, ids(&["tests/test_a.py::t"])),
            (
                FileScore { file: "tests/test_c.py".into(), shared: 1 },
                ids(&["tests/test_c.py::t", "tests/test_c.py::u"]),
            ),
            (FileScore { file: "tests/test_d.py".into(), shared: 0 }, ids(&["tests/test_d.py::t"])),
        ];
        let s = sample(&trace, &ids(&["pkg/a.py::feat"]), ranked, 2);
        // test_b is the closest but runs the entry point `feat`: it would protect the feature
        // wholesale, so it stays unprotected; test_a and test_c share only `helper`.
        assert_eq!(
            s.chosen.iter().map(|s| s.file.as_str()).collect::<Vec<_>>(),
            ["tests/test_a.py", "tests/test_c.py"]
        );
        assert_eq!(s.unprotected, ids(&["tests/test_b.py::t", "tests/test_d.py::t"]));
        assert!(s.shared_entries.is_empty());
    }

    #[test]
    fn when_every_file_runs_an_entry_point_the_most_used_one_gives_way() {
        let trace = trace_of(&[
            ("tests/test_a.py::t", &["pkg/a.py::curry", "pkg/a.py::feat"], &[]),
            ("tests/test_b.py::t", &["pkg/a.py::curry"], &[]),
            ("tests/test_c.py::t", &["pkg/a.py::curry", "pkg/a.py::other"], &[]),
        ]);
        let ranked = vec![
            (FileScore { file: "tests/test_a.py".into(), shared: 2 }, ids(&["tests/test_a.py::t"])),
            (FileScore { file: "tests/test_c.py".into(), shared: 2 }, ids(&["tests/test_c.py::t"])),
            (FileScore { file: "tests/test_b.py".into(), shared: 1 }, ids(&["tests/test_b.py::t"])),
        ];
        let entries = ids(&["pkg/a.py::curry", "pkg/a.py::feat", "pkg/a.py::other"]);
        let s = sample(&trace, &entries, ranked.clone(), 5);
        // Every file runs `curry` (3 files): it gives way; then test_b runs no entry point.
        assert_eq!(s.shared_entries, ["pkg/a.py::curry"]);
        assert_eq!(s.chosen.iter().map(|s| s.file.as_str()).collect::<Vec<_>>(), ["tests/test_b.py"]);
        assert_eq!(s.unprotected, ids(&["tests/test_a.py::t", "tests/test_c.py::t"]));
        assert_eq!(s, sample(&trace, &entries, ranked, 5), "deterministic");
        let none = sample(&trace, &entries, Vec::new(), 5);
        assert!(none.chosen.is_empty() && none.shared_entries.is_empty(), "no other file: nothing gives way");
    }

    /// `(test, hits, (caller, callee) edges)`.
    type Spec<'a> = (&'a str, &'a [&'a str], &'a [(&'a str, &'a str)]);

    fn trace_of(tests: &[Spec<'_>]) -> Trace {
        let mut out = BTreeMap::new();
        for (test, hits, edges) in tests {
            let mut t = TestTrace::default();
            t.hits.extend(hits.iter().map(|h| h.to_string()));
            for (caller, callee) in *edges {
                t.edges.insert((Caller::parse(caller), callee.to_string()));
                t.hits.insert(callee.to_string());
            }
            out.insert(test.to_string(), t);
        }
        Trace {
            version: carve_tracer::trace::TRACE_VERSION,
            mode: carve_tracer::trace::TraceMode::Exact,
            tests: out,
            partial: Vec::new(),
            files: 1,
        }
    }

    fn ids(xs: &[&str]) -> BTreeSet<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_closest_files_run_the_most_of_the_reached_code_and_ties_go_by_path() {
        let trace = trace_of(&[
            ("tests/test_b.py::t", &["pkg/a.py::f", "pkg/a.py::g", "pkg/a.py::other"], &[]),
            ("tests/test_c.py::t", &["pkg/a.py::f"], &[]),
            ("tests/test_c.py::u", &["pkg/a.py::g"], &[]),
            ("tests/test_a.py::t", &["pkg/a.py::g"], &[]),
            ("tests/test_a.py::u", &["pkg/a.py::g"], &[]),
        ]);
        let reached = ids(&["pkg/a.py::f", "pkg/a.py::g"]);
        let tests = ids(&[
            "tests/test_a.py::t",
            "tests/test_a.py::u",
            "tests/test_b.py::t",
            "tests/test_c.py::t",
            "tests/test_c.py::u",
        ]);
        let file_of = |t: &str| t.split("::").next().unwrap().to_string();
        let ranked = closest_files(&trace, &reached, &tests, file_of);
        let order: Vec<(&str, usize)> = ranked.iter().map(|(s, _)| (s.file.as_str(), s.shared)).collect();
        // test_b and test_c both run f and g (2); test_a runs g only. Distinct definitions
        // count, not hits: test_a's two tests of g count once.
        assert_eq!(order, [("tests/test_b.py", 2), ("tests/test_c.py", 2), ("tests/test_a.py", 1)]);
        assert_eq!(ranked, closest_files(&trace, &reached, &tests, file_of), "deterministic");
    }

    fn index() -> carve_languages::DefinitionIndex {
        let src = |s: &str| s.as_bytes().to_vec();
        carve_languages::DefinitionIndex::from_sources(&[
            (
                "pkg/core.py".to_string(),
                src("def feat():\n    pass\n\ndef make():\n    pass\n\ndef inner():\n    pass\n"),
            ),
            (
                "tests/test_x.py".to_string(),
                src(
                    "import pytest\n\n@pytest.fixture\ndef thing():\n    pass\n\ndef test_uses_feat(thing):\n    pass\n\n\
                     def test_needs_thing(thing):\n    pass\n",
                ),
            ),
        ])
    }

    #[test]
    fn a_test_whose_own_code_reaches_the_feature_joins_and_one_that_needs_a_fixture_keeps_it() {
        let index = index();
        let trace = trace_of(&[
            (
                "tests/test_x.py::test_uses_feat",
                &[],
                &[
                    ("tests/test_x.py::thing", "pkg/core.py::make"),
                    ("tests/test_x.py::test_uses_feat", "pkg/core.py::feat"),
                ],
            ),
            (
                "tests/test_x.py::test_needs_thing",
                &[],
                &[("tests/test_x.py::thing", "pkg/core.py::make"), ("pkg/core.py::make", "pkg/core.py::inner")],
            ),
            ("tests/test_x.py::test_unrelated", &[], &[]),
        ]);
        let extracted = ids(&["pkg/core.py::feat", "pkg/core.py::make", "pkg/core.py::inner"]);
        let failing: BTreeMap<TestId, String> = [
            ("tests/test_x.py::test_uses_feat", "NameError: feat"),
            ("tests/test_x.py::test_needs_thing", "NameError: make"),
            ("tests/test_x.py::test_unrelated", "AssertionError"),
            ("tests/test_x.py::test_untraced", "AssertionError"),
        ]
        .iter()
        .map(|(t, m)| (t.to_string(), m.to_string()))
        .collect();
        let t = triage(&index, &trace, &extracted, &failing);
        // Its own code called `feat`; one that ran no extracted code, or has no trace, joins too
        // (validation then decides whether the feature restores it).
        assert_eq!(
            t.join,
            ids(&[
                "tests/test_x.py::test_unrelated",
                "tests/test_x.py::test_untraced",
                "tests/test_x.py::test_uses_feat"
            ])
        );
        // Only the fixture `thing` reached `make` (and `inner` through it): they stay.
        assert_eq!(t.keep.keys().cloned().collect::<BTreeSet<_>>(), ids(&["pkg/core.py::inner", "pkg/core.py::make"]));
        let kept = &t.keep["pkg/core.py::inner"];
        assert_eq!(kept.test, "tests/test_x.py::test_needs_thing");
        assert_eq!(kept.helper, "tests/test_x.py::thing");
    }
}
