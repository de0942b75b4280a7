//! **has_remained_member**: a candidate with a member that remains (a method, a nested
//! definition) remains too ([`Reason::HasRemainedMember`]; `member` is the first such
//! member, `others` how many more).
//!
//! Why: a member lives in its container's text; it cannot stay without it. A class of two
//! features stays, losing only the feature's methods. In the report, a member that stays only
//! because its container does (`parent_remained`) is not given as a reason for the container.
//!
//! Example: the F2P test runs `to_csv`, a P2P test runs `__init__`:
//! ```python
//! class Report:                 # carve: remained (has remained member Report.__init__)
//!     def __init__(self): ...   # carve: remained (executed by P2P test)
//!     def to_csv(self): ...     # carve: extracted
//! ```

use carve_languages::NodeId;

use super::{Query, keep_reasons};
use crate::classify::Reason;
use crate::classify::context::Context;

pub(super) fn check(cx: &Context<'_>, id: &str, q: &Query<'_>, out: &mut Vec<Reason>) {
    // Members that stay on their own account, not merely because `id` stays. (While `id`
    // is still extracted, every member that stays does so on its own account, so the
    // fixpoint can skip the check.)
    let kept_members: Vec<&&NodeId> = cx
        .children
        .get(id)
        .into_iter()
        .flatten()
        .filter(|c| q.stays(c))
        .filter(|c| !q.explain || keep_reasons(cx, c, q).iter().any(|r| !matches!(r, Reason::ParentRemained { .. })))
        .collect();
    if let Some(first) = kept_members.first() {
        out.push(Reason::HasRemainedMember { member: (**first).clone(), others: kept_members.len() - 1 });
    }
}

#[cfg(test)]
mod tests {
    use crate::classify::{Reason, Status};
    use crate::testutil::{F2P, P2P, base, reasons, run, status, trace};

    #[test]
    fn a_class_with_methods_of_two_features_remains_and_loses_only_the_feature_method() {
        let index = base()
            .class("pkg/core.py::Report", 10)
            .func("pkg/core.py::Report.__init__", 11)
            .func("pkg/core.py::Report.to_csv", 14)
            .func("pkg/core.py::Report.to_json", 17)
            .func("pkg/core.py::Report.never_run", 20)
            .build();
        let t = trace(&[
            (F2P, &[], &[(F2P, "pkg/core.py::Report.__init__"), (F2P, "pkg/core.py::Report.to_csv")]),
            (P2P, &[], &[(P2P, "pkg/core.py::Report.__init__"), (P2P, "pkg/core.py::Report.to_json")]),
        ]);
        let c = run(&index, &t);
        assert_eq!(status(&c, "pkg/core.py::Report.to_csv"), Status::Extracted);
        assert_eq!(status(&c, "pkg/core.py::Report.__init__"), Status::Remained);
        assert_eq!(status(&c, "pkg/core.py::Report"), Status::Remained);
        assert_eq!(
            reasons(&c, "pkg/core.py::Report")[0],
            Reason::HasRemainedMember { member: "pkg/core.py::Report.__init__".into(), others: 1 }
        );
        assert!(!c.nodes.contains_key("pkg/core.py::Report.to_json"));
        // Unreached members of a class that stays are not the feature's: they stay, unlisted.
        assert!(!c.nodes.contains_key("pkg/core.py::Report.never_run"));
    }

    #[test]
    fn a_kept_nested_function_keeps_its_parent() {
        let index = base().funcs(&["pkg/core.py::factory", "pkg/core.py::factory.made"]).build();
        let t = trace(&[
            (F2P, &[], &[(F2P, "pkg/core.py::factory"), ("pkg/core.py::factory", "pkg/core.py::factory.made")]),
            (P2P, &["pkg/core.py::factory.made"], &[]),
        ]);
        let c = run(&index, &t);
        assert_eq!(status(&c, "pkg/core.py::factory.made"), Status::Remained);
        assert_eq!(
            reasons(&c, "pkg/core.py::factory")[0],
            Reason::HasRemainedMember { member: "pkg/core.py::factory.made".into(), others: 0 }
        );
    }
}
