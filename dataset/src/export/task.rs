//! One task of a dataset as the exports see it: its `instance.json`, its bundle folder, and the
//! commands that run its tests, from the environment `carve env` recorded for it (its test
//! command) through the language's `eval_command` hook.

use carve_formats::dataset::RepoStatus;
use carve_formats::instance::Instance;
use carve_languages::runner::TestCommand;
use std::path::PathBuf;

use super::Skipped;
use crate::Result;
use crate::layout::Layout;

/// A validated task of the dataset, ready to export.
#[derive(Debug, Clone)]
pub struct Task {
    pub instance: Instance,
    /// `repos/<owner>+<name>/<commit>/tasks/<instance_id>`.
    pub bundle: PathBuf,
    /// The manifest entry of its repository.
    pub entry: carve_formats::dataset::ManifestEntry,
    /// The recorded test command (its interpreter a template of the environment's folder).
    pub test: TestCommand,
    /// Runs every F2P and P2P test.
    pub eval_all: String,
    /// The runner's command with no test named (FeatureBench's `test_cmd`).
    pub eval_base: String,
}

impl Task {
    pub fn id(&self) -> &str {
        &self.instance.instance_id
    }

    /// The F2P ids followed by the P2P ids.
    pub fn all_tests(&self) -> Vec<String> {
        self.instance.fail_to_pass.iter().chain(&self.instance.pass_to_pass).cloned().collect()
    }

    /// The bundle's file `name`, or empty when it has none.
    pub fn bundle_file(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.bundle.join(name)).unwrap_or_default()
    }

    /// The image the task's environment builds (`image_name`), or a name derived from the id.
    pub fn image(&self) -> String {
        self.instance.image_name.clone().unwrap_or_else(|| format!("carve-task/{}", self.id().to_lowercase()))
    }

    /// The Dockerfile of an exported task: the environment's image (built from the bundle's
    /// `Dockerfile` with the repository at `base_commit`) with the masked repository at
    /// `/testbed`, a git repository of one commit, as the harnesses apply patches there.
    /// Build context: the folder holding it and `mask.patch`.
    pub fn dockerfile(&self) -> String {
        format!(
            "# The task {id}: its environment's image with the masked repository at /testbed.\n\
             # Build the base image first from the task bundle's Dockerfile (carve dataset run), with the\n\
             # repository {repo} at {commit} as its context; build this one with this folder as context.\n\
             FROM {image}\n\
             RUN command -v git >/dev/null || (apt-get update && apt-get install -y --no-install-recommends git && rm -rf /var/lib/apt/lists/*)\n\
             COPY mask.patch /tmp/carve-mask.patch\n\
             RUN cp -a /work/repo /testbed && cd /testbed && rm -rf .git && git apply --whitespace=nowarn /tmp/carve-mask.patch \\\n    \
             && git init -q && git add -A && git -c user.name=carve -c user.email=carve@localhost commit -q -m 'masked state' \\\n    \
             && rm /tmp/carve-mask.patch\n\
             WORKDIR /testbed\n",
            id = self.id(),
            repo = self.instance.repo,
            commit = self.instance.base_commit,
            image = self.image(),
        )
    }
}

/// Every validated task of the folder, sorted by instance id, and those that cannot be
/// exported with the reason.
pub fn load_all(layout: &Layout) -> Result<(Vec<Task>, Vec<Skipped>)> {
    let mut tasks = Vec::new();
    let mut skipped = Vec::new();
    for row in crate::merge::rows(layout)? {
        let Some(result) = &row.result else { continue };
        if result.status != RepoStatus::Done {
            continue;
        }
        for t in &result.tasks {
            let bundle = layout.repo(&row.entry).join("tasks").join(&t.instance_id);
            let instance: Instance = carve_formats::read(&bundle.join("instance.json"))?;
            match commands(&instance) {
                Ok((test, eval_all, eval_base)) => {
                    tasks.push(Task { instance, bundle, entry: row.entry.clone(), test, eval_all, eval_base })
                }
                Err(reason) => skipped.push(Skipped { instance_id: t.instance_id.clone(), reason }),
            }
        }
    }
    tasks.sort_by(|a, b| a.id().cmp(b.id()));
    Ok((tasks, skipped))
}

/// The recorded test command of the task's environment and its evaluation commands.
fn commands(instance: &Instance) -> std::result::Result<(TestCommand, String, String), String> {
    let record = environment(instance)?.1;
    let ids: Vec<String> = instance.fail_to_pass.iter().chain(&instance.pass_to_pass).cloned().collect();
    let none =
        || format!("the {} runner of its environment cannot name its tests on one command line", record.language);
    let all = carve_languages::eval_command(&record.test, &ids).ok_or_else(none)?;
    let base = carve_languages::eval_command(&record.test, &[]).ok_or_else(none)?;
    // The project's build first: the tests load what it makes from the (patched) sources.
    let built = |cmd: String| match &record.activation.build {
        b if b.is_empty() => cmd,
        b => format!("{} && {cmd}", carve_languages::env::shell::join(b)),
    };
    Ok((record.test, built(all), built(base)))
}

/// The environment `carve env` recorded for the task (found in the environment store by its
/// key) and its folder.
pub fn environment(
    instance: &Instance,
) -> std::result::Result<(PathBuf, carve_pipeline::env::record::Environment), String> {
    use carve_pipeline::env::record::{ENVIRONMENT_FILE, Environment};
    let Some(env) = &instance.carve.environment else {
        return Err("it was made without an environment (`carve env`), so nothing says how its tests run".into());
    };
    let root = carve_pipeline::env::store::root().map_err(|e| e.to_string())?;
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .map_err(|e| format!("cannot read the environment store {}: {e}", root.display()))?
        .flatten()
        .map(|e| e.path().join(&env.key))
        .filter(|d| d.join(ENVIRONMENT_FILE).is_file())
        .collect();
    dirs.sort();
    let dir = dirs.into_iter().next().ok_or_else(|| {
        format!(
            "its environment {} is not in the environment store {} (run `carve dataset run` again on this machine, or set CARVE_ENV_DIR)",
            env.key,
            root.display()
        )
    })?;
    let record = Environment::read(&dir.join(ENVIRONMENT_FILE)).map_err(|e| e.to_string())?;
    Ok((dir, record))
}
