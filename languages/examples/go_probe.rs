//! Probes a Go module in place for a traced run, as `carve trace` does in its shadow copy:
//! `cargo run --release -p carve-languages --example go_probe -- <copy of the module>`.
//! Prints what was inserted as one JSON line. Used by `bench/overhead_go.py`; never point
//! it at a tree you want to keep as it is.

use std::path::PathBuf;

fn main() {
    let Some(tree) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: go_probe <copy of a Go module> (it is rewritten in place)");
        std::process::exit(2);
    };
    let index = match carve_languages::DefinitionIndex::build(&tree, &Default::default()) {
        Ok(index) => index,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    match carve_languages::go::trace::instrument(&index, &tree) {
        Ok(r) => println!(
            "{}",
            serde_json::json!({
                "files": r.files.len(), "probes": r.probes, "markers": r.markers,
                "mains": r.mains.len(), "packages": r.packages, "notes": r.notes,
            })
        ),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
