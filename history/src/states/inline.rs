//! Inline tests (tests inside source files, as Rust's `#[cfg(test)]` modules): the files
//! whose test part differs between states, and the code states W_0 … W_n that hold each
//! state's code with S_0's tests.

use std::collections::{BTreeMap, BTreeSet};

use carve_languages::Language;

use super::git::{commit_state, git};
use super::{Role, States, role};

impl States {
    /// Split the inline tests off the code (FeatureArc on Rust, where tests live in `src/`):
    /// every code file a stage changed whose inline tests differ between two states goes into
    /// [`States::inline`], and the code states W_k hold S_k's code with S_0's tests. A
    /// language without tests in its sources leaves the states as they are. An error names
    /// the file that cannot be split (it does not parse at some state).
    pub fn split_inline_tests(&mut self, language: Language) -> Result<(), String> {
        self.inline.clear();
        self.code_states = self.states.clone();
        if !carve_languages::support(language).facts().tests_in_sources {
            return Ok(());
        }
        let n = self.states.len() - 1;
        let mut paths = BTreeSet::new();
        for k in 0..n {
            paths.extend(self.changed_files(k, k + 1)?);
        }
        for path in paths {
            let Some(inline_tests) = carve_languages::inline_tests_of(&path) else { continue };
            if role(language, &path) != Role::Code {
                continue;
            }
            let mut parts = Vec::new();
            for j in 0..=n {
                let part = match self.file_at(j, &path) {
                    Some(bytes) => {
                        let text = String::from_utf8(bytes).map_err(|_| format!("{path} at S{j} is not UTF-8"))?;
                        inline_tests
                            .tests_only(&text)
                            .map_err(|e| format!("{path} at S{j} cannot be split into code and inline tests: {e}"))?
                    }
                    None => String::new(),
                };
                parts.push(part);
            }
            if parts.windows(2).any(|w| w[0] != w[1]) {
                self.inline.insert(path, parts);
            }
        }
        if self.inline.is_empty() {
            return Ok(());
        }
        let mut code_states = Vec::new();
        for j in 0..=n {
            git(&self.dir, &["checkout", "-q", "-f", "--detach", &self.states[j]], None)?;
            for (path, parts) in &self.inline {
                let Some(bytes) = self.file_at(j, path) else { continue };
                let text = String::from_utf8_lossy(&bytes);
                let split = carve_languages::inline_tests_of(path).ok_or_else(|| format!("{path}: no inline tests"))?;
                let joined = split
                    .with_tests_of(&text, &parts[0])
                    .map_err(|e| format!("{path}: S{j}'s code with S0's inline tests: {e}"))?;
                std::fs::write(self.dir.join(path), joined).map_err(|e| format!("write {path}: {e}"))?;
            }
            code_states.push(commit_state(&self.dir, &format!("W{j}"), &BTreeMap::new())?);
        }
        self.code_states = code_states;
        Ok(())
    }

    /// The test part of inline-test file `path` at state `k` (see [`States::inline`]).
    pub fn inline_tests_at(&self, k: usize, path: &str) -> Option<Option<Vec<u8>>> {
        self.inline.get(path).map(|parts| Some(parts[k].clone().into_bytes()))
    }
}
