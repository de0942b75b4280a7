//! Index speed benchmark (issue 3 point 6): for each language, generate a deterministic
//! repository of at least 200,000 lines, then measure in one run
//!
//! - bare tree-sitter parse throughput: one thread, each file parsed once, sources already
//!   in memory, trees dropped right away;
//! - carve's indexing throughput: `DefinitionIndex::build` on the generated root (walk,
//!   read, parse, queries, linking; files spread over all cores by rayon);
//! - the per-core ratio `(index / cores) / parse` (target: at least 0.75);
//! - the floor of any index that looks at every node: the same parse followed by one
//!   tree-cursor walk over every node, in units of the bare parse
//!   (`walk_every_node_cpu_over_parse_cpu`);
//! - carve's peak memory while indexing (`VmHWM` of a fresh child process that only
//!   indexes), next to the memory all trees of the repository take when kept at once
//!   (`all_trees_mb`), which shows that indexing never holds every tree.
//!
//! Each run is a child process (`--child <language> <root>`) so that peak memory is
//! per language and per run; the parent prints one JSON line per language with the
//! medians of `--runs` runs (default 3).
//!
//! ```sh
//! cargo run --release -p carve-languages --example index_speed -- [--runs N] [--lines N] [--keep DIR] [LANG...]
//! ```

mod gen_go;
mod gen_python;
mod gen_rust;
mod gen_typescript;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use carve_languages::Language;
use carve_languages::index::{DefinitionIndex, IndexOptions};

/// Deterministic pseudo-random numbers (64-bit LCG), so generated repositories are
/// byte-identical between runs and machines.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    /// In `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    pub fn pick<'a>(&mut self, items: &'a [&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Words used for generated identifiers.
pub const WORDS: &[&str] = &[
    "order", "item", "price", "stock", "user", "account", "ledger", "entry", "batch", "route", "cache", "token",
    "record", "window", "metric", "event", "queue", "shard", "policy", "quota", "report", "filter", "buffer", "frame",
];

/// Write `files` (relative path, text) under `root`; returns the total line count.
pub fn write_files(root: &Path, files: &[(String, String)]) -> std::io::Result<usize> {
    let mut lines = 0;
    for (rel, text) in files {
        let path = root.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, text)?;
        lines += text.lines().count();
    }
    Ok(lines)
}

fn generate(language: Language, root: &Path, min_lines: usize) -> std::io::Result<()> {
    let files = match language {
        Language::Python => gen_python::generate(min_lines),
        Language::TypeScript => gen_typescript::generate(min_lines),
        Language::Go => gen_go::generate(min_lines),
        Language::Rust => gen_rust::generate(min_lines),
        other => return Err(std::io::Error::other(format!("no generator for {other}"))),
    };
    write_files(root, &files).map(|_| ())
}

fn sources(root: &Path, language: Language) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if Language::from_path(&p) == Some(language)
                && let Ok(text) = std::fs::read_to_string(&p)
            {
                out.push((p, text));
            }
        }
    }
    out.sort();
    out
}

fn status_kb(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(f64::NAN)
}

/// CPU time of the whole process so far, in seconds: the sum over its threads of the time
/// they ran (`/proc/self/task/*/schedstat`, nanoseconds), so that a machine shared with
/// other work does not count against carve.
fn cpu_s() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return f64::NAN;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next().and_then(|v| v.parse::<f64>().ok()))
        .sum::<f64>()
        / 1e9
}

/// One measurement, in a fresh process: index first (so VmHWM is indexing's own peak),
/// then the single-thread parse pass, then all trees kept at once.
fn child(language: Language, root: &Path) -> Result<String, String> {
    let start_rss = status_kb("VmRSS:");
    let (t, c) = (Instant::now(), cpu_s());
    let index = DefinitionIndex::build(root, &IndexOptions::default()).map_err(|e| e.to_string())?;
    let (index_s, index_cpu_s) = (t.elapsed().as_secs_f64(), cpu_s() - c);
    let peak_rss_kb = status_kb("VmHWM:");
    let defs = index.definitions.len();
    let indexed_files = index.files.len();
    let skipped = index.skipped.len();
    drop(index);

    let files = sources(root, language);
    let lines: usize = files.iter().map(|(_, t)| t.lines().count()).sum();
    let mut parser = tree_sitter::Parser::new();
    let (t, c) = (Instant::now(), cpu_s());
    let nodes = parse_each(&mut parser, language, &files, |tree| tree.root_node().descendant_count())?;
    let (parse_s, parse_cpu_s) = (t.elapsed().as_secs_f64(), cpu_s() - c);

    // The floor of any index that looks at every node: the same parse, then one tree-cursor
    // walk over every node reading its kind id (no other work).
    let (t, c) = (Instant::now(), cpu_s());
    std::hint::black_box(parse_each(&mut parser, language, &files, walk_every_node)?);
    let (walk_s, walk_cpu_s) = (t.elapsed().as_secs_f64(), cpu_s() - c);

    // The same indexing on one thread: indexing's own cost next to parsing, whatever the
    // other processes on the machine do to the parallel run.
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().map_err(|e| e.to_string())?;
    let (t, c) = (Instant::now(), cpu_s());
    let single = one.install(|| DefinitionIndex::build(root, &IndexOptions::default())).map_err(|e| e.to_string())?;
    let (index_1t_s, index_1t_cpu_s) = (t.elapsed().as_secs_f64(), cpu_s() - c);
    drop(single);

    let before = status_kb("VmRSS:");
    let mut trees = Vec::with_capacity(files.len());
    for (path, text) in &files {
        parser.set_language(&language.grammar_for_path(path)).map_err(|e| e.to_string())?;
        trees.push(parser.parse(text, None));
    }
    let all_trees_kb = status_kb("VmRSS:") - before;
    drop(trees);
    Ok(serde_json::json!({
        "lines": lines, "files": files.len(), "indexed_files": indexed_files, "skipped": skipped,
        "definitions": defs, "nodes": nodes, "index_s": index_s, "parse_s": parse_s, "walk_s": walk_s, "walk_cpu_s": walk_cpu_s, "index_1t_s": index_1t_s,
        "index_cpu_s": index_cpu_s, "parse_cpu_s": parse_cpu_s, "index_1t_cpu_s": index_1t_cpu_s,
        "peak_rss_kb": peak_rss_kb, "start_rss_kb": start_rss, "all_trees_kb": all_trees_kb,
    })
    .to_string())
}

/// Parse every file once, hand each tree to `f` and drop it; the sum of what `f` returns.
fn parse_each(
    parser: &mut tree_sitter::Parser,
    language: Language,
    files: &[(PathBuf, String)],
    mut f: impl FnMut(&tree_sitter::Tree) -> usize,
) -> Result<usize, String> {
    let mut sum = 0usize;
    for (path, text) in files {
        parser.set_language(&language.grammar_for_path(path)).map_err(|e| e.to_string())?;
        if let Some(tree) = parser.parse(text, None) {
            sum = sum.wrapping_add(f(&tree));
        }
    }
    Ok(sum)
}

/// Visit every node of `tree` with one cursor, summing kind ids (so the walk is not optimised away).
fn walk_every_node(tree: &tree_sitter::Tree) -> usize {
    let mut cursor = tree.walk();
    let mut sum = 0usize;
    loop {
        sum = sum.wrapping_add(cursor.node().kind_id() as usize);
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return sum;
            }
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() { f64::NAN } else { v[v.len() / 2] }
}

fn round(x: f64, digits: i32) -> f64 {
    let p = 10f64.powi(digits);
    (x * p).round() / p
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut runs = 3usize;
    let mut min_lines = 200_000usize;
    let mut keep: Option<PathBuf> = None;
    let mut languages = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--child" => {
                let (Some(lang), Some(root)) = (args.next(), args.next()) else {
                    eprintln!("--child needs a language and a root");
                    std::process::exit(2);
                };
                let lang: Language = lang.parse().unwrap_or_else(|e: String| {
                    eprintln!("{e}");
                    std::process::exit(2)
                });
                match child(lang, Path::new(&root)) {
                    Ok(line) => println!("{line}"),
                    Err(e) => {
                        eprintln!("index_speed child ({lang}): {e}");
                        std::process::exit(1);
                    }
                }
                return;
            }
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).unwrap_or(3).max(1),
            "--lines" => min_lines = args.next().and_then(|v| v.parse().ok()).unwrap_or(200_000),
            "--keep" => keep = args.next().map(PathBuf::from),
            other => match other.parse::<Language>() {
                Ok(l) => languages.push(l),
                Err(e) => {
                    eprintln!(
                        "{e}; usage: index_speed [--runs N] [--lines N] [--keep DIR] [python|typescript|go|rust ...]"
                    );
                    std::process::exit(2);
                }
            },
        }
    }
    if languages.is_empty() {
        languages = vec![Language::Python, Language::TypeScript, Language::Go, Language::Rust];
    }
    let tmp = match &keep {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("carve-index-speed-{}", std::process::id())),
    };
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("index_speed"));
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    for language in languages {
        let root = tmp.join(language.name());
        if !root.exists()
            && let Err(e) = generate(language, &root, min_lines)
        {
            eprintln!("cannot generate the {language} repository under {}: {e}", root.display());
            std::process::exit(1);
        }
        let mut samples: Vec<serde_json::Value> = Vec::new();
        for _ in 0..runs {
            let out = Command::new(&exe).arg("--child").arg(language.name()).arg(&root).output();
            match out {
                Ok(o) if o.status.success() => match serde_json::from_slice(&o.stdout) {
                    Ok(v) => samples.push(v),
                    Err(e) => eprintln!("unreadable child output for {language}: {e}"),
                },
                Ok(o) => eprintln!("{language} run failed: {}", String::from_utf8_lossy(&o.stderr).trim()),
                Err(e) => eprintln!("cannot start {}: {e}", exe.display()),
            }
        }
        if samples.is_empty() {
            std::process::exit(1);
        }
        if samples[0]["indexed_files"].as_u64().unwrap_or(0) == 0 {
            eprintln!(
                "carve indexed none of the {} generated {language} files; is the {language} indexer wired into DefinitionIndex::build?",
                samples[0]["files"]
            );
            std::process::exit(1);
        }
        let f = |k: &str| -> Vec<f64> { samples.iter().filter_map(|s| s[k].as_f64()).collect() };
        let lines = samples[0]["lines"].as_u64().unwrap_or(0) as f64;
        let parse_lps = median(f("parse_s").into_iter().map(|s| lines / s).collect());
        let index_lps = median(f("index_s").into_iter().map(|s| lines / s).collect());
        let ratios: Vec<f64> = samples
            .iter()
            .filter_map(|s| Some((lines / s["index_s"].as_f64()? / cores as f64) / (lines / s["parse_s"].as_f64()?)))
            .collect();
        let cpu_ratios: Vec<f64> =
            samples.iter().filter_map(|s| Some(s["parse_cpu_s"].as_f64()? / s["index_cpu_s"].as_f64()?)).collect();
        let overheads: Vec<f64> =
            samples.iter().filter_map(|s| Some(s["index_1t_cpu_s"].as_f64()? / s["parse_cpu_s"].as_f64()?)).collect();
        let floors: Vec<f64> =
            samples.iter().filter_map(|s| Some(s["walk_cpu_s"].as_f64()? / s["parse_cpu_s"].as_f64()?)).collect();
        let line = serde_json::json!({
            "language": language.name(),
            "lines": lines as u64,
            "files": samples[0]["files"],
            "indexed_files": samples[0]["indexed_files"],
            "definitions": samples[0]["definitions"],
            "parse_lines_per_s": parse_lps.round(),
            "index_lines_per_s": index_lps.round(),
            "index_1t_lines_per_s": median(f("index_1t_s").into_iter().map(|s| lines / s).collect()).round(),
            "cores": cores,
            "per_core_ratio": round(median(ratios), 3),
            "per_core_ratio_cpu": round(median(cpu_ratios), 3),
            "index_1t_cpu_over_parse_cpu": round(median(overheads), 3),
            "walk_every_node_cpu_over_parse_cpu": round(median(floors), 3),
            "peak_rss_mb": round(median(f("peak_rss_kb")) / 1024.0, 1),
            "start_rss_mb": round(median(f("start_rss_kb")) / 1024.0, 1),
            "all_trees_mb": round(median(f("all_trees_kb")) / 1024.0, 1),
            "runs": samples.len(),
        });
        println!("{line}");
    }
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
