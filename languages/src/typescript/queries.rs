//! The TypeScript/JavaScript queries (`languages/queries/{typescript,javascript}/*.scm`:
//! definitions and imports), compiled once per grammar (TypeScript, TSX, JavaScript) into
//! one query per grammar. Name uses (references) are read by the tree walk in `parse.rs`,
//! which also runs the query only on the nodes where one of its patterns can start.

use std::sync::LazyLock;
use tree_sitter::{Language, Query};

const TS: [&str; 2] = [
    include_str!("../../queries/typescript/definitions.scm"),
    include_str!("../../queries/typescript/imports.scm"),
];
const JS: [&str; 2] = [
    include_str!("../../queries/javascript/definitions.scm"),
    include_str!("../../queries/javascript/imports.scm"),
];

/// The three grammars of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dialect {
    TypeScript,
    Tsx,
    JavaScript,
}

impl Dialect {
    pub fn of_path(path: &str) -> Option<Dialect> {
        let ext = path.rsplit_once('.')?.1;
        match ext {
            "ts" | "mts" | "cts" => Some(Dialect::TypeScript),
            "tsx" => Some(Dialect::Tsx),
            "js" | "jsx" | "mjs" | "cjs" => Some(Dialect::JavaScript),
            _ => None,
        }
    }

    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            Dialect::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Dialect::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Dialect::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        }
    }

    pub fn language(self) -> crate::Language {
        match self {
            Dialect::JavaScript => crate::Language::JavaScript,
            _ => crate::Language::TypeScript,
        }
    }

    pub fn queries(self) -> &'static Queries {
        match self {
            Dialect::TypeScript => &TS_QUERIES,
            Dialect::Tsx => &TSX_QUERIES,
            Dialect::JavaScript => &JS_QUERIES,
        }
    }
}

/// Capture indices the indexer reads; `None` when the dialect's queries lack it.
pub(super) struct Captures {
    pub function: Option<u32>,
    pub overload: Option<u32>,
    pub class: Option<u32>,
    pub method: Option<u32>,
    pub field: Option<u32>,
    pub property: Option<u32>,
    pub variable: Option<u32>,
    pub interface: Option<u32>,
    pub type_alias: Option<u32>,
    pub enumeration: Option<u32>,
    pub namespace: Option<u32>,
    pub test: Option<u32>,
    pub name: Option<u32>,
    pub callee: Option<u32>,
    pub import: Option<u32>,
    pub export: Option<u32>,
    pub require: Option<u32>,
    pub cjs: Option<u32>,
}

/// Node kind and field ids the reference walk compares (`u16::MAX` / `None` when the
/// grammar lacks one, so nothing matches it).
pub(super) struct Kinds {
    /// `identifier`, `type_identifier`, `shorthand_property_identifier`: bare names.
    pub identifier: u16,
    pub type_identifier: u16,
    pub shorthand_property_identifier: u16,
    /// `obj.member` and `Ns.Type`.
    pub member_expression: u16,
    pub nested_type_identifier: u16,
    pub property_identifier: u16,
    pub this: u16,
    pub field_object: Option<std::num::NonZeroU16>,
    pub field_property: Option<std::num::NonZeroU16>,
    pub field_module: Option<std::num::NonZeroU16>,
    pub field_name: Option<std::num::NonZeroU16>,
}

impl Kinds {
    fn of(grammar: &Language) -> Kinds {
        let kind = |name: &str| match grammar.id_for_node_kind(name, true) {
            0 => u16::MAX,
            id => id,
        };
        Kinds {
            identifier: kind("identifier"),
            type_identifier: kind("type_identifier"),
            shorthand_property_identifier: kind("shorthand_property_identifier"),
            member_expression: kind("member_expression"),
            nested_type_identifier: kind("nested_type_identifier"),
            property_identifier: kind("property_identifier"),
            this: kind("this"),
            field_object: grammar.field_id_for_name("object"),
            field_property: grammar.field_id_for_name("property"),
            field_module: grammar.field_id_for_name("module"),
            field_name: grammar.field_id_for_name("name"),
        }
    }
}

/// The compiled query of one dialect, and where its patterns can match.
pub(super) struct Queries {
    /// Every pattern of definitions.scm and imports.scm.
    pub query: Query,
    /// The same without the `@definition.test` patterns: test cases are only kept in
    /// test files, so other files need not look for them.
    pub query_no_tests: Query,
    /// By node kind id: whether a pattern of `query` starts at nodes of that kind (the
    /// walk runs the query on those nodes only, as deep as the pattern goes).
    pub roots: Vec<bool>,
    /// The same for `query_no_tests`.
    pub roots_no_tests: Vec<bool>,
    pub captures: Captures,
    pub kinds: Kinds,
}

/// The node kind a pattern starts with: `(kind …` → `Some("kind")`; `None` for anything
/// else (a wildcard, an alternation, an anonymous node), which the caller treats as "may
/// start anywhere".
fn root_kind(pattern: &str) -> Option<&str> {
    let rest = pattern.strip_prefix('(')?.trim_start();
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let kind = &rest[..end];
    (!kind.is_empty() && kind != "_").then_some(kind)
}

/// Which node kinds the enabled patterns of `query` (compiled from `source`) start at;
/// every kind when one of them could start anywhere.
fn roots(grammar: &Language, query: &Query, source: &str, enabled: &[bool]) -> Vec<bool> {
    let count = grammar.node_kind_count();
    let mut roots = vec![false; count];
    for (i, _) in enabled.iter().enumerate().filter(|(_, on)| **on) {
        let pattern = &source[query.start_byte_for_pattern(i)..];
        match root_kind(pattern).map(|k| grammar.id_for_node_kind(k, true)) {
            Some(id) if id != 0 => roots[id as usize] = true,
            _ => return vec![true; count],
        }
    }
    roots
}

/// Query text without its `;` comments (a `;` inside a string is kept).
fn code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_string = false;
        let mut escaped = false;
        for ch in line.chars() {
            if in_string {
                in_string = !(ch == '"' && !escaped);
                escaped = ch == '\\' && !escaped;
            } else if ch == ';' {
                break;
            } else if ch == '"' {
                in_string = true;
            }
            out.push(ch);
        }
        out.push('\n');
    }
    out
}

fn compile(dialect: Dialect, files: [&str; 2]) -> Queries {
    let source = files.join("\n");
    let grammar = dialect.grammar();
    // The queries ship with the crate and a test compiles them for every dialect; failing
    // here is a bug in the crate, not in the user's input.
    let new = || {
        Query::new(&grammar, &source).unwrap_or_else(|e| {
            panic!("the {dialect:?} queries of languages/queries do not compile: {e}")
        })
    };
    let query = new();
    let mut query_no_tests = new();
    let c = |name: &str| query.capture_index_for_name(name);
    let captures = Captures {
        function: c("definition.function"),
        overload: c("definition.overload"),
        class: c("definition.class"),
        method: c("definition.method"),
        field: c("definition.field"),
        property: c("definition.property"),
        variable: c("definition.variable"),
        interface: c("definition.interface"),
        type_alias: c("definition.type"),
        enumeration: c("definition.enum"),
        namespace: c("definition.namespace"),
        test: c("definition.test"),
        name: c("name"),
        callee: c("callee"),
        import: c("import"),
        export: c("export"),
        require: c("require"),
        cjs: c("cjs"),
    };
    let patterns = query.pattern_count();
    let all = vec![true; patterns];
    let mut no_tests = vec![true; patterns];
    for (i, on) in no_tests.iter_mut().enumerate() {
        let start = query.start_byte_for_pattern(i);
        let end = if i + 1 < patterns {
            query.start_byte_for_pattern(i + 1)
        } else {
            source.len()
        };
        if code(&source[start..end]).contains("@definition.test") {
            *on = false;
            query_no_tests.disable_pattern(i);
        }
    }
    Queries {
        roots: roots(&grammar, &query, &source, &all),
        roots_no_tests: roots(&grammar, &query, &source, &no_tests),
        query,
        query_no_tests,
        captures,
        kinds: Kinds::of(&grammar),
    }
}

static TS_QUERIES: LazyLock<Queries> = LazyLock::new(|| compile(Dialect::TypeScript, TS));
static TSX_QUERIES: LazyLock<Queries> = LazyLock::new(|| compile(Dialect::Tsx, TS));
static JS_QUERIES: LazyLock<Queries> = LazyLock::new(|| compile(Dialect::JavaScript, JS));
