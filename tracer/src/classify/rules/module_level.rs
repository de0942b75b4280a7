//! **module_level**: a candidate named by module-level code of a file that stays remains
//! ([`Reason::ModuleLevel`], with the file and line of the use). A value binding at module
//! level gives the same reason, by the `value_binding` rule.
//!
//! Why: module-level code runs on every import of its module; with the name gone the import
//! fails. Two kinds of module-level naming keep nothing: a listing in `__all__` (the mask
//! takes extracted names out of the list and the gold patch puts them back), and module-level
//! code of test files the masked state drops.
//!
//! Example:
//! ```python
//! # pkg/core.py
//! def handler(e): ...              # carve: remained (used by module-level code at pkg/core.py:40)
//! HANDLERS = {"csv": handler}      # line 40
//! ```

use std::collections::{BTreeMap, BTreeSet};

use carve_languages::DefinitionIndex;

use super::Query;
use crate::classify::Reason;
use crate::classify::context::Context;

pub(super) fn check(cx: &Context<'_>, id: &str, _: &Query<'_>, out: &mut Vec<Reason>) {
    for (path, line) in cx.module_refs.get(id).into_iter().flatten() {
        out.push(Reason::ModuleLevel { path: (*path).to_string(), line: *line });
    }
}

/// Target -> the module-level uses of it in files that stay: (file, line). `__all__` is not
/// among them (`exported` in the index).
pub(in crate::classify) fn uses<'a>(
    index: &'a DefinitionIndex,
    removed_files: &BTreeSet<&str>,
) -> BTreeMap<&'a str, Vec<(&'a str, usize)>> {
    let mut uses: BTreeMap<&str, Vec<(&str, usize)>> = BTreeMap::new();
    for (path, file) in index.files.iter().filter(|(p, _)| !removed_files.contains(p.as_str())) {
        for r in &file.module_references {
            uses.entry(r.target.as_str()).or_default().push((path.as_str(), r.line));
        }
    }
    uses
}

#[cfg(test)]
mod tests {
    use crate::classify::{Reason, Status};
    use crate::testutil::{F2P, base, reasons, run, status, trace};

    #[test]
    fn module_level_uses_keep_definitions_but_all_and_removed_test_files_do_not() {
        let index = base()
            .file("pkg/__init__.py", false)
            .funcs(&["pkg/core.py::feat", "pkg/core.py::handler", "pkg/core.py::api", "pkg/core.py::only_tests_use"])
            .module_ref("pkg/core.py", "pkg/core.py::handler", 40)
            .export("pkg/__init__.py", "pkg/core.py::api")
            .module_ref("tests/test_feat.py", "pkg/core.py::only_tests_use", 3)
            .build();
        let t = trace(&[(
            F2P,
            &[],
            &[
                (F2P, "pkg/core.py::feat"),
                (F2P, "pkg/core.py::handler"),
                (F2P, "pkg/core.py::api"),
                (F2P, "pkg/core.py::only_tests_use"),
            ],
        )]);
        let c = run(&index, &t);
        assert_eq!(
            reasons(&c, "pkg/core.py::handler")[0],
            Reason::ModuleLevel { path: "pkg/core.py".into(), line: 40 }
        );
        // Listed in `__all__` only: the mask takes it out of the list, so it goes.
        assert_eq!(status(&c, "pkg/core.py::api"), Status::Extracted);
        assert_eq!(status(&c, "pkg/core.py::only_tests_use"), Status::Extracted);
        assert_eq!(status(&c, "pkg/core.py::feat"), Status::Extracted);
    }
}
