//! Steps 1–2 of the classification: the BFS from the entry points along the call edges the
//! F2P tests recorded (through code that remains too), the classes of reached members, and
//! the candidates: what was reached and everything nested in it. `origin` records how the
//! F2P tests reached each definition: [`Reason::EntryPoint`], [`Reason::Reached`] or
//! [`Reason::HasReachedMember`], or [`Reason::ImplementedByReached`] for the interface of a
//! reached implementation.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use carve_languages::index::LoadRole;
use carve_languages::{DefinitionIndex, NodeId};

use super::Reason;
use super::context::{Context, is_test_def};
use crate::graph::ObjectGraph;
use crate::trace::{Caller, TestId};

/// How each definition the F2P tests reach from `entries` was reached (`candidates`: the
/// entry point candidates, each with the test that called it).
pub(super) fn reached(
    index: &DefinitionIndex,
    graph: &ObjectGraph,
    f2p: &BTreeSet<TestId>,
    entries: &BTreeSet<NodeId>,
    candidates: &BTreeMap<NodeId, TestId>,
) -> BTreeMap<NodeId, Reason> {
    // BFS along F2P call edges; `origin` says how each definition was reached.
    let mut origin: BTreeMap<NodeId, Reason> = BTreeMap::new();
    let mut queue: VecDeque<NodeId> = VecDeque::new();
    for e in entries {
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
    interfaces_of_reached_implementations(index, &mut origin);
    origin
}

/// The interfaces (Rust traits) of the index that a reached implementation implements are
/// reached too ([`Reason::ImplementedByReached`]). A trait whose methods have no body is
/// never run, so without this it stayed, and the implementation with it (an impl for a type
/// the index lacks, `impl ToTrainCase for str`, stays while its trait does): a trait only
/// the feature implements was never extracted. As a candidate it is judged like any other:
/// an implementation that stays keeps it (`base_class`), so does code that stays and names
/// it.
fn interfaces_of_reached_implementations(index: &DefinitionIndex, origin: &mut BTreeMap<NodeId, Reason>) {
    let implementations: Vec<NodeId> = origin
        .keys()
        .filter(|id| {
            index.get(id.as_str()).is_some_and(|d| d.load_references.iter().any(|l| l.role == LoadRole::Implementation))
        })
        .cloned()
        .collect();
    for imp in implementations {
        let Some(def) = index.get(&imp) else { continue };
        for load in def.load_references.iter().filter(|l| l.role == LoadRole::BaseClass) {
            let is_interface =
                index.get(&load.target).is_some_and(|t| t.kind.is_class_like() && !is_test_def(index, t));
            if is_interface && !origin.contains_key(&load.target) {
                origin.insert(load.target.clone(), Reason::ImplementedByReached { implementation: imp.clone() });
            }
        }
    }
}

/// The candidates for extraction: the reached definitions and everything nested in them.
pub(super) fn candidates(cx: &Context<'_>, origin: &BTreeMap<NodeId, Reason>) -> BTreeSet<NodeId> {
    let mut extracted: BTreeSet<NodeId> = BTreeSet::new();
    let mut stack: Vec<&NodeId> = origin.keys().collect();
    while let Some(id) = stack.pop() {
        if extracted.insert(id.clone()) {
            stack.extend(cx.children.get(id.as_str()).into_iter().flatten().copied());
        }
    }
    extracted
}

/// Adds `id` and everything nested in it to `extracted`.
pub(super) fn extract_with_nested(cx: &Context<'_>, id: NodeId, extracted: &mut BTreeSet<NodeId>) {
    let mut stack = vec![id];
    while let Some(x) = stack.pop() {
        stack.extend(cx.children.get(x.as_str()).into_iter().flatten().map(|c| (*c).clone()));
        extracted.insert(x);
    }
}
