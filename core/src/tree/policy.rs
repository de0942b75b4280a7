//! Which folders and files of a tree are not the project's own: version control, tool caches,
//! installed environments and dependencies, build outputs and generated files. Each language
//! declares what its tools write as [`TreeFacts`] (in `carve-languages`); the registry unions
//! them into one [`SkipPolicy`], which every copy, digest, mask and workspace of carve follows.

use std::collections::BTreeSet;
use std::path::Path;

/// What one language's tools write into a tree, by name: data a language declares, never
/// behaviour. Every list is empty by default ([`TreeFacts::NONE`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct TreeFacts {
    /// Caches and tool state, wherever they are: never copied, digested, masked or committed.
    pub caches: &'static [&'static str],
    /// Installed environments, wherever they are: never copied, like caches.
    pub environments: &'static [&'static str],
    /// Files that make the folder holding them an installed environment whatever its name.
    pub environment_markers: &'static [&'static str],
    /// Installed dependencies that runs read in place, wherever they are: hard-linked into
    /// shadow copies (only read), left out of masked trees and of an agent's commit.
    pub dependencies: &'static [&'static str],
    /// Tool caches kept directly inside a dependency folder: runs rewrite their files in
    /// place, so a hard-linked copy would let a run change the user's files. Never copied.
    pub dependency_caches: &'static [&'static str],
    /// Build outputs at the top of a project: left out of an agent's workspace and of its
    /// recorded changes unless the repository tracks files in them (a source folder may share
    /// the name).
    pub build_outputs: &'static [&'static str],
    /// Name endings of generated files, left out of an agent's workspace.
    pub generated_files: &'static [&'static str],
    /// Name endings of generated folders (packaging metadata), left out of an agent's workspace.
    pub generated_dirs: &'static [&'static str],
}

impl TreeFacts {
    /// A language whose tools write nothing into a tree (usable in a `static`).
    pub const NONE: TreeFacts = TreeFacts {
        caches: &[],
        environments: &[],
        environment_markers: &[],
        dependencies: &[],
        dependency_caches: &[],
        build_outputs: &[],
        generated_files: &[],
        generated_dirs: &[],
    };
}

/// Version control folders: never copied, whatever the language.
pub const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn"];

/// The union of the [`TreeFacts`] of every language, with [`VCS_DIRS`]: what a copy, a
/// digest, a masked tree and an agent's workspace leave out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkipPolicy {
    /// Folders skipped by name wherever they are: version control, caches, environments
    /// (and dependencies, in a policy [`without_dependencies`](Self::without_dependencies)).
    skipped: BTreeSet<String>,
    markers: BTreeSet<String>,
    dependencies: BTreeSet<String>,
    dependency_caches: BTreeSet<String>,
    build_outputs: BTreeSet<String>,
    generated_files: BTreeSet<String>,
    generated_dirs: BTreeSet<String>,
}

fn owned<'a>(lists: impl Iterator<Item = &'a [&'static str]>) -> BTreeSet<String> {
    lists.flatten().map(|s| s.to_string()).collect()
}

impl SkipPolicy {
    /// The union of `facts`, with the version control folders.
    pub fn new<'a>(facts: impl IntoIterator<Item = &'a TreeFacts> + Clone) -> SkipPolicy {
        let all = || facts.clone().into_iter();
        let mut skipped = owned(all().flat_map(|f| [f.caches, f.environments]));
        skipped.extend(VCS_DIRS.iter().map(|s| s.to_string()));
        SkipPolicy {
            skipped,
            markers: owned(all().map(|f| f.environment_markers)),
            dependencies: owned(all().map(|f| f.dependencies)),
            dependency_caches: owned(all().map(|f| f.dependency_caches)),
            build_outputs: owned(all().map(|f| f.build_outputs)),
            generated_files: owned(all().map(|f| f.generated_files)),
            generated_dirs: owned(all().map(|f| f.generated_dirs)),
        }
    }

    /// This policy with installed dependencies skipped too: the files of a masked tree, which
    /// get the dependencies linked back in ([`super::link_dependencies`]).
    pub fn without_dependencies(&self) -> SkipPolicy {
        let mut p = self.clone();
        p.skipped.extend(std::mem::take(&mut p.dependencies));
        p
    }

    /// Whether a copy leaves the folder `path` out: a skipped name, a folder holding an
    /// environment marker, or a cache directly inside a dependency folder.
    pub fn skips_dir(&self, path: &Path) -> bool {
        let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        let in_dependency = path
            .parent()
            .and_then(|p| p.file_name())
            .is_some_and(|p| self.dependencies.contains(p.to_string_lossy().as_ref()));
        self.skipped.contains(name.as_ref())
            || (in_dependency && self.dependency_caches.contains(name.as_ref()))
            || self.markers.iter().any(|m| path.join(m).is_file())
    }

    /// Whether the root-relative `rel` lies inside an installed-dependency folder.
    pub fn is_dependency(&self, rel: &str) -> bool {
        rel.split('/').any(|c| self.dependencies.contains(c))
    }

    /// The installed-dependency folder names (`node_modules`), sorted.
    pub fn dependency_dirs(&self) -> impl Iterator<Item = &str> {
        self.dependencies.iter().map(String::as_str)
    }

    /// Every folder name the policy leaves out somewhere (skipped, dependencies, build
    /// outputs), sorted: what a fixture copy in carve's tests leaves out.
    pub fn folder_names(&self) -> BTreeSet<&str> {
        self.skipped.iter().chain(&self.dependencies).chain(&self.build_outputs).map(String::as_str).collect()
    }

    /// Why the file `rel` (root-relative, `/`-separated) is not the project's own work, as
    /// the path to record (`pkg/mod.pyc`, `pkg.egg-info/`, `build/`), or `None`: a generated
    /// file, a file in a generated or skipped folder, in a build output at the top that the
    /// repository tracks no file in (`tracked_top`: its top-level folders holding tracked
    /// files), or in a cache inside a dependency folder.
    pub fn generated(&self, rel: &str, tracked_top: &BTreeSet<String>) -> Option<String> {
        let parts: Vec<&str> = rel.split('/').collect();
        let (dirs, file) = parts.split_at(parts.len() - 1);
        if self.generated_files.iter().any(|s| file[0].ends_with(s.as_str())) {
            return Some(rel.to_string());
        }
        for (i, d) in dirs.iter().enumerate() {
            let dir = || format!("{}/", parts[..=i].join("/"));
            if self.skipped.contains(*d) || self.generated_dirs.iter().any(|s| d.ends_with(s.as_str())) {
                return Some(dir());
            }
            if i == 0 && self.build_outputs.contains(*d) && !tracked_top.contains(*d) {
                return Some(dir());
            }
            if i > 0 && self.dependency_caches.contains(*d) && self.dependencies.contains(dirs[i - 1]) {
                return Some(dir());
            }
        }
        None
    }

    /// The same rule as [`generated`](Self::generated), with installed dependencies, as
    /// `gitignore` lines: what a record of an agent's changes to a tree leaves out.
    pub fn ignore_patterns(&self, tracked_top: &BTreeSet<String>) -> String {
        let mut out = String::new();
        for name in self.skipped.iter().chain(&self.dependencies) {
            out.push_str(&format!("{name}/\n"));
        }
        for name in self.build_outputs.iter().filter(|b| !tracked_top.contains(*b)) {
            out.push_str(&format!("/{name}/\n"));
        }
        for suffix in &self.generated_dirs {
            out.push_str(&format!("*{suffix}/\n"));
        }
        for suffix in &self.generated_files {
            out.push_str(&format!("*{suffix}\n"));
        }
        out
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Made-up facts of two languages: the policy is their union.
    pub(crate) fn policy() -> SkipPolicy {
        let a = TreeFacts {
            caches: &["__cache__"],
            environments: &[".env-a"],
            environment_markers: &["env.cfg"],
            build_outputs: &["build"],
            generated_files: &[".gen"],
            generated_dirs: &[".meta"],
            ..TreeFacts::default()
        };
        let b = TreeFacts {
            dependencies: &["deps"],
            dependency_caches: &[".cache"],
            build_outputs: &["out"],
            ..TreeFacts::default()
        };
        SkipPolicy::new([&a, &b])
    }

    #[test]
    fn the_policy_is_the_union_of_the_facts() {
        let p = policy();
        assert_eq!(
            p.folder_names().into_iter().collect::<Vec<_>>(),
            vec![".env-a", ".git", ".hg", ".svn", "__cache__", "build", "deps", "out"]
        );
        assert_eq!(p.dependency_dirs().collect::<Vec<_>>(), vec!["deps"]);
        assert!(p.is_dependency("deps/x/y.js") && p.is_dependency("pkg/deps/y.js") && !p.is_dependency("pkg/y.js"));
        assert!(!p.without_dependencies().is_dependency("deps/x/y.js"));
    }

    #[test]
    fn skipped_folders_markers_and_caches_inside_dependencies() {
        let d = tempfile::tempdir().unwrap();
        let p = policy();
        std::fs::create_dir_all(d.path().join("myenv")).unwrap();
        std::fs::write(d.path().join("myenv/env.cfg"), "").unwrap();
        assert!(p.skips_dir(&d.path().join("myenv")), "a marker makes any folder an environment");
        assert!(p.skips_dir(&d.path().join("pkg/__cache__")) && p.skips_dir(&d.path().join(".env-a")));
        assert!(p.skips_dir(&d.path().join("deps/.cache")));
        assert!(!p.skips_dir(&d.path().join("deps/pkg/.cache")), "a package's own folder named .cache stays");
        assert!(!p.skips_dir(&d.path().join("deps")) && p.without_dependencies().skips_dir(&d.path().join("deps")));
        assert!(!p.skips_dir(&d.path().join("build")), "build outputs are copied");
    }

    #[test]
    fn generated_files_and_untracked_build_outputs_are_not_the_projects() {
        let (p, none) = (policy(), BTreeSet::new());
        assert_eq!(p.generated("pkg/mod.gen", &none).as_deref(), Some("pkg/mod.gen"));
        assert_eq!(p.generated("src/pkg.meta/INFO", &none).as_deref(), Some("src/pkg.meta/"));
        assert_eq!(p.generated("build/lib/a", &none).as_deref(), Some("build/"));
        assert_eq!(p.generated("out/x", &none).as_deref(), Some("out/"));
        assert_eq!(p.generated("deps/.cache/babel/x.json", &none).as_deref(), Some("deps/.cache/"));
        assert_eq!(p.generated("pkg/__cache__/m", &none).as_deref(), Some("pkg/__cache__/"));
        // Source folders that happen to share a name, and tracked top-level ones, are the project's.
        assert_eq!(p.generated("pkg/build/a", &none), None);
        assert_eq!(p.generated("deps/pkg/.cache/a", &none), None);
        let tracked: BTreeSet<String> = ["build".to_string()].into();
        assert_eq!(p.generated("build/recipe", &tracked), None);
        assert_eq!(p.generated("pkg/mod", &none), None);
        assert_eq!(
            p.ignore_patterns(&tracked),
            ".env-a/\n.git/\n.hg/\n.svn/\n__cache__/\ndeps/\n/out/\n*.meta/\n*.gen\n",
            "a tracked build output is recorded like the rest"
        );
    }
}
