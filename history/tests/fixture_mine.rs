//! End-to-end: build the scripted history of `fixtures/arc/<lang>/recipe.toml`, analyse and
//! mine it, and check the same-feature chain the recipe scripts is found with its evidence,
//! and the unrelated commits are not in it.

use std::path::{Path, PathBuf};

use carve_history::{MineOptions, recipe};

fn fixture(lang: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/arc").join(lang).join("recipe.toml")
}

/// The `# carve: chain = [...]` and `# carve: unrelated = [...]` lines of a recipe: commit
/// messages (prefixes) of the scripted chain, in order, and of the unrelated commits.
fn expectations(path: &Path) -> (Vec<String>, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let list = |key: &str| -> Vec<String> {
        let line = text.lines().find(|l| l.starts_with(&format!("# carve: {key} = "))).unwrap();
        let value = line.split_once(" = ").unwrap().1;
        toml::from_str::<toml::Table>(&format!("v = {value}")).unwrap()["v"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    (list("chain"), list("unrelated"))
}

fn mine_fixture(lang: &str) {
    assert!(recipe::git_available(), "building a fixture history needs the `git` command; install git");
    let path = fixture(lang);
    let (chain_msgs, unrelated_msgs) = expectations(&path);
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let ids = recipe::build(&recipe::Recipe::read(&path).unwrap(), &repo).unwrap();
    let r = recipe::Recipe::read(&path).unwrap();
    let id_of = |msg: &str| -> String {
        let i = r.commits.iter().position(|c| c.message.starts_with(msg)).unwrap_or_else(|| panic!("no commit {msg}"));
        ids[i].clone()
    };
    let opts = MineOptions { repo_name: format!("fixture/{lang}"), ..Default::default() };
    let (history, report) = carve_history::mine(&repo, "", &opts).unwrap();
    assert_eq!(history.commits.len(), ids.len());

    let want: Vec<String> = chain_msgs.iter().map(|m| id_of(m)).collect();
    let found = report
        .chains
        .iter()
        .find(|c| c.stages.iter().map(|s| s.commits[0].clone()).collect::<Vec<_>>() == want)
        .unwrap_or_else(|| panic!("the scripted chain {chain_msgs:?} was not found; report: {report:#?}"));
    for s in &found.stages[1..] {
        assert!(
            s.evidence.iter().any(|e| e.kind.builds_on()),
            "stage {} carries no evidence that it builds on an earlier stage: {:?}",
            s.index,
            s.evidence
        );
    }
    for m in &unrelated_msgs {
        let id = id_of(m);
        assert!(!found.stages.iter().any(|s| s.commits.contains(&id)), "unrelated commit `{m}` is in the chain");
    }
    assert!(report.discarded.iter().all(|d| !d.reason.is_empty()));
    assert!(found.chain_id.starts_with(&format!("fixture__{lang}.{}.", &want.last().unwrap()[..8])));
}

#[test]
fn python_fixture_chain_is_mined() {
    mine_fixture("python");
}
