//! End-to-end: a chain stage that changes `package.json`'s dependencies. The JavaScript fixture
//! history (`fixtures/arc/javascript/recipe.toml`) gets a module using the tiny real package
//! `ms` at 2.0.0, with a test that it rejects weeks (ms 2.0 has no `w` unit); its stage 2
//! bumps `ms` to 2.1.3 and turns that test into "reads weeks". The checkout has the head's
//! dependencies installed (ms 2.1.3), as a user's would. Each state must get the dependencies
//! its own manifest declares: S0 … S2 their own install of ms 2.0.0, S3 the checkout's. With
//! the checkout's `node_modules` everywhere (before `carve_history::deps`), "reads weeks"
//! already passes at S2 and is no F2P test, and "rejects weeks" fails at S0.
//!
//! Needs npm and the npm registry (ms 2.0.0 is fetched once, then cached): skipped with a
//! printed reason when the registry cannot be reached. The decision logic has unit tests in
//! `history/src/deps.rs` that need neither.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use carve_history::bundle::BuildConfig;
use carve_history::deps::DependencySource;
use carve_history::{MineOptions, recipe};
use carve_languages::Language;
use carve_languages::runner::TestCommand;
use carve_languages::typescript::runner::PackageManager;
use carve_testutil::needs;
use wait_timeout::ChildExt;

const MANIFEST: &str = r#"{
  "name": "jobq",
  "version": "0.1.0",
  "private": true,
  "type": "module",
  "scripts": {
    "test": "node --test"
  },
  "dependencies": {
    "ms": "VERSION"
  }
}
"#;

const DURATION: &str = r#"import ms from "ms";

/** Milliseconds in a duration such as `2h`; throws for a unit it does not know. */
export function parseDuration(text) {
  const value = ms(text);
  if (value === undefined) {
    throw new RangeError(`unknown duration ${text}`);
  }
  return value;
}
"#;

const DURATION_TEST_OLD: &str = r#"import { test } from "node:test";
import assert from "node:assert/strict";
import { parseDuration } from "../src/duration.js";

test("parseDuration reads hours", () => {
  assert.equal(parseDuration("2h"), 7200000);
});

test("parseDuration rejects weeks", () => {
  assert.throws(() => parseDuration("1w"), RangeError);
});
"#;

const DURATION_TEST_NEW: &str = r#"import { test } from "node:test";
import assert from "node:assert/strict";
import { parseDuration } from "../src/duration.js";

test("parseDuration reads hours", () => {
  assert.equal(parseDuration("2h"), 7200000);
});

test("parseDuration reads weeks", () => {
  assert.equal(parseDuration("1w"), 604800000);
});
"#;

/// Whether npm answers for ms@2.0.0 within 60 s.
fn registry_reachable() -> Result<(), String> {
    let mut child = Command::new("npm")
        .args(["view", "ms@2.0.0", "version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("npm does not run: {e}"))?;
    match child.wait_timeout(Duration::from_secs(60)).map_err(|e| e.to_string())? {
        Some(s) if s.success() => Ok(()),
        Some(s) => Err(format!("`npm view ms@2.0.0 version` failed ({s})")),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            Err("`npm view ms@2.0.0 version` did not answer in 60 s".into())
        }
    }
}

fn npm_install(dir: &Path) {
    let out = Command::new("npm")
        .args(["install", "--ignore-scripts", "--no-audit", "--no-fund"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "npm install in the checkout: {}", String::from_utf8_lossy(&out.stderr));
}

#[needs("node", "npm", "git")]
fn a_stage_that_bumps_a_dependency_gets_its_own_dependencies_at_each_state() {
    if let Err(why) = registry_reachable() {
        eprintln!("skipped: the npm registry is not reachable here ({why})");
        return;
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/arc/javascript/recipe.toml");
    let mut r = recipe::Recipe::read(&path).unwrap();
    let first = &mut r.commits[0].files;
    first.insert("package.json".into(), MANIFEST.replace("VERSION", "2.0.0"));
    first.insert("src/duration.js".into(), DURATION.into());
    first.insert("test/duration.test.js".into(), DURATION_TEST_OLD.into());
    let stage2 = r.commits.iter_mut().find(|c| c.message.starts_with("upload files as job inputs")).unwrap();
    stage2.files.insert("package.json".into(), MANIFEST.replace("VERSION", "2.1.3"));
    stage2.files.insert("test/duration.test.js".into(), DURATION_TEST_NEW.into());

    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    recipe::build(&r, &repo).unwrap();
    npm_install(&repo);
    let opts = MineOptions { repo_name: "fixture/javascript".into(), ..Default::default() };
    let (_, report) = carve_history::mine(&repo, "", &opts).unwrap();
    let chain = report.chains.iter().find(|c| c.stages.len() == 3).expect("a 3-stage chain");
    let cfg = BuildConfig {
        language: Language::JavaScript,
        test: TestCommand::NodeTest { package_manager: PackageManager::Npm, args: vec![] },
        run_timeout: Duration::from_secs(300),
        test_timeout: Duration::from_secs(60),
        carve_toml: "version = 1\n".into(),
        repo_name: "fixture/javascript".into(),
    };
    let outcome = carve_history::bundle::build(&repo, chain, &cfg, &dir.path().join("bundles")).unwrap();

    let deps = &outcome.chain.dependencies;
    let sources: Vec<(&str, DependencySource)> = deps.iter().map(|d| (d.state.as_str(), d.source)).collect();
    assert_eq!(
        sources,
        [
            ("S0", DependencySource::Own),
            ("S1", DependencySource::Own),
            ("S2", DependencySource::Own),
            ("S3", DependencySource::Checkout)
        ]
    );
    assert!(deps[..3].iter().all(|d| d.digest == deps[0].digest), "one install for one manifest: {deps:?}");
    let weeks = "test/duration.test.js > parseDuration reads weeks".to_string();
    assert!(outcome.chain.stages[2].f2p.contains(&weeks), "stage 2 F2P: {:?}", outcome.chain.stages[2].f2p);
    assert!(outcome.chain.chain.f2p.contains(&weeks), "chain F2P: {:?}", outcome.chain.chain.f2p);
    let rejects = "test/duration.test.js > parseDuration rejects weeks".to_string();
    assert!(
        outcome.chain.stages[0].p2p.contains(&rejects),
        "stage 0 P2P (ms 2.0.0): {:?}",
        outcome.chain.stages[0].p2p
    );
    let chain_json = std::fs::read_to_string(outcome.dir.join("chain.json")).unwrap();
    assert!(
        !chain_json.contains(&carve_history::deps::cache_root().display().to_string()),
        "no cache path in the bundle"
    );

    let checks =
        carve_history::bundle::validate(&outcome.dir, &repo, &cfg.test, (cfg.run_timeout, cfg.test_timeout)).unwrap();
    for c in &checks {
        assert!(c.passed, "{}: {:?}", c.gate, c.problems);
    }
}
