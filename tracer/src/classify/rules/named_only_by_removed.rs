//! **named_only_by_removed** (extract rule): a top-level function or class outside test
//! code that no test runs, and that only code the mask takes out names, goes with the
//! feature ([`Reason::NamedOnlyByFeature`]). Its namers must all go: extracted definitions,
//! F2P tests taken out, or call statements deleted with their callee; and no keep rule may
//! hold for it once it goes.
//!
//! Why: the F2P tests never reach what no test runs, yet left behind it would be dead code
//! that gives the feature away (a warning class only the feature raises). A test alone
//! naming it (a class the F2P tests instantiate) does not make it the feature's: some
//! extracted or deleted code must name it.
//!
//! Example: no test raises the warning, and only `feat` (extracted) names it:
//! ```python
//! class KeyWarning(UserWarning): ...  # carve: extracted (only code the mask takes out names it)
//! def feat(key):                       # carve: extracted
//!     warnings.warn("short key", KeyWarning)
//! ```
//!
//! [`Reason::NamedOnlyByFeature`]: crate::classify::Reason::NamedOnlyByFeature

use std::collections::BTreeSet;

use carve_languages::NodeId;
use carve_languages::index::{DefinitionKind, DiscardedCall};

use super::{free_to_go, p2p_only_through_removed};
use crate::classify::context::{Context, is_test_def, within};

/// Top-level functions and classes outside test code, in files that stay, that no test
/// runs and something names: the definitions this rule may add.
pub(in crate::classify) fn candidates<'c, 'a>(cx: &'c Context<'a>) -> impl Iterator<Item = &'a NodeId> + 'c {
    cx.index
        .definitions
        .values()
        .filter(move |d| {
            d.parent.is_none()
                && (d.kind.is_class_like() || matches!(d.kind, DefinitionKind::Function))
                && !is_test_def(cx.index, d)
                && !cx.removed_files.contains(d.path.as_str())
                && !cx.run.contains(d.id.as_str())
                && !cx.kept.contains(&d.id)
                && (cx.named_by.contains_key(d.id.as_str()) || cx.named_in_calls.contains_key(d.id.as_str()))
        })
        .map(|d| &d.id)
}

/// For a definition no test runs: the first namer of it the mask takes out, when every
/// namer goes (extracted, an F2P test taken out, a deleted call statement) and nothing
/// that stays needs it to load; else `None`.
pub(in crate::classify) fn first_namer(cx: &Context<'_>, id: &str, extracted: &BTreeSet<NodeId>) -> Option<NodeId> {
    let gone = |by: &str| {
        cx.index.lineage(by).any(|a| extracted.contains(a))
            || within(cx.index, by, &cx.removed_tests)
            || cx.index.get(by).is_some_and(|d| cx.removed_files.contains(d.path.as_str()))
    };
    let mut namers: Vec<NodeId> = Vec::new();
    for by in cx.named_by.get(id).into_iter().flatten() {
        if by.as_str() == id || cx.index.lineage(by).any(|a| a == id) {
            continue;
        }
        // A test alone naming it (a class the F2P tests instantiate) does not make it the
        // feature's: code that is extracted or deleted must name it.
        let test = within(cx.index, by, &cx.removed_tests)
            || cx.index.get(by).is_some_and(|d| cx.removed_files.contains(d.path.as_str()));
        if gone(by) || names_only_in_deleted_calls(cx, by, id, extracted) {
            if !test {
                namers.push((*by).clone());
            }
        } else {
            return None;
        }
    }
    for c in cx.named_in_calls.get(id).into_iter().flatten() {
        if call_goes(cx, c, extracted) {
            namers.push(c.caller.clone());
        }
    }
    let first = namers.into_iter().min()?;
    free_to_go(cx, id, extracted).then_some(first)
}

/// Whether `by` (code that stays) names `id` only in call statements the mask deletes.
pub(super) fn names_only_in_deleted_calls(cx: &Context<'_>, by: &str, id: &str, extracted: &BTreeSet<NodeId>) -> bool {
    cx.named_in_calls.get(id).into_iter().flatten().any(|c| c.caller == by && call_goes(cx, c, extracted))
}

/// Whether the mask deletes discarded-value call `c` (of code that stays) with what it
/// calls, given what is extracted: its callee goes, and P2P tests run the callee only
/// through such calls.
fn call_goes(cx: &Context<'_>, c: &DiscardedCall, extracted: &BTreeSet<NodeId>) -> bool {
    let callees: Vec<&NodeId> = match &c.target {
        Some(t) => extracted.get(t).into_iter().collect(),
        None if c.tested => extracted.iter().filter(|e| cx.index.get(e).is_some_and(|d| d.name == c.name)).collect(),
        None => Vec::new(),
    };
    callees.into_iter().any(|t| {
        cx.p2p_hits.contains_key(t.as_str())
            && p2p_only_through_removed::removable_calls(cx, &c.caller, t).contains(&c)
            && p2p_only_through_removed::calls(cx, t, extracted).is_some()
    })
}

#[cfg(test)]
mod tests {
    use crate::classify::{Reason, Status};
    use crate::testutil::{F2P, P2P, base, reasons, run, status, trace};

    /// A warning class no test runs goes with the one extracted function that names it; a
    /// test naming it too changes nothing, but a function that stays and names it keeps it
    /// (unreached, so not classified).
    #[test]
    fn a_definition_no_test_runs_goes_when_only_removed_code_names_it() {
        let index = base()
            .class("pkg/core.py::KeyWarning", 40)
            .funcs(&["pkg/core.py::feat", "pkg/core.py::other"])
            .refs("pkg/core.py::feat", &["pkg/core.py::KeyWarning"])
            .refs(F2P, &["pkg/core.py::KeyWarning"])
            .build();
        let t = trace(&[(F2P, &[], &[(F2P, "pkg/core.py::feat")]), (P2P, &[], &[])]);
        let c = run(&index, &t);
        assert_eq!(status(&c, "pkg/core.py::feat"), Status::Extracted);
        assert_eq!(status(&c, "pkg/core.py::KeyWarning"), Status::Extracted, "{:#?}", c.nodes);
        assert_eq!(
            reasons(&c, "pkg/core.py::KeyWarning"),
            [Reason::NamedOnlyByFeature { by: "pkg/core.py::feat".into() }]
        );

        // Named by the F2P test alone: not the feature's code.
        let index = base().class("pkg/core.py::KeyWarning", 40).funcs(&["pkg/core.py::feat"]);
        let index = index.refs(F2P, &["pkg/core.py::KeyWarning"]).build();
        let c = run(&index, &t);
        assert_eq!(c.status("pkg/core.py::KeyWarning"), None, "{:#?}", c.nodes);

        // Named by code that stays as well: left alone.
        let index = base()
            .class("pkg/core.py::KeyWarning", 40)
            .funcs(&["pkg/core.py::feat", "pkg/core.py::other"])
            .refs("pkg/core.py::feat", &["pkg/core.py::KeyWarning"])
            .refs("pkg/core.py::other", &["pkg/core.py::KeyWarning"])
            .build();
        let c = run(&index, &t);
        assert_eq!(c.status("pkg/core.py::KeyWarning"), None, "{:#?}", c.nodes);
    }
}
