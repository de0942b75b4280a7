//! `carve dataset run`: the repositories of one slice of a manifest, one after the other,
//! into the output folder; see the crate documentation for the folder and for resuming.

use carve_formats::dataset::{RepoResult, RepoStatus, SliceRecord, SliceRepo};
use std::path::PathBuf;

use crate::error::{Context, bail};
use crate::layout::{Layout, clear_partials, write_atomic};
use crate::lock::{Lock, Mode};
use crate::manifest::{LoadedManifest, Slice};
use crate::progress::{Position, Reporter};
use crate::repo::{Outcome, RepoJob, RepoOptions};
use crate::{Error, Result};

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub out: PathBuf,
    pub slice: Slice,
    /// Run again the repositories whose result is `failed`.
    pub retry_failed: bool,
    pub repo: RepoOptions,
}

/// What a run did with its slice.
#[derive(Debug)]
pub struct RunReport {
    pub slice: SliceRecord,
    /// Repositories finished by an earlier run, skipped.
    pub skipped: usize,
    /// The results of this slice's repositories, in manifest order.
    pub results: Vec<RepoResult>,
}

/// Run `slice` of the manifest into `opts.out`. Errors are the run's own (a lock, the
/// manifest against the folder, a full disk); a repository's failure is in its result.
pub fn run(manifest: &LoadedManifest, opts: &RunOptions, reporter: &Reporter) -> Result<RunReport> {
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("failed to create the output folder {}", opts.out.display()))?;
    let layout = Layout::new(std::path::absolute(&opts.out)?);
    let slice_name = opts.slice.name();
    let _locks = take_locks(&layout, opts.slice, &slice_name)?;
    check_manifest(&layout, manifest)?;
    check_policy(&layout, &opts.repo)?;
    let entries = manifest.entries();
    let positions = opts.slice.positions(entries.len())?;
    let mut record = SliceRecord::new(slice_name.clone(), manifest.digest());
    let mut results = Vec::new();
    let mut skipped = 0;
    for (n, &pos) in positions.iter().enumerate() {
        let entry = &entries[pos];
        let at = Position { n: n + 1, total: positions.len(), name: entry.name.clone() };
        let finished = layout.finished(entry).filter(|r| !(opts.retry_failed && r.status == RepoStatus::Failed));
        let result = match finished {
            Some(r) => {
                reporter.note(&at, "finished by an earlier run");
                skipped += 1;
                r
            }
            None => {
                let _repo_lock = Lock::try_take(
                    &layout.repo_lock(entry),
                    Mode::Exclusive,
                    &format!("entry {} ({}) of the manifest", pos + 1, entry.name),
                )?;
                clear_partials(&layout.root.join("repos").join(crate::layout::repo_dir_name(&entry.name)));
                let job = RepoJob { entry, layout: &layout, opts: &opts.repo, at: at.clone(), reporter };
                match job.run() {
                    Outcome::Finished(r) => r,
                    Outcome::Stop(e) => return Err(e),
                }
            }
        };
        record.repos.push(SliceRepo::new(entry.name.clone(), entry.commit.clone(), result.status, result.tasks.len()));
        results.push(result);
    }
    write_atomic(&layout.slices().join(format!("{slice_name}.json")), &carve_formats::to_pretty(&record))?;
    Ok(RunReport { slice: record, skipped, results })
}

/// A whole run holds the folder alone; a slice shares it with other slices, and holds its
/// own slice alone.
fn take_locks(layout: &Layout, slice: Slice, name: &str) -> Result<Vec<Lock>> {
    let folder = format!("the output folder {}", layout.root.display());
    Ok(match slice {
        Slice::All => vec![Lock::try_take(&layout.lock(), Mode::Exclusive, &folder)?],
        _ => vec![
            Lock::try_take(&layout.lock(), Mode::Shared, &folder)?,
            Lock::try_take(&layout.slice_lock(name), Mode::Exclusive, &format!("slice {name} of {folder}"))?,
        ],
    })
}

/// The folder's `manifest.json`: written by the first run, the same for every later one (a
/// slice of another manifest would mix two datasets).
/// The folder's tasks were all carved with one protection policy and line budget: the first
/// run records them, a later run with others is refused (its tasks would mix policies).
fn check_policy(layout: &Layout, opts: &RepoOptions) -> Result<()> {
    let path = layout.policy();
    let ours = carve_formats::to_pretty(&serde_json::json!({
        "protect": opts.protection.to_string(),
        "max_lines": opts.max_lines,
    }));
    match std::fs::read(&path) {
        Ok(existing) if existing == ours => Ok(()),
        Ok(existing) => bail!(
            "{} was carved with {} and this run asks for --protect {} --max-lines {}: use another --out, or the same options",
            layout.root.display(),
            String::from_utf8_lossy(&existing).split_whitespace().collect::<Vec<_>>().join(" "),
            opts.protection,
            opts.max_lines.unwrap_or(0)
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => write_atomic(&path, &ours),
        Err(e) => Err(Error::from(e)).context(format!("failed to read {}", path.display())),
    }
}

fn check_manifest(layout: &Layout, manifest: &LoadedManifest) -> Result<()> {
    let path = layout.manifest();
    let ours = carve_formats::to_pretty(&manifest.manifest);
    match std::fs::read(&path) {
        Ok(existing) if existing == ours => Ok(()),
        Ok(existing) => {
            let theirs =
                crate::manifest::digest_of(&serde_json::from_slice::<serde_json::Value>(&existing).unwrap_or_default());
            bail!(
                "{} was made from another manifest than {} (digests {} and {}): use another --out, or delete {} to make this folder this manifest's (results of repositories in both are kept and reused)",
                layout.root.display(),
                manifest.path.display(),
                &theirs[..12],
                &manifest.digest()[..12],
                path.display()
            )
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => write_atomic(&path, &ours),
        Err(e) => Err(Error::from(e)).context(format!("failed to read {}", path.display())),
    }
}
