//! Robustness: every definition of the fixture removed on its own yields files that
//! re-parse without errors; the masked fixture type-checks with `tsc` for the chosen
//! removals (and for every single definition when `CARVE_TS_EXHAUSTIVE` is set); the
//! indexer and the masker never panic on mutated sources.

use super::*;
use crate::Language;
use crate::index::DefinitionKind;

#[test]
fn every_definition_removed_alone_reparses() {
    let sources = fixture_sources();
    let index = fixture_index();
    let mut checked = 0;
    for id in index.definitions.keys() {
        let remove = set(&[id]);
        let masked = mask_all(&sources, &index, &remove);
        // Only a stubbed type (kept as written) leaves every file as it was.
        let kind = index.definitions[id].kind;
        if masked.is_empty() {
            let has_body = index.definitions[id].body.is_some();
            assert!(
                !(has_body
                    && matches!(
                        kind,
                        DefinitionKind::Function | DefinitionKind::Method | DefinitionKind::Class
                    )),
                "removing {id} changed nothing"
            );
        }
        for (path, text) in masked {
            let errors = crate::edit::parse_errors(Language::TypeScript, &text);
            assert!(
                errors.is_empty(),
                "removing {id}: {path} does not parse: {errors:?}\n{text}"
            );
        }
        checked += 1;
    }
    assert!(checked > 60, "only {checked} definitions");
}

/// Copy the fixture (sources, configs; not node_modules) to a temporary directory and
/// write the masked files over it.
fn masked_copy(masked: &[(String, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = fixture_root();
    for f in ["package.json", "tsconfig.json"] {
        std::fs::copy(root.join(f), dir.path().join(f)).expect("copy config");
    }
    for (path, bytes) in fixture_sources() {
        let dst = dir.path().join(&path);
        std::fs::create_dir_all(dst.parent().expect("parent")).expect("mkdir");
        std::fs::write(dst, bytes).expect("write");
    }
    for (path, text) in masked {
        std::fs::write(dir.path().join(path), text).expect("write masked");
    }
    dir
}

fn type_check(what: &str, masked: &[(String, String)]) -> Result<(), String> {
    let dir = masked_copy(masked);
    crate::typescript::build::build_check_with(dir.path(), Some(&fixture_root()))
        .map_err(|e| format!("{what}: {e}"))
}

#[test]
fn masked_fixture_type_checks() {
    if !node_modules_or_skip("masked_fixture_type_checks") {
        return;
    }
    let sources = fixture_sources();
    let index = fixture_index();
    type_check("the unmasked fixture", &[]).expect("the fixture itself type-checks");
    let mut failures = Vec::new();
    let mut sets: Vec<(String, BTreeSet<NodeId>)> = super::mask::chosen_removals()
        .into_iter()
        .map(|(n, s)| (n.to_string(), s))
        .collect();
    if std::env::var_os("CARVE_TS_EXHAUSTIVE").is_some() {
        sets.extend(index.definitions.keys().map(|id| (id.clone(), set(&[id]))));
    }
    for (name, remove) in sets {
        let masked = mask_all(&sources, &index, &remove);
        if let Err(e) = type_check(&name, &masked) {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "masked fixtures that do not type-check:\n{}",
        failures.join("\n\n")
    );
}

#[test]
fn build_check_reports_tsc_output() {
    if !node_modules_or_skip("build_check_reports_tsc_output") {
        return;
    }
    let broken = vec![(
        "src/util/collections.ts".to_string(),
        "export const x: number = \"text\";\n".to_string(),
    )];
    let err = type_check("broken", &broken).expect_err("a type error is reported");
    assert!(
        err.contains("src/util/collections.ts") && err.contains("TS2322"),
        "{err}"
    );
    let none = tempfile::tempdir().expect("tempdir");
    std::fs::write(none.path().join("a.ts"), "export const a = 1;\n").expect("write");
    let e = crate::typescript::build_check(none.path()).expect_err("no tsconfig");
    assert!(e.to_string().contains("tsconfig.json"), "{e}");
    let js = tempfile::tempdir().expect("tempdir");
    std::fs::write(js.path().join("a.js"), "export const a = 1;\n").expect("write");
    crate::typescript::build_check(js.path()).expect("plain JavaScript has nothing to type-check");
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const SNIPPETS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "=>",
    "export ",
    "class ",
    "function ",
    "/**",
    "*/",
    "`",
    "\"",
    "'",
    ";",
    ",",
    "<T>",
    "@dec\n",
    "namespace N {",
    "get x() {",
    "import { a } from './a';\n",
    "\n",
    "é",
    "const f = () =>",
    "it('t', () => {",
];

fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut s = text.to_string();
    for _ in 0..1 + rng.below(4) {
        let mut at = rng.below(s.len() + 1);
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        if rng.below(2) == 0 {
            let mut end = (at + 1 + rng.below(40)).min(s.len());
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s.replace_range(at..end, "");
        } else {
            s.insert_str(at, SNIPPETS[rng.below(SNIPPETS.len())]);
        }
    }
    s
}

#[test]
fn index_and_mask_never_panic_on_mutated_sources() {
    let sources = fixture_sources();
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for round in 0..150 {
        let mut mutated = sources.clone();
        let victim = rng.below(mutated.len());
        let text = String::from_utf8_lossy(&mutated[victim].1).into_owned();
        mutated[victim].1 = mutate(&mut rng, &text).into_bytes();
        let index = DefinitionIndex::from_sources(&mutated);
        let path = &mutated[victim].0;
        let Some(file) = index.files.get(path) else {
            continue;
        };
        let source = String::from_utf8_lossy(&mutated[victim].1).into_owned();
        // Remove a few definitions of the mutated file, some stubbed.
        let mut delete = BTreeSet::new();
        let mut stub = BTreeSet::new();
        for _ in 0..3 {
            if file.definitions.is_empty() {
                break;
            }
            let id = file.definitions[rng.below(file.definitions.len())].clone();
            if rng.below(2) == 0 {
                delete.insert(id)
            } else {
                stub.insert(id)
            };
        }
        // Errors are fine (a stale or odd tree); panics and bad edits are not.
        if let Ok(edits) = crate::typescript::edit::mask_file(&source, file, &index, &delete, &stub)
        {
            apply(&source, &edits)
                .unwrap_or_else(|e| panic!("round {round}: edits for {path} do not apply: {e}"));
        }
        // Masking against a stale source must not panic either.
        let _ = crate::typescript::edit::mask_file(&text, file, &index, &delete, &stub);
    }
}

/// Where indexing time goes, single-threaded, over the files of `CARVE_TS_PROFILE_DIR`
/// (e.g. a repository kept by `examples/index_speed --keep DIR typescript`). Run with
/// `cargo test --release -p carve-languages --lib typescript::tests::robust::profile -- --ignored --nocapture`.
#[test]
#[ignore]
fn profile() {
    let Some(dir) = std::env::var_os("CARVE_TS_PROFILE_DIR") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let mut sources = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("readable").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "ts") {
                let rel = p
                    .strip_prefix(&dir)
                    .expect("under dir")
                    .to_string_lossy()
                    .into_owned();
                sources.push((rel, std::fs::read(&p).expect("readable")));
            }
        }
    }
    let lines: usize = sources
        .iter()
        .map(|(_, b)| b.iter().filter(|&&c| c == b'\n').count())
        .sum();
    let time = |what: &str, f: &dyn Fn()| {
        let t = std::time::Instant::now();
        f();
        let s = t.elapsed().as_secs_f64();
        eprintln!("{what:<28} {:>10.0} lines/s", lines as f64 / s);
    };
    let grammar: tree_sitter::Language = tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into();
    for _ in 0..2 {
        time("bare parse", &|| {
            let mut p = tree_sitter::Parser::new();
            p.set_language(&grammar).expect("grammar");
            for (_, b) in &sources {
                drop(p.parse(b, None));
            }
        });
        time("parse + query matches", &|| {
            use streaming_iterator::StreamingIterator;
            let mut p = tree_sitter::Parser::new();
            p.set_language(&grammar).expect("grammar");
            let q = &super::super::queries::Dialect::TypeScript.queries().query;
            for (_, b) in &sources {
                let tree = p.parse(b, None).expect("tree");
                let mut c = tree_sitter::QueryCursor::new();
                let mut m = c.matches(q, tree.root_node(), b.as_slice());
                while m.next().is_some() {}
            }
        });
        for (name, text) in [
            (
                "definitions.scm",
                include_str!("../../../queries/typescript/definitions.scm"),
            ),
            (
                "imports.scm",
                include_str!("../../../queries/typescript/imports.scm"),
            ),
        ] {
            let q = tree_sitter::Query::new(&grammar, text).expect("query");
            time(&format!("parse + {name}"), &|| {
                use streaming_iterator::StreamingIterator;
                let mut p = tree_sitter::Parser::new();
                p.set_language(&grammar).expect("grammar");
                for (_, b) in &sources {
                    let tree = p.parse(b, None).expect("tree");
                    let mut c = tree_sitter::QueryCursor::new();
                    let mut m = c.matches(&q, tree.root_node(), b.as_slice());
                    while m.next().is_some() {}
                }
            });
        }
        time("parse + cursor walk", &|| {
            let mut p = tree_sitter::Parser::new();
            p.set_language(&grammar).expect("grammar");
            let mut n = 0usize;
            for (_, b) in &sources {
                let tree = p.parse(b, None).expect("tree");
                let mut c = tree.walk();
                'walk: loop {
                    n += c.node().kind_id() as usize;
                    if c.goto_first_child() {
                        continue;
                    }
                    while !c.goto_next_sibling() {
                        if !c.goto_parent() {
                            break 'walk;
                        }
                    }
                }
            }
            assert!(n > 0);
        });
        time("parse_file", &|| {
            let mut p = super::super::parse::new_parser();
            for (path, b) in &sources {
                super::super::parse::parse_file(&mut p, path, b).expect("parse");
            }
        });
        time("index_sources (all cores)", &|| {
            super::super::index::index_sources(&sources);
        });
    }
}

/// Tricky layouts in all three dialects: every definition removed on its own (deleted or
/// stubbed, as the split decides) leaves a file that parses.
#[test]
fn every_definition_of_tricky_sources_removed_alone_reparses() {
    let sources: Vec<(String, Vec<u8>)> = [
        (
            "src/shapes.ts",
            "/** Shapes. */\nexport abstract class Shape {\n  abstract area(): number;\n  scale(k: number): this;\n  scale(k: string): this;\n  scale(k: number | string): this { return this; }\n  @track('x') static make(): Shape | null { return null; }\n}\nexport namespace Geo.Inner {\n  export enum Unit { M, Km }\n  export function toM(u: Unit): number { return u === Unit.M ? 1 : 1000; }\n}\ndeclare function ext(x: number): void;\nexport default function main(): void { ext(Geo.Inner.toM(Geo.Inner.Unit.M)); }\nexport type Pair<T> = [T, T];\nexport interface Sized { size(): number }\nexport const a = 1, f = (x: number) => x + a, g = function* () { yield 1; };\nfunction track(_: string) { return (..._args: unknown[]) => {}; }\n",
        ),
        (
            "src/view.tsx",
            "import main from './shapes';\nexport const View = ({ n }: { n: number }) => <div onClick={() => main()}>{n}</div>;\nexport function List(): JSX.Element {\n  return <ul>{[1, 2].map((i) => <View n={i} />)}</ul>;\n}\n",
        ),
        (
            "lib/util.js",
            "export default class Store {\n  #items = [];\n  static of = (...xs) => new Store(xs);\n  constructor(xs) { this.#items = xs; }\n  get size() { return this.#items.length; }\n  *[Symbol.iterator]() { yield* this.#items; }\n}\nexport async function load(url) { return (await fetch(url)).json(); }\nconst helper = async () => load('x');\nexport { helper as run };\n",
        ),
        ("lib/util.test.js", "import Store, { run } from './util.js';\ndescribe('Store', () => {\n  it('counts', () => { expect(Store.of(1).size).toBe(1); });\n  test.skip('runs', async () => { await run(); });\n});\n"),
    ]
    .iter()
    .map(|(p, s)| (p.to_string(), s.as_bytes().to_vec()))
    .collect();
    let index = DefinitionIndex::from_sources(&sources);
    assert!(index.skipped.is_empty(), "{:?}", index.skipped);
    assert!(index.definitions.len() >= 25, "{:#?}", index.definitions.keys().collect::<Vec<_>>());
    for id in index.definitions.keys() {
        for (path, text) in mask_all(&sources, &index, &set(&[id])) {
            let lang = if path.ends_with(".js") { Language::JavaScript } else { Language::TypeScript };
            let errors = crate::edit::parse_errors(lang, &text);
            assert!(errors.is_empty(), "removing {id}: {path} does not parse: {errors:?}\n{text}");
        }
    }
}
