//! Tests of the reference states: built from recipes of commits, they pin how files are
//! taken off and re-applied, made per definition, followed where a later commit moved them,
//! and pulled into states that import them early.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use carve_languages::Language;

use super::by_definition::ByDefinition;
use super::*;

/// An exported state whose manifest declares what the checkout's does (here: neither has
/// one) gets the repository's installed `node_modules` as a link (git holds none, so
/// vitest or tsc would not run there), and one it has of its own is left alone.
#[test]
fn exported_states_link_the_repositorys_installed_dependencies() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(repo.path().join("node_modules/vitest")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let provide = |repo: &Path, out: &Path| crate::deps::provide(repo, out, Language::TypeScript, "S0");
    provide(repo.path(), out.path()).unwrap();
    let link = out.path().join("node_modules");
    assert_eq!(std::fs::read_link(&link).unwrap(), repo.path().join("node_modules"));
    assert!(link.join("vitest").is_dir());
    let own = tempfile::tempdir().unwrap();
    std::fs::create_dir(own.path().join("node_modules")).unwrap();
    provide(repo.path(), own.path()).unwrap();
    assert!(!own.path().join("node_modules").is_symlink(), "a state's own folder stays");
    let none = tempfile::tempdir().unwrap();
    let fresh = tempfile::tempdir().unwrap();
    provide(none.path(), fresh.path()).unwrap();
    assert!(!fresh.path().join("node_modules").exists());
}

/// Regression (unjs/defu `defu`): a commit outside the chain rewrites `src/defu.ts`, which
/// stage 0 created, so the file is made per definition; stage 1 changes `defu` to take a
/// `Merger` from `./types`, which it creates. S1 holds `defu` at its text before stage 1 but
/// the final file's `import type { Merger } from './types'`, and no `src/types.ts`: the
/// repair pulls it into S1 at its text at S2, and leaves S0 (no `src/defu.ts`) and S2 alone.
#[test]
fn a_state_importing_a_file_a_later_stage_creates_gets_that_file() {
    let commit = |message: &str, files: &[(&str, &str)]| crate::recipe::RecipeCommit {
        message: message.into(),
        files: files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect(),
        delete: vec![],
    };
    let types = "export type Merger = (a: any, b: any) => any\n";
    let recipe = crate::recipe::Recipe {
        commits: vec![
            commit(
                "feat: defu",
                &[("src/defu.ts", "export function defu(a: any, b: any) {\n  return { ...b, ...a }\n}\n")],
            ),
            commit(
                "refactor: Object.assign",
                &[("src/defu.ts", "export function defu(a: any, b: any) {\n  return Object.assign({}, b, a)\n}\n")],
            ),
            commit(
                "feat: custom merger",
                &[
                    ("src/types.ts", types),
                    (
                        "src/defu.ts",
                        "import type { Merger } from './types'\n\nexport function defu(a: any, b: any, merger?: Merger) {\n  return merger ? merger(a, b) : Object.assign({}, b, a)\n}\n",
                    ),
                ],
            ),
        ],
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let ids = crate::recipe::build(&recipe, &repo).unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let stages = vec![vec![ids[0].clone()], vec![ids[2].clone()]];
    let mut states = States::build(&repo, &scratch, &ids[2], &stages, Language::TypeScript, &BTreeSet::new()).unwrap();
    assert_eq!(states.by_definition.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["src/defu.ts"]);
    let s1 = String::from_utf8(states.file_at(1, "src/defu.ts").unwrap()).unwrap();
    assert!(s1.contains("from './types'") && !s1.contains("merger?"), "{s1}");
    assert_eq!(states.file_at(1, "src/types.ts"), None);
    let final_state = states.states[2].clone();
    assert!(states.pull_imported_files(0, "error").unwrap().is_empty(), "S0 has no file that imports it");
    let pulled =
        states.pull_imported_files(1, "src/defu.ts(1,30): error TS2307: Cannot find module './types'").unwrap();
    assert_eq!(pulled.len(), 1, "{pulled:?}");
    assert_eq!((pulled[0].path.as_str(), pulled[0].from, pulled[0].at), ("src/types.ts", 1, 2));
    assert_eq!(pulled[0].imported_by, "src/defu.ts");
    assert!(pulled[0].reason.contains("TS2307"), "{}", pulled[0].reason);
    assert_eq!(states.file_at(1, "src/types.ts").as_deref(), Some(types.as_bytes()));
    assert_eq!(states.file_at(0, "src/types.ts"), None);
    assert_eq!(states.states[2], final_state, "S2, the final checkpoint, is unchanged");
    assert_eq!(states.code_states, states.states);
    assert_eq!(states.pulled, pulled);
    assert!(states.pull_imported_files(1, "error").unwrap().is_empty(), "nothing left to pull");
}

/// S0 … Sn of `recipe`'s history built in a temporary folder (kept alive by the caller):
/// one stage per commit index of `stages`, the last one the final checkpoint.
fn states_of(recipe: &crate::recipe::Recipe, stages: &[usize], language: Language) -> (tempfile::TempDir, States) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let ids = crate::recipe::build(recipe, &repo).unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let last = &ids[*stages.last().unwrap()];
    let stages: Vec<Vec<String>> = stages.iter().map(|&i| vec![ids[i].clone()]).collect();
    let states = States::build(&repo, &scratch, last, &stages, language, &BTreeSet::new()).unwrap();
    (dir, states)
}

/// Regression (unjs/ufo #120 → #207): stage 0 makes `port` a number, a commit outside the
/// chain makes it a string again, stage 1 adds `stringify`. Removing stage 0's patch
/// succeeds (its `port: number` line is already gone), but re-applying it would bring the
/// number back, so S2 would not be the final checkpoint: the file is made per definition,
/// and every state holds `port` as the final file has it.
#[test]
fn a_file_whose_stage_change_a_later_commit_undid_is_made_per_definition() {
    let commit = |message: &str, text: &str| crate::recipe::RecipeCommit {
        message: message.into(),
        files: [("src/parse.ts".to_string(), text.to_string())].into(),
        delete: vec![],
    };
    // The later commit puts back exactly the lines it reverts (`port: string`, `port`), and
    // leaves stage 0's new pattern (`/:(\d+)/`).
    let host = |port: &str, pattern: &str, value: &str| {
        format!(
            "export interface Host {{\n  port: {port};\n}}\n\nexport function parseHost(input: string): Host {{\n  const port = (input.match({pattern}) || [])[1];\n  return {{\n    host: input,\n    port: {value},\n  }};\n}}\n"
        )
    };
    let stringify = "\nexport function stringify(h: Host): string {\n  return String(h.port);\n}\n";
    let recipe = crate::recipe::Recipe {
        commits: vec![
            commit("feat: parseHost", &host("string", "/:(.*)/", "port")),
            commit("fix: port as number", &host("number", "/:(\\d+)/", "Number(port)")),
            commit("fix: port should be string", &host("string", "/:(\\d+)/", "port")),
            commit("feat: stringify", &(host("string", "/:(\\d+)/", "port") + stringify)),
        ],
    };
    let (_dir, states) = states_of(&recipe, &[1, 3], Language::TypeScript);
    assert_eq!(states.by_definition.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["src/parse.ts"]);
    let at = |j: usize| String::from_utf8(states.file_at(j, "src/parse.ts").unwrap()).unwrap();
    let s0 = at(0);
    assert!(s0.contains("port: string;") && s0.contains("/:(.*)/") && s0.contains("port: port,"), "{s0}");
    let s1 = at(1);
    assert!(s1.contains("port: string;") && s1.contains("/:(\\d+)/") && !s1.contains("Number"), "{s1}");
    assert!(!s1.contains("stringify"), "{s1}");
    assert!(at(2).contains("stringify"));
}

/// unjs/defu `feat-use-named-exports`: stage 1 deletes `lib/defu.d.ts`, the only file of
/// `lib/`, so checking that its patch re-applies removes the folder; putting S0's file
/// back must make the folder again.
#[test]
fn a_file_whose_folder_a_re_applied_patch_removed_is_restored() {
    let commit = |message: &str, files: &[(&str, &str)], delete: &[&str]| crate::recipe::RecipeCommit {
        message: message.into(),
        files: files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect(),
        delete: delete.iter().map(|p| p.to_string()).collect(),
    };
    let recipe = crate::recipe::Recipe {
        commits: vec![
            commit("types", &[("lib/defu.d.ts", "export declare function defu(): void\n")], &[]),
            commit("feat: defu", &[("src/defu.ts", "export function defu() {}\n")], &[]),
            commit(
                "feat: named exports",
                &[("src/defu.ts", "export function defu() {}\nexport const x = 1\n")],
                &["lib/defu.d.ts"],
            ),
        ],
    };
    let (_dir, states) = states_of(&recipe, &[1, 2], Language::TypeScript);
    assert!(states.file_at(1, "lib/defu.d.ts").is_some());
    assert_eq!(states.file_at(2, "lib/defu.d.ts"), None);
}

/// The recipe commits of the psf/requests pattern: stage 0 adds `JSONDecodeError` to
/// `pkg/exceptions.py` and imports it in `pkg/models.py`; a commit outside the chain
/// moves `pkg/` to `src/pkg/` (with `models_at_move` as the moved `models.py`); stage 1
/// gives the error a `__reduce__` in the moved file.
fn moved_package_recipe(models_at_move: &str) -> crate::recipe::Recipe {
    let commit = |message: &str, files: &[(&str, &str)], delete: &[&str]| crate::recipe::RecipeCommit {
        message: message.into(),
        files: files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect(),
        delete: delete.iter().map(|p| p.to_string()).collect(),
    };
    let exceptions0 = "class InvalidJSONError(ValueError):\n    pass\n";
    let exceptions1 =
        "class InvalidJSONError(ValueError):\n    pass\n\n\nclass JSONDecodeError(InvalidJSONError):\n    pass\n";
    let exceptions2 = "class InvalidJSONError(ValueError):\n    pass\n\n\nclass JSONDecodeError(InvalidJSONError):\n    def __reduce__(self):\n        return JSONDecodeError, self.args\n";
    crate::recipe::Recipe {
        commits: vec![
            commit(
                "base",
                &[
                    ("pkg/__init__.py", ""),
                    ("pkg/exceptions.py", exceptions0),
                    ("pkg/models.py", MODELS_0),
                    (
                        "tests/test_models.py",
                        "from pkg.models import load\n\n\ndef test_load():\n    assert load('1') == 1\n",
                    ),
                ],
                &[],
            ),
            commit(
                "feat: JSONDecodeError",
                &[
                    ("pkg/exceptions.py", exceptions1),
                    ("pkg/models.py", MODELS_1),
                    (
                        "tests/test_models.py",
                        "import pytest\nfrom pkg.models import load\n\n\ndef test_load():\n    assert load('1') == 1\n\n\ndef test_error():\n    with pytest.raises(ValueError):\n        load('x')\n",
                    ),
                ],
                &[],
            ),
            commit(
                "chore: move to src/",
                &[
                    ("src/pkg/__init__.py", ""),
                    ("src/pkg/exceptions.py", exceptions1),
                    ("src/pkg/models.py", models_at_move),
                ],
                &["pkg/__init__.py", "pkg/exceptions.py", "pkg/models.py"],
            ),
            commit(
                "feat: picklable JSONDecodeError",
                &[
                    ("src/pkg/exceptions.py", exceptions2),
                    (
                        "tests/test_pickle.py",
                        "import pickle\nfrom pkg.exceptions import JSONDecodeError\n\n\ndef test_pickle():\n    assert pickle.loads(pickle.dumps(JSONDecodeError('x'))).args == ('x',)\n",
                    ),
                ],
                &[],
            ),
        ],
    }
}

const MODELS_0: &str =
    "import json\n\nfrom .exceptions import InvalidJSONError\n\n\ndef load(text):\n    return json.loads(text)\n";
const MODELS_1: &str = "import json\n\nfrom .exceptions import InvalidJSONError\nfrom .exceptions import JSONDecodeError\n\n\ndef load(text):\n    try:\n        return json.loads(text)\n    except ValueError as e:\n        raise JSONDecodeError(*e.args)\n";

/// Regression (psf/requests `JSONDecodeError`): a commit between the stages moved the
/// package (`requests/` → `src/requests/`). Stage 0's patches are followed to the files'
/// final paths and come off there, so S0 has no `JSONDecodeError`, S1 has it, and no
/// state has the old paths; before, the moved files were left at their final text (the
/// stage's code in S0) and the old paths' patches were re-applied as new files.
#[test]
fn a_stage_patch_follows_its_files_to_where_a_later_commit_moved_them() {
    let (_dir, states) = states_of(&moved_package_recipe(MODELS_1), &[1, 3], Language::Python);
    assert!(states.shared.is_empty(), "{:?}", states.shared);
    assert!(states.by_definition.is_empty(), "{:?}", states.by_definition);
    let text = |k: usize, p: &str| states.file_at(k, p).map(|b| String::from_utf8(b).unwrap());
    assert_eq!(text(0, "src/pkg/models.py").as_deref(), Some(MODELS_0));
    assert_eq!(text(1, "src/pkg/models.py").as_deref(), Some(MODELS_1));
    assert!(!text(0, "src/pkg/exceptions.py").unwrap().contains("JSONDecodeError"));
    assert!(text(1, "src/pkg/exceptions.py").unwrap().contains("class JSONDecodeError(InvalidJSONError):\n    pass"));
    assert!(text(0, "tests/test_pickle.py").is_none() && text(1, "tests/test_pickle.py").is_none());
    for k in 0..3 {
        assert!(text(k, "pkg/models.py").is_none() && text(k, "pkg/exceptions.py").is_none(), "S{k}");
    }
    // The mined ids of stage 0 name the files at their old paths: the spec's interface and
    // the traced call dependency look them up at the final ones.
    assert_eq!(states.id_at_final("pkg/exceptions.py::JSONDecodeError"), "src/pkg/exceptions.py::JSONDecodeError");
    assert_eq!(states.id_at_final("tests/test_models.py::test_error"), "tests/test_models.py::test_error");
}

/// Regression (psf/requests `JSONDecodeError`): the move also reformats `models.py`, so
/// stage 0's patch to it does not come off and the file is made per definition. Stage 0
/// added no definition there, only changed `load` and imported `JSONDecodeError`; S0 must
/// not import it (exceptions.py has no such class yet: the package would not load), so the
/// names a later stage added to a module-level import are taken out of the earlier states.
#[test]
fn a_per_definition_state_does_not_import_what_a_later_stage_added() {
    let reformatted = "import json\n\nfrom .exceptions import InvalidJSONError, JSONDecodeError\n\n\ndef load(text):\n    try:\n        return json.loads(text)\n    except ValueError as e:\n        raise JSONDecodeError(*e.args)\n";
    let (_dir, states) = states_of(&moved_package_recipe(reformatted), &[1, 3], Language::Python);
    let files: Vec<&str> = states.by_definition.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(files, ["src/pkg/models.py"]);
    assert_eq!(states.by_definition[0].imports, [vec![".exceptions: JSONDecodeError".to_string()], vec![]]);
    let text = |k: usize, p: &str| states.file_at(k, p).map(|b| String::from_utf8(b).unwrap());
    assert_eq!(
        text(0, "src/pkg/models.py").unwrap(),
        "import json\n\nfrom .exceptions import InvalidJSONError\n\n\ndef load(text):\n    return json.loads(text)\n"
    );
    assert_eq!(text(1, "src/pkg/models.py").as_deref(), Some(reformatted));
    assert!(!text(0, "src/pkg/exceptions.py").unwrap().contains("JSONDecodeError"));
}

/// Regression (psf/requests `JSONDecodeError`): stage 0 changed one method of a class in a
/// file made per definition; S0 had the whole class at its text from before the stage, so
/// every other method lost what later commits did to it (requests' `Response` and
/// `PreparedRequest` went back two and a half years, and 232 tests failed at S0). Only the
/// changed method goes back now.
#[test]
fn a_state_takes_back_the_changed_method_not_its_whole_class() {
    let commit = |message: &str, text: &str| crate::recipe::RecipeCommit {
        message: message.into(),
        files: [("k.py".to_string(), text.to_string())].into(),
        delete: vec![],
    };
    let v0 = "class K:\n    def m(self):\n        return 1\n\n    def n(self):\n        return 'n'\n";
    let v1 = "class K:\n    def m(self):\n        return 2\n\n    def n(self):\n        return 'n'\n";
    // Outside the chain: rewrites stage 0's line (so its patch does not come off) and `n`.
    let v2 =
        "class K:\n    def m(self):\n        value = 2\n        return value\n\n    def n(self):\n        return 'N'\n";
    let v3 = "class K:\n    def m(self):\n        value = 2\n        return value\n\n    def n(self):\n        return 'N'\n\n    def o(self):\n        return self.m()\n";
    let recipe = crate::recipe::Recipe {
        commits: vec![commit("base", v0), commit("m", v1), commit("style", v2), commit("o", v3)],
    };
    let (_dir, states) = states_of(&recipe, &[1, 3], Language::Python);
    assert_eq!(states.by_definition.len(), 1);
    assert_eq!(states.by_definition[0].changed, [vec!["k.py::K.m".to_string()], vec![]]);
    let text = |k: usize| String::from_utf8(states.file_at(k, "k.py").unwrap()).unwrap();
    assert_eq!(text(0), "class K:\n    def m(self):\n        return 1\n\n    def n(self):\n        return 'N'\n");
    assert_eq!(text(1), v2);
    assert_eq!(text(2), v3);
}

/// Regression (dustin/go-humanize `comma`, google/uuid `array`, spf13/cast `to-bool`): a
/// commit outside the chain reformats stage 0's function, so the Go file is made per
/// definition. S0 holds `HasTag` at its text before stage 0, which uses `bytes`, while the
/// final file imports `strings` for the text stage 0 gave it: S0 did not build (`"strings"
/// imported and not used`, `undefined: bytes`). Its imports now follow its definitions; the
/// `math` of stage 1's `Ratio` goes with `Ratio` from S0 and S1.
#[test]
fn a_go_definition_back_at_its_older_text_gets_its_imports_back() {
    let commit = |message: &str, text: &str| crate::recipe::RecipeCommit {
        message: message.into(),
        files: [("tag.go".to_string(), text.to_string())].into(),
        delete: vec![],
    };
    let v0 = "package tag\n\nimport \"bytes\"\n\n// HasTag reports whether b starts with #.\nfunc HasTag(b []byte) bool { return bytes.HasPrefix(b, []byte(\"#\")) }\n";
    let v1 = "package tag\n\nimport \"strings\"\n\n// HasTag reports whether s starts with #.\nfunc HasTag(s string) bool { return strings.HasPrefix(s, \"#\") }\n";
    let v2 = "package tag\n\nimport \"strings\"\n\n// HasTag reports whether s starts with #.\nfunc HasTag(s string) bool {\n\treturn strings.HasPrefix(s, \"#\")\n}\n";
    let v3 = "package tag\n\nimport (\n\t\"math\"\n\t\"strings\"\n)\n\n// HasTag reports whether s starts with #.\nfunc HasTag(s string) bool {\n\treturn strings.HasPrefix(s, \"#\")\n}\n\n// Ratio is a/b rounded.\nfunc Ratio(a, b float64) float64 { return math.Round(a / b) }\n";
    let recipe = crate::recipe::Recipe {
        commits: vec![commit("base", v0), commit("strings", v1), commit("style", v2), commit("ratio", v3)],
    };
    let (_dir, states) = states_of(&recipe, &[1, 3], Language::Go);
    assert_eq!(states.by_definition.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["tag.go"]);
    let text = |k: usize| String::from_utf8(states.file_at(k, "tag.go").unwrap()).unwrap();
    assert_eq!(
        text(0),
        "package tag\n\nimport \"bytes\"\n\n// HasTag reports whether s starts with #.\nfunc HasTag(b []byte) bool { return bytes.HasPrefix(b, []byte(\"#\")) }\n"
    );
    // S1: the final file without `Ratio` and the `math` it alone used.
    assert_eq!(text(1), v2.replace("import \"strings\"", "import (\n\t\"strings\"\n)"));
    assert_eq!(text(2), v3);
}

/// Per-definition states of one Go file: the final text without what later stages added,
/// nothing before the stage that created it.
#[test]
fn a_file_made_per_definition_drops_what_later_stages_added() {
    let text = "package p\n\n// A is stage 0's.\nfunc A() int { return 1 }\n\n// B is stage 1's.\nfunc B() int { return A() + 1 }\n";
    let file = ByDefinition {
        path: "p.go".into(),
        language: Language::Go,
        final_text: Some(text.into()),
        added: vec![["p.go::A".to_string()].into(), ["p.go::B".to_string()].into()],
        changed: vec![BTreeMap::new(), BTreeMap::new()],
        imports: Vec::new(),
        created_by: Some(0),
        kept: BTreeSet::new(),
        versions: BTreeSet::new(),
    };
    let dir = tempfile::tempdir().unwrap();
    let read = |j: usize| {
        file.write(dir.path(), j).unwrap();
        std::fs::read_to_string(dir.path().join("p.go")).ok()
    };
    assert_eq!(read(0), None, "absent before the stage that created it");
    let s1 = read(1).unwrap();
    assert!(s1.contains("func A()") && !s1.contains("func B()"), "{s1}");
    assert_eq!(read(2).as_deref(), Some(text), "the last state is the final file");
    assert_eq!(read(0), None, "and it goes again");
}

/// A definition a later stage changed has its text from before that stage in the earlier
/// states; one it added inside a changed definition goes with the old text.
#[test]
fn a_changed_definition_has_its_text_from_before_the_stage() {
    let text = "def a():\n    return 2\n\n\nclass K:\n    def m(self):\n        return 1\n\n    def n(self):\n        return 3\n";
    let file = ByDefinition {
        path: "p.py".into(),
        language: Language::Python,
        final_text: Some(text.into()),
        added: vec![BTreeSet::new(), ["p.py::K.n".to_string()].into()],
        changed: vec![
            BTreeMap::new(),
            [
                ("p.py::a".to_string(), "def a():\n    return 1".to_string()),
                ("p.py::K".to_string(), "class K:\n    def m(self):\n        return 1".to_string()),
            ]
            .into(),
        ],
        imports: Vec::new(),
        created_by: None,
        kept: BTreeSet::new(),
        versions: BTreeSet::new(),
    };
    let s1 = file.at(text, 1).unwrap();
    assert_eq!(s1, "def a():\n    return 1\n\n\nclass K:\n    def m(self):\n        return 1\n");
    assert_eq!(file.at(text, 2).unwrap(), text);
}

/// A chain that starts at the repository's first commit: that commit has no parent (the
/// empty tree stands in), and the `go.mod` it created stays in S0 at its final content,
/// while its code comes off.
#[carve_testutil::needs("git")]
fn a_chain_from_the_root_commit_keeps_the_go_mod_it_created() {
    let commit = |message: &str, files: &[(&str, &str)]| crate::recipe::RecipeCommit {
        message: message.into(),
        files: files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect(),
        delete: vec![],
    };
    let recipe = crate::recipe::Recipe {
        commits: vec![
            commit(
                "root",
                &[("go.mod", "module ex.com/p\n\ngo 1.21\n"), ("a.go", "package p\n\nfunc A() int { return 1 }\n")],
            ),
            commit("b", &[("b.go", "package p\n\nfunc B() int { return A() + 1 }\n")]),
        ],
    };
    let (_tmp, states) = states_of(&recipe, &[0, 1], Language::Go);
    assert_eq!(states.file_at(0, "go.mod").as_deref(), Some(&b"module ex.com/p\n\ngo 1.21\n"[..]));
    assert_eq!(states.file_at(0, "a.go"), None);
    assert!(states.file_at(1, "a.go").is_some() && states.file_at(1, "b.go").is_none());
    assert!(
        states.shared.iter().any(|s| s.path == "go.mod" && s.reason.contains("build manifest")),
        "{:?}",
        states.shared
    );
}
