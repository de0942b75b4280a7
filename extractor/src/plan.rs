//! Delete or stub: which removed definitions can go entirely and which must keep their
//! signature because remaining code still names them (languages that must keep building;
//! see `LanguageSupport::stubs_referenced`). A language that does not stub deletes every
//! removed definition, so its `stub` set is always empty.

use std::collections::{BTreeMap, BTreeSet};

use carve_languages::index::{DefinitionIndex, NodeId};
use carve_languages::support;

/// The removed definitions split by how they are masked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removals {
    /// Deleted entirely.
    pub delete: BTreeSet<NodeId>,
    /// Signature kept, body replaced by the language's "not implemented".
    pub stub: BTreeSet<NodeId>,
}

/// Whether `id` is `ancestor` or nested inside it (a method of a removed class …).
fn within(index: &DefinitionIndex, id: &str, set: &BTreeSet<NodeId>) -> bool {
    index.lineage(id).any(|c| set.contains(c))
}

/// Tests that go with the removal (`--remove-tests`): their references keep nothing alive.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemovedTests {
    /// Test definitions taken out of files that stay (node ids).
    pub definitions: BTreeSet<NodeId>,
    /// Test files deleted whole (repository-relative): none of their code stays.
    pub files: BTreeSet<String>,
}

/// Split `remove` into definitions to delete and definitions to stub: a definition is
/// stubbed when code that stays (a definition outside `remove`, or module-level code)
/// references it or a definition nested in it; otherwise it is deleted.
pub fn split_removals(index: &DefinitionIndex, remove: &BTreeSet<NodeId>) -> Removals {
    split_removals_with(index, remove, &RemovedTests::default())
}

/// [`split_removals`] where the F2P tests removed alongside (`tests`) do not count as code
/// that stays: a function only those tests call is deleted, not stubbed.
pub fn split_removals_with(index: &DefinitionIndex, remove: &BTreeSet<NodeId>, tests: &RemovedTests) -> Removals {
    let mut out = Removals::default();
    let mut referenced: BTreeSet<&NodeId> = BTreeSet::new();
    for def in index.definitions.values() {
        if tests.files.contains(&def.path)
            || within(index, &def.id, remove)
            || within(index, &def.id, &tests.definitions)
        {
            continue;
        }
        referenced.extend(def.references.iter());
        referenced.extend(def.load_references.iter().map(|l| &l.target));
    }
    for file in index.files.values().filter(|f| !tests.files.contains(&f.path)) {
        referenced.extend(file.module_references.iter().map(|m| &m.target));
    }
    // A definition whose nested definitions are referenced counts as referenced too: an impl
    // block or a class whose methods remaining code calls must keep their signatures.
    let mut needed: BTreeSet<&str> = BTreeSet::new();
    for r in &referenced {
        let mut cur = Some(r.as_str());
        while let Some(c) = cur {
            if !needed.insert(c) {
                break;
            }
            cur = index.get(c).and_then(|d| d.parent.as_deref());
        }
    }
    for id in remove {
        let stubs = index.get(id).is_some_and(|d| support(d.language).stubs_referenced());
        if stubs && needed.contains(id.as_str()) {
            out.stub.insert(id.clone());
        } else {
            out.delete.insert(id.clone());
        }
    }
    keep_what_stubs_need(index, remove, &mut out);
    out
}

/// A stubbed definition keeps its signature, and a stubbed type its fields and members'
/// signatures: the removed definitions those name in `load_references` (annotation types,
/// bases, decorators) must stay too, so they move from `delete` to `stub`, transitively.
fn keep_what_stubs_need(index: &DefinitionIndex, remove: &BTreeSet<NodeId>, out: &mut Removals) {
    let mut children: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for d in index.definitions.values() {
        if let Some(p) = &d.parent {
            children.entry(p.as_str()).or_default().push(d.id.as_str());
        }
    }
    // The removed definition (itself or an ancestor) that decides a target's fate.
    let removed_root =
        |id: &str| -> Option<NodeId> { index.lineage(id).filter(|c| remove.contains(*c)).last().map(str::to_string) };
    let mut queue: Vec<NodeId> = out.stub.iter().cloned().collect();
    while let Some(s) = queue.pop() {
        let mut subtree = vec![s.clone()];
        let mut i = 0;
        while i < subtree.len() {
            if let Some(c) = children.get(subtree[i].as_str()) {
                subtree.extend(c.iter().map(|c| c.to_string()));
            }
            i += 1;
        }
        for id in &subtree {
            let Some(d) = index.get(id) else { continue };
            if !support(d.language).stubs_referenced() {
                continue;
            }
            for l in &d.load_references {
                if let Some(root) = removed_root(&l.target)
                    && out.delete.remove(&root)
                {
                    out.stub.insert(root.clone());
                    queue.push(root);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_languages::Language;
    use carve_languages::index::{Definition, DefinitionKind, Signature, Span};

    fn def(id: &str, language: Language, refs: &[&str]) -> Definition {
        let (path, qual) = id.split_once("::").unwrap();
        Definition {
            id: id.into(),
            language,
            path: path.into(),
            qualname: qual.into(),
            name: qual.rsplit('.').next().unwrap().into(),
            kind: DefinitionKind::Function,
            span: Span { start_byte: 0, end_byte: 1, start_line: 1, end_line: 1 },
            def_line: 1,
            body: None,
            signature: Signature::default(),
            docstring: None,
            parent: None,
            is_test: false,
            references: refs.iter().map(|r| r.to_string()).collect(),
            load_references: Vec::new(),
        }
    }

    fn index(defs: Vec<Definition>) -> DefinitionIndex {
        let mut idx = DefinitionIndex::default();
        for d in defs {
            idx.definitions.insert(d.id.clone(), d);
        }
        idx
    }

    #[test]
    fn referenced_by_remaining_code_is_stubbed_otherwise_deleted() {
        let idx = index(vec![
            def("a.go::Keep", Language::Go, &["a.go::Used"]),
            def("a.go::Used", Language::Go, &[]),
            def("a.go::Alone", Language::Go, &[]),
            def("a.go::Gone", Language::Go, &["a.go::Alone"]),
        ]);
        let remove: BTreeSet<NodeId> =
            ["a.go::Used", "a.go::Alone", "a.go::Gone"].iter().map(|s| s.to_string()).collect();
        let r = split_removals(&idx, &remove);
        assert_eq!(r.stub, BTreeSet::from(["a.go::Used".to_string()]));
        // `Alone` is referenced only by `Gone`, which is removed too.
        assert_eq!(r.delete, BTreeSet::from(["a.go::Alone".to_string(), "a.go::Gone".to_string()]));
    }

    #[test]
    fn what_a_stub_needs_to_compile_is_stubbed_too() {
        use carve_languages::index::{LoadReference, LoadRole};
        let mut used = def("a.ts::used", Language::TypeScript, &[]);
        used.load_references =
            vec![LoadReference { target: "a.ts::Shape".into(), role: LoadRole::DefaultOrAnnotation }];
        let mut shape = def("a.ts::Shape", Language::TypeScript, &[]);
        shape.load_references = vec![LoadReference { target: "a.ts::Unit".into(), role: LoadRole::ClassBody }];
        let idx = index(vec![
            def("a.ts::keep", Language::TypeScript, &["a.ts::used"]),
            used,
            shape,
            def("a.ts::Unit", Language::TypeScript, &[]),
            def("a.ts::helper", Language::TypeScript, &[]),
        ]);
        let remove: BTreeSet<NodeId> =
            ["a.ts::used", "a.ts::Shape", "a.ts::Unit", "a.ts::helper"].iter().map(|s| s.to_string()).collect();
        let r = split_removals(&idx, &remove);
        // `used` is called by `keep`; its signature names `Shape`, whose body names `Unit`.
        assert_eq!(r.stub, ["a.ts::Shape", "a.ts::Unit", "a.ts::used"].iter().map(|s| s.to_string()).collect());
        assert_eq!(r.delete, BTreeSet::from(["a.ts::helper".to_string()]));
    }

    #[test]
    fn references_from_removed_tests_keep_nothing() {
        let mut test_file_helper = def("b_test.go::TestHelper", Language::Go, &["a.go::ByFileTest"]);
        test_file_helper.is_test = true;
        let idx = index(vec![
            def("a.go::OnlyRemovedTest", Language::Go, &[]),
            def("a.go::RemainingTest", Language::Go, &[]),
            def("a.go::ByFileTest", Language::Go, &[]),
            def("a_test.go::TestGone", Language::Go, &["a.go::OnlyRemovedTest", "a.go::RemainingTest"]),
            def("a_test.go::TestStays", Language::Go, &["a.go::RemainingTest"]),
            test_file_helper,
        ]);
        let remove: BTreeSet<NodeId> = ["a.go::OnlyRemovedTest", "a.go::RemainingTest", "a.go::ByFileTest"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        // Without the tests, every test counts as code that stays.
        assert_eq!(split_removals(&idx, &remove).stub, remove);
        let tests = RemovedTests {
            definitions: BTreeSet::from(["a_test.go::TestGone".to_string()]),
            files: BTreeSet::from(["b_test.go".to_string()]),
        };
        let r = split_removals_with(&idx, &remove, &tests);
        // `TestStays` remains and calls `RemainingTest`; the rest only removed tests call.
        assert_eq!(r.stub, BTreeSet::from(["a.go::RemainingTest".to_string()]));
        assert_eq!(r.delete, BTreeSet::from(["a.go::ByFileTest".to_string(), "a.go::OnlyRemovedTest".to_string()]));
    }

    #[test]
    fn module_code_of_a_removed_test_file_keeps_nothing() {
        use carve_languages::index::{FileIndex, ModuleReference};
        let mut idx = index(vec![def("src/a.ts::used", Language::TypeScript, &[])]);
        let refs = vec![ModuleReference { target: "src/a.ts::used".into(), line: 3 }];
        let file = FileIndex {
            path: "tests/a.test.ts".into(),
            language: Language::TypeScript,
            module: None,
            is_test: true,
            definitions: Vec::new(),
            imports: Vec::new(),
            module_references: refs,
            exported: Vec::new(),
            value_bindings: Vec::new(),
            discarded_calls: Vec::new(),
            sha256: String::new(),
            lines: 3,
        };
        idx.files.insert(file.path.clone(), file);
        let remove = BTreeSet::from(["src/a.ts::used".to_string()]);
        assert_eq!(split_removals(&idx, &remove).stub, remove);
        let tests = RemovedTests { files: BTreeSet::from(["tests/a.test.ts".to_string()]), ..Default::default() };
        assert_eq!(split_removals_with(&idx, &remove, &tests).delete, remove);
    }

    /// Found by `tests/robustness.rs`: removing a Rust impl block (or a class) whose methods
    /// remaining code calls deleted it, because only the block's own id was looked up.
    #[test]
    fn a_removed_container_of_referenced_methods_is_stubbed() {
        let mut new = def("a.rs::Circle.new", Language::Rust, &[]);
        new.parent = Some("a.rs::Circle.<impl>".into());
        let mut imp = def("a.rs::Circle.<impl>", Language::Rust, &[]);
        imp.parent = Some("a.rs::Circle".into());
        let idx = index(vec![
            def("a.rs::main", Language::Rust, &["a.rs::Circle.new"]),
            def("a.rs::Circle", Language::Rust, &[]),
            imp,
            new,
        ]);
        let r = split_removals(&idx, &BTreeSet::from(["a.rs::Circle.<impl>".to_string()]));
        assert_eq!(r.stub, BTreeSet::from(["a.rs::Circle.<impl>".to_string()]));
        assert!(r.delete.is_empty());
    }

    #[test]
    fn python_always_deletes() {
        let idx =
            index(vec![def("a.py::keep", Language::Python, &["a.py::used"]), def("a.py::used", Language::Python, &[])]);
        let remove = BTreeSet::from(["a.py::used".to_string()]);
        let r = split_removals(&idx, &remove);
        assert!(r.stub.is_empty());
        assert_eq!(r.delete, remove);
    }
}
