//! The facts one classification computes once, before the BFS, for the rules to read: which
//! test files and F2P test definitions the mask takes out, which tests ran what, and, for
//! code that stays, who names or needs whom. Code that the masked state drops (test files
//! with F2P tests and no P2P test, and the F2P test functions taken out of files that stay)
//! appears in none of the "needs" maps: it keeps nothing alive.

use std::collections::{BTreeMap, BTreeSet};

use carve_languages::index::{DiscardedCall, LoadRole, ValueBinding};
use carve_languages::{Definition, DefinitionIndex, NodeId};

use super::removal;
use super::rules::{import_time, module_level, named_by_config, value_binding};
use crate::trace::{Caller, TestId, Trace};

/// Facts computed once per classification.
pub(super) struct Context<'a> {
    pub(super) index: &'a DefinitionIndex,
    pub(super) removed_files: BTreeSet<&'a str>,
    pub(super) children: BTreeMap<&'a str, Vec<&'a NodeId>>,
    /// Definition -> (smallest P2P test that hit it, number of P2P tests that did).
    pub(super) p2p_hits: BTreeMap<&'a str, (&'a TestId, usize)>,
    pub(super) import_time: BTreeSet<&'a str>,
    /// Target -> definitions (in files that stay) needing it to load, with the role.
    pub(super) load_needers: BTreeMap<&'a str, Vec<(&'a NodeId, LoadRole)>>,
    /// Implementation of an interface (in a file that stays) -> the type it is for.
    pub(super) implementations: BTreeMap<&'a str, &'a str>,
    /// Target -> module-level uses in files that stay: (file, line).
    pub(super) module_refs: BTreeMap<&'a str, Vec<(&'a str, usize)>>,
    /// Target -> lines of test-configuration files naming it that the mask cannot take out.
    pub(super) config_refs: BTreeMap<&'a str, Vec<(&'a str, usize)>>,
    /// Target -> value bindings in files that stay naming it, with their file.
    pub(super) binding_needs: BTreeMap<&'a str, Vec<(&'a ValueBinding, &'a str)>>,
    /// F2P tests the mask takes out of test files that stay.
    pub(super) removed_tests: BTreeSet<&'a str>,
    /// Class -> definitions (in files that stay) whose body names it.
    pub(super) class_refs: BTreeMap<&'a str, Vec<&'a NodeId>>,
    /// Kept code that runs: hit by a P2P test or at import time, or test code that stays.
    pub(super) executed: BTreeSet<&'a str>,
    /// Callee -> the callers P2P tests recorded calling it; `None` when a P2P test hit it
    /// with no caller recorded (nothing can explain that hit).
    pub(super) p2p_callers: BTreeMap<&'a str, Option<BTreeSet<&'a Caller>>>,
    /// Caller (a non-test definition in a file that stays) -> its discarded-value calls.
    pub(super) discarded_calls: BTreeMap<&'a str, Vec<&'a DiscardedCall>>,
    /// Target -> definitions in files that stay (not removed tests) naming it in their body.
    pub(super) body_refs: BTreeMap<&'a str, Vec<&'a NodeId>>,
    /// Definition -> number of F2P tests that hit it.
    pub(super) f2p_hits: BTreeMap<&'a str, usize>,
    /// Definitions that remain whatever the rules say (kept by a repair).
    pub(super) kept: BTreeSet<NodeId>,
    /// The entry points: definitions F2P test code calls.
    pub(super) entries: BTreeSet<NodeId>,
    /// Target -> every definition (in any file) naming it in its body.
    pub(super) named_by: BTreeMap<&'a str, Vec<&'a NodeId>>,
    /// Target -> discarded-value calls of code that stays whose statements alone name it.
    pub(super) named_in_calls: BTreeMap<&'a str, Vec<&'a DiscardedCall>>,
    /// Definitions some test (F2P, P2P or a module load) runs.
    pub(super) run: BTreeSet<&'a str>,
}

/// What code that stays needs or names, from one pass over its definitions.
struct StayingCode<'a> {
    load_needers: BTreeMap<&'a str, Vec<(&'a NodeId, LoadRole)>>,
    implementations: BTreeMap<&'a str, &'a str>,
    class_refs: BTreeMap<&'a str, Vec<&'a NodeId>>,
    body_refs: BTreeMap<&'a str, Vec<&'a NodeId>>,
    executed: BTreeSet<&'a str>,
}

impl<'a> Context<'a> {
    pub(super) fn new(
        index: &'a DefinitionIndex,
        trace: &'a Trace,
        f2p: &'a BTreeSet<TestId>,
        p2p: &'a BTreeSet<TestId>,
        unprotected: &BTreeSet<TestId>,
        entries: BTreeSet<NodeId>,
        kept: BTreeSet<NodeId>,
    ) -> Self {
        let deletable = deletable_test_files(index, f2p, &p2p.iter().chain(unprotected).collect());
        let removed_files: BTreeSet<&str> =
            index.files.keys().filter(|f| deletable.contains(*f)).map(String::as_str).collect();
        let p2p_hits = p2p_hits(trace, p2p);
        let import_time = import_time::live(index, trace, &removed_files);
        let removed_tests = removed_test_definitions(index, f2p, &removed_files, &deletable);
        let staying = StayingCode::collect(index, trace, p2p, &removed_files, &removed_tests, &p2p_hits, &import_time);
        let discarded_calls = discarded_calls(index, &removed_files);
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
        Context {
            index,
            children: children(index),
            p2p_callers: p2p_callers(trace, p2p),
            f2p_hits: f2p_hits(trace, f2p),
            module_refs: module_level::uses(index, &removed_files),
            config_refs: named_by_config::lines(index),
            binding_needs: value_binding::bindings(index, &removed_files),
            run: trace.tests.values().flat_map(|t| t.hits.iter().map(String::as_str)).collect(),
            removed_files,
            p2p_hits,
            import_time,
            load_needers: staying.load_needers,
            implementations: staying.implementations,
            removed_tests,
            class_refs: staying.class_refs,
            executed: staying.executed,
            discarded_calls,
            body_refs: staying.body_refs,
            kept,
            entries,
            named_by,
            named_in_calls,
        }
    }

    /// The definition `id` is nested in, if any.
    pub(super) fn parent_of(&self, id: &str) -> Option<&'a Definition> {
        self.index.get(id)?.parent.as_deref().and_then(|p| self.index.get(p))
    }
}

impl<'a> StayingCode<'a> {
    fn collect(
        index: &'a DefinitionIndex,
        trace: &'a Trace,
        p2p: &'a BTreeSet<TestId>,
        removed_files: &BTreeSet<&str>,
        removed_tests: &BTreeSet<&str>,
        p2p_hits: &BTreeMap<&str, (&TestId, usize)>,
        import_time: &BTreeSet<&str>,
    ) -> Self {
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
        let mut out = StayingCode {
            load_needers: BTreeMap::new(),
            implementations: BTreeMap::new(),
            class_refs: BTreeMap::new(),
            body_refs: BTreeMap::new(),
            executed: BTreeSet::new(),
        };
        for def in index.definitions.values().filter(|d| !removed_files.contains(d.path.as_str())) {
            // F2P tests taken out of a file that stays need nothing to load.
            if within(index, &def.id, removed_tests) {
                continue;
            }
            for load in &def.load_references {
                if load.role == LoadRole::Implementation {
                    out.implementations.insert(def.id.as_str(), load.target.as_str());
                    continue;
                }
                out.load_needers.entry(load.target.as_str()).or_default().push((&def.id, load.role));
            }
            for target in &def.references {
                if index.get(target).is_some_and(|t| t.kind.is_class_like()) {
                    out.class_refs.entry(target.as_str()).or_default().push(&def.id);
                }
                out.body_refs.entry(target.as_str()).or_default().push(&def.id);
            }
            // Test code that stays runs only when a P2P test or a module load runs it (a
            // test helper only the F2P tests call keeps nothing alive).
            if p2p_hits.contains_key(def.id.as_str())
                || p2p_callers.contains(def.id.as_str())
                || import_time.contains(def.id.as_str())
            {
                out.executed.insert(def.id.as_str());
            }
        }
        out
    }
}

/// Test files the masked state deletes whole: those with F2P tests and no other test that
/// stays (`staying`: the P2P tests and those that stay unprotected) that no file that stays
/// imports ([`removal::deletable_test_files`]).
fn deletable_test_files(
    index: &DefinitionIndex,
    f2p: &BTreeSet<TestId>,
    staying: &BTreeSet<&TestId>,
) -> BTreeSet<String> {
    let p2p_files: BTreeSet<&str> = staying.iter().map(|t| test_file_in(index, t)).collect();
    let whole: BTreeSet<String> = f2p
        .iter()
        .map(|t| test_file_in(index, t))
        .filter(|f| !p2p_files.contains(f) && index.files.get(*f).is_some_and(|fi| fi.is_test))
        .map(str::to_string)
        .collect();
    removal::deletable_test_files(index, &whole)
}

fn children(index: &DefinitionIndex) -> BTreeMap<&str, Vec<&NodeId>> {
    let mut children: BTreeMap<&str, Vec<&NodeId>> = BTreeMap::new();
    for def in index.definitions.values() {
        if let Some(p) = &def.parent {
            children.entry(p.as_str()).or_default().push(&def.id);
        }
    }
    children
}

fn p2p_hits<'a>(trace: &'a Trace, p2p: &'a BTreeSet<TestId>) -> BTreeMap<&'a str, (&'a TestId, usize)> {
    let mut p2p_hits: BTreeMap<&str, (&TestId, usize)> = BTreeMap::new();
    for (test, t) in p2p.iter().filter_map(|t| trace.tests.get_key_value(t)) {
        for hit in &t.hits {
            p2p_hits.entry(hit.as_str()).and_modify(|(_, n)| *n += 1).or_insert((test, 1));
        }
    }
    p2p_hits
}

fn p2p_callers<'a>(trace: &'a Trace, p2p: &BTreeSet<TestId>) -> BTreeMap<&'a str, Option<BTreeSet<&'a Caller>>> {
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
    p2p_callers_of
}

fn f2p_hits<'a>(trace: &'a Trace, f2p: &BTreeSet<TestId>) -> BTreeMap<&'a str, usize> {
    let mut f2p_hits: BTreeMap<&str, usize> = BTreeMap::new();
    for t in f2p.iter().filter_map(|t| trace.tests.get(t)) {
        for hit in &t.hits {
            *f2p_hits.entry(hit.as_str()).or_default() += 1;
        }
    }
    f2p_hits
}

/// Discarded-value calls of non-test definitions in non-test files that stay, by caller.
fn discarded_calls<'a>(
    index: &'a DefinitionIndex,
    removed_files: &BTreeSet<&str>,
) -> BTreeMap<&'a str, Vec<&'a DiscardedCall>> {
    let mut discarded_calls: BTreeMap<&str, Vec<&DiscardedCall>> = BTreeMap::new();
    for (_, file) in index.files.iter().filter(|(p, f)| !removed_files.contains(p.as_str()) && !f.is_test) {
        for c in &file.discarded_calls {
            if index.get(&c.caller).is_some_and(|d| !is_test_def(index, d)) {
                discarded_calls.entry(c.caller.as_str()).or_default().push(c);
            }
        }
    }
    discarded_calls
}

/// The repository-relative file of a test id (`path::Class::test[param]` -> `path`,
/// `path > describe > test` -> `path`).
pub(super) fn test_file(test: &str) -> &str {
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

pub(super) fn is_test_def(index: &DefinitionIndex, def: &Definition) -> bool {
    def.is_test || index.files.get(&def.path).is_some_and(|f| f.is_test)
}

/// Whether `child`'s text lies inside `parent`'s (same file, byte span within).
pub(super) fn encloses(parent: &Definition, child: &Definition) -> bool {
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
pub(super) fn within(index: &DefinitionIndex, id: &str, set: &BTreeSet<&str>) -> bool {
    index.lineage(id).any(|c| set.contains(c))
}
