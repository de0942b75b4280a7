//! Repair of a state that does not build because it imports a repository file only a later
//! state has: the file is pulled into the states that lack it, at its text in the first state
//! that has it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use carve_languages::{DefinitionIndex, Language};

use super::git::{git, regular_modes, tree_files, with_file};
use super::{PulledFile, States};

impl States {
    /// Repair of a state S_k that does not build: every repository file a file of S_k imports
    /// (carve's index resolves the import) that S_k lacks and a later state S_m has is pulled
    /// into S_k … S_(m-1) at its text at S_m (a kept per-definition file's final imports, or a
    /// file outside the chain that imports what a stage created). Returns the files pulled
    /// (none: the error is not a missing file). S_n, the final checkpoint, never changes.
    pub fn pull_imported_files(&mut self, k: usize, message: &str) -> Result<Vec<PulledFile>, String> {
        let n = self.states.len() - 1;
        if k >= n {
            return Ok(Vec::new());
        }
        let files: Vec<BTreeSet<String>> =
            self.states.iter().map(|s| tree_files(&self.dir, s)).collect::<Result<_, _>>()?;
        let later: BTreeSet<&String> = files[k + 1..].iter().flatten().filter(|p| !files[k].contains(*p)).collect();
        if later.is_empty() {
            return Ok(Vec::new());
        }
        let indexed = |p: &str| Language::from_path(Path::new(p)).is_some();
        let mut sources = Vec::new();
        for p in files[k].iter().filter(|p| indexed(p)) {
            sources.push((p.clone(), git(&self.dir, &["show", &format!("{}:{p}", self.states[k])], None)?));
        }
        // Placeholders, so that imports of what only later states have still resolve.
        sources.extend(later.iter().filter(|p| indexed(p)).map(|p| ((*p).clone(), Vec::new())));
        let index = DefinitionIndex::from_sources(&sources);
        let mut found: BTreeMap<String, String> = BTreeMap::new();
        for (path, file) in &index.files {
            if !files[k].contains(path) {
                continue;
            }
            for r in file.imports.iter().filter_map(|i| i.resolved_path.as_ref()) {
                if later.contains(r) {
                    found.entry(r.clone()).or_insert_with(|| path.clone());
                }
            }
        }
        let modes = regular_modes(&self.dir, &self.final_commit)?;
        let mut pulled = Vec::new();
        let first_line = message.lines().find(|l| !l.trim().is_empty()).unwrap_or_default().trim();
        for (path, by) in found {
            let Some(m) = (k + 1..=n).find(|&m| files[m].contains(&path)) else { continue };
            let bytes = git(&self.dir, &["show", &format!("{}:{path}", self.states[m])], None)?;
            for s in k..m {
                let same = self.code_states[s] == self.states[s];
                self.states[s] = with_file(&self.dir, &self.states[s], &path, &bytes, &format!("S{s}"), &modes)?;
                self.code_states[s] = if same {
                    self.states[s].clone()
                } else {
                    with_file(&self.dir, &self.code_states[s], &path, &bytes, &format!("W{s}"), &modes)?
                };
            }
            let reason = format!(
                "S{k} did not pass the build check ({first_line}); {by} imports {path}, which S{k} lacks and S{m} \
                 has, so it comes with S{k} at its text at S{m}"
            );
            pulled.push(PulledFile::new(path, k, m, by, reason));
        }
        self.pulled.extend(pulled.iter().cloned());
        Ok(pulled)
    }
}
