//! The TypeScript/JavaScript queries (`languages/queries/{typescript,javascript}/*.scm`:
//! definitions and imports), compiled once per grammar (TypeScript, TSX, JavaScript) into
//! one query per grammar. Name uses (references) are read by the tree walk in `parse.rs`,
//! which also runs the query only on the nodes where one of its patterns can start.

use std::sync::LazyLock;
use tree_sitter::{Language, Query};

const TS: [&str; 2] = [
    include_str!("../../../queries/typescript/definitions.scm"),
    include_str!("../../../queries/typescript/imports.scm"),
];
const JS: [&str; 2] = [
    include_str!("../../../queries/javascript/definitions.scm"),
    include_str!("../../../queries/javascript/imports.scm"),
];

/// The three grammars of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
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
pub(crate) struct Captures {
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

/// A field id (`None` when the grammar lacks the field).
pub(crate) type Field = Option<std::num::NonZeroU16>;

/// Node kind and field ids the indexer compares instead of names (`Node::kind` and
/// `child_by_field_name` look names up by string on every call). A kind the grammar lacks
/// is `u16::MAX`, which no node has.
pub(crate) struct Kinds {
    pub identifier: u16,
    pub type_identifier: u16,
    pub shorthand_property_identifier: u16,
    pub member_expression: u16,
    pub nested_type_identifier: u16,
    pub property_identifier: u16,
    pub this: u16,
    pub program: u16,
    pub class_body: u16,
    pub decorator: u16,
    pub comment: u16,
    pub export_statement: u16,
    pub ambient_declaration: u16,
    pub expression_statement: u16,
    pub lexical_declaration: u16,
    pub variable_declaration: u16,
    pub variable_declarator: u16,
    pub assignment_expression: u16,
    pub arrow_function: u16,
    pub function_expression: u16,
    pub generator_function: u16,
    pub required_parameter: u16,
    pub optional_parameter: u16,
    pub assignment_pattern: u16,
    pub rest_pattern: u16,
    pub property_signature: u16,
    pub method_signature: u16,
    /// The anonymous `async` and `default` tokens.
    pub async_token: u16,
    pub default_token: u16,
    pub field_object: Field,
    pub field_property: Field,
    pub field_module: Field,
    pub field_name: Field,
    pub field_value: Field,
    pub field_left: Field,
    pub field_right: Field,
    pub field_arguments: Field,
    pub field_body: Field,
    pub field_parameters: Field,
    pub field_parameter: Field,
    pub field_return_type: Field,
    pub field_type_parameters: Field,
    pub field_type: Field,
    pub field_pattern: Field,
}

impl Kinds {
    fn of(grammar: &Language) -> Kinds {
        let id = |name: &str, named: bool| match grammar.id_for_node_kind(name, named) {
            0 => u16::MAX,
            id => id,
        };
        let kind = |name: &str| id(name, true);
        let field = |name: &str| grammar.field_id_for_name(name);
        Kinds {
            identifier: kind("identifier"),
            type_identifier: kind("type_identifier"),
            shorthand_property_identifier: kind("shorthand_property_identifier"),
            member_expression: kind("member_expression"),
            nested_type_identifier: kind("nested_type_identifier"),
            property_identifier: kind("property_identifier"),
            this: kind("this"),
            program: kind("program"),
            class_body: kind("class_body"),
            decorator: kind("decorator"),
            comment: kind("comment"),
            export_statement: kind("export_statement"),
            ambient_declaration: kind("ambient_declaration"),
            expression_statement: kind("expression_statement"),
            lexical_declaration: kind("lexical_declaration"),
            variable_declaration: kind("variable_declaration"),
            variable_declarator: kind("variable_declarator"),
            assignment_expression: kind("assignment_expression"),
            arrow_function: kind("arrow_function"),
            function_expression: kind("function_expression"),
            generator_function: kind("generator_function"),
            required_parameter: kind("required_parameter"),
            optional_parameter: kind("optional_parameter"),
            assignment_pattern: kind("assignment_pattern"),
            rest_pattern: kind("rest_pattern"),
            property_signature: kind("property_signature"),
            method_signature: kind("method_signature"),
            async_token: id("async", false),
            default_token: id("default", false),
            field_object: field("object"),
            field_property: field("property"),
            field_module: field("module"),
            field_name: field("name"),
            field_value: field("value"),
            field_left: field("left"),
            field_right: field("right"),
            field_arguments: field("arguments"),
            field_body: field("body"),
            field_parameters: field("parameters"),
            field_parameter: field("parameter"),
            field_return_type: field("return_type"),
            field_type_parameters: field("type_parameters"),
            field_type: field("type"),
            field_pattern: field("pattern"),
        }
    }

    /// The child of `n` in field `f`.
    pub fn child<'t>(&self, n: tree_sitter::Node<'t>, f: Field) -> Option<tree_sitter::Node<'t>> {
        f.and_then(|f| n.child_by_field_id(f.get()))
    }

    /// A function value: arrow function, function expression or generator function.
    pub fn is_function_value(&self, kind: u16) -> bool {
        kind == self.arrow_function || kind == self.function_expression || kind == self.generator_function
    }
}

/// The compiled query of one dialect, and where its patterns can match.
pub(crate) struct Queries {
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
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
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
        Query::new(&grammar, &source)
            .unwrap_or_else(|e| panic!("the {dialect:?} queries of languages/queries do not compile: {e}"))
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
        let end = if i + 1 < patterns { query.start_byte_for_pattern(i + 1) } else { source.len() };
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
