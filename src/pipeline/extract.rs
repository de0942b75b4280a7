//! Extract: the masked state of a feature in an output directory (which must still
//! build: the build check of every language it changes runs here), its patches, contract
//! and problem statements, and the Level 2 packaging (the F2P tests rewritten to import
//! the feature from `agent_code`, and the reference `agent_code`).

use anyhow::{Context, Result, bail};
use carve_extractor::contract::{Contract, build_contract};
use carve_extractor::{MaskOptions, MaskOutcome, MaskPlan, build_patches, mask_tree_with};
use carve_languages::NodeId;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::classify::Feature;
use super::{Session, TestId};
use crate::workspace;
use carve_tracer::classify::removal;

/// The masked state of one feature and everything derived from it.
pub struct Extraction {
    pub masked: PathBuf,
    pub extracted: BTreeSet<NodeId>,
    pub outcome: MaskOutcome,
    pub mask_patch: String,
    pub gold_patch: String,
    pub test_patch: String,
    pub contract: Contract,
}

/// Which test files go whole, which test definitions go alone.
pub fn removal_of_tests(
    session: &Session,
    known: &BTreeSet<TestId>,
    f2p: &BTreeSet<TestId>,
) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut single = BTreeSet::new();
    // The test file of an id: the file of the test definition the language maps it to when
    // that is a test file (a Go id `importpath/TestX/sub` names no file), else the id's
    // file part.
    let language = session.config.language;
    let file_of = |t: &str| -> String {
        if let Ok(defs) = carve_languages::test_definitions(&session.repo, &session.index, t) {
            if let Some(def) = defs.iter().find_map(|d| session.index.get(d)) {
                if carve_languages::is_test_path(language, &def.path) {
                    return def.path.clone();
                }
            }
        }
        super::test_file(t).to_string()
    };
    let file_map: std::collections::BTreeMap<&TestId, String> =
        known.iter().chain(f2p.iter()).map(|t| (t, file_of(t))).collect();
    let f2p_files: BTreeSet<&String> = f2p.iter().map(|t| &file_map[t]).collect();
    let whole: BTreeSet<String> = f2p_files
        .iter()
        .filter(|file| known.iter().filter(|t| &file_map[*t] == **file).all(|t| f2p.contains(t)))
        .map(|f| f.to_string())
        .collect();
    // A file that a file which stays imports stays too, without its F2P tests (the
    // classifier decides the same: carve_tracer::classify::removal).
    let files = removal::deletable_test_files(&session.index, &whole);
    let inherited = removal::inherited_classes(&session.index, &files);
    for t in f2p.iter().filter(|t| !files.contains(&file_map[*t])) {
        // Tests of a class that a class which stays inherits run there too: they stay.
        let inherited_test = carve_languages::test_definitions(&session.repo, &session.index, t)
            .is_ok_and(|defs| defs.iter().any(|d| removal::in_inherited_class(&session.index, d, &inherited)));
        if !inherited_test {
            single.insert(t.clone());
        }
    }
    (files, single)
}

/// Mask `extracted` (and the given test files and tests) into `<dir>/masked`, build the
/// patches and the contract, and check that the masked project builds.
pub fn extract(
    session: &Session,
    extracted: &BTreeSet<NodeId>,
    test_files: BTreeSet<String>,
    tests: BTreeSet<String>,
    dir: &Path,
) -> Result<Extraction> {
    session.progress.step("extract: masking");
    let masked = dir.join("masked");
    if masked.exists() {
        std::fs::remove_dir_all(&masked)?;
    }
    let plan = MaskPlan { extracted: extracted.clone(), remove_test_files: test_files.clone(), remove_tests: tests };
    let options = MaskOptions { python: session.config.test.interpreter().map(Path::to_path_buf) };
    let outcome = mask_tree_with(&session.repo, &session.index, &plan, &masked, &options)
        .context("failed to write the masked state")?;
    // Tests and build checks of the masked state need the installed dependencies too.
    workspace::link_dependencies(&session.repo, &masked)?;
    for w in &outcome.warnings {
        session.progress.note(format!("warning: {w}"));
    }
    let patches = build_patches(&session.repo, &masked, &outcome)?;
    let contract = build_contract(&session.index, extracted);
    build_check(session, &outcome, &masked)?;
    Ok(Extraction {
        masked,
        extracted: extracted.clone(),
        outcome,
        mask_patch: patches.mask,
        gold_patch: patches.gold,
        test_patch: patches.test,
        contract,
    })
}

/// The masked project must still build (TypeScript, Go and Rust keep stubs for that): run
/// the build check of every language whose files the mask changed.
fn build_check(session: &Session, outcome: &MaskOutcome, masked: &Path) -> Result<()> {
    let languages: BTreeSet<carve_languages::Language> =
        outcome.changed_files.iter().filter_map(|p| session.index.files.get(p).map(|f| f.language)).collect();
    for lang in languages {
        let check = carve_languages::support(lang);
        session.progress.step(format!("extract: {}", check.build_check_name()));
        if let Err(report) = check.build_check(masked) {
            bail!(
                "the masked {lang} project does not build ({}) in {}:\n{report}",
                check.build_check_name(),
                masked.display()
            );
        }
    }
    Ok(())
}

/// `--remove` node ids, each checked against the index (an unknown one is an error that
/// lists close matches).
pub fn explicit_removal(session: &Session, ids: &[String]) -> Result<BTreeSet<NodeId>> {
    let mut set = BTreeSet::new();
    for id in ids {
        if session.index.get(id).is_none() {
            let known: BTreeSet<String> = session.index.definitions.keys().cloned().collect();
            let close = carve_languages::runner::close_matches(id, &known);
            bail!(
                "no definition `{id}` in the index{}",
                if close.is_empty() { String::new() } else { format!("; close matches:\n  {}", close.join("\n  ")) }
            );
        }
        set.insert(id.clone());
    }
    Ok(set)
}

/// `--remove-tests` arguments: whole files, or single test ids.
pub fn split_test_args(session: &Session, args: &[String]) -> (BTreeSet<String>, BTreeSet<String>) {
    let files = session.test_files();
    let mut whole = BTreeSet::new();
    let mut single = BTreeSet::new();
    for a in args {
        if files.contains(a) {
            whole.insert(a.clone());
        } else {
            single.insert(a.clone());
        }
    }
    (whole, single)
}

/// The problem statement of a task at `level`.
pub fn statement(session: &Session, ext: &Extraction, f2p: &BTreeSet<TestId>, level: u8) -> String {
    use carve_extractor::statement::{Level, StatementContext, render_problem_statement};
    let level = if level == 2 { Level::Two } else { Level::One };
    let repo = format!("{}/{}", session.identity.owner, session.identity.name);
    let mut ctx = StatementContext::new(level, repo, f2p.iter().cloned().collect());
    // The F2P tests' own docstrings describe the feature best.
    let tests: Vec<String> = f2p.iter().cloned().collect();
    ctx.test_docstrings = carve_extractor::statement::test_docstrings(&session.index, &tests);
    render_problem_statement(&ext.contract, &ctx)
}

/// The package a Level 2 task asks for (the language decides its files).
pub const AGENT_PACKAGE: &str = "agent_code";

/// The patches of a Level 2 task.
pub struct Level2Package {
    /// Restores the repository and adds an `agent_code` that re-exports the feature.
    pub gold_patch: String,
    /// The F2P tests rewritten to import the feature from `agent_code`.
    pub test_patch: String,
}

/// Level 2: the F2P tests rewritten to import the feature from `agent_code`; the gold
/// patch restores the repository and adds an `agent_code` that re-exports it.
pub fn level2(session: &Session, feature: &Feature, ext: &Extraction, dir: &Path) -> Result<Level2Package> {
    use carve_extractor::level2;
    let test_files: BTreeSet<String> = feature.f2p.iter().map(|t| super::test_file(t).to_string()).collect();
    // Trees to diff: masked, masked + rewritten tests, masked + reference agent_code.
    let with_tests = dir.join("l2-tests");
    workspace::shadow_copy(&ext.masked, &with_tests)?;
    level2::write_rewritten_tests(
        &session.repo,
        &session.index,
        &ext.extracted,
        &test_files,
        AGENT_PACKAGE,
        &with_tests,
    )?;
    let test_patch = carve_extractor::unified_diff(&ext.masked, &with_tests, &test_files)?;
    let agent = dir.join("l2-agent");
    std::fs::create_dir_all(agent.join("before"))?;
    let reference = level2::reference_package(&ext.contract, AGENT_PACKAGE)?;
    workspace::write_atomic(&agent.join("after").join(&reference.path), reference.text.as_bytes())?;
    let agent_files: BTreeSet<String> = [reference.path.clone()].into();
    let agent_patch = carve_extractor::unified_diff(&agent.join("before"), &agent.join("after"), &agent_files)?;
    Ok(Level2Package { gold_patch: format!("{}{}", ext.gold_patch, agent_patch), test_patch })
}

/// An empty `agent_code` package of `language` in `tree`: the Level 2 state before the
/// solution is written.
pub fn write_empty_agent_code(tree: &Path, language: carve_languages::Language) -> Result<()> {
    let empty = carve_extractor::level2::empty_package(language, AGENT_PACKAGE)?;
    workspace::write_atomic(&tree.join(&empty.path), empty.text.as_bytes())
}
