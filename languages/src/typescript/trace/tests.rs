use super::probe::{FileProbes, Numbered, Skip, probe_file};
use super::*;

const SAMPLE: &str = r#"#!/usr/bin/env node
"use strict";
/** Doc. */
import { helper } from "./helper.js";

export function plain(a: number): number {
  return helper(a) + 1;
}

export const arrow = (s: string, w: number): string => s.padStart(w, " ");

export const block = (n: number) => {
  "use strict";
  return [n].map((x) => x * 2);
};

export class Base {
  constructor(public readonly id: string) {}
}

export class Derived extends Base {
  private total = 0;
  constructor(id: string) {
    super(id);
    this.total = 1;
  }
  get value(): number { return this.total; }
  set value(v: number) { this.total = v; }
  accrue = (): number => this.total;
  async load(): Promise<number> {
    await Promise.resolve();
    return this.total;
  }
  *items() { yield this.total; }
  abstractLike?(): void;
}

const registered = [1, 2].map(function (v) { return v; });
"#;

fn sample_index() -> DefinitionIndex {
    DefinitionIndex::from_sources(&[("src/sample.ts".into(), SAMPLE.as_bytes().to_vec())])
}

fn probe_sample(is_test: bool) -> (DefinitionIndex, String) {
    let index = sample_index();
    let number: BTreeMap<&str, usize> = index.definitions.keys().enumerate().map(|(i, id)| (id.as_str(), i)).collect();
    let file = &index.files["src/sample.ts"];
    let defs = file
        .definitions
        .iter()
        .map(|id| Numbered { def: &index.definitions[id], number: number[id.as_str()] })
        .collect();
    let spec = FileProbes { language: Language::TypeScript, path: "src/sample.ts", defs, module: 100, is_test };
    let text = probe_file(SAMPLE, &spec).unwrap();
    (index, text)
}

/// Each line of `original` is still on its line in `probed`, with only probe text added
/// (its characters are a subsequence of the probed line).
fn assert_lines_kept(original: &str, probed: &str) {
    let probed_lines: Vec<&str> = probed.lines().collect();
    for (i, line) in original.lines().enumerate() {
        let mut rest = probed_lines[i].chars();
        for c in line.chars() {
            assert!(rest.any(|p| p == c), "line {}: `{line}` is not kept in `{}`", i + 1, probed_lines[i]);
        }
    }
}

#[test]
fn probes_keep_every_line_and_parse() {
    let (_, text) = probe_sample(false);
    assert_lines_kept(SAMPLE, &text);
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&Language::TypeScript.grammar()).unwrap();
    assert!(!parser.parse(&text, None).unwrap().root_node().has_error(), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn each_kind_of_function_gets_its_probe() {
    let (index, text) = probe_sample(false);
    let n = |id: &str| index.definitions.keys().position(|k| k == id).unwrap();
    let line = |no: usize| text.lines().nth(no - 1).unwrap().to_owned();
    assert!(line(6).contains(&format!("{{const __carve_d=__carve_e({});try{{", n("src/sample.ts::plain"))));
    // Exits at the function's own return (after its value) and when an exception passes.
    assert!(line(7).contains("return __carve_v(__carve_d,helper(a) + 1);"), "{}", line(7));
    assert!(line(8).starts_with("}catch(__carve_err){__carve_x(__carve_d);throw __carve_err}}"), "{}", line(8));
    assert!(line(10).contains(&format!("=> __carve_v(__carve_e({}),s.padStart(w, \" \"))", n("src/sample.ts::arrow"))));
    // The directive stays first; the nested arrow counts as `block`.
    assert!(line(13).contains(&format!("\"use strict\";const __carve_d=__carve_e({})", n("src/sample.ts::block"))));
    assert!(line(14).contains(&format!("(x) => __carve_v(__carve_e({}),x * 2)", n("src/sample.ts::block"))));
    // The derived constructor opens its `try` after `super(id);`.
    let ctor = n("src/sample.ts::Derived.constructor");
    assert!(line(23).ends_with(&format!("{{const __carve_d=__carve_e({ctor});")), "{}", line(23));
    assert!(line(24).ends_with("super(id);try{"), "{}", line(24));
    // A body that can fall off its end exits there.
    assert!(line(26).starts_with("  ;__carve_x(__carve_d);}catch("), "{}", line(26));
    assert!(line(27).contains("__carve_e("), "getter: {}", line(27));
    assert!(line(28).contains("__carve_e("), "setter: {}", line(28));
    let accrue = n("src/sample.ts::Derived.accrue");
    assert!(line(29).contains(&format!("__carve_v(__carve_e({accrue}),this.total)")), "{}", line(29));
    // Async functions and generators only record the hit.
    assert!(line(30).ends_with(&format!("{{__carve_h({});", n("src/sample.ts::Derived.load"))), "{}", line(30));
    assert!(line(34).contains(&format!("{{__carve_h({});", n("src/sample.ts::Derived.items"))), "{}", line(34));
    assert!(!line(35).contains("__carve"), "no body, no probe: {}", line(35));
    // A module-level anonymous function names the module; module code is a frame.
    assert!(line(38).contains("__carve_f(100)"), "{}", line(38));
    assert!(line(4).starts_with("var __carve_md=__carve_m(100);import"), "{}", line(4));
    assert!(text.contains(";__carve_x(__carve_md);\nfunction __carve_e(n: number): number"));
}

#[test]
fn test_files_only_name_callers() {
    let (_, text) = probe_sample(true);
    assert!(!text.contains("__carve_e(") && !text.contains("__carve_h("), "{text}");
    assert!(text.contains("__carve_f("));
    assert!(!text.contains("function __carve_e"), "unused helpers are left out");
}

#[test]
fn javascript_helpers_have_no_types_and_syntax_errors_skip_the_file() {
    let src = "function f(a) {\n  return a;\n}\nmodule.exports = { f };\n";
    let index = DefinitionIndex::from_sources(&[("lib/f.js".into(), src.as_bytes().to_vec())]);
    let def = &index.definitions["lib/f.js::f"];
    let spec = FileProbes {
        language: Language::JavaScript,
        path: "lib/f.js",
        defs: vec![Numbered { def, number: 0 }],
        module: 1,
        is_test: false,
    };
    let text = probe_file(src, &spec).unwrap();
    assert!(
        text.starts_with(
            "var __carve_md=__carve_m(1);function f(a) {const __carve_d=__carve_e(0);try{\n  return __carve_v(__carve_d,a);\n}catch("
        ),
        "{text}"
    );
    assert!(text.contains("function __carve_e(n) {"), "{text}");
    let broken =
        FileProbes { language: Language::JavaScript, path: "lib/f.js", defs: vec![], module: 1, is_test: false };
    assert_eq!(probe_file("function (", &broken), Err(Skip::SyntaxError));
}

#[test]
fn probe_tree_rewrites_by_rename_and_never_touches_node_modules() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path();
    std::fs::create_dir_all(tree.join("src")).unwrap();
    std::fs::write(tree.join("src/a.ts"), "export function a() {\n  return 1;\n}\n").unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let outside = elsewhere.path().join("outside.ts");
    std::fs::write(&outside, "export function a() {\n  return 1;\n}\n").unwrap();
    let index = DefinitionIndex::build(tree, &Default::default()).unwrap();
    // A hard link into another tree (as a careless copy might make) is replaced, not written through.
    std::fs::remove_file(tree.join("src/a.ts")).unwrap();
    std::fs::hard_link(&outside, tree.join("src/a.ts")).unwrap();
    let probed = probe_tree(&index, tree).unwrap();
    assert_eq!(probed.files, ["src/a.ts"]);
    assert!(std::fs::read_to_string(tree.join("src/a.ts")).unwrap().contains("__carve_e(0)"));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "export function a() {\n  return 1;\n}\n");
    let table = probe_table(&index, tree);
    assert_eq!(table.nodes, ["src/a.ts::a"]);
    assert_eq!(table.modules, ["src/a.ts"]);
}

/// Probes `src` (JavaScript, one file `lib/x.js`) with every definition numbered in id order.
fn probe_js(src: &str) -> (DefinitionIndex, String) {
    let index = DefinitionIndex::from_sources(&[("lib/x.js".into(), src.as_bytes().to_vec())]);
    let number: BTreeMap<&str, usize> = index.definitions.keys().enumerate().map(|(i, id)| (id.as_str(), i)).collect();
    let defs = index.files["lib/x.js"]
        .definitions
        .iter()
        .map(|id| Numbered { def: &index.definitions[id], number: number[id.as_str()] })
        .collect();
    let spec = FileProbes { language: Language::JavaScript, path: "lib/x.js", defs, module: 50, is_test: false };
    let text = probe_file(src, &spec).unwrap();
    (index, text)
}

#[test]
fn exits_go_where_the_function_itself_returns() {
    let src = "function early(a) {\n  if (a > 1) return;\n  return a, a + 1;\n}\n\
               function kept(a) {\n  try {\n    return a;\n  } finally {\n    a = 0;\n  }\n}\n\
               function outer(a) {\n  const inner = async () => { return a; };\n  function nested() { return 2; }\n  if (a) { throw new Error(\"no\"); }\n  return nested() }\n\
               function last(a) { a++ }\n";
    let (index, text) = probe_js(src);
    let n = |id: &str| index.definitions.keys().position(|k| k == id).unwrap();
    assert_lines_kept(src, &text);
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&Language::JavaScript.grammar()).unwrap();
    assert!(!parser.parse(&text, None).unwrap().root_node().has_error(), "{text}");
    let line = |no: usize| text.lines().nth(no - 1).unwrap().to_owned();
    // A bare `return` exits first; a sequence keeps its comma inside the exit's argument.
    assert_eq!(line(2), "  if (a > 1) {__carve_x(__carve_d);return;}");
    assert_eq!(line(3), "  return __carve_v(__carve_d,(a, a + 1));");
    // Every path of `early` returns: no exit at its end.
    assert_eq!(line(4), "}catch(__carve_err){__carve_x(__carve_d);throw __carve_err}}");
    // A function with a `finally` of its own keeps the frame until that `finally` ran.
    assert_eq!(line(7), "    return a;");
    assert_eq!(line(11), "}finally{__carve_x(__carve_d)}}");
    // Returns of nested functions are theirs: the async one has no frame to leave.
    let inner = format!("async () => {{__carve_h({}); return a; }};", n("lib/x.js::outer.inner"));
    assert!(line(13).ends_with(&inner), "{}", line(13));
    let nested = format!(
        "{{const __carve_d=__carve_e({});try{{ return __carve_v(__carve_d,2); }}catch(",
        n("lib/x.js::outer.nested")
    );
    assert!(line(14).contains(&nested), "{}", line(14));
    assert!(line(16).starts_with("  return __carve_v(__carve_d,nested()) }catch("), "{}", line(16));
    // A last statement without `;` on the brace's line is closed before the exit.
    assert!(line(17).contains("{ a++ ;__carve_x(__carve_d);}catch("), "{}", line(17));
}
