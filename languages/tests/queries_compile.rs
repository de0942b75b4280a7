//! Every query under `languages/queries/<language>/*.scm` compiles against its grammar.
//! A directory whose name is not a language carve knows is an error: its queries would
//! never be compiled by anything else.

use std::path::Path;

use carve_languages::Language;

#[test]
fn every_query_compiles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("queries");
    let mut dirs: Vec<_> =
        std::fs::read_dir(&root).expect("languages/queries exists").map(|e| e.expect("readable").path()).collect();
    dirs.sort();
    let mut compiled = 0;
    let mut failures = Vec::new();
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let language: Language = name.parse().unwrap_or_else(|e| panic!("queries/{name}: {e}"));
        let mut files: Vec<_> =
            std::fs::read_dir(dir).expect("readable").map(|e| e.expect("readable").path()).collect();
        files.sort();
        for file in files.iter().filter(|f| f.extension().is_some_and(|e| e == "scm")) {
            let source = std::fs::read_to_string(file).expect("query is UTF-8");
            match tree_sitter::Query::new(&language.grammar(), &source) {
                Ok(_) => compiled += 1,
                Err(e) => failures.push(format!("{}: {e}", file.display())),
            }
        }
    }
    assert!(failures.is_empty(), "queries that do not compile:\n{}", failures.join("\n"));
    assert!(compiled >= 4, "expected at least the four Python queries, compiled {compiled}");
}
