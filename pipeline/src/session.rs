//! The session: everything a stage needs about the repository it works on (its index,
//! configuration, identity, output folder and progress), and the resolution of `--f2p`
//! arguments to test ids.

use crate::error::bail;
use crate::{Context, Result};
use carve_languages::DefinitionIndex;
use carve_languages::index::IndexOptions;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::progress::Progress;
use crate::workspace::{self, RepoIdentity};

pub type TestId = String;

/// Everything a command needs about the repository it works on.
pub struct Session {
    pub repo: PathBuf,
    pub out: PathBuf,
    pub config: Config,
    pub index: DefinitionIndex,
    pub tree_digest: String,
    pub identity: RepoIdentity,
    pub progress: Progress,
    /// Test runs that may run at once ([`Session::both`]); at least 1.
    pub jobs: usize,
    /// The environment `carve env` made for this repository and its install inputs, used by
    /// every test run (see [`crate::env`]); `None` when there is none or `--python` chose the
    /// interpreter.
    pub environment: Option<crate::env::ActiveEnv>,
    /// `--runtime oci`: every test run happens inside this image instead of on this machine
    /// (see [`crate::image_runs`]); `None`: locally.
    pub image: Option<std::sync::Arc<crate::image_runs::ImageRuntime>>,
}

pub struct SessionOptions<'a> {
    pub repo: &'a Path,
    pub out: Option<&'a Path>,
    pub config: Option<&'a Path>,
    pub python: Option<&'a Path>,
    pub timeout: Option<u64>,
    pub test_timeout: Option<u64>,
    /// `--jobs`: test runs at once (`None`: [`default_jobs`]).
    pub jobs: Option<usize>,
    /// `--repo-name owner/name`, checked: overrides the identity detected from the remote.
    pub repo_name: Option<(String, String)>,
}

impl Session {
    pub fn open(opts: SessionOptions<'_>) -> Result<Session> {
        let repo = workspace::repo_dir(opts.repo)?;
        let out = workspace::out_dir(&repo, opts.out)?;
        let (mut config, config_source) = crate::config::load(&repo, &out, opts.config)?;
        if config_source == "detected" {
            // `--python` overrides what detection found for the interpreter: no line about that.
            for line in config.detected.iter().filter(|l| opts.python.is_none() || !l.starts_with("python = ")) {
                progress_note_detected(line);
            }
        }
        if let Some(p) = opts.python {
            config.set_python(p)?;
        }
        if let Some(t) = opts.timeout {
            config.timeouts.run = t;
        }
        if let Some(t) = opts.test_timeout {
            config.timeouts.test = t;
        }
        let progress = Progress::spinner();
        progress.step("indexing");
        let index = DefinitionIndex::build(
            &repo,
            &IndexOptions { include: config.include.clone(), exclude: config.exclude.clone() },
        )
        .with_context(|| format!("failed to index {}", repo.display()))?;
        for skipped in &index.skipped {
            progress.note(format!("warning: skipped {}: {}", skipped.path, skipped.reason));
        }
        progress.step("hashing the tree");
        let tree_digest = carve_core::tree::tree_digest(&repo, carve_languages::skip_policy())?;
        let identity = RepoIdentity::detect(&repo, &tree_digest, opts.repo_name.as_ref());
        let jobs = opts.jobs.unwrap_or_else(default_jobs).max(1);
        let mut session =
            Session { repo, out, config, index, tree_digest, identity, progress, jobs, environment: None, image: None };
        if opts.python.is_none() {
            session.use_recorded_environment();
        }
        Ok(session)
    }

    /// Hold the output folder for this process: a second `carve` run writing into the same
    /// `--out` (its work folders, its cache, its bundles) gets an error at once instead of
    /// mixing its files with this run's. The lock is on the folder itself (`flock`), so it
    /// leaves no file among the bundles and ends with the process, killed or not.
    pub fn lock_out(&self) -> Result<std::fs::File> {
        lock_dir(&self.out)
    }

    /// Use the environment `carve env` recorded for this repository's install inputs, unless
    /// the configuration names an interpreter by path (a virtualenv the user chose).
    pub fn use_recorded_environment(&mut self) {
        if std::env::var("CARVE_ENV").is_ok_and(|v| v == "off" || v == "0") {
            return;
        }
        if self.config.test.interpreter().is_some_and(|p| p.components().count() > 1) {
            return;
        }
        let Some(support) = carve_languages::support(self.config.language).environment() else { return };
        let Some(env) = crate::env::store::lookup(&self.repo, &self.identity, self.config.language.name(), support)
        else {
            return;
        };
        if let Some(python) = env.activation().interpreter_in(&env.dir) {
            self.config.test.set_interpreter(&python);
        }
        self.progress.note(format!("using the environment {} ({})", env.dir.display(), env.record.baseline.summary()));
        self.environment = Some(env);
    }

    /// `a` and `b`, at once on two threads when [`Session::jobs`] allows two test runs at
    /// once, else one after the other (`a` first). Each must use its own scratch folders.
    /// Inside either of them, `both` runs one after the other: two candidates at once run
    /// their own states one by one, so there are never more than two test runs.
    pub fn both<A: Send, B: Send>(&self, a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
        thread_local!(static INSIDE_BOTH: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
        if self.jobs < 2 || INSIDE_BOTH.with(|c| c.get()) {
            let ra = a();
            return (ra, b());
        }
        /// Marks this thread as inside `both` until dropped (also when `a` panics).
        struct Inside;
        impl Drop for Inside {
            fn drop(&mut self) {
                INSIDE_BOTH.with(|c| c.set(false));
            }
        }
        let enter = || {
            INSIDE_BOTH.with(|c| c.set(true));
            Inside
        };
        std::thread::scope(|s| {
            let hb = s.spawn(|| {
                let _inside = enter();
                b()
            });
            let ra = {
                let _inside = enter();
                a()
            };
            (ra, hb.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        })
    }

    /// `f` of every item, two at a time through [`Session::both`]; results in item order.
    pub fn map_two_at_a_time<T: Sync, R: Send>(&self, items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
        let mut out = Vec::with_capacity(items.len());
        for pair in items.chunks(2) {
            match pair {
                [a, b] => {
                    let (ra, rb) = self.both(|| f(a), || f(b));
                    out.extend([ra, rb]);
                }
                [a] => out.push(f(a)),
                _ => unreachable!("chunks of two"),
            }
        }
        out
    }

    /// Scratch space for this run's copies; removed on success by the caller.
    pub fn scratch(&self, name: &str) -> Result<PathBuf> {
        let dir = self.out.join("work").join(name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("failed to clear {}", dir.display()))?;
        }
        std::fs::create_dir_all(&dir).with_context(|| format!("failed to create {}", dir.display()))?;
        Ok(dir)
    }

    pub fn cache_dir(&self) -> PathBuf {
        self.out.join("cache")
    }

    /// Test files of the repository (repository-relative).
    pub fn test_files(&self) -> BTreeSet<String> {
        self.index.files.values().filter(|f| f.is_test).map(|f| f.path.clone()).collect()
    }
}

/// Test runs at once when `--jobs` is not given: `CARVE_JOBS` (a positive number), else 2
/// when the machine has two or more cores (a test suite run is mostly one process), else 1.
pub fn default_jobs() -> usize {
    if let Some(n) = std::env::var("CARVE_JOBS").ok().and_then(|v| v.trim().parse::<usize>().ok()) {
        return n.max(1);
    }
    std::thread::available_parallelism().map_or(1, |n| n.get().min(2))
}

/// Resolve `--f2p` arguments (test ids or test files) against the known test ids. A test
/// file names the tests whose definitions it holds (a Go `_test.go` file: its tests and
/// their subtests). An argument that matches nothing is an error that lists close matches.
pub fn resolve_tests(session: &Session, args: &[String], known: &BTreeSet<TestId>) -> Result<BTreeSet<TestId>> {
    let mut out = BTreeSet::new();
    for raw in args {
        if let Some(ids) = ids_named(raw, known) {
            out.extend(ids);
            continue;
        }
        let arg = raw.strip_prefix("./").unwrap_or(raw);
        if session.index.files.get(arg).is_some_and(|f| f.is_test) {
            let in_file: Vec<&TestId> =
                known.iter().filter(|id| test_definition_file(&session.repo, &session.index, id) == arg).collect();
            if !in_file.is_empty() {
                out.extend(in_file.into_iter().cloned());
                continue;
            }
        }
        let close = carve_languages::runner::close_matches(arg, known);
        if close.is_empty() {
            bail!("no test `{arg}` in this repository (run `carve baseline` to list the test ids)");
        }
        bail!("no test `{arg}` in this repository; close matches:\n  {}", close.join("\n  "));
    }
    Ok(out)
}

/// The known ids an argument names by id: the test itself (with its subtests, Go
/// `importpath/TestX` -> `importpath/TestX/sub`), or every id under it as a prefix (a file, a
/// class or a parametrized family). Ids are data: spaces at either end are part of them (a
/// vitest title may end in one), so the argument is compared as given, then without a leading
/// `./`, and never trimmed.
fn ids_named(raw: &str, known: &BTreeSet<TestId>) -> Option<BTreeSet<TestId>> {
    let forms = [Some(raw), raw.strip_prefix("./")];
    for arg in forms.into_iter().flatten() {
        if known.contains(arg) {
            let mut out: BTreeSet<TestId> =
                known.iter().filter(|id| id.strip_prefix(arg).is_some_and(|r| r.starts_with('/'))).cloned().collect();
            out.insert(arg.to_string());
            return Some(out);
        }
        let prefixed: BTreeSet<TestId> = known
            .iter()
            .filter(|id| id.strip_prefix(arg).is_some_and(|rest| rest.starts_with("::") || rest.starts_with('[')))
            .cloned()
            .collect();
        if !prefixed.is_empty() {
            return Some(prefixed);
        }
    }
    None
}

/// The file part of a test id (`path::Class::test`, `path > describe > test`).
pub fn test_file(id: &str) -> &str {
    carve_languages::runner::test_file(id)
}

/// The test file a test id belongs to: the file of the test definition the language maps
/// it to when that is a test file (a Go id `importpath/TestX/sub` names no file; its
/// `TestX` lives in a `_test` file of the package), else the id's file part. Candidates
/// group by it, and F2P tests leave the masked state per file or per test by it.
pub fn test_definition_file(repo: &Path, index: &DefinitionIndex, id: &str) -> String {
    let file = test_file(id);
    if index.files.get(file).is_some_and(|f| f.is_test) {
        return file.to_string();
    }
    if let Ok(defs) = carve_languages::test_definitions(repo, index, id)
        && let Some(def) =
            defs.iter().filter_map(|d| index.get(d)).find(|d| index.files.get(&d.path).is_some_and(|f| f.is_test))
    {
        return def.path.clone();
    }
    carve_languages::test_source_file(repo, index, id).unwrap_or_else(|| file.to_string())
}

/// Without a carve.toml the detected settings are used; say which, on stderr, once.
fn progress_note_detected(line: &str) {
    if std::env::var_os("CARVE_QUIET_DETECT").is_none() {
        eprintln!("carve: detected {line}");
    }
}

/// An exclusive `flock` on the folder `dir` (made if missing), without waiting: see
/// [`Session::lock_out`].
fn lock_dir(dir: &Path) -> Result<std::fs::File> {
    std::fs::create_dir_all(dir).with_context(|| format!("failed to create {}", dir.display()))?;
    let file = std::fs::File::open(dir).with_context(|| format!("failed to open {}", dir.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => bail!(
            "{} is in use by another carve run writing there; wait for it to end, or give this run another --out",
            dir.display()
        ),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(e).with_context(|| format!("failed to lock the output folder {}", dir.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(ids: &[&str]) -> BTreeSet<TestId> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_id_that_ends_in_a_space_is_selected_as_given() {
        let k = known(&["tests/a.test.ts > \"\" => \"\" ", "tests/a.test.ts > \"\" => \"\""]);
        let got = ids_named("tests/a.test.ts > \"\" => \"\" ", &k).unwrap();
        assert_eq!(got, known(&["tests/a.test.ts > \"\" => \"\" "]));
        let got = ids_named("tests/a.test.ts > \"\" => \"\"", &k).unwrap();
        assert_eq!(got, known(&["tests/a.test.ts > \"\" => \"\""]));
    }

    #[test]
    fn a_leading_dot_slash_prefix_and_subtests() {
        let k =
            known(&["tests/test_a.py::test_x", "tests/test_a.py::test_y[1]", "m/TestT", "m/TestT/sub", "m/TestTwo"]);
        assert_eq!(
            ids_named("./tests/test_a.py", &k).unwrap(),
            known(&["tests/test_a.py::test_x", "tests/test_a.py::test_y[1]"])
        );
        assert_eq!(ids_named("tests/test_a.py::test_y", &k).unwrap(), known(&["tests/test_a.py::test_y[1]"]));
        assert_eq!(ids_named("m/TestT", &k).unwrap(), known(&["m/TestT", "m/TestT/sub"]));
        assert_eq!(ids_named(" m/TestT", &k), None, "a space is part of the id, not trimmed away");
    }

    #[test]
    fn a_second_run_into_one_output_folder_is_refused_until_the_first_ends() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let first = lock_dir(&out).unwrap();
        let err = lock_dir(&out).unwrap_err().to_string();
        assert!(err.contains(&out.display().to_string()) && err.contains("another --out"), "{err}");
        drop(first);
        lock_dir(&out).expect("free again once the first run's lock is gone");
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0, "the lock leaves no file among the bundles");
    }
}
