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

fn capture(query: &Query, name: &str) -> u32 {
    query.capture_index_for_name(name).unwrap_or_else(|| panic!("go queries lack capture @{name}"))
}

static QUERIES: LazyLock<Queries> = LazyLock::new(|| {
    let language = crate::Language::Go.grammar();
    let mut source = String::new();
    let mut starts = Vec::new();
    for (purpose, _, text) in FILES {
        starts.push((source.len(), purpose));
        source.push_str(text);
        source.push('\n');
    }
    // The queries ship with the crate and `tests/queries_compile.rs` compiles each one;
    // failing here is a bug in the crate, not in the user's input.
    let query = Query::new(&language, &source).unwrap_or_else(|e| {
        let file = starts.iter().zip(FILES).rev().find(|((start, _), _)| *start <= e.offset).map_or("?", |(_, f)| f.1);
        panic!("queries/go/{file} does not compile: {e}")
    });
    let purposes = (0..query.pattern_count())
        .map(|i| {
            let at = query.start_byte_for_pattern(i);
            starts.iter().rev().find(|(start, _)| *start <= at).map_or(Purpose::Definitions, |(_, p)| *p)
        })
        .collect();
    let q = &query;
    let captures = Captures {
        name: capture(q, "name"),
        function: capture(q, "function"),
        method: capture(q, "method"),
        receiver: capture(q, "receiver"),
        type_declaration: capture(q, "type_declaration"),
        type_spec: capture(q, "type_spec"),
        type_: capture(q, "type"),
        import: capture(q, "import"),
        alias: capture(q, "alias"),
        path: capture(q, "path"),
    };
    Queries { query, purposes, captures }
});

pub(super) fn queries() -> &'static Queries {
    &QUERIES
}
