//! The candidate loop of one repository, resumable: candidates go through the pipeline's
//! candidate loop a few at a time (as many as run at once), and each group's outcome is
//! written to `chunks/<n>.json` in the repository's work folder once its bundles are written.
//! A resumed run skips every group with a marker for the same candidates, so no finished
//! candidate is tried twice.

use carve_formats::dataset::{RejectedRow, TaskRow};
use carve_pipeline::Session;
use carve_pipeline::baseline::Baseline;
use carve_pipeline::candidates::{CandidateOptions, Tasks, run_candidates};
use carve_pipeline::classify::Candidate;
use carve_pipeline::trace::TraceRun;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

use crate::Result;
use crate::layout::write_atomic;

const MARKER_VERSION: u32 = 1;

/// `chunks/<n>.json`: one group of candidates, done.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Marker {
    version: u32,
    /// Digest of each candidate's F2P tests, in order: the group this marker answers.
    candidates: Vec<String>,
    emitted: Vec<TaskRow>,
    rejected: Vec<RejectedRow>,
}

/// What the candidates of a repository gave.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Every emitted task (its bundle is `<session out>/<instance_id>/`), in candidate order.
    pub emitted: Vec<TaskRow>,
    pub rejected: Vec<RejectedRow>,
}

fn candidate_digest(cand: &BTreeSet<String>) -> String {
    crate::manifest::digest_of(cand)
}

/// Largest first by the definitions each would extract (a stable sort: ties keep their
/// order), as `carve tasks --candidates K` ranks them; classification runs no test.
pub fn ranked(session: &Session, b: &Baseline, t: &TraceRun, candidates: Vec<Candidate>) -> Vec<Candidate> {
    let graph = carve_tracer::graph::ObjectGraph::build(&session.index, &t.trace);
    let ranked = carve_pipeline::candidates::rank(session, b, t, &graph, candidates, &CandidateOptions::default());
    ranked.into_iter().map(|(c, _)| c).collect()
}

/// Run `candidates` through the candidate loop, `group` at a time, resuming from the markers
/// in `dir`; `progress(done, total)` after each group.
pub fn run(
    session: &Session,
    b: &Baseline,
    t: &TraceRun,
    candidates: &[Candidate],
    opts: &CandidateOptions,
    dir: &Path,
    mut progress: impl FnMut(usize, usize),
) -> Result<Outcome> {
    let group = session.jobs.max(1);
    let mut out = Outcome::default();
    let total = candidates.len();
    for (n, chunk) in candidates.chunks(group).enumerate() {
        let digests: Vec<String> = chunk.iter().map(|c| candidate_digest(&c.tests)).collect();
        let path = dir.join(format!("{n}.json"));
        let marker = match read_marker(&path).filter(|m| m.candidates == digests) {
            Some(m) => m,
            None => {
                let Tasks { emitted, rejected, .. } = run_candidates(session, b, t, chunk.to_vec(), opts);
                let emitted = emitted
                    .iter()
                    .map(|(id, inst)| {
                        let mut row = TaskRow::new(id.clone(), inst.level, String::new());
                        (row.lines, row.files, row.functions) = (inst.lines, inst.files, inst.functions);
                        row
                    })
                    .collect();
                let rejected = rejected.into_iter().map(|r| RejectedRow::new(r.feature, r.level, r.reason)).collect();
                let m = Marker { version: MARKER_VERSION, candidates: digests, emitted, rejected };
                write_atomic(&path, &carve_formats::to_pretty(&m))?;
                m
            }
        };
        out.emitted.extend(marker.emitted);
        out.rejected.extend(marker.rejected);
        progress(((n + 1) * group).min(total), total);
    }
    Ok(out)
}

fn read_marker(path: &Path) -> Option<Marker> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str::<Marker>(&text).ok().filter(|m| m.version == MARKER_VERSION)
}
