//! BFS classification (design.md §5): which definitions a group of fail-to-pass (F2P) tests
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

mod decision;
pub mod removal;
#[cfg(test)]
mod tests;

pub use decision::{CLASSIFICATION_VERSION, Classification, Decision, Reason, RemovedCall, Status};

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use carve_languages::index::{DefinitionKind, DiscardedCall, LoadRole, ValueBinding};
use carve_languages::{Definition, DefinitionIndex, NodeId};

use crate::graph::ObjectGraph;
use crate::trace::{Caller, IMPORT_TEST, TestId, TestTrace, Trace};

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

/// The repository-relative file of a test id (`path::Class::test[param]` -> `path`,
/// `path > describe > test` -> `path`).
fn test_file(test: &str) -> &str {
    carve_languages::runner::test_file(test)
}

/// The test file of a test id in `index`: the id's file part when the index has that file,
/// else the file of the test definition the id names (a Go id `importpath/TestX/sub` names
/// no file; its `TestX` lives in a `_test.go` file). The languages resolve test ids from
/// the index alone, so no repository root is needed (`""`).
fn test_file_in<'a>(index: &'a DefinitionIndex, test: &'a str) -> &'a str {
    let file = test_file(test);
    if index.files.contains_key(file) {
        return file;
    }
    carve_languages::test_definitions(std::path::Path::new(""), index, test)
        .ok()
        .and_then(|defs| defs.iter().find_map(|d| index.get(d)).map(|d| d.path.as_str()))
        .unwrap_or(file)
}

fn is_test_def(index: &DefinitionIndex, def: &Definition) -> bool {
    def.is_test || index.files.get(&def.path).is_some_and(|f| f.is_test)
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
    let mut ctx = Context::new(index, trace, f2p, p2p);
    ctx.kept = kept.clone();
    ctx.entries = entries.clone();

    // BFS along F2P call edges; `origin` says how each definition was reached.
    let mut origin: BTreeMap<NodeId, Reason> = BTreeMap::new();
    let mut queue: VecDeque<NodeId> = VecDeque::new();
    for e in &entries {
        origin.insert(e.clone(), Reason::EntryPoint { test: candidates[e].clone() });
        queue.push_back(e.clone());
    }
    while let Some(n) = queue.pop_front() {
        for callee in graph.callees_in(&Caller::Node(n.clone()), f2p) {
            let Some(def) = index.get(callee) else {
                continue;
            };
            if is_test_def(index, def) || origin.contains_key(callee) {
                continue;
            }
            origin.insert(callee.clone(), Reason::Reached { from: n.clone() });
            queue.push_back(callee.clone());
        }
    }
    // Classes of reached members are reached too.
    for id in origin.keys().cloned().collect::<Vec<_>>() {
        let mut child = id;
        while let Some(parent) = index.get(&child).and_then(|d| d.parent.clone()) {
            match index.get(&parent) {
                Some(p) if p.kind.is_class_like() && !is_test_def(index, p) => {}
                _ => break,
            }
            origin.entry(parent.clone()).or_insert(Reason::HasReachedMember { member: child.clone() });
            child = parent;
        }
    }

    // Candidates: reached definitions and everything nested in them.
    let mut extracted: BTreeSet<NodeId> = BTreeSet::new();
    let mut stack: Vec<&NodeId> = origin.keys().collect();
    while let Some(id) = stack.pop() {
        if extracted.insert(id.clone()) {
            stack.extend(ctx.children.get(id.as_str()).into_iter().flatten().copied());
        }
    }
    // Remove what must stay, until nothing changes (every rule only grows what stays); then
    // add what no test runs and only the extracted code names, and decide again.
    for _ in 0..4 {
        loop {
            let keep: Vec<NodeId> =
                extracted.iter().filter(|x| ctx.must_keep(x, &extracted, &origin)).cloned().collect();
            if keep.is_empty() {
                break;
            }
            for x in keep {
                extracted.remove(&x);
            }
        }
        let named: Vec<(NodeId, NodeId)> = ctx
            .unrun_candidates()
            .filter(|id| !extracted.contains(*id) && !origin.contains_key(*id))
            .filter_map(|id| ctx.named_only_by_removed(id, &extracted).map(|by| (id.clone(), by)))
            .collect();
        let orphaned: Vec<(NodeId, Reason)> = ctx
            .p2p_hits
            .keys()
            .filter(|id| !extracted.contains(**id) && !origin.contains_key(**id))
            .filter_map(|id| ctx.called_only_with_feature(id, &extracted).map(|with| (id.to_string(), with)))
            .map(|(id, with)| (id, Reason::CalledOnlyWithFeature { with }))
            .collect();
        if named.is_empty() && orphaned.is_empty() {
            break;
        }
        let named = named.into_iter().map(|(id, by)| (id, Reason::NamedOnlyByFeature { by }));
        for (id, reason) in named.chain(orphaned) {
            origin.insert(id.clone(), reason);
            let mut stack = vec![id];
            while let Some(x) = stack.pop() {
                stack.extend(ctx.children.get(x.as_str()).into_iter().flatten().map(|c| (*c).clone()));
                extracted.insert(x);
            }
        }
    }

    let mut nodes = BTreeMap::new();
    let mut removed_calls: Vec<RemovedCall> = Vec::new();
    for id in origin.keys().chain(extracted.iter()) {
        if nodes.contains_key(id) {
            continue;
        }
        let mut decision = if extracted.contains(id) {
            let mut reasons: Vec<Reason> = origin.get(id).cloned().into_iter().collect();
            if let Some(parent) = ctx.parent_of(id).filter(|p| extracted.contains(p.id.as_str())) {
                reasons.push(if parent.kind.is_class_like() {
                    Reason::MemberOfExtracted { class: parent.id.clone() }
                } else {
                    Reason::ParentExtracted { parent: parent.id.clone() }
                });
            }
            if let Some((test, _)) = ctx.p2p_hits.get(id.as_str())
                && let Some((calls, extracted_callers)) = ctx.p2p_only_through_removed(id, &extracted)
            {
                for caller in &calls {
                    for c in ctx.removable_calls(caller, id) {
                        removed_calls.push(RemovedCall::of(index, id, c));
                    }
                }
                reasons.push(Reason::P2pOnlyThroughRemoved { test: (*test).clone(), calls, extracted_callers });
            }
            Decision { status: Status::Extracted, reasons }
        } else {
            let mut reasons = ctx.keep_reasons(id, &extracted, &origin, true);
            reasons.extend(origin.get(id).cloned());
            Decision { status: Status::Remained, reasons }
        };
        decision.reasons.sort();
        decision.reasons.dedup();
        nodes.insert(id.clone(), decision);
    }

    Ok(Classification {
        version: CLASSIFICATION_VERSION,
        f2p: f2p.iter().cloned().collect(),
        p2p_count: p2p.len(),
        p2p_untraced: p2p.iter().filter(|t| !trace.tests.contains_key(*t)).cloned().collect(),
        removed_test_files: ctx.removed_files.iter().map(|s| s.to_string()).collect(),
        entry_points: entries.into_iter().collect(),
        nodes,
        removed_calls: {
            removed_calls.sort();
            removed_calls.dedup();
            removed_calls
        },
    })
}

/// Facts computed once per classification.
struct Context<'a> {
    index: &'a DefinitionIndex,
    removed_files: BTreeSet<&'a str>,
    children: BTreeMap<&'a str, Vec<&'a NodeId>>,
    /// Definition -> (smallest P2P test that hit it, number of P2P tests that did).
    p2p_hits: BTreeMap<&'a str, (&'a TestId, usize)>,
    import_time: BTreeSet<&'a str>,
    /// Target -> definitions (in files that stay) needing it to load, with the role.
    load_needers: BTreeMap<&'a str, Vec<(&'a NodeId, LoadRole)>>,
    /// Implementation of an interface (in a file that stays) -> the type it is for.
    implementations: BTreeMap<&'a str, &'a str>,
    /// Target -> module-level uses in files that stay.
    module_needs: BTreeMap<&'a str, Vec<Reason>>,
    /// Target -> value bindings in files that stay naming it, with their file.
    binding_needs: BTreeMap<&'a str, Vec<(&'a ValueBinding, &'a str)>>,
    /// F2P tests the mask takes out of test files that stay.
    removed_tests: BTreeSet<&'a str>,
    /// Class -> definitions (in files that stay) whose body names it.
    class_refs: BTreeMap<&'a str, Vec<&'a NodeId>>,
    /// Kept code that runs: hit by a P2P test or at import time, or test code that stays.
    executed: BTreeSet<&'a str>,
    /// Callee -> the callers P2P tests recorded calling it; `None` when a P2P test hit it
    /// with no caller recorded (nothing can explain that hit).
    p2p_callers: BTreeMap<&'a str, Option<BTreeSet<&'a Caller>>>,
    /// Caller (a non-test definition in a file that stays) -> its discarded-value calls.
    discarded_calls: BTreeMap<&'a str, Vec<&'a DiscardedCall>>,
    /// Target -> definitions in files that stay (not removed tests) naming it in their body.
    body_refs: BTreeMap<&'a str, Vec<&'a NodeId>>,
    /// Definition -> number of F2P tests that hit it.
    f2p_hits: BTreeMap<&'a str, usize>,
    /// Definitions that remain whatever the rules say (kept by a repair).
    kept: BTreeSet<NodeId>,
    /// The entry points: definitions F2P test code calls.
    entries: BTreeSet<NodeId>,
    /// Target -> every definition (in any file) naming it in its body.
    named_by: BTreeMap<&'a str, Vec<&'a NodeId>>,
    /// Target -> discarded-value calls of code that stays whose statements alone name it.
    named_in_calls: BTreeMap<&'a str, Vec<&'a DiscardedCall>>,
    /// Definitions some test (F2P, P2P or a module load) runs.
    run: BTreeSet<&'a str>,
}

impl<'a> Context<'a> {
    fn new(index: &'a DefinitionIndex, trace: &'a Trace, f2p: &'a BTreeSet<TestId>, p2p: &'a BTreeSet<TestId>) -> Self {
        let p2p_files: BTreeSet<&str> = p2p.iter().map(|t| test_file_in(index, t)).collect();
        let whole: BTreeSet<String> = f2p
            .iter()
            .map(|t| test_file_in(index, t))
            .filter(|f| !p2p_files.contains(f) && index.files.get(*f).is_some_and(|fi| fi.is_test))
            .map(str::to_string)
            .collect();
        let deletable = removal::deletable_test_files(index, &whole);
        let removed_files: BTreeSet<&str> =
            index.files.keys().filter(|f| deletable.contains(*f)).map(String::as_str).collect();
        let stays = |path: &str| !removed_files.contains(path);

        let mut children: BTreeMap<&str, Vec<&NodeId>> = BTreeMap::new();
        for def in index.definitions.values() {
            if let Some(p) = &def.parent {
                children.entry(p.as_str()).or_default().push(&def.id);
            }
        }
        let mut p2p_hits: BTreeMap<&str, (&TestId, usize)> = BTreeMap::new();
        for (test, t) in p2p.iter().filter_map(|t| trace.tests.get_key_value(t)) {
            for hit in &t.hits {
                p2p_hits.entry(hit.as_str()).and_modify(|(_, n)| *n += 1).or_insert((test, 1));
            }
        }
        let import_time = import_time(index, trace, &removed_files);
        let removed_tests = removed_test_definitions(index, f2p, &removed_files, &deletable);

        // Test code that shims probe only as callers (no hits of its own) ran in a P2P test
        // when it called probed code there.
        let p2p_callers: BTreeSet<&str> = p2p
            .iter()
            .filter_map(|t| trace.tests.get(t))
            .flat_map(|t| &t.edges)
            .filter_map(|(caller, _)| match caller {
                Caller::Node(id) => Some(id.as_str()),
                _ => None,
            })
            .collect();
        let mut p2p_callers_of: BTreeMap<&str, Option<BTreeSet<&Caller>>> = BTreeMap::new();
        for t in p2p.iter().filter_map(|t| trace.tests.get(t)) {
            let mut into: BTreeMap<&str, Vec<&Caller>> = BTreeMap::new();
            for (caller, callee) in &t.edges {
                into.entry(callee.as_str()).or_default().push(caller);
            }
            for hit in &t.hits {
                let entry = p2p_callers_of.entry(hit.as_str()).or_insert_with(|| Some(BTreeSet::new()));
                match (into.get(hit.as_str()), entry.as_mut()) {
                    (Some(callers), Some(set)) => set.extend(callers.iter().copied()),
                    (None, _) => *entry = None,
                    (_, None) => {}
                }
            }
        }
        let mut f2p_hits: BTreeMap<&str, usize> = BTreeMap::new();
        for t in f2p.iter().filter_map(|t| trace.tests.get(t)) {
            for hit in &t.hits {
                *f2p_hits.entry(hit.as_str()).or_default() += 1;
            }
        }
        let mut discarded_calls: BTreeMap<&str, Vec<&DiscardedCall>> = BTreeMap::new();
        let mut body_refs: BTreeMap<&str, Vec<&NodeId>> = BTreeMap::new();
        let mut load_needers: BTreeMap<&str, Vec<(&NodeId, LoadRole)>> = BTreeMap::new();
        let mut implementations: BTreeMap<&str, &str> = BTreeMap::new();
        let mut class_refs: BTreeMap<&str, Vec<&NodeId>> = BTreeMap::new();
        let mut executed: BTreeSet<&str> = BTreeSet::new();
        for def in index.definitions.values().filter(|d| stays(&d.path)) {
            // F2P tests taken out of a file that stays need nothing to load.
            if within(index, &def.id, &removed_tests) {
                continue;
            }
            for load in &def.load_references {
                if load.role == LoadRole::Implementation {
                    implementations.insert(def.id.as_str(), load.target.as_str());
                    continue;
                }
                load_needers.entry(load.target.as_str()).or_default().push((&def.id, load.role));
            }
            for target in &def.references {
                if index.get(target).is_some_and(|t| t.kind.is_class_like()) {
                    class_refs.entry(target.as_str()).or_default().push(&def.id);
                }
                body_refs.entry(target.as_str()).or_default().push(&def.id);
            }
            // Test code that stays runs only when a P2P test or a module load runs it (a
            // test helper only the F2P tests call keeps nothing alive).
            if p2p_hits.contains_key(def.id.as_str())
                || p2p_callers.contains(def.id.as_str())
                || import_time.contains(def.id.as_str())
            {
                executed.insert(def.id.as_str());
            }
        }
        for (_, file) in index.files.iter().filter(|(p, f)| stays(p) && !f.is_test) {
            for c in &file.discarded_calls {
                if index.get(&c.caller).is_some_and(|d| !is_test_def(index, d)) {
                    discarded_calls.entry(c.caller.as_str()).or_default().push(c);
                }
            }
        }
        let mut named_by: BTreeMap<&str, Vec<&NodeId>> = BTreeMap::new();
        for def in index.definitions.values() {
            for target in &def.references {
                named_by.entry(target.as_str()).or_default().push(&def.id);
            }
        }
        let mut named_in_calls: BTreeMap<&str, Vec<&DiscardedCall>> = BTreeMap::new();
        for c in discarded_calls.values().flatten() {
            for n in &c.names {
                named_in_calls.entry(n.as_str()).or_default().push(c);
            }
        }
        let run: BTreeSet<&str> = trace.tests.values().flat_map(|t| t.hits.iter().map(String::as_str)).collect();
        let mut module_needs: BTreeMap<&str, Vec<Reason>> = BTreeMap::new();
        for (path, file) in index.files.iter().filter(|(p, _)| stays(p)) {
            for r in &file.module_references {
                module_needs
                    .entry(r.target.as_str())
                    .or_default()
                    .push(Reason::ModuleLevel { path: path.clone(), line: r.line });
            }
        }
        // A lone list entry is no reason to keep: the mask takes the line out with what it
        // names and the gold patch puts it back, as with `__all__`.
        for r in index.config_references.iter().filter(|r| !r.removable) {
            module_needs
                .entry(r.target.as_str())
                .or_default()
                .push(Reason::NamedByConfig { path: r.path.clone(), line: r.line });
        }
        // `__all__` is no reason to keep: the mask takes extracted names out of it and the
        // gold patch puts them back (design.md §5).
        let mut binding_needs: BTreeMap<&str, Vec<(&ValueBinding, &str)>> = BTreeMap::new();
        for (path, file) in index.files.iter().filter(|(p, _)| stays(p)) {
            for b in &file.value_bindings {
                for t in &b.targets {
                    binding_needs.entry(t.target.as_str()).or_default().push((b, path.as_str()));
                }
            }
        }
        Context {
            index,
            removed_files,
            children,
            p2p_hits,
            import_time,
            load_needers,
            implementations,
            module_needs,
            binding_needs,
            removed_tests,
            class_refs,
            executed,
            p2p_callers: p2p_callers_of,
            discarded_calls,
            body_refs,
            f2p_hits,
            kept: BTreeSet::new(),
            entries: BTreeSet::new(),
            named_by,
            named_in_calls,
            run,
        }
    }

    /// The discarded-value calls of `id` in `caller` that the mask would delete with it. Only
    /// calls that resolve statically to `id` count: a call on an object the index cannot
    /// resolve (`result.add_row(line, row)` on a local) may have effects that code that stays
    /// relies on, and a name alone does not tell a check of its arguments from an effect.
    ///
    /// A call whose value is only tested (`msg = alg.check_key_length(key)` then `if msg: …`)
    /// counts also when it names `id`'s method on an object the index does not resolve: its
    /// value, not an effect, is what the code around it uses, and the trace shows `caller`
    /// calling `id`.
    fn removable_calls(&self, caller: &str, id: &str) -> Vec<&'a DiscardedCall> {
        let name = self.index.get(id).map(|d| d.name.as_str());
        self.discarded_calls
            .get(caller)
            .into_iter()
            .flatten()
            .filter(|c| {
                c.target.as_deref() == Some(id) || (c.tested && c.target.is_none() && Some(c.name.as_str()) == name)
            })
            .copied()
            .collect()
    }

    /// Whether every P2P execution of `id` (a function or method outside test code, which
    /// fewer P2P tests than F2P tests execute) comes from
    /// code the mask deletes: an extracted definition (or one nested in it), or a
    /// discarded-value call in code that stays, which the mask deletes with `id`; and no
    /// other code that stays names `id` in its body. Returns the callers whose calls go, and
    /// the extracted callers; `None` when some P2P execution is not explained so.
    fn p2p_only_through_removed(&self, id: &str, extracted: &BTreeSet<NodeId>) -> Option<(Vec<NodeId>, Vec<NodeId>)> {
        self.through_removed(id, extracted, true)
    }

    /// [`Self::p2p_only_through_removed`]; with `shared`, a definition that P2P tests run as
    /// much as F2P tests (or more) counts too when each of its calls in code that stays is a
    /// statement the mask deletes anyway, with another extracted callee of the same name
    /// (`msg = alg.check_key_length(key)` goes with the HMAC and RSA overrides; the base
    /// method the other algorithms inherit is then called by nothing that stays).
    fn through_removed(
        &self,
        id: &str,
        extracted: &BTreeSet<NodeId>,
        shared: bool,
    ) -> Option<(Vec<NodeId>, Vec<NodeId>)> {
        let def = self.index.get(id)?;
        if !matches!(def.kind, DefinitionKind::Function | DefinitionKind::Method) || is_test_def(self.index, def) {
            return None;
        }
        // The feature's tests must be its main users: a definition as many P2P tests run as
        // F2P tests do is shared code the feature merely passes through (`_verify_signature`,
        // run by 108 P2P tests and 1 F2P test), whose removal would change what they check.
        // A definition F2P test code calls itself is what those tests are about, however many
        // P2P tests pass through it. Shared code whose every call goes anyway is dead in the
        // masked state: its removal changes nothing the P2P tests can see.
        let p2p_count = self.p2p_hits.get(id).map_or(0, |(_, n)| *n);
        let main_users = p2p_count < self.f2p_hits.get(id).copied().unwrap_or(0) || self.entries.contains(id);
        if !main_users && !shared {
            return None;
        }
        let callers = self.p2p_callers.get(id)?.as_ref()?;
        let gone = |c: &str| self.index.lineage(c).any(|a| extracted.contains(a));
        let (mut calls, mut from_extracted) = (BTreeSet::new(), BTreeSet::new());
        for caller in callers {
            let Caller::Node(c) = caller else { return None };
            let removable = self.removable_calls(c, id);
            if gone(c) {
                from_extracted.insert(c.clone());
            } else if !removable.is_empty()
                && (main_users || removable.iter().all(|k| self.deleted_with(k, id, extracted).is_some()))
            {
                calls.insert(c.clone());
            } else {
                return None;
            }
        }
        if calls.is_empty() && (from_extracted.is_empty() || !main_users) {
            return None;
        }
        // Code that stays and names it otherwise might run it where no edge was recorded.
        for by in self.body_refs.get(id).into_iter().flatten() {
            if !gone(by) && self.removable_calls(by, id).is_empty() {
                return None;
            }
        }
        Some((calls.into_iter().collect(), from_extracted.into_iter().collect()))
    }

    /// Whether code that stays and runs names what value binding `b` binds: module-level
    /// code of a file that stays, a class body that stays, or a definition that stays and
    /// runs in a P2P test or at import time (an F2P test taken out of its file does not).
    /// An entry of a literal is looked up at run time, never by name: no use is known, and
    /// the trace of what it names decides (a P2P test that looks it up runs it).
    fn binding_used(&self, b: &ValueBinding, extracted: &BTreeSet<NodeId>) -> bool {
        let gone = |id: &str| {
            let mut cur = Some(id);
            while let Some(c) = cur {
                if extracted.contains(c) || self.removed_tests.contains(c) {
                    return true;
                }
                cur = self.index.get(c).and_then(|d| d.parent.as_deref());
            }
            false
        };
        b.named_by.iter().any(|by| match self.index.get(by) {
            Some(d) => {
                !self.removed_files.contains(d.path.as_str())
                    && !gone(by)
                    && (d.kind.is_class_like() || self.executed.contains(by.as_str()))
            }
            None => self.index.files.contains_key(by) && !self.removed_files.contains(by.as_str()),
        })
    }

    /// The reason implementation `id` stays with `of` (the type that stays), unless the
    /// interface it implements (its base) is extracted: the mask deletes an interface with
    /// its implementations. `by`: the first definition that stays, runs or was reached, and
    /// names the interface, other than the interface's own implementations.
    fn implementation(
        &self,
        id: &str,
        of: NodeId,
        extracted: &BTreeSet<NodeId>,
        origin: &BTreeMap<NodeId, Reason>,
    ) -> Option<Reason> {
        let def = self.index.get(id)?;
        let interfaces: Vec<&str> =
            def.load_references.iter().filter(|l| l.role == LoadRole::BaseClass).map(|l| l.target.as_str()).collect();
        if interfaces.iter().any(|i| extracted.contains(*i)) {
            return None;
        }
        let interface = def.signature.bases.first().cloned().unwrap_or_else(|| {
            interfaces
                .first()
                .and_then(|i| self.index.get(i))
                .map_or_else(|| def.name.trim_matches(|c| c == '<' || c == '>').to_string(), |i| i.name.clone())
        });
        let implements = |d: &str| {
            let mut cur = self.index.get(d);
            while let Some(c) = cur {
                let base = |l: &carve_languages::index::LoadReference| {
                    l.role == LoadRole::BaseClass && interfaces.contains(&l.target.as_str())
                };
                if interfaces.contains(&c.id.as_str()) || c.load_references.iter().any(base) {
                    return true;
                }
                cur = c.parent.as_deref().and_then(|p| self.index.get(p)).filter(|p| encloses(p, c));
            }
            false
        };
        let by = interfaces
            .iter()
            .flat_map(|i| self.class_refs.get(*i).into_iter().flatten())
            .filter(|by| !extracted.contains(**by) && !implements(by))
            .filter(|by| self.executed.contains(by.as_str()) || origin.contains_key(**by))
            .map(|by| (*by).clone())
            .min();
        Some(Reason::Implementation { interface, of, by })
    }

    /// Top-level functions and classes outside test code, in files that stay, that no test
    /// runs and something names: candidates for [`Reason::NamedOnlyByFeature`].
    fn unrun_candidates(&self) -> impl Iterator<Item = &'a NodeId> + '_ {
        self.index
            .definitions
            .values()
            .filter(move |d| {
                d.parent.is_none()
                    && (d.kind.is_class_like() || matches!(d.kind, DefinitionKind::Function))
                    && !is_test_def(self.index, d)
                    && !self.removed_files.contains(d.path.as_str())
                    && !self.run.contains(d.id.as_str())
                    && !self.kept.contains(&d.id)
                    && (self.named_by.contains_key(d.id.as_str()) || self.named_in_calls.contains_key(d.id.as_str()))
            })
            .map(|d| &d.id)
    }

    /// Whether the mask deletes discarded-value call `c` (of code that stays) with what it
    /// calls, given what is extracted: its callee goes, and P2P tests run the callee only
    /// through such calls.
    fn call_goes(&self, c: &DiscardedCall, extracted: &BTreeSet<NodeId>) -> bool {
        let callees: Vec<&NodeId> = match &c.target {
            Some(t) => extracted.get(t).into_iter().collect(),
            None if c.tested => {
                extracted.iter().filter(|e| self.index.get(e).is_some_and(|d| d.name == c.name)).collect()
            }
            None => Vec::new(),
        };
        callees.into_iter().any(|t| {
            self.p2p_hits.contains_key(t.as_str())
                && self.removable_calls(&c.caller, t).contains(&c)
                && self.p2p_only_through_removed(t, extracted).is_some()
        })
    }

    /// The extracted callee other than `id` (the first) with which the mask deletes call
    /// statement `c`: one the feature's tests mainly use (never through the shared rule, so
    /// this does not recurse).
    fn deleted_with<'e>(&self, c: &DiscardedCall, id: &str, extracted: &'e BTreeSet<NodeId>) -> Option<&'e NodeId> {
        extracted.iter().find(|t| {
            t.as_str() != id
                && self.removable_calls(&c.caller, t).contains(&c)
                && self.through_removed(t, extracted, false).is_some()
        })
    }

    /// For a definition the F2P tests do not reach but P2P tests run: the extracted callee
    /// with which the mask deletes every call to it in code that stays (the first, when
    /// several), when nothing else that stays calls or needs it; else `None`.
    fn called_only_with_feature(&self, id: &str, extracted: &BTreeSet<NodeId>) -> Option<NodeId> {
        let def = self.index.get(id)?;
        if self.kept.contains(id) || self.removed_files.contains(def.path.as_str()) {
            return None;
        }
        let (calls, _) = self.through_removed(id, extracted, true)?;
        let with = calls
            .iter()
            .flat_map(|caller| self.removable_calls(caller, id))
            .filter_map(|c| self.deleted_with(c, id, extracted))
            .min()?
            .clone();
        let mut with_id = extracted.clone();
        with_id.insert(id.to_string());
        self.keep_reasons(id, &with_id, &BTreeMap::new(), false).is_empty().then_some(with)
    }

    /// Whether `by` (code that stays) names `id` only in call statements the mask deletes.
    fn names_only_in_deleted_calls(&self, by: &str, id: &str, extracted: &BTreeSet<NodeId>) -> bool {
        self.named_in_calls.get(id).into_iter().flatten().any(|c| c.caller == by && self.call_goes(c, extracted))
    }

    /// For a definition no test runs: the first namer of it the mask takes out, when every
    /// namer goes (extracted, an F2P test taken out, a deleted call statement) and nothing
    /// that stays needs it to load; else `None`.
    fn named_only_by_removed(&self, id: &str, extracted: &BTreeSet<NodeId>) -> Option<NodeId> {
        let gone = |by: &str| {
            self.index.lineage(by).any(|a| extracted.contains(a))
                || within(self.index, by, &self.removed_tests)
                || self.index.get(by).is_some_and(|d| self.removed_files.contains(d.path.as_str()))
        };
        let mut namers: Vec<NodeId> = Vec::new();
        for by in self.named_by.get(id).into_iter().flatten() {
            if by.as_str() == id || self.index.lineage(by).any(|a| a == id) {
                continue;
            }
            // A test alone naming it (a class the F2P tests instantiate) does not make it the
            // feature's: code that is extracted or deleted must name it.
            let test = within(self.index, by, &self.removed_tests)
                || self.index.get(by).is_some_and(|d| self.removed_files.contains(d.path.as_str()));
            if gone(by) || self.names_only_in_deleted_calls(by, id, extracted) {
                if !test {
                    namers.push((*by).clone());
                }
            } else {
                return None;
            }
        }
        for c in self.named_in_calls.get(id).into_iter().flatten() {
            if self.call_goes(c, extracted) {
                namers.push(c.caller.clone());
            }
        }
        let first = namers.into_iter().min()?;
        let mut with = extracted.clone();
        with.insert(id.to_string());
        self.keep_reasons(id, &with, &BTreeMap::new(), false).is_empty().then_some(first)
    }

    fn parent_of(&self, id: &str) -> Option<&'a Definition> {
        self.index.get(id)?.parent.as_deref().and_then(|p| self.index.get(p))
    }

    /// Whether `id` cannot be extracted: a reason holds, or it was not reached itself and its
    /// container stays (only what is nested in an extracted definition goes with it).
    fn must_keep(&self, id: &str, extracted: &BTreeSet<NodeId>, origin: &BTreeMap<NodeId, Reason>) -> bool {
        let unreached_in_kept =
            !origin.contains_key(id) && self.parent_of(id).is_none_or(|p| !extracted.contains(&p.id));
        let named_elsewhere = matches!(origin.get(id), Some(Reason::NamedOnlyByFeature { .. }))
            && self.named_only_by_removed(id, extracted).is_none();
        unreached_in_kept
            || named_elsewhere
            || self.kept.contains(id)
            || !self.keep_reasons(id, extracted, origin, false).is_empty()
    }

    /// Every reason `id` must stay, given what is currently extracted. With `explain`, a
    /// member that stays only because `id` does is not given as a reason for `id`.
    fn keep_reasons(
        &self,
        id: &str,
        extracted: &BTreeSet<NodeId>,
        origin: &BTreeMap<NodeId, Reason>,
        explain: bool,
    ) -> Vec<Reason> {
        let mut reasons = Vec::new();
        let stays = |n: &str| !extracted.contains(n);
        if let Some((test, count)) = self.p2p_hits.get(id)
            && self.p2p_only_through_removed(id, extracted).is_none()
        {
            reasons.push(Reason::ExecutedByP2p { test: (*test).clone(), others: count - 1 });
        }
        if self.import_time.contains(id) {
            reasons.push(Reason::ImportTime);
        }
        // Members that stay on their own account, not merely because `id` stays. (While `id`
        // is still extracted, every member that stays does so on its own account, so the
        // fixpoint can skip the check.)
        let kept_members: Vec<&&NodeId> = self
            .children
            .get(id)
            .into_iter()
            .flatten()
            .filter(|c| stays(c))
            .filter(|c| {
                !explain
                    || self
                        .keep_reasons(c, extracted, origin, true)
                        .iter()
                        .any(|r| !matches!(r, Reason::ParentRemained { .. }))
            })
            .collect();
        if let Some(first) = kept_members.first() {
            reasons.push(Reason::HasRemainedMember { member: (**first).clone(), others: kept_members.len() - 1 });
        }
        // Only a definition written inside its parent's text goes or stays with it: a Go
        // method's parent is its receiver type, declared apart (`type UUID [16]byte`).
        if let Some(parent) = self.parent_of(id).filter(|p| !p.kind.is_class_like() && stays(&p.id))
            && self.index.get(id).is_some_and(|d| encloses(parent, d))
        {
            reasons.push(Reason::ParentRemained { parent: parent.id.clone() });
        }
        for (of, role) in self.load_needers.get(id).into_iter().flatten() {
            if stays(of) {
                let of = (*of).clone();
                reasons.push(match role {
                    LoadRole::Decorator => Reason::Decorator { of },
                    LoadRole::BaseClass => Reason::BaseClass { of },
                    LoadRole::DefaultOrAnnotation => Reason::DefaultOrAnnotation { of },
                    LoadRole::ClassBody => Reason::ClassBody { of },
                    // Kept apart (`implementations`): the implementation needs its type,
                    // and stays while the type does (below).
                    LoadRole::Implementation => continue,
                });
            }
        }
        if let Some(of) = self.implementations.get(id).filter(|of| stays(of))
            && let Some(r) = self.implementation(id, (*of).to_string(), extracted, origin)
        {
            reasons.push(r);
        }
        reasons.extend(self.module_needs.get(id).into_iter().flatten().cloned());
        // A value binding naming `id` is deleted with it unless what it binds is used.
        for (b, path) in self.binding_needs.get(id).into_iter().flatten() {
            if b.class.as_deref().is_some_and(|c| !stays(c)) || !self.binding_used(b, extracted) {
                continue;
            }
            let line = b.targets.iter().find(|t| t.target == id).map_or(b.span.start_line, |t| t.line);
            reasons.push(match &b.class {
                Some(c) => Reason::ClassBody { of: c.clone() },
                None => Reason::ModuleLevel { path: (*path).to_string(), line },
            });
        }
        for by in self.class_refs.get(id).into_iter().flatten() {
            // Kept code that runs, or a reached definition that remains; not where it names
            // `id` only in call statements the mask deletes.
            if *by != id
                && stays(by)
                && (self.executed.contains(by.as_str()) || origin.contains_key(*by))
                && !self.names_only_in_deleted_calls(by, id, extracted)
            {
                reasons.push(Reason::ReferencedBy { by: (*by).clone() });
            }
        }
        reasons
    }
}

/// Whether `child`'s text lies inside `parent`'s (same file, byte span within).
fn encloses(parent: &Definition, child: &Definition) -> bool {
    parent.path == child.path
        && parent.span.start_byte <= child.span.start_byte
        && child.span.end_byte <= parent.span.end_byte
}

/// Test definitions of the F2P tests in test files that stay: the mask removes them one by
/// one (a parametrized test with all its parameters), except those of test classes that
/// classes which stay inherit ([`removal::inherited_classes`]).
fn removed_test_definitions<'a>(
    index: &'a DefinitionIndex,
    f2p: &BTreeSet<TestId>,
    removed_files: &BTreeSet<&str>,
    deletable: &BTreeSet<String>,
) -> BTreeSet<&'a str> {
    let inherited = removal::inherited_classes(index, deletable);
    let mut out = BTreeSet::new();
    for test in f2p {
        let Some((path, rest)) = test.split_once("::") else { continue };
        if removed_files.contains(path) || !index.files.get(path).is_some_and(|f| f.is_test) {
            continue;
        }
        // `Class::test[param]` -> `Class.test`.
        let qual = rest.split('[').next().unwrap_or(rest).replace("::", ".");
        if let Some(def) = index.get(&format!("{path}::{qual}"))
            && !removal::in_inherited_class(index, &def.id, &inherited)
        {
            out.insert(def.id.as_str());
        }
    }
    out
}

/// Whether `id` or one of its ancestors is in `set`.
fn within(index: &DefinitionIndex, id: &str, set: &BTreeSet<&str>) -> bool {
    index.lineage(id).any(|c| set.contains(c))
}

/// Function-like definitions hit at import time by module loading that stays: the
/// `<import>` record's hits, minus those only reached (through `<import>` call edges) from
/// module-level code of removed test files. A hit with no recorded caller counts.
fn import_time<'a>(index: &'a DefinitionIndex, trace: &'a Trace, removed: &BTreeSet<&str>) -> BTreeSet<&'a str> {
    let Some(import) = trace.tests.get(IMPORT_TEST) else {
        return BTreeSet::new();
    };
    let mut incoming: BTreeMap<&str, Vec<&Caller>> = BTreeMap::new();
    let mut outgoing: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (caller, callee) in &import.edges {
        incoming.entry(callee.as_str()).or_default().push(caller);
        if let Caller::Node(from) = caller {
            outgoing.entry(from.as_str()).or_default().push(callee.as_str());
        }
    }
    let in_removed = |path: &str| removed.contains(path);
    let is_root = |caller: &Caller| match caller {
        Caller::External => true,
        Caller::Module(path) => !in_removed(path),
        Caller::Node(id) => match index.get(id) {
            None => true,
            Some(d) if in_removed(&d.path) => false,
            // A class body runs when its module loads; other callers must be live themselves.
            Some(d) => d.kind.is_class_like() || !import.hits.contains(id),
        },
    };
    let mut live: BTreeSet<&str> = BTreeSet::new();
    let mut queue: VecDeque<&str> = VecDeque::new();
    for hit in &import.hits {
        let callers = incoming.get(hit.as_str());
        if callers.is_none_or(|c| c.iter().any(|c| is_root(c))) && live.insert(hit.as_str()) {
            queue.push_back(hit.as_str());
        }
    }
    while let Some(n) = queue.pop_front() {
        for callee in outgoing.get(n).into_iter().flatten() {
            if live.insert(callee) {
                queue.push_back(callee);
            }
        }
    }
    live.retain(|id| index.get(id).is_some_and(|d| !d.kind.is_class_like()));
    live
}
