//! Tests of the history analysis: ids and names, identifiers a commit wrote, line counts, and
//! Rust's inline tests and doctests found as tests of a commit.

use super::commit::line_counts;
use super::identifiers::{added_code_identifiers, table_test_identifiers};
use super::*;

#[test]
fn stable_ids_drop_line_suffixes_only() {
    assert_eq!(stable_id("a.py::f@L12"), "a.py::f");
    assert_eq!(stable_id("a.py::f@Lx"), "a.py::f@Lx");
    assert_eq!(stable_id("a.py::g"), "a.py::g");
}

#[test]
fn identifiers_skip_numbers_and_single_letters() {
    let mut out = BTreeSet::new();
    identifiers("x = run_and_wait(job_id, 10) + a1b", &mut out);
    assert_eq!(out.into_iter().collect::<Vec<_>>(), vec!["a1b", "job_id", "run_and_wait"]);
}

#[test]
fn added_code_identifiers_skip_module_level_lines() {
    let old = b"import a\n\ndef f():\n    return 1\n";
    let new = b"import a, helper\n\ndef f():\n    return helper(1)\n";
    let start = 18; // `def f` in `new`
    let ids = added_code_identifiers(Some(old), new, &[(start, new.len())]);
    assert_eq!(ids.into_iter().collect::<Vec<_>>(), vec!["helper", "return"]);
}

/// unjs/ufo `fix(joinRelativeURL): handle base with protocol`: the commit adds a row to the
/// table a `describe("joinRelativeURL")` runs; the row names nothing, the block does. A line
/// that calls something is code, and counts only with its own identifiers.
#[test]
fn a_new_row_of_a_table_driven_test_names_what_the_test_names() {
    let old = "describe(\"joinRelativeURL\", () => {\n  const tests = [\n    { input: [\"a\"], out: \"a\" },\n  ];\n  for (const t of tests) {\n    test(t.out, () => {\n      expect(joinRelativeURL(...t.input)).toBe(t.out);\n    });\n  }\n});\n";
    let new = old.replace("  ];", "    { input: [\"https://x.com/\", \"../b\"], out: \"https://x.com/b\" },\n  ];");
    let test_at = new.find("test(t.out").unwrap();
    let whole = [(0, new.len(), true), (test_at, new.len() - 6, true)];
    assert!(
        !added_code_identifiers(Some(old.as_bytes()), new.as_bytes(), &[(0, new.len())]).contains("joinRelativeURL")
    );
    let ids = table_test_identifiers(Some(old.as_bytes()), new.as_bytes(), &whole);
    assert!(ids.contains("joinRelativeURL") && ids.contains("describe"), "{ids:?}");
    let call = old.replace("  ];", "    { input: [normalize(\"a\")], out: \"a\" },\n  ];");
    let call_at = call.find("test(t.out").unwrap();
    assert!(
        table_test_identifiers(
            Some(old.as_bytes()),
            call.as_bytes(),
            &[(0, call.len(), true), (call_at, call.len() - 6, true)]
        )
        .is_empty()
    );
    assert!(table_test_identifiers(Some(old.as_bytes()), new.as_bytes(), &[]).is_empty(), "outside any test");
    // The same row in a test function that holds no other test: that test's own data.
    assert!(table_test_identifiers(Some(old.as_bytes()), new.as_bytes(), &[(0, new.len(), true)]).is_empty());
    // A test class holding the row next to its tests (a `parametrize` row above a method).
    let class = [(0, new.len(), false), (test_at, new.len() - 6, true)];
    assert!(table_test_identifiers(Some(old.as_bytes()), new.as_bytes(), &class).is_empty());
}

#[test]
fn line_counts_count_replacements_both_ways() {
    let (a, r) = line_counts(Some(&b"a\nb\nc\n".to_vec()), Some(&b"a\nB\nc\nd\n".to_vec()));
    assert_eq!((a, r), (2, 1));
}

#[test]
fn test_names_of_definition_and_doctest_ids() {
    assert_eq!(test_name("tests/a.py::Tests.test_x@L12"), "test_x");
    assert_eq!(test_name("src/lib.rs::tests.adds"), "adds");
    assert_eq!(test_name("src/lib.rs - Either<L,R>::map"), "map");
    assert_eq!(test_name("src/lib.rs - add"), "add");
    assert_eq!(test_name("src/buf.rs - buf::Buffer<T>::push<U>"), "push");
}

/// servo/rust-smallvec's `benches/bench.rs` and `#[bench]` functions count as no test a
/// commit adds: `cargo test` does not run them, so no gate could see them fail or pass.
#[test]
fn rust_benchmarks_are_no_tests() {
    let f = |bench| DefFact {
        id: "src/lib.rs::benches.push".into(),
        name: "push".into(),
        kind: DefinitionKind::Function,
        is_test: true,
        start_byte: 0,
        end_byte: 0,
        hash: 0,
        doctest: None,
        bench,
    };
    assert!(is_test_function(&f(false)) && !is_test_function(&f(true)));
}

/// A Rust commit whose tests are an inline `#[test]` and a doctest: both count as tests
/// added, with the names they use, and neither as feature code.
#[test]
fn inline_tests_and_doctests_are_tests_of_a_rust_commit() {
    if !crate::recipe::git_available() {
        eprintln!("skipped: no git");
        return;
    }
    let recipe = inline_recipe();
    let dir = tempfile::tempdir().unwrap();
    crate::recipe::build(&recipe, dir.path()).unwrap();
    let repo = Repo::open(dir.path()).unwrap();
    let history = analyze(&repo, "HEAD", None).unwrap();
    let [first, second, third] = &history.commits[..] else { panic!("{} commits", history.commits.len()) };
    assert!(first.tests.added.is_empty(), "{:?}", first.tests);
    assert_eq!(second.tests.added, ["src/lib.rs - Stack<T>::peek", "src/lib.rs::tests.peeks_the_top"]);
    assert!(second.test_identifiers.contains("peek"), "{:?}", second.test_identifiers);
    assert_eq!(
        second.definitions.added,
        ["src/lib.rs::Stack.peek", "src/lib.rs::tests", "src/lib.rs::tests.peeks_the_top"]
    );
    // The feature code of the commit is `peek` alone: the test module is test code.
    let feature: Vec<&String> = second.definitions.added.iter().filter(|id| !second.test_defs.contains(*id)).collect();
    assert_eq!(feature, ["src/lib.rs::Stack.peek"]);
    // A doc-comment-only change: its doctest changed, its code did not.
    assert_eq!(third.tests.modified, ["src/lib.rs - Stack<T>::peek"]);
    assert!(third.definitions.modified.iter().all(|id| !id.ends_with("peek")), "{:?}", third.definitions);
    assert!(third.test_identifiers.contains("is_none"), "{:?}", third.test_identifiers);
}

/// The recipe: a stack; `peek` with a doctest and an inline test; `peek`'s doc comment
/// and doctest rewritten.
fn inline_recipe() -> crate::recipe::Recipe {
    const STACK: &str = "pub struct Stack<T> {\n    items: Vec<T>,\n}\n\nimpl<T> Stack<T> {\n    pub fn new() -> Self {\n        Stack { items: Vec::new() }\n    }\n";
    let peek = |doc: &str, doctest: &str| {
        format!(
            "{STACK}\n    /// {doc}\n    ///\n    /// ```\n    /// {doctest}\n    /// ```\n    pub fn peek(&self) -> Option<&T> {{\n        self.items.last()\n    }}\n}}\n\n\
                 #[cfg(test)]\nmod tests {{\n    use super::*;\n\n    #[test]\n    fn peeks_the_top() {{\n        assert!(Stack::<u8>::new().peek().is_none());\n    }}\n}}\n"
        )
    };
    let commit = |message: &str, files: Vec<(&str, String)>| crate::recipe::RecipeCommit {
        message: message.into(),
        files: files.into_iter().map(|(p, t)| (p.to_string(), t)).collect(),
        delete: vec![],
    };
    let manifest = "[package]\nname = \"stack\"\nversion = \"0.1.0\"\nedition = \"2021\"\n".to_string();
    crate::recipe::Recipe {
        commits: vec![
            commit("stack", vec![("Cargo.toml", manifest), ("src/lib.rs", format!("{STACK}}}\n"))]),
            commit(
                "peek",
                vec![("src/lib.rs", peek("The top item.", "assert_eq!(stack::Stack::<u8>::new().peek(), None);"))],
            ),
            commit(
                "peek docs",
                vec![(
                    "src/lib.rs",
                    peek("The top item, `None` when empty.", "assert!(stack::Stack::<u8>::new().peek().is_none());"),
                )],
            ),
        ],
    }
}
