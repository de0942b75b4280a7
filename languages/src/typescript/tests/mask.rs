//! Masked source of chosen removals of the fixture (snapshots) and the masking rules on
//! small sources.

use super::*;
use crate::index::FileIndex;

/// The removals the snapshots and the build test use: (name, removed definitions).
pub(super) fn chosen_removals() -> Vec<(&'static str, BTreeSet<NodeId>)> {
    vec![
        (
            // A feature whose tests stay: what they call is stubbed, its private helper goes.
            "reports",
            set(&[
                "src/reports/summary.ts::Report",
                "src/reports/summary.ts::renderTable",
                "src/reports/summary.ts::ReportLine",
                "src/util/collections.ts::alignColumns",
                "src/util/collections.ts::pad",
            ]),
        ),
        (
            // Money arithmetic with the tests of currency parsing removed.
            "money",
            set(&[
                "src/money/money.ts::Money.plus",
                "src/money/money.ts::Money.times",
                "src/money/currency.ts::convert",
                "src/money/currency.ts::parseCurrency",
                "src/util/collections.ts::clamp",
                "tests/money.test.ts::currency.parses codes case-insensitively",
            ]),
        ),
        (
            // Account kinds and ledger subscriptions, with the subscription test removed.
            "accounts",
            set(&[
                "src/accounts/account.ts::CheckingAccount",
                "src/accounts/account.ts::SavingsAccount.accrue",
                "src/accounts/ledger.ts::Ledger.subscribe",
                "src/accounts/ledger.ts::PostingListener",
                "tests/ledger.test.ts::Ledger.notifies listeners until unsubscribed",
            ]),
        ),
        (
            // Everything the money feature exports, its test file removed with it.
            "money-module",
            set(&[
                "src/money/money.ts::Money",
                "src/money/money.ts::Priced",
                "src/money/currency.ts::Currency",
                "src/money/currency.ts::CurrencyCode",
                "src/money/currency.ts::convert",
                "src/money/currency.ts::parseCurrency",
                "tests/money.test.ts::Money",
                "tests/money.test.ts::currency",
            ]),
        ),
    ]
}

fn render(index: &DefinitionIndex, remove: &BTreeSet<NodeId>) -> String {
    let (delete, stub) = split(index, remove);
    let mut out = format!("delete: {delete:#?}\nstub: {stub:#?}\n");
    for (path, masked) in mask_all(&fixture_sources(), index, remove) {
        out.push_str(&format!("\n===== {path}\n{masked}"));
    }
    out
}

#[test]
fn masked_fixture_snapshots() {
    let index = fixture_index();
    for (name, remove) in chosen_removals() {
        for id in &remove {
            assert!(index.get(id).is_some(), "{name}: {id} is not in the index");
        }
        insta::assert_snapshot!(format!("masked_{name}"), render(&index, &remove));
    }
}

fn mask_one(path: &str, source: &str, delete: &[&str], stub: &[&str]) -> String {
    let index = DefinitionIndex::from_sources(&[(path.to_string(), source.as_bytes().to_vec())]);
    let file: &FileIndex = &index.files[path];
    let ids = |names: &[&str]| -> BTreeSet<NodeId> { names.iter().map(|n| format!("{path}::{n}")).collect() };
    for id in ids(delete).iter().chain(&ids(stub)) {
        assert!(index.get(id).is_some(), "{id} not indexed; have {:?}", file.definitions);
    }
    let edits = crate::typescript::edit::mask_file(source, file, &index, &ids(delete), &ids(stub)).expect("mask");
    let out = apply(source, &edits).expect("apply");
    assert!(crate::parse_errors(crate::Language::TypeScript, &out).is_empty(), "masked output does not parse:\n{out}");
    out
}

#[test]
fn deletes_statements_with_jsdoc_decorators_overloads_and_one_declarator() {
    let src = "/** Doc of a. */\nexport function a(x: string): string;\nexport function a(x: number): number;\nexport function a(x: any) { return x; }\n\nconst p = () => 1, q = () => 2;\n\nclass C {\n  /** m. */\n  @dec\n  m(): void {}\n  f = () => 3;\n  n(): void {}\n}\n";
    let out = mask_one("a.ts", src, &["a", "p", "C.m", "C.f"], &[]);
    assert_eq!(out, "const q = () => 2;\n\nclass C {\n  n(): void {}\n}\n");
}

#[test]
fn stubs_bodies_keeping_super_and_types() {
    let src = "class B { constructor(public x: number) {} }\nexport class D extends B {\n  constructor(x: number, private y = 2) {\n    super(x);\n    this.y = y * 2;\n  }\n  get v(): number { return this.y; }\n  half = (): number => this.y / 2;\n}\nexport const sq = (n: number): number => n * n;\n";
    let out = mask_one("a.ts", src, &[], &["D", "sq"]);
    // `y` is only read by the stubbed bodies: `public`, or `noUnusedLocals` fails (TS6138).
    assert_eq!(
        out,
        "class B { constructor(public x: number) {} }\nexport class D extends B {\n  constructor(x: number, public y = 2) {\n    super(x);\n    throw new Error(\"not implemented\");\n  }\n  get v(): number {\n    throw new Error(\"not implemented\");\n  }\n  half = (): number => {\n    throw new Error(\"not implemented\");\n  };\n}\nexport const sq = (n: number): number => {\n  throw new Error(\"not implemented\");\n};\n"
    );
}

#[test]
fn drops_imports_and_exports_of_deleted_definitions() {
    let index = DefinitionIndex::from_sources(&[
        ("a.ts".to_string(), b"export default function main() {}\nexport function gone() {}\nexport function kept() {}\n".to_vec()),
        (
            "b.ts".to_string(),
            b"import main, { gone, kept as k } from './a';\nimport { gone as g2 } from './a.js';\nexport { gone } from './a';\nexport { kept, gone as alias } from './a';\nfunction local() {}\nexport { local };\nexport default local;\nk();\nmain();\n".to_vec(),
        ),
    ]);
    let delete: BTreeSet<NodeId> = ["a.ts::gone", "b.ts::local"].iter().map(|s| s.to_string()).collect();
    let b = "import main, { gone, kept as k } from './a';\nimport { gone as g2 } from './a.js';\nexport { gone } from './a';\nexport { kept, gone as alias } from './a';\nfunction local() {}\nexport { local };\nexport default local;\nk();\nmain();\n";
    let edits =
        crate::typescript::edit::mask_file(b, &index.files["b.ts"], &index, &delete, &BTreeSet::new()).expect("mask");
    let out = apply(b, &edits).expect("apply");
    assert_eq!(out, "import main, { kept as k } from './a';\nexport { kept } from './a';\nk();\nmain();\n");
}

#[test]
fn removing_test_cases_removes_their_calls() {
    let src = "import { describe, it } from 'vitest';\n\ndescribe('S', () => {\n  it('one', () => {});\n\n  it('two', () => {});\n});\n";
    let out = mask_one("s.test.ts", src, &["S.one"], &[]);
    assert_eq!(out, "import { describe, it } from 'vitest';\n\ndescribe('S', () => {\n  it('two', () => {});\n});\n");
}

#[test]
fn unaffected_files_get_no_edits_and_stale_indexes_are_errors() {
    let src = "export function f() { return 1; }\n";
    let index = DefinitionIndex::from_sources(&[("a.ts".to_string(), src.as_bytes().to_vec())]);
    let file = &index.files["a.ts"];
    let none = BTreeSet::new();
    assert!(crate::typescript::edit::mask_file(src, file, &index, &none, &none).expect("mask").is_empty());
    let gone = BTreeSet::from(["a.ts::f".to_string()]);
    let err = crate::typescript::edit::mask_file("", file, &index, &gone, &none).expect_err("stale");
    assert!(matches!(err, crate::edit::MaskError::DefinitionNotFound { .. }), "{err}");
    // Through the language dispatch.
    let edits = crate::mask_file(crate::Language::TypeScript, src, file, &index, &gone, &none).expect("dispatch");
    assert_eq!(apply(src, &edits).expect("apply"), "");
}

#[test]
fn imports_only_removed_code_used_go_too() {
    let index = DefinitionIndex::from_sources(&[
        ("a.ts".to_string(), b"export function helper(): number { return 1; }\nexport type T = number;\nexport function other() {}\n".to_vec()),
        (
            "b.ts".to_string(),
            b"import { helper, type T, other } from './a';\nimport { unused } from './a';\nexport function f(x: T): T { return helper() + x; }\nexport function g() { other(); }\n".to_vec(),
        ),
    ]);
    let b = "import { helper, type T, other } from './a';\nimport { unused } from './a';\nexport function f(x: T): T { return helper() + x; }\nexport function g() { other(); }\n";
    let stub = BTreeSet::from(["b.ts::f".to_string()]);
    let edits =
        crate::typescript::edit::mask_file(b, &index.files["b.ts"], &index, &BTreeSet::new(), &stub).expect("mask");
    let out = apply(b, &edits).expect("apply");
    // `helper` only served the stubbed body; `T` is in the kept signature; the import
    // that was unused before stays as it was.
    assert_eq!(
        out,
        "import { type T, other } from './a';\nimport { unused } from './a';\nexport function f(x: T): T {\n  throw new Error(\"not implemented\");\n}\nexport function g() { other(); }\n"
    );
}

#[test]
fn commonjs_requires_and_exports_of_deleted_definitions_go() {
    let math = "function add(a, b) { return a + b; }\nfunction sub(a, b) { return a - b; }\nexports.mul = function (a, b) { return a * b; };\nmodule.exports = { add, minus: sub };\n";
    let main =
        "const { add, minus: m } = require('./math');\nfunction run() { return add(1, 2); }\nmodule.exports = run;\n";
    let index = DefinitionIndex::from_sources(&[
        ("math.js".to_string(), math.as_bytes().to_vec()),
        ("main.js".to_string(), main.as_bytes().to_vec()),
    ]);
    let delete: BTreeSet<NodeId> =
        ["math.js::sub", "math.js::mul", "main.js::run"].iter().map(|s| s.to_string()).collect();
    let none = BTreeSet::new();
    let mask = |path: &str, src: &str| {
        let edits = crate::typescript::edit::mask_file(src, &index.files[path], &index, &delete, &none).expect("mask");
        let out = apply(src, &edits).expect("apply");
        assert!(crate::parse_errors(crate::Language::JavaScript, &out).is_empty(), "{out}");
        out
    };
    assert_eq!(mask("math.js", math), "function add(a, b) { return a + b; }\nmodule.exports = { add };\n");
    assert_eq!(mask("main.js", main), "const { add } = require('./math');\n");
}

/// pathe's `src/_path.ts` in small: under `noUnusedLocals`, a package import and private
/// module constants that only the removed code read must go with it (TS6133 otherwise).
#[test]
fn package_imports_and_private_constants_only_removed_code_read_go_too() {
    let src = "import zeptomatch from \"zeptomatch\";\nimport { sep, type Opts } from \"node-pkg\";\nimport { never } from \"other\";\n\nconst _EXT_RE = /.(\\.[^./]+|\\.)$/;\nconst _PARTS = [_EXT_RE, \"x\"], _KEPT_RE = /^\\//;\nconst _SIDE = register(\"x\");\nlet _count = 0;\nconst _UNUSED = 1;\nexport const PUBLIC = /p/;\n\nexport function extname(p: string, o?: Opts): string {\n  _count++;\n  return _PARTS.length + (_EXT_RE.exec(p)?.[1] ?? sep) + String(_SIDE);\n}\n\nexport function isAbsolute(p: string): boolean {\n  return _KEPT_RE.test(p);\n}\n\nexport function matches(p: string, g: string): boolean {\n  return zeptomatch(g, p);\n}\n";
    let out = mask_one("src/_path.ts", src, &["matches"], &["extname"]);
    assert_eq!(
        out,
        "import { type Opts } from \"node-pkg\";\nimport { never } from \"other\";\n\nconst _KEPT_RE = /^\\//;\nconst _SIDE = register(\"x\");\nconst _UNUSED = 1;\nexport const PUBLIC = /p/;\n\nexport function extname(p: string, o?: Opts): string {\n  throw new Error(\"not implemented\");\n}\n\nexport function isAbsolute(p: string): boolean {\n  return _KEPT_RE.test(p);\n}\n\n"
    );
}

/// A private member only removed code read would fail `noUnusedLocals` (TS6133, TS6138 for
/// a parameter property): it is made `public`, and stays for the kept code that writes it.
#[test]
fn private_members_only_removed_code_read_become_public() {
    let src = "export class Account {\n  private limit = 0;\n  private kept = 1;\n  constructor(private readonly rate: number, private other: number) {}\n  set overdraft(v: number) {\n    this.limit = v;\n  }\n  allows(x: number): boolean {\n    return x >= -this.limit * this.rate + this.other;\n  }\n  get k(): number {\n    return this.kept + this.other;\n  }\n}\n";
    let out = mask_one("a.ts", src, &[], &["Account.allows"]);
    assert_eq!(
        out,
        "export class Account {\n  public limit = 0;\n  private kept = 1;\n  constructor(public readonly rate: number, private other: number) {}\n  set overdraft(v: number) {\n    this.limit = v;\n  }\n  allows(x: number): boolean {\n    throw new Error(\"not implemented\");\n  }\n  get k(): number {\n    return this.kept + this.other;\n  }\n}\n"
    );
}
