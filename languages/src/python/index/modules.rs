//! Python module naming and lookup: which dotted module a file is, which repository file an
//! import statement names (absolute or relative), and which files are test code.
//!
//! Modules are handled as *locations*: a file's repository-relative path without `.py`, or
//! a package directory (`pkg/core` for `pkg/core.py`, `pkg` for `pkg/__init__.py`). A
//! directory holding Python files but no `__init__.py` is a namespace package location
//! without a file.

use std::collections::{HashMap, HashSet};

/// Test code by Python conventions: `test_*.py`, `*_test.py`, `conftest.py`, and any file
/// under a `tests/` or `test/` directory.
pub fn is_test_path(rel: &str) -> bool {
    let mut parts: Vec<&str> = rel.split('/').collect();
    let file = parts.pop().unwrap_or("");
    if parts.iter().any(|d| *d == "tests" || *d == "test") {
        return true;
    }
    // A top-level `test.py` / `tests.py` is a project's single test module (python-slugify's
    // `test.py`, collected through `testpaths`); inside a package the name may be library code.
    file == "conftest.py"
        || (parts.is_empty() && (file == "test.py" || file == "tests.py"))
        || (file.starts_with("test_") && file.ends_with(".py"))
        || file.ends_with("_test.py")
}

/// The location of a file: its path without `.py`, or its directory for `__init__.py`.
pub(super) fn location(rel: &str) -> Option<&str> {
    let stem = rel.strip_suffix(".py")?;
    if stem == "__init__" {
        return Some("");
    }
    Some(stem.strip_suffix("/__init__").unwrap_or(stem))
}

/// Parent directory of a `/`-separated path (`""` for a top-level entry).
pub(super) fn parent_dir(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

pub(super) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else if name.is_empty() {
        dir.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic()) && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// Every Python file of the repository by location, and the directories that hold them.
#[derive(Debug, Default)]
pub(super) struct ModuleMap {
    /// Location -> index of the file in the list the map was built from.
    files: HashMap<String, usize>,
    /// Every directory (and ancestor) holding a Python file, `""` included.
    dirs: HashSet<String>,
    /// Directories with an `__init__.py`.
    packages: HashSet<String>,
}

impl ModuleMap {
    pub(super) fn new<'a>(paths: impl IntoIterator<Item = &'a str>) -> ModuleMap {
        let mut map = ModuleMap::default();
        for (i, path) in paths.into_iter().enumerate() {
            let Some(loc) = location(path) else { continue };
            let is_init = path == "__init__.py" || path.ends_with("/__init__.py");
            if is_init {
                map.packages.insert(loc.to_string());
                // A package directory wins over a same-named module file.
                map.files.insert(loc.to_string(), i);
            } else {
                map.files.entry(loc.to_string()).or_insert(i);
            }
            let mut dir = parent_dir(path);
            loop {
                if !map.dirs.insert(dir.to_string()) || dir.is_empty() {
                    break;
                }
                dir = parent_dir(dir);
            }
        }
        map.dirs.insert(String::new());
        map
    }

    pub(super) fn exists(&self, loc: &str) -> bool {
        self.files.contains_key(loc) || self.dirs.contains(loc)
    }

    /// The file at a location (module file or package `__init__.py`).
    pub(super) fn file(&self, loc: &str) -> Option<usize> {
        self.files.get(loc).copied()
    }

    pub(super) fn is_package(&self, loc: &str) -> bool {
        self.packages.contains(loc) || (self.dirs.contains(loc) && !self.files.contains_key(loc))
    }

    /// Submodule `name` of the package at `loc`, if the repository has it.
    pub(super) fn child(&self, loc: &str, name: &str) -> Option<String> {
        if !self.is_package(loc) {
            return None;
        }
        let child = join(loc, name);
        self.exists(&child).then_some(child)
    }

    /// Dotted module name of a file: `pkg/core.py` -> `pkg.core`, `pkg/__init__.py` -> `pkg`;
    /// under `src/`, when `src/<pkg>/__init__.py` exists, the `src/` prefix is dropped.
    /// `None` when a path component is not a Python identifier.
    pub(super) fn module_name(&self, rel: &str) -> Option<String> {
        let mut loc = location(rel)?;
        if let Some(rest) = loc.strip_prefix("src/") {
            let top = rest.split('/').next().unwrap_or("");
            if self.packages.contains(&format!("src/{top}")) {
                loc = rest;
            }
        }
        if loc.is_empty() || !loc.split('/').all(is_identifier) {
            return None;
        }
        Some(loc.replace('/', "."))
    }

    /// The directory Python puts on `sys.path` for a script or a pytest test module in
    /// "prepend" mode: the first ancestor directory that is not a package.
    fn basedir<'a>(&self, importer: &'a str) -> &'a str {
        let mut dir = parent_dir(importer);
        while !dir.is_empty() && self.packages.contains(dir) {
            dir = parent_dir(dir);
        }
        dir
    }

    /// Location of absolute module `dotted` imported from file `importer`: looked up under
    /// the repository root, then `src/`, then the importer's base directory.
    /// Returns the location and the root it was found under.
    pub(super) fn resolve_absolute(&self, importer: &str, dotted: &str) -> Option<(String, String)> {
        if dotted.is_empty() {
            return None;
        }
        let rel = dotted.replace('.', "/");
        for root in ["", "src", self.basedir(importer)] {
            let loc = join(root, &rel);
            if self.exists(&loc) {
                return Some((loc, root.to_string()));
            }
        }
        None
    }

    /// Location of relative module (`level` leading dots, then `dotted`) imported from
    /// `importer`.
    pub(super) fn resolve_relative(&self, importer: &str, level: usize, dotted: &str) -> Option<String> {
        let mut dir = parent_dir(importer);
        for _ in 1..level {
            if dir.is_empty() {
                return None;
            }
            dir = parent_dir(dir);
        }
        let loc = join(dir, &dotted.replace('.', "/"));
        self.exists(&loc).then_some(loc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_paths() {
        for p in [
            "test_a.py",
            "pkg/a_test.py",
            "conftest.py",
            "tests/helpers.py",
            "a/test/b.py",
            "pkg/tests/x/y.py",
            "test.py",
            "tests.py",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in ["pkg/core.py", "testing.py", "pkg/tests.py", "pkg/latest/x.py", "contest.py", "test_a.txt"] {
            assert!(!is_test_path(p), "{p}");
        }
    }

    #[test]
    fn module_names_and_src_layout() {
        let paths = [
            "pkg/__init__.py",
            "pkg/core.py",
            "src/lib/__init__.py",
            "src/lib/a/b.py",
            "src/loose.py",
            "my-scripts/x.py",
        ];
        let m = ModuleMap::new(paths);
        assert_eq!(m.module_name("pkg/core.py").as_deref(), Some("pkg.core"));
        assert_eq!(m.module_name("pkg/__init__.py").as_deref(), Some("pkg"));
        assert_eq!(m.module_name("src/lib/a/b.py").as_deref(), Some("lib.a.b"));
        assert_eq!(m.module_name("src/loose.py").as_deref(), Some("src.loose"));
        assert_eq!(m.module_name("my-scripts/x.py"), None);
        assert_eq!(m.resolve_absolute("tests/test_x.py", "lib.a.b").map(|x| x.0).as_deref(), Some("src/lib/a/b"));
        assert_eq!(m.resolve_absolute("pkg/core.py", "pkg").map(|x| x.0).as_deref(), Some("pkg"));
        assert_eq!(m.resolve_absolute("pkg/core.py", "os.path"), None);
        assert_eq!(m.resolve_relative("src/lib/a/b.py", 2, "").as_deref(), Some("src/lib"));
        assert_eq!(m.resolve_relative("pkg/core.py", 1, "core").as_deref(), Some("pkg/core"));
        assert_eq!(m.resolve_relative("pkg/core.py", 3, "x"), None);
        assert_eq!(m.file("pkg"), Some(0));
        assert_eq!(m.child("src/lib", "a").as_deref(), Some("src/lib/a"));
        assert_eq!(m.child("pkg/core", "x"), None);
    }

    #[test]
    fn basedir_import_of_test_helpers() {
        let m = ModuleMap::new(["tests/test_a.py", "tests/helpers.py", "pkg/__init__.py"]);
        assert_eq!(m.resolve_absolute("tests/test_a.py", "helpers").map(|x| x.0).as_deref(), Some("tests/helpers"));
    }
}
