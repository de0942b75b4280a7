//! BFS classification (docs/formats.md, "Classification"): which definitions a group of fail-to-pass (F2P) tests
//! reaches, and of those, which are the feature (**extracted**) and which the rest of the
//! project still needs (**remained**), each with structured reasons.
//!
//! 1. Entry points: non-test definitions called, in an F2P test, directly from test code (a
//!    test definition, module-level code of a test file, or code outside the repository).
//! 2. BFS from them along call edges observed in F2P tests, through remained nodes too.
//!    The classes of reached methods are reached as well.
//! 3. Candidates are the reached definitions plus everything nested in them. A candidate
//!    remains when a P2P test executes it, when it runs while modules that stay load, or when
//!    code that stays needs it to load (decorators, bases, defaults/annotations, class
//!    bodies of kept definitions; module-level code), when it is a class named by
//!    kept code that runs, when a member of it remains, when it is nested in a function
//!    that remains, or when it implements an interface for a type that stays and that
//!    interface stays (a Rust trait impl: used where no path names it, the mask keeps it
//!    and stubs its extracted methods). These rules are applied to a fixpoint; the rest
//!    is extracted.
//!
//! Code in test files that the masked state drops (files with F2P tests and no P2P test)
//! keeps nothing alive, nor do the F2P test functions the mask takes out of files that stay,
//! nor a listing in `__all__` (the mask edits the list). Other test code that stays keeps a
//! definition alive by running only when a P2P test or a module load runs it; what it
//! needs to load (decorators, bases, annotations) stays regardless. A value binding
//! (`peekn = curry(peekn)`, a class attribute, a lookup-table entry) keeps what it names only
//! while code that stays and runs names what it binds; otherwise the mask deletes it too.
//!
//! The rules live one per file in `classify/rules/` (what each decides, why, an example,
//! the check and its test; `rules/mod.rs` lists them in the order they apply). This file
//! is the driver: the entry points, then [`classify_with`] runs the steps — `context.rs`
//! (facts computed once), `reach.rs` (the BFS and the candidates), `fixpoint.rs` (the rules
//! to a fixpoint), `decide.rs` (one decision per definition); `budget.rs` keeps what a line
//! budget cannot fit, and the steps run again.

mod budget;
mod context;
mod decide;
mod decision;
mod fixpoint;
mod reach;
pub mod removal;
mod rules;
#[cfg(test)]
mod tests;

pub use decision::{CLASSIFICATION_VERSION, Classification, Decision, Reason, RemovedCall, Status};

use std::collections::{BTreeMap, BTreeSet};

use carve_languages::{DefinitionIndex, NodeId};

use crate::graph::ObjectGraph;
use crate::trace::{Caller, IMPORT_TEST, TestId, TestTrace, Trace};
use context::{Context, is_test_def, test_file};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClassifyError {
    #[error("no F2P tests given: pass the feature's tests with --f2p")]
    NoF2p,
    #[error("`{IMPORT_TEST}` is the pseudo-test of import-time code, not a test; it cannot be F2P")]
    ImportIsNotATest,
    #[error("test `{test}` is given both as F2P and as P2P; a test belongs to one group")]
    BothF2pAndP2p { test: TestId },
    #[error(
        "F2P test `{test}` has no trace: it did not run under the shim (wrong id, deselected, or \
         the trace is stale — re-run `carve trace`){}",
        similar_hint(similar)
    )]
    NoTrace { test: TestId, similar: Vec<TestId> },
    #[error(
        "no entry point: the F2P tests ({}) never called repository code from test code; check \
         that the code under test is indexed, is not itself in a test file, and was probed",
        tests.join(", ")
    )]
    NoEntryPoints { tests: Vec<TestId> },
    #[error("`{node}` is not an entry point candidate of these F2P tests (candidates: {})", candidates.join(", "))]
    NotACandidate { node: NodeId, candidates: Vec<NodeId> },
}

fn similar_hint(similar: &[TestId]) -> String {
    if similar.is_empty() { String::new() } else { format!("; traced tests nearby: {}", similar.join(", ")) }
}

/// Test code, for entry points: a test definition, module-level code of a test file, or code
/// the index does not know (outside the repository).
fn is_test_code(index: &DefinitionIndex, caller: &Caller) -> bool {
    match caller {
        Caller::External => true,
        Caller::Module(path) => index.files.get(path).is_none_or(|f| f.is_test),
        Caller::Node(id) => index.get(id).is_none_or(|d| is_test_def(index, d)),
    }
}

fn f2p_traces<'t>(trace: &'t Trace, f2p: &BTreeSet<TestId>) -> Result<Vec<(&'t TestId, &'t TestTrace)>, ClassifyError> {
    if f2p.is_empty() {
        return Err(ClassifyError::NoF2p);
    }
    if f2p.contains(IMPORT_TEST) {
        return Err(ClassifyError::ImportIsNotATest);
    }
    f2p.iter()
        .map(|test| match trace.tests.get_key_value(test) {
            Some(found) => Ok(found),
            None => {
                let file = test_file(test);
                let similar = trace.tests.keys().filter(|t| test_file(t) == file).take(5).cloned().collect();
                Err(ClassifyError::NoTrace { test: test.clone(), similar })
            }
        })
        .collect()
}

/// Entry point candidates of the F2P tests, each with the smallest F2P test that called it
/// from test code. Errors when an F2P test has no trace or no candidate exists.
pub fn entry_points(
    index: &DefinitionIndex,
    trace: &Trace,
    f2p: &BTreeSet<TestId>,
) -> Result<BTreeMap<NodeId, TestId>, ClassifyError> {
    let mut entries = BTreeMap::new();
    for (test, t) in f2p_traces(trace, f2p)? {
        for (caller, callee) in &t.edges {
            let Some(def) = index.get(callee) else {
                continue;
            };
            if !is_test_def(index, def) && is_test_code(index, caller) {
                entries.entry(callee.clone()).or_insert_with(|| test.clone());
            }
        }
    }
    if entries.is_empty() {
        return Err(ClassifyError::NoEntryPoints { tests: f2p.iter().cloned().collect() });
    }
    Ok(entries)
}

/// Classifies with the deterministic entry points of [`entry_points`].
pub fn classify(
    index: &DefinitionIndex,
    graph: &ObjectGraph,
    trace: &Trace,
    f2p: &BTreeSet<TestId>,
    p2p: &BTreeSet<TestId>,
) -> Result<Classification, ClassifyError> {
    let entries = entry_points(index, trace, f2p)?.into_keys().collect();
    classify_with_entries(index, graph, trace, f2p, p2p, entries)
}

/// Classifies starting from `entries`, a non-empty subset of [`entry_points`] (for example as
/// narrowed by a user's filter command).
pub fn classify_with_entries(
    index: &DefinitionIndex,
    graph: &ObjectGraph,
    trace: &Trace,
    f2p: &BTreeSet<TestId>,
    p2p: &BTreeSet<TestId>,
    entries: BTreeSet<NodeId>,
) -> Result<Classification, ClassifyError> {
    classify_keeping(index, graph, trace, f2p, p2p, entries, &BTreeSet::new())
}

/// [`classify_with_entries`] where the definitions `kept` remain whatever the rules say (a
/// repair found the masked state needs them), so that the fixpoint decides the rest with
/// them in place: a callee extracted only because its caller was, say, is then extracted
/// only with that caller's call statements, or kept. The caller records why they remain.
pub fn classify_keeping(
    index: &DefinitionIndex,
    graph: &ObjectGraph,
    trace: &Trace,
    f2p: &BTreeSet<TestId>,
    p2p: &BTreeSet<TestId>,
    entries: BTreeSet<NodeId>,
    kept: &BTreeSet<NodeId>,
) -> Result<Classification, ClassifyError> {
    let options = ClassifyOptions { kept: kept.clone(), ..ClassifyOptions::default() };
    classify_with(index, graph, trace, f2p, p2p, entries, &options)
}

/// What a classification is told beyond the feature's tests and the tests that protect
/// what they run (see [`classify_with`]).
#[derive(Debug, Clone, Default)]
pub struct ClassifyOptions {
    /// Tests that stay in the masked state but protect nothing they run (the protection
    /// policies `sampled:N` and `feature`): a test file holding one is not deleted, so its
    /// module-level code still runs at collection time and keeps what it names.
    pub unprotected: BTreeSet<TestId>,
    /// Definitions that remain whatever the rules say (what a repair kept; the caller
    /// records why).
    pub kept: BTreeSet<NodeId>,
    /// The line budget: at most this many source lines of extracted definitions, counted
    /// whole (see `budget.rs`); `None`: no budget.
    pub max_lines: Option<usize>,
}

/// Rounds of the line budget: each keeps what did not fit and classifies again.
const BUDGET_ROUNDS: usize = 3;

/// Classifies starting from `entries` (see [`classify_with_entries`]) with `options`: the
/// tests that stay without protecting, what a repair kept, and the line budget. Over the
/// budget, the definitions the walk of `budget.rs` could not fit remain (each with
/// [`Reason::OverBudget`]) and the rules decide again, at most [`BUDGET_ROUNDS`] times.
pub fn classify_with(
    index: &DefinitionIndex,
    graph: &ObjectGraph,
    trace: &Trace,
    f2p: &BTreeSet<TestId>,
    p2p: &BTreeSet<TestId>,
    entries: BTreeSet<NodeId>,
    options: &ClassifyOptions,
) -> Result<Classification, ClassifyError> {
    // Import-time code has its own rule; `<import>` among the P2P tests would keep everything
    // any module load ran, including loads of the removed F2P test files.
    let p2p_tests: BTreeSet<TestId> = p2p.iter().filter(|t| *t != IMPORT_TEST).cloned().collect();
    let p2p = &p2p_tests;
    if let Some(test) = f2p.intersection(p2p).next() {
        return Err(ClassifyError::BothF2pAndP2p { test: test.clone() });
    }
    let candidates = entry_points(index, trace, f2p)?;
    if entries.is_empty() {
        return Err(ClassifyError::NoEntryPoints { tests: f2p.iter().cloned().collect() });
    }
    if let Some(node) = entries.iter().find(|e| !candidates.contains_key(*e)) {
        return Err(ClassifyError::NotACandidate { node: node.clone(), candidates: candidates.into_keys().collect() });
    }
    let unprotected: BTreeSet<TestId> =
        options.unprotected.iter().filter(|t| *t != IMPORT_TEST && !f2p.contains(*t)).cloned().collect();
    let mut kept = options.kept.clone();
    let mut over_budget: BTreeSet<NodeId> = BTreeSet::new();
    let mut round = 0;
    let (cx, origin, extracted) = loop {
        round += 1;
        let cx = Context::new(index, trace, f2p, p2p, &unprotected, entries.clone(), kept.clone());
        let mut origin = reach::reached(index, graph, f2p, &entries, &candidates);
        let mut extracted = reach::candidates(&cx, &origin);
        fixpoint::settle(&cx, &mut extracted, &mut origin);
        let cut = match options.max_lines {
            Some(max) if round <= BUDGET_ROUNDS => budget::over_budget(&cx, graph, f2p, &extracted, &origin, max),
            _ => BTreeSet::new(),
        };
        if cut.is_empty() {
            break (cx, origin, extracted);
        }
        kept.extend(cut.iter().cloned());
        over_budget.extend(cut);
    };
    let (mut nodes, removed_calls) = decide::decisions(&cx, &origin, &extracted);
    if let Some(max_lines) = options.max_lines {
        budget::explain(&mut nodes, &over_budget, max_lines);
    }
    Ok(Classification {
        version: CLASSIFICATION_VERSION,
        f2p: f2p.iter().cloned().collect(),
        p2p_count: p2p.len(),
        p2p_untraced: p2p.iter().filter(|t| !trace.tests.contains_key(*t)).cloned().collect(),
        unprotected_count: unprotected.len(),
        removed_test_files: cx.removed_files.iter().map(|s| s.to_string()).collect(),
        entry_points: entries.into_iter().collect(),
        nodes,
        removed_calls,
        max_lines: options.max_lines,
        over_budget: over_budget.into_iter().collect(),
    })
}
