//! **executed_by_p2p**: a candidate that a pass-to-pass (P2P) test executes remains
//! ([`Reason::ExecutedByP2p`]; `test` is the smallest such test, `others` how many more).
//!
//! Why: the masked state must keep every P2P test passing, and a P2P test that runs a
//! definition needs it. The exception is `p2p_only_through_removed`: when every P2P
//! execution comes from code the mask deletes with the candidate, the hit says nothing about
//! what stays.
//!
//! Example: `feat` (run by the F2P test only) calls `shared`, which a P2P test calls too:
//! ```python
//! def shared(): ...            # carve: remained (executed by P2P test tests/test_base.py::test_base)
//! def feat(): return shared()  # carve: extracted
//! ```

use super::{Query, p2p_only_through_removed};
use crate::classify::Reason;
use crate::classify::context::Context;

pub(super) fn check(cx: &Context<'_>, id: &str, q: &Query<'_>, out: &mut Vec<Reason>) {
    if let Some((test, count)) = cx.p2p_hits.get(id)
        && p2p_only_through_removed::calls(cx, id, q.extracted).is_none()
    {
        out.push(Reason::ExecutedByP2p { test: (*test).clone(), others: count - 1 });
    }
}

#[cfg(test)]
mod tests {
    use crate::classify::{Reason, Status};
    use crate::testutil::{F2P, P2P, base, reasons, run, run_with, set, status, trace};

    #[test]
    fn p2p_hit_remains_and_feature_only_code_is_extracted() {
        let index = base().funcs(&["pkg/core.py::feat", "pkg/core.py::shared"]).build();
        let t = trace(&[
            (F2P, &[], &[(F2P, "pkg/core.py::feat"), ("pkg/core.py::feat", "pkg/core.py::shared")]),
            (P2P, &[], &[(P2P, "pkg/core.py::shared")]),
            ("tests/test_base.py::test_other", &["pkg/core.py::shared"], &[]),
        ]);
        let c = run(&index, &t);
        assert_eq!(c.entry_points, ["pkg/core.py::feat"]);
        assert_eq!(reasons(&c, "pkg/core.py::feat"), [Reason::EntryPoint { test: F2P.into() }]);
        assert_eq!(status(&c, "pkg/core.py::shared"), Status::Remained);
        assert_eq!(
            reasons(&c, "pkg/core.py::shared"),
            [
                Reason::ExecutedByP2p { test: P2P.into(), others: 1 },
                Reason::Reached { from: "pkg/core.py::feat".into() }
            ]
        );
        assert_eq!(
            c.nodes["pkg/core.py::shared"].to_string(),
            format!("remained: executed by P2P test {P2P} (and 1 more); called from pkg/core.py::feat in F2P tests")
        );
        assert_eq!(c.extracted().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["pkg/core.py::feat"]);
        assert_eq!(c.removed_test_files, ["tests/test_feat.py"]);
    }

    #[test]
    fn a_helper_shared_between_features_remains_for_each_feature() {
        const F2P_B: &str = "tests/test_b.py::test_b";
        let index = base()
            .file("tests/test_b.py", true)
            .funcs(&[F2P_B, "pkg/core.py::feat_a", "pkg/core.py::feat_b", "pkg/core.py::shared_helper"])
            .build();
        let t = trace(&[
            (F2P, &[], &[(F2P, "pkg/core.py::feat_a"), ("pkg/core.py::feat_a", "pkg/core.py::shared_helper")]),
            (F2P_B, &[], &[(F2P_B, "pkg/core.py::feat_b"), ("pkg/core.py::feat_b", "pkg/core.py::shared_helper")]),
            (P2P, &[], &[]),
        ]);
        let a = run_with(&index, &t, &set(&[F2P]), &set(&[P2P, F2P_B]));
        assert_eq!(status(&a, "pkg/core.py::feat_a"), Status::Extracted);
        assert_eq!(
            reasons(&a, "pkg/core.py::shared_helper")[0],
            Reason::ExecutedByP2p { test: F2P_B.into(), others: 0 }
        );
        let b = run_with(&index, &t, &set(&[F2P_B]), &set(&[P2P, F2P]));
        assert_eq!(status(&b, "pkg/core.py::feat_b"), Status::Extracted);
        assert_eq!(status(&b, "pkg/core.py::shared_helper"), Status::Remained);
        // Both features together: the helper is theirs alone.
        let both = run_with(&index, &t, &set(&[F2P, F2P_B]), &set(&[P2P]));
        assert_eq!(status(&both, "pkg/core.py::shared_helper"), Status::Extracted);
    }
}
