//! Build repair (part of the extract stage): the definitions a failed build check of the
//! masked tree names. The language reads its compiler's output into source locations
//! (`LanguageSupport::build_error_locations`); here, language-free, each location of the
//! masked tree is mapped back to the original file and to the extracted definition it
//! falls in, or else to the extracted definitions named there (`undefined: Perimeter`,
//! `missing method Area`).

use carve_languages::{DefinitionIndex, DefinitionKind, NodeId};
use carve_tracer::trace::TestId;
use std::collections::BTreeSet;

/// The 1-based line of the original file that masked line `line` (1-based) comes from:
/// unchanged lines map one to one; a line of a replaced region (a stubbed body) maps into
/// the region it replaced; an inserted line maps to the original line before it.
pub fn original_line(original: &str, masked: &str, line: usize) -> usize {
    use similar::{DiffOp, TextDiff};
    let diff = TextDiff::from_lines(original, masked);
    let target = line.saturating_sub(1);
    for op in diff.ops() {
        let (old, new) = (op.old_range(), op.new_range());
        if !new.contains(&target) {
            continue;
        }
        let offset = target - new.start;
        return 1 + match op {
            DiffOp::Equal { .. } => old.start + offset,
            _ if old.is_empty() => old.start.saturating_sub(1),
            _ => old.start + offset.min(old.len() - 1),
        };
    }
    line
}

/// Identifier-like words of `text` (letters, digits, `_`, not starting with a digit).
fn words(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().next().is_some_and(|c| !c.is_ascii_digit()))
        .collect()
}

/// The definitions among `candidates` whose name (the last component of the node id) a
/// build error's `message` names as a whole word (`undefined: setNodeID` names
/// `node.go::setNodeID`; `IDs` names no `ID`).
pub fn named_in_message<'a>(message: &str, candidates: impl IntoIterator<Item = &'a NodeId>) -> BTreeSet<NodeId> {
    let words = words(message);
    candidates
        .into_iter()
        .filter(|id| {
            let qual = id.rsplit("::").next().unwrap_or(id);
            words.contains(qual.rsplit('.').next().unwrap_or(qual))
        })
        .cloned()
        .collect()
}

/// Whether a build error's `message` names the file `path`: its repository path, or its file
/// name after a path separator, a space or a quote (compilers print paths relative to their
/// own directory).
pub fn message_names_file(message: &str, path: &str) -> bool {
    if message.contains(path) {
        return true;
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    message.match_indices(name).any(|(i, _)| {
        let before = message[..i].chars().next_back();
        let after = message[i + name.len()..].chars().next();
        before.is_none_or(|b| matches!(b, '/' | ' ' | '"' | '\'' | '\n' | '('))
            && after.is_none_or(|a| matches!(a, ':' | ' ' | '"' | '\'' | '\n' | ')' | ','))
    })
}

/// The extracted definitions a build error at `path`:`line` (original line) names: the
/// innermost extracted definition whose span holds the line, else the extracted
/// definitions whose name is a word of the compiler's message or of the masked source
/// line (those of the same directory first: a Go package, a Python package; elsewhere only
/// when the directory has none).
pub fn named_definitions(
    index: &DefinitionIndex,
    extracted: &BTreeSet<NodeId>,
    path: &str,
    line: usize,
    message: &str,
    masked_line: &str,
) -> BTreeSet<NodeId> {
    let holding = extracted
        .iter()
        .filter_map(|id| index.get(id))
        .filter(|d| d.path == path && d.span.start_line <= line && line <= d.span.end_line)
        .min_by_key(|d| (d.span.end_line - d.span.start_line, d.span.end_byte - d.span.start_byte));
    if let Some(d) = holding {
        return [d.id.clone()].into();
    }
    let mut names = words(message);
    names.extend(words(masked_line));
    let named: Vec<&carve_languages::Definition> =
        extracted.iter().filter_map(|id| index.get(id)).filter(|d| names.contains(d.name.as_str())).collect();
    let dir = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let here = dir(path);
    let local: BTreeSet<NodeId> = named.iter().filter(|d| dir(&d.path) == here).map(|d| d.id.clone()).collect();
    if !local.is_empty() {
        return local;
    }
    named.iter().map(|d| d.id.clone()).collect()
}

/// The extracted definitions a load error names (see
/// `LanguageSupport::load_error_names`): those called `name`, on the class or module
/// `owner` when the error says where it was looked up (a method's class or a class it
/// inherits from, a file's stem or package folder), else any of that name. Each comes with its extracted ancestors (a kept
/// method keeps its class) and, for a function, the extracted definitions nested in it
/// (part of its body); a kept class's extracted members stay extracted.
pub fn definitions_named_in_error(
    index: &DefinitionIndex,
    extracted: &BTreeSet<NodeId>,
    names: &[carve_languages::NamedInError],
) -> BTreeSet<NodeId> {
    let owner_matches = |d: &carve_languages::Definition, owner: &str| {
        let parent = d.parent.as_deref().and_then(|p| index.get(p)).map(|p| p.name.as_str());
        let file = d.path.rsplit('/').next().unwrap_or(&d.path);
        let stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
        let folder = d.path.rsplit('/').nth(1);
        parent.is_some_and(|p| with_bases(index, owner).contains(p))
            || stem == owner
            || (folder == Some(owner) && stem.starts_with("__init__"))
    };
    let mut out = BTreeSet::new();
    for n in names {
        let mut of_name: Vec<&carve_languages::Definition> =
            extracted.iter().filter_map(|id| index.get(id)).filter(|d| d.name == n.name).collect();
        if of_name.is_empty() {
            // A value binding of that name (`mode = _StatsProperty("mode", _calc_mode)`) went
            // with the extracted definitions it names: they are what the error needs.
            of_name = bound_by_value_binding(index, extracted, &n.name, n.owner.as_deref());
        }
        let owned: Vec<&&carve_languages::Definition> =
            of_name.iter().filter(|d| n.owner.as_deref().is_some_and(|o| owner_matches(d, o))).collect();
        let chosen: Vec<&carve_languages::Definition> =
            if owned.is_empty() { of_name.clone() } else { owned.into_iter().copied().collect() };
        for d in chosen {
            let mut cur = Some(d.id.clone());
            while let Some(id) = cur.filter(|id| extracted.contains(id)) {
                cur = index.get(&id).and_then(|d| d.parent.clone());
                out.insert(id);
            }
            // A function's nested definitions are part of its body; a type's members can
            // still go on their own (a later round keeps one that is needed too).
            if matches!(d.kind, carve_languages::DefinitionKind::Function | carve_languages::DefinitionKind::Method) {
                out.extend(extracted.iter().filter(|e| is_nested_in(index, e, &d.id)).cloned());
            }
        }
    }
    out
}

/// `class` and the names of the classes it inherits from, as far as the index's definitions
/// of those names say (a method looked up on a class may be a base's).
fn with_bases(index: &DefinitionIndex, class: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::from([class.to_string()]);
    let mut todo = vec![class.to_string()];
    while let Some(name) = todo.pop() {
        for d in index.definitions.values().filter(|d| d.name == name) {
            for base in &d.signature.bases {
                // `abc.ABC`, `Generic[T]`, `Base(metaclass=M)`: the name itself.
                let base = base.split(['[', '(', '<']).next().unwrap_or(base);
                let base = base.rsplit(['.', ':']).next().unwrap_or(base).trim();
                if !base.is_empty() && out.insert(base.to_string()) {
                    todo.push(base.to_string());
                }
            }
        }
    }
    out
}

/// The extracted definitions that value bindings called `name` name (on class or in a file
/// `owner`, when given and one matches; else any), so that the mask keeps the binding.
fn bound_by_value_binding<'i>(
    index: &'i DefinitionIndex,
    extracted: &BTreeSet<NodeId>,
    name: &str,
    owner: Option<&str>,
) -> Vec<&'i carve_languages::Definition> {
    let bindings: Vec<(&str, &carve_languages::index::ValueBinding)> = index
        .files
        .iter()
        .flat_map(|(path, f)| f.value_bindings.iter().map(move |b| (path.as_str(), b)))
        .filter(|(_, b)| !b.entry && b.name == name)
        .collect();
    let owned = |(path, b): &&(&str, &carve_languages::index::ValueBinding)| {
        let Some(owner) = owner else { return false };
        let class = b.class.as_deref().and_then(|c| index.get(c)).map(|c| c.name.as_str());
        let file = path.rsplit('/').next().unwrap_or(path);
        class == Some(owner) || file.rsplit_once('.').map_or(file, |(s, _)| s) == owner
    };
    let chosen: Vec<&(&str, &carve_languages::index::ValueBinding)> = if bindings.iter().any(|b| owned(&b)) {
        bindings.iter().filter(owned).collect()
    } else {
        bindings.iter().collect()
    };
    let mut out: Vec<&carve_languages::Definition> = chosen
        .iter()
        .flat_map(|(_, b)| &b.targets)
        .filter(|t| extracted.contains(&t.target))
        .filter_map(|t| index.get(&t.target))
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out.dedup_by(|a, b| a.id == b.id);
    out
}

/// Load repair (a round of `carve tasks`): when the masked state fails tests that had to
/// pass there with errors that name extracted definitions (a module that no longer loads,
/// a P2P test that calls what was deleted), those definitions, found by the language
/// (`LanguageSupport::load_error_names`), are kept, with what they call ([`with_callees`]).
/// `None` when the masked state passed or no message names an extracted definition.
pub fn load_repair(
    session: &crate::Session,
    extracted: &BTreeSet<NodeId>,
    trace: &carve_tracer::trace::Trace,
    validation: &crate::validate::Validation,
    round: usize,
) -> Option<crate::classify::LoadRepair> {
    use crate::classify::{KeptToLoad, LoadRepair};
    let masked = validation.states.iter().find(|s| s.state == "masked" && !s.ok)?;
    let mut moved: std::collections::BTreeMap<NodeId, KeptToLoad> = std::collections::BTreeMap::new();
    for (test, message) in &masked.messages {
        let file = crate::test_file(test);
        let language = session.index.files.get(file).map(|f| f.language);
        let names: Vec<carve_languages::NamedInError> = match language {
            Some(l) => carve_languages::support(l).load_error_names(message),
            None => carve_languages::families().flat_map(|s| s.load_error_names(message)).collect(),
        };
        for id in definitions_named_in_error(&session.index, extracted, &names) {
            moved.entry(id.clone()).or_insert_with(|| KeptToLoad {
                id,
                found_by: test.clone(),
                message: message.clone(),
                helper: None,
            });
        }
    }
    with_callees(&session.index, extracted, trace, &mut moved);
    (!moved.is_empty()).then(|| LoadRepair { round, moved: moved.into_values().collect() })
}

/// Adds to `kept` the extracted definitions that a kept function or method calls in any
/// traced test, and what those call, and the extracted definitions nested in any of them: a
/// function kept for the tests that stay runs its callees there too. Without this a repair
/// found one per round, as each masked run failed on the next missing callee, and ran out of
/// rounds (sqlparse's `Lexer.default_initialization`, which calls `clear`, `set_SQL_REGEX`
/// and `add_keywords`, made on first use by a test of the feature, so no P2P trace had them).
fn with_callees(
    index: &DefinitionIndex,
    extracted: &BTreeSet<NodeId>,
    trace: &carve_tracer::trace::Trace,
    kept: &mut std::collections::BTreeMap<NodeId, crate::classify::KeptToLoad>,
) {
    use carve_tracer::trace::Caller;
    if kept.is_empty() {
        return;
    }
    let mut calls: std::collections::BTreeMap<&NodeId, BTreeSet<&NodeId>> = std::collections::BTreeMap::new();
    for (caller, callee) in trace.tests.values().flat_map(|t| &t.edges) {
        if let Caller::Node(caller) = caller
            && extracted.contains(callee)
        {
            calls.entry(caller).or_default().insert(callee);
        }
    }
    // Each with the test and message of the definition kept for the error it kept from.
    let mut todo: Vec<(NodeId, TestId, String)> =
        kept.values().map(|k| (k.id.clone(), k.found_by.clone(), k.message.clone())).collect();
    while let Some((id, test, message)) = todo.pop() {
        // A class (a type) kept so that its name exists does not run its methods: each is
        // kept when a test needs it, as before.
        let runs = index.get(&id).is_some_and(|d| matches!(d.kind, DefinitionKind::Function | DefinitionKind::Method));
        if !runs {
            continue;
        }
        let nested = extracted.iter().filter(|n| is_nested_in(index, n, &id)).cloned();
        let callees = calls.get(&id).into_iter().flatten().map(|n| (*n).clone());
        for n in callees.chain(nested).collect::<Vec<_>>() {
            if kept.contains_key(&n) {
                continue;
            }
            let k = crate::classify::KeptToLoad {
                id: n.clone(),
                found_by: test.clone(),
                message: format!("called by `{id}`, kept for {message}"),
                helper: None,
            };
            kept.insert(n.clone(), k);
            todo.push((n, test.clone(), message.clone()));
        }
    }
}

/// Call repair (a round of `carve tasks`, after [`load_repair`] found nothing to keep): the
/// definitions extracted only because the P2P tests ran them through code the mask deletes
/// (`p2p_only_through_removed`: their discarded-value call statements went with them) are
/// kept when a P2P test that executed them fails on the masked state, even with an error
/// that names nothing (an assertion that a validation raised, a warning that was issued):
/// deleting their calls changed what that test checks. Nested extracted definitions go with
/// them. `None` when no such test failed.
pub fn call_repair(
    session: &crate::Session,
    feature: &crate::classify::Feature,
    trace: &carve_tracer::trace::Trace,
    validation: &crate::validate::Validation,
    round: usize,
) -> Option<crate::classify::LoadRepair> {
    use crate::classify::{KeptToLoad, LoadRepair};
    use carve_tracer::classify::{Reason, Status};
    let masked = validation.states.iter().find(|s| s.state == "masked" && !s.ok)?;
    let through_calls: Vec<&NodeId> = feature
        .classification
        .nodes
        .iter()
        .filter(|(_, d)| {
            d.status == Status::Extracted && d.reasons.iter().any(|r| matches!(r, Reason::P2pOnlyThroughRemoved { .. }))
        })
        .map(|(id, _)| id)
        .collect();
    let mut moved: std::collections::BTreeMap<NodeId, KeptToLoad> = std::collections::BTreeMap::new();
    for (test, status) in &masked.statuses {
        if *status == carve_languages::runner::TestStatus::Passed || !feature.p2p.contains(test) {
            continue;
        }
        let Some(hits) = trace.tests.get(test).map(|t| &t.hits) else { continue };
        let message = masked.messages.get(test).cloned().unwrap_or_else(|| format!("{status:?}"));
        for id in through_calls.iter().filter(|id| hits.contains(**id)) {
            let nested = feature.extracted().into_iter().filter(|n| is_nested_in(&session.index, n, id));
            for n in std::iter::once((*id).clone()).chain(nested) {
                moved.entry(n.clone()).or_insert_with(|| KeptToLoad {
                    id: n,
                    found_by: test.clone(),
                    message: format!("failed without the call statements deleted with it: {message}"),
                    helper: None,
                });
            }
        }
    }
    (!moved.is_empty()).then(|| LoadRepair { round, moved: moved.into_values().collect() })
}

/// Whether `id` is nested (at any depth) in `ancestor`.
pub fn is_nested_in(index: &DefinitionIndex, id: &str, ancestor: &str) -> bool {
    let mut cur = index.get(id).and_then(|d| d.parent.clone());
    while let Some(p) = cur {
        if p == ancestor {
            return true;
        }
        cur = index.get(&p).and_then(|d| d.parent.clone());
    }
    false
}

/// The message of a location: the rest of the first output line that names
/// `file_name:line` (`shape.go:11:19: cannot use …` → `cannot use …`), else the first
/// non-empty line of the output.
pub fn message_at(output: &str, path: &str, line: u32) -> String {
    let file_name = path.rsplit('/').next().unwrap_or(path);
    let needle = format!("{file_name}:{line}");
    for l in output.lines() {
        if let Some(at) = l.find(&needle) {
            let rest = &l[at + needle.len()..];
            // Skip `:col` and the separator; keep the message.
            let rest = rest.trim_start_matches(':').trim_start_matches(|c: char| c.is_ascii_digit());
            let rest = rest.trim_start_matches([':', ',', ')']).trim();
            if !rest.is_empty() {
                return rest.to_string();
            }
        }
    }
    output.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#')).unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masked_lines_map_back_through_deletions_and_stubs() {
        let original = "package g\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn A()\n}\n";
        // A deleted, B's body stubbed.
        let masked = "package g\n\nfunc B() int {\n\tpanic(\"not implemented\")\n}\n";
        assert_eq!(original_line(original, masked, 1), 1);
        assert_eq!(original_line(original, masked, 3), 7);
        assert_eq!(original_line(original, masked, 4), 8);
        assert_eq!(original_line(original, masked, 5), 9);
    }

    #[test]
    fn messages_are_read_from_the_line_naming_the_location() {
        let out = "# example.com/broken/geometry\ngeometry/shape.go:3:8: \"math\" imported and not used\n\
                   geometry/shape.go:14:9: undefined: Perimeter";
        assert_eq!(message_at(out, "geometry/shape.go", 14), "undefined: Perimeter");
        assert_eq!(message_at(out, "geometry/shape.go", 3), "\"math\" imported and not used");
        // TypeScript's form `src/x.ts(12,5): error TS2304: …`.
        let ts = "src/x.ts(12,5): error TS2304: Cannot find name 'area'.";
        assert_eq!(message_at(ts, "src/x.ts", 99), ts);
    }

    #[test]
    fn a_build_message_names_files_by_path_or_by_name_alone() {
        let go = "./node.go:77:5: undefined: setNodeID";
        assert!(message_names_file(go, "pkg/node.go"), "the compiler printed it relative to its package");
        assert!(message_names_file("error[E0425]: cannot find `f` in src/lib.rs", "src/lib.rs"));
        assert!(message_names_file("Cannot find module 'util.js'", "lib/util.js"));
        assert!(!message_names_file("./mynode.go:7: undefined: x", "pkg/node.go"), "part of another name");
        assert!(!message_names_file("./node.gob: bad", "pkg/node.go"));
    }

    #[test]
    fn a_build_message_names_definitions_by_whole_words() {
        let ids = ["node.go::setNodeID", "node.go::ID", "node.go::UUID.NodeID"].map(String::from);
        let msg = "./node.go:77:5: undefined: setNodeID\n./uuid.go:9: uuid.NodeID undefined\nIDs";
        assert_eq!(
            named_in_message(msg, &ids),
            BTreeSet::from(["node.go::UUID.NodeID".to_string(), "node.go::setNodeID".to_string()])
        );
    }

    /// A small Go module indexed for real: `geo` with a type and two methods, `cmd` using it.
    fn go_index() -> (tempfile::TempDir, DefinitionIndex) {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            ("go.mod", "module ex\n\ngo 1.21\n"),
            (
                "geo/geo.go",
                "package geo\n\ntype C struct{ R float64 }\n\nfunc (c C) Area() float64 {\n\treturn c.R * c.R\n}\n\n\
                 func (c C) Perimeter() float64 {\n\treturn 2 * c.R\n}\n",
            ),
            ("cmd/main.go", "package main\n\nimport \"ex/geo\"\n\nfunc main() {\n\t_ = geo.C{}.Area\n}\n"),
        ];
        carve_testutil::write_files(dir.path(), &files);
        let index = DefinitionIndex::build(dir.path(), &Default::default()).unwrap();
        (dir, index)
    }

    #[test]
    fn a_location_maps_to_the_innermost_extracted_definition_holding_it_or_to_the_one_named() {
        let (_dir, index) = go_index();
        let extracted: BTreeSet<NodeId> =
            ["geo/geo.go::C", "geo/geo.go::C.Area", "geo/geo.go::C.Perimeter"].map(String::from).into();
        // Line 6 is in Area's body, which is in no other extracted definition's span.
        let got = named_definitions(&index, &extracted, "geo/geo.go", 6, "unused", "\treturn c.R * c.R");
        assert_eq!(got, ["geo/geo.go::C.Area".to_string()].into());
        // cmd/main.go:6 is in `main`, which stays: the message names the method.
        let message = "geo.C{}.Area undefined (type geo.C has no field or method Area)";
        let got = named_definitions(&index, &extracted, "cmd/main.go", 6, message, "\t_ = geo.C{}.Area");
        assert_eq!(got, ["geo/geo.go::C", "geo/geo.go::C.Area"].map(String::from).into());
        // Nothing extracted is named: nothing to repair.
        let got = named_definitions(&index, &extracted, "cmd/main.go", 3, "\"fmt\" imported and not used", "");
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn a_load_error_names_the_extracted_definition_of_that_name_on_its_owner_with_its_class() {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            ("pkg/__init__.py", ""),
            (
                "pkg/echo.py",
                "class Echo:\n    def say(self):\n        return 1\n\n    def twice(self):\n        return 2\n\n\n\
                 def repeat(t):\n    return t\n",
            ),
            ("pkg/other.py", "def repeat(t):\n    return t\n\n\ndef say():\n    return 0\n"),
        ];
        carve_testutil::write_files(dir.path(), &files);
        let index = DefinitionIndex::build(dir.path(), &Default::default()).unwrap();
        let extracted: BTreeSet<NodeId> = [
            "pkg/echo.py::Echo",
            "pkg/echo.py::Echo.say",
            "pkg/echo.py::Echo.twice",
            "pkg/echo.py::repeat",
            "pkg/other.py::repeat",
            "pkg/other.py::say",
        ]
        .map(String::from)
        .into();
        let named = |name: &str, owner: Option<&str>| {
            let n = carve_languages::NamedInError { name: name.into(), owner: owner.map(String::from) };
            definitions_named_in_error(&index, &extracted, &[n])
        };
        let ids = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<BTreeSet<NodeId>>();
        // `module 'pkg.echo' has no attribute 'repeat'`: the one of that module.
        assert_eq!(named("repeat", Some("echo")), ids(&["pkg/echo.py::repeat"]));
        // `'Echo' object has no attribute 'say'`: the method, and its class with it.
        assert_eq!(named("say", Some("Echo")), ids(&["pkg/echo.py::Echo", "pkg/echo.py::Echo.say"]));
        // `name 'repeat' is not defined`: every extracted `repeat`.
        assert_eq!(named("repeat", None), ids(&["pkg/echo.py::repeat", "pkg/other.py::repeat"]));
        // A kept class's members stay extracted (they can go on their own).
        assert_eq!(named("Echo", None), ids(&["pkg/echo.py::Echo"]));
        assert!(named("missing", None).is_empty());
    }

    /// `Descriptor() takes no arguments` (cachetools' `_cachedmethod`): the `__init__` that went
    /// is the base class's, not the one of another class of the same module.
    #[test]
    fn a_missing_init_is_looked_up_through_the_classes_bases() {
        let dir = tempfile::tempdir().unwrap();
        let src = "class Base:\n    def __init__(self, x):\n        self.x = x\n\n\nclass Other:\n    def __init__(self, y):\n        self.y = y\n\n\n\
                   def make():\n    class Descriptor(Base):\n        pass\n\n    return Descriptor(1)\n";
        carve_testutil::write_files(dir.path(), &[("pkg/__init__.py", ""), ("pkg/d.py", src)]);
        let index = DefinitionIndex::build(dir.path(), &Default::default()).unwrap();
        let extracted: BTreeSet<NodeId> =
            ["pkg/d.py::Base.__init__", "pkg/d.py::Other.__init__"].map(String::from).into();
        let n = carve_languages::NamedInError { name: "__init__".into(), owner: Some("Descriptor".into()) };
        assert_eq!(
            definitions_named_in_error(&index, &extracted, &[n]),
            ["pkg/d.py::Base.__init__".to_string()].into()
        );
    }

    #[test]
    fn words_skip_numbers_and_punctuation() {
        let w = words("cannot use Circle{…} as Shape value: (missing method Area) 3x");
        assert!(w.contains("Circle") && w.contains("Area") && w.contains("Shape"));
        assert!(!w.contains("3x") && !w.contains(""));
    }
}
