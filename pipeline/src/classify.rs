//! Graph and classify: one feature is its F2P tests, its P2P tests (every other stable
//! passing test), and the classification of what carving it extracts and what must
//! remain, with reasons (the audit report). Candidate features for `carve tasks`.

use crate::Result;
use crate::error::bail;
use carve_tracer::classify::{Classification, ClassifyOptions, Status, classify_with, entry_points};
use carve_tracer::graph::ObjectGraph;
use carve_tracer::trace::Trace;
use serde_json::json;
use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::io::{Seek, Write};
use std::process::{Command, Stdio};

use crate::baseline::Baseline;
use crate::protect::{FileScore, Protection};
use crate::trace::{self, TraceMode, TraceRun};
use crate::{Session, TestId, resolve_tests};
use carve_formats::instance::{CandidateGroup, ProtectedFile, Protection as Protected};

#[derive(Clone)]
pub struct Feature {
    /// A short name: the stem of the F2P test file, or of the first F2P test.
    pub slug: String,
    pub f2p: BTreeSet<TestId>,
    pub p2p: BTreeSet<TestId>,
    pub classification: Classification,
    /// P2P doctests (and examples, Go's `ExampleType_Method`) of extracted definitions,
    /// moved into `f2p`: they go with their definition (see [`with_owned_doctests`]).
    pub owned_doctests: BTreeSet<TestId>,
    /// Tests enclosing F2P tests in the runner's hierarchy (Go's `TestX` of an F2P
    /// `TestX/sub`), in `f2p`: they fail when their F2P subtest does, so they cannot be P2P
    /// tests, yet what they ran themselves (outside their subtests) protects like a P2P
    /// test's run (see [`enclosing_f2p`]).
    pub enclosing: BTreeSet<TestId>,
    /// Tests of the candidate that still passed on an earlier masked state: they left the
    /// F2P set and stay in the repository as P2P tests (repair, not rejection).
    pub moved_to_p2p: BTreeSet<TestId>,
    /// Tests of the candidate that still passed on an earlier masked state but share their
    /// test function with F2P tests (cases of one parametrized function): the function
    /// leaves the masked state, so they are neither F2P nor P2P tests.
    pub dropped_cases: BTreeSet<TestId>,
    /// Passing P2P tests whose ids a fresh run of the original tree no longer has (an id made
    /// from the current time): neither F2P nor P2P tests (see `carve tasks`).
    pub unstable_ids: BTreeSet<TestId>,
    /// `feature`: tests that failed on a masked state among the P2P tests and passed there as
    /// F2P tests: neither F2P nor P2P tests (see `carve tasks`).
    pub order_dependent: BTreeSet<TestId>,
    /// Rounds in which the masked project did not build and definitions the compiler named
    /// were kept (see `extract`); empty when it built at once.
    pub build_repairs: Vec<BuildRepair>,
    /// Rounds in which the masked state did not load or run a test and the definitions its
    /// error named were kept (see `carve tasks`); empty when the first masked state ran.
    pub load_repairs: Vec<LoadRepair>,
    /// The protection policy the feature was classified under.
    pub protection: Protection,
    /// Tests that stay in the masked state without protecting what they run (`sampled:N`:
    /// those outside the chosen files; checked on the masked state, `broken_tests` when
    /// they fail). Empty under `all` and `feature` (every other test is P2P there).
    pub unprotected: BTreeSet<TestId>,
    /// `sampled:N`: the chosen test files (none runs an entry point of the feature), closest
    /// to the feature first.
    pub p2p_files: Vec<FileScore>,
    /// `sampled:N`: the entry points that gave way because too many test files run them
    /// (see [`crate::protect::sample`]); the chosen files may protect them.
    pub p2p_shared_entries: Vec<carve_languages::NodeId>,
    /// `feature`: tests that passed at baseline, failed on the masked state and joined F2P
    /// (they are in `f2p`).
    pub joined: BTreeSet<TestId>,
    /// The test files the candidate grouped (`--module-groups`); `None` for one test file.
    pub group: Option<CandidateGroup>,
}

/// One round of load repair: the tests (or uncollectable test files) that failed on the
/// masked state with an error naming extracted definitions, and those definitions, which
/// remain from then on.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LoadRepair {
    pub round: usize,
    /// Each kept definition, sorted by id.
    pub moved: Vec<KeptToLoad>,
}

/// A definition a load repair kept: the first test (by id) whose error named it, and that
/// error's message. With the `feature` policy's helper repair, `helper` is the fixture or
/// set-up code of `found_by` that called it (the test failed without it, its own code never
/// reached it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KeptToLoad {
    pub id: carve_languages::NodeId,
    pub found_by: TestId,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub helper: Option<String>,
}

/// One round of build repair: the build check that failed, the source locations its
/// output named, and the extracted definitions kept because of them.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BuildRepair {
    pub round: usize,
    pub command: String,
    pub locations: Vec<(String, u32)>,
    pub moved: Vec<carve_languages::NodeId>,
    /// The first line of the compiler's message, per moved definition.
    #[serde(skip)]
    pub messages: Vec<String>,
}

impl Feature {
    /// The feature after build repair: each definition a round moved remains, with the
    /// reason `needed to build`, and the rounds are recorded for the audit.
    pub fn with_build_repairs(mut self, repairs: &[BuildRepair]) -> Feature {
        use carve_tracer::classify::Reason;
        for r in repairs {
            for (id, message) in r.moved.iter().zip(&r.messages) {
                if let Some(d) = self.classification.nodes.get_mut(id) {
                    d.status = Status::Remained;
                    d.reasons.push(Reason::NeededToBuild { command: r.command.clone(), message: message.clone() });
                    d.reasons.sort();
                    d.reasons.dedup();
                }
            }
        }
        self.build_repairs.extend(repairs.iter().cloned());
        self
    }

    /// The feature after load repair: each definition a round kept remains, with the
    /// reason `needed to load (found by …)`, and the rounds are recorded for the audit.
    pub fn with_load_repairs(mut self, repairs: &[LoadRepair]) -> Feature {
        use carve_tracer::classify::Reason;
        for r in repairs {
            for k in &r.moved {
                if let Some(d) = self.classification.nodes.get_mut(&k.id) {
                    d.status = Status::Remained;
                    d.reasons.push(match &k.helper {
                        Some(helper) => Reason::NeededByTestHelper { test: k.found_by.clone(), helper: helper.clone() },
                        None => Reason::NeededToLoad { found_by: k.found_by.clone(), message: k.message.clone() },
                    });
                    d.reasons.sort();
                    d.reasons.dedup();
                }
            }
        }
        self.load_repairs.extend(repairs.iter().cloned());
        self
    }

    /// Ids of the extracted definitions, sorted.
    pub fn extracted(&self) -> BTreeSet<carve_languages::NodeId> {
        self.classification.extracted().map(|(id, _)| id.clone()).collect()
    }
}

/// Slug of a feature: the stem of its first F2P test's file (see
/// [`crate::test_definition_file`]), `tests/test_pricing.py` -> `pricing`; lower-case ASCII,
/// `-` separated.
pub fn slug_for(session: &Session, f2p: &BTreeSet<TestId>) -> String {
    let first = f2p.iter().next().map(String::as_str).unwrap_or("feature");
    let file = crate::test_definition_file(&session.repo, &session.index, first);
    let file = file.as_str();
    let name = file.rsplit('/').next().unwrap_or(file);
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    let stem = stem.strip_prefix("test_").or_else(|| stem.strip_suffix("_test")).unwrap_or(stem);
    let mut slug: String =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    while slug.contains("--") {
        slug = slug.replace("--", "-");
    }
    slug.trim_matches('-').to_string()
}

/// One candidate feature: its F2P tests, and a name when it is not the stem of its first
/// test file (a group of test files, see [`crate::groups`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub tests: BTreeSet<TestId>,
    pub slug: Option<String>,
    /// The test files a group candidate joins (see [`crate::groups`]).
    pub group: Option<CandidateGroup>,
}

impl Candidate {
    /// A candidate named after its first test's file.
    pub fn of(tests: BTreeSet<TestId>) -> Candidate {
        Candidate { tests, slug: None, group: None }
    }

    /// Its slug: the given name, else [`slug_for`] its tests.
    pub fn slug(&self, session: &Session) -> String {
        self.slug.clone().unwrap_or_else(|| slug_for(session, &self.tests))
    }
}

/// Baseline, trace, graph and classification of the feature whose F2P tests are
/// `f2p_args` (test ids or test files).
/// `protection` and `max_lines` as `carve audit` and `carve extract` take them: under
/// `feature` every other test stays unprotected (these commands run no test on the masked
/// state, so no test joins F2P: `carve tasks` does that).
pub fn feature_for(
    session: &Session,
    f2p_args: &[String],
    mode: TraceMode,
    entry_filter: Option<&str>,
    protection: Protection,
    max_lines: Option<usize>,
) -> Result<(Baseline, TraceRun, Feature)> {
    let (b, t) = trace::baseline_and_trace(session, mode)?;
    let f2p = resolve_tests(session, f2p_args, &b.known())?;
    let graph = ObjectGraph::build(&session.index, &t.trace);
    let base = Scope { excluded: t.shim_failures.clone(), entry_filter, max_lines, protection, ..Scope::default() };
    let (scope, choice) = scope_for(session, &b, &t.trace, &graph, &f2p, &f2p, base)?;
    let mut feature = classify_feature(session, &b, &t.trace, &graph, f2p, &scope)?;
    feature.p2p_files = choice.files;
    feature.p2p_shared_entries = choice.shared_entries;
    Ok((b, t, feature))
}

/// `base` with the tests its protection policy leaves unprotected: none under `all`; under
/// `sampled:N` those outside the at most `N` test files chosen as FeatureBench chooses them
/// (returned, in rank order; see [`crate::protect::sample`]: files that run none of the
/// feature's entry points, closest first by [`crate::protect::closest_files`]; the entry
/// points and the reached code are what the BFS from the candidate's tests as first given
/// finds with no test protecting); under `feature` every other stable passing test
/// that `base` does not exclude. `own` are the candidate's tests as first given: those that
/// left F2P (still passing on a masked state) stay P2P under `sampled:N` and their files
/// are not among the ranked ones, so that repair rounds do not change the choice.
pub fn scope_for<'a>(
    session: &Session,
    baseline: &Baseline,
    trace: &Trace,
    graph: &ObjectGraph,
    f2p: &BTreeSet<TestId>,
    own: &BTreeSet<TestId>,
    base: Scope<'a>,
) -> Result<(Scope<'a>, crate::protect::Choice)> {
    let others: BTreeSet<TestId> =
        baseline.stable_passing().difference(f2p).filter(|t| !base.excluded.contains(*t)).cloned().collect();
    match base.protection {
        Protection::All => Ok((base, Default::default())),
        Protection::Feature => Ok((Scope { unprotected: others, ..base }, Default::default())),
        Protection::Sampled(n) => {
            // What the candidate as given reaches, with no test protecting.
            let open_others =
                baseline.stable_passing().difference(own).filter(|t| !base.excluded.contains(*t)).cloned().collect();
            let open = Scope { unprotected: open_others, max_lines: None, kept: BTreeSet::new(), ..base.clone() };
            let open = classify_feature(session, baseline, trace, graph, own.clone(), &open)?.classification;
            let entries: BTreeSet<carve_languages::NodeId> = open.entry_points.iter().cloned().collect();
            let reached: BTreeSet<carve_languages::NodeId> = open.nodes.into_keys().collect();
            let file_of = |t: &str| crate::test_definition_file(&session.repo, &session.index, t);
            let own_files: BTreeSet<String> = own.iter().map(|t| file_of(t)).collect();
            let ranked: BTreeSet<TestId> =
                others.iter().filter(|t| !own.contains(*t) && !own_files.contains(&file_of(t))).cloned().collect();
            let ranked = crate::protect::closest_files(trace, &reached, &ranked, file_of);
            let sampled = crate::protect::sample(trace, &entries, ranked, n);
            let choice = crate::protect::Choice { files: sampled.chosen, shared_entries: sampled.shared_entries };
            Ok((Scope { unprotected: sampled.unprotected, ..base }, choice))
        }
    }
}

/// Which candidates [`candidates`] makes when no `--f2p` group is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CandidateKinds {
    /// One per test file.
    #[default]
    Files,
    /// One per test file, then one per module group ([`crate::groups`]).
    FilesAndModules,
    /// One per module group only.
    Modules,
}

impl CandidateKinds {
    /// The default for `policy`: under `all` every other test protects what it runs, so a
    /// group's member files no longer protecting each other is its only gain and the
    /// candidates of one file each are the small, safe tasks that policy is for; under
    /// `sampled:N` and `feature` (feature-sized tasks) the module groups are tried too.
    pub fn for_policy(policy: Protection) -> CandidateKinds {
        match policy {
            Protection::All => CandidateKinds::Files,
            Protection::Sampled(_) | Protection::Feature => CandidateKinds::FilesAndModules,
        }
    }
}

/// The F2P test groups `carve tasks` tries: the `--f2p` groups, else (by `kinds`) one per
/// test file of the tests usable as F2P (stable at baseline, and passing under the shim),
/// and one per group of two or more such files that test the same module (see
/// [`crate::groups`]), after them. A test's file is the one its definition lives in
/// (see [`crate::test_definition_file`]): a Go package's tests and subtests group by their
/// `_test` file, not one candidate per subtest.
pub fn candidates(
    session: &Session,
    baseline: &Baseline,
    run: &TraceRun,
    groups: &[Vec<String>],
    kinds: CandidateKinds,
) -> Result<Vec<Candidate>> {
    let usable: BTreeSet<TestId> = baseline.stable_passing().difference(&run.shim_failures).cloned().collect();
    let mut out = Vec::new();
    if !groups.is_empty() {
        // A group names a candidate; its tests that cannot be F2P (flaky, not passing at
        // baseline, failing under the shim) are left out of it, as they are of the default
        // per-file candidates.
        let known = baseline.known();
        for g in groups {
            let all = resolve_tests(session, g, &known)?;
            let left: BTreeSet<TestId> = all.intersection(&usable).cloned().collect();
            out.push(Candidate::of(if left.is_empty() { all } else { left }));
        }
    } else {
        let mut by_file: BTreeMap<String, BTreeSet<TestId>> = BTreeMap::new();
        for id in &usable {
            let file = crate::test_definition_file(&session.repo, &session.index, id);
            by_file.entry(file).or_default().insert(id.clone());
        }
        let by_file: BTreeMap<String, BTreeSet<TestId>> =
            by_file.into_iter().map(|(f, c)| (f, without_untraced(session, &run.trace, c))).collect();
        let grouped = match kinds {
            CandidateKinds::Files => Vec::new(),
            _ => crate::groups::module_groups(&session.index, &run.trace, &by_file),
        };
        if kinds != CandidateKinds::Modules {
            out = by_file.into_values().map(Candidate::of).collect();
        }
        out.extend(grouped.into_iter().map(|g| Candidate {
            tests: g.tests,
            slug: Some(g.slug),
            group: Some(CandidateGroup::of_kind(g.kind.as_str(), g.module, g.test_files)),
        }));
        return Ok(out);
    }
    Ok(out.into_iter().map(|c| Candidate { tests: without_untraced(session, &run.trace, c.tests), ..c }).collect())
}

/// A candidate without its tests that passed under the shim yet left no record in the
/// trace (a test that reached no probed code — a Rust doctest that only expands a macro —
/// or ran where the runtime could not tell which test it was): they are left out of its
/// F2P tests, with a note, and stay as P2P tests, which validation checks on the masked
/// state. One such test used to reject the whole candidate ("has no trace"). A candidate
/// none of whose tests is traced is kept whole, and rejected with that error.
fn without_untraced(session: &Session, trace: &Trace, cand: BTreeSet<TestId>) -> BTreeSet<TestId> {
    let (traced, untraced): (BTreeSet<TestId>, BTreeSet<TestId>) =
        cand.iter().cloned().partition(|t| trace.tests.contains_key(t));
    if traced.is_empty() || untraced.is_empty() {
        return cand;
    }
    session.progress.note(format!(
        "note: {}: {} test(s) have no trace (they reached no traced code, or ran where the shim could not \
         attribute them; first: {}): left out of the F2P tests, they stay as P2P tests",
        slug_for(session, &traced),
        untraced.len(),
        untraced.first().map(String::as_str).unwrap_or_default()
    ));
    traced
}

/// The audit report of a feature (`audit --format json`, `audit.json` of a bundle).
pub fn audit_report(feature: &Feature) -> serde_json::Value {
    let c = &feature.classification;
    let list = |extracted: bool| -> Vec<serde_json::Value> {
        c.nodes
            .iter()
            .filter(|(_, d)| (d.status == Status::Extracted) == extracted)
            .map(|(id, d)| json!({"id": id, "reasons": d.reasons.iter().map(|r| r.to_string()).collect::<Vec<_>>()}))
            .collect()
    };
    let mut report = json!({
        "version": 1,
        "feature": feature.slug,
        "f2p": feature.f2p,
        "p2p_count": feature.p2p.len(),
        "moved_to_p2p": feature.moved_to_p2p,
        "dropped_cases": feature.dropped_cases,
        "owned_doctests": feature.owned_doctests,
        "unstable_ids": feature.unstable_ids,
        "order_dependent": feature.order_dependent,
        "entry_points": c.entry_points,
        "extracted": list(true),
        "remained": list(false),
        "build_repairs": feature.build_repairs,
        "load_repairs": feature.load_repairs,
        "protection": protection_report(feature, None),
        "classification": c,
    });
    if let Some(group) = &feature.group {
        report["group"] = json!(group);
    }
    report
}

/// How the feature was protected, for `audit.json` and `instance.json` (`carve.protection`):
/// the policy and line budget; under `sampled:N` the chosen files (with how much of the
/// feature's reached code each one's tests run), the number of unprotected tests and, once
/// validated, those that fail on the masked state (`broken_tests`: not P2P tests, never
/// silently broken); under `feature` the tests that joined F2P because they failed on the
/// masked state; the definitions the line budget kept.
pub fn protection_report(feature: &Feature, broken: Option<&[TestId]>) -> Protected {
    let c = &feature.classification;
    let mut out = Protected::new(feature.protection.to_string(), c.max_lines);
    if let Protection::Sampled(n) = feature.protection {
        out.files = Some(n);
        out.p2p_files = Some(feature.p2p_files.iter().map(|f| ProtectedFile::new(f.file.clone(), f.shared)).collect());
        out.shared_entries = feature.p2p_shared_entries.clone();
        out.unprotected_count = Some(feature.unprotected.len());
        if let Some(broken) = broken {
            out.broken_count = Some(broken.len());
            out.broken_tests = Some(broken.to_vec());
        }
    }
    if feature.protection == Protection::Feature {
        out.joined_f2p = Some(feature.joined.iter().cloned().collect());
    }
    out.over_budget = c.over_budget.clone();
    out
}

/// What a classification is told besides the feature's F2P tests: which tests are neither
/// F2P nor P2P, which stay unprotected, what a repair kept, the line budget and the policy.
#[derive(Debug, Clone, Default)]
pub struct Scope<'a> {
    /// Tests that are neither F2P nor P2P: failing under the shim, cases that leave with
    /// their function, ids that change from run to run.
    pub excluded: BTreeSet<TestId>,
    /// Tests that stay in the masked state but protect nothing they run.
    pub unprotected: BTreeSet<TestId>,
    /// `--entry-filter CMD`.
    pub entry_filter: Option<&'a str>,
    /// Definitions that remain whatever the rules say (what load repairs kept: the caller
    /// adds their reasons with [`Feature::with_load_repairs`]).
    pub kept: BTreeSet<carve_languages::NodeId>,
    /// `--max-lines N`.
    pub max_lines: Option<usize>,
    /// Recorded in the feature.
    pub protection: Protection,
}

/// Classify a feature given its F2P tests: every other stable passing test is P2P, except
/// those `scope` excludes or leaves unprotected.
pub fn classify_feature(
    session: &Session,
    baseline: &Baseline,
    trace: &Trace,
    graph: &ObjectGraph,
    f2p: BTreeSet<TestId>,
    scope: &Scope<'_>,
) -> Result<Feature> {
    let stable = baseline.stable_passing();
    let excluded = &scope.excluded;
    for t in &f2p {
        match baseline.tests.get(t) {
            Some(e) if e.flaky => {
                bail!("F2P test {t} is flaky (it {:?} then {:?} at baseline); choose stable tests", e.status, e.second)
            }
            Some(_) if !stable.contains(t) => {
                bail!(
                    "F2P test {t} does not pass at baseline ({:?}); an F2P test must pass on the original code",
                    baseline.tests[t].status
                )
            }
            None => bail!("F2P test {t} was not run at baseline"),
            _ => {}
        }
        if excluded.contains(t) {
            bail!("F2P test {t} passed at baseline but failed under the tracing shim; it cannot be traced");
        }
    }
    let p2p: BTreeSet<TestId> = stable
        .difference(&f2p)
        .filter(|t| !excluded.contains(*t) && !scope.unprotected.contains(*t))
        .cloned()
        .collect();
    let (enclosing, leaving) = enclosing_f2p(&f2p, &p2p);
    let unprotected: BTreeSet<TestId> = scope.unprotected.difference(&f2p).cloned().collect();
    let candidates = entry_points(&session.index, trace, &f2p)?;
    let entries = match scope.entry_filter {
        None => candidates.into_keys().collect(),
        Some(cmd) => run_entry_filter(cmd, &f2p, &candidates)?,
    };
    let options =
        ClassifyOptions { unprotected: unprotected.clone(), kept: scope.kept.clone(), max_lines: scope.max_lines };
    let classification = classify_with(&session.index, graph, trace, &f2p, &p2p, entries, &options)?;
    let slug = slug_for(session, &f2p);
    let FeatureTests { f2p, p2p, classification, doctests } = match scope.entry_filter {
        // The filter chose entry points for the given F2P tests; doctests would add others.
        Some(_) => FeatureTests { f2p, p2p, classification, doctests: BTreeSet::new() },
        None => with_owned_doctests(session, trace, graph, f2p, p2p, classification, &options)?,
    };
    // Classified as P2P tests (what they ran themselves protects); listed as F2P tests, or
    // as neither when they leave the masked state with an F2P test's function.
    let f2p: BTreeSet<TestId> = f2p.union(&enclosing).cloned().collect();
    let p2p: BTreeSet<TestId> = p2p.difference(&enclosing).filter(|t| !leaving.contains(*t)).cloned().collect();
    if let Some(first) = enclosing.first() {
        session.progress.note(format!(
            "note: {slug}: {} test(s) enclose F2P subtests (first: {first}): F2P tests too, as they fail when \
             their subtests do; {} other subtest(s) of theirs leave the masked state with them (neither F2P nor \
             P2P); what they all run outside the F2P subtests stays",
            enclosing.len(),
            leaving.len()
        ));
    }
    Ok(Feature {
        slug,
        f2p,
        p2p,
        owned_doctests: doctests,
        enclosing,
        classification,
        moved_to_p2p: BTreeSet::new(),
        dropped_cases: leaving,
        unstable_ids: BTreeSet::new(),
        order_dependent: BTreeSet::new(),
        build_repairs: Vec::new(),
        load_repairs: Vec::new(),
        protection: scope.protection,
        unprotected,
        p2p_files: Vec::new(),
        p2p_shared_entries: Vec::new(),
        joined: BTreeSet::new(),
        group: None,
    })
}

/// The P2P tests that enclose an F2P test in the runner's hierarchy
/// ([`carve_languages::enclosing_tests`]: Go's `pkg/TestX` of `pkg/TestX/WithOption`), and
/// the P2P tests enclosed by an F2P or such a test (`pkg/TestX/Plain`). A test's trace
/// record holds what it ran itself, its subtests' records what they ran, so each of these
/// protects its own code like any P2P test and never the F2P subtest's. But an enclosing
/// test fails when its F2P subtest fails (listed with the F2P tests), and the subtests of
/// the function that leaves the masked state with the F2P tests are not there to run:
/// neither F2P nor P2P (as the cases of a parametrized function, see `carve tasks`).
fn enclosing_f2p(f2p: &BTreeSet<TestId>, p2p: &BTreeSet<TestId>) -> (BTreeSet<TestId>, BTreeSet<TestId>) {
    let enclosing: BTreeSet<TestId> = f2p
        .iter()
        .flat_map(|t| carve_languages::enclosing_tests(t))
        .filter(|e| p2p.contains(*e))
        .map(str::to_string)
        .collect();
    let leaving: BTreeSet<TestId> = p2p
        .iter()
        .filter(|t| !enclosing.contains(*t))
        .filter(|t| carve_languages::enclosing_tests(t).iter().any(|e| f2p.contains(*e) || enclosing.contains(*e)))
        .cloned()
        .collect();
    (enclosing, leaving)
}

/// A feature's tests and its classification, with the doctests that moved to its F2P set.
struct FeatureTests {
    f2p: BTreeSet<TestId>,
    p2p: BTreeSet<TestId>,
    classification: Classification,
    doctests: BTreeSet<TestId>,
}

/// Doctests go with the definition whose docstring holds them (parso's `NodeOrLeaf.dump`,
/// whose own doctest is a P2P test that runs it; a Rust doctest of `Type::method`), and so
/// do examples (Go's `ExampleType_Method`): a P2P doctest of a definition the F2P tests
/// reach becomes one of the feature's tests, and the feature is classified again; where its
/// definition then stays anyway, the doctest is a P2P test again (and classified once more,
/// at most a few rounds: each round only gives back). Not a doctest of a file whose
/// doctests the F2P tests already include (see `chosen` below).
fn with_owned_doctests(
    session: &Session,
    trace: &Trace,
    graph: &ObjectGraph,
    f2p: BTreeSet<TestId>,
    p2p: BTreeSet<TestId>,
    first: Classification,
    options: &ClassifyOptions,
) -> Result<FeatureTests> {
    let index = &session.index;
    let owner = |t: &str| carve_languages::doctest_owner(index, t).or_else(|| carve_languages::example_owner(index, t));
    // The files whose doctests (examples) are among the given F2P tests: whoever chose them
    // went through that file's doctests (a commit's new ones, a file's candidate), so a
    // doctest of the same file left out is a P2P test by choice. Without this, a method that
    // existed before and whose only test is its doctest became part of any feature whose
    // tests call it (arrayvec's `ArrayString::pop` in the doctest of `remaining_capacity`,
    // bit-vec's `from_fn` in the new tests of `remove`, whose doctest was given too).
    let file = |t: &str| crate::test_definition_file(&session.repo, index, t);
    let chosen: BTreeSet<String> = f2p.iter().filter(|t| owner(t).is_some()).map(|t| file(t)).collect();
    let owners: BTreeMap<&TestId, carve_languages::NodeId> =
        p2p.iter().filter(|t| !chosen.contains(&file(t))).filter_map(|t| owner(t).map(|o| (t, o))).collect();
    // Whether `owner` or a definition it is nested in is classified (with `status`).
    let within = |c: &Classification, owner: &str, status: Option<Status>| {
        index.lineage(owner).any(|a| c.nodes.get(a).is_some_and(|d| status.is_none_or(|s| d.status == s)))
    };
    // The owner itself must be reached: a reached type (listed for its reached members)
    // does not bring the doctests of its other methods along, which would make those methods
    // entry points of their own doctests and extract them (arrayvec's `ArrayVec::remove`).
    let mut moved: BTreeSet<TestId> =
        owners.iter().filter(|(_, o)| first.nodes.contains_key(o.as_str())).map(|(t, _)| (*t).clone()).collect();
    for _ in 0..3 {
        if moved.is_empty() {
            break;
        }
        let feature: BTreeSet<TestId> = f2p.union(&moved).cloned().collect();
        let others: BTreeSet<TestId> = p2p.difference(&moved).cloned().collect();
        // A doctest that left no trace (it ran only what the compiler evaluates: arrayvec's
        // `ArrayString::new_const`) goes with its definition all the same; it adds no entry
        // point, and the classifier is given the traced ones.
        let traced: BTreeSet<TestId> =
            feature.iter().filter(|t| f2p.contains(*t) || trace.tests.contains_key(*t)).cloned().collect();
        let entries = entry_points(index, trace, &traced)?.into_keys().collect();
        let next = classify_with(index, graph, trace, &traced, &others, entries, options)?;
        let keep: BTreeSet<TestId> =
            moved.iter().filter(|t| within(&next, &owners[t], Some(Status::Extracted))).cloned().collect();
        if keep == moved {
            return Ok(FeatureTests { f2p: feature, p2p: others, classification: next, doctests: moved });
        }
        moved = keep;
    }
    // Nothing moved, or the rounds ran out while still giving back: the feature as given.
    Ok(FeatureTests { f2p, p2p, classification: first, doctests: BTreeSet::new() })
}

/// Run the user's entry-point filter: JSON `{"f2p": [ids], "candidates": [{"id", "test"}]}`
/// on stdin, a JSON list of the chosen node ids on stdout (for example an LLM that drops
/// test helpers). The choice must be a non-empty subset of the candidates.
pub fn run_entry_filter(
    cmd: &str,
    f2p: &BTreeSet<TestId>,
    candidates: &BTreeMap<String, TestId>,
) -> Result<BTreeSet<String>> {
    let input = serde_json::json!({
        "f2p": f2p,
        "candidates": candidates.iter().map(|(id, test)| serde_json::json!({"id": id, "test": test})).collect::<Vec<_>>(),
    });
    // The input goes through a file, not a pipe: a filter that does not read its stdin
    // must not kill carve with SIGPIPE.
    let mut file = tempfile::tempfile()?;
    file.write_all(input.to_string().as_bytes())?;
    file.seek(std::io::SeekFrom::Start(0))?;
    let out = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::from(file))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| crate::Error::msg(format!("failed to start the entry filter `{cmd}`: {e}")))?;
    if !out.status.success() {
        bail!("the entry filter `{cmd}` failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim());
    }
    let chosen: Vec<String> = serde_json::from_slice(&out.stdout).map_err(|e| {
        crate::Error::msg(format!(
            "the entry filter `{cmd}` must print a JSON list of node ids, got {:?}: {e}",
            String::from_utf8_lossy(&out.stdout)
        ))
    })?;
    for c in &chosen {
        if !candidates.contains_key(c) {
            let all: Vec<&String> = candidates.keys().collect();
            bail!("the entry filter `{cmd}` chose {c}, which is not a candidate (candidates: {all:?})");
        }
    }
    if chosen.is_empty() {
        bail!("the entry filter `{cmd}` chose no entry point");
    }
    Ok(chosen.into_iter().collect())
}
