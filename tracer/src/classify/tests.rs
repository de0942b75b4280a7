//! One test per classification rule, on hand-built indexes and traces.

use super::*;
use crate::testutil::{F2P, P2P, base, reasons, run, run_with, set, status, trace};
use carve_languages::index::LoadRole;

#[test]
fn p2p_hit_remains_and_feature_only_code_is_extracted() {
    let index = base().funcs(&["pkg/core.py::feat", "pkg/core.py::shared"]).build();
    let t = trace(&[
        (F2P, &[], &[(F2P, "pkg/core.py::feat"), ("pkg/core.py::feat", "pkg/core.py::shared")]),
        (P2P, &[], &[(P2P, "pkg/core.py::shared")]),
        ("tests/test_base.py::test_other", &["pkg/core.py::shared"], &[]),
    ]);
    let c = run(&index, &t);
    assert_eq!(c.entry_points, ["pkg/core.py::feat"]);
    assert_eq!(reasons(&c, "pkg/core.py::feat"), [Reason::EntryPoint { test: F2P.into() }]);
    assert_eq!(status(&c, "pkg/core.py::shared"), Status::Remained);
    assert_eq!(
        reasons(&c, "pkg/core.py::shared"),
        [Reason::ExecutedByP2p { test: P2P.into(), others: 1 }, Reason::Reached { from: "pkg/core.py::feat".into() }]
    );
    assert_eq!(
        c.nodes["pkg/core.py::shared"].to_string(),
        format!("remained: executed by P2P test {P2P} (and 1 more); called from pkg/core.py::feat in F2P tests")
    );
    assert_eq!(c.extracted().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["pkg/core.py::feat"]);
    assert_eq!(c.removed_test_files, ["tests/test_feat.py"]);
}

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
fn import_time_code_remains_unless_only_removed_tests_load_it() {
    let index = base()
        .file("pkg/plugins.py", false)
        .funcs(&["pkg/core.py::feat", "pkg/core.py::register", "pkg/core.py::make_data", "pkg/core.py::prep"])
        .class("pkg/core.py::Model", 40)
        .build();
    let t = trace(&[
        (
            F2P,
            &[],
            &[
                (F2P, "pkg/core.py::feat"),
                ("pkg/core.py::feat", "pkg/core.py::register"),
                ("pkg/core.py::feat", "pkg/core.py::make_data"),
                ("pkg/core.py::feat", "pkg/core.py::Model"),
            ],
        ),
        (
            IMPORT_TEST,
            &[],
            &[
                ("<module>pkg/plugins.py", "pkg/core.py::register"),
                // Module-level code of the F2P test file: removed with it.
                ("<module>tests/test_feat.py", "pkg/core.py::make_data"),
                ("pkg/core.py::make_data", "pkg/core.py::prep"),
                // A class body that ran while its module loaded is not "import-time code".
                ("<module>pkg/core.py", "pkg/core.py::Model"),
            ],
        ),
    ]);
    let c = run(&index, &t);
    assert_eq!(status(&c, "pkg/core.py::register"), Status::Remained);
    assert_eq!(reasons(&c, "pkg/core.py::register")[0], Reason::ImportTime);
    assert_eq!(status(&c, "pkg/core.py::make_data"), Status::Extracted);
    assert_eq!(status(&c, "pkg/core.py::Model"), Status::Extracted);
    assert_eq!(status(&c, "pkg/core.py::feat"), Status::Extracted);
}

#[test]
fn import_time_code_called_through_import_time_callers_remains() {
    let index = base().funcs(&["pkg/core.py::feat", "pkg/core.py::setup", "pkg/core.py::inner_setup"]).build();
    let t = trace(&[
        (F2P, &[], &[(F2P, "pkg/core.py::feat"), ("pkg/core.py::feat", "pkg/core.py::inner_setup")]),
        (
            IMPORT_TEST,
            &[],
            &[("<module>pkg/core.py", "pkg/core.py::setup"), ("pkg/core.py::setup", "pkg/core.py::inner_setup")],
        ),
    ]);
    let c = run(&index, &t);
    assert_eq!(reasons(&c, "pkg/core.py::inner_setup")[0], Reason::ImportTime);
}

#[test]
fn decorator_of_kept_code_remains_and_load_needs_propagate() {
    let index = base()
        .funcs(&[
            "pkg/core.py::feat",
            "pkg/core.py::deco",
            "pkg/core.py::DEFAULT_FACTORY",
            "pkg/core.py::kept",
            "pkg/core.py::feat_deco",
        ])
        .load("pkg/core.py::kept", "pkg/core.py::deco", LoadRole::Decorator)
        .load("pkg/core.py::deco", "pkg/core.py::DEFAULT_FACTORY", LoadRole::DefaultOrAnnotation)
        .load("pkg/core.py::feat", "pkg/core.py::feat_deco", LoadRole::Decorator)
        .build();
    let t = trace(&[(
        F2P,
        &[],
        &[
            (F2P, "pkg/core.py::feat"),
            ("pkg/core.py::feat", "pkg/core.py::deco"),
            ("pkg/core.py::deco", "pkg/core.py::DEFAULT_FACTORY"),
            ("pkg/core.py::feat", "pkg/core.py::feat_deco"),
        ],
    )]);
    let c = run(&index, &t);
    assert_eq!(reasons(&c, "pkg/core.py::deco")[0], Reason::Decorator { of: "pkg/core.py::kept".into() });
    assert_eq!(status(&c, "pkg/core.py::deco"), Status::Remained);
    // `deco` stays, so what it needs to load stays too.
    assert_eq!(
        reasons(&c, "pkg/core.py::DEFAULT_FACTORY")[0],
        Reason::DefaultOrAnnotation { of: "pkg/core.py::deco".into() }
    );
    // A decorator only of extracted code goes with it.
    assert_eq!(status(&c, "pkg/core.py::feat_deco"), Status::Extracted);
    assert!(!c.nodes.contains_key("pkg/core.py::kept"), "unreached code is not classified");
}

#[test]
fn base_class_of_kept_class_remains_but_its_feature_methods_go() {
    let index = base()
        .class("pkg/core.py::Base", 10)
        .func("pkg/core.py::Base.run", 11)
        .func("pkg/core.py::Base.feature_step", 13)
        .class("pkg/core.py::Sub", 20)
        .class("pkg/core.py::Feat", 30)
        .func("pkg/core.py::Feat.go", 31)
        .load("pkg/core.py::Sub", "pkg/core.py::Base", LoadRole::BaseClass)
        .load("pkg/core.py::Feat", "pkg/core.py::Base", LoadRole::BaseClass)
        .build();
    let t = trace(&[(
        F2P,
        &[],
        &[
            (F2P, "pkg/core.py::Feat.go"),
            ("pkg/core.py::Feat.go", "pkg/core.py::Base.run"),
            ("pkg/core.py::Base.run", "pkg/core.py::Base.feature_step"),
        ],
    )]);
    let c = run(&index, &t);
    assert_eq!(status(&c, "pkg/core.py::Base"), Status::Remained);
    assert_eq!(
        reasons(&c, "pkg/core.py::Base"),
        [
            Reason::BaseClass { of: "pkg/core.py::Sub".into() },
            Reason::HasReachedMember { member: "pkg/core.py::Base.feature_step".into() }
        ]
    );
    assert_eq!(status(&c, "pkg/core.py::Base.run"), Status::Extracted);
    assert_eq!(status(&c, "pkg/core.py::Base.feature_step"), Status::Extracted);
    assert_eq!(status(&c, "pkg/core.py::Feat"), Status::Extracted);
    assert_eq!(status(&c, "pkg/core.py::Feat.go"), Status::Extracted);
}

#[test]
fn module_level_uses_keep_definitions_but_all_and_removed_test_files_do_not() {
    let index = base()
        .file("pkg/__init__.py", false)
        .funcs(&["pkg/core.py::feat", "pkg/core.py::handler", "pkg/core.py::api", "pkg/core.py::only_tests_use"])
        .module_ref("pkg/core.py", "pkg/core.py::handler", 40)
        .export("pkg/__init__.py", "pkg/core.py::api")
        .module_ref("tests/test_feat.py", "pkg/core.py::only_tests_use", 3)
        .build();
    let t = trace(&[(
        F2P,
        &[],
        &[
            (F2P, "pkg/core.py::feat"),
            (F2P, "pkg/core.py::handler"),
            (F2P, "pkg/core.py::api"),
            (F2P, "pkg/core.py::only_tests_use"),
        ],
    )]);
    let c = run(&index, &t);
    assert_eq!(reasons(&c, "pkg/core.py::handler")[0], Reason::ModuleLevel { path: "pkg/core.py".into(), line: 40 });
    // Listed in `__all__` only: the mask takes it out of the list, so it goes.
    assert_eq!(status(&c, "pkg/core.py::api"), Status::Extracted);
    assert_eq!(status(&c, "pkg/core.py::only_tests_use"), Status::Extracted);
    assert_eq!(status(&c, "pkg/core.py::feat"), Status::Extracted);
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
fn a_class_with_methods_of_two_features_remains_and_loses_only_the_feature_method() {
    let index = base()
        .class("pkg/core.py::Report", 10)
        .func("pkg/core.py::Report.__init__", 11)
        .func("pkg/core.py::Report.to_csv", 14)
        .func("pkg/core.py::Report.to_json", 17)
        .func("pkg/core.py::Report.never_run", 20)
        .build();
    let t = trace(&[
        (F2P, &[], &[(F2P, "pkg/core.py::Report.__init__"), (F2P, "pkg/core.py::Report.to_csv")]),
        (P2P, &[], &[(P2P, "pkg/core.py::Report.__init__"), (P2P, "pkg/core.py::Report.to_json")]),
    ]);
    let c = run(&index, &t);
    assert_eq!(status(&c, "pkg/core.py::Report.to_csv"), Status::Extracted);
    assert_eq!(status(&c, "pkg/core.py::Report.__init__"), Status::Remained);
    assert_eq!(status(&c, "pkg/core.py::Report"), Status::Remained);
    assert_eq!(
        reasons(&c, "pkg/core.py::Report")[0],
        Reason::HasRemainedMember { member: "pkg/core.py::Report.__init__".into(), others: 1 }
    );
    assert!(!c.nodes.contains_key("pkg/core.py::Report.to_json"));
    // Unreached members of a class that stays are not the feature's: they stay, unlisted.
    assert!(!c.nodes.contains_key("pkg/core.py::Report.never_run"));
}

#[test]
fn a_feature_class_goes_whole_with_its_unreached_methods() {
    let index = base()
        .class("pkg/core.py::Exporter", 10)
        .func("pkg/core.py::Exporter.__init__", 11)
        .func("pkg/core.py::Exporter.export", 14)
        .func("pkg/core.py::Exporter.unused", 17)
        .build();
    let t = trace(&[(F2P, &[], &[(F2P, "pkg/core.py::Exporter.__init__"), (F2P, "pkg/core.py::Exporter.export")])]);
    let c = run(&index, &t);
    assert_eq!(status(&c, "pkg/core.py::Exporter"), Status::Extracted);
    assert_eq!(
        reasons(&c, "pkg/core.py::Exporter"),
        [Reason::HasReachedMember { member: "pkg/core.py::Exporter.__init__".into() }]
    );
    assert_eq!(
        reasons(&c, "pkg/core.py::Exporter.unused"),
        [Reason::MemberOfExtracted { class: "pkg/core.py::Exporter".into() }]
    );
    assert_eq!(
        reasons(&c, "pkg/core.py::Exporter.export"),
        [Reason::EntryPoint { test: F2P.into() }, Reason::MemberOfExtracted { class: "pkg/core.py::Exporter".into() }]
    );
}

#[test]
fn an_implementation_for_a_type_that_stays_remains_unless_its_interface_goes() {
    // Rust: `impl Shape for Circle` (Circle stays: a P2P test builds one) whose one method
    // only the F2P test runs; `total` (kept, run by a P2P test) names `Shape` (`&dyn
    // Shape`). The impl stays with its type — the method is stubbed — naming `total`.
    // `impl Feat for Circle` implements a trait only the F2P test reaches: both go.
    let index = base()
        .class("pkg/core.py::Shape", 10)
        .func("pkg/core.py::Shape.area", 11)
        .class("pkg/core.py::Feat", 14)
        .func("pkg/core.py::Feat.helper", 15)
        .class("pkg/core.py::Circle", 20)
        .func("pkg/core.py::Circle.new", 21)
        .class("pkg/core.py::Circle.<Shape>", 30)
        .func("pkg/core.py::Circle.<Shape>.area", 31)
        .class("pkg/core.py::Circle.<Feat>", 40)
        .func("pkg/core.py::Circle.<Feat>.go", 41)
        .class("pkg/core.py::Circle.<Display>", 50)
        .func("pkg/core.py::Circle.<Display>.fmt", 51)
        .funcs(&["pkg/core.py::total"])
        .refs("pkg/core.py::total", &["pkg/core.py::Shape"])
        .load("pkg/core.py::Circle.<Shape>", "pkg/core.py::Shape", LoadRole::BaseClass)
        .load("pkg/core.py::Circle.<Shape>", "pkg/core.py::Circle", LoadRole::Implementation)
        .load("pkg/core.py::Circle.<Feat>", "pkg/core.py::Feat", LoadRole::BaseClass)
        .load("pkg/core.py::Circle.<Feat>", "pkg/core.py::Circle", LoadRole::Implementation)
        .load("pkg/core.py::Circle.<Display>", "pkg/core.py::Circle", LoadRole::Implementation)
        .build();
    let t = trace(&[
        (
            F2P,
            &[],
            &[
                (F2P, "pkg/core.py::Circle.<Shape>.area"),
                (F2P, "pkg/core.py::Circle.<Feat>.go"),
                ("pkg/core.py::Circle.<Feat>.go", "pkg/core.py::Feat.helper"),
                (F2P, "pkg/core.py::Circle.<Display>.fmt"),
            ],
        ),
        (P2P, &[], &[(P2P, "pkg/core.py::Circle.new"), (P2P, "pkg/core.py::total")]),
    ]);
    let c = run(&index, &t);
    assert_eq!(
        reasons(&c, "pkg/core.py::Circle.<Shape>"),
        [
            Reason::Implementation {
                interface: "Shape".into(),
                of: "pkg/core.py::Circle".into(),
                by: Some("pkg/core.py::total".into())
            },
            Reason::HasReachedMember { member: "pkg/core.py::Circle.<Shape>.area".into() }
        ],
        "{:#?}",
        c.nodes
    );
    assert_eq!(
        c.nodes["pkg/core.py::Circle.<Shape>"].reasons[0].to_string(),
        "implementation of `Shape` for pkg/core.py::Circle, which stays; required by pkg/core.py::total, which names `Shape` and stays"
    );
    assert_eq!(status(&c, "pkg/core.py::Circle.<Shape>.area"), Status::Extracted);
    // An interface of no definition of the index (`Display`): named by the block's own name.
    assert_eq!(
        c.nodes["pkg/core.py::Circle.<Display>"].reasons[0].to_string(),
        "implementation of `Display` for pkg/core.py::Circle, which stays (used where no path names it: `dyn` \
         coercions, generic bounds, formatting)"
    );
    assert_eq!(status(&c, "pkg/core.py::Circle.<Display>.fmt"), Status::Extracted);
    for gone in ["pkg/core.py::Feat", "pkg/core.py::Circle.<Feat>", "pkg/core.py::Circle.<Feat>.go"] {
        assert_eq!(status(&c, gone), Status::Extracted, "{gone}: {:#?}", c.nodes[gone]);
    }
    assert_eq!(c.status("pkg/core.py::Shape"), None, "the interface that stays is not reached");
}

#[test]
fn a_class_named_by_code_that_stays_and_runs_remains() {
    let index = base()
        .class("pkg/core.py::Csv", 10)
        .func("pkg/core.py::Csv.__init__", 11)
        .funcs(&["pkg/core.py::dispatch", "pkg/core.py::dead"])
        .refs("pkg/core.py::dispatch", &["pkg/core.py::Csv"])
        .build();
    let t = trace(&[(F2P, &[], &[(F2P, "pkg/core.py::Csv.__init__")]), (P2P, &[], &[(P2P, "pkg/core.py::dispatch")])]);
    let c = run(&index, &t);
    assert_eq!(reasons(&c, "pkg/core.py::Csv")[0], Reason::ReferencedBy { by: "pkg/core.py::dispatch".into() });
    assert_eq!(status(&c, "pkg/core.py::Csv.__init__"), Status::Extracted);

    // Named only by kept code that never runs: the class goes.
    let index = base()
        .class("pkg/core.py::Csv", 10)
        .func("pkg/core.py::Csv.__init__", 11)
        .funcs(&["pkg/core.py::dead"])
        .refs("pkg/core.py::dead", &["pkg/core.py::Csv"])
        .build();
    let c = run(&index, &trace(&[(F2P, &[], &[(F2P, "pkg/core.py::Csv.__init__")])]));
    assert_eq!(status(&c, "pkg/core.py::Csv"), Status::Extracted);
}

#[test]
fn a_helper_shared_between_features_remains_for_each_feature() {
    const F2P_B: &str = "tests/test_b.py::test_b";
    let index = base()
        .file("tests/test_b.py", true)
        .funcs(&[F2P_B, "pkg/core.py::feat_a", "pkg/core.py::feat_b", "pkg/core.py::shared_helper"])
        .build();
    let t = trace(&[
        (F2P, &[], &[(F2P, "pkg/core.py::feat_a"), ("pkg/core.py::feat_a", "pkg/core.py::shared_helper")]),
        (F2P_B, &[], &[(F2P_B, "pkg/core.py::feat_b"), ("pkg/core.py::feat_b", "pkg/core.py::shared_helper")]),
        (P2P, &[], &[]),
    ]);
    let a = run_with(&index, &t, &set(&[F2P]), &set(&[P2P, F2P_B]));
    assert_eq!(status(&a, "pkg/core.py::feat_a"), Status::Extracted);
    assert_eq!(reasons(&a, "pkg/core.py::shared_helper")[0], Reason::ExecutedByP2p { test: F2P_B.into(), others: 0 });
    let b = run_with(&index, &t, &set(&[F2P_B]), &set(&[P2P, F2P]));
    assert_eq!(status(&b, "pkg/core.py::feat_b"), Status::Extracted);
    assert_eq!(status(&b, "pkg/core.py::shared_helper"), Status::Remained);
    // Both features together: the helper is theirs alone.
    let both = run_with(&index, &t, &set(&[F2P, F2P_B]), &set(&[P2P]));
    assert_eq!(status(&both, "pkg/core.py::shared_helper"), Status::Extracted);
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
fn nested_functions_follow_their_parent() {
    let index = base()
        .funcs(&[
            "pkg/core.py::feat",
            "pkg/core.py::feat.unreached_inner",
            "pkg/core.py::shared",
            "pkg/core.py::shared.inner",
        ])
        .build();
    let t = trace(&[
        (
            F2P,
            &[],
            &[
                (F2P, "pkg/core.py::feat"),
                (F2P, "pkg/core.py::shared"),
                ("pkg/core.py::shared", "pkg/core.py::shared.inner"),
            ],
        ),
        (P2P, &[], &[(P2P, "pkg/core.py::shared")]),
    ]);
    let c = run(&index, &t);
    assert_eq!(
        reasons(&c, "pkg/core.py::feat.unreached_inner"),
        [Reason::ParentExtracted { parent: "pkg/core.py::feat".into() }]
    );
    // Only the F2P path runs `inner`, but it lives in the body of `shared`, which stays.
    assert_eq!(status(&c, "pkg/core.py::shared.inner"), Status::Remained);
    assert_eq!(
        reasons(&c, "pkg/core.py::shared.inner")[0],
        Reason::ParentRemained { parent: "pkg/core.py::shared".into() }
    );
}

#[test]
fn a_method_declared_apart_from_its_type_does_not_stay_with_it() {
    // Go: `type Collection []*Version` (not class-like) and its methods, declared after it;
    // only F2P tests run `Len`, so it goes although the type stays. A function written
    // inside the type's text would stay with it.
    let index = base()
        .type_alias("pkg/core.py::Collection", 10)
        .bytes("pkg/core.py::Collection", 100, 130)
        .func("pkg/core.py::Collection.Len", 12)
        .bytes("pkg/core.py::Collection.Len", 140, 180)
        .func("pkg/core.py::Collection.inside", 11)
        .bytes("pkg/core.py::Collection.inside", 110, 125)
        .build();
    let t = trace(&[(F2P, &[], &[(F2P, "pkg/core.py::Collection.Len"), (F2P, "pkg/core.py::Collection.inside")])]);
    let c = run(&index, &t);
    assert_eq!(status(&c, "pkg/core.py::Collection.Len"), Status::Extracted, "{:#?}", c.nodes);
    assert_eq!(
        reasons(&c, "pkg/core.py::Collection.inside"),
        [Reason::ParentRemained { parent: "pkg/core.py::Collection".into() }, Reason::EntryPoint { test: F2P.into() }]
    );
}

#[test]
fn a_kept_nested_function_keeps_its_parent() {
    let index = base().funcs(&["pkg/core.py::factory", "pkg/core.py::factory.made"]).build();
    let t = trace(&[
        (F2P, &[], &[(F2P, "pkg/core.py::factory"), ("pkg/core.py::factory", "pkg/core.py::factory.made")]),
        (P2P, &["pkg/core.py::factory.made"], &[]),
    ]);
    let c = run(&index, &t);
    assert_eq!(status(&c, "pkg/core.py::factory.made"), Status::Remained);
    assert_eq!(
        reasons(&c, "pkg/core.py::factory")[0],
        Reason::HasRemainedMember { member: "pkg/core.py::factory.made".into(), others: 0 }
    );
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

/// A value binding (`peekn = curry(peekn)`, `mode = _Prop(_calc_mode)`, a dict entry) keeps
/// what it names only while code that stays and runs names what it binds; the mask deletes
/// it with them otherwise.
#[test]
fn value_bindings_keep_what_they_name_only_when_what_they_bind_is_used() {
    let index = base()
        .file("pkg/curried.py", false)
        .class("pkg/core.py::Stats", 40)
        .funcs(&[
            "pkg/core.py::peekn",
            "pkg/core.py::used",
            "pkg/core.py::Stats._calc_mode",
            "pkg/core.py::Stats.mean",
            "pkg/core.py::handler",
            "pkg/core.py::reader",
            "pkg/core.py::idle",
        ])
        .binding("pkg/curried.py", None, "peekn", false, &["pkg/core.py::peekn"], &["tests/test_feat.py::helper"])
        .binding("pkg/curried.py", None, "used", false, &["pkg/core.py::used"], &["pkg/core.py::reader"])
        .binding(
            "pkg/core.py",
            Some("pkg/core.py::Stats"),
            "mode",
            false,
            &["pkg/core.py::Stats._calc_mode"],
            &["pkg/core.py::idle"],
        )
        .binding("pkg/core.py", Some("pkg/core.py::Stats"), "table", true, &["pkg/core.py::handler"], &[])
        .build();
    let feat = ["pkg/core.py::peekn", "pkg/core.py::used", "pkg/core.py::Stats._calc_mode", "pkg/core.py::handler"];
    let edges: Vec<(&str, &str)> = feat.iter().map(|f| (F2P, *f)).collect();
    let t = trace(&[
        (F2P, &[], &edges),
        (P2P, &["pkg/core.py::reader", "pkg/core.py::Stats.mean"], &[]),
        ("tests/test_base.py::test_other", &[], &[]),
    ]);
    let c = run(&index, &t);
    assert_eq!(status(&c, "pkg/core.py::Stats"), Status::Remained);
    // Named only by a test helper of the removed F2P file, by a function no P2P test runs,
    // or an entry: extracted, the binding goes with it.
    for id in ["pkg/core.py::peekn", "pkg/core.py::Stats._calc_mode", "pkg/core.py::handler"] {
        assert_eq!(status(&c, id), Status::Extracted, "{id}: {:?}", reasons(&c, id));
    }
    // `used` is read by `reader`, which a P2P test runs: its binding stays, and so does it.
    assert_eq!(status(&c, "pkg/core.py::used"), Status::Remained);
    assert_eq!(reasons(&c, "pkg/core.py::used")[0], Reason::ModuleLevel { path: "pkg/curried.py".into(), line: 101 });

    // A P2P test that runs the reader of `mode` keeps `_calc_mode` by the class body.
    let t = trace(&[
        (F2P, &[], &edges),
        (P2P, &["pkg/core.py::reader", "pkg/core.py::idle", "pkg/core.py::Stats.mean"], &[]),
        ("tests/test_base.py::test_other", &[], &[]),
    ]);
    let c = run(&index, &t);
    assert_eq!(reasons(&c, "pkg/core.py::Stats._calc_mode")[0], Reason::ClassBody { of: "pkg/core.py::Stats".into() });
}

/// `core.check` is run by one P2P test, only through `core.decode`'s statement
/// `check(x)` (its value discarded), and by both F2P tests: it is extracted and the
/// statement is recorded for the mask. Run by as many P2P tests as F2P tests, or named by
/// `core.other` in another way, it stays.
#[test]
fn a_definition_p2p_tests_run_only_through_a_discarded_call_is_extracted_with_the_call() {
    use carve_languages::index::{DiscardedCall, Span};
    const F2P_2: &str = "tests/test_feat.py::test_feat_2";
    let build = |other_names_it: bool| {
        let mut index = base()
            .funcs(&[F2P_2, "pkg/core.py::decode", "pkg/core.py::check", "pkg/core.py::other"])
            .refs("pkg/core.py::decode", &["pkg/core.py::check"])
            .build();
        if other_names_it {
            index.definitions.get_mut("pkg/core.py::other").unwrap().references.push("pkg/core.py::check".into());
        }
        let span = Span { start_byte: 10, end_byte: 18, start_line: 7, end_line: 7 };
        index.files.get_mut("pkg/core.py").unwrap().discarded_calls.push(DiscardedCall {
            caller: "pkg/core.py::decode".into(),
            target: Some("pkg/core.py::check".into()),
            name: "check".into(),
            span,
            tested: false,
            names: Vec::new(),
        });
        index
    };
    let f2p_edges: &[(&str, &str)] = &[(F2P, "pkg/core.py::decode"), ("pkg/core.py::decode", "pkg/core.py::check")];
    let p2p_edges: &[(&str, &str)] = &[(P2P, "pkg/core.py::decode"), ("pkg/core.py::decode", "pkg/core.py::check")];
    let t = trace(&[
        (F2P, &[], f2p_edges),
        (F2P_2, &[], &[(F2P_2, "pkg/core.py::decode"), ("pkg/core.py::decode", "pkg/core.py::check")]),
        (P2P, &[], p2p_edges),
        ("tests/test_base.py::test_other", &[], &[("tests/test_base.py::test_other", "pkg/core.py::decode")]),
    ]);
    let f2p = set(&[F2P, F2P_2]);
    let p2p = set(&[P2P, "tests/test_base.py::test_other"]);
    let c = run_with(&build(false), &t, &f2p, &p2p);
    assert_eq!(status(&c, "pkg/core.py::decode"), Status::Remained);
    assert_eq!(status(&c, "pkg/core.py::check"), Status::Extracted, "{:#?}", c.nodes);
    assert!(reasons(&c, "pkg/core.py::check").contains(&Reason::P2pOnlyThroughRemoved {
        test: P2P.into(),
        calls: vec!["pkg/core.py::decode".into()],
        extracted_callers: vec![],
    }));
    assert_eq!(c.removed_calls.len(), 1);
    assert_eq!((c.removed_calls[0].caller.as_str(), c.removed_calls[0].line), ("pkg/core.py::decode", 7));
    assert_eq!(c.call_statements_to_remove()["pkg/core.py"].len(), 1);

    // Named otherwise by code that stays: kept.
    let c = run_with(&build(true), &t, &f2p, &p2p);
    assert_eq!(status(&c, "pkg/core.py::check"), Status::Remained);
    assert!(c.removed_calls.is_empty());

    // Run by as many P2P tests as F2P tests: shared code, kept.
    let t = trace(&[(F2P, &[], f2p_edges), (F2P_2, &[], &[(F2P_2, "pkg/core.py::decode")]), (P2P, &[], p2p_edges)]);
    let c = run_with(&build(false), &t, &f2p, &p2p);
    assert_eq!(status(&c, "pkg/core.py::check"), Status::Remained);
}

/// pyjwt's key-length check: `decode` holds `msg = alg.check(key)` then `if msg: …` (a tested
/// call on an object the index does not resolve). The F2P tests run the `Hmac` override
/// (an entry point: they call it themselves too) and P2P tests run it through `decode`; P2P
/// tests run the base `Algo.check` the other algorithms inherit, more often than F2P tests. The statement goes with the override, so nothing that stays calls
/// the base either: it is extracted too, although no F2P test reaches it. Named by other code
/// that stays, it is left alone (not reached, so not classified).
#[test]
fn a_base_method_called_only_in_statements_deleted_with_the_feature_is_extracted() {
    use carve_languages::index::{DiscardedCall, Span};
    const ALGO: &str = "pkg/core.py::Algo.check";
    const HMAC: &str = "pkg/core.py::Hmac.check";
    let build = |other_names_it: bool| {
        let mut index = base()
            .class("pkg/core.py::Algo", 40)
            .func(ALGO, 41)
            .class("pkg/core.py::Hmac", 50)
            .func(HMAC, 51)
            .funcs(&["pkg/core.py::decode", "pkg/core.py::other"])
            .build();
        if other_names_it {
            index.definitions.get_mut("pkg/core.py::other").unwrap().references.push(ALGO.into());
        }
        let span = Span { start_byte: 10, end_byte: 40, start_line: 7, end_line: 8 };
        index.files.get_mut("pkg/core.py").unwrap().discarded_calls.push(DiscardedCall {
            caller: "pkg/core.py::decode".into(),
            target: None,
            name: "check".into(),
            span,
            tested: true,
            names: Vec::new(),
        });
        index
    };
    // The F2P tests call the override themselves and through `decode`; P2P tests run both
    // through `decode` (HMAC keys long enough, other algorithms).
    let t = trace(&[
        (F2P, &[], &[(F2P, HMAC), (F2P, "pkg/core.py::decode"), ("pkg/core.py::decode", HMAC)]),
        (P2P, &[], &[(P2P, "pkg/core.py::decode"), ("pkg/core.py::decode", ALGO), ("pkg/core.py::decode", HMAC)]),
        (
            "tests/test_base.py::test_other",
            &[],
            &[("tests/test_base.py::test_other", "pkg/core.py::decode"), ("pkg/core.py::decode", ALGO)],
        ),
    ]);
    let c = run(&build(false), &t);
    assert_eq!(status(&c, "pkg/core.py::decode"), Status::Remained);
    assert_eq!(status(&c, HMAC), Status::Extracted, "{:#?}", c.nodes);
    assert_eq!(status(&c, ALGO), Status::Extracted, "{:#?}", c.nodes);
    assert!(reasons(&c, ALGO).contains(&Reason::CalledOnlyWithFeature { with: HMAC.into() }));
    // The base class is not the feature: only its method goes.
    assert_eq!(c.status("pkg/core.py::Algo"), None);
    // One statement, recorded for both callees, deleted once.
    let targets: Vec<(&str, usize)> = c.removed_calls.iter().map(|r| (r.target.as_str(), r.line)).collect();
    assert_eq!(targets, [(ALGO, 7), (HMAC, 7)]);
    assert_eq!(c.call_statements_to_remove()["pkg/core.py"].len(), 1);

    // Named otherwise by code that stays: the base stays, the override still goes.
    let c = run(&build(true), &t);
    assert_eq!(c.status(ALGO), None, "{:#?}", c.nodes);
    assert_eq!(status(&c, HMAC), Status::Extracted);
}

/// A warning class only the feature raises (no test runs it) goes with the feature; a
/// test-configuration line naming it keeps it only when the mask cannot take that line out
/// alone (`removable`: a lone list entry, deleted with it like an `__all__` entry).
#[test]
fn a_configuration_line_keeps_a_definition_only_when_it_cannot_go_with_it() {
    use carve_languages::index::ConfigReference;
    let build = |removable: bool| {
        let mut index = base()
            .class("pkg/core.py::KeyWarning", 40)
            .funcs(&["pkg/core.py::feat"])
            .refs("pkg/core.py::feat", &["pkg/core.py::KeyWarning"])
            .build();
        index.config_references = vec![ConfigReference {
            path: "pyproject.toml".into(),
            line: 4,
            target: "pkg/core.py::KeyWarning".into(),
            removable,
        }];
        index
    };
    let t = trace(&[(F2P, &[], &[(F2P, "pkg/core.py::feat")]), (P2P, &[], &[])]);
    let c = run(&build(true), &t);
    assert_eq!(status(&c, "pkg/core.py::KeyWarning"), Status::Extracted, "{:#?}", c.nodes);
    assert_eq!(reasons(&c, "pkg/core.py::KeyWarning"), [Reason::NamedOnlyByFeature { by: "pkg/core.py::feat".into() }]);
    let c = run(&build(false), &t);
    assert_eq!(c.status("pkg/core.py::KeyWarning"), None, "{:#?}", c.nodes);
}
