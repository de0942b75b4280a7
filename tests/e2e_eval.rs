//! End-to-end tests of evaluation: `carve grade` on real bundles from `carve tasks`
//! (fixtures/python/inventory), `carve arc run` with scripted agents on a chain bundle built
//! here from the scripted history in fixtures/python/ledger-history, and the reports.

mod common;

use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json_of(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

// ---------------------------------------------------------------- grading L1/L2 bundles

#[needs("pytest", "chromium")]
fn grade_gold_empty_and_test_touching_patches_on_real_bundles() {
    let (_tmp, repo) = fixture_copy("python/inventory");
    let before = tree_snapshot(&repo);
    let out = tempfile::tempdir().unwrap();
    let tasks = out.path().join("tasks");
    carve_ok(&["tasks", repo.to_str().unwrap(), "--out", tasks.to_str().unwrap()], 0);
    let bundles: Vec<PathBuf> = {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&tasks)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("instance.json").is_file())
            .collect();
        v.sort();
        v
    };
    assert!(bundles.iter().any(|b| b.to_string_lossy().ends_with(".lv1")), "Level 1 bundles exist");
    assert!(bundles.iter().any(|b| b.to_string_lossy().ends_with(".lv2")), "a Level 2 bundle exists");
    let one = bundles.iter().find(|b| b.to_string_lossy().ends_with(".lv1")).unwrap();
    let grade = |patch: &Path, name: &str| -> Value {
        let dest = out.path().join(name);
        let o = carve_ok(
            &[
                "grade",
                one.to_str().unwrap(),
                "--patch",
                patch.to_str().unwrap(),
                "--repo",
                repo.to_str().unwrap(),
                "--out",
                dest.to_str().unwrap(),
                "--format",
                "json",
            ],
            0,
        );
        let printed: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(printed, json_of(&dest.join("grade.json")), "printed = written");
        printed["instances"][0].clone()
    };
    // The gold patch resolves the task: every F2P and P2P test passes.
    let gold = grade(&one.join("gold.patch"), "gold");
    assert_eq!(gold["resolved"], true, "{gold:#}");
    assert_eq!(gold["passed_rate"], 1.0);
    assert!(gold["f2p"].as_object().unwrap().values().all(|s| s == "passed"));
    assert!(!gold["p2p"].as_object().unwrap().is_empty());
    assert!(gold["p2p"].as_object().unwrap().values().all(|s| s == "passed"));
    // An empty patch leaves the feature missing: no F2P test passes, P2P still pass.
    let empty_patch = out.path().join("empty.patch");
    std::fs::write(&empty_patch, "").unwrap();
    let empty = grade(&empty_patch, "empty");
    assert_eq!(empty["resolved"], false);
    assert_eq!(empty["passed_rate"], 0.0);
    assert!(empty["f2p"].as_object().unwrap().values().all(|s| s != "passed"), "{empty:#}");
    assert!(empty["p2p"].as_object().unwrap().values().all(|s| s == "passed"));
    // A patch touching the hidden tests is refused with the file named; nothing runs.
    let cheat = grade(&one.join("test.patch"), "cheat");
    assert_eq!(cheat["resolved"], false);
    assert_eq!(cheat["applied"], false);
    let why = cheat["patch_problem"].as_str().unwrap();
    assert!(why.contains("refused") && why.contains("tests/"), "{why}");
    // A patch that does not apply says why.
    let broken = out.path().join("broken.patch");
    std::fs::write(&broken, "diff --git a/nope.py b/nope.py\n--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-x\n+y\n")
        .unwrap();
    let bad = grade(&broken, "broken");
    assert_eq!(bad["applied"], false);
    assert!(bad["patch_problem"].as_str().unwrap().contains("nope.py"), "{bad:#}");

    // SWE-bench predictions for every bundle, two models, two workers; then the report.
    let mut preds = String::new();
    for b in &bundles {
        let id = b.file_name().unwrap().to_str().unwrap();
        let gold = std::fs::read_to_string(b.join("gold.patch")).unwrap();
        preds.push_str(&json!({"instance_id": id, "model_name_or_path": "gold", "model_patch": gold}).to_string());
        preds.push('\n');
        preds.push_str(&json!({"instance_id": id, "model_name_or_path": "empty", "model_patch": ""}).to_string());
        preds.push('\n');
    }
    let pred_file = out.path().join("preds.jsonl");
    std::fs::write(&pred_file, preds).unwrap();
    let all = out.path().join("all");
    carve_ok(
        &[
            "grade",
            tasks.to_str().unwrap(),
            "--predictions",
            pred_file.to_str().unwrap(),
            "--repo",
            repo.to_str().unwrap(),
            "--out",
            all.to_str().unwrap(),
            "-j",
            "2",
        ],
        0,
    );
    let run = json_of(&all.join("grade.json"));
    let inst = run["instances"].as_array().unwrap();
    assert_eq!(inst.len(), bundles.len() * 2);
    for i in inst {
        let gold = i["model"] == "gold";
        assert_eq!(i["resolved"], gold, "{i:#}");
        assert_eq!(i["passed_rate"], if gold { 1.0 } else { 0.0 });
    }
    let html = out.path().join("grade.html");
    let o = carve_ok(&["report", all.to_str().unwrap(), "--format", "json", "--html", html.to_str().unwrap()], 0);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    for m in report["models"].as_array().unwrap() {
        let want = if m["model"] == "gold" { 1.0 } else { 0.0 };
        assert_eq!(m["resolved_rate"]["value"], want, "{m:#}");
        assert_eq!(m["passed_rate"]["value"], want);
        assert_eq!(m["resolved_rate"]["ci"]["low"], want);
    }
    assert!(report["models"].as_array().unwrap().iter().any(|m| m["level"] == 2));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg"), "charts are inline SVG");
    assert!(!page.contains("src=\"http") && !page.contains("href=\"http") && !page.contains("<link"), "self-contained");
    assert_eq!(before, tree_snapshot(&repo), "grading never touches the repository");
    browser_check(&html, &["#metrics", "#rates svg"], &out.path().join("grade.png"));
}

// ---------------------------------------------------------------- chains

/// A git repository from the scripted history and a chain bundle following
/// BRIEF-chain/docs/formats.md (version 1), built with git from the commits.
fn build_chain(dir: &Path) -> (PathBuf, PathBuf) {
    let fixture = carve_testutil::workspace_root().join("fixtures/python/ledger-history");
    let spec: toml::Table =
        toml::from_str(&std::fs::read_to_string(fixture.join("chain-fixture.toml")).unwrap()).unwrap();
    let repo = dir.join("ledger");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    let mut commits = Vec::new();
    let steps = ["0-base", "1-withdraw", "2-history", "3-statement"];
    for step in steps {
        copy_dir(&fixture.join(step), &repo);
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", step]);
        commits.push(git(&repo, &["rev-parse", "HEAD"]).trim().to_string());
    }
    let final_commit = commits.last().unwrap().clone();
    let bundle = dir.join("bundle").join(format!("local__ledger.{}.ledger.00000000", &final_commit[..8]));
    std::fs::create_dir_all(&bundle).unwrap();
    // S0 = the first commit (no unselected changes): final -> S0.
    std::fs::write(bundle.join("s0.patch"), git(&repo, &["diff", "--binary", &final_commit, &commits[0]])).unwrap();
    std::fs::write(
        bundle.join("carve.toml"),
        "version = 1\nlanguage = \"python\"\n\n[test]\nrunner = \"pytest\"\npython = \"python3\"\nargs = []\n\n[timeouts]\nrun = 600\ntest = 120\n",
    )
    .unwrap();
    let p2p: Vec<String> = spec["p2p"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    let mut stages = Vec::new();
    let mut chain_f2p = Vec::new();
    let mut chain_files = Vec::new();
    for (k, st) in spec["stage"].as_array().unwrap().iter().enumerate() {
        let (from, to) = (&commits[k], &commits[k + 1]);
        let sdir = bundle.join(format!("stages/{k}"));
        std::fs::create_dir_all(&sdir).unwrap();
        let hidden: Vec<String> =
            git(&repo, &["diff", "--name-only", from, to, "--", "tests"]).lines().map(String::from).collect();
        let mut args = vec!["diff".to_string(), "--binary".into(), from.clone(), to.clone(), "--".into(), ".".into()];
        args.extend(hidden.iter().map(|h| format!(":(exclude){h}")));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        std::fs::write(sdir.join("gold.patch"), git(&repo, &args)).unwrap();
        for h in &hidden {
            let text = git(&repo, &["show", &format!("{to}:{h}")]);
            let p = sdir.join("tests").join(h);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, &text).unwrap();
            chain_files.push((h.clone(), git(&repo, &["show", &format!("{final_commit}:{h}")])));
        }
        let title = st["title"].as_str().unwrap();
        std::fs::write(sdir.join("spec.md"), format!("# {title}\n\n{}\n", st["spec"].as_str().unwrap())).unwrap();
        std::fs::write(
            sdir.join("contract.json"),
            json!({"version": 1, "language": "python", "files": ["ledger/__init__.py"], "objects": []}).to_string(),
        )
        .unwrap();
        let f2p: Vec<String> = st["f2p"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
        chain_f2p.extend(f2p.clone());
        stages.push(json!({
            "index": k, "commits": [to], "title": title,
            "spec": format!("stages/{k}/spec.md"), "contract": format!("stages/{k}/contract.json"),
            "gold_patch": format!("stages/{k}/gold.patch"), "tests_dir": format!("stages/{k}/tests"),
            "f2p": f2p, "p2p": p2p, "evidence": [],
        }));
    }
    for (h, text) in chain_files {
        let p = bundle.join("chain/tests").join(h);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let chain = json!({
        "version": 1,
        "chain_id": bundle.file_name().unwrap().to_str().unwrap(),
        "repo": "local/ledger",
        "language": "python",
        "final_commit": final_commit,
        "stages": stages,
        "chain": {"tests_dir": "chain/tests", "f2p": chain_f2p, "p2p": p2p},
    });
    std::fs::write(bundle.join("chain.json"), serde_json::to_string_pretty(&chain).unwrap()).unwrap();
    (repo, bundle)
}

fn agent(name: &str) -> String {
    carve_testutil::workspace_root().join("tests/agents").join(name).display().to_string()
}

fn arc_run(bundle: &Path, repo: &Path, out: &Path, agent_cmd: &str, name: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "arc",
        "run",
        bundle.to_str().unwrap(),
        "--agent",
        agent_cmd,
        "--name",
        name,
        "--repo",
        repo.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--format",
        "json",
    ];
    args.extend(["--agent-env", "ORACLE_GOLD"]);
    args.extend(extra);
    let o = carve().args(&args).env("ORACLE_GOLD", oracle_gold(bundle)).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// A copy of the bundle's gold patches beside it (`<dir>/stages/<k>/gold.patch`): the oracle
/// agent's answers, passed on to it with `--agent-env ORACLE_GOLD` — the bundle itself is
/// hidden from agents.
fn oracle_gold(bundle: &Path) -> PathBuf {
    let gold = bundle.parent().unwrap().parent().unwrap().join("oracle-gold");
    for e in std::fs::read_dir(bundle.join("stages")).unwrap() {
        let k = e.unwrap().file_name();
        let d = gold.join("stages").join(&k);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::copy(bundle.join("stages").join(&k).join("gold.patch"), d.join("gold.patch")).unwrap();
    }
    gold
}

/// Whether `pid` is a live process (a zombie not yet reaped counts as dead).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
}

fn passes(run: &Value) -> Vec<bool> {
    run["stages"].as_array().unwrap().iter().map(|s| s["gate"]["passed"].as_bool().unwrap()).collect()
}

#[needs("pytest", "chromium")]
fn arc_run_oracle_empty_and_first_stage_agents_and_their_metrics() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, bundle) = build_chain(tmp.path());
    let before = tree_snapshot(&repo);
    let out = tmp.path().join("runs");
    let oracle = arc_run(&bundle, &repo, &out, &agent("oracle.sh"), "oracle", &[]);
    assert_eq!(passes(&oracle), vec![true, true, true], "{oracle:#}");
    assert_eq!(oracle["chain_gate"]["passed"], true);
    for s in oracle["stages"].as_array().unwrap() {
        assert_eq!(s["agent"]["exit_code"], 0, "the oracle saw the spec, contract and workspace it expects");
        assert!(s["diff_stats"]["added"].as_u64().unwrap() > 0, "the stage diff records the oracle's change");
    }
    // The recorded diff of stage 0 is the gold patch's change.
    let run_dir = out.join(bundle.file_name().unwrap()).join("oracle");
    let diff0 = std::fs::read_to_string(run_dir.join(oracle["stages"][0]["diff"].as_str().unwrap())).unwrap();
    assert!(diff0.contains("+    def withdraw(self, amount):"), "{diff0}");
    assert!(!run_dir.join("workspace/tests/test_withdraw.py").exists(), "hidden tests never enter the workspace");
    let empty = arc_run(&bundle, &repo, &out, &agent("empty.sh"), "empty", &[]);
    assert_eq!(passes(&empty), vec![false, false, false]);
    assert_eq!(empty["chain_gate"]["passed"], false);
    assert_eq!(empty["chain_gate"]["p2p_passed"], true, "the old behaviour still works");
    let first = arc_run(&bundle, &repo, &out, &agent("first-stage-only.sh"), "first-only", &[]);
    assert_eq!(passes(&first), vec![true, false, false]);
    assert_eq!(first["chain_gate"]["f2p_passed"], false);

    let html = tmp.path().join("arc.html");
    let o =
        carve_ok(&["arc", "report", out.to_str().unwrap(), "--format", "json", "--html", html.to_str().unwrap()], 0);
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let agent_row = |name: &str| r["agents"].as_array().unwrap().iter().find(|a| a["agent"] == name).unwrap().clone();
    let v = |row: &Value, m: &str| row[m]["value"].clone();
    // Oracle: 100% on every gate; no regression where there is something to regress.
    let o = agent_row("oracle");
    for m in ["m0", "gate", "cont", "stage_f2p", "depth"] {
        assert_eq!(v(&o, m), 1.0, "oracle {m}");
    }
    for m in ["chain_p2p_failure", "in_chain_regression", "pure_regression", "last_stage_overestimate"] {
        assert_eq!(v(&o, m), 0.0, "oracle {m}");
    }
    assert_eq!(
        o["survival"].as_array().unwrap().iter().map(|e| e["value"].clone()).collect::<Vec<_>>(),
        vec![json!(1.0); 3]
    );
    // Empty: 0 everywhere; Cont. and the regression rates have nothing to count (null).
    let e = agent_row("empty");
    for m in ["m0", "gate", "stage_f2p", "depth", "chain_p2p_failure"] {
        assert_eq!(v(&e, m), 0.0, "empty {m}");
    }
    for m in ["cont", "in_chain_regression", "pure_regression"] {
        assert!(v(&e, m).is_null(), "empty {m}");
    }
    // First stage only: m0 right, nothing after. Cont. counts m1 only (0 of 1); stage F2P
    // 1 of 3; depth 1/3; survival 1, 0, 0.
    let f = agent_row("first-only");
    assert_eq!(v(&f, "m0"), 1.0);
    assert_eq!(v(&f, "gate"), 0.0);
    assert_eq!((f["cont"]["value"].clone(), f["cont"]["den"].clone()), (json!(0.0), json!(1.0)));
    assert!((v(&f, "stage_f2p").as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-12);
    assert!((v(&f, "depth").as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(
        f["survival"].as_array().unwrap().iter().map(|e| e["value"].clone()).collect::<Vec<_>>(),
        vec![json!(1.0), json!(0.0), json!(0.0)]
    );
    assert!(v(&f, "in_chain_regression").is_null());
    // Within task-stage groups: stage 1 (after pass: oracle 1, first-only 0; after fail:
    // empty 0) and stage 2 (after pass: oracle 1; after fail: empty 0, first-only 0).
    // Equal-weighted: after pass (0.5 + 1) / 2 = 0.75, after fail 0.
    let g = &r["group_comparison"];
    assert_eq!(g["groups"], 2);
    assert_eq!(g["after_pass"]["value"], 0.75);
    assert_eq!(g["after_fail"]["value"], 0.0);
    assert_eq!(r["all"]["first_break"], json!({"complete": 1, "m0": 1, "m1": 1}));
    assert_eq!(before, tree_snapshot(&repo), "the repository is never touched");
    browser_check(
        &html,
        &["#metrics", "#survival svg", "#m0-gate svg", "#gate-by-length svg", "#first-break svg"],
        &tmp.path().join("arc.png"),
    );
}

/// The interrupted agent writes its process id for the test to end it after killing carve;
/// in the namespace sandbox that id is one of its own PID namespace, so this test runs the
/// agent with paths and environment isolation only (the sandbox has its own test).
const SANDBOX_NONE: &[&str] =
    &["--sandbox", "none", "--agent-env", "ORACLE_GOLD", "--agent-env", "AGENT_LOG", "--agent-env", "INTERRUPT_MARK"];

#[needs("pytest")]
fn arc_run_resumes_after_a_kill_without_redoing_a_finished_stage() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, bundle) = build_chain(tmp.path());
    let out = tmp.path().join("runs");
    let log = tmp.path().join("agent.log");
    let mark = tmp.path().join("interrupt.mark");
    // The one run of the interrupted agent: killed, resumed, then asked for again.
    let interrupted = || {
        let mut c = carve();
        c.args(["arc", "run", bundle.to_str().unwrap(), "--agent", &agent("interrupted.sh"), "--name", "oracle"])
            .args(["--repo", repo.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .args(SANDBOX_NONE)
            .env("ORACLE_GOLD", oracle_gold(&bundle))
            .env("AGENT_LOG", &log)
            .env("INTERRUPT_MARK", &mark);
        c
    };
    let mut child = interrupted().stdout(std::process::Stdio::null()).spawn().unwrap();
    // Wait until the agent is inside stage 1, then kill carve and the agent.
    let mut waited = 0;
    while !mark.exists() {
        std::thread::sleep(std::time::Duration::from_millis(100));
        waited += 1;
        assert!(waited < 1200, "the agent never reached stage 1");
    }
    // SIGKILL: carve gets no chance to clean up, yet neither the agent (now `sleep`) nor the
    // background process it started outlives it.
    child.kill().unwrap();
    child.wait().unwrap();
    let pids: Vec<u32> = std::fs::read_to_string(&mark)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().expect("the agent wrote its pids"))
        .collect();
    assert_eq!(pids.len(), 2);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while pids.iter().any(|&p| alive(p)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    for &p in &pids {
        if alive(p) {
            let _ = Command::new("kill").args(["-KILL", &p.to_string()]).status();
            panic!("agent process {p} outlived carve's kill");
        }
    }
    let run_file = out.join(bundle.file_name().unwrap()).join("oracle/run.json");
    let partial = json_of(&run_file);
    assert_eq!(partial["stages"].as_array().unwrap().len(), 1, "stage 0 was finished before the kill");
    assert!(partial["chain_gate"].is_null());
    // Resume: stage 0 is not redone, stage 1 is started again, the run completes.
    let o = interrupted().args(["--format", "json"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let run: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(passes(&run), vec![true, true, true]);
    assert_eq!(run["chain_gate"]["passed"], true);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "0\n1\n1\n2\n",
        "each stage's agent runs once, stage 1 again after the kill"
    );
    assert_eq!(run["stages"][0]["agent"]["attempts"], 1);
    assert_eq!(run["stages"][1]["agent"]["attempts"], 2);
    // A finished run is never redone.
    let again = interrupted().args(["--format", "json"]).output().unwrap();
    assert_eq!(o.stdout, again.stdout);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "0\n1\n1\n2\n");
}

#[needs("pytest")]
fn arc_run_stage_budget_and_feedback_levels() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, bundle) = build_chain(tmp.path());
    let out = tmp.path().join("runs");
    let slow = arc_run(&bundle, &repo, &out, &agent("slow.sh"), "slow", &["--stage-budget", "1"]);
    for s in slow["stages"].as_array().unwrap() {
        assert_eq!(s["agent"]["timed_out"], true);
        assert!(s["agent"]["exit_code"].is_null());
        assert!(s["agent"]["seconds"].as_f64().unwrap() < 30.0, "killed at the budget, not after the sleep");
    }
    // L2 feedback: before stage 1 the agent is told stage 0 failed and which tests failed;
    // L3 only that it failed; L4 nothing.
    arc_run(&bundle, &repo, &out, &agent("empty.sh"), "empty-l2", &["--feedback", "L2"]);
    arc_run(&bundle, &repo, &out, &agent("empty.sh"), "empty-l3", &["--feedback", "L3"]);
    arc_run(&bundle, &repo, &out, &agent("empty.sh"), "empty-l4", &[]);
    let chain = out.join(bundle.file_name().unwrap());
    let l2 = std::fs::read_to_string(chain.join("empty-l2/agent/stage-1/feedback.md")).unwrap();
    assert!(
        l2.contains("Stage 0 did not pass") && l2.contains("tests/test_withdraw.py::test_overdraft_is_refused"),
        "{l2}"
    );
    let l3 = std::fs::read_to_string(chain.join("empty-l3/agent/stage-1/feedback.md")).unwrap();
    assert!(l3.contains("Stage 0 did not pass") && !l3.contains("test_withdraw"), "{l3}");
    assert!(!chain.join("empty-l4/agent/stage-1/feedback.md").exists());
}

/// The agent cannot read the answers through the paths it is given: a snooping agent looks
/// for the gold patch and the hidden tests in the bundle, the repository, the run folder
/// (`private/`, `run.json`), everything under the test's folder and other processes' roots,
/// and finds nothing; from outside the sandbox the same search finds them (the check can fail).
#[needs("pytest", "user-namespaces")]
fn arc_run_sandbox_hides_the_gold_patch_and_hidden_tests_from_the_agent() {
    assert!(carve_eval::sandbox::namespaces_available(), "the sandbox's own check disagrees with #[needs]");
    let tmp = tempfile::tempdir().unwrap();
    let (repo, bundle) = build_chain(tmp.path());
    let gold_line = "    def withdraw(self, amount):";
    let test_line = "def test_overdraft_is_refused";
    let found_outside = |needle: &str| -> String {
        let o = Command::new("grep").args(["-rlF", needle]).arg(tmp.path()).output().unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let outside = found_outside(gold_line) + &found_outside(test_line);
    assert!(outside.contains("gold.patch") && outside.contains("test_withdraw.py"), "{outside}");
    let mut args: Vec<String> =
        ["arc", "run", bundle.to_str().unwrap(), "--agent", &agent("snoop.sh")].iter().map(|s| s.to_string()).collect();
    args.extend(["--name", "snoop", "--repo", repo.to_str().unwrap()].map(String::from));
    args.extend(["--out".to_string(), tmp.path().join("runs").display().to_string()]);
    for v in ["SNOOP_BUNDLE", "SNOOP_REPO", "SNOOP_ROOT", "SNOOP_GOLD_LINE", "SNOOP_TEST_LINE"] {
        args.extend(["--agent-env".to_string(), v.to_string()]);
    }
    let o = carve()
        .args(&args)
        .env("SNOOP_BUNDLE", &bundle)
        .env("SNOOP_REPO", &repo)
        .env("SNOOP_ROOT", tmp.path())
        .env("SNOOP_GOLD_LINE", gold_line)
        .env("SNOOP_TEST_LINE", test_line)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let home = tmp.path().join("runs").join(bundle.file_name().unwrap()).join("snoop/agent/home");
    for k in 0..3 {
        let report = std::fs::read_to_string(home.join(format!("snoop-{k}.txt"))).unwrap();
        assert_eq!(report, "sandbox=namespace carve_env=unset\n", "stage {k}: the agent could read the answers");
    }
    // Nothing was broken for carve: the bundle and the repository are intact outside.
    assert!(bundle.join("stages/0/gold.patch").is_file() && repo.join(".git").is_dir());
}

// ---------------------------------------------------------------- pages in a browser

#[needs("pytest", "chromium")]
fn audit_as_an_html_page() {
    let (_tmp, repo) = fixture_copy("python/inventory");
    let out = tempfile::tempdir().unwrap();
    let o = carve_on("audit", &repo, out.path(), &["--format", "html", "--f2p", "tests/test_search.py"], 0);
    let page = String::from_utf8(o.stdout).unwrap();
    // Definitions grouped by file with their decisions and reasons.
    assert!(page.contains("<th colspan=\"3\" class=\"file\">inventory/search.py</th>"), "grouped by file");
    assert!(page.contains("<code>SkuIndex.__init__</code></td><td class=\"extracted\">extracted</td>"));
    assert!(page.contains("entry point: called by F2P test tests/test_search.py::"));
    assert!(page.contains("<td class=\"remained\">remained</td>") && page.contains("executed by P2P test"));
    // The call graph marks the boundary; the masked diff removes the extracted code.
    assert!(page.contains("P2P boundary"));
    assert!(page.contains("<span class=\"del\">-class SkuIndex"), "the masked diff deletes the class");
    assert!(!page.contains("src=\"http") && !page.contains("<link"), "self-contained");
    let file = out.path().join("audit.html");
    std::fs::write(&file, &page).unwrap();
    browser_check(&file, &["#definitions", "#call-graph svg", "#mask-diff"], &out.path().join("audit.png"));
}

/// In the namespace sandbox the agent's processes have ids of their own PID namespace; from
/// outside they are found by a marker in their command line. Ending the guard ends the
/// agent's whole namespace, a background process included.
#[needs("user-namespaces")]
fn sandboxed_agent_processes_do_not_outlive_their_guard() {
    use carve_eval::guard::GroupGuard;
    use carve_eval::sandbox::{Sandbox, SandboxMode};
    let tmp = tempfile::tempdir().unwrap();
    let (ws, agent_root) = (tmp.path().join("ws"), tmp.path().join("agent"));
    std::fs::create_dir_all(&ws).unwrap();
    let sb = Sandbox::new(SandboxMode::Namespace, &ws, &agent_root, &[], &[]).unwrap();
    // Unique durations mark this test's two sleeps.
    let marks = [format!("{}.25", 300 + std::process::id() % 97), format!("{}.5", 300 + std::process::id() % 97)];
    let script = format!("sleep {} & exec sleep {}", marks[0], marks[1]);
    let mut cmd = sb.command("sh", &["-c".into(), script.into()], &[]);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut guard = GroupGuard::start().unwrap();
    let mut child = cmd.spawn().unwrap();
    guard.watch(child.id()).unwrap();
    let find = |mark: &str| -> Vec<u32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| c.split(|b| *b == 0).any(|a| a == mark.as_bytes()))
            })
            .filter(|&pid| alive(pid))
            .collect()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while marks.iter().any(|m| find(m).is_empty()) {
        assert!(std::time::Instant::now() < deadline, "the sandboxed sleeps never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    guard.end();
    let _ = child.wait();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while marks.iter().any(|m| !find(m).is_empty()) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    for m in &marks {
        let left = find(m);
        for p in &left {
            let _ = Command::new("kill").args(["-KILL", &p.to_string()]).status();
        }
        assert!(left.is_empty(), "sandboxed `sleep {m}` outlived the guard: {left:?}");
    }
}
