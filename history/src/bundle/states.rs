//! The reference states S0 … Sn of a chain, every one passing the language's build check:
//! built from the chain's stage commits (`crate::states`), stages that change only tests
//! merged into a neighbour, and a state that does not build repaired — first by pulling in
//! the files it imports before the stage that created them, then by keeping the definitions
//! of per-definition files that the build error names (as the pipeline's build repair keeps
//! what the compiler names: `carve_pipeline::repair`), then by pulling into the chain the
//! commit outside it that changed a file the error names (III-C's "necessary
//! dependencies"), each bounded by [`MAX_REPAIRS`].

use std::collections::BTreeSet;
use std::path::Path;

use carve_languages::Language;
use carve_pipeline::repair;

use super::{MAX_REPAIRS, MergedStage, Repair};
use crate::HistoryError;
use crate::mine::Chain;
use crate::states::{Role, States, git, role};

/// A chain's reference states and what it took to make every one build.
pub(super) struct Reference {
    /// The chain as built: test-only stages merged, ids named as at the final checkpoint.
    pub chain: Chain,
    /// Each stage's commits, with the commits pulled in by repairs.
    pub stage_commits: Vec<Vec<String>>,
    pub final_commit: String,
    pub repairs: Vec<Repair>,
    pub merged: Vec<MergedStage>,
    pub states: States,
}

/// Why [`reference_states`] made no states.
pub(super) enum StatesFailure {
    /// State S_`state` does not pass the build check after the repairs (`reason`). `chain` is
    /// the chain as it was built (test-only stages merged, listed in `merged`), `order` the
    /// repository's first-parent commits: the caller can take the state out and build again.
    Unbuildable { state: usize, reason: String, chain: Chain, merged: Vec<MergedStage>, order: Vec<String> },
    /// Anything else: the chain stops.
    Other(HistoryError),
}

impl From<HistoryError> for StatesFailure {
    fn from(e: HistoryError) -> StatesFailure {
        StatesFailure::Other(e)
    }
}

/// Build the reference states of `chain` from `repo` under `scratch`, repaired until every
/// state passes the build check, or an error saying why the chain cannot be built.
pub(super) fn reference_states(
    repo: &Path,
    chain: &Chain,
    language: Language,
    scratch: &Path,
    err: &dyn Fn(String) -> HistoryError,
) -> Result<Reference, StatesFailure> {
    let mut chain = chain.clone();
    let mut merged: Vec<MergedStage> = Vec::new();
    let mut stage_commits: Vec<Vec<String>> = chain.stages.iter().map(|s| s.commits.clone()).collect();
    let final_commit = stage_commits.last().and_then(|c| c.last()).cloned().ok_or_else(|| err("no stages".into()))?;
    // Every state builds; a state that does not is repaired by pulling the commit outside the
    // chain that the build error points at into the stage before it (III-C's "necessary
    // dependencies"), at most MAX_REPAIRS times, else the chain is dropped with the reason.
    let mut repairs: Vec<Repair> = Vec::new();
    // Definitions of per-definition files that every state keeps (a state's build named them).
    let mut keep: BTreeSet<carve_languages::NodeId> = BTreeSet::new();
    let mut keep_rounds = 0;
    let states = loop {
        let attempt = scratch.join(format!("attempt-{}-{keep_rounds}-{}", repairs.len(), merged.len()));
        std::fs::create_dir_all(&attempt).map_err(HistoryError::io("create", &attempt))?;
        let mut states = States::build(repo, &attempt, &final_commit, &stage_commits, language, &keep)?;
        // Tests inside the sources (Rust's `src/`) go to the tests, the rest to the stage's code.
        states.split_inline_tests(language).map_err(err)?;
        // A stage that changes only tests is merged into its neighbour (only where tests live
        // in the sources can a mined stage's code change be comments and tests alone).
        if let Some(k) = test_only_stage(&states, language, stage_commits.len()).map_err(err)? {
            if stage_commits.len() <= 2 {
                return Err(StatesFailure::Other(err(format!(
                    "stage {k} ({}) changes only tests (no code outside inline tests and comments), and merged \
                     into its neighbour the chain would have a single stage",
                    &stage_commits[k][0][..8]
                ))));
            }
            let order = states.first_parent_order().map_err(err)?;
            let target = if k == 0 { "the next stage" } else { "the stage before it" };
            let why = format!(
                "it changes only tests (no code outside inline tests and comments), so a gate on it could not \
                 fail; merged into {target}"
            );
            merged.push(merge_stage(&mut chain, &mut stage_commits, &mut repairs, &order, k, why));
            continue;
        }
        let Some((k, message)) = build_failure(&mut states, language, scratch).map_err(err)? else {
            break states;
        };
        // First repair of a per-definition file: keep (at its final text) what the build error
        // names among the definitions taken out of it, as carve's extraction keeps what the
        // compiler names; bounded like the commit repairs.
        let named = named_taken_out(&states, &message, &keep);
        if !named.is_empty() && keep_rounds < MAX_REPAIRS {
            keep.extend(named);
            keep_rounds += 1;
            continue;
        }
        if let Err(reason) = pull_dependency(&states, &mut stage_commits, &mut repairs, language, k, &message) {
            let order = states.first_parent_order().map_err(err)?;
            return Err(StatesFailure::Unbuildable { state: k, reason, chain, merged, order });
        }
    };
    // The mined ids name files where the chain's commits had them; the states, their indexes
    // and traces name them at the final checkpoint (a file a later commit moved).
    for s in &mut chain.stages {
        for ids in [&mut s.definitions_added, &mut s.definitions_modified, &mut s.tests_added, &mut s.tests_modified] {
            for id in ids.iter_mut() {
                *id = states.id_at_final(id);
            }
        }
    }
    Ok(Reference { chain, stage_commits, final_commit, repairs, merged, states })
}

/// The first stage that changes only tests, where tests live in the sources (elsewhere a
/// mined stage always changes code).
fn test_only_stage(states: &States, language: Language, stages: usize) -> Result<Option<usize>, String> {
    if !carve_languages::support(language).facts().tests_in_sources {
        return Ok(None);
    }
    for k in 0..stages {
        if !stage_changes_code(states, language, k)? {
            return Ok(Some(k));
        }
    }
    Ok(None)
}

/// The first state that fails the build check, with the message, after pulling into states
/// the files they import before the stage that created them (bounded).
fn build_failure(states: &mut States, language: Language, scratch: &Path) -> Result<Option<(usize, String)>, String> {
    let mut failure = first_build_failure(states, language, scratch)?;
    // States older than the project's manifest (Go before `go.mod`) get the HEAD's.
    if let Some((_, message)) = &failure {
        if !states.adopt_project_files(message)?.is_empty() {
            failure = first_build_failure(states, language, scratch)?;
        }
    }
    for _ in 0..MAX_REPAIRS {
        let Some((k, message)) = &failure else { break };
        if states.pull_imported_files(*k, message)?.is_empty() {
            break;
        }
        failure = first_build_failure(states, language, scratch)?;
    }
    Ok(failure)
}

/// Repair state S_`k`, which fails the build check with `message`: pull into the stage before
/// it the newest commit outside the chain that changed a file the message names; an error
/// when there is none, or after [`MAX_REPAIRS`] such repairs.
fn pull_dependency(
    states: &States,
    stage_commits: &mut [Vec<String>],
    repairs: &mut Vec<Repair>,
    language: Language,
    k: usize,
    message: &str,
) -> Result<(), String> {
    let check = carve_languages::support(language).build_check_name();
    let tried = if repairs.is_empty() {
        String::new()
    } else {
        format!(
            " (after pulling {} into the chain)",
            repairs.iter().map(|r| format!("{} into stage {}", &r.commit[..8], r.stage)).collect::<Vec<_>>().join(", ")
        )
    };
    if repairs.len() >= MAX_REPAIRS {
        return Err(format!(
            "state S{k} does not pass the build check (`{check}`){tried}; gave up after {MAX_REPAIRS} repairs: {message}"
        ));
    }
    let Some((stage, commit, files)) = missing_dependency(states, stage_commits, message)? else {
        return Err(format!(
            "state S{k} does not pass the build check (`{check}`){tried}, and no commit outside the chain \
             changed a file the error names: {message}"
        ));
    };
    repairs.push(Repair::new(
        stage,
        commit.clone(),
        format!(
            "S{k} did not pass the build check (`{check}`); the error names {}, which this commit changed \
             after stage {stage}: {}",
            files.join(", "),
            first_lines(message, 3)
        ),
    ));
    stage_commits[stage].push(commit);
    let order = states.first_parent_order()?;
    stage_commits[stage].sort_by_key(|c| order.iter().position(|o| o == c).unwrap_or(usize::MAX));
    Ok(())
}

/// `message` with the scratch folder it was made in (`dirs`: its canonical and given paths) written as `.`: the folder is a
/// fresh temporary name per run, and the message goes into chain.json (byte-identical output).
fn without_dir(message: &str, dirs: &[&Path]) -> String {
    let mut out = message.to_string();
    for d in dirs {
        out = out.replace(&format!("{}/", d.display()), "./").replace(&d.display().to_string(), ".");
    }
    out
}

fn first_lines(text: &str, n: usize) -> String {
    text.lines().filter(|l| !l.trim().is_empty()).take(n).collect::<Vec<_>>().join(" | ")
}

/// The first state S_k that fails the language's build check, with the check's message.
fn first_build_failure(states: &States, language: Language, scratch: &Path) -> Result<Option<(usize, String)>, String> {
    for k in 0..states.states.len() {
        let dir = scratch.join(format!("build-s{k}"));
        let _ = std::fs::remove_dir_all(&dir);
        states.export(k, &dir)?;
        let res = carve_languages::support(language).build_check(&dir);
        let canonical = dir.canonicalize().unwrap_or_else(|_| dir.clone());
        let _ = std::fs::remove_dir_all(&dir);
        if let Err(e) = res {
            return Ok(Some((k, without_dir(&e.to_string(), &[&canonical, &dir]))));
        }
    }
    Ok(None)
}

/// Definitions taken out of per-definition files (added or changed by a stage, not yet kept)
/// whose name the build error `message` names as a whole word.
fn named_taken_out(
    states: &States,
    message: &str,
    keep: &BTreeSet<carve_languages::NodeId>,
) -> BTreeSet<carve_languages::NodeId> {
    let taken_out = states
        .by_definition
        .iter()
        .flat_map(|f| f.added.iter().chain(&f.changed).flatten())
        .filter(|id| !keep.contains(*id));
    repair::named_in_message(message, taken_out)
}

/// The newest commit outside the chain, after its first stage, that changed a file the build
/// error `message` names; with the stage it goes into (the last stage before it) and the files.
fn missing_dependency(
    states: &States,
    stage_commits: &[Vec<String>],
    message: &str,
) -> Result<Option<(usize, String, Vec<String>)>, String> {
    let order = states.first_parent_order()?;
    let pos = |c: &str| order.iter().position(|o| o == c);
    let in_chain: BTreeSet<&str> = stage_commits.iter().flatten().map(String::as_str).collect();
    let first = stage_commits.iter().flatten().filter_map(|c| pos(c)).min().unwrap_or(0);
    for (i, c) in order.iter().enumerate().rev() {
        if i <= first || in_chain.contains(c.as_str()) {
            continue;
        }
        let named: Vec<String> =
            states.commit_files(c)?.into_iter().filter(|f| repair::message_names_file(message, f)).collect();
        if named.is_empty() {
            continue;
        }
        // The last stage whose commits all come before `c`.
        let stage = stage_commits.iter().rposition(|cs| cs.iter().filter_map(|x| pos(x)).max().is_some_and(|m| m < i));
        if let Some(stage) = stage {
            return Ok(Some((stage, c.clone(), named)));
        }
    }
    Ok(None)
}

/// A source text without its comment lines and blank lines, each line trimmed: a change to
/// doc comments (doctests) or layout alone is no change to the code.
fn without_comments(text: &str) -> Vec<&str> {
    text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("//")).collect()
}

/// Whether stage `k` changes code: a code file (not a test file) that differs between the
/// code states W_k and W_(k+1) (its inline tests held at S0) other than in comments.
fn stage_changes_code(states: &States, language: Language, k: usize) -> Result<bool, String> {
    let (a, b) = (&states.code_states[k], &states.code_states[k + 1]);
    let files = crate::states::git_text(&states.dir, &["diff", "--name-only", "--no-renames", a, b])?;
    for f in files.lines().filter(|l| !l.is_empty()) {
        if role(language, f) != Role::Code {
            continue;
        }
        let at = |c: &str| git(&states.dir, &["show", &format!("{c}:{f}")], None).ok();
        let (x, y) = (at(a), at(b));
        match (&x, &y) {
            (Some(x), Some(y)) => {
                let (x, y) = (String::from_utf8_lossy(x), String::from_utf8_lossy(y));
                if without_comments(&x) != without_comments(&y) {
                    return Ok(true);
                }
            }
            _ => return Ok(true),
        }
    }
    Ok(false)
}

/// Merge stage `k` (it changed only tests, or cannot be gated) into its neighbour: the stage
/// before it, or the next one for stage 0. The stage's commits, tests and definitions join
/// that stage; `reason` says why, for `merged_stages`.
pub(super) fn merge_stage(
    chain: &mut Chain,
    stage_commits: &mut Vec<Vec<String>>,
    repairs: &mut [Repair],
    order: &[String],
    k: usize,
    reason: String,
) -> MergedStage {
    let into = k.saturating_sub(1);
    let commits = stage_commits.remove(k);
    let gone = chain.stages.remove(k);
    let pos = |c: &String| order.iter().position(|o| o == c).unwrap_or(usize::MAX);
    // The stage it joins is named by its own first commit in history order, before the merge.
    let into_commit = stage_commits[into].iter().min_by_key(|c| pos(c)).cloned().unwrap_or_default();
    stage_commits[into].extend(commits.iter().cloned());
    for c in stage_commits.iter_mut() {
        c.sort_by_key(pos);
    }
    let st = &mut chain.stages[into];
    st.commits.extend(gone.commits.iter().cloned());
    st.commits.sort_by_key(pos);
    st.commits.dedup();
    for (to, from) in [
        (&mut st.definitions_added, &gone.definitions_added),
        (&mut st.definitions_modified, &gone.definitions_modified),
        (&mut st.tests_added, &gone.tests_added),
        (&mut st.tests_modified, &gone.tests_modified),
        (&mut st.files, &gone.files),
    ] {
        to.extend(from.iter().cloned());
        to.sort();
        to.dedup();
    }
    st.lines += gone.lines;
    if k == 0 {
        // The stage it joined is stage 0 now: no earlier stage to link to.
        st.evidence.clear();
    }
    for (i, s) in chain.stages.iter_mut().enumerate() {
        s.index = i;
    }
    for r in repairs.iter_mut() {
        if r.stage > k || (r.stage == k && k > 0) {
            r.stage -= 1;
        }
    }
    MergedStage::new(gone.commits, into_commit, reason)
}

/// Take state S_`k`, which does not pass the build check, out of the chain: for S0 the first
/// stage leaves the chain (its commits stay in every state, as the base S0 builds on; recorded
/// with `into` = `S0`), for a later state the stage after it joins the stage before it (S_(k-1)
/// then goes straight to S_(k+1)). `reason` is the build failure (its first lines are kept).
pub(super) fn drop_state(chain: &mut Chain, order: &[String], k: usize, reason: &str) -> MergedStage {
    if k > 0 {
        let mut commits: Vec<Vec<String>> = chain.stages.iter().map(|s| s.commits.clone()).collect();
        let why = format!("{}; merged into the stage before it", first_lines(reason, 3));
        return merge_stage(chain, &mut commits, &mut [], order, k, why);
    }
    let gone = chain.stages.remove(0);
    for (i, s) in chain.stages.iter_mut().enumerate() {
        s.index = i;
        // Evidence links a stage to earlier stages of the chain: not to commits outside it.
        s.evidence.retain(|e| !gone.commits.contains(&e.from_commit));
    }
    if let Some(first) = chain.stages.first_mut() {
        first.evidence.clear();
    }
    let why = format!(
        "{}; the stage left the chain and its commits stay in every state, so the chain starts at what was S1",
        first_lines(reason, 3)
    );
    MergedStage::new(gone.commits, "S0".into(), why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    /// A build error printed from a scratch folder (`go vet` names it) reads the same from
    /// every run: the folder's fresh temporary name does not reach chain.json.
    #[test]
    fn a_build_message_does_not_name_its_scratch_folder() {
        let dir = Path::new("/tmp/.tmpAb12/build-s0");
        let real = Path::new("/private/tmp/.tmpAb12/build-s0");
        let msg = "# m\n/tmp/.tmpAb12/build-s0/a.go:3:1: undefined: x\nvet: /private/tmp/.tmpAb12/build-s0";
        assert_eq!(without_dir(msg, &[real, dir]), "# m\n./a.go:3:1: undefined: x\nvet: .");
    }

    /// A build error that names a definition taken out of a per-definition file (google/uuid:
    /// `undefined: setNodeID`) makes the states keep it; names that are only part of a word,
    /// and definitions already kept, do not.
    #[test]
    fn a_build_error_names_the_definitions_a_state_must_keep() {
        let states = States {
            dir: PathBuf::new(),
            repo: PathBuf::new(),
            states: vec![],
            final_commit: String::new(),
            shared: vec![],
            by_definition: vec![crate::states::DefinitionLevelFile::new(
                "node.go".into(),
                vec![vec!["node.go::setNodeID".into(), "node.go::ID".into()], vec![]],
                vec![vec![], vec!["node.go::UUID.NodeID".into()]],
                None,
            )],
            inline: BTreeMap::new(),
            code_states: vec![],
            language: Language::Go,
            pulled: vec![],
            moved: BTreeMap::new(),
            stage_commits: vec![],
        };
        let msg = "./node.go:77:5: undefined: setNodeID\n./uuid.go:9: uuid.NodeID undefined (type UUID has no field or method NodeID)\nIDs";
        let none = BTreeSet::new();
        assert_eq!(
            named_taken_out(&states, msg, &none),
            BTreeSet::from(["node.go::UUID.NodeID".to_string(), "node.go::setNodeID".to_string()])
        );
        let kept = BTreeSet::from(["node.go::setNodeID".to_string()]);
        assert_eq!(named_taken_out(&states, msg, &kept), BTreeSet::from(["node.go::UUID.NodeID".to_string()]));
    }

    /// A state that does not build is taken out: S0 by the first stage leaving the chain (its
    /// evidence gone from the stages after it), a later S_k by stage k joining stage k-1.
    #[test]
    fn an_unbuildable_state_is_taken_out_of_the_chain() {
        let ev = |from: &str| crate::mine::Evidence {
            kind: crate::mine::EvidenceKind::Calls,
            from: "f".into(),
            to: "t".into(),
            detail: String::new(),
            from_commit: from.into(),
            to_commit: String::new(),
            weight: 1.0,
            onto_addition: false,
        };
        let stage = |i: usize, c: &str, evidence: Vec<crate::mine::Evidence>| crate::mine::StageSummary {
            index: i,
            commits: vec![c.into()],
            title: c.into(),
            definitions_added: vec![],
            definitions_modified: vec![],
            tests_added: vec![format!("t{i}")],
            tests_modified: vec![],
            files: vec![],
            lines: 10,
            evidence,
        };
        let stages = vec![stage(0, "a", vec![]), stage(1, "b", vec![ev("a")]), stage(2, "c", vec![ev("a"), ev("b")])];
        let chain = Chain {
            chain_id: "x".into(),
            score: 1.0,
            found_by: "beam".into(),
            stages,
            shared_file_share: 1.0,
            review: None,
        };
        let order: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let message = "state S0 does not pass the build check (`go vet`):\nno packages to vet\n\nmore\nand more";
        let mut first = chain.clone();
        let m = drop_state(&mut first, &order, 0, message);
        assert_eq!((m.commits, m.into.as_str()), (vec!["a".to_string()], "S0"));
        assert!(
            m.reason.starts_with("state S0 does not pass the build check (`go vet`): | no packages to vet | more;")
        );
        assert_eq!(
            first.stages.iter().map(|s| (s.index, s.commits[0].as_str())).collect::<Vec<_>>(),
            [(0, "b"), (1, "c")]
        );
        assert!(first.stages[0].evidence.is_empty());
        assert_eq!(first.stages[1].evidence.iter().map(|e| e.from_commit.as_str()).collect::<Vec<_>>(), ["b"]);
        let mut later = chain.clone();
        let m = drop_state(&mut later, &order, 2, "S2 fails");
        assert_eq!((m.commits, m.into.as_str()), (vec!["c".to_string()], "b"));
        assert!(m.reason.contains("merged into the stage before it"), "{}", m.reason);
        assert_eq!(later.stages[1].commits, ["b", "c"]);
    }

    /// A mined stage that changes only tests joins the stage before it (stage 0 joins stage 1):
    /// commits in history order, tests and files united, stages renumbered, repairs moved.
    #[test]
    fn a_test_only_stage_is_merged_into_its_neighbour() {
        let stage = |i: usize, c: &str, test: &str| crate::mine::StageSummary {
            index: i,
            commits: vec![c.into()],
            title: c.into(),
            definitions_added: vec![],
            definitions_modified: vec![],
            tests_added: vec![test.into()],
            tests_modified: vec![],
            files: vec!["lib.rs".into()],
            lines: 10,
            evidence: vec![],
        };
        let mut chain = Chain {
            chain_id: "x".into(),
            score: 1.0,
            found_by: "beam".into(),
            stages: vec![stage(0, "a", "t0"), stage(1, "b", "t1"), stage(2, "c", "t2")],
            shared_file_share: 1.0,
            review: None,
        };
        let mut commits: Vec<Vec<String>> = vec![vec!["a".into()], vec!["b".into()], vec!["c".into(), "r".into()]];
        let mut repairs = vec![Repair::new(2, "r".into(), String::new())];
        let order: Vec<String> = ["a", "b", "r", "c"].map(String::from).to_vec();
        let m = merge_stage(&mut chain, &mut commits, &mut repairs, &order, 1, "why".into());
        assert_eq!((m.commits, m.into.as_str()), (vec!["b".to_string()], "a"));
        assert_eq!(commits, [vec!["a", "b"], vec!["r", "c"]]);
        assert_eq!(chain.stages[0].tests_added, ["t0", "t1"]);
        assert_eq!((chain.stages[1].index, repairs[0].stage), (1, 1));
        let m = merge_stage(&mut chain, &mut commits, &mut repairs, &order, 0, "why".into());
        assert_eq!(m.into, "r");
        assert_eq!(commits, [vec!["a", "b", "r", "c"]]);
        // Comments (doctests) and layout are no code change.
        assert_eq!(without_comments("fn f() {}\n/// ```\n/// f();\n/// ```\n"), without_comments("\n  fn f() {}\n"));
    }
}
