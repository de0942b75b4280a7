//! `carve validate BUNDLE --repo REPO`: re-run the validation of a task bundle.

use anyhow::Result;
use std::path::Path;

use crate::Status;
use crate::cli::Format;
use crate::output::emit;
use carve_pipeline::image_runs::Runtime;
use carve_pipeline::validate::validate_bundle;

pub fn run(
    bundle: &Path,
    repo: &Path,
    format: Format,
    python: Option<&Path>,
    out: Option<&Path>,
    runtime: Runtime,
) -> Result<Status> {
    let v = validate_bundle(bundle, repo, python, out, runtime)?;
    emit(format, &v, || {
        let mut s = String::new();
        for st in &v.states {
            s.push_str(&format!("{:<18} {}  ({})\n", st.state, if st.ok { "ok" } else { "FAILED" }, st.expect));
            for p in &st.problems {
                s.push_str(&format!("    {p}\n"));
            }
        }
        // A leak invalidates the task as a failed state does: say so, with what leaked.
        if let Some(l) = v.leakage.as_ref().filter(|l| !l.ok) {
            s.push_str(&format!("{:<18} FAILED  (no copy of the gold code in the workspace)\n", "leakage"));
            for p in &l.problems {
                s.push_str(&format!("    {p}\n"));
            }
        }
        s.push_str(if v.valid { "valid\n" } else { "invalid\n" });
        s
    })?;
    Ok(if v.valid { Status::Success } else { Status::ValidationFailed })
}
