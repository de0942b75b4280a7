//! Probe insertion into one TypeScript/JavaScript file, with tree-sitter, keeping every
//! line where it was: probes go on the line of a body's opening brace (after a directive
//! prologue), `}finally{…}` goes before the closing brace on its line, and the helpers the
//! probes call are appended after the last line.
//!
//! Every function with a body gets one probe, numbered by the definition it belongs to:
//! - a function that *is* an indexed definition (function, method, constructor, getter,
//!   setter, arrow or function expression bound to a name, test callback) gets its own
//!   number;
//! - an anonymous function inside a definition counts as that definition (as a Python
//!   lambda does), one at module level counts as the module (`<module>PATH`).
//!
//! Block bodies become `{const __carve_d=__carve_e(N);try{ … }catch(__carve_err){__carve_x(__carve_d);throw __carve_err}}`
//! with an exit at each of the function's own `return`s (`return __carve_v(__carve_d, value)`,
//! `{__carve_x(__carve_d);return;}`) and, when the body can fall off its end, a
//! `;__carve_x(__carve_d);` before the closing brace: V8 compiles `try/catch` at no cost on
//! the normal path, `try/finally` with a completion dispatch on every return (measured in
//! bench/README.md, TypeScript overhead section). A body with a `finally` of its own keeps
//! `try{ … }finally{__carve_x(__carve_d)}` (its `finally` runs after its `return`, inside the
//! frame). Expression bodies become `__carve_v(__carve_e(N), expr)`. A derived constructor's `try` opens
//! after its top-level `super(…)` statement (TypeScript wants `super` at the root). Async
//! functions and generators get a hit-only probe `__carve_h(N);`: a frame pushed there
//! would stay current after the first `await`/`yield`. In test files every
//! probe only names the caller (`__carve_f`, no hits), and definitions whose owner is a
//! class, interface or namespace body do the same. Module top-level code is a frame too
//! (`var __carve_md=__carve_m(K);` before the first statement, restored at the end).

use tree_sitter::{Node, Parser};

use crate::Language;
use crate::index::{Definition, DefinitionKind};

/// Why a file was left unprobed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// tree-sitter found a syntax error: probes could break the file further.
    SyntaxError,
}

/// A definition of the file and its probe number.
pub struct Numbered<'a> {
    pub def: &'a Definition,
    pub number: usize,
}

pub struct FileProbes<'a> {
    pub language: Language,
    /// Repository-relative path (chooses the TSX grammar, `.d.ts` files are not probed).
    pub path: &'a str,
    pub defs: Vec<Numbered<'a>>,
    /// The module frame's number (`<module>PATH`).
    pub module: usize,
    /// Test code: probes only name callers.
    pub is_test: bool,
}

/// Function-like node kinds of the TypeScript and JavaScript grammars.
fn is_function(kind: &str) -> bool {
    matches!(
        kind,
        "function_declaration"
            | "generator_function_declaration"
            | "function_expression"
            | "function"
            | "generator_function"
            | "arrow_function"
            | "method_definition"
    )
}

fn is_async_or_generator(node: Node) -> bool {
    if node.kind().starts_with("generator_") {
        return true;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if child.kind() == "async" || child.kind() == "*" {
            return true;
        }
        if child.kind() == "statement_block" || child.kind() == "formal_parameters" {
            break;
        }
    }
    false
}

fn callable_kind(kind: DefinitionKind) -> bool {
    matches!(kind, DefinitionKind::Function | DefinitionKind::Method)
}

struct Insert {
    at: usize,
    rank: usize,
    text: String,
}

/// The probed text of `source`, or why it stays as it is. `number` of a definition is its
/// probe number.
pub fn probe_file(source: &str, file: &FileProbes) -> Result<String, Skip> {
    let mut parser = Parser::new();
    let grammar = file.language.grammar_for_path(std::path::Path::new(file.path));
    parser.set_language(&grammar).map_err(|_| Skip::SyntaxError)?;
    let tree = parser.parse(source, None).ok_or(Skip::SyntaxError)?;
    let root = tree.root_node();
    if root.has_error() {
        return Err(Skip::SyntaxError);
    }
    let typed = file.language == Language::TypeScript;
    let mut inserts = Vec::new();
    walk(root, source, file, &mut inserts, 0);
    let module_open = module_start(root, source).map(|at| Insert {
        at,
        rank: 0,
        text: format!("var __carve_md=__carve_m({});", file.module),
    });
    let has_module_frame = module_open.is_some();
    inserts.extend(module_open);
    inserts.sort_by_key(|i| (i.at, i.rank));
    let mut out = String::with_capacity(source.len() + inserts.len() * 40 + 600);
    let mut last = 0;
    for ins in &inserts {
        out.push_str(&source[last..ins.at]);
        out.push_str(&ins.text);
        last = ins.at;
    }
    out.push_str(&source[last..]);
    out.push_str(&helpers(typed, has_module_frame, &out));
    Ok(out)
}

/// Where module-level code starts: the first statement after comments, a hashbang and the
/// directive prologue (`"use strict"` must stay first).
fn module_start(root: Node, source: &str) -> Option<usize> {
    let mut cursor = root.walk();
    root.named_children(&mut cursor)
        .find(|c| !matches!(c.kind(), "comment" | "hash_bang_line") && !is_directive(*c, source))
        .map(|c| c.start_byte())
}

fn is_directive(stmt: Node, source: &str) -> bool {
    stmt.kind() == "expression_statement"
        && stmt.named_child(0).is_some_and(|e| e.kind() == "string")
        && stmt.utf8_text(source.as_bytes()).is_ok()
}

fn walk(node: Node, source: &str, file: &FileProbes, inserts: &mut Vec<Insert>, depth: usize) {
    let function = is_function(node.kind()) && node.child_by_field_name("body").is_some();
    if function {
        probe_function(node, source, file, inserts, depth);
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        walk(child, source, file, inserts, depth + usize::from(function));
    }
}

fn probe_function(node: Node, source: &str, file: &FileProbes, inserts: &mut Vec<Insert>, depth: usize) {
    let Some(body) = node.child_by_field_name("body") else {
        return;
    };
    // The innermost definition whose span holds the function.
    let owner = file
        .defs
        .iter()
        .filter(|d| d.def.span.start_byte <= node.start_byte() && node.end_byte() <= d.def.span.end_byte)
        .min_by_key(|d| (d.def.span.end_byte - d.def.span.start_byte, d.number));
    let (number, records) = match owner {
        // The definition's own function, or a function inside it (which counts as it).
        Some(d) => (d.number, callable_kind(d.def.kind) && !file.is_test),
        None => (file.module, false),
    };
    let suspends = is_async_or_generator(node);
    let enter = if records { "__carve_e" } else { "__carve_f" };
    if body.kind() != "statement_block" {
        // `=> expr`: evaluated with the frame pushed, then the frame is dropped.
        let enter = if suspends { if records { "__carve_h" } else { return } } else { enter };
        inserts.push(Insert { at: body.start_byte(), rank: depth, text: format!("__carve_v({enter}({number}),") });
        inserts.push(Insert { at: body.end_byte(), rank: 2_000_000 - depth, text: ")".into() });
        return;
    }
    let open = after_directives(body, source);
    if suspends {
        if records {
            inserts.push(Insert { at: open, rank: depth, text: format!("__carve_h({number});") });
        }
        return;
    }
    let close = body.end_byte() - 1;
    let try_at = if is_constructor(node, source) { root_super_end(body).unwrap_or(open) } else { open };
    if try_at == open {
        inserts.push(Insert { at: open, rank: depth, text: format!("const __carve_d={enter}({number});try{{") });
    } else {
        inserts.push(Insert { at: open, rank: depth, text: format!("const __carve_d={enter}({number});") });
        inserts.push(Insert { at: try_at, rank: depth, text: "try{".into() });
    }
    let mut own = Own::default();
    own_statements(body, &mut own);
    if own.finally {
        // A `finally` of the function's own runs after its `return`: the frame must stay
        // until the function's own `finally` ends.
        inserts.push(Insert { at: close, rank: 2_000_000 - depth, text: "}finally{__carve_x(__carve_d)}".into() });
        return;
    }
    // Exits where the function leaves: at each of its own `return`s (after the value is
    // computed), at the end of the body when it can fall through, and in a `catch` that
    // rethrows. Cheaper than `try{…}finally{…}`, which V8 compiles with a completion dispatch.
    for ret in own.returns {
        let value = {
            let mut cursor = ret.walk();
            ret.named_children(&mut cursor).find(|c| c.kind() != "comment")
        };
        match value {
            Some(value) => {
                let (open_v, close_v) = if value.kind() == "sequence_expression" {
                    ("__carve_v(__carve_d,(", "))")
                } else {
                    ("__carve_v(__carve_d,", ")")
                };
                inserts.push(Insert { at: value.start_byte(), rank: depth, text: open_v.into() });
                inserts.push(Insert { at: value.end_byte(), rank: 2_000_000 - depth, text: close_v.into() });
            }
            None => {
                inserts.push(Insert { at: ret.start_byte(), rank: depth, text: "{__carve_x(__carve_d);".into() });
                inserts.push(Insert { at: ret.end_byte(), rank: 2_000_000 - depth, text: "}".into() });
            }
        }
    }
    let falls_through = {
        let mut cursor = body.walk();
        body.named_children(&mut cursor)
            .filter(|c| c.kind() != "comment")
            .last()
            .is_none_or(|last| !matches!(last.kind(), "return_statement" | "throw_statement"))
    };
    // `;` first: the last statement may end on the brace's line without one.
    let fall = if falls_through { ";__carve_x(__carve_d);" } else { "" };
    inserts.push(Insert {
        at: close,
        rank: 2_000_000 - depth,
        text: format!("{fall}}}catch(__carve_err){{__carve_x(__carve_d);throw __carve_err}}"),
    });
}

/// What a function body holds outside its nested functions.
#[derive(Default)]
struct Own<'t> {
    returns: Vec<Node<'t>>,
    finally: bool,
}

fn own_statements<'t>(node: Node<'t>, own: &mut Own<'t>) {
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match child.kind() {
            k if is_function(k) => {}
            "class_declaration" | "class" | "abstract_class_declaration" => {}
            "return_statement" => {
                own.returns.push(child);
                own_statements(child, own);
            }
            "finally_clause" => {
                own.finally = true;
                own_statements(child, own);
            }
            _ => own_statements(child, own),
        }
    }
}

/// The byte after `{` and the directive prologue of a function body.
fn after_directives(body: Node, source: &str) -> usize {
    let mut at = body.start_byte() + 1;
    let mut cursor = body.walk();
    for stmt in body.named_children(&mut cursor) {
        if stmt.kind() == "comment" {
            continue;
        }
        if !is_directive(stmt, source) {
            break;
        }
        at = stmt.end_byte();
    }
    at
}

fn is_constructor(node: Node, source: &str) -> bool {
    node.kind() == "method_definition"
        && node.child_by_field_name("name").and_then(|n| n.utf8_text(source.as_bytes()).ok()) == Some("constructor")
}

/// The end of a top-level `super(…);` statement of a constructor body.
fn root_super_end(body: Node) -> Option<usize> {
    let mut cursor = body.walk();
    body.named_children(&mut cursor)
        .find(|stmt| {
            stmt.kind() == "expression_statement"
                && stmt.named_child(0).is_some_and(|call| {
                    call.kind() == "call_expression"
                        && call.child_by_field_name("function").is_some_and(|f| f.kind() == "super")
                })
        })
        .map(|stmt| stmt.end_byte())
}

/// The functions probes call, appended after the last line (function declarations are
/// hoisted, so they exist before any module code runs); only those `probed` calls (an
/// unused one would fail `noUnusedLocals`). Without a runtime in the realm (a process
/// carve's set-up files did not reach) they do nothing.
fn helpers(typed: bool, module_frame: bool, probed: &str) -> String {
    let (n, any, t, tv) =
        if typed { (": number", "(globalThis as any)", "<T>", ": T") } else { ("", "globalThis", "", "") };
    let mut out = String::from("\n");
    if module_frame {
        out.push_str(";__carve_x(__carve_md);\n");
    }
    for name in ["e", "f", "h", "m"] {
        if probed.contains(&format!("__carve_{name}(")) {
            out.push_str(&format!(
                "function __carve_{name}(n{n}){n} {{ const r = {any}.__carve_rt; return r === undefined ? 0 : r.{name}(n); }}\n"
            ));
        }
    }
    let uses_v = probed.contains("__carve_v(");
    if uses_v || probed.contains("__carve_x(") || module_frame {
        out.push_str(&format!(
            "function __carve_x(d{n}) {{ const r = {any}.__carve_rt; if (r !== undefined) r.x(d); }}\n"
        ));
    }
    if uses_v {
        // Through __carve_x, not its copy: V8 inlines the pair into more callers (measured).
        out.push_str(&format!("function __carve_v{t}(d{n}, v{tv}){tv} {{ __carve_x(d); return v; }}\n"));
    }
    out
}
