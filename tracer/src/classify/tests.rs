//! Tests of the driver: entry points, the BFS, errors, what the mask drops, and the golden
//! classification with every rule at once. Each rule's own tests are in its file under
//! `rules/`.

use super::*;
use crate::testutil::{F2P, P2P, base, reasons, run, run_with, set, status, trace};
use carve_languages::index::LoadRole;

#[test]
fn callers_from_test_helpers_module_code_and_external_code_make_entry_points() {
    let index = base().funcs(&["pkg/core.py::a", "pkg/core.py::b", "pkg/core.py::c", "pkg/core.py::d"]).build();
    let t = trace(&[(
        F2P,
        &[],
        &[
            ("tests/test_feat.py::helper", "pkg/core.py::a"),
            ("<module>tests/test_feat.py", "pkg/core.py::b"),
            ("<external>", "pkg/core.py::c"),
            ("pkg/core.py::c", "pkg/core.py::d"),
        ],
    )]);
    let c = run(&index, &t);
    assert_eq!(c.entry_points, ["pkg/core.py::a", "pkg/core.py::b", "pkg/core.py::c"]);
    assert_eq!(reasons(&c, "pkg/core.py::d"), [Reason::Reached { from: "pkg/core.py::c".into() }]);
}

#[test]
fn f2p_tests_and_their_helpers_in_a_file_that_stays_keep_nothing() {
    // The F2P test shares its file with a P2P test, so the file stays; the mask takes the
    // F2P test out, and its helper runs only in it.
    const F2P_KEPT_FILE: &str = "tests/test_base.py::TestFeat::test_feat[1]";
    let index = base()
        .class("tests/test_base.py::TestFeat", 20)
        .func("tests/test_base.py::TestFeat.test_feat", 22)
        .class("pkg/core.py::Shape", 5)
        .funcs(&["tests/test_base.py::feat_helper", "pkg/core.py::feat", "pkg/core.py::deco"])
        .load("tests/test_base.py::TestFeat.test_feat", "pkg/core.py::deco", LoadRole::Decorator)
        .refs("tests/test_base.py::feat_helper", &["pkg/core.py::Shape"])
        .build();
    let t = trace(&[
        (
            F2P_KEPT_FILE,
            &[],
            &[
                (F2P_KEPT_FILE, "pkg/core.py::feat"),
                ("tests/test_base.py::TestFeat.test_feat", "tests/test_base.py::feat_helper"),
                ("tests/test_base.py::feat_helper", "pkg/core.py::Shape"),
                (F2P_KEPT_FILE, "pkg/core.py::deco"),
            ],
        ),
        (P2P, &[P2P], &[]),
    ]);
    let c = run_with(&index, &t, &set(&[F2P_KEPT_FILE]), &set(&[P2P, "tests/test_base.py::test_other"]));
    assert!(c.removed_test_files.is_empty(), "the file stays: {:?}", c.removed_test_files);
    for id in ["pkg/core.py::feat", "pkg/core.py::Shape", "pkg/core.py::deco"] {
        assert_eq!(status(&c, id), Status::Extracted, "{id}: {:?}", c.nodes[id].reasons);
    }

    // A helper a P2P test runs does keep what it names, and a test that stays keeps its
    // decorator.
    let t = trace(&[
        (F2P_KEPT_FILE, &[], &[(F2P_KEPT_FILE, "pkg/core.py::feat"), (F2P_KEPT_FILE, "pkg/core.py::Shape")]),
        (P2P, &["tests/test_base.py::feat_helper"], &[]),
    ]);
    let index = base()
        .class("tests/test_base.py::TestFeat", 20)
        .func("tests/test_base.py::TestFeat.test_feat", 22)
        .class("pkg/core.py::Shape", 5)
        .funcs(&["tests/test_base.py::feat_helper", "pkg/core.py::feat"])
        .load("tests/test_base.py::test_other", "pkg/core.py::feat", LoadRole::Decorator)
        .refs("tests/test_base.py::feat_helper", &["pkg/core.py::Shape"])
        .build();
    let c = run_with(&index, &t, &set(&[F2P_KEPT_FILE]), &set(&[P2P, "tests/test_base.py::test_other"]));
    assert_eq!(
        reasons(&c, "pkg/core.py::Shape")[0],
        Reason::ReferencedBy { by: "tests/test_base.py::feat_helper".into() }
    );
    assert_eq!(reasons(&c, "pkg/core.py::feat")[0], Reason::Decorator { of: "tests/test_base.py::test_other".into() });
}

#[test]
fn bfs_continues_through_remained_code_to_feature_only_callees() {
    let index = base().funcs(&["pkg/core.py::pipeline", "pkg/core.py::feature_branch", "pkg/core.py::leaf"]).build();
    let t = trace(&[
        (
            F2P,
            &[],
            &[
                (F2P, "pkg/core.py::pipeline"),
                ("pkg/core.py::pipeline", "pkg/core.py::feature_branch"),
                ("pkg/core.py::feature_branch", "pkg/core.py::leaf"),
            ],
        ),
        (P2P, &[], &[(P2P, "pkg/core.py::pipeline")]),
    ]);
    let c = run(&index, &t);
    assert_eq!(status(&c, "pkg/core.py::pipeline"), Status::Remained);
    assert_eq!(reasons(&c, "pkg/core.py::feature_branch"), [Reason::Reached { from: "pkg/core.py::pipeline".into() }]);
    assert_eq!(status(&c, "pkg/core.py::leaf"), Status::Extracted);
}

#[test]
fn chosen_entries_narrow_the_search() {
    let index = base().funcs(&["pkg/core.py::a", "pkg/core.py::b"]).build();
    let t = trace(&[(F2P, &[], &[(F2P, "pkg/core.py::a"), (F2P, "pkg/core.py::b")])]);
    let graph = ObjectGraph::build(&index, &t);
    let f2p = set(&[F2P]);
    let c = classify_with_entries(&index, &graph, &t, &f2p, &set(&[]), set(&["pkg/core.py::b"])).unwrap();
    assert_eq!(c.nodes.keys().collect::<Vec<_>>(), ["pkg/core.py::b"]);
    let err = classify_with_entries(&index, &graph, &t, &f2p, &set(&[]), set(&["pkg/core.py::zzz"])).unwrap_err();
    assert!(err.to_string().contains("candidates: pkg/core.py::a, pkg/core.py::b"), "{err}");
}

#[test]
fn errors_name_the_test_and_what_to_do() {
    let index = base().funcs(&["pkg/core.py::a"]).build();
    let t = trace(&[(F2P, &[], &[(F2P, "pkg/core.py::a")]), ("tests/test_feat.py::test_other", &[], &[])]);
    let graph = ObjectGraph::build(&index, &t);
    let missing = set(&["tests/test_feat.py::test_nope"]);
    let err = classify(&index, &graph, &t, &missing, &set(&[])).unwrap_err().to_string();
    assert!(err.contains("test_nope") && err.contains("tests/test_feat.py::test_other"), "{err}");

    let t2 = trace(&[(F2P, &["pkg/core.py::a"], &[])]);
    let err = classify(&index, &ObjectGraph::build(&index, &t2), &t2, &set(&[F2P]), &set(&[])).unwrap_err();
    assert!(matches!(err, ClassifyError::NoEntryPoints { .. }), "{err}");

    let err = classify(&index, &graph, &t, &set(&[F2P]), &set(&[F2P])).unwrap_err();
    assert!(matches!(err, ClassifyError::BothF2pAndP2p { .. }));
    assert!(matches!(classify(&index, &graph, &t, &set(&[]), &set(&[])), Err(ClassifyError::NoF2p)));
    let err = classify(&index, &graph, &t, &set(&[IMPORT_TEST]), &set(&[])).unwrap_err();
    assert!(matches!(err, ClassifyError::ImportIsNotATest));
}

#[test]
fn import_pseudo_test_among_p2p_is_ignored() {
    let index = base().funcs(&["pkg/core.py::feat"]).build();
    let t = trace(&[
        (F2P, &[], &[(F2P, "pkg/core.py::feat")]),
        (IMPORT_TEST, &[], &[("<module>tests/test_feat.py", "pkg/core.py::feat")]),
    ]);
    let c = run_with(&index, &t, &set(&[F2P]), &set(&[IMPORT_TEST]));
    assert_eq!(status(&c, "pkg/core.py::feat"), Status::Extracted);
    assert_eq!(c.p2p_count, 0);
}

#[test]
fn untraced_p2p_tests_are_reported() {
    let index = base().funcs(&["pkg/core.py::a"]).build();
    let t = trace(&[(F2P, &[], &[(F2P, "pkg/core.py::a")])]);
    let c = run(&index, &t);
    assert_eq!(c.p2p_untraced, [P2P, "tests/test_base.py::test_other"]);
    assert_eq!(c.p2p_count, 2);
}

/// A small package with every rule at once; the JSON is the golden classification.
#[test]
fn golden_classification() {
    let index = base()
        .file("pkg/__init__.py", false)
        .funcs(&[
            "pkg/core.py::register",
            "pkg/core.py::load",
            "pkg/core.py::load.parse_line",
            "pkg/core.py::render_csv",
        ])
        .class("pkg/core.py::Table", 50)
        .func("pkg/core.py::Table.__init__", 51)
        .func("pkg/core.py::Table.rows", 54)
        .func("pkg/core.py::Table.to_csv", 57)
        .class("pkg/core.py::CsvDialect", 70)
        .func("pkg/core.py::CsvDialect.quote", 71)
        .func("pkg/core.py::CsvDialect.escape", 74)
        .load("pkg/core.py::render_csv", "pkg/core.py::register", LoadRole::Decorator)
        .export("pkg/__init__.py", "pkg/core.py::Table")
        .build();
    let t = trace(&[
        (
            F2P,
            &[],
            &[
                (F2P, "pkg/core.py::load"),
                ("pkg/core.py::load", "pkg/core.py::load.parse_line"),
                (F2P, "pkg/core.py::Table.__init__"),
                (F2P, "pkg/core.py::Table.to_csv"),
                ("pkg/core.py::Table.to_csv", "pkg/core.py::Table.rows"),
                ("pkg/core.py::Table.to_csv", "pkg/core.py::render_csv"),
                ("pkg/core.py::render_csv", "pkg/core.py::CsvDialect.quote"),
            ],
        ),
        (
            P2P,
            &[],
            &[(P2P, "pkg/core.py::load"), (P2P, "pkg/core.py::Table.__init__"), (P2P, "pkg/core.py::Table.rows")],
        ),
        ("tests/test_base.py::test_other", &["pkg/core.py::load"], &[]),
        (IMPORT_TEST, &[], &[("<module>pkg/core.py", "pkg/core.py::register")]),
    ]);
    let c = run(&index, &t);
    let again = run(&index, &t);
    assert_eq!(c, again);
    insta::assert_json_snapshot!("golden_classification", c);
}

/// The protection policies `sampled:N` and `feature`: a test that stays unprotected keeps
/// nothing it runs, but its file stays in the masked state, so that file's module-level code
/// still keeps what it names (collection time is always protected).
#[test]
fn unprotected_tests_protect_nothing_they_run_but_keep_their_file() {
    const UNPROTECTED: &str = "tests/test_feat.py::test_neighbour";
    let index = base()
        .funcs(&[UNPROTECTED, "pkg/core.py::feat", "pkg/core.py::shared", "pkg/core.py::param"])
        .module_ref("tests/test_feat.py", "pkg/core.py::param", 3)
        .build();
    let t = trace(&[
        (
            F2P,
            &[],
            &[
                (F2P, "pkg/core.py::feat"),
                ("pkg/core.py::feat", "pkg/core.py::shared"),
                ("pkg/core.py::feat", "pkg/core.py::param"),
            ],
        ),
        (UNPROTECTED, &[], &[(UNPROTECTED, "pkg/core.py::shared")]),
    ]);
    let graph = ObjectGraph::build(&index, &t);
    let f2p = set(&[F2P]);
    let entries: BTreeSet<NodeId> = entry_points(&index, &t, &f2p).unwrap().into_keys().collect();
    // Protected, the neighbour keeps `shared`; its file stays either way.
    let protected = classify_with_entries(&index, &graph, &t, &f2p, &set(&[UNPROTECTED]), entries.clone()).unwrap();
    assert_eq!(status(&protected, "pkg/core.py::shared"), Status::Remained);
    let options = ClassifyOptions { unprotected: set(&[UNPROTECTED]), ..ClassifyOptions::default() };
    let c = classify_with(&index, &graph, &t, &f2p, &set(&[]), entries.clone(), &options).unwrap();
    assert_eq!(status(&c, "pkg/core.py::shared"), Status::Extracted);
    assert_eq!(status(&c, "pkg/core.py::feat"), Status::Extracted);
    assert!(c.removed_test_files.is_empty(), "{:?}", c.removed_test_files);
    assert_eq!(
        reasons(&c, "pkg/core.py::param")[0],
        Reason::ModuleLevel { path: "tests/test_feat.py".into(), line: 3 }
    );
    assert_eq!(c.unprotected_count, 1);
    // Without it, the file goes with the F2P test and its module-level code keeps nothing.
    let alone = classify_with(&index, &graph, &t, &f2p, &set(&[]), entries, &ClassifyOptions::default()).unwrap();
    assert_eq!(alone.removed_test_files, ["tests/test_feat.py"]);
    assert_eq!(status(&alone, "pkg/core.py::param"), Status::Extracted);
}
