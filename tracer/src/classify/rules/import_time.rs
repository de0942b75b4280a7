//! **import_time**: a function-like candidate that runs while modules that stay load remains
//! ([`Reason::ImportTime`]): a hit of the `<import>` pseudo-test, unless only module-level
//! code of the removed test files reaches it (through `<import>` call edges).
//!
//! Why: the masked state must still import. A registration call at module level
//! (`register(plugin)`) runs on every import of its module, whichever tests run; deleting it
//! breaks the import. Module-level code of a removed test file never runs in the masked
//! state, so what only it calls keeps nothing. A class body that ran while its module loaded
//! is not import-time code: the class is a definition like any other.
//!
//! Example:
//! ```python
//! # pkg/plugins.py
//! register(CsvPlugin)      # module-level code of a file that stays
//! # pkg/core.py
//! def register(p): ...     # carve: remained (runs at import time)
//! def make_data(): ...     # carve: extracted (only tests/test_feat.py's module code calls it)
//! ```

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use carve_languages::DefinitionIndex;

use super::Query;
use crate::classify::Reason;
use crate::classify::context::Context;
use crate::trace::{Caller, IMPORT_TEST, Trace};

pub(super) fn check(cx: &Context<'_>, id: &str, _: &Query<'_>, out: &mut Vec<Reason>) {
    if cx.import_time.contains(id) {
        out.push(Reason::ImportTime);
    }
}

/// Function-like definitions hit at import time by module loading that stays: the
/// `<import>` record's hits, minus those only reached (through `<import>` call edges) from
/// module-level code of removed test files. A hit with no recorded caller counts.
pub(in crate::classify) fn live<'a>(
    index: &'a DefinitionIndex,
    trace: &'a Trace,
    removed: &BTreeSet<&str>,
) -> BTreeSet<&'a str> {
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

#[cfg(test)]
mod tests {
    use crate::classify::{Reason, Status};
    use crate::testutil::{F2P, base, reasons, run, status, trace};
    use crate::trace::IMPORT_TEST;

    #[test]
    fn import_time_code_remains_unless_only_removed_tests_load_it() {
        let index = base()
            .file("pkg/plugins.py", false)
            .funcs(&["pkg/core.py::feat", "pkg/core.py::register", "pkg/core.py::make_data", "pkg/core.py::prep"])
            .class("pkg/core.py::Model", 40)
            .build();
        let t = trace(&[
            (
                F2P,
                &[],
                &[
                    (F2P, "pkg/core.py::feat"),
                    ("pkg/core.py::feat", "pkg/core.py::register"),
                    ("pkg/core.py::feat", "pkg/core.py::make_data"),
                    ("pkg/core.py::feat", "pkg/core.py::Model"),
                ],
            ),
            (
                IMPORT_TEST,
                &[],
                &[
                    ("<module>pkg/plugins.py", "pkg/core.py::register"),
                    // Module-level code of the F2P test file: removed with it.
                    ("<module>tests/test_feat.py", "pkg/core.py::make_data"),
                    ("pkg/core.py::make_data", "pkg/core.py::prep"),
                    // A class body that ran while its module loaded is not "import-time code".
                    ("<module>pkg/core.py", "pkg/core.py::Model"),
                ],
            ),
        ]);
        let c = run(&index, &t);
        assert_eq!(status(&c, "pkg/core.py::register"), Status::Remained);
        assert_eq!(reasons(&c, "pkg/core.py::register")[0], Reason::ImportTime);
        assert_eq!(status(&c, "pkg/core.py::make_data"), Status::Extracted);
        assert_eq!(status(&c, "pkg/core.py::Model"), Status::Extracted);
        assert_eq!(status(&c, "pkg/core.py::feat"), Status::Extracted);
    }

    #[test]
    fn import_time_code_called_through_import_time_callers_remains() {
        let index = base().funcs(&["pkg/core.py::feat", "pkg/core.py::setup", "pkg/core.py::inner_setup"]).build();
        let t = trace(&[
            (F2P, &[], &[(F2P, "pkg/core.py::feat"), ("pkg/core.py::feat", "pkg/core.py::inner_setup")]),
            (
                IMPORT_TEST,
                &[],
                &[("<module>pkg/core.py", "pkg/core.py::setup"), ("pkg/core.py::setup", "pkg/core.py::inner_setup")],
            ),
        ]);
        let c = run(&index, &t);
        assert_eq!(reasons(&c, "pkg/core.py::inner_setup")[0], Reason::ImportTime);
    }
}
