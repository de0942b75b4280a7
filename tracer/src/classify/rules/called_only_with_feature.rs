//! **called_only_with_feature** (extract rule): a definition the F2P tests do not reach, that
//! P2P tests run, goes with the feature when code that stays calls it only in statements the
//! mask deletes with an extracted callee ([`Reason::CalledOnlyWithFeature`]), and nothing
//! else that stays calls or needs it.
//!
//! Why: in the masked state nothing calls it; left behind it is dead code. The typical case
//! is a base method whose overrides are the feature: the one statement that calls either
//! goes with the overrides, so the base method is called by nothing that stays.
//!
//! Example (pyjwt's key-length check): the F2P tests run `Hmac.check`, the P2P tests run
//! both through `decode`:
//! ```python
//! class Algo:
//!     def check(self, key): ...   # carve: extracted (called only in statements deleted with Hmac.check)
//! class Hmac(Algo):
//!     def check(self, key): ...   # carve: extracted
//! def decode(alg, key):           # carve: remained
//!     msg = alg.check(key)        # deleted with Hmac.check
//!     if msg: warn(msg)
//! ```
//!
//! [`Reason::CalledOnlyWithFeature`]: crate::classify::Reason::CalledOnlyWithFeature

use std::collections::BTreeSet;

use carve_languages::NodeId;

use super::free_to_go;
use super::p2p_only_through_removed::{deleted_with, removable_calls, through_removed};
use crate::classify::context::Context;

/// For a definition the F2P tests do not reach but P2P tests run: the extracted callee
/// with which the mask deletes every call to it in code that stays (the first, when
/// several), when nothing else that stays calls or needs it; else `None`.
pub(in crate::classify) fn deleted_with_callee(
    cx: &Context<'_>,
    id: &str,
    extracted: &BTreeSet<NodeId>,
) -> Option<NodeId> {
    let def = cx.index.get(id)?;
    if cx.kept.contains(id) || cx.removed_files.contains(def.path.as_str()) {
        return None;
    }
    let (calls, _) = through_removed(cx, id, extracted, true)?;
    let with = calls
        .iter()
        .flat_map(|caller| removable_calls(cx, caller, id))
        .filter_map(|c| deleted_with(cx, c, id, extracted))
        .min()?
        .clone();
    free_to_go(cx, id, extracted).then_some(with)
}

#[cfg(test)]
mod tests {
    use carve_languages::index::{DiscardedCall, Span};

    use crate::classify::{Reason, Status};
    use crate::testutil::{F2P, P2P, base, reasons, run, status, trace};

    /// pyjwt's key-length check: `decode` holds `msg = alg.check(key)` then `if msg: …` (a
    /// tested call on an object the index does not resolve). The F2P tests run the `Hmac`
    /// override (an entry point: they call it themselves too) and P2P tests run it through
    /// `decode`; P2P tests run the base `Algo.check` the other algorithms inherit, more often
    /// than F2P tests. The statement goes with the override, so nothing that stays calls the
    /// base either: it is extracted too, although no F2P test reaches it. Named by other code
    /// that stays, it is left alone (not reached, so not classified).
    #[test]
    fn a_base_method_called_only_in_statements_deleted_with_the_feature_is_extracted() {
        const ALGO: &str = "pkg/core.py::Algo.check";
        const HMAC: &str = "pkg/core.py::Hmac.check";
        let build = |other_names_it: bool| {
            let mut index = base()
                .class("pkg/core.py::Algo", 40)
                .func(ALGO, 41)
                .class("pkg/core.py::Hmac", 50)
                .func(HMAC, 51)
                .funcs(&["pkg/core.py::decode", "pkg/core.py::other"])
                .build();
            if other_names_it {
                index.definitions.get_mut("pkg/core.py::other").unwrap().references.push(ALGO.into());
            }
            let span = Span { start_byte: 10, end_byte: 40, start_line: 7, end_line: 8 };
            index.files.get_mut("pkg/core.py").unwrap().discarded_calls.push(DiscardedCall {
                caller: "pkg/core.py::decode".into(),
                target: None,
                name: "check".into(),
                span,
                tested: true,
                names: Vec::new(),
            });
            index
        };
        // The F2P tests call the override themselves and through `decode`; P2P tests run both
        // through `decode` (HMAC keys long enough, other algorithms).
        let t = trace(&[
            (F2P, &[], &[(F2P, HMAC), (F2P, "pkg/core.py::decode"), ("pkg/core.py::decode", HMAC)]),
            (P2P, &[], &[(P2P, "pkg/core.py::decode"), ("pkg/core.py::decode", ALGO), ("pkg/core.py::decode", HMAC)]),
            (
                "tests/test_base.py::test_other",
                &[],
                &[("tests/test_base.py::test_other", "pkg/core.py::decode"), ("pkg/core.py::decode", ALGO)],
            ),
        ]);
        let c = run(&build(false), &t);
        assert_eq!(status(&c, "pkg/core.py::decode"), Status::Remained);
        assert_eq!(status(&c, HMAC), Status::Extracted, "{:#?}", c.nodes);
        assert_eq!(status(&c, ALGO), Status::Extracted, "{:#?}", c.nodes);
        assert!(reasons(&c, ALGO).contains(&Reason::CalledOnlyWithFeature { with: HMAC.into() }));
        // The base class is not the feature: only its method goes.
        assert_eq!(c.status("pkg/core.py::Algo"), None);
        // One statement, recorded for both callees, deleted once.
        let targets: Vec<(&str, usize)> = c.removed_calls.iter().map(|r| (r.target.as_str(), r.line)).collect();
        assert_eq!(targets, [(ALGO, 7), (HMAC, 7)]);
        assert_eq!(c.call_statements_to_remove()["pkg/core.py"].len(), 1);

        // Named otherwise by code that stays: the base stays, the override still goes.
        let c = run(&build(true), &t);
        assert_eq!(c.status(ALGO), None, "{:#?}", c.nodes);
        assert_eq!(status(&c, HMAC), Status::Extracted);
    }
}
