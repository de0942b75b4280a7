//! Extract: the masked state of a feature in an output directory (which must still
//! build: the build check of every language it changes runs here), its patches, contract
//! and problem statements, and the Level 2 packaging (the F2P tests rewritten to import
//! the feature from `agent_code`, and the reference `agent_code`).

use crate::error::bail;
use crate::{Context, Result};
use carve_extractor::contract::{Contract, build_contract};
use carve_extractor::{MaskOptions, MaskOutcome, MaskPlan, build_patches, mask_tree_with};
use carve_languages::NodeId;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::classify::{BuildRepair, Feature};
use crate::repair;
use crate::{Session, TestId};
use carve_core::{fs, tree};
use carve_languages::build::BuildCheckError;
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
    /// Rounds of build repair (empty when the first masked state built).
    pub build_repairs: Vec<BuildRepair>,
    /// The call statements of staying code the mask deleted with `extracted` (the gold
    /// patch restores them); the problem statement names where they were.
    pub removed_calls: Vec<carve_tracer::classify::RemovedCall>,
}

/// Which test files go whole, which test definitions go alone. A file all of whose tests
/// are F2P goes whole unless code of another file names a definition in it (a helper of a
/// Go package's `_test` file that another test file of the package calls): then its F2P
/// tests go one by one, and what only they used goes with them.
pub fn removal_of_tests(
    session: &Session,
    known: &BTreeSet<TestId>,
    f2p: &BTreeSet<TestId>,
) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut single = BTreeSet::new();
    // A doctest leaves with the definition that holds it, never as a test of its own (its
    // file is a source file).
    let f2p: BTreeSet<TestId> =
        f2p.iter().filter(|t| carve_languages::doctest_owner(&session.index, t).is_none()).cloned().collect();
    let f2p = &f2p;
    let file_of = |t: &str| crate::test_definition_file(&session.repo, &session.index, t);
    let file_map: std::collections::BTreeMap<&TestId, String> =
        known.iter().chain(f2p.iter()).map(|t| (t, file_of(t))).collect();
    let f2p_files: BTreeSet<&String> = f2p.iter().map(|t| &file_map[t]).collect();
    // A file goes whole when all its tests are F2P and no code elsewhere names it (Go: the
    // rest of the package may use its helpers)...
    let whole: BTreeSet<String> = f2p_files
        .iter()
        .filter(|file| known.iter().filter(|t| &file_map[*t] == **file).all(|t| f2p.contains(t)))
        .filter(|file| !named_from_elsewhere(&session.index, file))
        .map(|f| f.to_string())
        .collect();
    // ...and no file which stays imports it: such a file stays too, without its F2P tests
    // (the classifier decides the same: carve_tracer::classify::removal).
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

/// Whether a definition outside `file` names one of `file`'s definitions.
fn named_from_elsewhere(index: &carve_languages::DefinitionIndex, file: &str) -> bool {
    let in_file = |r: &NodeId| index.get(r).is_some_and(|t| t.path == file);
    let by_definitions = index
        .definitions
        .values()
        .filter(|d| d.path != file)
        .any(|d| d.references.iter().chain(d.load_references.iter().map(|l| &l.target)).any(in_file));
    by_definitions
        || index.files.values().filter(|f| f.path != file).any(|f| {
            f.module_references
                .iter()
                .chain(f.value_bindings.iter().flat_map(|b| &b.targets))
                .any(|m| in_file(&m.target))
        })
}

/// Rounds of build repair: after the first masking, the masked project is masked again
/// with what the compiler named kept, at most this many times, before it is rejected.
pub const MAX_BUILD_REPAIR_ROUNDS: usize = 3;

/// Mask `extracted` (with the call statements `calls` of the ones still extracted, and the given test files and tests) into `<dir>/masked`, check that
/// the masked project builds, build the patches and the contract. A build that fails is
/// repaired: the extracted definitions the compiler's messages name (see [`repair`]) are
/// kept and the tree is masked again, at most [`MAX_BUILD_REPAIR_ROUNDS`] times; the rounds
/// are in [`Extraction::build_repairs`] and `extracted` is what was finally masked.
pub fn extract(
    session: &Session,
    extracted: &BTreeSet<NodeId>,
    calls: &[carve_tracer::classify::RemovedCall],
    test_files: BTreeSet<String>,
    tests: BTreeSet<String>,
    dir: &Path,
) -> Result<Extraction> {
    let masked = dir.join("masked");
    let mut extracted = extracted.clone();
    let mut build_repairs: Vec<BuildRepair> = Vec::new();
    let outcome = loop {
        let plan = MaskPlan {
            extracted: extracted.clone(),
            remove_test_files: test_files.clone(),
            remove_tests: tests.clone(),
            remove_calls: calls_of(calls, &extracted),
        };
        let (outcome, checked) = mask_and_check(session, &plan, &masked)?;
        let Some((lang, command, output, report)) = checked else {
            for w in &outcome.warnings {
                session.progress.note(format!("warning: {w}"));
            }
            break outcome;
        };
        let round = build_repairs.len() + 1;
        let fail = |why: String| {
            crate::Error::msg(format!(
                "the masked {lang} project does not build ({command}) in {}{why}:\n{report}",
                masked.display()
            ))
        };
        if round > MAX_BUILD_REPAIR_ROUNDS {
            return Err(fail(format!(" after {MAX_BUILD_REPAIR_ROUNDS} build repair rounds")));
        }
        let repair = repair_round(session, lang, &masked, &extracted, round, &command, &output);
        if repair.moved.is_empty() {
            return Err(fail(" and no location the compiler names is in extracted code".into()));
        }
        session.progress.note(format!(
            "build repair {round}: `{command}` failed; keeping {} definition(s) it names: {}",
            repair.moved.len(),
            repair.moved.join(", ")
        ));
        for id in &repair.moved {
            extracted.remove(id);
        }
        build_repairs.push(repair);
        if extracted.is_empty() {
            return Err(fail(": build repair kept every extracted definition, nothing is left to extract".into()));
        }
    };
    let patches = build_patches(&session.repo, &masked, &outcome)?;
    for w in &patches.warnings {
        session.progress.note(format!("warning: {w}"));
    }
    let contract = contract_of(session, &extracted, &patches.test)?;
    let removed_calls = calls.iter().filter(|c| extracted.contains(&c.target)).cloned().collect();
    Ok(Extraction {
        masked,
        extracted,
        outcome,
        mask_patch: patches.mask,
        gold_patch: patches.gold,
        test_patch: patches.test,
        contract,
        build_repairs,
        removed_calls,
    })
}

/// A failed build check: the language, its command, the compiler's output and the report.
type BuildFailure = (carve_languages::Language, String, String, String);

/// Masks `plan` into `masked` (in place of what is there) and runs the build check of every
/// language it changes: the outcome, and the first failed check (language, command,
/// compiler output, report) if any.
fn mask_and_check(session: &Session, plan: &MaskPlan, masked: &Path) -> Result<(MaskOutcome, Option<BuildFailure>)> {
    session.progress.step("extract: masking");
    if masked.exists() {
        std::fs::remove_dir_all(masked)?;
    }
    let options = MaskOptions { python: session.config.test.interpreter().map(Path::to_path_buf) };
    let outcome = mask_tree_with(&session.repo, &session.index, plan, masked, &options)
        .context("failed to write the masked state")?;
    // Tests and build checks of the masked state need the installed dependencies too.
    tree::link_dependencies(&session.repo, masked, carve_languages::skip_policy())?;
    // Or, for the build check only, those of the environment `carve env` made (the
    // repository has none of its own then: a TypeScript project's `tsc` is in the
    // environment's node_modules). They go again after it: the masked state is the one the
    // patches restore to the original tree, byte for byte; test runs link them themselves.
    let linked = match &session.environment {
        Some(active) => active.prepare(masked)?,
        None => Vec::new(),
    };
    let checked = build_check(session, &outcome, masked);
    for path in linked {
        std::fs::remove_dir_all(&path)
            .or_else(|_| std::fs::remove_file(&path))
            .with_context(|| format!("failed to remove {} after the build check", path.display()))?;
    }
    Ok((outcome, checked?))
}

/// The contract of `extracted`, with the names the hidden tests (`test_patch`) use that it
/// did not show yet added.
fn contract_of(session: &Session, extracted: &BTreeSet<NodeId>, test_patch: &str) -> Result<Contract> {
    let mut contract = build_contract(&session.index, extracted);
    // A name the hidden tests use that the contract does not show yet belongs in it.
    let shown = serde_json::to_string(&contract)?;
    let needed = crate::leakage::unnamed_extracted(&session.index, extracted, test_patch, &shown);
    if !needed.is_empty() {
        session.progress.note(format!(
            "the F2P tests use {} that the contract did not show; listed in it",
            needed.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
        contract.add_needed(&session.index, extracted, &needed);
    }
    Ok(contract)
}

/// The call statements to delete with `extracted`, per file: those of `calls` whose target
/// is still extracted (a build repair may have kept it).
fn calls_of(
    calls: &[carve_tracer::classify::RemovedCall],
    extracted: &BTreeSet<NodeId>,
) -> std::collections::BTreeMap<String, Vec<carve_languages::index::Span>> {
    let mut out: std::collections::BTreeMap<String, Vec<carve_languages::index::Span>> = Default::default();
    for c in calls.iter().filter(|c| extracted.contains(&c.target)) {
        out.entry(c.path.clone()).or_default().push(c.span);
    }
    out
}

/// One repair round: the locations the failed `command` names, and the extracted
/// definitions (with their nested ones) they map to in the original tree.
fn repair_round(
    session: &Session,
    lang: carve_languages::Language,
    masked: &Path,
    extracted: &BTreeSet<NodeId>,
    round: usize,
    command: &str,
    output: &str,
) -> BuildRepair {
    let index = &session.index;
    let locations = carve_languages::support(lang).build_error_locations(masked, output);
    let mut moved: Vec<NodeId> = Vec::new();
    let mut messages: Vec<String> = Vec::new();
    for (path, line) in &locations {
        let masked_text = std::fs::read_to_string(masked.join(path)).unwrap_or_default();
        let original = std::fs::read_to_string(session.repo.join(path)).unwrap_or_default();
        let orig_line = repair::original_line(&original, &masked_text, *line as usize);
        let masked_line = masked_text.lines().nth((*line as usize).saturating_sub(1)).unwrap_or("");
        let message = repair::message_at(output, path, *line);
        for id in repair::named_definitions(index, extracted, path, orig_line, &message, masked_line) {
            // Nested definitions go with the one kept: they are part of its body.
            let nested = extracted.iter().filter(|n| repair::is_nested_in(index, n, &id));
            for n in std::iter::once(&id).chain(nested) {
                if !moved.contains(n) {
                    moved.push(n.clone());
                    messages.push(message.clone());
                }
            }
        }
    }
    BuildRepair { round, command: command.to_string(), locations, moved, messages }
}

/// The masked project must still build (TypeScript, Go and Rust keep stubs for that): run
/// the build check of every language whose files the mask changed. The first failure:
/// its language, command, the compiler's output and the whole report.
fn build_check(
    session: &Session,
    outcome: &MaskOutcome,
    masked: &Path,
) -> Result<Option<(carve_languages::Language, String, String, String)>> {
    let languages: BTreeSet<carve_languages::Language> =
        outcome.changed_files.iter().filter_map(|p| session.index.files.get(p).map(|f| f.language)).collect();
    // What the environment links into every run tree (a Cargo.lock `carve env` generated for a
    // crate that commits none) is linked here too for the check, and taken out after it, so the
    // masked tree (the mask patch's source) stays as masked. Without it cargo resolved the
    // crate afresh offline and failed on a dev-dependency the lockfile pins for another target
    // (smol-rs/fastrand's wasm-bindgen-test).
    let linked = match &session.environment {
        Some(env) => env.prepare(masked)?,
        None => Vec::new(),
    };
    let checked = check_languages(session, languages, masked);
    for path in &linked {
        let gone = if path.is_dir() && !path.is_symlink() {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path)
        };
        gone.with_context(|| format!("failed to take the environment's {} out of the masked tree", path.display()))?;
    }
    checked
}

fn check_languages(
    session: &Session,
    languages: BTreeSet<carve_languages::Language>,
    masked: &Path,
) -> Result<Option<(carve_languages::Language, String, String, String)>> {
    for lang in languages {
        let check = carve_languages::support(lang);
        session.progress.step(format!("extract: {}", check.build_check_name()));
        let vars = session.environment.as_ref().map(|e| e.vars()).unwrap_or_default();
        match check.build_check_for(masked, &session.config.test, &vars) {
            Ok(()) => {}
            Err(BuildCheckError::Failed { command, root, detail, output }) => {
                let report = format!("`{command}` failed in {}{detail}:\n{output}", root.display());
                return Ok(Some((lang, command, output, report)));
            }
            Err(other) => {
                bail!(
                    "the masked {lang} project does not build ({}) in {}:\n{other}",
                    check.build_check_name(),
                    masked.display()
                );
            }
        }
    }
    Ok(None)
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

/// The problem statement of a task at `level`; `describe` (`--describe CMD`) writes its
/// feature description.
pub fn statement(
    session: &Session,
    ext: &Extraction,
    f2p: &BTreeSet<TestId>,
    level: u8,
    describe: Option<&str>,
) -> Result<String> {
    use carve_extractor::statement::{Level, StatementContext, render_problem_statement};
    let level = if level == 2 { Level::Two } else { Level::One };
    let repo = session.identity.full_name();
    let mut ctx = StatementContext::new(level, repo, f2p.iter().cloned().collect());
    if level == Level::Two
        && let Ok(package) =
            carve_extractor::level2::package_import(ext.contract.language, &session.repo, &session.index, AGENT_PACKAGE)
    {
        ctx.package_support = carve_extractor::level2::support_note(
            &ext.contract,
            &session.repo,
            &session.index,
            &ext.extracted,
            &package,
        );
        ctx.package = package;
    }
    // The F2P tests' own docstrings describe the feature best.
    let tests: Vec<String> = f2p.iter().cloned().collect();
    ctx.test_docstrings = carve_extractor::statement::test_docstrings(&session.index, &tests);
    ctx.facts = carve_extractor::statement::test_facts(&session.repo, &session.index, &tests);
    let name = |id: &str| session.index.get(id).map(|d| d.qualname.clone()).unwrap_or_else(|| id.to_string());
    ctx.call_sites = ext
        .removed_calls
        .iter()
        .map(|c| carve_extractor::statement::CallSite {
            path: c.path.clone(),
            line: c.line,
            caller: name(&c.caller),
            callee: name(&c.target),
        })
        .collect();
    ctx.call_sites.sort();
    ctx.call_sites.dedup();
    if let Some(cmd) = describe {
        ctx.description = Some(run_describe(cmd, &ext.contract, &ctx)?);
    }
    Ok(render_problem_statement(&ext.contract, &ctx))
}

/// `--describe CMD`: the statement's facts as JSON on the command's stdin, the feature
/// description as Markdown on its stdout.
fn run_describe(cmd: &str, contract: &Contract, ctx: &carve_extractor::statement::StatementContext) -> Result<String> {
    use std::io::{Seek, Write};
    let input = serde_json::json!({
        "version": 1,
        "repo": ctx.repo,
        "level": if ctx.level == carve_extractor::statement::Level::Two { 2 } else { 1 },
        "f2p_tests": ctx.f2p_tests,
        "test_docstrings": ctx.test_docstrings,
        "examples": ctx.facts.examples,
        "constants": ctx.facts.constants,
        "contract": contract,
        "generated_description": carve_extractor::statement::feature_description(contract, ctx),
    });
    // Through a file, not a pipe: a command that does not read stdin must not kill carve.
    let mut file = tempfile::tempfile()?;
    file.write_all(input.to_string().as_bytes())?;
    file.seek(std::io::SeekFrom::Start(0))?;
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(std::process::Stdio::from(file))
        .output()
        .with_context(|| format!("failed to start the describe command `{cmd}`"))?;
    if !out.status.success() {
        bail!("the describe command `{cmd}` failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim());
    }
    let text = String::from_utf8(out.stdout)
        .map_err(|_| crate::Error::msg(format!("the describe command `{cmd}` printed something that is not UTF-8")))?;
    let text = text.trim();
    if text.is_empty() {
        bail!("the describe command `{cmd}` printed nothing; it must print the feature description as Markdown");
    }
    Ok(text.to_string())
}

/// The package a Level 2 task asks for (the language decides its files).
pub const AGENT_PACKAGE: &str = "agent_code";

/// The patches of a Level 2 task.
pub struct Level2Package {
    /// Adds the solution package (the reference solution); for a language whose reference
    /// re-exports the original (`Level2Packaging::reference_restores_original`), restores the
    /// repository too.
    pub gold_patch: String,
    /// The F2P tests rewritten to import the feature from the package, and the ones carried
    /// into a new test file (Rust's doctests).
    pub test_patch: String,
    /// The Level 2 task's F2P tests: the feature's, each carried test under its new id.
    pub f2p: BTreeSet<TestId>,
}

/// Level 2: the F2P tests rewritten to import the feature from the package `agent_code`
/// (the language decides its import path and files); the gold patch adds the language's
/// reference solution. `Ok(Err(reason))` when the language cannot package this feature.
pub fn level2(
    session: &Session,
    feature: &Feature,
    ext: &Extraction,
    dir: &Path,
) -> Result<std::result::Result<Level2Package, String>> {
    use carve_extractor::level2;
    let language = ext.contract.language;
    let package = match level2::package_import(language, &session.repo, &session.index, AGENT_PACKAGE) {
        Ok(p) => p,
        Err(e) => return Ok(Err(e.to_string())),
    };
    // Each F2P test with the file its definition is in (a source file for Rust's tests in
    // `#[cfg(test)]` modules, which `test_definition_file` does not name).
    let file_of = |t: &TestId| {
        carve_languages::test_definitions(&session.repo, &session.index, t)
            .ok()
            .and_then(|defs| defs.iter().find_map(|d| session.index.get(d)).map(|d| d.path.clone()))
            .unwrap_or_else(|| crate::test_definition_file(&session.repo, &session.index, t))
    };
    let f2p: Vec<TestId> = feature.f2p.iter().cloned().collect();
    let carried = match level2::carried_tests(language, &session.repo, &session.index, &ext.extracted, &f2p, &package) {
        Ok(c) => c,
        Err(e @ carve_extractor::ExtractError::Level2 { .. }) => return Ok(Err(e.to_string())),
        Err(e) => return Err(e.into()),
    };
    let carried_ids = carried.as_ref().map(|c| c.ids.clone()).unwrap_or_default();
    let kept: Vec<&TestId> = f2p.iter().filter(|t| !carried_ids.contains_key(*t)).collect();
    let tests: Vec<(String, String)> = kept.iter().map(|t| (t.to_string(), file_of(t))).collect();
    if let Some(reason) = level2::tests_blocker(language, &session.index, &tests) {
        return Ok(Err(reason));
    }
    let reference =
        match level2::reference_package(&ext.contract, &session.repo, &session.index, &ext.extracted, &package) {
            Ok(r) => r,
            Err(e @ carve_extractor::ExtractError::Level2 { .. }) => return Ok(Err(e.to_string())),
            Err(e) => return Err(e.into()),
        };
    let mut test_files: BTreeSet<String> =
        kept.iter().map(|t| crate::test_definition_file(&session.repo, &session.index, t)).collect();
    // Test files the mask changed beside them (an import of a name that left, in a module of
    // test classes another test file subclasses: itsdangerous' `test_serializer.py`): the
    // Level 1 test patch restores them, so the Level 2 one restores and rewrites them too.
    for path in carve_core::patch::patch_paths(&ext.test_patch) {
        if session.index.files.get(&path).is_some_and(|f| f.is_test) {
            test_files.insert(path);
        }
    }
    // Trees to diff: masked, masked + rewritten tests, masked + reference agent_code.
    let with_tests = dir.join("l2-tests");
    tree::shadow_copy(&ext.masked, &with_tests, carve_languages::skip_policy())?;
    level2::write_rewritten_tests(&session.repo, &session.index, &ext.extracted, &test_files, &package, &with_tests)?;
    if let Some(c) = &carried {
        fs::write_atomic(&with_tests.join(&c.path), c.text.as_bytes())?;
        test_files.insert(c.path.clone());
    }
    let test_patch = carve_core::patch::unified_diff(&ext.masked, &with_tests, &test_files)?;
    let f2p = f2p.iter().map(|t| carried_ids.get(t).unwrap_or(t).clone()).collect();
    // Masked + the reference package, with the project files that name it (Rust: the
    // manifests and Cargo.lock); the gold patch is what differs from the masked state.
    let agent = dir.join("l2-agent");
    tree::shadow_copy(&ext.masked, &agent, carve_languages::skip_policy())?;
    copy_environment_files(session, &agent)?;
    let mut agent_files: BTreeSet<String> = BTreeSet::new();
    for file in &reference {
        fs::write_atomic(&agent.join(&file.path), file.text.as_bytes())?;
        agent_files.insert(file.path.clone());
    }
    match level2::write_project_files(language, &agent, &package, &environment_vars(session)) {
        Ok(files) => agent_files.extend(files),
        Err(e @ carve_extractor::ExtractError::Level2 { .. }) => return Ok(Err(e.to_string())),
        Err(e) => return Err(e.into()),
    }
    let agent_patch = carve_core::patch::unified_diff(&ext.masked, &agent, &agent_files)?;
    let _ = std::fs::remove_dir_all(&agent);
    let gold_patch = match level2::reference_restores_original(language) {
        true => format!("{}{}", ext.gold_patch, agent_patch),
        false => agent_patch,
    };
    Ok(Ok(Level2Package { gold_patch, test_patch, f2p }))
}

/// Copies of the files the environment links into every run where the project has none of
/// its own (Rust's `Cargo.lock` of a crate that commits none) into `tree`, which lacks them:
/// the Level 2 package's project files must update them (a link would write into the
/// environment), and a run then uses the tree's own.
fn copy_environment_files(session: &Session, tree: &Path) -> Result<()> {
    let Some(env) = &session.environment else { return Ok(()) };
    for (from, rel) in env.for_runs().linked {
        let to = tree.join(&rel);
        if from.is_file() && std::fs::symlink_metadata(&to).is_err() {
            std::fs::copy(&from, &to)
                .with_context(|| format!("failed to copy {} into {}", from.display(), tree.display()))?;
        }
    }
    Ok(())
}

/// An empty `agent_code` package of `language` in `tree`: the Level 2 state before the
/// solution is written; `gold_patch` is the reference's, whose other files (Go: the packages
/// of a feature that spans several) are written empty too.
pub fn write_empty_agent_code(
    session: &Session,
    tree: &Path,
    language: carve_languages::Language,
    gold_patch: &str,
) -> Result<()> {
    copy_environment_files(session, tree)?;
    let empty = carve_extractor::level2::empty_package(language, AGENT_PACKAGE)?;
    fs::write_atomic(&tree.join(&empty.path), empty.text.as_bytes())?;
    let added: Vec<&str> = gold_patch.lines().filter_map(|l| l.strip_prefix("+++ b/")).collect();
    for file in carve_extractor::level2::empty_files(language, AGENT_PACKAGE, &added)? {
        fs::write_atomic(&tree.join(&file.path), file.text.as_bytes())?;
    }
    carve_extractor::level2::write_project_files(language, tree, AGENT_PACKAGE, &environment_vars(session))?;
    Ok(())
}

/// The variables of the session's environment for its tools (none without an environment).
fn environment_vars(session: &Session) -> Vec<(String, String)> {
    session.environment.as_ref().map(|e| e.for_runs().vars).unwrap_or_default()
}
