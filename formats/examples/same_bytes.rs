//! Does every carve output under the given folders serialize again to the same bytes?
//!
//!     cargo run -p carve-formats --example same_bytes -- DIR...
//!
//! Each file named as a format of this crate (`instance.json`, `tasks.jsonl`, `audit.json`,
//! `audit-<feature>.json`, `contract.json`, `validation.json` of a task or a chain gate,
//! `chain.json`, `grade.json`, `run.json`) is read with its type and written again as carve
//! writes it; the two must be byte-identical. Prints one line per file type and a line per
//! file that differs; exits 1 if any does (or if no file was found).

#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() && name != ".git" && name != "node_modules" {
            files(&p, out);
        } else if p.is_file() {
            out.push(p);
        }
    }
}

fn main() {
    let dirs: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    if dirs.is_empty() {
        eprintln!("usage: same_bytes DIR...");
        std::process::exit(2);
    }
    let mut all = Vec::new();
    for d in &dirs {
        files(d, &mut all);
    }
    all.sort();
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for path in &all {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let Some(result) = common::rewritten(path, &text) else { continue };
        let kind = path.file_name().unwrap().to_string_lossy().to_string();
        let kind = if kind.starts_with("audit-") { "audit-<feature>.json".to_string() } else { kind };
        let entry = counts.entry(kind).or_default();
        entry.0 += 1;
        match result {
            Ok(bytes) if bytes == text.as_bytes() => {}
            Ok(bytes) => {
                entry.1 += 1;
                println!("differs: {}: {}", path.display(), common::first_difference(text.as_bytes(), &bytes));
            }
            Err(e) => {
                entry.1 += 1;
                println!("unreadable: {e}");
            }
        }
    }
    for (kind, (n, bad)) in &counts {
        println!("{kind:24} {n:4} files, {} identical, {bad} differ", n - bad);
    }
    let bad: usize = counts.values().map(|c| c.1).sum();
    if counts.is_empty() || bad > 0 {
        std::process::exit(1);
    }
}
