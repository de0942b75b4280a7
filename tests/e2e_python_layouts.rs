//! End-to-end tests over `fixtures/python/srclayout`: a `src/` layout package that is only
//! importable once installed, installed into a fresh virtualenv the ways users install
//! packages they work on. Every way must trace and mask the repository's own files (the
//! shadow copy carve runs in), not the files the install points at.
//!
//! The virtualenv is built without network: `python3 -m venv --system-site-packages`
//! (pytest comes from the interpreter running the tests) and the install's result written
//! as the installers write it — the `.pth` path entry of an editable install (what
//! setuptools' lenient mode, flit, hatchling and `setup.py develop` leave in
//! site-packages), setuptools' strict-mode `__editable___*_finder` meta path finder, and a
//! regular install's copy of the package in site-packages.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh virtualenv in `dir` that sees the test interpreter's packages (pytest);
/// returns (its python, its site-packages). `venv` is in the standard library, so a python
/// that runs pytest makes one; failing to is a failure, not a reason to skip.
fn virtualenv(dir: &Path) -> (PathBuf, PathBuf) {
    let venv = dir.join("venv");
    let ok = Command::new(python())
        .args(["-m", "venv", "--system-site-packages", "--without-pip"])
        .arg(&venv)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "`{} -m venv` failed", python());
    let py = venv.join("bin").join("python");
    let out = Command::new(&py)
        .args(["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", py.display()));
    let site = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (py, site)
}

#[derive(Clone, Copy, Debug)]
enum Install {
    /// `pip install -e .` with a `.pth` path entry pointing at the user's `src/`.
    EditablePth,
    /// setuptools' strict editable mode: a meta path finder mapping `tally` to the user's tree.
    EditableFinder,
    /// `pip install .`: a copy of the package in site-packages.
    SitePackages,
}

fn install(how: Install, repo: &Path, site: &Path) {
    let src = repo.join("src");
    match how {
        Install::EditablePth => {
            std::fs::write(site.join("__editable__.tally-0.1.0.pth"), format!("{}\n", src.display())).unwrap();
        }
        Install::EditableFinder => {
            // The shape of setuptools' generated `__editable___<name>_finder.py`, reduced to
            // what resolves a top-level package.
            let finder = format!(
                r#"import sys
from importlib.machinery import ModuleSpec, PathFinder
from importlib.util import spec_from_file_location
from pathlib import Path

MAPPING = {{"tally": {tally:?}}}


class _EditableFinder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname in MAPPING:
            pkg = Path(MAPPING[fullname])
            return spec_from_file_location(fullname, pkg / "__init__.py", submodule_search_locations=[str(pkg)])
        parent, _, _ = fullname.rpartition(".")
        if parent in MAPPING:
            return PathFinder.find_spec(fullname, path=[MAPPING[parent]])
        return None


def install():
    if not any(finder == _EditableFinder for finder in sys.meta_path):
        sys.meta_path.append(_EditableFinder)
"#,
                tally = src.join("tally").display().to_string()
            );
            std::fs::write(site.join("__editable___tally_0_1_0_finder.py"), finder).unwrap();
            std::fs::write(
                site.join("__editable__.tally-0.1.0.pth"),
                "import __editable___tally_0_1_0_finder; __editable___tally_0_1_0_finder.install()\n",
            )
            .unwrap();
        }
        Install::SitePackages => copy_dir(&src.join("tally"), &site.join("tally")),
    }
}

/// The fixture installed `how` into a fresh virtualenv: (temp dir, repo, python).
fn installed(how: Install) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let (tmp, repo) = fixture_copy("python/srclayout");
    // What the build backend generates at install time (git-ignored).
    std::fs::write(repo.join("src/tally/_version.py"), "__version__ = \"0.1.0\"\n").unwrap();
    let (py, site) = virtualenv(tmp.path());
    install(how, &repo, &site);
    // The install works as installed, outside carve: the package imports from where the
    // install points (the precondition of the test).
    let from = Command::new(&py).args(["-c", "import tally; print(tally.__file__)"]).current_dir(tmp.path()).output();
    assert!(from.is_ok_and(|o| o.status.success()), "{how:?}: the fixture does not import once installed");
    (tmp, repo, py)
}

/// `carve audit` of the text feature of `repo` with `py`: the text functions are extracted,
/// the counter (run by P2P tests) stays, and the repository is untouched.
fn assert_text_feature_extracted(label: &str, repo: &Path, py: &Path, out: &Path) {
    let before = tree_snapshot(repo);
    let args = ["--python", py.to_str().unwrap(), "--format", "json", "--f2p", "tests/test_text.py"];
    let o = carve_on("audit", repo, out, &args, 0);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let extracted: Vec<&str> =
        report["extracted"].as_array().unwrap().iter().map(|n| n["id"].as_str().unwrap()).collect();
    for id in ["src/tally/text.py::word_counts", "src/tally/text.py::normalize"] {
        assert!(extracted.contains(&id), "{label}: {id} not extracted; report: {report:#}");
    }
    assert!(
        !extracted.iter().any(|id| id.starts_with("src/tally/counter.py")),
        "{label}: the counter runs in P2P tests and must stay; report: {report:#}"
    );
    assert_eq!(before, tree_snapshot(repo), "{label}: carve modified the repository");
}

fn audit_text_feature(how: Install) {
    let (tmp, repo, py) = installed(how);
    assert_text_feature_extracted(&format!("{how:?}"), &repo, &py, &tmp.path().join("out"));
}

#[needs("pytest")]
fn an_editable_install_with_a_pth_path_entry_traces_the_shadow_copy() {
    audit_text_feature(Install::EditablePth);
}

#[needs("pytest")]
fn an_editable_install_with_a_meta_path_finder_traces_the_shadow_copy() {
    audit_text_feature(Install::EditableFinder);
}

#[needs("pytest")]
fn a_regular_install_in_site_packages_is_mapped_back_to_the_repository() {
    audit_text_feature(Install::SitePackages);
}

fn git(repo: &Path, args: &[&str]) -> bool {
    Command::new("git").arg("-C").arg(repo).args(args).output().is_ok_and(|o| o.status.success())
}

fn git_ok(repo: &Path, args: &[&str]) {
    assert!(git(repo, args), "git {args:?} failed in {}", repo.display());
}

/// `carve tasks` on a clone-like checkout (a git repository with a remote, the generated
/// `_version.py` git-ignored), installed editable: the task is valid (the masked state
/// fails the F2P tests because the shadow copy is what runs, `__all__` and the package's
/// re-exports lose the extracted names, the ignored file is in every state, so the restored
/// tree is the original), the test that does not need the feature stays as a P2P test, and
/// the task is named after the remote.
#[needs("pytest", "git")]
fn tasks_on_an_editable_src_layout_clone_yield_a_valid_task_named_after_the_remote() {
    let (tmp, repo, py) = installed(Install::EditablePth);
    git_ok(&repo, &["init", "-q"]);
    git_ok(&repo, &["add", "-A"]);
    git_ok(&repo, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init"]);
    git_ok(&repo, &["remote", "add", "origin", "git@github.com:carve-fixtures/tally.git"]);
    assert!(!git(&repo, &["ls-files", "--error-unmatch", "src/tally/_version.py"]), "_version.py is ignored");
    let before = tree_snapshot(&repo);
    let out = tmp.path().join("out");
    let args = ["--python", py.to_str().unwrap(), "--level", "1", "--format", "json", "--f2p", "tests/test_text.py"];
    let o = carve_on("tasks", &repo, &out, &args, 0);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let tasks = report["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "{report:#}");
    let id = tasks[0].as_str().unwrap();
    assert!(id.starts_with("carve-fixtures__tally."), "{id}");
    let bundle = out.join(id);
    let gold = std::fs::read_to_string(bundle.join("gold.patch")).unwrap();
    assert!(gold.contains("def word_counts("), "the gold patch restores the feature");
    assert!(gold.contains("__all__"), "the gold patch restores the names in __all__");
    let validation: Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("validation.json")).unwrap()).unwrap();
    assert_eq!(validation["valid"], true, "{validation:#}");
    // The test of the file that uses only the counter still passed on the first masked
    // state: it left F2P and stays, as a P2P test, in the masked test file.
    let moved = "tests/test_text.py::test_a_counter_of_words_ranks_them";
    let audit: Value = serde_json::from_str(&std::fs::read_to_string(bundle.join("audit.json")).unwrap()).unwrap();
    assert_eq!(audit["moved_to_p2p"], serde_json::json!([moved]), "{audit:#}");
    let inst: Value = serde_json::from_str(&std::fs::read_to_string(bundle.join("instance.json")).unwrap()).unwrap();
    assert!(inst["PASS_TO_PASS"].as_array().unwrap().iter().any(|t| t == moved), "{inst:#}");
    assert!(!inst["FAIL_TO_PASS"].as_array().unwrap().iter().any(|t| t == moved), "{inst:#}");
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");
}

/// A second checkout of the project (a worktree, an older commit) carved with the virtualenv
/// that has the first one installed editable: its `pyproject.toml` differs, but it names the
/// same distribution, so the tests import the second checkout's copy and the feature is
/// traced and extracted from it.
#[needs("pytest")]
fn another_checkout_of_an_installed_project_traces_its_own_copy() {
    let (tmp, installed_repo, py) = installed(Install::EditablePth);
    let other = tmp.path().join("other-checkout");
    copy_dir(&installed_repo, &other);
    let pyproject = other.join("pyproject.toml");
    let text = std::fs::read_to_string(&pyproject).unwrap().replace("version = \"0.1.0\"", "version = \"0.2.0\"");
    std::fs::write(&pyproject, text).unwrap();
    assert_text_feature_extracted("another checkout", &other, &py, &tmp.path().join("out"));
}
