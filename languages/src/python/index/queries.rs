//! The Python queries (`languages/queries/python/*.scm`), compiled once per process into
//! one query so that a file's tree is walked once, with each pattern tagged by the file it
//! came from and the indices of the captures the indexer reads.

use std::sync::LazyLock;
use tree_sitter::Query;

pub(super) const DEFINITIONS: &str = include_str!("../../../queries/python/definitions.scm");
pub(super) const REFERENCES: &str = include_str!("../../../queries/python/references.scm");
pub(super) const IMPORTS: &str = include_str!("../../../queries/python/imports.scm");
pub(super) const EXPORTS: &str = include_str!("../../../queries/python/exports.scm");

/// Which query file a pattern comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Purpose {
    Definitions,
    References,
    Imports,
    Exports,
}

const FILES: [(Purpose, &str, &str); 4] = [
    (Purpose::Definitions, "definitions.scm", DEFINITIONS),
    (Purpose::References, "references.scm", REFERENCES),
    (Purpose::Imports, "imports.scm", IMPORTS),
    (Purpose::Exports, "exports.scm", EXPORTS),
];

/// Capture indices. Names are shared between files (`@name` is a defined name in
/// definitions.scm and an imported name in imports.scm); a match's [`Purpose`] says which.
pub(super) struct Captures {
    pub definition_function: u32,
    pub definition_class: u32,
    pub name: u32,
    pub parameters: u32,
    pub returns: u32,
    pub bases: u32,
    pub type_parameters: u32,
    pub body: u32,
    pub reference_dotted: u32,
    pub reference_pattern: u32,
    pub local_parameter: u32,
    pub local_assign: u32,
    pub local_global: u32,
    pub ignore: u32,
    pub ignore_range: u32,
    pub import: u32,
    pub import_from: u32,
    pub import_future: u32,
    pub module: u32,
    pub from: u32,
    pub alias: u32,
    pub item: u32,
    pub wildcard: u32,
    pub export: u32,
}

pub(super) struct Queries {
    pub query: Query,
    /// Purpose of each pattern, by pattern index.
    purposes: Vec<Purpose>,
    pub captures: Captures,
    /// `is_root[kind_id]`: some pattern starts at a node of this kind. The indexer walks
    /// the tree once and runs the query only on such nodes, as the match's root.
    is_root: Vec<bool>,
    /// Node kinds and fields the walk itself looks at.
    pub identifier: u16,
    pub attribute: u16,
    pub dotted_name: u16,
    pub decorated_definition: u16,
    pub decorator: u16,
    /// The `async` keyword.
    pub async_keyword: u16,
    pub object_field: u16,
    pub attribute_field: u16,
}

impl Queries {
    pub fn purpose(&self, pattern_index: usize) -> Purpose {
        self.purposes.get(pattern_index).copied().unwrap_or(Purpose::References)
    }

    /// Whether a match of some pattern can be rooted at a node of kind `kind_id`.
    pub fn is_root(&self, kind_id: u16) -> bool {
        self.is_root.get(usize::from(kind_id)).copied().unwrap_or(false)
    }
}

fn kind_id(language: &tree_sitter::Language, name: &str) -> u16 {
    match language.id_for_node_kind(name, true) {
        0 => panic!("tree-sitter-python has no node kind `{name}`"),
        id => id,
    }
}

/// The node kind each pattern starts with: every top-level pattern of the python queries
/// is `(kind ...)`, so that the query can run on those nodes only instead of the whole tree.
fn root_kinds(query: &Query, source: &str, language: &tree_sitter::Language) -> Vec<bool> {
    let mut is_root = vec![false; language.node_kind_count()];
    for i in 0..query.pattern_count() {
        let text = &source[query.start_byte_for_pattern(i)..];
        let name: String = text
            .strip_prefix('(')
            .map(|t| t.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect())
            .unwrap_or_default();
        if name.is_empty() || name == "_" {
            let line: String = text.lines().next().unwrap_or("").chars().take(60).collect();
            panic!(
                "python query pattern `{line}` must start with a named node kind, `(kind ...)`: the indexer runs patterns on nodes of their root kind only"
            );
        }
        is_root[usize::from(kind_id(language, &name))] = true;
    }
    is_root
}

pub(super) static QUERIES: LazyLock<Queries> = LazyLock::new(|| {
    let language = crate::Language::Python.grammar();
    let crate::query::Combined { query, source, purposes } = crate::query::combine(&language, "python", &FILES);
    let capture = |name| crate::query::capture(&query, "python", name);
    let captures = Captures {
        definition_function: capture("definition.function"),
        definition_class: capture("definition.class"),
        name: capture("name"),
        parameters: capture("parameters"),
        returns: capture("returns"),
        bases: capture("bases"),
        type_parameters: capture("type_parameters"),
        body: capture("body"),
        reference_dotted: capture("reference.dotted"),
        reference_pattern: capture("reference.pattern"),
        local_parameter: capture("local.parameter"),
        local_assign: capture("local.assign"),
        local_global: capture("local.global"),
        ignore: capture("ignore"),
        ignore_range: capture("ignore.range"),
        import: capture("import"),
        import_from: capture("import.from"),
        import_future: capture("import.future"),
        module: capture("module"),
        from: capture("from"),
        alias: capture("alias"),
        item: capture("item"),
        wildcard: capture("wildcard"),
        export: capture("export"),
    };
    let is_root = root_kinds(&query, &source, &language);
    let field = |name: &str| {
        language.field_id_for_name(name).map_or_else(|| panic!("tree-sitter-python has no field `{name}`"), |f| f.get())
    };
    Queries {
        query,
        purposes,
        captures,
        is_root,
        identifier: kind_id(&language, "identifier"),
        attribute: kind_id(&language, "attribute"),
        dotted_name: kind_id(&language, "dotted_name"),
        decorated_definition: kind_id(&language, "decorated_definition"),
        decorator: kind_id(&language, "decorator"),
        async_keyword: match language.id_for_node_kind("async", false) {
            0 => panic!("tree-sitter-python has no `async` keyword"),
            id => id,
        },
        object_field: field("object"),
        attribute_field: field("attribute"),
    }
});
