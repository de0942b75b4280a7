//! `carve arc build` records the verified call dependency (issue 10, beyond the paper): each
//! later stage's F2P tests are traced at S_(k+1) under the language's shim, and the stage lists
//! the definitions of earlier stages they executed — in `chain.json` and in the stage's
//! `validation.json`. The scripted histories of `fixtures/arc/<lang>/recipe.toml` script the
//! same chain in each language: stage 0 adds `App` with `run` and `state`, stage 1 adds
//! `run_and_wait` on top of them, stage 2 makes `run` take input files.

mod common;

use std::path::Path;

use common::{carve_ok, needs, python};
use serde_json::Value;

/// Build the fixture's scripted history, mine it, and build its 3-stage chain; returns
/// `chain.json` and the stages' `validation.json`.
fn build_chain(lang: &str, config: &str) -> (Value, Vec<Value>) {
    let tmp = tempfile::tempdir().unwrap();
    let recipe = carve_testutil::workspace_root().join("fixtures/arc").join(lang).join("recipe.toml");
    let repo = tmp.path().join("repo");
    carve_ok(&["arc", "recipe", recipe.to_str().unwrap(), "--out", repo.to_str().unwrap()], 0);
    let name = format!("fixture/{lang}");
    let mined = carve_ok(&["arc", "mine", repo.to_str().unwrap(), "--name", &name, "--format", "json"], 0);
    let report: Value = serde_json::from_slice(&mined.stdout).unwrap();
    let chain = report["chains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["stages"].as_array().unwrap().len() == 3)
        .expect("the recipe scripts a 3-stage chain");
    let id = chain["chain_id"].as_str().unwrap();
    let cfg = tmp.path().join("carve.toml");
    std::fs::write(&cfg, config).unwrap();
    let out = tmp.path().join("bundles");
    let args =
        ["arc", "build", repo.to_str().unwrap(), "--chain", id, "--name", &name, "--config", cfg.to_str().unwrap()];
    let built = carve_ok(&[&args[..], &["--out", out.to_str().unwrap()]].concat(), 0);
    let text = String::from_utf8_lossy(&built.stdout);
    assert!(text.contains("calls earlier stages' code: "), "the build reports the dependency:\n{text}");
    let dir = out.join(id);
    let read = |p: &Path| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    let chain_file = read(&dir.join("chain.json"));
    let validations = (0..3).map(|k| read(&dir.join(format!("stages/{k}/validation.json")))).collect();
    (chain_file, validations)
}

fn earlier(stage: &Value) -> Vec<(u64, String)> {
    let c = &stage["call_dependency"];
    assert_eq!(c["traced"], true, "stage {} was traced: {c}", stage["index"]);
    c["earlier"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["stage"].as_u64().unwrap(), d["definition"].as_str().unwrap().to_string()))
        .collect()
}

/// `run`, `state` and the constructor are stage 0's; stage 1's `run_and_wait` starts a job and
/// waits on its state, so its tests must have executed `run` and `state`; stage 2's upload
/// tests make an app (in Rust they start jobs through the new `run_on`, not `run`). No stage
/// lists its own additions or a test definition.
fn check(lang: &str, (chain, validations): (Value, Vec<Value>), path: &str, run: &str, state: &str, ctor: &str) {
    let stages = chain["stages"].as_array().unwrap();
    assert!(stages[0].get("call_dependency").is_none(), "{lang}: stage 0 has no earlier stage");
    let run = (0, format!("{path}::App.{run}"));
    let state = (0, format!("{path}::App.{state}"));
    let s1 = earlier(&stages[1]);
    assert!(s1.contains(&run) && s1.contains(&state), "{lang}: stage 1 calls stage 0's run and state: {s1:?}");
    let s2 = earlier(&stages[2]);
    let ctor = (0, format!("{path}::{ctor}"));
    assert!(s2.contains(&ctor), "{lang}: stage 2 makes an app with stage 0's {ctor:?}: {s2:?}");
    for (k, deps) in [(1, &s1), (2, &s2)] {
        assert_eq!(stages[k]["call_dependency"]["verified"], true);
        assert!(deps.iter().all(|(j, _)| *j < k as u64), "{lang}: stage {k} lists only earlier stages: {deps:?}");
        assert!(deps.iter().all(|(_, d)| !d.contains("test")), "{lang}: no test code: {deps:?}");
        assert_eq!(
            validations[k]["call_dependency"], stages[k]["call_dependency"],
            "{lang}: validation.json records what chain.json does"
        );
    }
    assert!(validations[0].get("call_dependency").is_none());
}

#[needs("pytest")]
fn python_chain_stages_call_what_earlier_stages_added() {
    let config =
        format!("version = 1\nlanguage = \"python\"\n\n[test]\nrunner = \"pytest\"\npython = \"{}\"\n", python());
    check("python", build_chain("python", &config), "jobq/app.py", "run", "state", "App.__init__");
}

#[needs("go")]
fn go_chain_stages_call_what_earlier_stages_added() {
    let config = "version = 1\nlanguage = \"go\"\n\n[test]\nrunner = \"go\"\n";
    check("go", build_chain("go", config), "app.go", "Run", "State", "NewApp");
}

#[needs("cargo")]
fn rust_chain_stages_call_what_earlier_stages_added() {
    let config = "version = 1\nlanguage = \"rust\"\n\n[test]\nrunner = \"cargo\"\n";
    check("rust", build_chain("rust", config), "src/app.rs", "run", "state", "App.new");
}

#[needs("node")]
fn javascript_chain_stages_call_what_earlier_stages_added() {
    let config =
        "version = 1\nlanguage = \"javascript\"\n\n[test]\nrunner = \"node-test\"\npackage_manager = \"npm\"\n";
    check("javascript", build_chain("javascript", config), "src/app.js", "run", "state", "App.constructor");
}
