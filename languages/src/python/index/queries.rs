//! The Python queries (`languages/queries/python/*.scm`), compiled once per process, with
//! the indices of the captures the indexer reads.

use std::sync::LazyLock;
use tree_sitter::Query;

pub(super) const DEFINITIONS: &str = include_str!("../../../queries/python/definitions.scm");
pub(super) const REFERENCES: &str = include_str!("../../../queries/python/references.scm");
pub(super) const IMPORTS: &str = include_str!("../../../queries/python/imports.scm");
pub(super) const EXPORTS: &str = include_str!("../../../queries/python/exports.scm");

pub(super) struct Definitions {
    pub query: Query,
    pub function: u32,
    pub class: u32,
    pub name: u32,
    pub parameters: u32,
    pub returns: u32,
    pub bases: u32,
    pub body: u32,
}

pub(super) struct References {
    pub query: Query,
    pub name: u32,
    pub chain: u32,
    pub parameter: u32,
    pub assign: u32,
    pub global: u32,
    pub ignore: u32,
    pub ignore_range: u32,
}

pub(super) struct Imports {
    pub query: Query,
    pub import: u32,
    pub import_from: u32,
    pub import_future: u32,
    pub module: u32,
    pub from: u32,
    pub name: u32,
    pub alias: u32,
    pub item: u32,
    pub wildcard: u32,
}

pub(super) struct Exports {
    pub query: Query,
    pub export: u32,
}

pub(super) struct Queries {
    pub definitions: Definitions,
    pub references: References,
    pub imports: Imports,
    pub exports: Exports,
}

fn compile(source: &str, file: &str) -> Query {
    let language = crate::Language::Python.grammar();
    // The queries ship with the crate and a test compiles them; failing here is a bug in
    // the crate, not in the user's input.
    Query::new(&language, source).unwrap_or_else(|e| panic!("queries/python/{file} does not compile: {e}"))
}

fn capture(query: &Query, name: &str) -> u32 {
    query.capture_index_for_name(name).unwrap_or_else(|| panic!("query lacks capture @{name}"))
}

pub(super) static QUERIES: LazyLock<Queries> = LazyLock::new(|| {
    let q = compile(DEFINITIONS, "definitions.scm");
    let definitions = Definitions {
        function: capture(&q, "definition.function"),
        class: capture(&q, "definition.class"),
        name: capture(&q, "name"),
        parameters: capture(&q, "parameters"),
        returns: capture(&q, "returns"),
        bases: capture(&q, "bases"),
        body: capture(&q, "body"),
        query: q,
    };
    let q = compile(REFERENCES, "references.scm");
    let references = References {
        name: capture(&q, "reference.name"),
        chain: capture(&q, "reference.chain"),
        parameter: capture(&q, "local.parameter"),
        assign: capture(&q, "local.assign"),
        global: capture(&q, "local.global"),
        ignore: capture(&q, "ignore"),
        ignore_range: capture(&q, "ignore.range"),
        query: q,
    };
    let q = compile(IMPORTS, "imports.scm");
    let imports = Imports {
        import: capture(&q, "import"),
        import_from: capture(&q, "import.from"),
        import_future: capture(&q, "import.future"),
        module: capture(&q, "module"),
        from: capture(&q, "from"),
        name: capture(&q, "name"),
        alias: capture(&q, "alias"),
        item: capture(&q, "item"),
        wildcard: capture(&q, "wildcard"),
        query: q,
    };
    let q = compile(EXPORTS, "exports.scm");
    let exports = Exports { export: capture(&q, "export"), query: q };
    Queries { definitions, references, imports, exports }
});
