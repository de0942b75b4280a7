//! The classification rules, one per file, ruff style: each file says what its rule decides,
//! why, with an example, holds the check, and tests it.
//!
//! **Keep rules** give the reasons a candidate must stay (the reasons to remain of
//! [`Reason`]). [`KEEP`] lists them in the order they are applied: the fixpoint asks them
//! about every candidate still extracted, and every candidate one of them gives a reason for
//! stays, until nothing changes (every rule only grows what stays). A remained definition's
//! decision lists every reason they give. Besides them, [`must_keep`] keeps a candidate a
//! repair kept, one the F2P tests did not reach whose container stays
//! ([`nested_in_extracted`]), and one a [`named_only_by_removed`] decision no longer holds
//! for.
//!
//! **Extract rules**, applied in this order after the keep rules settle:
//! 1. [`named_only_by_removed`] and [`called_only_with_feature`] add definitions the F2P
//!    tests do not reach that go with the feature; the keep rules then decide again.
//! 2. When the decisions are written, [`nested_in_extracted`] explains why an extracted
//!    nested definition goes, and [`p2p_only_through_removed`] why one P2P tests run goes
//!    anyway (it is also the exception to [`executed_by_p2p`]).
//!
//! How to add a rule: a file here with a `//!` doc (what it decides, why, a short example),
//! the check and a unit test that fails without the rule; the [`Reason`] it gives in
//! `decision.rs`; a line in [`KEEP`] for a keep rule (or a call in `fixpoint.rs` /
//! `decide.rs` for an extract rule); any fact it needs once per classification in
//! `context.rs`.

use std::collections::{BTreeMap, BTreeSet};

use carve_languages::NodeId;
use carve_languages::index::LoadRole;

use super::Reason;
use super::context::Context;

pub(super) mod base_class;
pub(super) mod called_only_with_feature;
pub(super) mod class_body;
pub(super) mod decorator;
pub(super) mod default_or_annotation;
pub(super) mod executed_by_p2p;
pub(super) mod has_remained_member;
pub(super) mod implementation;
pub(super) mod import_time;
pub(super) mod module_level;
pub(super) mod named_by_config;
pub(super) mod named_only_by_removed;
pub(super) mod nested_in_extracted;
pub(super) mod p2p_only_through_removed;
pub(super) mod parent_remained;
pub(super) mod referenced_by;
pub(super) mod value_binding;

/// What a keep rule is asked about a candidate.
#[derive(Clone, Copy)]
pub(super) struct Query<'q> {
    /// What is extracted so far.
    pub(super) extracted: &'q BTreeSet<NodeId>,
    /// How the F2P tests reached each definition (empty when asking about one they do not
    /// reach).
    pub(super) origin: &'q BTreeMap<NodeId, Reason>,
    /// Reasons for the report: a member that stays only because the candidate does is then
    /// not a reason for the candidate.
    pub(super) explain: bool,
}

impl Query<'_> {
    /// Whether `id` stays, as far as decided.
    pub(super) fn stays(&self, id: &str) -> bool {
        !self.extracted.contains(id)
    }
}

/// A keep rule: adds to `out` the reasons `id` must stay.
pub(super) type KeepRule = fn(&Context<'_>, &str, &Query<'_>, &mut Vec<Reason>);

/// The keep rules, in the order they are applied.
pub(super) const KEEP: &[KeepRule] = &[
    executed_by_p2p::check,
    import_time::check,
    has_remained_member::check,
    parent_remained::check,
    decorator::check,
    base_class::check,
    default_or_annotation::check,
    class_body::check,
    implementation::check,
    module_level::check,
    named_by_config::check,
    value_binding::check,
    referenced_by::check,
];

/// Every reason `id` must stay, by the keep rules.
pub(super) fn keep_reasons(cx: &Context<'_>, id: &str, q: &Query<'_>) -> Vec<Reason> {
    let mut out = Vec::new();
    for rule in KEEP {
        rule(cx, id, q, &mut out);
    }
    out
}

/// Whether `id` cannot be extracted: a keep rule gives a reason, a repair kept it, it was
/// not reached itself and its container stays (only what is nested in an extracted
/// definition goes with it), or it was added as named only by removed code and is no
/// longer.
pub(super) fn must_keep(
    cx: &Context<'_>,
    id: &str,
    extracted: &BTreeSet<NodeId>,
    origin: &BTreeMap<NodeId, Reason>,
) -> bool {
    let unreached_in_kept = nested_in_extracted::unreached_in_kept(cx, id, extracted, origin);
    let named_elsewhere = matches!(origin.get(id), Some(Reason::NamedOnlyByFeature { .. }))
        && named_only_by_removed::first_namer(cx, id, extracted).is_none();
    unreached_in_kept
        || named_elsewhere
        || cx.kept.contains(id)
        || !keep_reasons(cx, id, &Query { extracted, origin, explain: false }).is_empty()
}

/// Whether no keep rule holds for `id` (one the F2P tests do not reach) once it is extracted
/// too: what the extract rules ask before they add a definition.
pub(super) fn free_to_go(cx: &Context<'_>, id: &str, extracted: &BTreeSet<NodeId>) -> bool {
    let mut with = extracted.clone();
    with.insert(id.to_string());
    keep_reasons(cx, id, &Query { extracted: &with, origin: &BTreeMap::new(), explain: false }).is_empty()
}

/// The definitions that stay and need `id` to load in `role` (the load-time keep rules).
fn load_needers<'c>(
    cx: &'c Context<'_>,
    id: &str,
    q: &'c Query<'_>,
    role: LoadRole,
) -> impl Iterator<Item = &'c NodeId> + 'c {
    cx.load_needers.get(id).into_iter().flatten().filter(move |(of, r)| *r == role && q.stays(of)).map(|(of, _)| *of)
}
