//! Many repositories to a dataset: `carve dataset run | merge | slurm | export`.
//!
//! A [`manifest`] lists repositories (`owner/name`, a git URL or a local path, a commit, and
//! optional per-repository overrides). [`run`] takes each repository of a slice of it through
//! the single-feature pipeline of `carve-pipeline` — check out the commit ([`source`]), set up
//! its environment, baseline, trace once, try every candidate feature (or a cap), validate,
//! write bundles, check each bundle again ([`repo`]) — into an output folder whose
//! [`layout`] is content-addressed by repository and commit:
//!
//! ```text
//! <out>/manifest.json                         the manifest the folder was made from
//! <out>/repos/<owner>+<name>/<commit>/        one finished repository (renamed into place whole)
//!     result.json  stats.json  tasks/<instance_id>/…
//! <out>/work/<owner>+<name>@<commit>/         a repository being worked on (checkout, caches,
//!                                             bundles, per-candidate markers), kept across a kill
//! <out>/slices/<slice>.json                   what one --index/--shard run did
//! <out>/tasks.jsonl  summary.json  summary.html   the merged dataset (`carve dataset merge`)
//! ```
//!
//! A run that is killed resumes where it stopped: finished repositories are never redone, a
//! repository in progress keeps its baseline and trace (the pipeline's caches) and every
//! candidate whose marker was written; half-written files are only ever temporary names. A
//! [`lock`] on the folder refuses a second run. A repository that cannot be checked out, set
//! up or traced is recorded as failed with its stage and reason, and the run goes on; a full
//! disk stops the run with an error naming the repository, keeping what is finished.
//!
//! [`merge`] assembles the results of every slice into `tasks.jsonl` and the [`summary`]
//! (JSON and a self-contained HTML page); [`slurm`] writes the job-array script; [`export`]
//! writes SWE-bench, FeatureBench and Harbor layouts and checks each by running its own
//! evaluation script with the gold patch and with an empty one.
//!
//! Like the pipeline, this crate names no language: language-specific facts come from
//! `carve-languages` through its registry.

mod chunks;
mod cpu;
mod error;
pub mod export;
pub mod layout;
pub mod lock;
pub mod manifest;
pub mod merge;
pub mod progress;
mod recheck;
pub mod repo;
pub mod run;
pub mod slurm;
pub mod source;
pub mod summary;
mod summary_charts;
pub mod summary_html;

pub use error::{Error, Result};
