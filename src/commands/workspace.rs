//! `carve workspace BUNDLE --repo REPO --out DIR`: the agent's workspace of a task bundle
//! (the masked state as one fresh commit), with its leakage check.

use anyhow::Result;
use serde_json::json;
use std::path::Path;

use crate::Status;
use crate::cli::Format;
use crate::output::emit;
use carve_pipeline::agent_workspace;
use carve_pipeline::leakage;
use carve_pipeline::validate::{Bundle, bundle_session};

pub fn run(bundle: &Path, repo: &Path, out: &Path, format: Format) -> Result<Status> {
    let bundle = Bundle::read(bundle)?;
    let (session, _scratch) = bundle_session(repo, None, None)?;
    let dest = std::path::absolute(out)?;
    if dest.starts_with(&session.repo) {
        anyhow::bail!(
            "the workspace folder {} is inside the repository {}; carve never writes into the repository: choose --out elsewhere",
            dest.display(),
            session.repo.display()
        );
    }
    let dir = session.scratch("workspace")?;
    let masked = dir.join("masked");
    bundle.rebuild_masked(&session, &masked)?;
    let ws = agent_workspace::write(&masked, &session.repo, &dest)?;
    let check = leakage::check(&dest, &bundle.leakage_inputs(&session))?;
    let _ = std::fs::remove_dir_all(&dir);
    let mut problems = check.problems.clone();
    if let Some(expected) = bundle.workspace_tree().filter(|t| *t != ws.tree) {
        problems.push(format!(
            "tree {} differs from the bundle's {expected}: REPO is not the repository the bundle was made from",
            ws.tree
        ));
    }
    let ok = problems.is_empty();
    let report = json!({"workspace": dest, "commit": ws.commit, "tree": ws.tree, "files": ws.files,
        "left_out": ws.left_out, "leakage": check, "ok": ok, "problems": problems});
    emit(format, &report, || {
        let mut s =
            format!("workspace {} ({} files, commit {}, tree {})\n", dest.display(), ws.files, ws.commit, ws.tree);
        for l in &ws.left_out {
            s.push_str(&format!("  left out {l}\n"));
        }
        for p in &problems {
            s.push_str(&format!("problem: {p}\n"));
        }
        s.push_str(if ok { "no leakage found\n" } else { "LEAKS\n" });
        s
    })?;
    Ok(if ok { Status::Success } else { Status::ValidationFailed })
}
