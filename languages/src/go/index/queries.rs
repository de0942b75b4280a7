//! The Go queries (`languages/queries/go/*.scm`: definitions and imports), compiled once per
//! process into one query, with each pattern tagged by its file. Names used inside
//! definitions come from a cursor walk instead (see `names`).

use std::sync::LazyLock;
use tree_sitter::Query;

pub(super) const DEFINITIONS: &str = include_str!("../../../queries/go/definitions.scm");
pub(super) const IMPORTS: &str = include_str!("../../../queries/go/imports.scm");

/// Which query file a pattern comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Purpose {
    Definitions,
    Imports,
}

const FILES: [(Purpose, &str, &str); 2] =
    [(Purpose::Definitions, "definitions.scm", DEFINITIONS), (Purpose::Imports, "imports.scm", IMPORTS)];

/// Capture indices of the combined query.
pub(super) struct Captures {
    pub name: u32,
    pub function: u32,
    pub method: u32,
    pub receiver: u32,
    pub type_declaration: u32,
    pub type_spec: u32,
    pub type_: u32,
    pub import: u32,
    pub alias: u32,
    pub path: u32,
}

pub(super) struct Queries {
    pub query: Query,
    purposes: Vec<Purpose>,
    pub captures: Captures,
}

impl Queries {
    pub fn purpose(&self, pattern_index: usize) -> Purpose {
        self.purposes.get(pattern_index).copied().unwrap_or(Purpose::Definitions)
    }
}

static QUERIES: LazyLock<Queries> = LazyLock::new(|| {
    let crate::query::Combined { query, purposes, .. } =
        crate::query::combine(&crate::Language::Go.grammar(), "go", &FILES);
    let capture = |name| crate::query::capture(&query, "go", name);
    let captures = Captures {
        name: capture("name"),
        function: capture("function"),
        method: capture("method"),
        receiver: capture("receiver"),
        type_declaration: capture("type_declaration"),
        type_spec: capture("type_spec"),
        type_: capture("type"),
        import: capture("import"),
        alias: capture("alias"),
        path: capture("path"),
    };
    Queries { query, purposes, captures }
});

pub(super) fn queries() -> &'static Queries {
    &QUERIES
}
