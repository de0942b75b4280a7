//! Robustness: the masked fixture type-checks with `tsc` for the chosen removals (and for
//! every single definition when `CARVE_TS_EXHAUSTIVE` is set), and every definition of
//! tricky sources removed alone re-parses. Every fixture definition removed alone
//! (re-parses, type-checks) and mutated sources (never panic) are tested for all languages
//! in `extractor/tests/robustness.rs`.

use super::*;
use crate::Language;

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
    crate::typescript::build::build_check_with(dir.path(), Some(&fixture_root())).map_err(|e| format!("{what}: {e}"))
}

#[carve_testutil::needs("fixtures/typescript/ledger/node_modules/.bin/tsc")]
fn masked_fixture_type_checks() {
    let sources = fixture_sources();
    let index = fixture_index();
    type_check("the unmasked fixture", &[]).expect("the fixture itself type-checks");
    let mut failures = Vec::new();
    let mut sets: Vec<(String, BTreeSet<NodeId>)> =
        super::mask::chosen_removals().into_iter().map(|(n, s)| (n.to_string(), s)).collect();
    if std::env::var_os("CARVE_TS_EXHAUSTIVE").is_some() {
        sets.extend(index.definitions.keys().map(|id| (id.clone(), set(&[id]))));
    }
    for (name, remove) in sets {
        let masked = mask_all(&sources, &index, &remove);
        if let Err(e) = type_check(&name, &masked) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "masked fixtures that do not type-check:\n{}", failures.join("\n\n"));
}

#[carve_testutil::needs("fixtures/typescript/ledger/node_modules/.bin/tsc")]
fn build_check_reports_tsc_output() {
    let broken = vec![("src/util/collections.ts".to_string(), "export const x: number = \"text\";\n".to_string())];
    let err = type_check("broken", &broken).expect_err("a type error is reported");
    assert!(err.contains("src/util/collections.ts") && err.contains("TS2322"), "{err}");
    let none = tempfile::tempdir().expect("tempdir");
    std::fs::write(none.path().join("a.ts"), "export const a = 1;\n").expect("write");
    let e = crate::typescript::build_check(none.path()).expect_err("no tsconfig");
    assert!(e.to_string().contains("tsconfig.json"), "{e}");
    let js = tempfile::tempdir().expect("tempdir");
    std::fs::write(js.path().join("a.js"), "export const a = 1;\n").expect("write");
    crate::typescript::build_check(js.path()).expect("plain JavaScript has nothing to type-check");
}

/// A monorepo whose root has no tsconfig.json (change-case: `tsconfig.base.json` at the root,
/// `packages/*/tsconfig.json`) is checked package by package, and an error is located in its
/// package's file as seen from the root.
#[carve_testutil::needs("fixtures/typescript/ledger/node_modules/.bin/tsc")]
fn a_monorepo_is_checked_per_package() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    write("package.json", r#"{"private": true, "workspaces": ["packages/*"]}"#);
    // Composite, as change-case's: tsc would write packages/*/tsconfig.tsbuildinfo into the
    // checked tree, even with --noEmit.
    write(
        "tsconfig.base.json",
        r#"{"compilerOptions": {"strict": true, "module": "commonjs", "target": "es2020", "composite": true}}"#,
    );
    for name in ["a", "b"] {
        write(
            &format!("packages/{name}/tsconfig.json"),
            r#"{"extends": "../../tsconfig.base.json", "include": ["src"]}"#,
        );
        write(&format!("packages/{name}/src/index.ts"), "export const one: number = 1;\n");
    }
    let check = || crate::typescript::build::build_check_with(dir.path(), Some(&fixture_root()));
    check().expect("both packages type-check");
    let written: Vec<_> = ignore::WalkBuilder::new(dir.path())
        .standard_filters(false)
        .build()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tsbuildinfo"))
        .map(|e| e.path().display().to_string())
        .collect();
    assert!(written.is_empty(), "the check wrote into the tree: {written:?}");
    write("packages/b/src/index.ts", "export const one: number = \"one\";\n");
    let e = check().expect_err("package b has a type error");
    let text = e.to_string();
    assert!(text.contains("-p packages/b/tsconfig.json") && text.contains("TS2322"), "{text}");
    let located = crate::typescript::build::error_locations(dir.path(), &text);
    assert_eq!(located, vec![("packages/b/src/index.ts".to_string(), 1)], "{text}");
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
            let errors = crate::parse_errors(lang, &text);
            assert!(errors.is_empty(), "removing {id}: {path} does not parse: {errors:?}\n{text}");
        }
    }
}
