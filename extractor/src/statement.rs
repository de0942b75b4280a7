//! Problem statements from our own templates (`extractor/templates/level{1,2}.md`), no LLM:
//! a short feature description built from the F2P test names and docstrings, the files to
//! touch (Level 1), and the Interface section rendered from the [`Contract`].
//!
//! Templates use `{{name}}` placeholders: `title`, `feature`, `repo`, `files`, `interface`,
//! `test_count`, `package`, `package_home` (the language's words for the package), `names`, `support`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use carve_languages::index::{DefinitionIndex, DefinitionKind};
use carve_languages::runner::test_parts;
use carve_languages::support;
use carve_languages::syntax::{BlockStyle, ContractSyntax, DecoratorStyle, DocStyle, ExistingMembers, MethodPlacement};
use carve_languages::syntax::{TestExample, TestFacts};

use crate::contract::{Contract, ContractObject};

const LEVEL1: &str = include_str!("../templates/level1.md");
const LEVEL2: &str = include_str!("../templates/level2.md");

/// The package a Level 2 solution is written as.
pub const SOLUTION_PACKAGE: &str = "agent_code";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum Level {
    /// Implement the feature inside the repository.
    One,
    /// Implement the feature from scratch as the package [`SOLUTION_PACKAGE`].
    Two,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementContext {
    pub level: Level,
    /// `owner/name` or a directory name.
    pub repo: String,
    /// F2P test ids.
    pub f2p_tests: Vec<String>,
    /// First docstring line (or whole docstring) per F2P test id, where there is one.
    pub test_docstrings: BTreeMap<String, String>,
    /// A title; derived from the F2P test files when `None`.
    pub title: Option<String>,
    /// Level 2 package name; [`SOLUTION_PACKAGE`] when empty.
    pub package: String,
    /// Level 2: what the package must declare besides the contract's objects (a sentence).
    pub package_support: Option<String>,
    /// Literal examples and constants of the F2P tests' code ([`test_facts`]).
    pub facts: TestFacts,
    /// A feature description written elsewhere (`--describe`): replaces the generated one.
    pub description: Option<String>,
    /// Calls of the feature in code that stays, removed with it (Level 1 names them).
    pub call_sites: Vec<CallSite>,
}

/// A call statement of staying code that was removed with the feature.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CallSite {
    /// Repository-relative file.
    pub path: String,
    /// 1-based line of the statement in the original file.
    pub line: usize,
    /// Qualified name of the staying definition that held the call.
    pub caller: String,
    /// Qualified name of the feature definition it called.
    pub callee: String,
}

impl StatementContext {
    pub fn new(level: Level, repo: impl Into<String>, f2p_tests: Vec<String>) -> StatementContext {
        StatementContext {
            level,
            repo: repo.into(),
            f2p_tests,
            test_docstrings: BTreeMap::new(),
            title: None,
            package: SOLUTION_PACKAGE.to_string(),
            package_support: None,
            facts: TestFacts::default(),
            description: None,
            call_sites: Vec::new(),
        }
    }
}

/// Docstrings of the given test ids' functions, from the index (`path::Class::test[p]` is
/// the definition `path::Class.test`), for [`StatementContext::test_docstrings`].
pub fn test_docstrings(index: &DefinitionIndex, tests: &[String]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for t in tests {
        let base = t.split('[').next().unwrap_or(t);
        let (path, parts) = test_parts(base);
        if parts.is_empty() {
            continue;
        }
        let id = format!("{path}::{}", parts.join("."));
        if let Some(doc) = index.definitions.get(&id).and_then(|d| d.docstring.clone()) {
            out.insert(t.clone(), doc);
        }
    }
    out
}

/// The definition a test id names (`path::Class::test[p]` is `path::Class.test`).
fn test_definition_id(t: &str) -> Option<String> {
    let base = t.split('[').next().unwrap_or(t);
    let (path, parts) = test_parts(base);
    (!parts.is_empty()).then(|| format!("{path}::{}", parts.join(".")))
}

/// Literal examples and constants of the given tests' code (their definitions, read from
/// the files under `root`), through each file's language ([`LanguageSupport::test_facts`]).
///
/// [`LanguageSupport::test_facts`]: carve_languages::interface::LanguageSupport::test_facts
pub fn test_facts(root: &std::path::Path, index: &DefinitionIndex, tests: &[String]) -> TestFacts {
    let mut by_file: BTreeMap<&str, Vec<(usize, usize)>> = BTreeMap::new();
    for t in tests {
        if let Some(d) = test_definition_id(t).and_then(|id| index.definitions.get(&id)) {
            by_file.entry(d.path.as_str()).or_default().push((d.span.start_byte, d.span.end_byte));
        }
    }
    let mut facts = TestFacts::default();
    let mut constants = BTreeSet::new();
    for (path, ranges) in by_file {
        let (Some(file), Ok(source)) = (index.files.get(path), std::fs::read_to_string(root.join(path))) else {
            continue;
        };
        let f = support(file.language).test_facts(&source, &ranges);
        for e in f.examples {
            if !facts.examples.contains(&e) {
                facts.examples.push(e);
            }
        }
        constants.extend(f.constants);
    }
    facts.constants = constants.into_iter().collect();
    facts
}

/// `test_total_value_with_discount` → `total value with discount`.
fn humanize(name: &str) -> String {
    let n = name.strip_prefix("test_").or_else(|| name.strip_prefix("Test")).unwrap_or(name);
    n.trim_matches('_').replace('_', " ")
}

fn title_of(ctx: &StatementContext) -> String {
    if let Some(t) = &ctx.title {
        return t.clone();
    }
    let stems: BTreeSet<String> = ctx
        .f2p_tests
        .iter()
        .map(|t| test_parts(t).0)
        .filter_map(|p| p.rsplit('/').next())
        .map(|f| {
            let stem = f.rsplit_once('.').map_or(f, |(s, _)| s);
            let stem = stem.strip_prefix("test_").or_else(|| stem.strip_suffix("_test")).unwrap_or(stem);
            // `money.test.ts`, `reports.spec.ts`
            let stem = stem.strip_suffix(".test").or_else(|| stem.strip_suffix(".spec")).unwrap_or(stem);
            stem.replace('_', " ")
        })
        .collect();
    match stems.len() {
        0 => "Implement a feature".to_string(),
        _ => format!("Implement the {} feature", stems.into_iter().collect::<Vec<_>>().join(", ")),
    }
}

fn first_line(doc: Option<&str>) -> Option<&str> {
    doc.and_then(|d| d.lines().map(str::trim).find(|l| !l.is_empty()))
}

/// Identifier words of `s`.
fn word_set(s: &str) -> BTreeSet<&str> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect()
}

/// What the extracted objects do, from their doc comments.
fn provides(contract: &Contract) -> Vec<String> {
    let mut out = Vec::new();
    for o in &contract.objects {
        if o.existing {
            for m in &o.members {
                let doc = first_line(m.docstring.as_deref()).map(|d| format!(": {d}")).unwrap_or_default();
                out.push(format!("- `{}` ({} of the existing `{}`){doc}", m.access, kind_word(m.kind), o.qualname));
            }
        } else {
            let doc = first_line(o.docstring.as_deref()).map(|d| format!(": {d}")).unwrap_or_default();
            out.push(format!("- `{}` ({}){doc}", o.access, kind_word(o.kind)));
        }
    }
    out
}

/// Every name a contract object (or member) is called by.
fn contract_names(contract: &Contract) -> BTreeSet<&str> {
    fn walk<'a>(o: &'a ContractObject, out: &mut BTreeSet<&'a str>) {
        out.insert(o.name.as_str());
        for m in &o.members {
            walk(m, out);
        }
    }
    let mut out = BTreeSet::new();
    for o in &contract.objects {
        walk(o, &mut out);
    }
    out
}

/// `- `call` gives `result`` / `- `call` raises `Error` (message matching …)`.
fn example_line(e: &TestExample) -> String {
    match (&e.result, &e.raises) {
        (Some(r), _) => format!("- `{}` gives `{r}`", e.call),
        (None, Some(err)) => match &e.message {
            Some(m) => format!("- `{}` raises `{err}` with a message matching `{m}`", e.call),
            None => format!("- `{}` raises `{err}`", e.call),
        },
        (None, None) => format!("- `{}`", e.call),
    }
}

/// The generated description: what the objects do (doc comments), the behaviours the tests
/// are named after, literal examples and errors the tests check on the feature's names, and
/// the constants they use.
pub fn feature_description(contract: &Contract, ctx: &StatementContext) -> String {
    let mut out = String::new();
    let provided = provides(contract);
    if !provided.is_empty() {
        let _ = writeln!(out, "The feature provides:\n\n{}\n", provided.join("\n"));
    }
    out.push_str(&behaviours(ctx));
    const MAX_EXAMPLES: usize = 15;
    let names = contract_names(contract);
    let examples: Vec<String> = ctx
        .facts
        .examples
        .iter()
        .filter(|e| word_set(&e.call).iter().any(|w| names.contains(w)))
        .map(example_line)
        .collect();
    if !examples.is_empty() {
        let more = examples.len().saturating_sub(MAX_EXAMPLES);
        let _ = write!(
            out,
            "\n\nExamples of what it must do:\n\n{}",
            examples.into_iter().take(MAX_EXAMPLES).collect::<Vec<_>>().join("\n")
        );
        if more > 0 {
            let _ = write!(out, "\n- … and {more} more");
        }
    }
    if !ctx.facts.constants.is_empty() {
        let c: Vec<String> = ctx.facts.constants.iter().take(20).map(|c| format!("`{c}`")).collect();
        let _ = write!(out, "\n\nConstants the tests use: {}.", c.join(", "));
    }
    out
}

/// One bullet per distinct test (parametrizations folded), with its docstring's first line:
/// every F2P test is covered (a feature whose tests a protection policy gathered from many
/// files has as many behaviours). When the tests come from several files, the bullets are
/// grouped under their file.
fn behaviours(ctx: &StatementContext) -> String {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut by_file: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for t in &ctx.f2p_tests {
        let base = t.split('[').next().unwrap_or(t);
        if !seen.insert(base.to_string()) {
            continue;
        }
        let (path, parts) = test_parts(base);
        let Some((name, classes)) = parts.split_last() else { continue };
        let mut line = String::new();
        if !classes.is_empty() {
            let _ = write!(line, "{}: ", classes.iter().map(|c| humanize(c)).collect::<Vec<_>>().join(" / "));
        }
        line.push_str(&humanize(name));
        let doc = ctx.test_docstrings.get(t).or_else(|| ctx.test_docstrings.get(base));
        if let Some(first) = doc.and_then(|d| d.lines().map(str::trim).find(|l| !l.is_empty())) {
            let _ = write!(line, " — {first}");
        }
        by_file.entry(path.to_string()).or_default().push(format!("- {line}"));
    }
    let mut out = String::from("The feature is what the following behaviours describe:\n\n");
    if by_file.len() == 1 {
        out.push_str(&by_file.into_values().flatten().collect::<Vec<_>>().join("\n"));
        return out;
    }
    let sections: Vec<String> =
        by_file.into_iter().map(|(file, bullets)| format!("From `{file}`:\n\n{}", bullets.join("\n"))).collect();
    out.push_str(&sections.join("\n\n"));
    out
}

fn python_header(sig_text: &str, kind: DefinitionKind, name: &str) -> String {
    let t = sig_text.trim().trim_end_matches(':').trim_end();
    if t.is_empty() {
        return match kind {
            DefinitionKind::Class => format!("class {name}:"),
            _ => format!("def {name}(...):"),
        };
    }
    format!("{t}:")
}

fn push_indented(out: &mut String, text: &str, indent: &str) {
    for l in text.lines() {
        if l.trim().is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "{indent}{l}");
        }
    }
}

/// `def …:` with decorators, docstring and `...` body (members nested for classes).
fn python_block(o: &ContractObject, indent: &str, out: &mut String) {
    for d in &o.signature.decorators {
        let _ = writeln!(out, "{indent}@{d}");
    }
    let header = python_header(&o.signature.text, o.kind, &o.name);
    let mut lines = header.lines();
    if let Some(first) = lines.next() {
        let _ = writeln!(out, "{indent}{}", first.trim_start());
    }
    for l in lines {
        let _ = writeln!(out, "{l}");
    }
    let inner = format!("{indent}    ");
    let mut has_body = false;
    if let Some(doc) = &o.docstring {
        let doc = doc.replace("\"\"\"", "\\\"\\\"\\\"");
        if doc.contains('\n') {
            let _ = writeln!(out, "{inner}\"\"\"");
            push_indented(out, &doc, &inner);
            let _ = writeln!(out, "{inner}\"\"\"");
        } else {
            let _ = writeln!(out, "{inner}\"\"\"{doc}\"\"\"");
        }
        has_body = true;
    }
    for m in &o.members {
        if has_body {
            out.push('\n');
        }
        python_block(m, &inner, out);
        has_body = true;
    }
    if o.kind != DefinitionKind::Class || !has_body {
        let _ = writeln!(out, "{inner}...");
    }
}

fn kind_word(k: DefinitionKind) -> &'static str {
    match k {
        DefinitionKind::Function => "function",
        DefinitionKind::Method => "method",
        DefinitionKind::Class => "class",
        DefinitionKind::Interface => "interface",
        DefinitionKind::TypeAlias => "type",
        DefinitionKind::Enum => "enum",
        DefinitionKind::Struct => "struct",
        DefinitionKind::Trait => "trait",
        DefinitionKind::Module => "module",
        _ => "definition",
    }
}

/// How the object's language writes contracts.
fn syntax(o: &ContractObject) -> &'static ContractSyntax {
    support(o.language).contract_syntax()
}

/// An object as its language writes it, with a placeholder body.
fn code_block(o: &ContractObject, indent: &str, out: &mut String) {
    match syntax(o).block {
        BlockStyle::Indented => python_block(o, indent, out),
        BlockStyle::Braced => braced_block(o, indent, out),
    }
}

/// The doc comment in the language's own syntax (JSDoc, `///`, `//`).
fn doc_comment(o: &ContractObject, indent: &str, out: &mut String) {
    let Some(doc) = o.docstring.as_deref().map(str::trim).filter(|d| !d.is_empty()) else { return };
    match syntax(o).doc {
        DocStyle::JsDoc => {
            let doc = doc.replace("*/", "*\\/");
            if doc.contains('\n') {
                let _ = writeln!(out, "{indent}/**");
                for l in doc.lines() {
                    let _ = writeln!(out, "{indent} *{}{l}", if l.is_empty() { "" } else { " " });
                }
                let _ = writeln!(out, "{indent} */");
            } else {
                let _ = writeln!(out, "{indent}/** {doc} */");
            }
        }
        // Written inside the body by the indented block style.
        DocStyle::Docstring => {}
        DocStyle::Line(marker) => {
            for l in doc.lines() {
                let _ = writeln!(out, "{indent}{marker}{}{l}", if l.is_empty() { "" } else { " " });
            }
        }
    }
}

/// Brace languages: doc comment, decorators/attributes, the signature as written, then
/// `{ … }` for a function, the members for a class or module, nothing more for a
/// declaration written out whole (interface, type alias, enum, struct).
fn braced_block(o: &ContractObject, indent: &str, out: &mut String) {
    doc_comment(o, indent, out);
    for d in &o.signature.decorators {
        match syntax(o).decorators {
            DecoratorStyle::At => {
                let _ = writeln!(out, "{indent}@{d}");
            }
            DecoratorStyle::Attribute if d.starts_with('#') => {
                let _ = writeln!(out, "{indent}{d}");
            }
            DecoratorStyle::Attribute => {
                let _ = writeln!(out, "{indent}#[{d}]");
            }
            DecoratorStyle::None => {}
        }
    }
    let text = o.signature.text.trim();
    let text = if text.is_empty() { o.name.as_str() } else { text };
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("").trim_start();
    let mut header = format!("{indent}{first}");
    for l in lines {
        header.push('\n');
        header.push_str(l);
    }
    let abstract_like = text.ends_with(';') || text.split_whitespace().any(|w| w == "abstract" || w == "declare");
    match o.kind {
        DefinitionKind::Function | DefinitionKind::Method if abstract_like => {
            let _ = writeln!(out, "{header}{}", if text.ends_with(';') { "" } else { ";" });
        }
        DefinitionKind::Function | DefinitionKind::Method => {
            let _ = writeln!(out, "{header} {{ … }}");
        }
        DefinitionKind::Field => {
            let _ = writeln!(out, "{header}{}", if text.ends_with(';') { "" } else { ";" });
        }
        DefinitionKind::Interface | DefinitionKind::TypeAlias | DefinitionKind::Enum | DefinitionKind::Struct => {
            let _ = writeln!(out, "{header}");
            // Go declares methods outside their type, Rust in impl blocks: they follow it.
            match syntax(o).methods {
                MethodPlacement::AfterType => {
                    for m in &o.members {
                        out.push('\n');
                        braced_block(m, indent, out);
                    }
                }
                MethodPlacement::ImplBlocks if !o.members.is_empty() => {
                    out.push('\n');
                    rust_members(&o.members, indent, out);
                }
                MethodPlacement::ImplBlocks | MethodPlacement::InBody => {}
            }
        }
        _ if o.members.is_empty() => {
            let _ = writeln!(out, "{header}{}", if text.ends_with('}') { "" } else { " { … }" });
        }
        _ => {
            let step = syntax(o).indent;
            let inner = format!("{indent}{step}");
            let _ = writeln!(out, "{header} {{");
            for (i, m) in o.members.iter().enumerate() {
                // Fields stay together; a blank line before everything else.
                let after_field = i > 0 && o.members[i - 1].kind == DefinitionKind::Field;
                if i > 0 && !(after_field && m.kind == DefinitionKind::Field) {
                    out.push('\n');
                }
                braced_block(m, &inner, out);
            }
            let _ = writeln!(out, "{indent}}}");
        }
    }
}

/// Rust methods inside their impl blocks (`impl Shape for Circle { … }`), consecutive
/// methods of one impl sharing it; members without an impl block as they are.
fn rust_members(members: &[ContractObject], indent: &str, out: &mut String) {
    let mut i = 0;
    while i < members.len() {
        if i > 0 {
            out.push('\n');
        }
        let Some(header) = &members[i].enclosing_impl else {
            braced_block(&members[i], indent, out);
            i += 1;
            continue;
        };
        let _ = writeln!(out, "{indent}{} {{", header.trim());
        let start = i;
        while i < members.len() && members[i].enclosing_impl.as_ref() == Some(header) {
            if i > start {
                out.push('\n');
            }
            braced_block(&members[i], &format!("{indent}    "), out);
            i += 1;
        }
        let _ = writeln!(out, "{indent}}}");
    }
}

fn render_object(o: &ContractObject, type_names: &BTreeMap<&str, &str>, show_paths: bool, out: &mut String) {
    if o.existing && o.all_methods {
        render_whole_class(o, out);
        return;
    }
    if o.existing {
        let names: Vec<String> = o.members.iter().map(|m| format!("`{}`", m.access)).collect();
        let (what, word) =
            if o.kind == DefinitionKind::Class { ("Methods", "class") } else { ("Members", kind_word(o.kind)) };
        // Level 1 adds the members to the project's type; Level 2 (no paths shown) asks the
        // package's type, which the tests import, for them.
        let place = match show_paths {
            true => format!("The {word} stays in `{}`; add {}.", o.path, names.join(", ")),
            false => format!(
                "The project keeps the {word} (in `{}`) without {}; the package's `{}` has them (it may subclass the \
                 project's).",
                o.path,
                names.join(", "),
                o.qualname
            ),
        };
        let _ = writeln!(out, "### {what} of the existing {word} `{}`\n\n{place}\n", o.qualname);
        let f = syntax(o).fence;
        if let Some(i) = &o.import_path {
            let _ = writeln!(out, "```{f}\n{i}\n```\n");
        }
        if syntax(o).existing == ExistingMembers::ImplBlocks {
            let mut block = String::new();
            rust_members(&o.members, "", &mut block);
            let _ = writeln!(out, "```{f}\n// {} exists already; add to it:\n{block}```\n", o.qualname);
            return;
        }
        for m in &o.members {
            let mut block = String::new();
            match syntax(o).existing {
                ExistingMembers::IndentedClass => {
                    python_block(m, syntax(o).indent, &mut block);
                    let _ = writeln!(out, "```{f}\nclass {}:  # exists already\n{block}```\n", o.name);
                }
                ExistingMembers::BracedClass => {
                    code_block(m, syntax(o).indent, &mut block);
                    let header = o.signature.text.lines().last().unwrap_or(&o.name).trim();
                    let _ = writeln!(out, "```{f}\n{header} {{ // exists already\n{block}}}\n```\n");
                }
                ExistingMembers::Comment | ExistingMembers::ImplBlocks => {
                    code_block(m, "", &mut block);
                    let _ = writeln!(out, "```{f}\n// in {}, which exists already\n{block}```\n", o.qualname);
                }
            }
        }
        return;
    }
    let _ = writeln!(out, "### `{}` ({})\n", o.access, kind_word(o.kind));
    let mut notes = Vec::new();
    if show_paths {
        notes.push(format!("Defined in `{}`.", o.path));
    }
    if !o.members.is_empty() {
        let word = kind_word(o.kind);
        notes.push(format!(
            "The whole {word} is part of the feature: implement the {word} `{}` with its {} member(s) below.",
            o.name,
            o.members.len()
        ));
    }
    if let Some(f) = &o.enclosing_function {
        notes.push(format!("It is a nested function: define it inside `{f}`, where the code that uses it calls it."));
    }
    if !notes.is_empty() {
        let _ = writeln!(out, "{}\n", notes.join("\n"));
    }
    let f = syntax(o).fence;
    if let Some(i) = &o.import_path {
        let _ = writeln!(out, "```{f}\n{i}\n```\n");
    }
    let mut block = String::new();
    code_block(o, "", &mut block);
    let _ = writeln!(out, "```{f}\n{block}```\n");
    let used: Vec<String> =
        o.uses_types.iter().filter_map(|id| type_names.get(id.as_str())).map(|n| format!("`{n}`")).collect();
    if !used.is_empty() {
        let _ = writeln!(out, "Uses {} from this interface.\n", used.join(", "));
    }
}

/// An existing class none of whose methods stays: one object to implement, its methods in
/// one block (the class statement and attributes stay, so the repository still loads).
fn render_whole_class(o: &ContractObject, out: &mut String) {
    let _ = writeln!(
        out,
        "### `{}` (class)\n\nThe whole class is part of the feature: implement the class `{}` with its {} \
         method(s) below. Its `class` statement and attributes stay in `{}` with none of its methods.\n",
        o.qualname,
        o.name,
        o.members.len(),
        o.path
    );
    let f = syntax(o).fence;
    if let Some(i) = &o.import_path {
        let _ = writeln!(out, "```{f}\n{i}\n```\n");
    }
    let mut block = String::new();
    match syntax(o).existing {
        ExistingMembers::IndentedClass => {
            for (n, m) in o.members.iter().enumerate() {
                if n > 0 {
                    block.push('\n');
                }
                python_block(m, syntax(o).indent, &mut block);
            }
            let _ = writeln!(out, "```{f}\nclass {}:  # the class statement exists already\n{block}```\n", o.name);
        }
        _ => {
            for m in &o.members {
                code_block(m, syntax(o).indent, &mut block);
            }
            let header = o.signature.text.lines().last().unwrap_or(&o.name).trim();
            let _ = writeln!(out, "```{f}\n{header} {{ // exists already\n{block}}}\n```\n");
        }
    }
}

fn interface(contract: &Contract, show_paths: bool) -> String {
    let mut type_names: BTreeMap<&str, &str> = BTreeMap::new();
    fn collect<'a>(o: &'a ContractObject, m: &mut BTreeMap<&'a str, &'a str>) {
        m.insert(o.id.as_str(), o.name.as_str());
        for c in &o.members {
            collect(c, m);
        }
    }
    for o in &contract.objects {
        collect(o, &mut type_names);
    }
    let mut out = String::new();
    for o in &contract.objects {
        render_object(o, &type_names, show_paths, &mut out);
    }
    out.trim_end().to_string()
}

/// The Level 1 section naming where staying code called the feature (empty when nowhere):
/// the agent has to wire the feature back in, not only define it.
fn call_sites(sites: &[CallSite]) -> String {
    if sites.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n\n## Where the feature is called\n\nCode that stays in the repository called the feature. \
         These calls were removed with it; the feature is complete only when they are made again:\n",
    );
    for s in sites {
        out.push_str(&format!("\n- `{}`, in `{}`: a call of `{}`", s.path, s.caller, s.callee));
    }
    out
}

fn fill(template: &str, vars: &[(&str, String)]) -> String {
    let mut out = template.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("{{{{{k}}}}}"), v);
    }
    out
}

/// The problem statement (Markdown) for `ctx.level`. For Level 2 the interface is
/// rewritten to import from the solution package; objects that cannot be imported by name
/// (methods of classes that stay, nested functions) are left out — check
/// [`Contract::level2_supported`] before making a Level 2 task.
pub fn render_problem_statement(contract: &Contract, ctx: &StatementContext) -> String {
    let package = if ctx.package.is_empty() { SOLUTION_PACKAGE } else { ctx.package.as_str() };
    let tests: BTreeSet<&str> = ctx.f2p_tests.iter().map(|t| t.as_str()).collect();
    let common = vec![
        ("title", title_of(ctx)),
        ("feature", ctx.description.clone().unwrap_or_else(|| feature_description(contract, ctx))),
        ("repo", ctx.repo.clone()),
        ("test_count", tests.len().to_string()),
        ("package", package.to_string()),
    ];
    match ctx.level {
        Level::One => {
            let files = contract
                .files
                .iter()
                .map(|f| match contract.whole_modules.contains(f) {
                    true => format!("- `{f}` (the whole module: every definition in it is part of the feature)"),
                    false => format!("- `{f}`"),
                })
                .collect::<Vec<_>>()
                .join("\n");
            let mut vars = common;
            vars.push(("files", files));
            vars.push(("interface", interface(contract, true)));
            vars.push(("call_sites", call_sites(&ctx.call_sites)));
            fill(LEVEL1, &vars)
        }
        Level::Two => {
            let l2 = contract.for_level2(package);
            let names = contract.level2_names().iter().map(|(_, n)| format!("`{n}`")).collect::<Vec<_>>().join(", ");
            let home = support(contract.language).level2().map(|l2| l2.describe(package)).unwrap_or_default();
            let mut vars = common;
            vars.push(("package_home", home));
            vars.push(("support", ctx.package_support.as_ref().map(|s| format!(" {s}")).unwrap_or_default()));
            vars.push(("names", names));
            vars.push(("interface", interface(&l2, false)));
            fill(LEVEL2, &vars)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::build_contract;
    use crate::contract::tests::{inventory_extracted, inventory_index};

    fn ctx(level: Level) -> StatementContext {
        let mut c = StatementContext::new(
            level,
            "acme/inventory",
            vec![
                "tests/test_pricing.py::test_total_value_with_discount".into(),
                "tests/test_pricing.py::test_total_value_scales[1]".into(),
                "tests/test_pricing.py::test_total_value_scales[2]".into(),
                "tests/test_pricing.py::TestCart::test_total".into(),
            ],
        );
        c.test_docstrings.insert(
            "tests/test_pricing.py::test_total_value_with_discount".into(),
            "The discount is taken off.\nMore.".into(),
        );
        c
    }

    #[test]
    fn level1_statement() {
        let contract = build_contract(&inventory_index(), &inventory_extracted());
        insta::assert_snapshot!(render_problem_statement(&contract, &ctx(Level::One)));
    }

    #[test]
    fn level1_names_the_removed_call_sites_and_level2_does_not() {
        let contract = build_contract(&inventory_index(), &inventory_extracted());
        let site = CallSite {
            path: "inventory/stock.py".into(),
            line: 12,
            caller: "Stock.add".into(),
            callee: "check_header".into(),
        };
        let mut c = ctx(Level::One);
        c.call_sites = vec![site.clone()];
        let text = render_problem_statement(&contract, &c);
        let section = text.split("## Where the feature is called").nth(1).expect("a call-site section");
        assert!(section.contains("- `inventory/stock.py`, in `Stock.add`: a call of `check_header`"), "{text}");
        assert!(section.contains("## Tests"), "the section sits before the tests: {text}");
        let plain = render_problem_statement(&contract, &ctx(Level::One));
        assert!(!plain.contains("Where the feature is called"), "no section without call sites");
        let mut two = ctx(Level::Two);
        two.call_sites = vec![site];
        let extracted =
            inventory_extracted().into_iter().filter(|id| !id.contains("Cart") && !id.contains("report")).collect();
        let l2 = render_problem_statement(&build_contract(&inventory_index(), &extracted), &two);
        assert!(!l2.contains("Where the feature is called"), "Level 2 builds from scratch: {l2}");
    }

    /// Every method of a class that stays extracted: "implement the class", one block, not
    /// one "method of the existing class" section per method (issue 26).
    #[test]
    fn a_class_that_stays_with_none_of_its_methods_is_one_object_to_implement() {
        let src = "class Shelf:\n    size = 3\n\n    def add(self, book):\n        pass\n\n    def count(self):\n        return 0\n";
        let index = DefinitionIndex::from_sources(&[("shelf/core.py".to_string(), src.as_bytes().to_vec())]);
        let ids = |v: &[&str]| -> BTreeSet<String> { v.iter().map(|s| format!("shelf/core.py::{s}")).collect() };
        let whole = build_contract(&index, &ids(&["Shelf.add", "Shelf.count"]));
        assert!(whole.objects[0].existing && whole.objects[0].all_methods, "{:?}", whole.objects[0]);
        let text = render_problem_statement(&whole, &ctx(Level::One));
        assert!(text.contains("### `Shelf` (class)"), "{text}");
        assert!(text.contains("implement the class `Shelf` with its 2 method(s) below"), "{text}");
        assert_eq!(text.matches("class Shelf:").count(), 1, "one block for the class: {text}");
        assert!(text.contains("def add(self, book)") && text.contains("def count(self)"), "{text}");
        assert!(!text.contains("Methods of the existing class"), "{text}");
        // One method of two: the class keeps a method, so only that method is the work.
        let part = build_contract(&index, &ids(&["Shelf.add"]));
        assert!(part.objects[0].existing && !part.objects[0].all_methods);
        let text = render_problem_statement(&part, &ctx(Level::One));
        assert!(text.contains("### Methods of the existing class `Shelf`"), "{text}");
    }

    #[test]
    fn level2_statement() {
        let extracted =
            inventory_extracted().into_iter().filter(|id| !id.contains("Cart") && !id.contains("report")).collect();
        let contract = build_contract(&inventory_index(), &extracted);
        assert!(contract.level2_supported());
        let text = render_problem_statement(&contract, &ctx(Level::Two));
        assert!(!text.contains("{{"), "unfilled placeholder:\n{text}");
        assert!(!text.contains("from inventory."), "L2 must import from agent_code:\n{text}");
        insta::assert_snapshot!(text);
    }

    /// A method of a class that stays: Level 1 adds it to the project's class; Level 2's tests
    /// take the class from the package, so the package's class has it.
    #[test]
    fn a_level2_statement_asks_the_package_for_the_methods_of_a_class_that_stays() {
        let extracted: BTreeSet<String> = ["inventory/cart.py::Cart.total".to_string()].into();
        let contract = build_contract(&inventory_index(), &extracted);
        let one = render_problem_statement(&contract, &ctx(Level::One));
        assert!(one.contains("The class stays in `inventory/cart.py`; add `Cart.total`."), "{one}");
        let two = render_problem_statement(&contract, &ctx(Level::Two));
        assert!(
            two.contains(
                "The project keeps the class (in `inventory/cart.py`) without `Cart.total`; the package's `Cart` has \
                 them (it may subclass the project's)."
            ),
            "{two}"
        );
        assert!(!two.contains("stays in"), "{two}");
    }

    #[test]
    fn docstrings_of_tests_come_from_the_index() {
        let src = "class TestCart:\n    def test_total(self):\n        \"\"\"The total adds up.\"\"\"\n\n\ndef test_plain():\n    pass\n";
        let index = DefinitionIndex::from_sources(&[("tests/test_cart.py".to_string(), src.as_bytes().to_vec())]);
        let tests = vec![
            "tests/test_cart.py::TestCart::test_total[x]".to_string(),
            "tests/test_cart.py::test_plain".to_string(),
        ];
        let docs = test_docstrings(&index, &tests);
        assert_eq!(docs.len(), 1, "{docs:?}");
        assert_eq!(docs[&tests[0]], "The total adds up.");
    }

    #[test]
    fn titles_and_descriptions_come_from_test_names() {
        let c = ctx(Level::One);
        assert_eq!(title_of(&c), "Implement the pricing feature");
        let d = behaviours(&c);
        assert!(d.contains("- total value with discount — The discount is taken off."), "{d}");
        assert_eq!(d.matches("total value scales").count(), 1, "parametrizations fold: {d}");
        assert!(d.contains("- Cart: total"), "{d}");
    }
}
