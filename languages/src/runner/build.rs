//! The project's build before a test run ([`RunRequest::build`]): a project whose tests load
//! files its build makes from the sources (`require('../lib/x')` of what `babel src -d lib`
//! writes) is built in the run's own tree first, so every tree a run uses — the baseline, a
//! traced copy with its probes, a masked state, a restored one — is tested as built from its
//! own sources. It runs in its own process group with the environment the tests get, within
//! the run's time limit; its output goes to the scratch folder. A build that fails ends the
//! run as a collection failure that names the command and shows its output: nothing the
//! tests load could be made (a masked state whose build breaks does not build).

use std::time::{Duration, Instant};

use carve_core::process::{self, Limits, Progress, Stop};

use super::{RunRequest, RunnerError};
use crate::env::shell;

struct Quiet;

impl Progress for Quiet {
    fn poll(&mut self) -> bool {
        false
    }
}

/// Run `req.build` in `req.root` (nothing when it is empty).
pub fn run(req: &RunRequest) -> Result<(), RunnerError> {
    let Some((program, args)) = req.build.split_first() else { return Ok(()) };
    let command = shell::join(&req.build);
    if !req.root.is_dir() {
        return Err(RunnerError::RootNotFound { root: req.root.clone() });
    }
    if req.scratch.starts_with(&req.root) {
        return Err(RunnerError::ScratchInsideRoot { scratch: req.scratch.clone(), root: req.root.clone() });
    }
    std::fs::create_dir_all(&req.scratch).map_err(RunnerError::io("create", &req.scratch))?;
    let mut cmd = std::process::Command::new(program);
    cmd.args(args).current_dir(&req.root);
    for (k, v) in &req.env {
        cmd.env(k, v);
    }
    let (out, err) = (req.scratch.join("carve-build.out"), req.scratch.join("carve-build.err"));
    // A build that makes no output for the run's whole limit is the same as a hung one.
    let limit = req.timeout.max(Duration::from_secs(1));
    let ended = process::supervise(cmd, &out, &err, Limits::new(Instant::now() + limit, limit), &mut Quiet)
        .map_err(|source| RunnerError::Spawn { command: command.clone(), source })?;
    let tail = ended.tail();
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(&err);
    if ended.stop != Stop::Exited {
        return Err(RunnerError::CollectionTimeout {
            runner: "the project's build",
            root: req.root.clone(),
            command,
            after: limit,
            tail,
        });
    }
    if ended.exit_code != Some(0) {
        return Err(RunnerError::Collection {
            runner: "the project's build",
            root: req.root.clone(),
            command,
            exit_code: ended.exit_code,
            hint: "; the tests load what it makes from the sources, so none could run".into(),
            tail,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::TestCommand;

    fn request(root: &std::path::Path, scratch: &std::path::Path, build: &[&str]) -> RunRequest {
        let mut r = RunRequest::new(root, TestCommand::GoTest { args: vec![], packages: None }, scratch);
        r.build = build.iter().map(|s| s.to_string()).collect();
        r.env = vec![("CARVE_BUILD_DEMO".into(), "made".into())];
        r
    }

    #[test]
    fn the_build_runs_in_the_tree_and_a_failure_names_it() {
        let (root, scratch) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        run(&request(root.path(), scratch.path(), &[])).unwrap();
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0, "no build: nothing written");
        let make = ["sh", "-c", "mkdir -p lib && echo $CARVE_BUILD_DEMO > lib/x.js"];
        run(&request(root.path(), scratch.path(), &make)).unwrap();
        assert_eq!(std::fs::read_to_string(root.path().join("lib/x.js")).unwrap(), "made\n");
        let broken = ["sh", "-c", "echo 'src/a.js: SyntaxError' >&2; exit 2"];
        let e = run(&request(root.path(), scratch.path(), &broken)).unwrap_err().to_string();
        assert!(e.contains("the project's build could not collect") && e.contains("exit code 2"), "{e}");
        assert!(e.contains("src/a.js: SyntaxError") && e.contains("sh -c"), "{e}");
    }
}
