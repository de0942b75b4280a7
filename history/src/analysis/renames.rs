//! Renames: a definition a commit removed paired with one it added, of the same kind and
//! with similar text.

use std::sync::Arc;

use super::{DefFact, Rename};

pub(super) type Sided = Vec<(String, DefFact, Arc<Vec<u8>>)>;

/// Pair removed and added definitions into renames: same kind, text equal apart from the
/// name, or similar (normalised Levenshtein ≥ 0.8 on texts of comparable length).
pub(super) fn pair_renames(added: Sided, removed: Sided) -> (Vec<Rename>, Sided, Sided) {
    const THRESHOLD: f64 = 0.8;
    const MAX_PAIRS: usize = 4000;
    let text = |d: &DefFact, src: &[u8]| -> String {
        let t = std::str::from_utf8(&src[d.start_byte..d.end_byte]).unwrap_or("");
        t.replace(d.name.as_str(), "\u{0}")
    };
    let mut renames = Vec::new();
    let mut used_added = vec![false; added.len()];
    let mut used_removed = vec![false; removed.len()];
    if !added.is_empty() && !removed.is_empty() {
        let at: Vec<String> = added.iter().map(|(_, d, s)| text(d, s)).collect();
        let rt: Vec<String> = removed.iter().map(|(_, d, s)| text(d, s)).collect();
        let exhaustive = added.len() * removed.len() <= MAX_PAIRS;
        for (ri, (_, rd, _)) in removed.iter().enumerate() {
            let mut best: Option<(usize, f64)> = None;
            for (ai, (_, ad, _)) in added.iter().enumerate() {
                if used_added[ai] || ad.kind != rd.kind || ad.is_test != rd.is_test {
                    continue;
                }
                let sim = if at[ai] == rt[ri] {
                    1.0
                } else if exhaustive {
                    let (a, b) = (at[ai].len(), rt[ri].len());
                    if a.min(b) * 2 < a.max(b) || a.max(b) > 20_000 {
                        continue;
                    }
                    strsim::normalized_levenshtein(&at[ai], &rt[ri])
                } else {
                    continue;
                };
                if sim >= THRESHOLD && best.is_none_or(|(_, s)| sim > s) {
                    best = Some((ai, sim));
                }
            }
            if let Some((ai, sim)) = best {
                used_added[ai] = true;
                used_removed[ri] = true;
                renames.push(Rename {
                    from: rd.id.clone(),
                    to: added[ai].1.id.clone(),
                    similarity: (sim * 1000.0).round() / 1000.0,
                });
            }
        }
    }
    let added_left = added.into_iter().zip(used_added).filter(|(_, u)| !u).map(|(a, _)| a).collect();
    let removed_left = removed.into_iter().zip(used_removed).filter(|(_, u)| !u).map(|(r, _)| r).collect();
    (renames, added_left, removed_left)
}
