//! The line budget (`--max-lines N`, FeatureBench's 3,000–5,000): a feature extracts at
//! most `N` source lines, counted over whole definitions, so that a protection policy that
//! protects little (`sampled:N`, `feature`) cannot turn the feature into half the
//! repository.
//!
//! The unit is a *top object*: an extracted definition whose parent is not extracted (an
//! extracted class with its methods, or a function), counted by its span's lines. When the
//! extracted top objects fit, nothing happens. Otherwise a walk like FeatureBench's BFS
//! decides what goes:
//!
//! 1. The top objects holding entry points always go (FeatureBench always masks its top
//!    objects), in entry-point order.
//! 2. Breadth first from them, along the call edges the F2P tests recorded out of any
//!    definition inside an accepted top object (callees sorted by id), each top object not
//!    yet seen goes when it still fits in what is left of the budget; one that does not fit
//!    stays whole and the walk does not continue through it. A definition an extract rule
//!    added (named only by, or called only with, another) follows that one.
//! 3. Every top object the walk did not accept stays, whole: those that did not fit and
//!    those reached only through them.
//!
//! The classification then runs again with them kept (so that what they need stays too),
//! and each gets [`Reason::OverBudget`].
//!
//! Example, budget 10: `feat` (4 lines, entry point) calls `big` (9 lines) and `small`
//! (3 lines); `big` calls `deep`:
//! ```python
//! def feat(): big(); small()   # carve: extracted (entry point)
//! def big(): deep()            # carve: remained (beyond the line budget of 10 lines)
//! def small(): ...             # carve: extracted
//! def deep(): ...              # carve: remained (beyond the line budget: only `big` reaches it)
//! ```

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use carve_languages::NodeId;

use super::context::Context;
use super::{Decision, Reason, Status};
use crate::graph::ObjectGraph;
use crate::trace::{Caller, TestId};

/// The extracted definitions (with everything nested in them) that do not fit in
/// `max_lines`; empty when everything extracted fits.
pub(super) fn over_budget(
    cx: &Context<'_>,
    graph: &ObjectGraph,
    f2p: &BTreeSet<TestId>,
    extracted: &BTreeSet<NodeId>,
    origin: &BTreeMap<NodeId, Reason>,
    max_lines: usize,
) -> BTreeSet<NodeId> {
    let top_of = |id: &str| -> NodeId {
        let mut cur = id.to_string();
        while let Some(p) = cx.index.get(&cur).and_then(|d| d.parent.clone()).filter(|p| extracted.contains(p)) {
            cur = p;
        }
        cur
    };
    let mut members: BTreeMap<NodeId, Vec<&NodeId>> = BTreeMap::new();
    for id in extracted {
        members.entry(top_of(id)).or_default().push(id);
    }
    let lines = |id: &str| cx.index.get(id).map_or(0, |d| d.span.end_line.saturating_sub(d.span.start_line) + 1);
    if members.keys().map(|t| lines(t)).sum::<usize>() <= max_lines {
        return BTreeSet::new();
    }
    // Definitions an extract rule added follow the one they go with.
    let mut followers: BTreeMap<NodeId, BTreeSet<NodeId>> = BTreeMap::new();
    for (id, reason) in origin.iter().filter(|(id, _)| extracted.contains(*id)) {
        let leader = match reason {
            Reason::NamedOnlyByFeature { by } => by,
            Reason::CalledOnlyWithFeature { with } => with,
            _ => continue,
        };
        if extracted.contains(leader) {
            followers.entry(top_of(leader)).or_default().insert(top_of(id));
        }
    }
    let mut accepted: BTreeSet<NodeId> = BTreeSet::new();
    let mut seen: BTreeSet<NodeId> = BTreeSet::new();
    let mut queue: VecDeque<NodeId> = VecDeque::new();
    let mut used = 0;
    for top in cx.entries.iter().filter(|e| extracted.contains(*e)).map(|e| top_of(e)) {
        if seen.insert(top.clone()) {
            used += lines(&top);
            accepted.insert(top.clone());
            queue.push_back(top);
        }
    }
    while let Some(top) = queue.pop_front() {
        let mut next: BTreeSet<NodeId> = followers.get(&top).cloned().unwrap_or_default();
        for id in members.get(&top).into_iter().flatten() {
            let callees = graph.callees_in(&Caller::Node((*id).clone()), f2p);
            next.extend(callees.into_iter().filter(|c| extracted.contains(*c)).map(|c| top_of(c)));
        }
        for n in next {
            if !seen.insert(n.clone()) {
                continue;
            }
            if used + lines(&n) <= max_lines {
                used += lines(&n);
                accepted.insert(n.clone());
                queue.push_back(n);
            }
        }
    }
    members.into_iter().filter(|(top, _)| !accepted.contains(top)).flat_map(|(_, m)| m).cloned().collect()
}

/// Adds [`Reason::OverBudget`] to the decision of every definition in `cut` (a remained
/// decision of its own when the last round did not reach it).
pub(super) fn explain(nodes: &mut BTreeMap<NodeId, Decision>, cut: &BTreeSet<NodeId>, max_lines: usize) {
    for id in cut {
        let d = nodes.entry(id.clone()).or_insert_with(|| Decision { status: Status::Remained, reasons: Vec::new() });
        d.reasons.push(Reason::OverBudget { max_lines });
        d.reasons.sort();
        d.reasons.dedup();
    }
}

#[cfg(test)]
mod tests {
    use crate::classify::{ClassifyOptions, Reason, Status, classify_with, entry_points};
    use crate::graph::ObjectGraph;
    use crate::testutil::{F2P, P2P, base, set, status, trace};

    fn with_budget(
        index: &carve_languages::DefinitionIndex,
        t: &crate::trace::Trace,
        max_lines: Option<usize>,
    ) -> crate::classify::Classification {
        let graph = ObjectGraph::build(index, t);
        let f2p = set(&[F2P]);
        let entries = entry_points(index, t, &f2p).unwrap().into_keys().collect();
        let options = ClassifyOptions { max_lines, ..ClassifyOptions::default() };
        classify_with(index, &graph, t, &f2p, &set(&[P2P]), entries, &options).unwrap()
    }

    #[test]
    fn what_does_not_fit_stays_whole_with_what_only_it_reaches() {
        let index = base()
            .funcs(&["pkg/core.py::feat", "pkg/core.py::big", "pkg/core.py::small", "pkg/core.py::deep"])
            .lines("pkg/core.py::feat", 1, 4)
            .lines("pkg/core.py::big", 10, 18)
            .lines("pkg/core.py::small", 20, 22)
            .lines("pkg/core.py::deep", 30, 31)
            .build();
        let t = trace(&[(
            F2P,
            &[],
            &[
                (F2P, "pkg/core.py::feat"),
                ("pkg/core.py::feat", "pkg/core.py::big"),
                ("pkg/core.py::feat", "pkg/core.py::small"),
                ("pkg/core.py::big", "pkg/core.py::deep"),
            ],
        )]);
        // Everything fits in 20 lines (4 + 9 + 3 + 2).
        let all = with_budget(&index, &t, Some(20));
        assert_eq!(all.extracted().count(), 4);
        assert!(all.over_budget.is_empty());
        // In 10: the entry point, then `small` (3); `big` (9) does not fit, nor `deep` behind it.
        let c = with_budget(&index, &t, Some(10));
        assert_eq!(status(&c, "pkg/core.py::feat"), Status::Extracted);
        assert_eq!(status(&c, "pkg/core.py::small"), Status::Extracted);
        for id in ["pkg/core.py::big", "pkg/core.py::deep"] {
            assert_eq!(status(&c, id), Status::Remained, "{id}");
            assert!(c.nodes[id].reasons.contains(&Reason::OverBudget { max_lines: 10 }), "{:?}", c.nodes[id]);
        }
        assert_eq!(c.over_budget, ["pkg/core.py::big", "pkg/core.py::deep"]);
        assert_eq!(c.max_lines, Some(10));
        // The entry point goes even when it alone is over the budget.
        let tiny = with_budget(&index, &t, Some(2));
        assert_eq!(tiny.extracted().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["pkg/core.py::feat"]);
        // No budget: no cut.
        assert_eq!(with_budget(&index, &t, None).extracted().count(), 4);
    }

    #[test]
    fn a_class_is_counted_and_kept_whole() {
        let index = base()
            .func("pkg/core.py::feat", 1)
            .class("pkg/core.py::Big", 10)
            .func("pkg/core.py::Big.run", 12)
            .func("pkg/core.py::Big.helper", 20)
            .lines("pkg/core.py::feat", 1, 2)
            .lines("pkg/core.py::Big", 10, 40)
            .build();
        let t = trace(&[(
            F2P,
            &[],
            &[
                (F2P, "pkg/core.py::feat"),
                ("pkg/core.py::feat", "pkg/core.py::Big.run"),
                ("pkg/core.py::Big.run", "pkg/core.py::Big.helper"),
            ],
        )]);
        assert_eq!(with_budget(&index, &t, Some(100)).extracted().count(), 4);
        let c = with_budget(&index, &t, Some(20));
        assert_eq!(c.extracted().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["pkg/core.py::feat"]);
        for id in ["pkg/core.py::Big", "pkg/core.py::Big.run", "pkg/core.py::Big.helper"] {
            assert_eq!(status(&c, id), Status::Remained, "{id}");
        }
    }
}
