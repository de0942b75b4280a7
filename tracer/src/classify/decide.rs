//! Step 4 of the classification: one [`Decision`] per reached or extracted definition, with
//! its reasons sorted by weight, and the call statements the mask deletes with what they
//! call.

use std::collections::{BTreeMap, BTreeSet};

use carve_languages::NodeId;

use super::context::Context;
use super::rules::{self, Query, nested_in_extracted, p2p_only_through_removed};
use super::{Decision, Reason, RemovedCall, Status};

/// The decisions on every definition of `origin` or `extracted`, and the removed call
/// statements (sorted, without duplicates).
pub(super) fn decisions(
    cx: &Context<'_>,
    origin: &BTreeMap<NodeId, Reason>,
    extracted: &BTreeSet<NodeId>,
) -> (BTreeMap<NodeId, Decision>, Vec<RemovedCall>) {
    let mut nodes = BTreeMap::new();
    let mut removed_calls: Vec<RemovedCall> = Vec::new();
    for id in origin.keys().chain(extracted.iter()) {
        if nodes.contains_key(id) {
            continue;
        }
        let mut decision = if extracted.contains(id) {
            let mut reasons: Vec<Reason> = origin.get(id).cloned().into_iter().collect();
            reasons.extend(nested_in_extracted::reason(cx, id, extracted));
            reasons.extend(p2p_only_through_removed::reason(cx, id, extracted, &mut removed_calls));
            Decision { status: Status::Extracted, reasons }
        } else {
            let mut reasons = rules::keep_reasons(cx, id, &Query { extracted, origin, explain: true });
            reasons.extend(origin.get(id).cloned());
            Decision { status: Status::Remained, reasons }
        };
        decision.reasons.sort();
        decision.reasons.dedup();
        nodes.insert(id.clone(), decision);
    }
    removed_calls.sort();
    removed_calls.dedup();
    (nodes, removed_calls)
}
