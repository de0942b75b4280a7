//! Doctest ids that survive masking. rustdoc names a doctest after its file, item and the
//! line of its code block (`src/lib.rs - Either<L,R>::right (line 161)`), so deleting or
//! stubbing any definition above it renames it, and a P2P doctest of a masked state would
//! be "missing". carve's id drops the line: `either::doctest::src/lib.rs - Either<L,R>::right`,
//! and the k-th doctest of the same item in the same file (by line) gets ` (example k)`
//! (`… - Either<L,R>::unwrap_left (example 2)`). Inside a run the runner keeps rustdoc's
//! names (they are what its filters and output use); ids are translated at the run's edges.

use std::collections::BTreeMap;

use super::targets::split_id;
use crate::runner::{RunRequest, RunResult, TestId};

/// rustdoc's name without its ` (line N)`, and N.
fn without_line(name: &str) -> Option<(String, u64)> {
    let at = name.rfind(" (line ")?;
    let rest = &name[at + " (line ".len()..];
    let close = rest.find(')')?;
    let line = rest[..close].parse().ok()?;
    Some((format!("{}{}", &name[..at], &rest[close + 1..]), line))
}

/// Both directions between rustdoc-named doctest ids and carve's stable ones.
#[derive(Debug, Default)]
pub struct DoctestIds {
    stable: BTreeMap<TestId, TestId>,
    raw: BTreeMap<TestId, TestId>,
}

impl DoctestIds {
    /// From the listed ids of a run (non-doctests are left out).
    pub fn of<'a>(listed: impl IntoIterator<Item = &'a TestId>) -> DoctestIds {
        let mut groups: BTreeMap<String, Vec<(u64, &TestId)>> = BTreeMap::new();
        for id in listed {
            if !split_id(id).1 {
                continue;
            }
            if let Some((base, line)) = without_line(id) {
                groups.entry(base).or_default().push((line, id));
            }
        }
        let mut ids = DoctestIds::default();
        for (base, mut members) in groups {
            members.sort();
            members.dedup();
            for (k, (_, raw)) in members.into_iter().enumerate() {
                let stable = if k == 0 { base.clone() } else { format!("{base} (example {})", k + 1) };
                ids.stable.insert(raw.clone(), stable.clone());
                ids.raw.insert(stable, raw.clone());
            }
        }
        ids
    }

    pub fn stable<'a>(&'a self, id: &'a str) -> &'a str {
        self.stable.get(id).map_or(id, String::as_str)
    }

    pub fn raw<'a>(&'a self, id: &'a str) -> &'a str {
        self.raw.get(id).map_or(id, String::as_str)
    }

    /// The request with its selection in rustdoc's names.
    pub fn raw_request(&self, req: &RunRequest) -> RunRequest {
        let mut req = req.clone();
        if let Some(tests) = req.tests.as_mut() {
            for t in tests.iter_mut() {
                *t = self.raw(t).to_string();
            }
        }
        req
    }

    /// A result's ids in carve's names.
    pub fn stabilize(&self, result: &mut RunResult) {
        result.statuses =
            std::mem::take(&mut result.statuses).into_iter().map(|(id, o)| (self.stable(&id).to_string(), o)).collect();
        if let Some(t) = result.timed_out.as_mut() {
            *t = self.stable(t).to_string();
        }
    }

    /// `raw<TAB>stable`, one doctest a line, for the tracing runtime.
    pub fn for_the_runtime(&self) -> String {
        let lines: Vec<String> = self.stable.iter().map(|(raw, stable)| format!("{raw}\t{stable}")).collect();
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_drop_the_line_and_number_repeated_items_by_line() {
        let listed: Vec<TestId> = [
            "either::basic",
            "either::doctest::src/lib.rs - Either<L,R>::unwrap_left (line 1000)",
            "either::doctest::src/lib.rs - Either<L,R>::unwrap_left (line 999)",
            "either::doctest::src/lib.rs - Either<L,R>::right (line 161)",
            "either::doctest::src/lib.rs - Either<L,R>::fails (line 20) - compile fail",
        ]
        .map(String::from)
        .to_vec();
        let ids = DoctestIds::of(&listed);
        assert_eq!(ids.stable("either::basic"), "either::basic");
        assert_eq!(
            ids.stable("either::doctest::src/lib.rs - Either<L,R>::right (line 161)"),
            "either::doctest::src/lib.rs - Either<L,R>::right"
        );
        // Ordered by line as a number, not as text.
        assert_eq!(
            ids.stable("either::doctest::src/lib.rs - Either<L,R>::unwrap_left (line 999)"),
            "either::doctest::src/lib.rs - Either<L,R>::unwrap_left"
        );
        assert_eq!(
            ids.stable("either::doctest::src/lib.rs - Either<L,R>::unwrap_left (line 1000)"),
            "either::doctest::src/lib.rs - Either<L,R>::unwrap_left (example 2)"
        );
        assert_eq!(
            ids.stable("either::doctest::src/lib.rs - Either<L,R>::fails (line 20) - compile fail"),
            "either::doctest::src/lib.rs - Either<L,R>::fails - compile fail"
        );
        // A definition above the doctests was masked: the lines moved, the ids did not.
        let moved: Vec<TestId> =
            listed.iter().map(|t| t.replace("(line 1", "(line 8").replace("(line 9", "(line 7")).collect();
        let again = DoctestIds::of(&moved);
        let stable = |ids: &DoctestIds, l: &[TestId]| l.iter().map(|t| ids.stable(t).to_string()).collect::<Vec<_>>();
        assert_eq!(stable(&ids, &listed), stable(&again, &moved));
        for t in &listed {
            assert_eq!(ids.raw(ids.stable(t)), t);
        }
        assert!(ids.for_the_runtime().contains("(line 161)\teither::doctest::src/lib.rs - Either<L,R>::right\n"));
    }
}
