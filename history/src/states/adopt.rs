//! Repair of states that predate the project's manifest (Go history before `go.mod`): no state
//! is a project of its language, so none builds or runs its tests with today's toolchain. The
//! manifest files the repository's HEAD has at its root (`go.mod`, `go.sum`: the language's
//! project files) are written into every state, as shared context, so the states build as
//! that code would inside the project as it is now. A history whose HEAD has none either
//! (Go that never moved to modules) gets the language's stand-in
//! ([`carve_languages::LanguageSupport::stand_in_project_files`]: a `go.mod` naming the module
//! as the code does), written the same way.

use std::collections::BTreeMap;

use super::git::{git, git_text, tree_files, with_file};
use super::{SharedContext, States};

impl States {
    /// When no state has a project file of the language at its root (every state is older than
    /// the project's manifest) and the repository's HEAD has some, write those into every
    /// state; returns what was added (recorded in [`States::shared`]), empty when nothing was.
    pub fn adopt_project_files(&mut self, message: &str) -> Result<Vec<SharedContext>, String> {
        let names = carve_languages::support(self.language).facts().project_files;
        for s in &self.states {
            let files = tree_files(&self.dir, s)?;
            if names.iter().any(|n| files.contains(*n)) {
                return Ok(Vec::new());
            }
        }
        let Ok(head) = git_text(&self.repo, &["rev-parse", "--verify", "-q", "HEAD^{commit}"]) else {
            return Ok(Vec::new());
        };
        let at_head = tree_files(&self.dir, &head)?;
        let mut found: Vec<(String, Vec<u8>, &str)> = Vec::new();
        for name in names.iter().copied().filter(|n| at_head.contains(*n)) {
            found.push((
                name.to_string(),
                git(&self.dir, &["show", &format!("{head}:{name}")], None)?,
                "as the repository's HEAD has it",
            ));
        }
        if found.is_empty() {
            let n = self.states.len() - 1;
            let sources: Vec<(String, Vec<u8>)> = tree_files(&self.dir, &self.states[n])?
                .into_iter()
                .filter_map(|p| self.file_at(n, &p).map(|b| (p, b)))
                .collect();
            let stand_in = carve_languages::support(self.language).stand_in_project_files(&sources);
            found.extend(stand_in.into_iter().map(|(name, bytes)| {
                (
                    name,
                    bytes,
                    "as carve made it: the repository's HEAD has none either (the code names its own module path)",
                )
            }));
        }
        if found.is_empty() {
            return Ok(Vec::new());
        }
        let first_line = message.lines().find(|l| !l.trim().is_empty()).unwrap_or_default().trim();
        let modes = BTreeMap::new();
        let mut adopted = Vec::new();
        for (name, bytes, how) in found {
            let name = name.as_str();
            for k in 0..self.states.len() {
                let same = self.code_states[k] == self.states[k];
                self.states[k] = with_file(&self.dir, &self.states[k], name, &bytes, &format!("S{k}"), &modes)?;
                self.code_states[k] = if same {
                    self.states[k].clone()
                } else {
                    with_file(&self.dir, &self.code_states[k], name, &bytes, &format!("W{k}"), &modes)?
                };
            }
            adopted.push(SharedContext::new(
                0,
                head.clone(),
                name.to_string(),
                format!(
                    "no state has a project file of the language at its root (the chain predates it) and a state \
                     did not pass the build check ({first_line}); every state gets {name} {how}"
                ),
            ));
        }
        self.shared.extend(adopted.iter().cloned());
        Ok(adopted)
    }
}
