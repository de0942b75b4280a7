//! Which F2P tests the masked state drops, and how: shared by the classifier (code of what
//! is dropped keeps nothing alive) and the mask plan (`carve tasks`, `carve extract`), so the
//! two agree.

use std::collections::{BTreeMap, BTreeSet};

use carve_languages::DefinitionIndex;
use carve_languages::index::LoadRole;

/// Of `candidates` (test files whose tests are all F2P), the ones the masked state deletes
/// whole: every one that no file that stays imports, transitively (itsdangerous'
/// `test_url_safe.py` imports and subclasses the test classes of `test_timed.py`; deleting
/// `test_timed.py` would break its collection).
pub fn deletable_test_files(index: &DefinitionIndex, candidates: &BTreeSet<String>) -> BTreeSet<String> {
    let mut deleted = candidates.clone();
    loop {
        let needed: Vec<String> = deleted
            .iter()
            .filter(|f| {
                index.files.values().any(|other| {
                    !deleted.contains(&other.path)
                        && other.imports.iter().any(|i| i.resolved_path.as_deref() == Some(f.as_str()))
                })
            })
            .cloned()
            .collect();
        if needed.is_empty() {
            return deleted;
        }
        for f in needed {
            deleted.remove(&f);
        }
    }
}

/// Classes that a class in a file that stays (not in `deleted_files`) inherits from,
/// transitively: their test methods run in the subclasses' tests too, so an F2P test
/// defined in one of them cannot be taken out alone.
pub fn inherited_classes(index: &DefinitionIndex, deleted_files: &BTreeSet<String>) -> BTreeSet<String> {
    let mut bases: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for d in index.definitions.values().filter(|d| d.kind.is_class_like()) {
        for l in d.load_references.iter().filter(|l| l.role == LoadRole::BaseClass) {
            bases.entry(d.id.as_str()).or_default().push(l.target.as_str());
        }
    }
    let mut out = BTreeSet::new();
    let mut stack: Vec<&str> = bases
        .iter()
        .filter(|(c, _)| index.get(c).is_some_and(|d| !deleted_files.contains(&d.path)))
        .flat_map(|(_, b)| b.iter().copied())
        .collect();
    while let Some(c) = stack.pop() {
        if out.insert(c.to_string()) {
            stack.extend(bases.get(c).into_iter().flatten().copied());
        }
    }
    out
}

/// Whether the test definition `id` sits in (or is) one of `inherited` classes.
pub fn in_inherited_class(index: &DefinitionIndex, id: &str, inherited: &BTreeSet<String>) -> bool {
    let mut cur = Some(id);
    while let Some(c) = cur {
        if inherited.contains(c) {
            return true;
        }
        cur = index.get(c).and_then(|d| d.parent.as_deref());
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{IndexBuilder, set};
    use carve_languages::index::{Import, Span};

    fn imports(mut index: DefinitionIndex, from: &str, to: &str) -> DefinitionIndex {
        index.files.get_mut(from).unwrap().imports.push(Import {
            span: Span { start_byte: 0, end_byte: 0, start_line: 1, end_line: 1 },
            module: to.into(),
            resolved_path: Some(to.into()),
            names: Vec::new(),
            module_level: true,
        });
        index
    }

    #[test]
    fn a_test_file_another_file_that_stays_imports_is_not_deleted_whole() {
        let index = IndexBuilder::new()
            .file("tests/test_serializer.py", true)
            .file("tests/test_timed.py", true)
            .file("tests/test_url_safe.py", true)
            .file("tests/test_other.py", true)
            .class("tests/test_timed.py::TestTimed", 3)
            .func("tests/test_timed.py::TestTimed.test_max_age", 4)
            .class("tests/test_timed.py::TestSigner", 8)
            .func("tests/test_timed.py::TestSigner.test_sign", 9)
            .class("tests/test_url_safe.py::TestUrlSafeTimed", 3)
            .load("tests/test_url_safe.py::TestUrlSafeTimed", "tests/test_timed.py::TestTimed", LoadRole::BaseClass)
            .build();
        let index = imports(index, "tests/test_url_safe.py", "tests/test_timed.py");
        let index = imports(index, "tests/test_timed.py", "tests/test_serializer.py");
        // test_timed.py stays for test_url_safe.py, so test_serializer.py stays for it.
        let candidates = set(&["tests/test_timed.py", "tests/test_serializer.py", "tests/test_other.py"]);
        assert_eq!(deletable_test_files(&index, &candidates), set(&["tests/test_other.py"]));
        // Both go when the importer goes too.
        let all = set(&["tests/test_timed.py", "tests/test_serializer.py", "tests/test_url_safe.py"]);
        assert_eq!(deletable_test_files(&index, &all), all);

        let inherited = inherited_classes(&index, &BTreeSet::new());
        assert_eq!(inherited, set(&["tests/test_timed.py::TestTimed"]));
        assert!(in_inherited_class(&index, "tests/test_timed.py::TestTimed.test_max_age", &inherited));
        assert!(!in_inherited_class(&index, "tests/test_timed.py::TestSigner.test_sign", &inherited));
        // A subclass in a deleted file runs nothing.
        assert!(inherited_classes(&index, &set(&["tests/test_url_safe.py"])).is_empty());
    }
}
