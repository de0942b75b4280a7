//! The TypeScript/JavaScript queries (`languages/queries/{typescript,javascript}/*.scm`),
//! compiled once per grammar (TypeScript, TSX, JavaScript) into one query per grammar so
//! each tree is walked once.

use std::sync::LazyLock;
use tree_sitter::Query;

const TS: [&str; 3] = [
    include_str!("../../queries/typescript/definitions.scm"),
    include_str!("../../queries/typescript/references.scm"),
    include_str!("../../queries/typescript/imports.scm"),
];
const JS: [&str; 3] = [
    include_str!("../../queries/javascript/definitions.scm"),
    include_str!("../../queries/javascript/references.scm"),
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
    pub reference: Option<u32>,
    pub reference_object: Option<u32>,
    pub reference_member: Option<u32>,
    pub import: Option<u32>,
    pub export: Option<u32>,
    pub require: Option<u32>,
    pub cjs: Option<u32>,
}

pub(super) struct Queries {
    pub query: Query,
    pub captures: Captures,
}

fn compile(dialect: Dialect, files: [&str; 3]) -> Queries {
    let source = files.join("\n");
    // The queries ship with the crate and a test compiles them for every dialect; failing
    // here is a bug in the crate, not in the user's input.
    let query = Query::new(&dialect.grammar(), &source).unwrap_or_else(|e| {
        panic!("the {dialect:?} queries of languages/queries do not compile: {e}")
    });
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
        reference: c("reference"),
        reference_object: c("reference.object"),
        reference_member: c("reference.member"),
        import: c("import"),
        export: c("export"),
        require: c("require"),
        cjs: c("cjs"),
    };
    Queries { query, captures }
}

static TS_QUERIES: LazyLock<Queries> = LazyLock::new(|| compile(Dialect::TypeScript, TS));
static TSX_QUERIES: LazyLock<Queries> = LazyLock::new(|| compile(Dialect::Tsx, TS));
static JS_QUERIES: LazyLock<Queries> = LazyLock::new(|| compile(Dialect::JavaScript, JS));
