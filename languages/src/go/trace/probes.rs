//! Probe insertion into one Go file of the shadow copy, with tree-sitter. Every insertion
//! goes on the line where it is made (after an opening brace, around a statement, after
//! the package clause), so line numbers do not change.
//!
//! Source files (`probe`): `carve_probe_.P(N);` after the `{` of every function and method
//! the index numbers, and of every function literal inside one (a literal counts as the
//! definition it is written in); `main()` of package main also gets
//! `defer carve_probe_.Begin()();`. Functions marked `//go:nosplit` are skipped (a probe
//! call could overflow their stack budget), as are literals at package level (no
//! definition holds them: their callees see `<module>PATH` as the caller).
//!
//! Test files: no entry probes (their definitions name callers through the span table, as
//! Python's test files do), but `carve_probe_.T(t, "pkg");` at the top of every function
//! and literal with a `*testing.T` / `*testing.F` parameter `t` (test functions, subtests,
//! helpers: a test already current is left alone), `carve_probe_.Pause(t, "pkg");` /
//! `carve_probe_.Resume(t, "pkg")` around `t.Parallel()`, and in `TestMain`
//! `defer carve_probe_.Begin()();` with each `os.Exit(` turned into
//! `carve_probe_.Exit(os.Exit, `. An example function (`func ExampleX()`: no `*testing.T`
//! to mark) gets `defer carve_probe_.E("pkg", "ExampleX")();`, current from its entry to
//! its return, so examples are attributed like tests (`pkg/ExampleX`).

use std::collections::HashMap;

use tree_sitter::{Node, Parser};

/// The package name carve's probe package is imported under in probed files.
pub const ALIAS: &str = "carve_probe_";

/// The name a blank `_ *testing.T` parameter of a test file gets, so that its test can
/// be marked (an unused parameter is legal Go).
pub const BLANK_T: &str = "carve_t_";

/// What to insert into one file.
pub struct FilePlan<'a> {
    /// Test code (`_test.go`): markers, no entry probes.
    pub test: bool,
    /// Import path of the file's package (test ids are `path/TestX/sub`).
    pub package_path: &'a str,
    /// Import path of the probe package of the file's module.
    pub probe_import: &'a str,
    /// Body (`{`) byte offset -> node number, for the file's numbered functions and methods.
    pub bodies: &'a HashMap<usize, u32>,
}

/// A probed file.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Probed {
    /// The new text; `None` when nothing was inserted (the file is left as it is).
    pub text: Option<String>,
    /// Name in the package clause.
    pub package: String,
    /// The file defines `TestMain`.
    pub has_test_main: bool,
    /// Entry probes inserted.
    pub probes: usize,
    /// Test markers inserted.
    pub markers: usize,
}

/// Why a file was not probed.
#[derive(Debug, PartialEq, Eq)]
pub enum Skip {
    Syntax(usize),
    NoPackage,
}

struct Walk<'a> {
    src: &'a str,
    plan: &'a FilePlan<'a>,
    testing: Vec<String>,
    os: Option<String>,
    package: String,
    /// (start, end, text): replace `start..end` (empty for an insertion) with `text`.
    edits: Vec<(usize, usize, String)>,
    out: Probed,
}

pub fn new_parser() -> Parser {
    let mut p = Parser::new();
    p.set_language(&tree_sitter_go::LANGUAGE.into()).expect("the Go grammar loads");
    p
}

/// Plans and applies the probes of one file.
pub fn probe_file(parser: &mut Parser, src: &str, plan: &FilePlan) -> Result<Probed, Skip> {
    let tree = parser.parse(src, None).ok_or(Skip::Syntax(1))?;
    let root = tree.root_node();
    if root.has_error() {
        return Err(Skip::Syntax(first_error_line(root)));
    }
    let mut w = Walk {
        src,
        plan,
        testing: Vec::new(),
        os: None,
        package: String::new(),
        edits: Vec::new(),
        out: Probed::default(),
    };
    let mut package_end = None;
    let mut cursor = root.walk();
    for child in root.named_children(&mut cursor) {
        match child.kind() {
            "package_clause" => {
                package_end = Some(child.end_byte());
                let mut c = child.walk();
                if let Some(id) = child.named_children(&mut c).find(|n| n.kind() == "package_identifier") {
                    w.package = text(id, src).to_string();
                }
            }
            "import_declaration" => w.imports(child),
            _ => {}
        }
    }
    let package_end = package_end.ok_or(Skip::NoPackage)?;
    let mut cursor = root.walk();
    for child in root.named_children(&mut cursor) {
        match child.kind() {
            "function_declaration" | "method_declaration" => w.declaration(child),
            _ => w.visit(child, None, &[]),
        }
    }
    let mut out = std::mem::take(&mut w.out);
    out.package = w.package.clone();
    if !w.edits.is_empty() {
        w.edits.push((package_end, package_end, format!("; import {ALIAS} {:?}", plan.probe_import)));
        out.text = Some(apply(src, w.edits));
    }
    Ok(out)
}

fn apply(src: &str, mut edits: Vec<(usize, usize, String)>) -> String {
    edits.sort_by_key(|e| (e.0, e.1));
    let mut out = String::with_capacity(src.len() + edits.iter().map(|e| e.2.len()).sum::<usize>());
    let mut at = 0;
    for (start, end, text) in edits {
        out.push_str(&src[at..start]);
        out.push_str(&text);
        at = end;
    }
    out.push_str(&src[at..]);
    out
}

fn text<'s>(node: Node, src: &'s str) -> &'s str {
    &src[node.byte_range()]
}

fn first_error_line(node: Node) -> usize {
    if node.is_error() || node.is_missing() {
        return node.start_position().row + 1;
    }
    let mut c = node.walk();
    node.children(&mut c).find(|n| n.has_error()).map(first_error_line).unwrap_or(node.start_position().row + 1)
}

impl Walk<'_> {
    fn imports(&mut self, decl: Node) {
        let mut specs = Vec::new();
        collect(decl, "import_spec", &mut specs);
        for spec in specs {
            let Some(path) = spec.child_by_field_name("path") else { continue };
            let path = text(path, self.src).trim_matches(|c| c == '"' || c == '`');
            let name = spec.child_by_field_name("name").map(|n| text(n, self.src).to_string());
            let local = |default: &str| name.clone().unwrap_or_else(|| default.to_string());
            match path {
                "testing" => self.testing.push(local("testing")),
                "os" => self.os = Some(local("os")),
                _ => {}
            }
        }
    }

    /// `t` of every `t *testing.T` / `t *testing.F` parameter. In test files a blank one
    /// (`func(_ *testing.T, in string)`, as fuzz targets are often written: their seed
    /// corpus runs as subtests `FuzzX/seed#0`) is named [`BLANK_T`] so it can be marked.
    fn test_params(&mut self, params: Option<Node>) -> Vec<String> {
        let Some(params) = params else { return Vec::new() };
        let mut out = Vec::new();
        let mut c = params.walk();
        for p in params.named_children(&mut c).filter(|p| p.kind() == "parameter_declaration") {
            let Some(ty) = p.child_by_field_name("type") else { continue };
            let ty = text(ty, self.src).replace(char::is_whitespace, "");
            let is_tb = self.testing.iter().any(|t| ty == format!("*{t}.T") || ty == format!("*{t}.F"));
            if !is_tb {
                continue;
            }
            let mut nc = p.walk();
            for name in p.children_by_field_name("name", &mut nc) {
                let name_text = text(name, self.src);
                if name_text != "_" {
                    out.push(name_text.to_string());
                } else if self.plan.test {
                    self.edits.push((name.start_byte(), name.end_byte(), BLANK_T.to_string()));
                    out.push(BLANK_T.to_string());
                }
            }
        }
        out
    }

    fn marker(&self, t: &str) -> String {
        format!(" {ALIAS}.T({t}, {:?});", self.plan.package_path)
    }

    fn declaration(&mut self, decl: Node) {
        let Some(body) = decl.child_by_field_name("body") else { return };
        let name = decl.child_by_field_name("name").map(|n| text(n, self.src)).unwrap_or("");
        let open = body.start_byte() + 1;
        let params = self.test_params(decl.child_by_field_name("parameters"));
        let mut node = None;
        if self.plan.test {
            if decl.kind() == "function_declaration" && name == "TestMain" {
                self.out.has_test_main = true;
                self.edits.push((open, open, format!(" defer {ALIAS}.Begin()();")));
                self.exits(body);
            }
            if let Some(t) = params.first() {
                self.edits.push((open, open, self.marker(t)));
                self.out.markers += 1;
            } else if decl.kind() == "function_declaration" && is_example(name) && no_parameters(decl) {
                let pkg = self.plan.package_path;
                self.edits.push((open, open, format!(" defer {ALIAS}.E({pkg:?}, {name:?})();")));
                self.out.markers += 1;
            }
        } else if !nosplit(decl, self.src) {
            node = self.plan.bodies.get(&body.start_byte()).copied();
            if let Some(n) = node {
                self.edits.push((open, open, format!(" {ALIAS}.P({n});")));
                self.out.probes += 1;
                if decl.kind() == "function_declaration" && name == "main" && self.package == "main" {
                    self.edits.push((open, open, format!(" defer {ALIAS}.Begin()();")));
                }
            }
        }
        self.visit(body, node, &params);
    }

    /// Function literals and `t.Parallel()` statements below `node`; `enclosing` is the
    /// numbered definition the code belongs to, `tparams` the test parameters in scope.
    fn visit(&mut self, node: Node, enclosing: Option<u32>, tparams: &[String]) {
        match node.kind() {
            "func_literal" => {
                let Some(body) = node.child_by_field_name("body") else { return };
                let open = body.start_byte() + 1;
                let mut inner = tparams.to_vec();
                if self.plan.test {
                    let params = self.test_params(node.child_by_field_name("parameters"));
                    if let Some(t) = params.first() {
                        self.edits.push((open, open, self.marker(t)));
                        self.out.markers += 1;
                    }
                    inner.extend(params);
                } else if let Some(n) = enclosing {
                    self.edits.push((open, open, format!(" {ALIAS}.P({n});")));
                    self.out.probes += 1;
                }
                self.visit_children(body, enclosing, &inner);
                return;
            }
            "expression_statement" if self.plan.test => {
                if let Some(t) = parallel_call(node, self.src).filter(|t| tparams.iter().any(|p| p == t)) {
                    let pkg = self.plan.package_path;
                    self.edits.push((node.start_byte(), node.start_byte(), format!("{ALIAS}.Pause({t}, {pkg:?}); ")));
                    self.edits.push((node.end_byte(), node.end_byte(), format!("; {ALIAS}.Resume({t}, {pkg:?})")));
                    self.out.markers += 1;
                }
            }
            _ => {}
        }
        self.visit_children(node, enclosing, tparams);
    }

    fn visit_children(&mut self, node: Node, enclosing: Option<u32>, tparams: &[String]) {
        let mut c = node.walk();
        let children: Vec<Node> = node.named_children(&mut c).collect();
        for child in children {
            self.visit(child, enclosing, tparams);
        }
    }

    /// `os.Exit(code)` in TestMain becomes `carve_probe_.Exit(os.Exit, code)`.
    fn exits(&mut self, body: Node) {
        let Some(os) = self.os.clone() else { return };
        let mut calls = Vec::new();
        collect(body, "call_expression", &mut calls);
        for call in calls {
            let (Some(f), Some(args)) = (call.child_by_field_name("function"), call.child_by_field_name("arguments"))
            else {
                continue;
            };
            if text(f, self.src).replace(char::is_whitespace, "") == format!("{os}.Exit") {
                self.edits.push((f.start_byte(), f.end_byte(), format!("{ALIAS}.Exit")));
                self.edits.push((args.start_byte() + 1, args.start_byte() + 1, format!("{os}.Exit, ")));
            }
        }
    }
}

/// `t` of a `t.Parallel()` statement.
fn parallel_call<'s>(stmt: Node, src: &'s str) -> Option<&'s str> {
    let call = stmt.named_child(0).filter(|c| c.kind() == "call_expression")?;
    let f = call.child_by_field_name("function").filter(|f| f.kind() == "selector_expression")?;
    let args = call.child_by_field_name("arguments")?;
    let operand = f.child_by_field_name("operand").filter(|o| o.kind() == "identifier")?;
    let field = f.child_by_field_name("field")?;
    (text(field, src) == "Parallel" && args.named_child_count() == 0).then(|| text(operand, src))
}

/// Whether a `//go:nosplit` directive precedes the declaration.
fn nosplit(decl: Node, src: &str) -> bool {
    let mut prev = decl.prev_sibling();
    while let Some(p) = prev.filter(|p| p.kind() == "comment") {
        if text(p, src).trim_start().starts_with("//go:nosplit") {
            return true;
        }
        prev = p.prev_sibling();
    }
    false
}

fn collect<'t>(node: Node<'t>, kind: &str, out: &mut Vec<Node<'t>>) {
    if node.kind() == kind {
        out.push(node);
    }
    let mut c = node.walk();
    for child in node.named_children(&mut c) {
        collect(child, kind, out);
    }
}

/// Whether `name` names an example function `go test` runs (`Example`, `ExampleF`,
/// `ExampleT_M`, `ExampleF_suffix`).
pub fn is_example(name: &str) -> bool {
    name.starts_with("Example") && crate::go::runner::harness::is_test_function(name)
}

fn no_parameters(decl: Node) -> bool {
    decl.child_by_field_name("parameters").is_none_or(|p| p.named_child_count() == 0)
}
