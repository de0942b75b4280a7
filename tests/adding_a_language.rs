//! `docs/adding-a-language.md` made executable (issue 25): the checklist names places in the
//! repository, and every language is in each of them.
//!
//! - Every repository path the doc names in backticks exists (`<lang>` stands for each
//!   language folder, any other `<…>` for any name), so the doc cannot send a developer to a
//!   file that is not there.
//! - For every [`Language`] variant, the places a language touches are there: its folder
//!   `languages/src/<lang>/` (JavaScript's is TypeScript's, the first language of its family)
//!   with the shape of the doc's section 2, its `FromStr` name, its arm in `support()` (and
//!   every arm's variant is in `Language::ALL`), its queries (each loaded by its folder's
//!   code), its runner-cases fixtures (each named by a runner table), and, for a family's
//!   first language, a project fixture, its end-to-end test and its rows in
//!   `tests/e2e_languages.rs`.
//! - The doc names each of those places, so this test and the checklist cannot drift apart.

use std::path::Path;

use carve_languages::{Language, LanguageSupport, families, support};

const DOC: &str = "docs/adding-a-language.md";

/// The files that hold runner tables: each runner-cases fixture is named by one of them.
const RUNNER_TABLES: &[&str] = &["languages/tests/runners.rs", "languages/tests/typescript_runner.rs"];

/// The places this test checks, as the doc names them: the doc must name each.
const PLACES: &[&str] = &[
    "languages/src/<lang>/",
    "languages/src/registry.rs",
    "languages/queries/<lang>/<purpose>.scm",
    "languages/tests/runners.rs",
    "languages/tests/typescript_runner.rs",
    "fixtures/<lang>/runner-cases",
    "fixtures/<lang>/<project>/",
    "tests/e2e_languages.rs",
    "tests/e2e_<lang>.rs",
];

/// Whether implementation `s` has a thing only some languages have.
type Has = fn(&dyn LanguageSupport) -> bool;

/// The entries of the doc's folder shape that only some languages have, and whether `s` has one.
const CONDITIONAL: &[(&str, Has)] =
    &[("trace.rs", |s| s.trace_shim().is_some()), ("env.rs", |s| s.environment().is_some())];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A language's name in paths: `typescript`, `javascript`, `go` …
fn lang_name(lang: Language) -> String {
    format!("{lang:?}").to_lowercase()
}

/// The folder of a language's implementation: its family's first language's
/// (`javascript` → `typescript`).
fn folder_of(lang: Language) -> String {
    lang_name(support(lang).family()[0])
}

/// What `<lang>` stands for in the doc: one folder per implementation.
fn lang_folders() -> Vec<String> {
    families().map(|s| lang_name(s.language())).collect()
}

/// The spans of `text` in single backticks, outside fenced code blocks (a span may go on
/// to the next line).
fn backticked(text: &str) -> Vec<String> {
    let mut prose = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    prose.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

/// Whether a backticked span names a repository path: one word with a `/`, of path
/// characters only (`a/b.rs`, `fixtures/<lang>/<project>/`; not `go build ./...`, not `a::b`).
fn is_path(span: &str) -> bool {
    span.contains('/')
        && !span.starts_with('.')
        && span.chars().all(|c| c.is_ascii_alphanumeric() || "_-./<>".contains(c))
}

/// Whether `pattern` exists under `dir`: a component `<…>` (with any literal prefix and
/// suffix, as `<purpose>.scm`) matches any entry; a trailing `/` asks for a folder.
fn exists(dir: &Path, pattern: &str) -> bool {
    let (first, rest) = match pattern.split_once('/') {
        Some((first, rest)) => (first, Some(rest)),
        None => (pattern, None),
    };
    let found = |path: &Path| match rest {
        None => path.exists(),
        Some("") => path.is_dir(),
        Some(rest) => exists(path, rest),
    };
    match (first.find('<'), first.find('>')) {
        (Some(open), Some(close)) if open < close => {
            let (prefix, suffix) = (&first[..open], &first[close + 1..]);
            let Ok(entries) = std::fs::read_dir(dir) else { return false };
            entries.flatten().any(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with(prefix) && name.ends_with(suffix) && found(&e.path())
            })
        }
        _ => found(&dir.join(first)),
    }
}

/// The paths doc `text` names that are not under `root`, with `<lang>` expanded to each of
/// `langs`.
fn missing_paths(root: &Path, text: &str, langs: &[String]) -> Vec<String> {
    let mut missing = Vec::new();
    for span in backticked(text).iter().filter(|s| is_path(s)) {
        if span.contains("<lang>") {
            for lang in langs {
                if !exists(root, &span.replace("<lang>", lang)) {
                    missing.push(format!("`{span}` (for <lang> = {lang})"));
                }
            }
        } else if !exists(root, span) {
            missing.push(format!("`{span}`"));
        }
    }
    missing.dedup();
    missing
}

/// One entry of the doc's folder shape: `index.rs  // + index/: …`.
#[derive(Debug, PartialEq)]
struct ShapeEntry {
    file: String,
    /// `+ index/`: the folder of the same name is there too.
    with_folder: bool,
    /// `…, when there is one`: only languages that have the thing have it.
    conditional: bool,
}

/// The folder shape the doc's fenced block under `languages/src/<lang>/` gives.
fn folder_shape(text: &str) -> Vec<ShapeEntry> {
    let mut lines = text.lines().skip_while(|l| l.trim() != "languages/src/<lang>/").skip(1);
    let mut shape = Vec::new();
    for line in lines.by_ref().take_while(|l| !l.trim_start().starts_with("```")) {
        let (file, comment) = line.split_once("//").unwrap_or((line, ""));
        let file = file.trim();
        if file.is_empty() {
            continue;
        }
        let stem = file.trim_end_matches(".rs");
        shape.push(ShapeEntry {
            file: file.to_string(),
            with_folder: comment.trim_start().starts_with(&format!("+ {stem}/")),
            conditional: comment.trim_end().ends_with("when there is one"),
        });
    }
    shape
}

/// What `dir` lacks of `shape` for implementation `s`: a module `x.rs` may be `x/mod.rs`.
fn shape_lacks(dir: &Path, shape: &[ShapeEntry], s: &dyn LanguageSupport) -> Vec<String> {
    let mut lacks = Vec::new();
    for entry in shape {
        if entry.conditional {
            let Some((_, has)) = CONDITIONAL.iter().find(|(f, _)| *f == entry.file) else {
                lacks.push(format!(
                    "{}: the doc makes it optional; add to CONDITIONAL in tests/adding_a_language.rs when a language has one",
                    entry.file
                ));
                continue;
            };
            if !has(s) {
                continue;
            }
        }
        let stem = entry.file.trim_end_matches(".rs");
        if !dir.join(&entry.file).is_file() && !dir.join(stem).join("mod.rs").is_file() {
            lacks.push(entry.file.clone());
        }
        if entry.with_folder && !dir.join(stem).is_dir() {
            lacks.push(format!("{stem}/"));
        }
    }
    lacks
}

/// The body of `fn support(` in the registry, up to the function's closing brace.
fn support_body(registry: &str) -> &str {
    let start = registry.find("pub fn support(").expect("languages/src/registry.rs defines `pub fn support(`");
    let body = &registry[start..];
    &body[..body.find("\n}").unwrap_or(body.len())]
}

/// Every `.rs` file under `dir`, read.
fn rust_sources(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(std::fs::read_to_string(&path).unwrap());
        }
    }
}

/// The folders under `fixtures/<lang>/`, sorted.
fn fixture_dirs(lang: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root().join("fixtures").join(lang)) else { return Vec::new() };
    let mut dirs: Vec<String> =
        entries.flatten().filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    dirs.sort();
    dirs
}

fn is_runner_cases(dir: &str) -> bool {
    dir == "runner-cases" || dir.starts_with("runner-cases-")
}

/// Whether code (not a comment) of `source` names fixture `rel` (`go/shapes`) in a string.
fn names_fixture(source: &str, rel: &str) -> bool {
    source
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .any(|l| l.contains(&format!("\"{rel}\"")) || l.contains(&format!("\"fixtures/{rel}\"")))
}

/// What language `lang` lacks of the places the doc lists.
fn places_lacking(lang: Language, doc: &str) -> Vec<String> {
    let s = support(lang);
    let (name, folder) = (lang_name(lang), folder_of(lang));
    let mut lacks = Vec::new();

    // Section 2: the folder.
    let dir = root().join("languages/src").join(&folder);
    if !dir.join("mod.rs").is_file() {
        lacks.push(format!("languages/src/{folder}/mod.rs"));
    } else {
        let shape = folder_shape(doc);
        assert!(shape.len() >= 6, "{DOC}: no folder shape under `languages/src/<lang>/` ({shape:?})");
        lacks.extend(shape_lacks(&dir, &shape, s).into_iter().map(|l| format!("languages/src/{folder}/{l}")));
    }

    // Section 1: its names and the registry arm.
    if name.parse::<Language>() != Ok(lang) {
        lacks.push(format!("`{name}` among Language's FromStr names (languages/src/lib.rs)"));
    }
    if !support_body(&read("languages/src/registry.rs")).contains(&format!("Language::{lang:?} =>")) {
        lacks.push(format!("an arm `Language::{lang:?} =>` in support() (languages/src/registry.rs)"));
    }

    // Checklist 2: the queries, each loaded by the folder's code (queries_compile.rs compiles
    // every one).
    let queries = root().join("languages/queries").join(&name);
    let mut scm: Vec<String> = std::fs::read_dir(&queries)
        .map(|es| es.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    scm.retain(|f| f.ends_with(".scm"));
    scm.sort();
    if scm.is_empty() {
        lacks.push(format!("languages/queries/{name}/<purpose>.scm"));
    }
    if dir.is_dir() {
        let mut sources = Vec::new();
        rust_sources(&dir, &mut sources);
        for file in &scm {
            let rel = format!("queries/{name}/{file}");
            if !sources.iter().any(|s| s.contains(&format!("{rel}\")"))) {
                lacks.push(format!("languages/{rel} loaded with include_str! in languages/src/{folder}/"));
            }
        }
    }

    // Checklist 5 and 10: the runner-cases fixtures, each named by a runner table.
    let fixtures = fixture_dirs(&name);
    let runner_cases: Vec<&String> = fixtures.iter().filter(|d| is_runner_cases(d)).collect();
    if runner_cases.is_empty() {
        lacks.push(format!("fixtures/{name}/runner-cases (or runner-cases-<runner>)"));
    }
    let tables: Vec<String> = RUNNER_TABLES.iter().map(|t| read(t)).collect();
    for dir in runner_cases {
        if !tables.iter().any(|t| names_fixture(t, &format!("{name}/{dir}"))) {
            lacks.push(format!("a row for fixtures/{name}/{dir} in {}", RUNNER_TABLES.join(" or ")));
        }
    }

    // Checklist 10 and 11, for a family's first language: a project fixture and the
    // end-to-end tests over the language's fixtures.
    if folder == name {
        let projects: Vec<&String> = fixtures.iter().filter(|d| !is_runner_cases(d)).collect();
        if projects.is_empty() {
            lacks.push(format!("fixtures/{name}/<project>/"));
        }
        let e2e = read("tests/e2e_languages.rs");
        if !fixtures.iter().any(|d| names_fixture(&e2e, &format!("{name}/{d}"))) {
            lacks.push(format!("a test of a fixtures/{name}/ fixture in tests/e2e_languages.rs"));
        }
        let own = format!("tests/e2e_{name}.rs");
        if !root().join(&own).is_file() {
            lacks.push(own);
        } else if !projects.iter().any(|d| names_fixture(&read(&own), &format!("{name}/{d}"))) {
            lacks.push(format!("a test of a fixtures/{name}/<project>/ fixture in {own}"));
        }
    }
    lacks
}

#[test]
fn every_path_the_doc_names_exists() {
    let missing = missing_paths(root(), &read(DOC), &lang_folders());
    assert!(
        missing.is_empty(),
        "{DOC} names paths that do not exist (fix the doc: it must describe the code as it is):\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_doc_names_every_place_this_test_checks() {
    let doc = read(DOC);
    let spans = backticked(&doc);
    let unnamed: Vec<&&str> = PLACES.iter().filter(|p| !spans.iter().any(|s| s == *p)).collect();
    assert!(
        unnamed.is_empty(),
        "{DOC} does not name these places a language touches (name them in backticks in its checklist, \
         or drop them from PLACES in tests/adding_a_language.rs): {unnamed:?}"
    );
    for (file, _) in CONDITIONAL {
        assert!(
            folder_shape(&doc).iter().any(|e| e.file == *file && e.conditional),
            "{DOC}: `{file}`, when there is one"
        );
    }
}

/// The variants `support()` has an arm for.
fn registry_arms(registry: &str) -> Vec<&str> {
    support_body(registry)
        .split("Language::")
        .skip(1)
        .filter_map(|arm| arm.split_once(" =>").map(|(variant, _)| variant.trim()))
        .collect()
}

#[test]
fn every_variant_of_the_registry_is_in_language_all() {
    let all: Vec<String> = Language::ALL.iter().map(|l| format!("{l:?}")).collect();
    let registry = read("languages/src/registry.rs");
    let arms = registry_arms(&registry);
    assert_eq!(
        arms.len(),
        all.len(),
        "support() has arms for {arms:?}, Language::ALL holds {all:?}: add the variant to Language::ALL"
    );
    for arm in arms {
        assert!(
            all.iter().any(|a| a == arm),
            "support() has an arm for {arm}: add it to Language::ALL (languages/src/lib.rs)"
        );
    }
}

#[test]
fn every_language_is_in_every_place_the_doc_lists() {
    let doc = read(DOC);
    assert!(Language::ALL.len() >= 5);
    let mut found = Vec::new();
    for lang in Language::ALL {
        for lack in places_lacking(*lang, &doc) {
            found.push(format!("{lang:?}: {lack}"));
        }
    }
    assert!(
        found.is_empty(),
        "languages missing places {DOC} lists (add them as its checklist says):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_reports_a_path_that_does_not_exist() {
    let doc = "See `languages/src/registry.rs`, `languages/src/nope.rs`, `go build ./...`, `a::b/c`, `a\n\
               b/c`,\n\
               `fixtures/<lang>/<project>/` and `fixtures/<lang>/no-such-fixture/`.\n\
               ```\nlanguages/src/missing.rs\n```\n";
    let langs = ["go".to_string(), "rust".to_string()];
    assert_eq!(
        missing_paths(root(), doc, &langs),
        [
            "`languages/src/nope.rs`",
            "`fixtures/<lang>/no-such-fixture/` (for <lang> = go)",
            "`fixtures/<lang>/no-such-fixture/` (for <lang> = rust)",
        ]
    );
}

#[test]
fn the_shape_is_read_from_the_doc_and_checked() {
    let doc = "```\nlanguages/src/<lang>/\n  mod.rs   // the struct\n  index.rs // + index/: parse\n  \
               build.rs // the build check\n  trace.rs // + trace/: the shim, when there is one\n```\n";
    let shape = folder_shape(doc);
    let files: Vec<(&str, bool, bool)> =
        shape.iter().map(|e| (e.file.as_str(), e.with_folder, e.conditional)).collect();
    assert_eq!(
        files,
        [("mod.rs", false, false), ("index.rs", true, false), ("build.rs", false, false), ("trace.rs", true, true)]
    );
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("mod.rs"), "").unwrap();
    std::fs::create_dir_all(tmp.path().join("index")).unwrap();
    std::fs::write(tmp.path().join("index/mod.rs"), "").unwrap();
    // Go has a shim: trace.rs (or trace/mod.rs) and trace/ are asked for, as is build.rs.
    let lacks = shape_lacks(tmp.path(), &shape, support(Language::Go));
    assert_eq!(lacks, ["build.rs", "trace.rs", "trace/"]);
}

#[test]
fn folders_follow_families() {
    assert_eq!(folder_of(Language::JavaScript), "typescript");
    assert_eq!(folder_of(Language::Go), "go");
}
