//! The Go tracing shim: probes inserted with tree-sitter into the shadow copy's own `.go`
//! files (see [`probes`]; never `vendor/`, `testdata/`, the module cache or the user's
//! tree), line numbers unchanged, and the runtime of `shims/go/carveprobe/` copied into
//! each module of the copy as `<module>/internal/carveprobe` next to a generated
//! `table.go` ([`table`]). A test package without a `TestMain` gets a generated one
//! (`zz_carve_probe_main_test.go`) so the process writes its `end` record when its tests
//! are done.
//!
//! The traced run is `go test -p 1 -parallel 1` (one test at a time per process and one
//! test process at a time: the runtime keeps one current test per process) with
//! `CARVE_TRACE_DIR`, `CARVE_TRACE_MODE` and an empty `CARVE_CURRENT_TEST`. Node numbers
//! are the positions of the index's Go functions and methods in sorted id order. Test ids
//! are `importpath/` + `t.Name()`, as the Go runner reports them.

pub mod probes;
pub mod table;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::Language;
use crate::index::{DefinitionIndex, DefinitionKind};
use crate::trace::{TraceRequest, TraceSetup, TraceShim, TraceShimError};
use probes::{FilePlan, Skip};
use table::{Table, TableFile};

/// The runtime's fixed half, copied into every probed module.
pub const RUNTIME: &str = include_str!("../../../../shims/go/carveprobe/probe.go");

/// Where the probe package goes inside a module.
pub const PACKAGE_DIR: &str = "internal/carveprobe";

/// The `TestMain` carve adds to a test package that has none.
pub const MAIN_FILE: &str = "zz_carve_probe_main_test.go";

/// Runner arguments of a traced run.
pub const ARGS: &[&str] = &["-p", "1", "-parallel", "1"];

/// The Go shim.
pub struct GoTraceShim;

pub static SHIM: GoTraceShim = GoTraceShim;

/// The Go shim behind the common interface.
pub fn shim() -> &'static dyn TraceShim {
    &SHIM
}

impl TraceShim for GoTraceShim {
    fn name(&self) -> &'static str {
        "Go"
    }

    fn prepare(&self, req: &TraceRequest) -> Result<TraceSetup, TraceShimError> {
        let report = instrument(req.index, req.tree)?;
        let mut notes = report.notes;
        if report.probes == 0 {
            notes.push(format!(
                "warning: no Go function of {} was probed (no indexed Go source files outside vendor/ and testdata/?)",
                req.repo.display()
            ));
        }
        std::fs::create_dir_all(req.trace_dir).map_err(io(req.trace_dir))?;
        Ok(TraceSetup {
            env: vec![
                ("CARVE_TRACE_DIR".into(), req.trace_dir.display().to_string()),
                ("CARVE_TRACE_MODE".into(), req.mode.as_str().into()),
                ("CARVE_CURRENT_TEST".into(), String::new()),
            ],
            args: ARGS.iter().map(|s| s.to_string()).collect(),
            path_entries: Vec::new(),
            native: true,
            notes,
        })
    }

    fn native_available(&self) -> bool {
        true
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TraceShimError + '_ {
    move |source| TraceShimError::Io { path: path.to_path_buf(), source }
}

/// What [`instrument`] did.
#[derive(Debug, Default)]
pub struct Instrumented {
    /// Files rewritten (repository-relative).
    pub files: Vec<String>,
    pub probes: usize,
    pub markers: usize,
    /// Generated `TestMain` files (repository-relative).
    pub mains: Vec<String>,
    /// Probe package directories written (repository-relative).
    pub packages: Vec<String>,
    pub notes: Vec<String>,
}

/// Whether a repository-relative Go file is one the go tool builds as the module's own
/// code: not under `vendor/` or `testdata/`, no directory starting with `.` or `_`.
pub fn is_probed_path(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    !parts.iter().any(|p| *p == "vendor" || *p == "testdata" || p.starts_with('.') || p.starts_with('_'))
}

/// Inserts the probes into the Go files of `tree` (a copy of the indexed repository) and
/// writes the runtime next to them.
pub fn instrument(index: &DefinitionIndex, tree: &Path) -> Result<Instrumented, TraceShimError> {
    let files = probed_files(index);
    let numbering = number_definitions(index, &files);
    let modules = find_modules(tree, files.iter().map(|f| f.path.as_str()));
    let mut report = Instrumented::default();
    let results = probe_files(tree, &files, &modules, &numbering.bodies);
    let (test_dirs, mut used_modules) = write_probed(tree, results, &mut report)?;
    write_test_mains(tree, &test_dirs, &mut used_modules, &mut report)?;
    let table_files = table_files(numbering.spans);
    let roots = tree_roots(tree);
    let table = Table { nodes: &numbering.nodes, files: &table_files, modules: &modules, roots: &roots };
    install_packages(tree, used_modules, &table, &mut report)?;
    report.notes.sort();
    Ok(report)
}

/// `(module path, module directory)` of one `go.mod` of the copy.
type Module = (String, String);

/// One file's module and its probed text, or why it is not traced.
type FileResult<'a> = (&'a str, Option<&'a Module>, Result<probes::Probed, String>);

/// Per test package directory: its test files' package names, whether one has `TestMain`,
/// and its module.
type TestDirs<'m> = BTreeMap<String, (BTreeSet<String>, bool, &'m Module)>;

/// The node numbers of the probed Go functions and methods (sorted by id).
struct Numbering<'i> {
    /// Definition ids by node number.
    nodes: Vec<String>,
    /// Per file: body (`{`) byte offset → node number.
    bodies: HashMap<&'i str, HashMap<usize, u32>>,
    /// Per probed file: `(definition line, end line, node number)` of its numbered definitions.
    spans: BTreeMap<&'i str, Vec<(usize, usize, u32)>>,
}

/// The index's Go files that the go tool builds as the module's own code.
fn probed_files(index: &DefinitionIndex) -> Vec<&crate::index::FileIndex> {
    index
        .files
        .values()
        .filter(|f| f.language == Language::Go && is_probed_path(&f.path) && f.path.ends_with(".go"))
        .collect()
}

/// Numbers the Go functions and methods of `files`, sorted by id.
fn number_definitions<'i>(index: &'i DefinitionIndex, files: &[&'i crate::index::FileIndex]) -> Numbering<'i> {
    let numbered: Vec<&crate::index::Definition> = index
        .definitions
        .values()
        .filter(|d| d.language == Language::Go && matches!(d.kind, DefinitionKind::Function | DefinitionKind::Method))
        .filter(|d| files.iter().any(|f| f.path == d.path))
        .collect();
    let nodes: Vec<String> = numbered.iter().map(|d| d.id.clone()).collect();
    let mut bodies: HashMap<&str, HashMap<usize, u32>> = HashMap::new();
    let mut spans: BTreeMap<&str, Vec<(usize, usize, u32)>> =
        files.iter().map(|f| (f.path.as_str(), Vec::new())).collect();
    for (n, d) in numbered.iter().enumerate() {
        let n = n as u32;
        if let Some(body) = d.body {
            bodies.entry(d.path.as_str()).or_default().insert(body.start_byte, n);
        }
        spans.entry(d.path.as_str()).or_default().push((d.def_line, d.span.end_line, n));
    }
    Numbering { nodes, bodies, spans }
}

/// Per file (in parallel): the module it belongs to, then the probed text.
fn probe_files<'a>(
    tree: &Path,
    files: &[&'a crate::index::FileIndex],
    modules: &'a [Module],
    bodies: &HashMap<&str, HashMap<usize, u32>>,
) -> Vec<FileResult<'a>> {
    let empty = HashMap::new();
    files
        .par_iter()
        .map_init(probes::new_parser, |parser, f| {
            let module = module_of(modules, &f.path);
            let result = module.ok_or_else(|| "no go.mod above it".to_string()).and_then(|(mod_path, _)| {
                probe_one(parser, tree, f, mod_path, bodies.get(f.path.as_str()).unwrap_or(&empty))
            });
            (f.path.as_str(), module, result)
        })
        .collect()
}

/// Reads one file of the copy, checks it is the indexed one and inserts its probes.
fn probe_one(
    parser: &mut tree_sitter::Parser,
    tree: &Path,
    f: &crate::index::FileIndex,
    mod_path: &str,
    bodies: &HashMap<usize, u32>,
) -> Result<probes::Probed, String> {
    let abs = tree.join(&f.path);
    let bytes = std::fs::read(&abs).map_err(|e| format!("cannot read {}: {e}", abs.display()))?;
    if hex::encode(Sha256::digest(&bytes)) != f.sha256 {
        return Err("it changed since it was indexed".to_string());
    }
    let src = String::from_utf8(bytes).map_err(|_| "it is not UTF-8".to_string())?;
    let probe_import = format!("{mod_path}/{PACKAGE_DIR}");
    let plan = FilePlan {
        test: f.is_test,
        package_path: f.module.as_deref().unwrap_or(""),
        probe_import: &probe_import,
        bodies,
    };
    probes::probe_file(parser, &src, &plan).map_err(|e| match e {
        Skip::Syntax(line) => format!("syntax error at line {line}"),
        Skip::NoPackage => "no package clause".to_string(),
    })
}

/// Writes the probed files, notes the ones skipped, and collects the test package
/// directories and the modules that need the probe package.
fn write_probed<'a>(
    tree: &Path,
    results: Vec<FileResult<'a>>,
    report: &mut Instrumented,
) -> Result<(TestDirs<'a>, BTreeSet<&'a Module>), TraceShimError> {
    let mut test_dirs: TestDirs = BTreeMap::new();
    let mut used_modules: BTreeSet<&Module> = BTreeSet::new();
    for (path, module, result) in results {
        let probed = match result {
            Ok(p) => p,
            Err(why) => {
                report.notes.push(format!("warning: {path} is not traced: {why}"));
                continue;
            }
        };
        let module = module.expect("probed files have a module");
        if let Some(text) = &probed.text {
            let abs = tree.join(path);
            std::fs::write(&abs, text).map_err(io(&abs))?;
            report.files.push(path.to_string());
            used_modules.insert(module);
        }
        report.probes += probed.probes;
        report.markers += probed.markers;
        if path.ends_with("_test.go") {
            let dir = path.rsplit_once('/').map(|(d, _)| d).unwrap_or("").to_string();
            let entry = test_dirs.entry(dir).or_insert_with(|| (BTreeSet::new(), false, module));
            entry.0.insert(probed.package.clone());
            entry.1 |= probed.has_test_main;
        }
    }
    Ok((test_dirs, used_modules))
}

/// Writes carve's `TestMain` into every test package directory that has none.
fn write_test_mains<'m>(
    tree: &Path,
    test_dirs: &TestDirs<'m>,
    used_modules: &mut BTreeSet<&'m Module>,
    report: &mut Instrumented,
) -> Result<(), TraceShimError> {
    for (dir, (packages, has_main, module)) in test_dirs {
        if *has_main {
            continue;
        }
        // The package under test when the directory has in-package tests, else the _test one.
        let Some(package) = packages.iter().find(|p| !p.ends_with("_test")).or(packages.iter().next()) else {
            continue;
        };
        let rel = if dir.is_empty() { MAIN_FILE.to_string() } else { format!("{dir}/{MAIN_FILE}") };
        let text = format!(
            "package {package}\n\nimport (\n\t{alias} {import:?}\n\tcarve_os_ \"os\"\n\tcarve_testing_ \"testing\"\n)\n\n\
             // TestMain is carve's: it writes the trace's end record when the tests are done.\n\
             func TestMain(m *carve_testing_.M) {{ {alias}.Main(m, carve_os_.Exit) }}\n",
            alias = probes::ALIAS,
            import = format!("{}/{PACKAGE_DIR}", module.0),
        );
        let abs = tree.join(&rel);
        std::fs::write(&abs, text).map_err(io(&abs))?;
        report.mains.push(rel);
        used_modules.insert(module);
    }
    Ok(())
}

/// The table's files: every probed file with its spans sorted.
fn table_files(spans: BTreeMap<&str, Vec<(usize, usize, u32)>>) -> Vec<TableFile> {
    spans
        .into_iter()
        .map(|(path, mut s)| {
            s.sort();
            TableFile { path: path.to_string(), spans: s }
        })
        .collect()
}

/// The absolute paths the compiler may name the tree by: as given and canonical.
fn tree_roots(tree: &Path) -> Vec<String> {
    let mut roots = vec![tree.display().to_string()];
    if let Ok(canonical) = tree.canonicalize() {
        let c = canonical.display().to_string();
        if !roots.contains(&c) {
            roots.push(c);
        }
    }
    roots
}

/// Writes the probe package (runtime and table) into every module in `used_modules`.
fn install_packages(
    tree: &Path,
    used_modules: BTreeSet<&Module>,
    table: &Table,
    report: &mut Instrumented,
) -> Result<(), TraceShimError> {
    for (mod_path, mod_dir) in used_modules {
        let rel = if mod_dir.is_empty() { PACKAGE_DIR.to_string() } else { format!("{mod_dir}/{PACKAGE_DIR}") };
        let dir = tree.join(&rel);
        if dir.exists() {
            return Err(TraceShimError::Setup {
                message: format!(
                    "cannot install carve's Go probe package: {} already exists in the module {mod_path}; \
                     exclude that directory from tracing or rename it",
                    dir.display()
                ),
            });
        }
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let self_package = format!("{mod_path}/{PACKAGE_DIR}");
        for (name, text) in [("probe.go", RUNTIME.to_string()), ("table.go", table::render(table, &self_package))] {
            let p = dir.join(name);
            std::fs::write(&p, text).map_err(io(&p))?;
        }
        report.packages.push(rel);
    }
    Ok(())
}

/// `(module path, directory)` of every `go.mod` at or above the directories of `paths`.
fn find_modules<'a>(tree: &Path, paths: impl Iterator<Item = &'a str>) -> Vec<(String, String)> {
    let mut dirs: BTreeMap<String, Option<String>> = BTreeMap::new();
    for p in paths {
        let mut dir = p.rsplit_once('/').map(|(d, _)| d.to_string()).unwrap_or_default();
        loop {
            if dirs.contains_key(&dir) {
                break;
            }
            let module = std::fs::read_to_string(tree.join(&dir).join("go.mod"))
                .ok()
                .and_then(|t| crate::go::index::module_path_of(&t));
            dirs.insert(dir.clone(), module);
            if dir.is_empty() {
                break;
            }
            dir = dir.rsplit_once('/').map(|(d, _)| d.to_string()).unwrap_or_default();
        }
    }
    dirs.into_iter().filter_map(|(dir, m)| m.map(|m| (m, dir))).collect()
}

/// The innermost module holding `path`.
fn module_of<'m>(modules: &'m [(String, String)], path: &str) -> Option<&'m (String, String)> {
    modules
        .iter()
        .filter(|(_, dir)| dir.is_empty() || path.starts_with(&format!("{dir}/")))
        .max_by_key(|(_, dir)| dir.len())
}

/// The absolute directory of the probe package of the module at `module_dir`.
pub fn package_dir(tree: &Path, module_dir: &str) -> PathBuf {
    tree.join(module_dir).join(PACKAGE_DIR)
}
