//! Query files of one language compiled into one tree-sitter query, so that a file's tree
//! is searched once, with each pattern tagged by the purpose of the file it came from.

use tree_sitter::Query;

/// A language's query files compiled together.
pub(crate) struct Combined<P> {
    pub query: Query,
    /// The combined query text (pattern start bytes index into it).
    pub source: String,
    /// The purpose of each pattern, by pattern index.
    pub purposes: Vec<P>,
}

/// Compile `files` — `(purpose, file name, text)` from `queries/<lang>/` — into one query
/// for `grammar`, each file followed by a newline.
///
/// Panics naming the file when the queries do not compile: they ship with the crate and
/// `tests/queries_compile.rs` compiles each one, so that is a bug in the crate, not in the
/// user's input.
pub(crate) fn combine<P: Copy>(grammar: &tree_sitter::Language, lang: &str, files: &[(P, &str, &str)]) -> Combined<P> {
    let mut source = String::new();
    let mut starts = Vec::new();
    for &(purpose, name, text) in files {
        starts.push((source.len(), purpose, name));
        source.push_str(text);
        source.push('\n');
    }
    let query = Query::new(grammar, &source).unwrap_or_else(|e| {
        let file = starts.iter().rev().find(|(start, ..)| *start <= e.offset).map_or("?", |s| s.2);
        panic!("queries/{lang}/{file} does not compile: {e}")
    });
    // The first file starts at byte 0, so every pattern finds its file.
    let purposes = (0..query.pattern_count())
        .map(|i| {
            let at = query.start_byte_for_pattern(i);
            starts.iter().rev().find(|(start, ..)| *start <= at).map_or(files[0].0, |s| s.1)
        })
        .collect();
    Combined { query, source, purposes }
}

/// The index of capture `@name` in `query` (of language `lang`); panics when the crate's
/// queries lack it.
pub(crate) fn capture(query: &Query, lang: &str, name: &str) -> u32 {
    query.capture_index_for_name(name).unwrap_or_else(|| panic!("{lang} queries lack capture @{name}"))
}
