//! **parent_remained**: a candidate nested in a function that remains, and written inside its
//! text, remains too ([`Reason::ParentRemained`]).
//!
//! Why: a nested function is part of its parent's body; the parent cannot stay without it,
//! even when only the F2P tests run the nested one. Members of a class are not covered (a
//! class keeps only the members something needs: `has_remained_member`), nor a definition
//! declared apart from its parent: a Go method's parent is its receiver type, declared
//! elsewhere (`type UUID [16]byte`), and goes or stays on its own.
//!
//! Example: a P2P test runs `shared`; only the F2P test's path runs `inner`:
//! ```python
//! def shared():          # carve: remained (executed by P2P test)
//!     def inner(): ...   # carve: remained (nested in remained shared)
//!     return inner()
//! ```

use super::Query;
use crate::classify::Reason;
use crate::classify::context::{Context, encloses};

pub(super) fn check(cx: &Context<'_>, id: &str, q: &Query<'_>, out: &mut Vec<Reason>) {
    // Only a definition written inside its parent's text goes or stays with it: a Go
    // method's parent is its receiver type, declared apart (`type UUID [16]byte`).
    if let Some(parent) = cx.parent_of(id).filter(|p| !p.kind.is_class_like() && q.stays(&p.id))
        && cx.index.get(id).is_some_and(|d| encloses(parent, d))
    {
        out.push(Reason::ParentRemained { parent: parent.id.clone() });
    }
}

#[cfg(test)]
mod tests {
    use crate::classify::{Reason, Status};
    use crate::testutil::{F2P, P2P, base, reasons, run, status, trace};

    #[test]
    fn nested_functions_follow_their_parent() {
        let index = base()
            .funcs(&[
                "pkg/core.py::feat",
                "pkg/core.py::feat.unreached_inner",
                "pkg/core.py::shared",
                "pkg/core.py::shared.inner",
            ])
            .build();
        let t = trace(&[
            (
                F2P,
                &[],
                &[
                    (F2P, "pkg/core.py::feat"),
                    (F2P, "pkg/core.py::shared"),
                    ("pkg/core.py::shared", "pkg/core.py::shared.inner"),
                ],
            ),
            (P2P, &[], &[(P2P, "pkg/core.py::shared")]),
        ]);
        let c = run(&index, &t);
        assert_eq!(
            reasons(&c, "pkg/core.py::feat.unreached_inner"),
            [Reason::ParentExtracted { parent: "pkg/core.py::feat".into() }]
        );
        // Only the F2P path runs `inner`, but it lives in the body of `shared`, which stays.
        assert_eq!(status(&c, "pkg/core.py::shared.inner"), Status::Remained);
        assert_eq!(
            reasons(&c, "pkg/core.py::shared.inner")[0],
            Reason::ParentRemained { parent: "pkg/core.py::shared".into() }
        );
    }

    #[test]
    fn a_method_declared_apart_from_its_type_does_not_stay_with_it() {
        // Go: `type Collection []*Version` (not class-like) and its methods, declared after it;
        // only F2P tests run `Len`, so it goes although the type stays. A function written
        // inside the type's text would stay with it.
        let index = base()
            .type_alias("pkg/core.py::Collection", 10)
            .bytes("pkg/core.py::Collection", 100, 130)
            .func("pkg/core.py::Collection.Len", 12)
            .bytes("pkg/core.py::Collection.Len", 140, 180)
            .func("pkg/core.py::Collection.inside", 11)
            .bytes("pkg/core.py::Collection.inside", 110, 125)
            .build();
        let t = trace(&[(F2P, &[], &[(F2P, "pkg/core.py::Collection.Len"), (F2P, "pkg/core.py::Collection.inside")])]);
        let c = run(&index, &t);
        assert_eq!(status(&c, "pkg/core.py::Collection.Len"), Status::Extracted, "{:#?}", c.nodes);
        assert_eq!(
            reasons(&c, "pkg/core.py::Collection.inside"),
            [
                Reason::ParentRemained { parent: "pkg/core.py::Collection".into() },
                Reason::EntryPoint { test: F2P.into() }
            ]
        );
    }
}
