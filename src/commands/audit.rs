//! `carve audit`: classify what carving a feature would extract and what must remain.

use anyhow::Result;
use carve_tracer::classify::Status as NodeStatus;

use crate::Status;
use crate::cli::{Common, EdgeMode, ProtectArgs};
use crate::output::emit;
use carve_core::fs::write_atomic;
use carve_pipeline::classify::{Feature, audit_report, feature_for};
use carve_pipeline::emit::pretty;

pub fn run(
    common: &Common,
    f2p: &[String],
    edges: EdgeMode,
    entry_filter: Option<&str>,
    protect: &ProtectArgs,
) -> Result<Status> {
    let session = super::open(common)?;
    let mode = super::trace_mode(edges);
    let (baseline, _, feature) = feature_for(&session, f2p, mode, entry_filter, protect.protect, protect.budget())?;
    let report = audit_report(&feature);
    write_atomic(&session.out.join(format!("audit-{}.json", feature.slug)), &pretty(&report))?;
    if common.format == crate::cli::Format::Html {
        return super::eval::audit_html(&session, &baseline, &feature, &report);
    }
    emit(common.format, &report, || text(&feature))?;
    Ok(Status::Success)
}

fn text(feature: &Feature) -> String {
    let c = &feature.classification;
    let mut s = format!(
        "feature {}: {} F2P tests, {} P2P tests, {} unprotected (--protect {})\n",
        feature.slug,
        feature.f2p.len(),
        feature.p2p.len(),
        feature.unprotected.len(),
        feature.protection
    );
    s.push_str(&format!("entry points: {}\n", c.entry_points.join(", ")));
    for (title, extracted) in [("extracted", true), ("remained", false)] {
        let rows: Vec<_> = c.nodes.iter().filter(|(_, d)| (d.status == NodeStatus::Extracted) == extracted).collect();
        s.push_str(&format!("{title} ({}):\n", rows.len()));
        for (id, d) in rows {
            let reasons: Vec<String> = d.reasons.iter().map(|r| r.to_string()).collect();
            s.push_str(&format!("  {id}\n      {}\n", reasons.join("; ")));
        }
    }
    s
}
