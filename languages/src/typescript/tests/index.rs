//! The index of the fixture (snapshots) and of small in-memory sources (resolution rules).

use super::*;
use crate::index::DefinitionKind;

#[test]
fn fixture_index_snapshot() {
    let index = fixture_index();
    assert!(index.skipped.is_empty(), "{:?}", index.skipped);
    insta::assert_snapshot!("ledger_summary", carve_testutil::index_summary(&index));
    let money: Vec<&crate::index::Definition> =
        index.definitions.values().filter(|d| d.path == "src/money/money.ts").collect();
    insta::assert_json_snapshot!("ledger_money_definitions", money);
}

#[test]
fn fixture_kinds_names_and_test_cases() {
    let index = fixture_index();
    let kind = |id: &str| index.get(id).unwrap_or_else(|| panic!("{id} not indexed")).kind;
    assert_eq!(kind("src/money/currency.ts::Currency"), DefinitionKind::Enum);
    assert_eq!(kind("src/money/currency.ts::CurrencyCode"), DefinitionKind::TypeAlias);
    assert_eq!(kind("src/money/money.ts::Priced"), DefinitionKind::Interface);
    assert_eq!(kind("src/reports/summary.ts::Report"), DefinitionKind::Module);
    assert_eq!(kind("src/reports/summary.ts::Report.lines"), DefinitionKind::Function);
    assert_eq!(kind("src/accounts/account.ts::SavingsAccount.accrue"), DefinitionKind::Method);
    assert_eq!(kind("src/util/collections.ts::round"), DefinitionKind::Function);
    assert_eq!(kind("src/util/collections.ts::clamp"), DefinitionKind::Function);
    // Getter and setter of one property: same qualname, told apart by line.
    assert!(index.get("src/accounts/account.ts::CheckingAccount.overdraft@L60").is_some());
    assert!(index.get("src/accounts/account.ts::CheckingAccount.overdraft@L64").is_some());
    // Overloads: one definition listing every signature.
    let convert = index.get("src/money/currency.ts::convert").expect("convert");
    assert_eq!(convert.signature.text.lines().count(), 3, "{}", convert.signature.text);
    assert_eq!((convert.span.start_line, convert.def_line), (34, 36));
    assert!(convert.docstring.as_deref().is_some_and(|d| d.starts_with("Convert an amount")));
    // Test cases of test files.
    let t = index.get("tests/money.test.ts::Money.keeps cents exactly").expect("test case");
    assert!(t.is_test);
    assert_eq!(t.parent.as_deref(), Some("tests/money.test.ts::Money"));
    assert!(t.references.contains(&"src/money/money.ts::Money.plus".to_string()), "{:?}", t.references);
    assert!(index.files["src/accounts/__tests__/savings.test.ts"].is_test);
    assert!(!index.files["src/accounts/ledger.ts"].is_test);
    // A describe title that equals an imported name does not shadow the import.
    let d = index.get("tests/ledger.test.ts::Ledger").expect("describe");
    assert!(!d.references.iter().any(|r| r.starts_with("tests/")), "{:?}", d.references);
    // Generic parameters and decorators.
    let ledger = index.get("src/accounts/ledger.ts::Ledger").expect("Ledger");
    assert_eq!(ledger.signature.type_parameters.as_deref(), Some("<A extends Account = Account>"));
    let deposit = index.get("src/accounts/account.ts::BaseAccount.deposit").expect("deposit");
    assert_eq!(deposit.signature.decorators, vec!["logged".to_string()]);
    assert!(
        deposit
            .load_references
            .iter()
            .any(|l| l.target == "src/util/decorators.ts::logged" && l.role == crate::index::LoadRole::Decorator)
    );
}

#[test]
fn classes_reference_members_that_implement_their_bases() {
    let index = fixture_index();
    let refs = |id: &str| index.get(id).map(|d| d.references.clone()).unwrap_or_default();
    assert!(refs("src/money/money.ts::Money").contains(&"src/money/money.ts::Money.valueIn".to_string()));
    assert!(
        refs("src/accounts/account.ts::CheckingAccount")
            .contains(&"src/accounts/account.ts::CheckingAccount.allows".to_string())
    );
    // `this.allows` in the abstract base.
    assert!(
        refs("src/accounts/account.ts::BaseAccount.withdraw")
            .contains(&"src/accounts/account.ts::BaseAccount.allows".to_string())
    );
    // `this.current.plus(…)`: untyped object, every member named `plus`.
    assert!(
        refs("src/accounts/account.ts::BaseAccount.deposit").contains(&"src/money/money.ts::Money.plus".to_string())
    );
}

fn index_of(files: &[(&str, &str)]) -> DefinitionIndex {
    let sources: Vec<(String, Vec<u8>)> = files.iter().map(|(p, s)| (p.to_string(), s.as_bytes().to_vec())).collect();
    DefinitionIndex::from_sources(&sources)
}

#[test]
fn resolves_default_namespace_and_reexported_imports() {
    let index = index_of(&[
        (
            "src/a.ts",
            "export default function main() { return helper(); }\nfunction helper() { return 1; }\nexport const util = () => 2;\n",
        ),
        ("src/b/index.ts", "export * from '../a.js';\nexport { default as mainAlias } from '../a';\n"),
        (
            "src/c.ts",
            "import run from './a';\nimport * as A from './a.js';\nimport { util, mainAlias } from './b';\nexport function go() { run(); A.util(); util(); mainAlias(); }\n",
        ),
    ]);
    let go = index.get("src/c.ts::go").expect("go");
    assert_eq!(go.references, vec!["src/a.ts::main".to_string(), "src/a.ts::util".to_string()]);
    assert_eq!(index.get("src/a.ts::main").expect("main").references, vec!["src/a.ts::helper".to_string()]);
    let c = &index.files["src/c.ts"];
    assert_eq!(c.imports[2].resolved_path.as_deref(), Some("src/b/index.ts"));
    assert_eq!(c.imports[2].names[1].target.as_deref(), Some("src/a.ts::main"));
}

#[test]
fn resolves_base_url_and_path_alias_specifiers() {
    let index = index_of(&[
        ("src/lib/math.ts", "export function add(a: number, b: number) { return a + b; }\n"),
        ("packages/app/src/util/fmt.ts", "export const fmt = (n: number) => `${n}`;\n"),
        (
            "src/main.ts",
            "import { add } from 'lib/math';\nimport { add as plus } from '@/lib/math.js';\nimport { fmt } from '~/util/fmt';\nimport { ref } from 'vue';\nexport function run() { return fmt(add(1, plus(2, 3))) + ref; }\n",
        ),
    ]);
    let run = index.get("src/main.ts::run").expect("run");
    assert_eq!(
        run.references,
        vec!["packages/app/src/util/fmt.ts::fmt".to_string(), "src/lib/math.ts::add".to_string()]
    );
    let resolved: Vec<Option<&str>> =
        index.files["src/main.ts"].imports.iter().map(|i| i.resolved_path.as_deref()).collect();
    assert_eq!(
        resolved,
        [Some("src/lib/math.ts"), Some("src/lib/math.ts"), Some("packages/app/src/util/fmt.ts"), None]
    );
}

#[test]
fn scopes_nested_functions_and_namespaces() {
    let index = index_of(&[(
        "m.ts",
        "function outer() {\n  function inner() { return 1; }\n  return inner();\n}\nfunction inner() { return 2; }\nnamespace N {\n  export function a() { return b(); }\n  function b() { return 3; }\n}\nclass K { m() { return this.n(); } n() { return inner(); } }\nconst x = N.a();\n",
    )]);
    assert_eq!(index.get("m.ts::outer").expect("outer").references, vec!["m.ts::outer.inner".to_string()]);
    assert_eq!(index.get("m.ts::N.a").expect("a").references, vec!["m.ts::N.b".to_string()]);
    assert_eq!(index.get("m.ts::K.m").expect("m").references, vec!["m.ts::K.n".to_string()]);
    // Class bodies are not scopes: `inner` in a method is the top-level one.
    assert_eq!(index.get("m.ts::K.n").expect("n").references, vec!["m.ts::inner".to_string()]);
    let f = &index.files["m.ts"];
    assert!(f.module_references.iter().any(|m| m.target == "m.ts::N.a"), "{:?}", f.module_references);
}

#[test]
fn javascript_and_tsx_files() {
    let index = index_of(&[
        (
            "lib/util.mjs",
            "/** Doubles. */\nexport const double = (x) => x * 2;\nexport function triple(x) { return x * 3; }\nexport class Box {\n  #v = 0;\n  get value() { return this.#v; }\n  set value(v) { this.#v = double(v); }\n  bump = () => triple(this.value);\n}\nlet a = function () {}, b = () => {};\nconst api = { get() { return 1; }, put: () => 2 };\n",
        ),
        (
            "lib/util.test.js",
            "import { double } from './util.mjs';\ntest('doubles', () => { expect(double(2)).toBe(4); });\n",
        ),
        (
            "ui/View.tsx",
            "import { double } from '../lib/util.mjs';\nexport function View({ n }: { n: number }) { return <div>{double(n)}</div>; }\n",
        ),
    ]);
    assert!(index.skipped.is_empty(), "{:?}", index.skipped);
    let ids: Vec<&str> = index.files["lib/util.mjs"].definitions.iter().map(String::as_str).collect();
    assert_eq!(
        ids,
        [
            "lib/util.mjs::double",
            "lib/util.mjs::triple",
            "lib/util.mjs::Box",
            "lib/util.mjs::Box.#v",
            "lib/util.mjs::Box.value@L6",
            "lib/util.mjs::Box.value@L7",
            "lib/util.mjs::Box.bump",
            "lib/util.mjs::a",
            "lib/util.mjs::b"
        ]
    );
    assert_eq!(index.get("lib/util.mjs::double").and_then(|d| d.docstring.as_deref()), Some("Doubles."));
    assert_eq!(index.get("lib/util.mjs::double").map(|d| d.language), Some(crate::Language::JavaScript));
    assert!(index.files["lib/util.test.js"].is_test);
    assert!(index.get("lib/util.test.js::doubles").is_some_and(|d| d.references == ["lib/util.mjs::double"]));
    assert_eq!(
        index.get("ui/View.tsx::View").map(|d| d.references.clone()),
        Some(vec!["lib/util.mjs::double".to_string()])
    );
}

#[test]
fn test_paths_follow_jest_and_vitest_conventions() {
    use super::super::is_test_path;
    assert!(is_test_path("tests/a.test.ts"));
    assert!(is_test_path("src/a.spec.tsx"));
    assert!(is_test_path("src/__tests__/helpers.ts"));
    assert!(is_test_path("a.test.mjs"));
    assert!(!is_test_path("src/test.ts"));
    assert!(!is_test_path("src/testing.ts"));
    assert!(!is_test_path("src/contest.ts"));
    assert!(crate::is_test_path(crate::Language::TypeScript, "x/y.spec.ts"));
    assert!(crate::is_test_path(crate::Language::JavaScript, "x/__tests__/y.js"));
}

#[test]
fn resolves_commonjs_require_and_exports() {
    let index = index_of(&[
        (
            "lib/math.js",
            "function add(a, b) { return a + b; }\nfunction sub(a, b) { return a - b; }\nexports.mul = function (a, b) { return a * b; };\nmodule.exports.div = (a, b) => a / b;\nmodule.exports = { add, minus: sub };\n",
        ),
        ("lib/one.js", "function one() { return 1; }\nmodule.exports = one;\n"),
        (
            "lib/main.js",
            "const { add, minus: m } = require('./math');\nconst math = require('./math.js');\nconst one = require('./one');\nfunction run() { return add(one(), m(2, math.mul(3, math.div(4, 2)))); }\nmodule.exports = { run };\n",
        ),
    ]);
    assert!(index.skipped.is_empty(), "{:?}", index.skipped);
    let run = index.get("lib/main.js::run").expect("run");
    assert_eq!(
        run.references,
        ["lib/math.js::add", "lib/math.js::div", "lib/math.js::mul", "lib/math.js::sub", "lib/one.js::one"]
            .map(String::from)
            .to_vec()
    );
    // Export lists are not uses: `add` and `sub` are referenced only by `run`.
    assert!(
        index.files["lib/math.js"].module_references.is_empty(),
        "{:?}",
        index.files["lib/math.js"].module_references
    );
    assert!(
        index.files["lib/main.js"].module_references.is_empty(),
        "{:?}",
        index.files["lib/main.js"].module_references
    );
    let exported: Vec<&str> = index.files["lib/math.js"].exported.iter().map(String::as_str).collect();
    assert_eq!(exported, ["lib/math.js::add", "lib/math.js::div", "lib/math.js::mul", "lib/math.js::sub"]);
}
