//! Probes a Cargo project in place for a traced run, as `carve trace` does in its shadow
//! copy: `cargo run -p carve-languages --example rust_probe -- <copy of the project>
//! <runtime dir>` (the carve_probe crate is written into `<runtime dir>`). Prints what was
//! inserted as one JSON line. Used by `bench/overhead_rust.py`; never point it at a tree
//! you want to keep as it is.

use std::path::PathBuf;

fn main() {
    let mut args = std::env::args().skip(1).map(PathBuf::from);
    let (Some(tree), Some(runtime)) = (args.next(), args.next()) else {
        eprintln!("usage: rust_probe <copy of a Cargo project> <runtime dir> (the copy is rewritten in place)");
        std::process::exit(2);
    };
    let index = match carve_languages::DefinitionIndex::build(&tree, &Default::default()) {
        Ok(index) => index,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    match carve_languages::rust::trace::instrument(&index, &tree, &runtime, &[]) {
        Ok(r) => println!(
            "{}",
            serde_json::json!({
                "files": r.files.len(), "probes": r.probes, "manifests": r.manifests, "notes": r.notes,
            })
        ),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
