//! **nested_in_extracted** (extract rule): a definition nested in an extracted one goes
//! with it, reached or not ([`Reason::MemberOfExtracted`] for a member of a class,
//! [`Reason::ParentExtracted`] for one nested in a function); one the F2P tests did not
//! reach whose container stays, stays with it, unlisted.
//!
//! Why: a nested definition lives in its container's text, so the mask deletes it with the
//! container; the BFS therefore takes everything nested in what it reached as candidates.
//! The other way round, what the F2P tests never ran is not the feature's: an unreached
//! method of a class that stays (a method of another feature, or one no test runs) stays
//! with the class.
//!
//! Example: the F2P test builds an `Exporter` and exports:
//! ```python
//! class Exporter:                # carve: extracted (class of reached member Exporter.__init__)
//!     def __init__(self): ...    # carve: extracted
//!     def unused(self): ...      # carve: extracted (member of extracted class Exporter)
//! ```

use std::collections::{BTreeMap, BTreeSet};

use carve_languages::NodeId;

use crate::classify::Reason;
use crate::classify::context::Context;

/// Why extracted `id` goes with its container: its parent is extracted too.
pub(in crate::classify) fn reason(cx: &Context<'_>, id: &str, extracted: &BTreeSet<NodeId>) -> Option<Reason> {
    let parent = cx.parent_of(id).filter(|p| extracted.contains(p.id.as_str()))?;
    Some(if parent.kind.is_class_like() {
        Reason::MemberOfExtracted { class: parent.id.clone() }
    } else {
        Reason::ParentExtracted { parent: parent.id.clone() }
    })
}

/// Whether `id` was not reached itself and its container stays (or it has none): only what
/// is nested in an extracted definition goes with it.
pub(super) fn unreached_in_kept(
    cx: &Context<'_>,
    id: &str,
    extracted: &BTreeSet<NodeId>,
    origin: &BTreeMap<NodeId, Reason>,
) -> bool {
    !origin.contains_key(id) && cx.parent_of(id).is_none_or(|p| !extracted.contains(&p.id))
}

#[cfg(test)]
mod tests {
    use crate::classify::{Reason, Status};
    use crate::testutil::{F2P, P2P, base, reasons, run, status, trace};

    #[test]
    fn a_feature_class_goes_whole_with_its_unreached_methods() {
        let index = base()
            .class("pkg/core.py::Exporter", 10)
            .func("pkg/core.py::Exporter.__init__", 11)
            .func("pkg/core.py::Exporter.export", 14)
            .func("pkg/core.py::Exporter.unused", 17)
            .build();
        let t = trace(&[(F2P, &[], &[(F2P, "pkg/core.py::Exporter.__init__"), (F2P, "pkg/core.py::Exporter.export")])]);
        let c = run(&index, &t);
        assert_eq!(status(&c, "pkg/core.py::Exporter"), Status::Extracted);
        assert_eq!(
            reasons(&c, "pkg/core.py::Exporter"),
            [Reason::HasReachedMember { member: "pkg/core.py::Exporter.__init__".into() }]
        );
        assert_eq!(
            reasons(&c, "pkg/core.py::Exporter.unused"),
            [Reason::MemberOfExtracted { class: "pkg/core.py::Exporter".into() }]
        );
        assert_eq!(
            reasons(&c, "pkg/core.py::Exporter.export"),
            [
                Reason::EntryPoint { test: F2P.into() },
                Reason::MemberOfExtracted { class: "pkg/core.py::Exporter".into() }
            ]
        );
    }

    #[test]
    fn an_unreached_method_of_a_class_that_stays_stays_unlisted() {
        let index = base()
            .class("pkg/core.py::Exporter", 10)
            .func("pkg/core.py::Exporter.__init__", 11)
            .func("pkg/core.py::Exporter.export", 14)
            .func("pkg/core.py::Exporter.unused", 17)
            .build();
        let t = trace(&[
            (F2P, &[], &[(F2P, "pkg/core.py::Exporter.export")]),
            (P2P, &[], &[(P2P, "pkg/core.py::Exporter.__init__")]),
        ]);
        let c = run(&index, &t);
        assert_eq!(status(&c, "pkg/core.py::Exporter"), Status::Remained);
        assert_eq!(status(&c, "pkg/core.py::Exporter.export"), Status::Extracted);
        assert_eq!(c.status("pkg/core.py::Exporter.unused"), None, "{:#?}", c.nodes);
        assert_eq!(c.status("pkg/core.py::Exporter.__init__"), None, "{:#?}", c.nodes);
    }
}
