//! The candidate loop: for every candidate feature, classify -> extract (with the build
//! repair) -> validate -> repair -> emit, the same loop `carve tasks` runs for its candidates.
//!
//! Repair, not rejection: F2P tests that still pass on the masked state leave F2P and stay
//! as P2P tests; definitions a load error of the masked state names remain; P2P test ids that
//! change from run to run are set aside; the rest is classified, masked and validated again,
//! a bounded number of rounds.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::baseline::Baseline;
use crate::classify::{Candidate, Feature, LoadRepair, Scope, audit_report, classify_feature, scope_for};
use crate::emit::{Rejected, Task, emit_task};
use crate::extract::{self, removal_of_tests};
use crate::protect::{Protection, triage};
use crate::repair::{call_repair, load_repair};
use crate::trace;
use crate::validate::{Validation, validate_level1, validate_level2};
use crate::{Result, Session, TestId};

/// What the candidate loop does with each candidate (the flags of `carve tasks`).
#[derive(Debug, Clone, Default)]
pub struct CandidateOptions {
    /// Levels to emit (1, 2).
    pub levels: Vec<u8>,
    /// Share of F2P tests that may still pass on the masked state.
    pub threshold: f64,
    /// `--entry-filter CMD`: an external command that filters entry points.
    pub entry_filter: Option<String>,
    /// `--protect`: which passing tests protect what they run.
    pub protection: Protection,
    /// `--max-lines N`: the line budget of one feature (`None`: none).
    pub max_lines: Option<usize>,
    /// `--candidates K`: try only the K candidates that extract the most.
    pub candidates: Option<usize>,
    /// `--describe CMD`: an external command that writes the feature description.
    pub describe: Option<String>,
}

/// What the loop made of every candidate it tried.
#[derive(Debug, Default)]
pub struct Tasks {
    /// Every emitted task: its instance id and its `tasks.jsonl` row, in candidate order.
    pub emitted: Vec<(String, crate::emit::TaskInstance)>,
    /// Every candidate (or level) that gave no task, with the reason.
    pub rejected: Vec<Rejected>,
    /// With [`CandidateOptions::candidates`]: every candidate with its size and whether it was tried.
    pub ranking: Option<Vec<Value>>,
}

/// Try every candidate feature (each a set of F2P tests) of a traced repository: two at a
/// time when the session allows two jobs, results in candidate order.
pub fn run_candidates(
    session: &Session,
    b: &Baseline,
    t: &trace::TraceRun,
    candidates: Vec<Candidate>,
    opts: &CandidateOptions,
) -> Tasks {
    let graph = carve_tracer::graph::ObjectGraph::build(&session.index, &t.trace);
    let (candidates, ranking) = match opts.candidates {
        None => (candidates, None),
        Some(k) => {
            let ranked = rank(session, b, t, &graph, candidates, opts);
            let sizes: Vec<Value> = ranked
                .iter()
                .enumerate()
                .map(|(n, (cand, size))| json!({"feature": cand.slug(session), "extracted": size, "tried": n < k}))
                .collect();
            (ranked.into_iter().take(k).map(|(cand, _)| cand).collect(), Some(sizes))
        }
    };
    let run = Run { session, b, t, graph: &graph, opts, trace_digest: t.trace.digest() };
    // Candidates are independent (each in its own scratch folder; bundle ids hash their
    // content): two at a time when the session allows two jobs, results in candidate order.
    let candidates: Vec<(usize, Candidate)> = candidates.into_iter().enumerate().collect();
    let mut emitted: Vec<(String, crate::emit::TaskInstance)> = Vec::new();
    let mut rejected: Vec<Rejected> = Vec::new();
    let results = session.map_two_at_a_time(&candidates, |(n, cand)| run.candidate(*n, cand.clone()));
    let keys: Vec<(bool, Option<(u8, &str)>)> =
        candidates.iter().zip(&results).map(|((_, cand), (ok, _))| (cand.group.is_some(), task_key(ok))).collect();
    let duplicates = duplicate_groups(&keys);
    for (((_, cand), (ok, bad)), dup) in candidates.iter().zip(results).zip(duplicates) {
        match dup {
            None => {
                emitted.extend(ok);
                rejected.extend(bad);
            }
            Some(first) => {
                // Its bundles are written already: they go, and the reason is recorded.
                for (id, _) in &ok {
                    let _ = std::fs::remove_dir_all(session.out.join(id));
                }
                let (slug, kept) = (cand.slug(session), candidates[first].1.slug(session));
                session.progress.note(format!("{slug}: the same task as {kept}'s; dropped as a duplicate"));
                rejected.push(Rejected {
                    feature: slug,
                    level: None,
                    reason: format!(
                        "duplicate of {kept}: the group's task has the same gold patch as {kept}'s (its other \
                         test files add no code to the feature); dropped, {kept}'s task kept"
                    ),
                });
            }
        }
    }
    Tasks { emitted, rejected, ranking }
}

/// What identifies a candidate's task for [`duplicate_groups`]: the level and gold patch of
/// its lowest-level task, if it gave one.
fn task_key(emitted: &[(String, crate::emit::TaskInstance)]) -> Option<(u8, &str)> {
    emitted.iter().map(|(_, i)| (i.level, i.patch.as_str())).min_by_key(|(level, _)| *level)
}

/// For each candidate (`is a group`, [`task_key`]), in candidate order: for a group whose
/// task is the same as an earlier candidate's (same level, same gold patch — the code the
/// agent writes), that candidate's index; else `None`. A group exists to make a feature
/// bigger than its files'; one that gives a task already made (its other files' tests reach
/// nothing more than what the sampled P2P tests protect anyway — wcwidth's `clip-module` and
/// `clip`) is a duplicate, and the earlier, smaller candidate keeps the task. Candidates of
/// one file are never dropped; a candidate that gave no task duplicates nothing.
fn duplicate_groups(keys: &[(bool, Option<(u8, &str)>)]) -> Vec<Option<usize>> {
    keys.iter()
        .enumerate()
        .map(|(i, (group, key))| match key {
            Some(key) if *group => keys[..i].iter().position(|(_, k)| k.as_ref() == Some(key)),
            _ => None,
        })
        .collect()
}

/// What every candidate of one traced repository shares.
struct Run<'a> {
    session: &'a Session,
    b: &'a Baseline,
    t: &'a trace::TraceRun,
    graph: &'a carve_tracer::graph::ObjectGraph,
    opts: &'a CandidateOptions,
    trace_digest: String,
}

/// Where the repair rounds of one candidate stand: its F2P tests now, and what earlier
/// rounds moved to P2P, dropped, set aside, kept to load or (policy `feature`) made F2P.
#[derive(Default)]
struct Rounds {
    /// The candidate's tests as given.
    own: BTreeSet<TestId>,
    cand: BTreeSet<TestId>,
    moved: BTreeSet<TestId>,
    dropped: BTreeSet<TestId>,
    unstable: BTreeSet<TestId>,
    load_repairs: Vec<LoadRepair>,
    p2p_rounds: usize,
    /// `feature`: tests that failed on a masked state and joined F2P.
    joined: BTreeSet<TestId>,
    /// `feature`: tests that joined F2P and then passed on the masked state with the F2P
    /// tests: their outcome depends on the tests run with them; they judge no state.
    order_dependent: BTreeSet<TestId>,
    join_rounds: usize,
    /// The test files a group candidate joins, recorded in its bundles.
    group: Option<carve_formats::instance::CandidateGroup>,
}

/// What one round ends with: go round again, or this candidate's tasks and rejections.
enum Next {
    Again,
    Done(Made),
}

impl Run<'_> {
    /// Classify, extract, validate and repair candidate `n` until it gives tasks or a reason.
    fn candidate(&self, n: usize, cand: Candidate) -> Made {
        let slug = cand.slug(self.session);
        self.session.progress.step(format!("candidate {} ({slug})", n + 1));
        let mut rounds = Rounds { own: cand.tests.clone(), cand: cand.tests, group: cand.group, ..Rounds::default() };
        // Repair, not rejection: F2P tests that still pass on the masked state leave F2P and
        // stay as P2P tests; definitions a load error of the masked state names remain; the
        // rest is classified, masked and validated again.
        loop {
            if let Next::Done(made) = self.round(n, &slug, &mut rounds) {
                return made;
            }
        }
    }

    /// One round of candidate `n`: classify with what earlier rounds repaired, extract and
    /// validate; the repair for the next round, or the candidate's tasks and rejections.
    fn round(&self, n: usize, slug: &str, r: &mut Rounds) -> Next {
        let (session, opts) = (self.session, self.opts);
        let reject = |reason: String| {
            Next::Done((Vec::new(), vec![Rejected { feature: slug.to_string(), level: None, reason }]))
        };
        let feature = match self.repaired_feature(slug, r) {
            Ok(f) => f,
            Err(reason) => return reject(reason),
        };
        let load_round = (r.load_repairs.len() < MAX_LOAD_REPAIR_ROUNDS).then_some(r.load_repairs.len() + 1);
        let outcome = feature_tasks(session, n, self.b, &feature, opts, &self.t.trace, &self.trace_digest, load_round);
        match outcome {
            Ok(Outcome::Retry(still_passing)) if r.p2p_rounds < MAX_REPAIR_ROUNDS => {
                r.keep_as_p2p(session, slug, still_passing);
                Next::Again
            }
            Ok(Outcome::Retry(_)) => {
                reject(format!("F2P tests still pass on the masked state after {MAX_REPAIR_ROUNDS} repair rounds"))
            }
            Ok(Outcome::Unstable(ids)) if r.unstable.is_empty() => {
                session.progress.note(format!(
                    "{slug}: {} P2P test id(s) are gone when the original runs again; they judge no state",
                    ids.len()
                ));
                r.unstable.extend(ids);
                Next::Again
            }
            Ok(Outcome::Unstable(ids)) => {
                let first = ids.first().cloned().unwrap_or_default();
                reject(format!("P2P test ids still change from run to run after one round without them ({first})"))
            }
            Ok(Outcome::Reload(repair)) => {
                session.progress.note(format!(
                    "{slug}: load repair {}: the masked state failed to load or run tests; keeping {}",
                    repair.round,
                    load_summary(std::slice::from_ref(&repair))
                ));
                r.load_repairs.push(repair);
                Next::Again
            }
            Ok(Outcome::Join(tests)) if r.join_rounds < MAX_JOIN_ROUNDS => {
                session.progress.note(format!(
                    "{slug}: {} test(s) fail on the masked state (first: {}); they join the F2P tests",
                    tests.len(),
                    tests.first().map(String::as_str).unwrap_or_default()
                ));
                r.join_rounds += 1;
                let defs = |t: &TestId| test_functions(session, t);
                let dropped = r.join(tests, &feature.p2p, defs);
                if let Some(first) = dropped.first() {
                    session.progress.note(format!(
                        "{slug}: {} test(s) passed on the masked state but leave it with their test function, whose other cases join F2P (first: {first}); they judge no state",
                        dropped.len()
                    ));
                }
                Next::Again
            }
            Ok(Outcome::Join(tests)) => reject(format!(
                "tests still fail on the masked state after {MAX_JOIN_ROUNDS} rounds of making failing tests F2P \
                 (first: {})",
                tests.first().map(String::as_str).unwrap_or_default()
            )),
            Ok(Outcome::Made(made)) => Next::Done(made),
            Err(e) => Next::Done((
                Vec::new(),
                vec![Rejected { feature: feature.slug.clone(), level: None, reason: e.chain() }],
            )),
        }
    }

    /// This round's feature: classified, with what earlier rounds moved to P2P, dropped and
    /// set aside; or, when it cannot be classified or extracts nothing, why (the rejection).
    fn repaired_feature(&self, slug: &str, r: &Rounds) -> Result<Feature, String> {
        let mut feature = self.feature(slug, r).map_err(|e| e.chain())?;
        feature.moved_to_p2p = r.moved.clone();
        // Besides the cases dropped in earlier rounds, the classification's own (the
        // subtests of a test function that leaves with an F2P subtest).
        feature.dropped_cases.extend(r.dropped.iter().cloned());
        feature.unstable_ids = r.unstable.clone();
        feature.order_dependent = r.order_dependent.clone();
        if feature.extracted().is_empty() {
            return Err(if r.load_repairs.is_empty() {
                "nothing to extract: everything the F2P tests reach is run by P2P tests, at import time, or needed to load".to_string()
            } else {
                format!(
                    "nothing to extract: {} load repair round(s) kept every extracted definition ({})",
                    r.load_repairs.len(),
                    load_summary(&r.load_repairs)
                )
            });
        }
        Ok(feature)
    }
}

impl Rounds {
    /// F2P tests that still pass on the masked state leave F2P and stay as P2P tests (a case
    /// whose test function stays F2P is dropped; a test that joined F2P is set aside).
    fn keep_as_p2p(&mut self, session: &Session, slug: &str, still_passing: BTreeSet<TestId>) {
        session.progress.note(format!(
            "{slug}: {} F2P test(s) still pass on the masked state; they stay as P2P tests",
            still_passing.len()
        ));
        self.p2p_rounds += 1;
        self.cand = self.cand.difference(&still_passing).cloned().collect();
        // Tests that failed among the P2P tests and pass as F2P tests would go back
        // and forth between the two: they are set aside instead.
        let flipped: BTreeSet<TestId> = still_passing.intersection(&self.joined).cloned().collect();
        if !flipped.is_empty() {
            session.progress.note(format!(
                "{slug}: {} test(s) failed among the P2P tests and pass with the F2P tests (first: {}); their outcome depends on the tests run with them, set aside",
                flipped.len(),
                flipped.first().map(String::as_str).unwrap_or_default()
            ));
        }
        self.joined = self.joined.difference(&still_passing).cloned().collect();
        let still_passing: BTreeSet<TestId> = still_passing.difference(&flipped).cloned().collect();
        self.order_dependent.extend(flipped);
        // A case of a test function whose other cases stay F2P leaves the masked
        // state with that function: it can be neither F2P nor P2P.
        let (drop, keep) = cases_of_remaining(session, &self.cand, still_passing);
        self.dropped.extend(drop);
        self.moved.extend(keep);
    }
}

impl Rounds {
    /// `feature`: `tests`, which failed on the masked state among the P2P tests `p2p`, join
    /// F2P. The other cases of their test functions (`defs`: a test's function) leave the
    /// masked state with them, yet passed there: neither F2P (the feature does not break
    /// them) nor P2P (they are gone from the masked state), they are dropped now, as
    /// [`Rounds::keep_as_p2p`] drops them. Kept among the P2P tests they were missing in the
    /// next round's masked state and joined F2P then, a whole run of the suite later (pyjwt's
    /// `test_to_base64url_uint[-1-expected5]`, which raises before it reaches the feature).
    /// Returns the cases dropped now.
    fn join(
        &mut self,
        tests: BTreeSet<TestId>,
        p2p: &BTreeSet<TestId>,
        defs: impl Fn(&TestId) -> BTreeSet<String>,
    ) -> BTreeSet<TestId> {
        self.joined.extend(tests);
        let leaving: BTreeSet<TestId> =
            p2p.iter().filter(|t| !self.joined.contains(*t) && !self.dropped.contains(*t)).cloned().collect();
        let f2p: BTreeSet<TestId> = self.cand.union(&self.joined).cloned().collect();
        let (drop, _) = partition_cases(&f2p, leaving, defs);
        self.dropped.extend(drop.iter().cloned());
        drop
    }
}

type Made = (Vec<(String, crate::emit::TaskInstance)>, Vec<Rejected>);

impl Run<'_> {
    /// The scope of candidate `tests` (first given as `own`) under the run's policy, with
    /// `excluded` (besides the tests that fail under the shim) and what repairs kept.
    fn scope(
        &self,
        tests: &BTreeSet<TestId>,
        own: &BTreeSet<TestId>,
        excluded: &BTreeSet<TestId>,
        kept: BTreeSet<carve_languages::NodeId>,
    ) -> Result<(Scope<'_>, crate::protect::Choice)> {
        let base = Scope {
            excluded: self.t.shim_failures.iter().chain(excluded).cloned().collect(),
            unprotected: BTreeSet::new(),
            entry_filter: self.opts.entry_filter.as_deref(),
            kept,
            max_lines: self.opts.max_lines,
            protection: self.opts.protection,
        };
        scope_for(self.session, self.b, &self.t.trace, self.graph, tests, own, base)
    }

    /// The classified feature of this round: the candidate's F2P tests as they stand, under
    /// the run's policy, with the repairs so far. Under `feature` the tests that joined F2P
    /// are F2P too (they leave the masked state) but not classified as such (what they
    /// reach is not extracted for them), and every other test is P2P — those that fail
    /// under the shim too, so that the masked state checks them.
    fn feature(&self, slug: &str, r: &Rounds) -> Result<Feature> {
        let excluded: BTreeSet<TestId> =
            r.dropped.iter().chain(&r.unstable).chain(&r.joined).chain(&r.order_dependent).cloned().collect();
        let kept = r.load_repairs.iter().flat_map(|l| l.moved.iter().map(|k| k.id.clone())).collect();
        let (scope, choice) = self.scope(&r.cand, &r.own, &excluded, kept)?;
        let mut feature = classify_feature(self.session, self.b, &self.t.trace, self.graph, r.cand.clone(), &scope)?;
        feature = feature.with_load_repairs(&r.load_repairs);
        feature.slug = slug.to_string();
        feature.group = r.group.clone();
        feature.p2p_files = choice.files;
        feature.p2p_shared_entries = choice.shared_entries;
        if self.opts.protection == Protection::Feature {
            let stable = self.b.stable_passing();
            let untraced: BTreeSet<TestId> = (self.t.shim_failures.iter())
                .filter(|t| stable.contains(*t) && !feature.f2p.contains(*t) && !excluded.contains(*t))
                .cloned()
                .collect();
            let mut p2p = std::mem::take(&mut feature.unprotected);
            p2p.extend(untraced);
            p2p.extend(std::mem::take(&mut feature.p2p));
            feature.p2p = p2p;
            feature.f2p.extend(r.joined.iter().cloned());
            feature.joined = r.joined.clone();
        }
        Ok(feature)
    }
}

/// Split tests that leave a candidate's F2P set into those whose test function (the
/// definition the test id maps to, e.g. a parametrized function) still holds F2P tests of
/// `remaining` — removed from the masked state with them, so they cannot run as P2P tests
/// (marshmallow's `test_date_field_deserialization[None]`) — and the others.
fn cases_of_remaining(
    session: &Session,
    remaining: &BTreeSet<TestId>,
    leaving: BTreeSet<TestId>,
) -> (BTreeSet<TestId>, BTreeSet<TestId>) {
    partition_cases(remaining, leaving, |t| test_functions(session, t))
}

/// The definitions test `t` maps to (its test function; a parametrized case maps to the
/// function of every case).
fn test_functions(session: &Session, t: &TestId) -> BTreeSet<String> {
    carve_languages::test_definitions(&session.repo, &session.index, t).unwrap_or_default().into_iter().collect()
}

/// [`cases_of_remaining`] with `defs` naming each test's function: the tests of `leaving`
/// whose function also holds a test of `remaining`, and the others.
fn partition_cases(
    remaining: &BTreeSet<TestId>,
    leaving: BTreeSet<TestId>,
    defs: impl Fn(&TestId) -> BTreeSet<String>,
) -> (BTreeSet<TestId>, BTreeSet<TestId>) {
    let kept_functions: BTreeSet<String> = remaining.iter().flat_map(&defs).collect();
    leaving.into_iter().partition(|t| !defs(t).is_disjoint(&kept_functions))
}

/// `--candidates K`: the candidates with the number of definitions each would extract,
/// most first; a stable sort, so equal sizes keep the candidates' order. Classification
/// runs no test, so this costs one BFS per candidate. A candidate that cannot be
/// classified (a flaky F2P test, say) counts 0 and is rejected with its reason when tried.
/// The ranking uses carve's own entry points, not `--entry-filter` (one external call per
/// candidate would be too many); the filter still applies to the candidates tried.
pub fn rank(
    session: &Session,
    b: &Baseline,
    t: &trace::TraceRun,
    graph: &carve_tracer::graph::ObjectGraph,
    candidates: Vec<Candidate>,
    opts: &CandidateOptions,
) -> Vec<(Candidate, usize)> {
    let run = Run { session, b, t, graph, opts, trace_digest: String::new() };
    let mut ranked: Vec<(Candidate, usize)> = candidates
        .into_iter()
        .map(|cand| {
            let size = run
                .scope(&cand.tests, &cand.tests, &BTreeSet::new(), BTreeSet::new())
                .and_then(|(scope, _)| {
                    let scope = Scope { entry_filter: None, ..scope };
                    classify_feature(session, b, &t.trace, graph, cand.tests.clone(), &scope)
                })
                .map_or(0, |f| f.extracted().len());
            (cand, size)
        })
        .collect();
    ranked.sort_by_key(|r| std::cmp::Reverse(r.1));
    ranked
}

/// Rounds of moving still-passing F2P tests to P2P before a candidate is rejected.
const MAX_REPAIR_ROUNDS: usize = 2;

/// Rounds of load repair (keeping what a load error of the masked state names) before a
/// candidate is rejected with the masked state's failure.
const MAX_LOAD_REPAIR_ROUNDS: usize = 3;

/// `feature`: rounds of making the tests that fail on the masked state F2P before a
/// candidate is rejected.
const MAX_JOIN_ROUNDS: usize = 4;

/// `id (found by test: message)`, one per kept definition, for progress and rejections.
fn load_summary(repairs: &[LoadRepair]) -> String {
    let items: Vec<String> = repairs
        .iter()
        .flat_map(|r| &r.moved)
        .map(|k| format!("{} (found by {}: {})", k.id, k.found_by, k.message))
        .collect();
    items.join("; ")
}

enum Outcome {
    Made(Made),
    /// The only problem: these F2P tests (some, not all) still pass on the masked state.
    Retry(BTreeSet<TestId>),
    /// The masked state failed tests with errors naming these extracted definitions.
    Reload(LoadRepair),
    /// P2P tests missing from the masked state that the original tree, run again, does not
    /// have either: their ids change from run to run.
    Unstable(BTreeSet<TestId>),
    /// `feature`: these P2P tests failed on the masked state because the feature went.
    Join(BTreeSet<TestId>),
}

/// The P2P tests the masked state did not have (`Missing`) that a fresh copy of the original
/// tree, run again now, does not have either: ids that change from run to run (marshmallow
/// parametrizes a test with `datetime.now()` formatted into its id; the baseline's two runs,
/// side by side, agreed within the second). They judge no state: the candidate is tried again
/// without them. `None` when no P2P test was missing or each is there on the original.
fn unstable_ids(
    session: &Session,
    v: &Validation,
    p2p: &BTreeSet<TestId>,
    dir: &std::path::Path,
) -> Result<Option<BTreeSet<TestId>>> {
    use carve_languages::runner::TestStatus;
    let missing = missing_p2p(v, p2p);
    if missing.is_empty() {
        return Ok(None);
    }
    let again = run_on_copy(session, &session.repo, "original, again", "original-again", &missing, dir)?;
    let unstable: BTreeSet<TestId> =
        again.statuses.into_iter().filter(|(_, s)| *s == TestStatus::Missing).map(|(t, _)| t).collect();
    Ok((!unstable.is_empty()).then_some(unstable))
}

/// The P2P tests a failed masked state did not have.
fn missing_p2p(v: &Validation, p2p: &BTreeSet<TestId>) -> BTreeSet<TestId> {
    v.states
        .iter()
        .filter(|s| !s.ok && s.state == "masked")
        .flat_map(|s| s.statuses.iter())
        .filter(|(t, status)| **status == carve_languages::runner::TestStatus::Missing && p2p.contains(*t))
        .map(|(t, _)| t.clone())
        .collect()
}

/// The F2P tests that passed on the masked state when that is the validation's only
/// problem and some F2P tests did fail (otherwise nothing is left to repair).
fn still_passing(v: &Validation, f2p: &BTreeSet<TestId>) -> Option<BTreeSet<TestId>> {
    let failed: Vec<&crate::validate::StateResult> = v.states.iter().filter(|s| !s.ok).collect();
    let [state] = failed.as_slice() else { return None };
    if state.state != "masked+tests" {
        return None;
    }
    let passing: BTreeSet<TestId> = state
        .statuses
        .iter()
        .filter(|(t, s)| **s == carve_languages::runner::TestStatus::Passed && f2p.contains(*t))
        .map(|(t, _)| t.clone())
        .collect();
    (!passing.is_empty() && passing.len() < f2p.len()).then_some(passing)
}

/// Extract, validate and emit the tasks of one classified feature at `levels`.
#[allow(clippy::too_many_arguments)]
fn feature_tasks(
    session: &Session,
    candidate: usize,
    b: &Baseline,
    feature: &Feature,
    opts: &CandidateOptions,
    trace: &carve_tracer::trace::Trace,
    trace_digest: &str,
    load_round: Option<usize>,
) -> Result<Outcome> {
    let (levels, threshold, describe) = (&opts.levels[..], opts.threshold, opts.describe.as_deref());
    // Per candidate: two candidates may share a slug and run at once.
    let dir = session.scratch(&format!("task-{}-{}", candidate + 1, feature.slug))?;
    let (files, tests) = removal_of_tests(session, &b.known(), &feature.f2p);
    let ext =
        extract::extract(session, &feature.extracted(), &feature.classification.removed_calls, files, tests, &dir)?;
    // Build repair kept definitions the compiler named: they remain, with that reason.
    let repaired;
    let feature = if ext.build_repairs.is_empty() {
        feature
    } else {
        repaired = feature.clone().with_build_repairs(&ext.build_repairs);
        &repaired
    };
    let mut v1 = validate_level1(session, b, feature, &ext, threshold, &dir)?;
    if v1.valid && !feature.unprotected.is_empty() {
        v1.broken_tests = broken_tests(session, &ext, &feature.unprotected, &dir)?;
    }
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    if !v1.valid {
        if let Some(passing) = still_passing(&v1, &feature.f2p) {
            let _ = std::fs::remove_dir_all(&dir);
            return Ok(Outcome::Retry(passing));
        }
        if let Some(unstable) = unstable_ids(session, &v1, &feature.p2p, &dir)? {
            let _ = std::fs::remove_dir_all(&dir);
            return Ok(Outcome::Unstable(unstable));
        }
        if feature.protection == Protection::Feature
            && let Some(outcome) = feature_failures(session, feature, &ext, trace, &v1, load_round)
        {
            let _ = std::fs::remove_dir_all(&dir);
            return Ok(outcome);
        }
        let repair = load_round.and_then(|round| {
            load_repair(session, &ext.extracted, trace, &v1, round)
                .or_else(|| call_repair(session, feature, trace, &v1, round))
        });
        if let Some(repair) = repair {
            let _ = std::fs::remove_dir_all(&dir);
            return Ok(Outcome::Reload(repair));
        }
        bad.push(Rejected { feature: feature.slug.clone(), level: None, reason: v1.reason().unwrap_or_default() });
        return Ok(Outcome::Made((ok, bad)));
    }
    let mut audit = audit_report(feature);
    audit["protection"] = serde_json::json!(crate::classify::protection_report(feature, Some(&v1.broken_tests)));
    if levels.contains(&1) {
        let task = Task { level: 1, gold_patch: &ext.gold_patch, test_patch: &ext.test_patch, validation: &v1 };
        ok.push(emit_task(session, feature, &ext, &task, &audit, trace_digest, describe)?);
    }
    if levels.contains(&2) {
        match level2_task(session, feature, &ext, &v1, &audit, &dir, opts, trace_digest)? {
            Ok(task) => ok.push(task),
            Err(reason) => bad.push(Rejected { feature: feature.slug.clone(), level: Some(2), reason }),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(Outcome::Made((ok, bad)))
}

/// The Level 2 task of a feature whose Level 1 state `v1` is valid, or why there is none.
#[allow(clippy::too_many_arguments)]
fn level2_task(
    session: &Session,
    feature: &Feature,
    ext: &extract::Extraction,
    v1: &Validation,
    audit: &Value,
    dir: &std::path::Path,
    opts: &CandidateOptions,
    trace_digest: &str,
) -> Result<std::result::Result<(String, crate::emit::TaskInstance), String>> {
    let blockers = ext.contract.level2_blockers();
    if !blockers.is_empty() {
        return Ok(Err(format!("no Level 2 task: a from-scratch package cannot provide {}", blockers.join("; "))));
    }
    let l2 = match extract::level2(session, feature, ext, dir)? {
        Err(reason) => return Ok(Err(reason)),
        Ok(l2) => l2,
    };
    // Tests carried into new files (Rust's doctests) have new ids at Level 2.
    let carried;
    let feature = if l2.f2p == feature.f2p {
        feature
    } else {
        carried = Feature { f2p: l2.f2p.clone(), ..feature.clone() };
        &carried
    };
    // A Level 2 state that cannot even be run (Rust: a reference crate that does not compile
    // fails test collection) rejects Level 2, not the feature.
    let v2 = match validate_level2(session, feature, ext, &l2, opts.threshold, dir) {
        Ok(v2) => v2,
        Err(e) => return Ok(Err(level2_error_reason(&e.to_string()))),
    };
    if !v2.valid {
        return Ok(Err(v2.reason().unwrap_or_default()));
    }
    let mut v = v1.clone();
    for s in v2.states {
        v.push(s);
    }
    let task = Task { level: 2, gold_patch: &l2.gold_patch, test_patch: &l2.test_patch, validation: &v };
    Ok(Ok(emit_task(session, feature, ext, &task, audit, trace_digest, opts.describe.as_deref())?))
}

/// The reason a Level 2 validation that could not run gives: its first line, and the first
/// compiler error in its output when it has one (the rest is the build's log).
fn level2_error_reason(message: &str) -> String {
    let first = message.lines().next().unwrap_or("").trim();
    let error = message.lines().map(str::trim).find(|l| l.starts_with("error[") || l.starts_with("error:"));
    match error {
        Some(e) if e != first => format!("level2-reference: the package and the rewritten tests do not build: {e}"),
        _ => format!("level2-reference: {first}"),
    }
}

/// Run `tests` (each must pass) in a fresh copy of `src` at `<dir>/state-<folder>`, which is
/// removed afterwards; the runner's scratch is `<dir>/run-<folder>`.
fn run_on_copy(
    session: &Session,
    src: &std::path::Path,
    state: &str,
    folder: &str,
    tests: &BTreeSet<TestId>,
    dir: &std::path::Path,
) -> Result<crate::validate::StateResult> {
    let tree = dir.join(format!("state-{folder}"));
    crate::validate::prepare_state(src, &tree, &[])?;
    let result =
        crate::validate::run_state(session, state, &tree, tests, true, 0.0, &dir.join(format!("run-{folder}")));
    let _ = std::fs::remove_dir_all(&tree);
    result
}

/// `feature`: what the P2P tests that failed on the masked state mean ([`triage`]): the
/// definitions only their fixtures reached stay (a repair round, when one is left), else
/// the tests join F2P. `None` when no P2P test failed there, or when the tests could not be
/// collected at all (a load problem, for the load repair).
fn feature_failures(
    session: &Session,
    feature: &Feature,
    ext: &extract::Extraction,
    trace: &carve_tracer::trace::Trace,
    v: &Validation,
    load_round: Option<usize>,
) -> Option<Outcome> {
    let masked = v.states.iter().find(|s| s.state == "masked" && !s.ok)?;
    if masked.messages.values().any(|m| m.starts_with("could not collect the tests")) {
        return None;
    }
    let failing: std::collections::BTreeMap<TestId, String> = masked
        .statuses
        .iter()
        .filter(|(t, s)| **s != carve_languages::runner::TestStatus::Passed && feature.p2p.contains(*t))
        .map(|(t, s)| (t.clone(), masked.messages.get(t).cloned().unwrap_or_else(|| format!("{s:?}"))))
        .collect();
    if failing.is_empty() {
        return None;
    }
    let sorted = triage(&session.index, trace, &ext.extracted, &failing);
    match load_round {
        Some(round) if !sorted.keep.is_empty() => {
            let moved = sorted
                .keep
                .into_iter()
                .map(|(id, need)| crate::classify::KeptToLoad {
                    id,
                    found_by: need.test,
                    message: need.message,
                    helper: Some(need.helper),
                })
                .collect();
            Some(Outcome::Reload(LoadRepair { round, moved }))
        }
        _ if !sorted.join.is_empty() => Some(Outcome::Join(sorted.join)),
        _ => None,
    }
}

/// The unprotected tests (`sampled:N`) that do not pass on the masked state, sorted.
fn broken_tests(
    session: &Session,
    ext: &extract::Extraction,
    unprotected: &BTreeSet<TestId>,
    dir: &std::path::Path,
) -> Result<Vec<TestId>> {
    let state = run_on_copy(session, &ext.masked, "masked (unprotected tests)", "unprotected", unprotected, dir)?;
    Ok(state
        .statuses
        .into_iter()
        .filter(|(_, s)| *s != carve_languages::runner::TestStatus::Passed)
        .map(|(t, _)| t)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::StateResult;
    use carve_languages::runner::TestStatus;

    #[test]
    fn a_group_whose_task_an_earlier_candidate_gave_is_a_duplicate() {
        let keys = [
            (false, Some((1, "gold clip"))),
            (false, Some((1, "gold width"))),
            (false, Some((1, "gold width"))), // two files, one task: both kept (files are never dropped)
            (false, None),
            (true, Some((1, "gold clip"))),   // clip-module = clip
            (true, Some((1, "gold bigger"))), // a group bigger than its files
            (true, Some((1, "gold bigger"))), // a later group with the same task as an earlier group
            (true, None),                     // rejected: nothing to compare
            (true, Some((2, "gold clip"))),   // another level's task is another task
        ];
        assert_eq!(duplicate_groups(&keys), [None, None, None, None, Some(0), None, Some(5), None, None]);
        assert_eq!(duplicate_groups(&keys), duplicate_groups(&keys), "deterministic");
    }

    /// pyjwt's `test_to_base64url_uint`: five cases fail on the masked state and join F2P;
    /// the `-1` case raises before it reaches the feature and passes, but leaves the masked
    /// state with its function: it is dropped in the same round, not left among the P2P tests
    /// to go missing and join F2P a round later. Tests of other functions stay P2P.
    #[test]
    fn the_passing_cases_of_a_function_whose_cases_join_f2p_are_dropped_with_it() {
        let ids = |xs: &[&str]| -> BTreeSet<TestId> { xs.iter().map(|s| s.to_string()).collect() };
        let defs = |t: &TestId| -> BTreeSet<String> { [t.split('[').next().unwrap().to_string()].into() };
        let mut r = Rounds { cand: ids(&["tests/test_alg.py::test_sign"]), ..Rounds::default() };
        let p2p = ids(&[
            "tests/test_utils.py::test_uint[0]",
            "tests/test_utils.py::test_uint[1]",
            "tests/test_utils.py::test_uint[-1]",
            "tests/test_utils.py::test_force_bytes",
            "tests/test_alg.py::test_sign[extra]",
        ]);
        let failing = ids(&["tests/test_utils.py::test_uint[0]", "tests/test_utils.py::test_uint[1]"]);
        let dropped = r.join(failing.clone(), &p2p, defs);
        assert_eq!(dropped, ids(&["tests/test_alg.py::test_sign[extra]", "tests/test_utils.py::test_uint[-1]"]));
        assert_eq!(r.joined, failing);
        assert_eq!(r.dropped, dropped);
        // A later round joins tests of other functions only: nothing more to drop.
        let again = r.join(ids(&["tests/test_utils.py::test_force_bytes"]), &p2p, defs);
        assert!(again.is_empty(), "{again:?}");
        assert_eq!(r.dropped, dropped);
    }

    fn state(name: &str, ok: bool, statuses: &[(&str, TestStatus)]) -> StateResult {
        let statuses = statuses.iter().map(|(t, s)| (t.to_string(), *s)).collect();
        StateResult::new(name.into(), String::new(), ok, Vec::new(), statuses)
    }

    /// Only P2P tests a failed masked state lacked are asked about again on the original
    /// (marshmallow's `test_invalid_datetime_deserialization[12-04-2026 15:10:58]`); F2P tests
    /// gone from `masked+tests`, or P2P tests that failed, are not ids that changed.
    #[test]
    fn the_missing_p2p_tests_of_a_failed_masked_state_are_the_ones_to_run_again() {
        let p2p: BTreeSet<TestId> = ["t.py::a[15:10:58]", "t.py::b", "t.py::c"].map(String::from).into();
        let mut v = Validation::new(0.0);
        v.push(state(
            "masked",
            false,
            &[
                ("t.py::a[15:10:58]", TestStatus::Missing),
                ("t.py::b", TestStatus::Failed),
                ("t.py::c", TestStatus::Passed),
            ],
        ));
        v.push(state("masked+tests", false, &[("t.py::f2p", TestStatus::Missing)]));
        assert_eq!(missing_p2p(&v, &p2p), ["t.py::a[15:10:58]".to_string()].into());
        // A masked state that passed has nothing to ask about.
        let mut ok = Validation::new(0.0);
        ok.push(state("masked", true, &[("t.py::a[15:10:58]", TestStatus::Missing)]));
        assert!(missing_p2p(&ok, &p2p).is_empty());
    }
}
