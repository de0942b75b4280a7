//! **p2p_only_through_removed** (extract rule): an extracted function or method that P2P
//! tests execute may go anyway when every P2P execution comes from code the mask deletes
//! ([`Reason::P2pOnlyThroughRemoved`]): an extracted definition (or one nested in it), or a
//! statement of code that stays that calls it and discards the value, which the mask deletes
//! with it (and the gold patch restores). It is the exception to `executed_by_p2p`.
//!
//! Why: such a P2P hit says nothing about what the masked state needs; nothing that stays
//! calls it there. Only when the feature's tests are its main users (fewer P2P tests than F2P
//! tests run it, or F2P test code calls it itself): shared code the feature merely passes
//! through would change what the P2P tests check. Only calls that resolve statically to it
//! count (a call on an object the index cannot resolve may have effects code that stays relies
//! on), unless the call's value is only tested; and no other code that stays may name it.
//! Validation decides whether that was sound: a P2P test that then fails puts it back.
//!
//! Example: both F2P tests and one P2P test run `check` through `decode`'s statement:
//! ```python
//! def check(x): ...    # carve: extracted (P2P tests run it only through decode's `check(x)`)
//! def decode(x):       # carve: remained (executed by P2P test)
//!     check(x)         # deleted with `check`, recorded in `removed_calls`
//!     return x
//! ```

use std::collections::BTreeSet;

use carve_languages::NodeId;
use carve_languages::index::{DefinitionKind, DiscardedCall};

use crate::classify::context::{Context, is_test_def};
use crate::classify::{Reason, RemovedCall};
use crate::trace::Caller;

/// The reason extracted `id` goes although P2P tests run it, recording in `removed_calls` the
/// call statements the mask deletes with it; `None` when no P2P test runs it or the rule
/// does not hold.
pub(in crate::classify) fn reason(
    cx: &Context<'_>,
    id: &str,
    extracted: &BTreeSet<NodeId>,
    removed_calls: &mut Vec<RemovedCall>,
) -> Option<Reason> {
    let (test, _) = cx.p2p_hits.get(id)?;
    let (calls, extracted_callers) = calls(cx, id, extracted)?;
    for caller in &calls {
        for c in removable_calls(cx, caller, id) {
            removed_calls.push(RemovedCall::of(cx.index, id, c));
        }
    }
    Some(Reason::P2pOnlyThroughRemoved { test: (*test).clone(), calls, extracted_callers })
}

/// Whether every P2P execution of `id` (a function or method outside test code, which
/// fewer P2P tests than F2P tests execute) comes from
/// code the mask deletes: an extracted definition (or one nested in it), or a
/// discarded-value call in code that stays, which the mask deletes with `id`; and no
/// other code that stays names `id` in its body. Returns the callers whose calls go, and
/// the extracted callers; `None` when some P2P execution is not explained so.
pub(super) fn calls(cx: &Context<'_>, id: &str, extracted: &BTreeSet<NodeId>) -> Option<(Vec<NodeId>, Vec<NodeId>)> {
    through_removed(cx, id, extracted, true)
}

/// The discarded-value calls of `id` in `caller` that the mask would delete with it. Only
/// calls that resolve statically to `id` count: a call on an object the index cannot
/// resolve (`result.add_row(line, row)` on a local) may have effects that code that stays
/// relies on, and a name alone does not tell a check of its arguments from an effect.
///
/// A call whose value is only tested (`msg = alg.check_key_length(key)` then `if msg: …`)
/// counts also when it names `id`'s method on an object the index does not resolve: its
/// value, not an effect, is what the code around it uses, and the trace shows `caller`
/// calling `id`.
pub(super) fn removable_calls<'a>(cx: &Context<'a>, caller: &str, id: &str) -> Vec<&'a DiscardedCall> {
    let name = cx.index.get(id).map(|d| d.name.as_str());
    cx.discarded_calls
        .get(caller)
        .into_iter()
        .flatten()
        .filter(|c| {
            c.target.as_deref() == Some(id) || (c.tested && c.target.is_none() && Some(c.name.as_str()) == name)
        })
        .copied()
        .collect()
}

/// [`calls`]; with `shared`, a definition that P2P tests run as
/// much as F2P tests (or more) counts too when each of its calls in code that stays is a
/// statement the mask deletes anyway, with another extracted callee of the same name
/// (`msg = alg.check_key_length(key)` goes with the HMAC and RSA overrides; the base
/// method the other algorithms inherit is then called by nothing that stays).
pub(super) fn through_removed(
    cx: &Context<'_>,
    id: &str,
    extracted: &BTreeSet<NodeId>,
    shared: bool,
) -> Option<(Vec<NodeId>, Vec<NodeId>)> {
    let def = cx.index.get(id)?;
    if !matches!(def.kind, DefinitionKind::Function | DefinitionKind::Method) || is_test_def(cx.index, def) {
        return None;
    }
    // The feature's tests must be its main users: a definition as many P2P tests run as
    // F2P tests do is shared code the feature merely passes through (`_verify_signature`,
    // run by 108 P2P tests and 1 F2P test), whose removal would change what they check.
    // A definition F2P test code calls itself is what those tests are about, however many
    // P2P tests pass through it. Shared code whose every call goes anyway is dead in the
    // masked state: its removal changes nothing the P2P tests can see.
    let p2p_count = cx.p2p_hits.get(id).map_or(0, |(_, n)| *n);
    let main_users = p2p_count < cx.f2p_hits.get(id).copied().unwrap_or(0) || cx.entries.contains(id);
    if !main_users && !shared {
        return None;
    }
    let callers = cx.p2p_callers.get(id)?.as_ref()?;
    let gone = |c: &str| cx.index.lineage(c).any(|a| extracted.contains(a));
    let (mut calls, mut from_extracted) = (BTreeSet::new(), BTreeSet::new());
    for caller in callers {
        let Caller::Node(c) = caller else { return None };
        let removable = removable_calls(cx, c, id);
        if gone(c) {
            from_extracted.insert(c.clone());
        } else if !removable.is_empty()
            && (main_users || removable.iter().all(|k| deleted_with(cx, k, id, extracted).is_some()))
        {
            calls.insert(c.clone());
        } else {
            return None;
        }
    }
    if calls.is_empty() && (from_extracted.is_empty() || !main_users) {
        return None;
    }
    // Code that stays and names it otherwise might run it where no edge was recorded.
    for by in cx.body_refs.get(id).into_iter().flatten() {
        if !gone(by) && removable_calls(cx, by, id).is_empty() {
            return None;
        }
    }
    Some((calls.into_iter().collect(), from_extracted.into_iter().collect()))
}

/// The extracted callee other than `id` (the first) with which the mask deletes call
/// statement `c`: one the feature's tests mainly use (never through the shared rule, so
/// this does not recurse).
pub(super) fn deleted_with<'e>(
    cx: &Context<'_>,
    c: &DiscardedCall,
    id: &str,
    extracted: &'e BTreeSet<NodeId>,
) -> Option<&'e NodeId> {
    extracted.iter().find(|t| {
        t.as_str() != id
            && removable_calls(cx, &c.caller, t).contains(&c)
            && through_removed(cx, t, extracted, false).is_some()
    })
}

#[cfg(test)]
mod tests {
    use carve_languages::index::{DiscardedCall, Span};

    use crate::classify::{Reason, Status};
    use crate::testutil::{F2P, P2P, base, reasons, run_with, set, status, trace};

    /// `core.check` is run by one P2P test, only through `core.decode`'s statement
    /// `check(x)` (its value discarded), and by both F2P tests: it is extracted and the
    /// statement is recorded for the mask. Run by as many P2P tests as F2P tests, or named by
    /// `core.other` in another way, it stays.
    #[test]
    fn a_definition_p2p_tests_run_only_through_a_discarded_call_is_extracted_with_the_call() {
        const F2P_2: &str = "tests/test_feat.py::test_feat_2";
        let build = |other_names_it: bool| {
            let mut index = base()
                .funcs(&[F2P_2, "pkg/core.py::decode", "pkg/core.py::check", "pkg/core.py::other"])
                .refs("pkg/core.py::decode", &["pkg/core.py::check"])
                .build();
            if other_names_it {
                index.definitions.get_mut("pkg/core.py::other").unwrap().references.push("pkg/core.py::check".into());
            }
            let span = Span { start_byte: 10, end_byte: 18, start_line: 7, end_line: 7 };
            index.files.get_mut("pkg/core.py").unwrap().discarded_calls.push(DiscardedCall {
                caller: "pkg/core.py::decode".into(),
                target: Some("pkg/core.py::check".into()),
                name: "check".into(),
                span,
                tested: false,
                names: Vec::new(),
            });
            index
        };
        let f2p_edges: &[(&str, &str)] = &[(F2P, "pkg/core.py::decode"), ("pkg/core.py::decode", "pkg/core.py::check")];
        let p2p_edges: &[(&str, &str)] = &[(P2P, "pkg/core.py::decode"), ("pkg/core.py::decode", "pkg/core.py::check")];
        let t = trace(&[
            (F2P, &[], f2p_edges),
            (F2P_2, &[], &[(F2P_2, "pkg/core.py::decode"), ("pkg/core.py::decode", "pkg/core.py::check")]),
            (P2P, &[], p2p_edges),
            ("tests/test_base.py::test_other", &[], &[("tests/test_base.py::test_other", "pkg/core.py::decode")]),
        ]);
        let f2p = set(&[F2P, F2P_2]);
        let p2p = set(&[P2P, "tests/test_base.py::test_other"]);
        let c = run_with(&build(false), &t, &f2p, &p2p);
        assert_eq!(status(&c, "pkg/core.py::decode"), Status::Remained);
        assert_eq!(status(&c, "pkg/core.py::check"), Status::Extracted, "{:#?}", c.nodes);
        assert!(reasons(&c, "pkg/core.py::check").contains(&Reason::P2pOnlyThroughRemoved {
            test: P2P.into(),
            calls: vec!["pkg/core.py::decode".into()],
            extracted_callers: vec![],
        }));
        assert_eq!(c.removed_calls.len(), 1);
        assert_eq!((c.removed_calls[0].caller.as_str(), c.removed_calls[0].line), ("pkg/core.py::decode", 7));
        assert_eq!(c.call_statements_to_remove()["pkg/core.py"].len(), 1);

        // Named otherwise by code that stays: kept.
        let c = run_with(&build(true), &t, &f2p, &p2p);
        assert_eq!(status(&c, "pkg/core.py::check"), Status::Remained);
        assert!(c.removed_calls.is_empty());

        // Run by as many P2P tests as F2P tests: shared code, kept.
        let t = trace(&[(F2P, &[], f2p_edges), (F2P_2, &[], &[(F2P_2, "pkg/core.py::decode")]), (P2P, &[], p2p_edges)]);
        let c = run_with(&build(false), &t, &f2p, &p2p);
        assert_eq!(status(&c, "pkg/core.py::check"), Status::Remained);
    }
}
