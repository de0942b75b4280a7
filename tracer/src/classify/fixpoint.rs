//! Step 3 of the classification: decide, to a fixpoint, which candidates stay. The keep
//! rules take out of the extracted set every candidate that must stay, until nothing changes
//! (every rule only grows what stays); then the extract rules add what no F2P test reaches
//! but goes with the feature ([`rules::named_only_by_removed`],
//! [`rules::called_only_with_feature`]), and the keep rules decide again — at most four
//! rounds.

use std::collections::{BTreeMap, BTreeSet};

use carve_languages::NodeId;

use super::Reason;
use super::context::Context;
use super::reach::extract_with_nested;
use super::rules::{self, called_only_with_feature, named_only_by_removed};

/// Settles `extracted` (the candidates on entry) and adds to `origin` why each definition
/// the extract rules added goes.
pub(super) fn settle(cx: &Context<'_>, extracted: &mut BTreeSet<NodeId>, origin: &mut BTreeMap<NodeId, Reason>) {
    for _ in 0..4 {
        loop {
            let keep: Vec<NodeId> =
                extracted.iter().filter(|x| rules::must_keep(cx, x, extracted, origin)).cloned().collect();
            if keep.is_empty() {
                break;
            }
            for x in keep {
                extracted.remove(&x);
            }
        }
        let named: Vec<(NodeId, NodeId)> = named_only_by_removed::candidates(cx)
            .filter(|id| !extracted.contains(*id) && !origin.contains_key(*id))
            .filter_map(|id| named_only_by_removed::first_namer(cx, id, extracted).map(|by| (id.clone(), by)))
            .collect();
        let orphaned: Vec<(NodeId, Reason)> = cx
            .p2p_hits
            .keys()
            .filter(|id| !extracted.contains(**id) && !origin.contains_key(**id))
            .filter_map(|id| {
                called_only_with_feature::deleted_with_callee(cx, id, extracted).map(|with| (id.to_string(), with))
            })
            .map(|(id, with)| (id, Reason::CalledOnlyWithFeature { with }))
            .collect();
        if named.is_empty() && orphaned.is_empty() {
            break;
        }
        let named = named.into_iter().map(|(id, by)| (id, Reason::NamedOnlyByFeature { by }));
        for (id, reason) in named.chain(orphaned) {
            origin.insert(id.clone(), reason);
            extract_with_nested(cx, id, extracted);
        }
    }
}
