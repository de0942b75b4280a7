//! Grading solution patches on Level 1/2 task bundles (`carve grade`).
//!
//! Per instance, in a scratch folder: a shadow copy of the repository the bundle was made
//! from (checked against the bundle's `tree_digest`), `mask.patch` applied (in bundles
//! of earlier versions, the F2P test patch taken out in reverse too) — the masked state, as `carve validate` rebuilds it; then the
//! solution patch (`git apply`; refused when it touches a file of `test.patch`, the hidden
//! tests); then `test.patch`; then the F2P and P2P tests through the project's runner.
//! `resolved` = every F2P and P2P test passes; `passed_rate` = share of F2P tests passing.

use carve_formats::instance::Instance;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::Error;
use crate::progress::Progress;
use crate::results::{GradeRun, GradedInstance};
use crate::test_run;
use carve_core::{patch, tree};
use carve_languages::skip_policy;
use carve_pipeline::runs::TestRuns;

pub const GRADE_FILE: &str = "grade.json";

/// What a task bundle holds that grading needs.
#[derive(Debug, Clone)]
pub struct TaskBundle {
    pub dir: PathBuf,
    pub instance_id: String,
    pub level: u8,
    pub f2p: Vec<String>,
    pub p2p: Vec<String>,
    pub mask_patch: String,
    pub test_patch: String,
    /// Original F2P tests → masked state (taken out in reverse); empty when mask.patch
    /// removes the F2P tests itself (`carve.mask_removes_f2p_tests`).
    pub f2p_tests_patch: String,
    pub tree_digest: Option<String>,
}

impl TaskBundle {
    pub fn read(dir: &Path) -> Result<TaskBundle, Error> {
        let path = dir.join("instance.json");
        let text = std::fs::read_to_string(&path).map_err(|e| {
            Error::Usage(format!("{} is not a task bundle (no readable instance.json: {e})", dir.display()))
        })?;
        let inst: Instance = carve_formats::from_str(&text, &path)?;
        let read = |name: &str| {
            std::fs::read_to_string(dir.join(name))
                .map_err(|e| Error::Usage(format!("bundle {} lacks {name}: {e}", dir.display())))
        };
        let test_patch = read("test.patch")?;
        let carve = &inst.carve;
        Ok(TaskBundle {
            dir: dir.to_path_buf(),
            level: inst.level,
            f2p: inst.fail_to_pass.clone(),
            p2p: inst.pass_to_pass.clone(),
            mask_patch: read("mask.patch")?,
            f2p_tests_patch: if carve.mask_removes_f2p_tests {
                String::new()
            } else {
                carve.f2p_tests_patch.clone().unwrap_or_else(|| test_patch.clone())
            },
            test_patch,
            tree_digest: Some(carve.tree_digest.clone()),
            instance_id: inst.instance_id,
        })
    }

    /// The hidden test files: every path `test.patch` touches.
    pub fn hidden_files(&self) -> Vec<String> {
        patch::patch_paths(&self.test_patch)
    }
}

/// One solution to grade.
#[derive(Debug, Clone)]
pub struct Submission {
    pub instance_id: String,
    pub model: String,
    pub patch: String,
}

/// A line of a SWE-bench predictions file.
#[derive(Debug, Deserialize)]
struct Prediction {
    instance_id: String,
    #[serde(default)]
    model_patch: Option<String>,
    #[serde(default)]
    model_name_or_path: Option<String>,
}

/// Read a predictions file (JSON lines, or one JSON list); `model` names predictions
/// without `model_name_or_path`.
pub fn read_predictions(path: &Path, model: &str) -> Result<Vec<Submission>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
    let preds: Vec<Prediction> = if text.trim_start().starts_with('[') {
        serde_json::from_str(&text).map_err(|e| Error::Format { path: path.to_path_buf(), detail: e.to_string() })?
    } else {
        let mut v = Vec::new();
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            v.push(serde_json::from_str(line).map_err(|e| Error::Format {
                path: path.to_path_buf(),
                detail: format!("line {}: {e} (expected `instance_id` and `model_patch`)", n + 1),
            })?);
        }
        v
    };
    Ok(preds
        .into_iter()
        .map(|p| Submission {
            instance_id: p.instance_id,
            model: p.model_name_or_path.unwrap_or_else(|| model.to_string()),
            patch: p.model_patch.unwrap_or_default(),
        })
        .collect())
}

pub struct GradeOptions {
    /// The repository the bundles were made from.
    pub repo: PathBuf,
    /// carve.toml to use (default: `<repo>/carve.toml`, else detected).
    pub config: Option<PathBuf>,
    pub jobs: usize,
    /// Scratch folder (removed per instance when done).
    pub work: PathBuf,
    /// The environment `carve env` made for the repository, when there is one.
    pub environment: Option<carve_pipeline::runs::RunEnvironment>,
    /// `--runtime oci`: the tests run inside this image (its own environment, not the one above).
    pub image: Option<std::sync::Arc<carve_pipeline::image_runs::ImageRuntime>>,
}

/// Find the bundle of `id`: `bundles` is one bundle or a folder of bundles.
pub fn locate(bundles: &Path, id: &str) -> Result<PathBuf, Error> {
    if bundles.join("instance.json").is_file() {
        let b = TaskBundle::read(bundles)?;
        if b.instance_id == id {
            return Ok(bundles.to_path_buf());
        }
        return Err(Error::Usage(format!("bundle {} is {}, not {id}", bundles.display(), b.instance_id)));
    }
    let dir = bundles.join(id);
    if dir.join("instance.json").is_file() {
        Ok(dir)
    } else {
        Err(Error::Usage(format!("no bundle {id} in {}", bundles.display())))
    }
}

/// Grade every submission, `opts.jobs` at a time; results in submission order.
pub fn grade_all(
    pairs: Vec<(TaskBundle, Submission)>,
    opts: &GradeOptions,
    progress: &Progress,
) -> Result<GradeRun, Error> {
    let mut runs = TestRuns::of(&test_run::config(&opts.repo, opts.config.as_deref())?);
    let repo_digest = tree::tree_digest(&opts.repo, skip_policy())?;
    if let Some(env) = &opts.environment {
        runs.use_environment(env.clone());
    }
    runs.image = opts.image.clone();
    let next = AtomicUsize::new(0);
    let out: Mutex<BTreeMap<usize, GradedInstance>> = Mutex::new(BTreeMap::new());
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.max(1).min(pairs.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some((bundle, sub)) = pairs.get(i) else { break };
                    progress.message(sub.instance_id.clone());
                    let work = opts.work.join(format!("{i}-{}", sub.instance_id));
                    let g = grade_one(bundle, sub, &runs, &opts.repo, &repo_digest, &work);
                    let _ = std::fs::remove_dir_all(&work);
                    progress.inc();
                    out.lock().unwrap_or_else(|p| p.into_inner()).insert(i, g);
                }
            });
        }
    });
    let instances = out.into_inner().unwrap_or_else(|p| p.into_inner()).into_values().collect();
    Ok(GradeRun::new(instances))
}

/// Grade one solution (never fails: what went wrong is in the result).
pub fn grade_one(
    bundle: &TaskBundle,
    sub: &Submission,
    runs: &TestRuns,
    repo: &Path,
    repo_digest: &str,
    work: &Path,
) -> GradedInstance {
    let mut g =
        GradedInstance::new(bundle.instance_id.clone(), bundle.level, sub.model.clone(), &bundle.f2p, &bundle.p2p);
    let hidden = bundle.hidden_files();
    let touched: Vec<String> = patch::patch_paths(&sub.patch).into_iter().filter(|p| hidden.contains(p)).collect();
    if !touched.is_empty() {
        g.patch_problem = Some(format!(
            "refused: the patch touches hidden test files of the task ({}); a solution may not change the tests it is graded by",
            touched.join(", ")
        ));
        return g;
    }
    if let Some(d) = &bundle.tree_digest {
        if d != repo_digest {
            g.error = Some(format!(
                "the repository {} is not the tree bundle {} was made from (tree digest {} vs {}); pass --repo with that tree",
                repo.display(),
                bundle.dir.display(),
                &repo_digest[..12.min(repo_digest.len())],
                &d[..12.min(d.len())]
            ));
            return g;
        }
    }
    let tree_dir = work.join("tree");
    let scratch = work.join("patches").join(format!("apply-{}.patch", std::process::id()));
    let apply = |patch: &str, reverse: bool| patch::apply_patch(&tree_dir, patch, reverse, &scratch);
    let setup = || -> Result<(), String> {
        tree::shadow_copy(repo, &tree_dir, skip_policy()).map_err(|e| e.to_string())?;
        apply(&bundle.mask_patch, false)
            .map_err(|e| format!("mask.patch of {} does not apply: {}", bundle.dir.display(), e.git_message()))?;
        if bundle.f2p_tests_patch.is_empty() {
            return Ok(());
        }
        apply(&bundle.f2p_tests_patch, true).map_err(|e| {
            format!("the F2P test patch of {} does not apply in reverse: {}", bundle.dir.display(), e.git_message())
        })
    };
    if let Err(e) = setup() {
        g.error = Some(e);
        return g;
    }
    if let Err(e) = apply(&sub.patch, false) {
        let e = e.git_message();
        g.patch_problem = Some(format!("the patch does not apply to the task's workspace (git apply): {e}"));
        return g;
    }
    g.applied = true;
    if let Err(e) = apply(&bundle.test_patch, false) {
        g.error = Some(format!("test.patch does not apply after the solution: {}", e.git_message()));
        return g;
    }
    let tests: Vec<String> = bundle.f2p.iter().chain(&bundle.p2p).cloned().collect();
    match test_run::run(runs, &tree_dir, &tests, &work.join("runner")) {
        Err(e) => g.error = Some(e),
        Ok(run) => {
            g.f2p = run.of(&bundle.f2p);
            g.p2p = run.of(&bundle.p2p);
            let passed = g.f2p.values().filter(|s| *s == "passed").count();
            g.passed_rate = if bundle.f2p.is_empty() { 0.0 } else { passed as f64 / bundle.f2p.len() as f64 };
            g.resolved = !bundle.f2p.is_empty() && g.f2p.values().chain(g.p2p.values()).all(|s| s == "passed");
        }
    }
    g
}
