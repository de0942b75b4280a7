//! The Go build check of a masked tree: `go build ./... && go vet <go test's analyzers> ./...` in every module
//! (directory with a `go.mod`) of the tree, with `GOFLAGS=-mod=mod` so a module without
//! a `go.sum` entry for the standard library still builds. `GOCACHE`/`GOPATH` come from the
//! environment (the user's defaults), so repeated checks reuse the build cache.
//!
//! `go build` writes nothing into the tree: `-o` names the null device. Without it, a module
//! whose `./...` is one `main` package (a generator or tool module nested in the repository,
//! as spf13/cast's `generator/`) gets its binary written next to its sources, and the
//! restored tree of every task then differs from the original.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build::BuildCheckError;

/// Directories holding a `go.mod`, skipping VCS data, `vendor/`, `testdata/` and
/// `node_modules/`, sorted.
fn module_dirs(root: &Path) -> Result<Vec<PathBuf>, BuildCheckError> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if dir.join("go.mod").is_file() {
            out.push(dir.clone());
        }
        let entries =
            std::fs::read_dir(&dir).map_err(|e| BuildCheckError::Io { path: dir.clone(), message: e.to_string() })?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if path.is_dir()
                && !name.starts_with('.')
                && !matches!(name.as_ref(), "vendor" | "testdata" | "node_modules")
            {
                stack.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn run(dir: &Path, args: &[&str]) -> Result<(), BuildCheckError> {
    let output = Command::new("go")
        .args(args)
        .current_dir(dir)
        .env("GOFLAGS", "-mod=mod")
        .env("GOTOOLCHAIN", std::env::var("GOTOOLCHAIN").unwrap_or_else(|_| "local".into()))
        .output()
        .map_err(|e| BuildCheckError::NotCheckable {
            root: dir.to_path_buf(),
            message: format!(
                "`go` was not found on PATH ({e}); install Go (https://go.dev/dl/) to check masked Go trees"
            ),
        })?;
    if output.status.success() {
        return Ok(());
    }
    let mut text = String::from_utf8_lossy(&output.stderr).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stdout));
    Err(BuildCheckError::Failed {
        command: format!("go {}", args.join(" ")),
        root: dir.to_path_buf(),
        detail: String::new(),
        output: text.trim_end().to_string(),
    })
}

/// The vet analyzers `go test` runs before a test binary ("a high-confidence subset": `go help
/// test`), as `go vet` flags. `go vet` type-checks the test files, which `go build` does not
/// compile; the other analyzers (`unusedresult`, …) do not stop a test from running, and old
/// code that compiles is not rejected for them: FeatureArc's Masterminds/semver and go-version
/// states failed the check on "result of fmt.Sprintf call not used".
const TEST_VET: [&str; 10] = [
    "-atomic",
    "-bool",
    "-buildtags",
    "-directive",
    "-errorsas",
    "-ifaceassert",
    "-nilfunc",
    "-printf",
    "-stringintconv",
    "-tests",
];

/// Run `go build -o /dev/null ./... && go vet <go test's analyzers> ./...` in every module
/// under `root`; the first failure is returned with the tool's output.
pub fn build_check(root: &Path) -> Result<(), BuildCheckError> {
    let modules = module_dirs(root)?;
    if modules.is_empty() {
        return Err(BuildCheckError::NotCheckable {
            root: root.to_path_buf(),
            message: format!("no go.mod under {}; the Go build check needs a module root", root.display()),
        });
    }
    let null = if cfg!(windows) { "NUL" } else { "/dev/null" };
    for dir in &modules {
        // `-mod=mod` lets the go command rewrite `go.mod` (a module without a `go` line gets
        // one: google/uuid) and `go.sum`; the tree checked must stay as it was, or every
        // state made from it differs from the original.
        let kept = ModuleFiles::read(dir)?;
        let vet: Vec<&str> =
            std::iter::once("vet").chain(TEST_VET.iter().map(|a| a.as_ref())).chain(["./..."]).collect();
        let checked = run(dir, &["build", "-o", null, "./..."]).and_then(|()| run(dir, &vet));
        kept.restore()?;
        checked?;
    }
    Ok(())
}

/// A module's `go.mod` and `go.sum` as they were before a go command ran in it.
struct ModuleFiles(Vec<(PathBuf, Option<Vec<u8>>)>);

impl ModuleFiles {
    fn read(dir: &Path) -> Result<ModuleFiles, BuildCheckError> {
        let io =
            |path: &Path, e: std::io::Error| BuildCheckError::Io { path: path.to_path_buf(), message: e.to_string() };
        let mut files = Vec::new();
        for name in ["go.mod", "go.sum"] {
            let path = dir.join(name);
            let bytes = match std::fs::read(&path) {
                Ok(b) => Some(b),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(io(&path, e)),
            };
            files.push((path, bytes));
        }
        Ok(ModuleFiles(files))
    }

    /// Put each file back as it was (removed when it did not exist), touching only those
    /// that changed.
    fn restore(&self) -> Result<(), BuildCheckError> {
        let io =
            |path: &Path, e: std::io::Error| BuildCheckError::Io { path: path.to_path_buf(), message: e.to_string() };
        for (path, before) in &self.0 {
            let now = std::fs::read(path).ok();
            if now == *before {
                continue;
            }
            match before {
                Some(bytes) => std::fs::write(path, bytes).map_err(|e| io(path, e))?,
                None => std::fs::remove_file(path).map_err(|e| io(path, e))?,
            }
        }
        Ok(())
    }
}

/// The source locations `go build` / `go vet` output names, in order, each once:
/// `geometry/shapes.go:12:5: undefined: X`, vet's `vet: geometry/x_test.go:3:2: …`, and
/// `./shapes.go:7: …` without a column. Paths are relative to the directory the tool ran
/// in (a module of the tree); each is returned relative to `root`, and one that names no
/// file under `root` or its modules is left out.
pub fn error_locations(root: &Path, output: &str) -> Vec<(String, u32)> {
    let modules = module_dirs(root).unwrap_or_default();
    let mut out: Vec<(String, u32)> = Vec::new();
    for line in output.lines() {
        let Some((path, line_no)) = location_in(line) else { continue };
        let Some(rel) = resolve(root, &modules, path) else { continue };
        if !out.iter().any(|(p, l)| *p == rel && *l == line_no) {
            out.push((rel, line_no));
        }
    }
    out
}

/// `(path, line)` of one output line `…path.go:LINE[:COL]: message`.
fn location_in(line: &str) -> Option<(&str, u32)> {
    let line = line.trim_start();
    let line = line.strip_prefix("vet: ").unwrap_or(line);
    let at = line.find(".go:")?;
    let path = &line[..at + 3];
    // The path is the last whitespace-separated word before `.go:`.
    let path = path.rsplit(char::is_whitespace).next()?;
    let rest = &line[at + 4..];
    let digits: &str = &rest[..rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len())];
    let line_no: u32 = digits.parse().ok()?;
    // A location is followed by `:` (column or message); `x.go:12` alone is not one.
    rest[digits.len()..].starts_with(':').then_some((path, line_no))
}

/// `path` (relative to a module directory of `root`, or absolute) as a `/`-separated path
/// relative to `root`, when that file exists.
fn resolve(root: &Path, modules: &[PathBuf], path: &str) -> Option<String> {
    let p = Path::new(path);
    let candidates: Vec<PathBuf> = if p.is_absolute() {
        vec![p.to_path_buf()]
    } else {
        std::iter::once(root.to_path_buf()).chain(modules.iter().cloned()).map(|d| d.join(p)).collect()
    };
    let root_real = root.canonicalize().ok()?;
    candidates.into_iter().find(|c| c.is_file()).and_then(|c| {
        let real = c.canonicalize().ok()?;
        let rel = real.strip_prefix(&root_real).ok()?;
        Some(rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Output captured from go1.26 on a module `example.com/broken` with a deleted method
    /// (`Circle` no longer implements `Shape`), a deleted function and an import left unused.
    const BUILD: &str = "# example.com/broken/geometry
geometry/shape.go:3:8: \"math\" imported and not used
geometry/shape.go:11:19: cannot use Circle{…} (value of struct type Circle) as Shape value in array or slice literal: Circle does not implement Shape (missing method Area)
geometry/shape.go:14:9: undefined: Perimeter";
    /// `go vet ./...` of the same module.
    const VET: &str = "# example.com/broken/geometry
# [example.com/broken/geometry]
vet: geometry/shape.go:11:19: cannot use Circle{…} (value of struct type Circle) as Shape value in array or slice literal: Circle does not implement Shape (missing method Area)";
    /// `go vet ./...` on a test file with a wrong format verb, then `go build .` run inside
    /// the package directory (paths relative to it, `./` prefixed).
    const VET_TEST: &str =
        "geometry/shape_test.go:7:18: (*testing.common).Fatalf format %d has arg \"x\" of wrong type string";
    const IN_PACKAGE: &str = "# example.com/broken/geometry\n./x.go:3:23: undefined: undefinedThing";

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("go.mod"), "module example.com/broken\n").unwrap();
        std::fs::create_dir(dir.path().join("geometry")).unwrap();
        for f in ["shape.go", "shape_test.go", "x.go"] {
            std::fs::write(dir.path().join("geometry").join(f), "package geometry\n").unwrap();
        }
        dir
    }

    #[test]
    fn build_and_vet_locations_are_read_relative_to_the_root() {
        let dir = tree();
        let loc = |p: &str, l: u32| (p.to_string(), l);
        assert_eq!(
            error_locations(dir.path(), BUILD),
            vec![loc("geometry/shape.go", 3), loc("geometry/shape.go", 11), loc("geometry/shape.go", 14)]
        );
        assert_eq!(error_locations(dir.path(), VET), vec![loc("geometry/shape.go", 11)]);
        assert_eq!(error_locations(dir.path(), VET_TEST), vec![loc("geometry/shape_test.go", 7)]);
    }

    #[test]
    fn a_path_relative_to_a_nested_module_resolves_and_an_unknown_file_is_left_out() {
        let dir = tree();
        // `./x.go` is not under the root itself; with the package as its own module it is.
        assert!(error_locations(dir.path(), IN_PACKAGE).is_empty());
        std::fs::write(dir.path().join("geometry/go.mod"), "module example.com/broken/geometry\n").unwrap();
        assert_eq!(error_locations(dir.path(), IN_PACKAGE), vec![("geometry/x.go".to_string(), 3)]);
        assert!(error_locations(dir.path(), "gone.go:3:1: undefined: y\nok  \texample.com/broken 0.1s").is_empty());
    }

    /// The check vets what `go test` vets: an unused `fmt.Sprintf` result (`unusedresult`, not
    /// in go test's subset) passes; a test file that does not type-check still fails.
    #[carve_testutil::needs("go")]
    fn the_check_vets_what_go_test_vets() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("go.mod"), "module example.com/old\n\ngo 1.21\n").unwrap();
        std::fs::write(
            dir.path().join("old.go"),
            "package old\n\nimport \"fmt\"\n\nfunc One() int {\n\tfmt.Sprintf(\"%d\", 1)\n\treturn 1\n}\n",
        )
        .unwrap();
        build_check(dir.path()).expect("go test would run these tests");
        std::fs::write(
            dir.path().join("old_test.go"),
            "package old\n\nimport \"testing\"\n\nfunc TestTwo(t *testing.T) { _ = Two() }\n",
        )
        .unwrap();
        let err = build_check(dir.path()).expect_err("the test file names a function that is gone").to_string();
        assert!(err.contains("undefined: Two"), "{err}");
        assert!(err.contains("go vet -atomic"), "{err}");
    }

    /// spf13/cast's `generator/`: a nested module that is one `main` package. A plain
    /// `go build ./...` writes `generator/generator` into the tree checked.
    #[carve_testutil::needs("go")]
    fn the_build_check_writes_nothing_into_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("go.mod"), "module example.com/lib\n\ngo 1.21\n").unwrap();
        std::fs::write(dir.path().join("lib.go"), "package lib\n\nfunc One() int { return 1 }\n").unwrap();
        let generator = dir.path().join("generator");
        std::fs::create_dir(&generator).unwrap();
        std::fs::write(generator.join("go.mod"), "module example.com/lib/generator\n\ngo 1.21\n").unwrap();
        std::fs::write(generator.join("main.go"), "package main\n\nfunc main() {}\n").unwrap();
        let before = carve_core::tree::tree_digest(dir.path(), crate::skip_policy()).unwrap();
        build_check(dir.path()).expect("the tree builds");
        assert_eq!(
            carve_core::tree::tree_digest(dir.path(), crate::skip_policy()).unwrap(),
            before,
            "the build check changed the tree"
        );
        assert!(!generator.join("generator").exists());
    }

    /// google/uuid's `go.mod` is one `module` line: under `-mod=mod` the go command adds a
    /// `go` line to it, and every task's restored tree then differed from the original.
    #[carve_testutil::needs("go")]
    fn the_build_check_leaves_a_go_mod_without_a_go_line_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("go.mod"), "module example.com/bare\n").unwrap();
        std::fs::write(dir.path().join("lib.go"), "package bare\n\nfunc One() int { return 1 }\n").unwrap();
        let before = carve_core::tree::tree_digest(dir.path(), crate::skip_policy()).unwrap();
        build_check(dir.path()).expect("the tree builds");
        assert_eq!(std::fs::read_to_string(dir.path().join("go.mod")).unwrap(), "module example.com/bare\n");
        assert!(!dir.path().join("go.sum").exists());
        assert_eq!(
            carve_core::tree::tree_digest(dir.path(), crate::skip_policy()).unwrap(),
            before,
            "the build check changed the tree"
        );
    }
}
