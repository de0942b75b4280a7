//! **value_binding**: a candidate named by a value binding in a file that stays remains
//! while code that stays and runs names what the binding binds: [`Reason::ClassBody`] for a
//! binding in a class body (`mode = _Prop(_calc_mode)`), [`Reason::ModuleLevel`] for one at
//! module level (`peekn = curry(peekn)`, a lookup-table entry).
//!
//! Why: a binding is module-level or class-body code, so it runs on import, but unlike a
//! plain use the mask can delete it together with what it names when nothing that stays
//! uses the bound name; the gold patch restores both. A binding in a class that goes goes
//! with it. An entry of a literal is looked up at run time, never by name: no use of it is
//! known, and the trace of what it names decides (a P2P test that looks it up runs it).
//!
//! Example:
//! ```python
//! # pkg/curried.py
//! used = curry(core.used)    # `reader` (run by a P2P test) reads `used`:
//!                            #   core.used: remained (used by module-level code)
//! peekn = curry(core.peekn)  # only a helper of the removed F2P test file reads `peekn`:
//!                            #   core.peekn: extracted, the binding deleted with it
//! ```

use std::collections::{BTreeMap, BTreeSet};

use carve_languages::index::ValueBinding;
use carve_languages::{DefinitionIndex, NodeId};

use super::Query;
use crate::classify::Reason;
use crate::classify::context::Context;

pub(super) fn check(cx: &Context<'_>, id: &str, q: &Query<'_>, out: &mut Vec<Reason>) {
    // A value binding naming `id` is deleted with it unless what it binds is used.
    for (b, path) in cx.binding_needs.get(id).into_iter().flatten() {
        if b.class.as_deref().is_some_and(|c| !q.stays(c)) || !binding_used(cx, b, q.extracted) {
            continue;
        }
        let line = b.targets.iter().find(|t| t.target == id).map_or(b.span.start_line, |t| t.line);
        out.push(match &b.class {
            Some(c) => Reason::ClassBody { of: c.clone() },
            None => Reason::ModuleLevel { path: (*path).to_string(), line },
        });
    }
}

/// Target -> the value bindings in files that stay naming it, with their file.
pub(in crate::classify) fn bindings<'a>(
    index: &'a DefinitionIndex,
    removed_files: &BTreeSet<&str>,
) -> BTreeMap<&'a str, Vec<(&'a ValueBinding, &'a str)>> {
    let mut bindings: BTreeMap<&str, Vec<(&ValueBinding, &str)>> = BTreeMap::new();
    for (path, file) in index.files.iter().filter(|(p, _)| !removed_files.contains(p.as_str())) {
        for b in &file.value_bindings {
            for t in &b.targets {
                bindings.entry(t.target.as_str()).or_default().push((b, path.as_str()));
            }
        }
    }
    bindings
}

/// Whether code that stays and runs names what value binding `b` binds: module-level
/// code of a file that stays, a class body that stays, or a definition that stays and
/// runs in a P2P test or at import time (an F2P test taken out of its file does not).
/// An entry of a literal is looked up at run time, never by name: no use is known, and
/// the trace of what it names decides (a P2P test that looks it up runs it).
fn binding_used(cx: &Context<'_>, b: &ValueBinding, extracted: &BTreeSet<NodeId>) -> bool {
    let gone = |id: &str| {
        let mut cur = Some(id);
        while let Some(c) = cur {
            if extracted.contains(c) || cx.removed_tests.contains(c) {
                return true;
            }
            cur = cx.index.get(c).and_then(|d| d.parent.as_deref());
        }
        false
    };
    b.named_by.iter().any(|by| match cx.index.get(by) {
        Some(d) => {
            !cx.removed_files.contains(d.path.as_str())
                && !gone(by)
                && (d.kind.is_class_like() || cx.executed.contains(by.as_str()))
        }
        None => cx.index.files.contains_key(by) && !cx.removed_files.contains(by.as_str()),
    })
}

#[cfg(test)]
mod tests {
    use crate::classify::{Reason, Status};
    use crate::testutil::{F2P, P2P, base, reasons, run, status, trace};

    /// A value binding (`peekn = curry(peekn)`, `mode = _Prop(_calc_mode)`, a dict entry) keeps
    /// what it names only while code that stays and runs names what it binds; the mask deletes
    /// it with them otherwise.
    #[test]
    fn value_bindings_keep_what_they_name_only_when_what_they_bind_is_used() {
        let index = base()
            .file("pkg/curried.py", false)
            .class("pkg/core.py::Stats", 40)
            .funcs(&[
                "pkg/core.py::peekn",
                "pkg/core.py::used",
                "pkg/core.py::Stats._calc_mode",
                "pkg/core.py::Stats.mean",
                "pkg/core.py::handler",
                "pkg/core.py::reader",
                "pkg/core.py::idle",
            ])
            .binding("pkg/curried.py", None, "peekn", false, &["pkg/core.py::peekn"], &["tests/test_feat.py::helper"])
            .binding("pkg/curried.py", None, "used", false, &["pkg/core.py::used"], &["pkg/core.py::reader"])
            .binding(
                "pkg/core.py",
                Some("pkg/core.py::Stats"),
                "mode",
                false,
                &["pkg/core.py::Stats._calc_mode"],
                &["pkg/core.py::idle"],
            )
            .binding("pkg/core.py", Some("pkg/core.py::Stats"), "table", true, &["pkg/core.py::handler"], &[])
            .build();
        let feat = ["pkg/core.py::peekn", "pkg/core.py::used", "pkg/core.py::Stats._calc_mode", "pkg/core.py::handler"];
        let edges: Vec<(&str, &str)> = feat.iter().map(|f| (F2P, *f)).collect();
        let t = trace(&[
            (F2P, &[], &edges),
            (P2P, &["pkg/core.py::reader", "pkg/core.py::Stats.mean"], &[]),
            ("tests/test_base.py::test_other", &[], &[]),
        ]);
        let c = run(&index, &t);
        assert_eq!(status(&c, "pkg/core.py::Stats"), Status::Remained);
        // Named only by a test helper of the removed F2P file, by a function no P2P test runs,
        // or an entry: extracted, the binding goes with it.
        for id in ["pkg/core.py::peekn", "pkg/core.py::Stats._calc_mode", "pkg/core.py::handler"] {
            assert_eq!(status(&c, id), Status::Extracted, "{id}: {:?}", reasons(&c, id));
        }
        // `used` is read by `reader`, which a P2P test runs: its binding stays, and so does it.
        assert_eq!(status(&c, "pkg/core.py::used"), Status::Remained);
        assert_eq!(
            reasons(&c, "pkg/core.py::used")[0],
            Reason::ModuleLevel { path: "pkg/curried.py".into(), line: 101 }
        );

        // A P2P test that runs the reader of `mode` keeps `_calc_mode` by the class body.
        let t = trace(&[
            (F2P, &[], &edges),
            (P2P, &["pkg/core.py::reader", "pkg/core.py::idle", "pkg/core.py::Stats.mean"], &[]),
            ("tests/test_base.py::test_other", &[], &[]),
        ]);
        let c = run(&index, &t);
        assert_eq!(
            reasons(&c, "pkg/core.py::Stats._calc_mode")[0],
            Reason::ClassBody { of: "pkg/core.py::Stats".into() }
        );
    }
}
