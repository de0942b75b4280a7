//! Hand-built indexes and traces for the unit tests of this crate.

use std::collections::{BTreeMap, BTreeSet};

use carve_languages::index::{LoadReference, LoadRole, ModuleReference, Signature, ValueBinding};
use carve_languages::{Definition, DefinitionIndex, DefinitionKind, FileIndex, Language, Span};

use crate::classify::{Classification, Reason, Status, classify};
use crate::graph::ObjectGraph;
use crate::trace::{Caller, TRACE_VERSION, TestId, TestTrace, Trace, TraceMode};

pub struct IndexBuilder {
    index: DefinitionIndex,
}

impl IndexBuilder {
    pub fn new() -> Self {
        IndexBuilder { index: DefinitionIndex::default() }
    }

    pub fn file(mut self, path: &str, is_test: bool) -> Self {
        self.index.files.insert(
            path.to_string(),
            FileIndex {
                path: path.to_string(),
                language: Language::Python,
                module: None,
                is_test,
                definitions: Vec::new(),
                imports: Vec::new(),
                module_references: Vec::new(),
                exported: Vec::new(),
                value_bindings: Vec::new(),
                discarded_calls: Vec::new(),
                sha256: String::new(),
                lines: 0,
            },
        );
        self
    }

    fn add(mut self, id: &str, kind: DefinitionKind, def_line: usize, first_line: usize) -> Self {
        let (path, qualname) = id.split_once("::").expect("test ids have a path");
        let (parent, name) = match qualname.rsplit_once('.') {
            Some((p, n)) => (Some(format!("{path}::{p}")), n),
            None => (None, qualname),
        };
        let kind = match (kind, parent.as_deref().and_then(|p| self.index.definitions.get(p))) {
            (DefinitionKind::Function, Some(p)) if p.kind == DefinitionKind::Class => DefinitionKind::Method,
            (k, _) => k,
        };
        let file = self.index.files.get_mut(path).expect("add the file first");
        file.definitions.push(id.to_string());
        let is_test = file.is_test;
        self.index.definitions.insert(
            id.to_string(),
            Definition {
                id: id.to_string(),
                language: Language::Python,
                path: path.to_string(),
                qualname: qualname.to_string(),
                name: name.to_string(),
                kind,
                span: Span { start_byte: 0, end_byte: 0, start_line: first_line, end_line: def_line + 1 },
                def_line,
                body: None,
                signature: Signature::default(),
                docstring: None,
                parent,
                is_test,
                references: Vec::new(),
                load_references: Vec::new(),
            },
        );
        self
    }

    /// A function, or a method when its parent (added before it) is a class.
    pub fn func(self, id: &str, line: usize) -> Self {
        self.add(id, DefinitionKind::Function, line, line)
    }

    pub fn class(self, id: &str, line: usize) -> Self {
        self.add(id, DefinitionKind::Class, line, line)
    }

    /// A named type that is not class-like (a Go `type UUID [16]byte` is indexed so).
    pub fn type_alias(self, id: &str, line: usize) -> Self {
        self.add(id, DefinitionKind::TypeAlias, line, line)
    }

    /// Set a definition's byte span (the builder leaves every span at `0..0`).
    pub fn bytes(mut self, id: &str, start_byte: usize, end_byte: usize) -> Self {
        let def = self.index.definitions.get_mut(id).expect("known id");
        (def.span.start_byte, def.span.end_byte) = (start_byte, end_byte);
        self
    }

    /// Set a definition's lines (first and last, 1-based).
    pub fn lines(mut self, id: &str, start_line: usize, end_line: usize) -> Self {
        let def = self.index.definitions.get_mut(id).expect("known id");
        (def.span.start_line, def.span.end_line) = (start_line, end_line);
        self
    }

    /// Functions on consecutive lines, for tests that do not care about lines.
    pub fn funcs(mut self, ids: &[&str]) -> Self {
        for id in ids {
            let line = self.index.definitions.len() * 3 + 1;
            self = self.func(id, line);
        }
        self
    }

    pub fn refs(mut self, id: &str, targets: &[&str]) -> Self {
        let def = self.index.definitions.get_mut(id).expect("known id");
        def.references.extend(targets.iter().map(|t| t.to_string()));
        self
    }

    pub fn load(mut self, id: &str, target: &str, role: LoadRole) -> Self {
        let def = self.index.definitions.get_mut(id).expect("known id");
        def.load_references.push(LoadReference { target: target.to_string(), role });
        self
    }

    pub fn module_ref(mut self, path: &str, target: &str, line: usize) -> Self {
        let file = self.index.files.get_mut(path).expect("known file");
        file.module_references.push(ModuleReference { target: target.to_string(), line });
        self
    }

    /// A value binding `name` in `path` (in the body of `class`, if given) naming `targets`,
    /// named by `named_by` (definition ids or file paths); an entry of a literal when
    /// `entry`.
    pub fn binding(
        mut self,
        path: &str,
        class: Option<&str>,
        name: &str,
        entry: bool,
        targets: &[&str],
        named_by: &[&str],
    ) -> Self {
        let file = self.index.files.get_mut(path).expect("known file");
        let line = file.value_bindings.len() + 100;
        file.value_bindings.push(ValueBinding {
            span: Span { start_byte: 0, end_byte: 0, start_line: line, end_line: line },
            name: name.to_string(),
            entry,
            class: class.map(str::to_string),
            targets: targets.iter().map(|t| ModuleReference { target: t.to_string(), line }).collect(),
            named_by: named_by.iter().map(|n| n.to_string()).collect(),
        });
        self
    }

    pub fn export(mut self, path: &str, target: &str) -> Self {
        let file = self.index.files.get_mut(path).expect("known file");
        file.exported.push(target.to_string());
        self
    }

    pub fn build(self) -> DefinitionIndex {
        self.index
    }
}

/// `(test, hits, edges)`; callers are written as in the trace format.
pub type TestSpec<'a> = (&'a str, &'a [&'a str], &'a [(&'a str, &'a str)]);

/// A trace from `(test, hits, edges)` triples (callees count as hits).
pub fn trace(tests: &[TestSpec<'_>]) -> Trace {
    let mut out = BTreeMap::new();
    for (test, hits, edges) in tests {
        let entry: &mut TestTrace = out.entry(test.to_string()).or_default();
        entry.hits.extend(hits.iter().map(|h| h.to_string()));
        for (caller, callee) in *edges {
            entry.edges.insert((Caller::parse(caller), callee.to_string()));
            entry.hits.insert(callee.to_string());
        }
    }
    Trace { version: TRACE_VERSION, mode: TraceMode::Exact, tests: out, partial: Vec::new(), files: 1 }
}

pub fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

// The classification tests' project: `pkg/core.py`, the F2P test's file (removed whole by
// the mask) and a P2P test file; each test adds the definitions it needs.

/// The F2P test of [`base`].
pub const F2P: &str = "tests/test_feat.py::test_feat";
/// A P2P test of [`base`] (`tests/test_base.py::test_other` is the other).
pub const P2P: &str = "tests/test_base.py::test_base";

pub fn base() -> IndexBuilder {
    IndexBuilder::new()
        .file("pkg/core.py", false)
        .file("tests/test_feat.py", true)
        .file("tests/test_base.py", true)
        .funcs(&[F2P, "tests/test_feat.py::helper", P2P, "tests/test_base.py::test_other"])
}

/// Classifies with [`F2P`] as the F2P test and both tests of `tests/test_base.py` as P2P.
pub fn run(index: &DefinitionIndex, trace: &Trace) -> Classification {
    let p2p = set(&[P2P, "tests/test_base.py::test_other"]);
    run_with(index, trace, &set(&[F2P]), &p2p)
}

/// Classifies, checking that every decision has a reason.
pub fn run_with(
    index: &DefinitionIndex,
    trace: &Trace,
    f2p: &BTreeSet<TestId>,
    p2p: &BTreeSet<TestId>,
) -> Classification {
    let graph = ObjectGraph::build(index, trace);
    let c = classify(index, &graph, trace, f2p, p2p).unwrap_or_else(|e| panic!("classify failed: {e}"));
    for (id, d) in &c.nodes {
        assert!(!d.reasons.is_empty(), "{id} has no reason");
    }
    c
}

pub fn status(c: &Classification, id: &str) -> Status {
    c.status(id).unwrap_or_else(|| panic!("{id} is not classified: {:#?}", c.nodes))
}

pub fn reasons(c: &Classification, id: &str) -> Vec<Reason> {
    c.nodes[id].reasons.clone()
}
