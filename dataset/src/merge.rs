//! `carve dataset merge`: the dataset of an output folder, from every repository result the
//! slices wrote: `tasks.jsonl` (every re-checked task's `instance.json`, one per line, sorted
//! by instance id), `summary.json` and `summary.html`. It holds the folder alone, so it
//! refuses to run while a slice still works on it.

use carve_formats::dataset::{Manifest, RepoResult, RepoStats, RepoStatus, Summary};
use carve_formats::instance::Instance;
use std::path::Path;

use crate::error::{Context, bail};
use crate::layout::{Layout, write_atomic};
use crate::lock::{Lock, Mode};
use crate::{Error, Result};

/// One repository of the manifest with what the folder holds for it.
#[derive(Debug, Clone)]
pub struct Row {
    pub entry: carve_formats::dataset::ManifestEntry,
    pub result: Option<RepoResult>,
    pub stats: Option<RepoStats>,
}

/// What a merge wrote.
#[derive(Debug)]
pub struct Merged {
    pub summary: Summary,
    pub tasks: usize,
    /// Repositories of the manifest with no result yet.
    pub pending: Vec<String>,
}

/// The manifest an output folder was made from.
pub fn folder_manifest(layout: &Layout) -> Result<Manifest> {
    let path = layout.manifest();
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "{} holds no dataset (no manifest.json): run `carve dataset run MANIFEST --out DIR` first",
            layout.root.display()
        )
    })?;
    serde_json::from_str(&text).with_context(|| format!("{} is not a manifest carve wrote", path.display()))
}

/// Every entry of the folder's manifest with its result and stats, in manifest order.
pub fn rows(layout: &Layout) -> Result<Vec<Row>> {
    let manifest = folder_manifest(layout)?;
    Ok(manifest
        .repo
        .into_iter()
        .map(|entry| {
            let result = layout.finished(&entry);
            let stats = result.as_ref().and_then(|_| carve_formats::read(&layout.repo(&entry).join("stats.json")).ok());
            Row { entry, result, stats }
        })
        .collect())
}

/// Merge the folder `out` (see the module documentation).
pub fn merge(out: &Path) -> Result<Merged> {
    let layout = Layout::new(std::path::absolute(out)?);
    let _lock =
        Lock::try_take(&layout.lock(), Mode::Exclusive, &format!("the output folder {}", layout.root.display()))?;
    let rows = rows(&layout)?;
    let mut lines: Vec<(String, String)> = Vec::new();
    for row in &rows {
        let Some(r) = &row.result else { continue };
        for t in &r.tasks {
            let path = layout.repo(&row.entry).join("tasks").join(&t.instance_id).join("instance.json");
            let inst: Instance = carve_formats::read(&path)?;
            if inst.instance_id != t.instance_id {
                bail!("{} holds instance {}, its result lists {}", path.display(), inst.instance_id, t.instance_id);
            }
            lines.push((t.instance_id.clone(), serde_json::to_string(&inst).map_err(Error::from)?));
        }
    }
    lines.sort();
    let mut jsonl = String::new();
    for (_, line) in &lines {
        jsonl.push_str(line);
        jsonl.push('\n');
    }
    write_atomic(&layout.tasks_jsonl(), jsonl.as_bytes())?;
    let digest = crate::manifest::digest_of(&folder_manifest(&layout)?);
    let summary = crate::summary::summarize(&rows, digest);
    write_atomic(&layout.summary_json(), &carve_formats::to_pretty(&summary))?;
    write_atomic(&layout.summary_html(), crate::summary_html::page(&summary)?.as_bytes())?;
    let pending = rows.iter().filter(|r| r.result.is_none()).map(|r| r.entry.name.clone()).collect();
    Ok(Merged { tasks: lines.len(), summary, pending })
}

/// The summary of the folder `out` as it is now, without writing anything.
pub fn summary(out: &Path) -> Result<Summary> {
    let layout = Layout::new(std::path::absolute(out)?);
    let rows = rows(&layout)?;
    Ok(crate::summary::summarize(&rows, crate::manifest::digest_of(&folder_manifest(&layout)?)))
}

/// Whether every repository of the folder's manifest is done (none failed or pending).
pub fn all_done(rows: &[Row]) -> bool {
    rows.iter().all(|r| r.result.as_ref().is_some_and(|r| r.status == RepoStatus::Done))
}
