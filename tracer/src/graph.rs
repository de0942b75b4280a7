//! The object dependency graph: a petgraph node per definition of the index (plus one per
//! module-level caller and one for code outside the repository), and typed edges — calls
//! observed at run time (with the tests that observed them), containment, static body
//! references and load-time needs. Built deterministically: nodes in sorted id order, edges in
//! sorted order, every query returns sorted results.

use std::collections::{BTreeMap, BTreeSet};

use carve_languages::index::LoadRole;
use carve_languages::{DefinitionIndex, NodeId};
use petgraph::Direction;
use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;
use serde::Serialize;

use crate::trace::{Caller, TestId, Trace};

/// Why one node points at another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EdgeKind {
    /// The source called the target at run time, in these tests (and/or `<import>`).
    Call { tests: BTreeSet<TestId> },
    /// The source (a class, or a function) directly contains the target definition.
    Contains,
    /// The source's body names the target (static; for shims that report hits only).
    StaticReference,
    /// The source needs the target in order to load (decorator, base class, …).
    Load(LoadRole),
}

impl EdgeKind {
    /// A short name for reports: `call`, `contains`, `static_reference`, `load.decorator` …
    pub fn name(&self) -> &'static str {
        match self {
            EdgeKind::Call { .. } => "call",
            EdgeKind::Contains => "contains",
            EdgeKind::StaticReference => "static_reference",
            EdgeKind::Load(LoadRole::Decorator) => "load.decorator",
            EdgeKind::Load(LoadRole::BaseClass) => "load.base_class",
            EdgeKind::Load(LoadRole::DefaultOrAnnotation) => "load.default_or_annotation",
            EdgeKind::Load(LoadRole::ClassBody) => "load.class_body",
            EdgeKind::Load(LoadRole::Implementation) => "load.implementation",
        }
    }
}

/// Node and edge counts, for reports.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GraphCounts {
    /// Definitions of the index.
    pub definitions: usize,
    /// Module-level and external callers seen in the trace.
    pub pseudo_nodes: usize,
    /// Node ids the trace names that the index does not know (a stale index?).
    pub unknown_nodes: usize,
    /// Edges by [`EdgeKind::name`].
    pub edges: BTreeMap<&'static str, usize>,
}

/// The object dependency graph of one repository and one trace.
#[derive(Debug, Clone)]
pub struct ObjectGraph {
    graph: DiGraph<Caller, EdgeKind>,
    nodes: BTreeMap<Caller, NodeIndex>,
    unknown: BTreeSet<NodeId>,
}

impl ObjectGraph {
    /// Builds the graph of `index` and the calls recorded in `trace`.
    pub fn build(index: &DefinitionIndex, trace: &Trace) -> ObjectGraph {
        let mut g = ObjectGraph { graph: DiGraph::new(), nodes: BTreeMap::new(), unknown: BTreeSet::new() };
        for id in index.definitions.keys() {
            g.add_node(Caller::Node(id.clone()));
        }
        // Pseudo and unknown nodes, sorted, before any edge.
        let mut extra = BTreeSet::new();
        for t in trace.tests.values() {
            for (caller, callee) in &t.edges {
                extra.insert(caller.clone());
                extra.insert(Caller::Node(callee.clone()));
            }
        }
        for node in extra {
            if let Caller::Node(id) = &node {
                if index.definitions.contains_key(id) {
                    continue;
                }
                g.unknown.insert(id.clone());
            }
            g.add_node(node);
        }

        let mut edges: BTreeMap<(NodeIndex, NodeIndex, &'static str), EdgeIndex> = BTreeMap::new();
        let mut add = |g: &mut ObjectGraph, from: NodeIndex, to: NodeIndex, kind: EdgeKind| {
            let key = (from, to, kind.name());
            match edges.get(&key) {
                Some(&e) => {
                    if let (Some(EdgeKind::Call { tests }), EdgeKind::Call { tests: more }) =
                        (g.graph.edge_weight_mut(e), kind)
                    {
                        tests.extend(more);
                    }
                }
                None => {
                    edges.insert(key, g.graph.add_edge(from, to, kind));
                }
            }
        };
        for def in index.definitions.values() {
            let Some(&me) = g.nodes.get(&Caller::Node(def.id.clone())) else {
                continue;
            };
            if let Some(parent) = def.parent.as_ref().and_then(|p| g.index_of(p)) {
                add(&mut g, parent, me, EdgeKind::Contains);
            }
            for target in def.references.iter().filter_map(|r| g.index_of(r)).collect::<BTreeSet<_>>() {
                add(&mut g, me, target, EdgeKind::StaticReference);
            }
            for load in &def.load_references {
                if let Some(target) = g.index_of(&load.target) {
                    add(&mut g, me, target, EdgeKind::Load(load.role));
                }
            }
        }
        for (test, t) in &trace.tests {
            for (caller, callee) in &t.edges {
                let (Some(&from), Some(&to)) = (g.nodes.get(caller), g.nodes.get(&Caller::Node(callee.clone()))) else {
                    continue;
                };
                add(&mut g, from, to, EdgeKind::Call { tests: BTreeSet::from([test.clone()]) });
            }
        }
        g
    }

    fn add_node(&mut self, node: Caller) -> NodeIndex {
        let ix = self.graph.add_node(node.clone());
        self.nodes.insert(node, ix);
        ix
    }

    /// The petgraph index of a definition.
    pub fn index_of(&self, id: &str) -> Option<NodeIndex> {
        self.nodes.get(&Caller::Node(id.to_string())).copied()
    }

    /// The petgraph index of any node, pseudo nodes included.
    pub fn index_of_caller(&self, caller: &Caller) -> Option<NodeIndex> {
        self.nodes.get(caller).copied()
    }

    /// The underlying petgraph graph (node weights are [`Caller`]s; definitions are
    /// `Caller::Node`).
    pub fn graph(&self) -> &DiGraph<Caller, EdgeKind> {
        &self.graph
    }

    /// Node ids named by the trace but absent from the index, sorted.
    pub fn unknown_nodes(&self) -> &BTreeSet<NodeId> {
        &self.unknown
    }

    /// Outgoing edges of `from`, sorted by target then kind.
    pub fn outgoing(&self, from: &Caller) -> Vec<(&Caller, &EdgeKind)> {
        self.edges_of(from, Direction::Outgoing)
    }

    /// Incoming edges of `to`, sorted by source then kind.
    pub fn incoming(&self, to: &Caller) -> Vec<(&Caller, &EdgeKind)> {
        self.edges_of(to, Direction::Incoming)
    }

    fn edges_of(&self, node: &Caller, dir: Direction) -> Vec<(&Caller, &EdgeKind)> {
        let Some(&ix) = self.nodes.get(node) else {
            return Vec::new();
        };
        let mut out: Vec<_> = self
            .graph
            .edges_directed(ix, dir)
            .map(|e| {
                let other = if dir == Direction::Outgoing { e.target() } else { e.source() };
                (&self.graph[other], e.weight())
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(b.0).then_with(|| a.1.name().cmp(b.1.name())));
        out
    }

    /// Definitions `from` called in at least one of `tests`, sorted.
    pub fn callees_in<'a>(&'a self, from: &Caller, tests: &BTreeSet<TestId>) -> Vec<&'a NodeId> {
        self.outgoing(from)
            .into_iter()
            .filter_map(|(to, kind)| match (to, kind) {
                (Caller::Node(id), EdgeKind::Call { tests: seen }) if !seen.is_disjoint(tests) => Some(id),
                _ => None,
            })
            .collect()
    }

    /// Every call edge as (caller, callee, tests), sorted by caller then callee.
    pub fn calls(&self) -> Vec<(&Caller, &NodeId, &BTreeSet<TestId>)> {
        let mut out: Vec<_> = self
            .graph
            .edge_references()
            .filter_map(|e| match (e.weight(), &self.graph[e.target()]) {
                (EdgeKind::Call { tests }, Caller::Node(callee)) => Some((&self.graph[e.source()], callee, tests)),
                _ => None,
            })
            .collect();
        out.sort();
        out
    }

    /// Node and edge counts by kind.
    pub fn counts(&self) -> GraphCounts {
        let mut counts = GraphCounts { unknown_nodes: self.unknown.len(), ..GraphCounts::default() };
        for node in self.graph.node_weights() {
            match node {
                Caller::Node(id) if !self.unknown.contains(id) => counts.definitions += 1,
                Caller::Node(_) => {}
                _ => counts.pseudo_nodes += 1,
            }
        }
        for e in self.graph.edge_weights() {
            *counts.edges.entry(e.name()).or_default() += 1;
        }
        counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{IndexBuilder, set, trace};

    fn sample() -> (DefinitionIndex, Trace) {
        let index = IndexBuilder::new()
            .file("p.py", false)
            .file("t.py", true)
            .class("p.py::C", 1)
            .funcs(&["p.py::C.m", "p.py::f", "p.py::f.inner", "p.py::deco", "t.py::test_a", "t.py::test_b"])
            .refs("p.py::f", &["p.py::C", "p.py::C", "p.py::missing"])
            .load("p.py::f", "p.py::deco", LoadRole::Decorator)
            .build();
        let trace = trace(&[
            ("t.py::test_a", &[], &[("t.py::test_a", "p.py::f"), ("p.py::f", "p.py::C.m")]),
            ("t.py::test_b", &[], &[("t.py::test_b", "p.py::f"), ("gone.py::x", "p.py::f")]),
            ("<import>", &[], &[("<module>p.py", "p.py::deco")]),
        ]);
        (index, trace)
    }

    #[test]
    fn counts_nodes_and_edges_by_kind() {
        let (index, trace) = sample();
        let g = ObjectGraph::build(&index, &trace);
        let counts = g.counts();
        assert_eq!(counts.definitions, 7);
        assert_eq!(counts.pseudo_nodes, 1);
        assert_eq!(counts.unknown_nodes, 1);
        assert_eq!(
            counts.edges,
            BTreeMap::from([("call", 5), ("contains", 2), ("load.decorator", 1), ("static_reference", 1)])
        );
        assert_eq!(g.unknown_nodes().iter().collect::<Vec<_>>(), ["gone.py::x"]);
    }

    #[test]
    fn call_edges_carry_the_tests_that_saw_them() {
        let (index, trace) = sample();
        let g = ObjectGraph::build(&index, &trace);
        let calls = g.calls();
        let f_in: Vec<_> = calls.iter().filter(|(_, callee, _)| callee.as_str() == "p.py::f").collect();
        assert_eq!(f_in.len(), 3);
        assert_eq!(g.callees_in(&Caller::Node("p.py::f".into()), &set(&["t.py::test_a"])), ["p.py::C.m"]);
        assert!(g.callees_in(&Caller::Node("p.py::f".into()), &set(&["t.py::test_b"])).is_empty());
        let out = g.outgoing(&Caller::Node("p.py::C".into()));
        assert_eq!(out, [(&Caller::Node("p.py::C.m".into()), &EdgeKind::Contains)]);
        let into_deco = g.incoming(&Caller::Node("p.py::deco".into()));
        assert_eq!(into_deco.len(), 2);
        assert_eq!(into_deco[0].0, &Caller::Node("p.py::f".into()));
        assert_eq!(into_deco[1].0, &Caller::Module("p.py".into()));
    }

    #[test]
    fn repeated_calls_merge_into_one_edge_with_all_tests() {
        let index = IndexBuilder::new().file("p.py", false).funcs(&["p.py::f", "p.py::g"]).build();
        let trace = trace(&[("a", &[], &[("p.py::f", "p.py::g")]), ("b", &[], &[("p.py::f", "p.py::g")])]);
        let g = ObjectGraph::build(&index, &trace);
        assert_eq!(g.calls(), [(&Caller::Node("p.py::f".into()), &"p.py::g".to_string(), &set(&["a", "b"]))]);
        assert_eq!(g.counts().edges["call"], 1);
    }

    #[test]
    fn building_twice_gives_the_same_graph() {
        let (index, trace) = sample();
        let a = ObjectGraph::build(&index, &trace);
        let b = ObjectGraph::build(&index, &trace);
        assert_eq!(a.graph().node_weights().collect::<Vec<_>>(), b.graph().node_weights().collect::<Vec<_>>());
        assert_eq!(a.graph().edge_weights().collect::<Vec<_>>(), b.graph().edge_weights().collect::<Vec<_>>());
    }
}
