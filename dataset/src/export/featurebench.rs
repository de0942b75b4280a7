//! FeatureBench's case layout: `cases/<owner>__<repo>.<commit8>/<test stem>.<hash8>.lv1/` with
//! `instance.json`, `patch.diff` (the *mask* patch: original → masked, without the F2P test
//! file), `test_patch.diff` (deletes the F2P test file; the harness applies it in reverse to
//! restore it) and `problem_statement.md`; and rows (`data/test.jsonl`) with the same keys plus
//! `patch`, `test_patch`, `level` and `problem_statement`, as FeatureBench's harness reads its
//! dataset.
//!
//! Keys and semantics follow FeatureBench (LiberCoders/FeatureBench,
//! `conversion/case_converter.py` `_generate_instance_json`, `harness/runtime.py`
//! `run_instance_level1`, `harness/utils.py`): F2P and P2P are test *files*, the harness runs
//! `{repo_settings.test_cmd} {file}` for the one F2P file and each P2P file and grades by exit
//! status. FeatureBench hashes the test file's path with MD5; carve uses the first 8 hex digits
//! of its SHA-256 (no MD5 here), so the folder names differ from FeatureBench's own for the
//! same file. Level 2 tasks and tasks whose F2P tests share a file with other tests are left
//! out, as FeatureBench's Level 1 cases hold one whole F2P test file.

use md5::{Digest, Md5};
use serde_json::{Value, json};

use super::patch::{FileDiff, deletion_of, split, without};
use super::{Files, Skipped, Task, jsonl, pretty};

/// One FeatureBench case of a task.
#[derive(Debug, Clone)]
pub struct Case {
    /// `cases/<owner>__<repo>.<commit8>/<stem>.<hash8>.lv1`.
    pub dir: String,
    pub instance_id: String,
    pub f2p: String,
    pub p2p: Vec<String>,
    pub patch: String,
    pub test_patch: String,
}

pub fn files(tasks: &[Task]) -> (Files, Vec<String>, Vec<Skipped>) {
    let mut files = Files::new();
    let mut rows = Vec::new();
    let mut written = Vec::new();
    let mut skipped = Vec::new();
    for t in tasks {
        let c = match case(t) {
            Ok(c) => c,
            Err(reason) => {
                skipped.push(Skipped { instance_id: t.id().to_string(), reason });
                continue;
            }
        };
        let inst = instance(t, &c);
        files.insert(format!("{}/instance.json", c.dir), pretty(&inst));
        files.insert(format!("{}/patch.diff", c.dir), c.patch.clone().into_bytes());
        files.insert(format!("{}/test_patch.diff", c.dir), c.test_patch.clone().into_bytes());
        files.insert(format!("{}/problem_statement.md", c.dir), t.instance.problem_statement.clone().into_bytes());
        let mut row = inst;
        row["repo_settings"] = Value::String(row["repo_settings"].to_string());
        row["patch"] = Value::String(c.patch.clone());
        row["test_patch"] = Value::String(c.test_patch.clone());
        row["problem_statement"] = Value::String(t.instance.problem_statement.clone());
        rows.push(row);
        written.push(t.id().to_string());
    }
    files.insert("data/test.jsonl".into(), jsonl(&rows));
    (files, written, skipped)
}

/// The case of `t`, or why FeatureBench's layout cannot hold it.
pub fn case(t: &Task) -> Result<Case, String> {
    let i = &t.instance;
    if i.level != 1 {
        return Err(format!("FeatureBench cases are exported for Level 1 only (this is Level {})", i.level));
    }
    let parts: Vec<FileDiff> = split(&i.test_patch);
    let [f2p] = parts.as_slice() else {
        return Err(format!("its F2P tests are in {} files; a FeatureBench case runs one F2P test file", parts.len()));
    };
    let Some(test_patch) = deletion_of(f2p) else {
        return Err(format!(
            "its F2P tests share {} with other tests; a FeatureBench case holds a whole F2P test file",
            f2p.path
        ));
    };
    let mut p2p: Vec<String> = Vec::new();
    for id in &i.pass_to_pass {
        let file = id.split_once("::").map(|(f, _)| f).unwrap_or(id);
        if carve_languages::Language::from_path(std::path::Path::new(file)).is_none() {
            return Err(format!("its P2P test {id} names no test file (FeatureBench's P2P are test files)"));
        }
        if file == f2p.path {
            return Err(format!("the F2P test file {file} holds P2P tests too"));
        }
        if !p2p.iter().any(|f| f == file) {
            p2p.push(file.to_string());
        }
    }
    p2p.sort();
    let (owner_repo, commit8) = (i.repo.replace('/', "__"), &i.base_commit[..8.min(i.base_commit.len())]);
    let stem = std::path::Path::new(&f2p.path).file_stem().and_then(|s| s.to_str()).unwrap_or("test").to_string();
    let hash8 = hash8(&f2p.path);
    let name = format!("{stem}.{hash8}.lv1");
    Ok(Case {
        dir: format!("cases/{owner_repo}.{commit8}/{name}"),
        instance_id: format!("{owner_repo}.{commit8}.{name}"),
        f2p: f2p.path.clone(),
        p2p,
        patch: without(&i.carve.mask_patch, std::slice::from_ref(&f2p.path)),
        test_patch,
    })
}

/// `instance.json` with FeatureBench's keys, and carve's own under `carve`.
fn instance(t: &Task, c: &Case) -> Value {
    let i = &t.instance;
    json!({
        "instance_id": c.instance_id,
        "FAIL_TO_PASS": [c.f2p],
        "PASS_TO_PASS": c.p2p,
        "image_name": t.image(),
        "repo": i.repo,
        "base_commit": i.base_commit,
        "repo_settings": {
            "repository": i.repo,
            "test_cmd": t.eval_base,
            "timeout_run": 1800,
            "timeout_one": 0,
            "use_uv": false,
            "docker_specs": {},
        },
        "level": 1,
        "lines": i.lines,
        "files": i.files,
        "functions": i.functions,
        "f2p_test_points": i.fail_to_pass.len(),
        "p2p_test_points": i.pass_to_pass.len(),
        "upd_time": Value::Null,
        "create_time": i.created_at,
        "top_objects": i.top_objects,
        "instance_dockerfile": t.dockerfile(),
        "base_dockerfile": String::from_utf8_lossy(&t.bundle_file("Dockerfile")),
        "build_setup_env_sh": Value::Null,
        "carve": {"instance_id": i.instance_id, "language": i.carve.language, "FAIL_TO_PASS": i.fail_to_pass, "PASS_TO_PASS": i.pass_to_pass},
    })
}

/// FeatureBench's `hash8` of a case: the first 8 hex digits of the MD5 of the F2P test file's
/// path relative to the repository, as its `case_converter.py` names cases.
fn hash8(test_file: &str) -> String {
    hex::encode(Md5::digest(test_file.as_bytes()))[..8].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The case folder FeatureBench would name: `hashlib.md5("tests/test_model.py".encode()).hexdigest()[:8]`.
    #[test]
    fn hash8_is_featurebenchs_md5_of_the_relative_path() {
        assert_eq!(hash8("tests/test_model.py"), "e71ff7de");
    }
}
