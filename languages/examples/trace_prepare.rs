//! Prepares a traced run by hand (the overhead benchmark uses it): indexes REPO, probes
//! TREE (a copy of REPO) with the language's tracing shim, and prints the run's environment
//! and extra arguments as JSON.
//!
//! Usage: trace_prepare REPO TREE SHIM_DIR TRACE_DIR [first-hits|exact]

use std::path::PathBuf;

use carve_languages::DefinitionIndex;
use carve_languages::trace::{TraceMode, TraceRequest, TraceShim};

fn shim_for(language: carve_languages::Language) -> Option<&'static dyn TraceShim> {
    carve_languages::support(language).trace_shim()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [repo, tree, shim_dir, trace_dir] = [0, 1, 2, 3].map(|i| args.get(i).map(PathBuf::from));
    let (Some(repo), Some(tree), Some(shim_dir), Some(trace_dir)) = (repo, tree, shim_dir, trace_dir) else {
        return Err("usage: trace_prepare REPO TREE SHIM_DIR TRACE_DIR [first-hits|exact]".into());
    };
    let mode = if args.get(4).is_some_and(|m| m == "exact") { TraceMode::Exact } else { TraceMode::FirstHits };
    let index = DefinitionIndex::build(&repo, &Default::default())?;
    let language = index.files.values().map(|f| f.language).find(|l| shim_for(*l).is_some());
    let shim = language.and_then(shim_for).ok_or("no indexed file of a language with a tracing shim")?;
    let req = TraceRequest {
        index: &index,
        repo: &repo,
        tree: &tree,
        shim_dir: &shim_dir,
        trace_dir: &trace_dir,
        mode,
        env: &[],
    };
    let setup = shim.prepare(&req)?;
    let out = serde_json::json!({
        "env": setup.env.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
        "args": setup.args,
        "notes": setup.notes,
    });
    println!("{out}");
    Ok(())
}
