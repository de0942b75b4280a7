//! Rust Level 2 tests over the geometry fixture: the package's import path, the reference
//! crate's text, and the rewritten integration tests.

use std::collections::BTreeSet;

use super::*;
use crate::index::NodeId;
use crate::rust::index::tests_support::{fixture_index, fixture_root};

fn ids(ids: &[&str]) -> BTreeSet<NodeId> {
    ids.iter().map(|s| s.to_string()).collect()
}

fn reference_of(extracted: &BTreeSet<NodeId>) -> Result<String, String> {
    let index = fixture_index();
    let sources = Level2Sources { root: &fixture_root(), index: &index, extracted, names: &[], package: "agent_code" };
    RustLevel2.reference(&sources)
}

#[test]
fn the_package_is_a_crate_at_the_repository_root() {
    let index = fixture_index();
    assert_eq!(RustLevel2.package_import(&fixture_root(), &index, "agent_code").unwrap(), "agent_code");
    assert_eq!(RustLevel2.init_file("agent_code"), "agent_code/src/lib.rs");
    assert_eq!(RustLevel2.import_line("agent_code", "names"), "use agent_code::names;");
    let describe = RustLevel2.describe("agent_code");
    assert!(describe.contains("(`path = \"..\"`)"), "{describe}");
    assert!(describe.contains("[dev-dependencies]"), "{describe}");
}

/// The catalog's functions use a private `static` and a private helper, which are copied,
/// and public types and a public helper, which are imported from the crate.
#[test]
fn reference_copies_private_items_and_imports_public_ones() {
    let text = reference_of(&ids(&["src/catalog.rs::names", "src/catalog.rs::unit"])).unwrap();
    assert!(crate::parse_errors(Language::Rust, &text).is_empty(), "{text}");
    insta::assert_snapshot!(text);
}

/// Methods of types that stay bring their types whole, with every impl; the crate's
/// `macro_rules!` macro the copied code invokes is copied first.
#[test]
fn a_method_of_a_type_that_stays_brings_its_whole_type() {
    let extracted = ids(&["src/shapes.rs::Rect.is_square", "src/shapes.rs::Rect.<Shape>.perimeter"]);
    let text = reference_of(&extracted).unwrap();
    assert!(crate::parse_errors(Language::Rust, &text).is_empty(), "{text}");
    insta::assert_snapshot!(text);
    let index = fixture_index();
    let moved = moved_names(&fixture_root(), &index, &extracted, "geometry");
    assert_eq!(moved, ["Rect".to_string()].into(), "the type is what the tests take from the package");
}

#[test]
fn an_integration_test_takes_the_moved_items_from_the_package() {
    let index = fixture_index();
    let extracted = ids(&["src/catalog.rs::names", "src/report.rs::summarize", "src/report.rs::Report.len"]);
    for path in ["tests/catalog.rs", "tests/integration.rs"] {
        let source = std::fs::read_to_string(fixture_root().join(path)).unwrap();
        let file = &index.files[path];
        let edits = RustLevel2.rewrite_test_imports(&fixture_root(), &source, file, &index, &extracted, "agent_code");
        let out = crate::edit::apply(&source, &edits).unwrap();
        assert!(crate::parse_errors(Language::Rust, &out).is_empty(), "{out}");
        insta::assert_snapshot!(path.replace('/', "_"), out);
    }
}

#[test]
fn paths_in_code_and_macro_arguments_are_rewritten() {
    let moved: BTreeSet<String> = ["names".to_string(), "Report".to_string(), "u128".to_string()].into();
    let source = "use geometry::*;\n#[test]\nfn t() {\n    let r = geometry::report::Report::new();\n    assert_eq!(geometry::catalog::names(), geometry::units::convert(1.0));\n    assert!(geometry::u128(..9) < 9);\n}\n";
    let out = crate::edit::apply(source, &rewrite_test(source, "geometry", "agent_code", &moved)).unwrap();
    assert_eq!(
        out,
        "use geometry::*;\nuse agent_code::{Report, names, u128};\n#[test]\nfn t() {\n    let r = agent_code::Report::new();\n    assert_eq!(agent_code::names(), geometry::units::convert(1.0));\n    assert!(agent_code::u128(..9) < 9);\n}\n"
    );
}

#[test]
fn inline_tests_and_doctests_have_no_level2_task() {
    let integration = [("catalog::names_are_sorted".to_string(), "tests/catalog.rs".to_string())];
    assert_eq!(RustLevel2.tests_blocker(&fixture_index(), &integration), None);
    let inline = [
        ("catalog::names_are_sorted".to_string(), "tests/catalog.rs".to_string()),
        ("geometry::shapes::tests::rect_square".to_string(), "src/shapes.rs".to_string()),
    ];
    let reason = RustLevel2.tests_blocker(&fixture_index(), &inline).unwrap();
    assert!(
        reason.contains("`geometry::shapes::tests::rect_square` is in a `#[cfg(test)]` module of src/shapes.rs"),
        "{reason}"
    );
    assert!(!reason.contains("names_are_sorted"), "{reason}");
    let doctest = [("geometry::doctest::src/lib.rs - version (line 3)".to_string(), "src/lib.rs".to_string())];
    assert!(RustLevel2.tests_blocker(&fixture_index(), &doctest).unwrap().contains("is a doctest"));
}

#[test]
fn a_feature_outside_the_root_library_is_refused() {
    let err = reference_of(&ids(&["tests/catalog.rs::names_are_sorted"])).unwrap_err();
    assert!(err.contains("no items in the library crate"), "{err}");
}

/// A small crate of its own: paths into the crate, inline modules, narrow visibilities, an
/// impl of the crate's trait for a foreign type.
fn small_crate() -> tempfile::TempDir {
    carve_testutil::temp_tree(&[
        ("Cargo.toml", "[package]\nname = \"small-crate\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        (
            "src/lib.rs",
            "pub mod text;\nmod inner {\n    pub(super) fn twice(x: u32) -> u32 {\n        x * 2\n    }\n}\n\n/// Something with a size.\npub trait Sized2 {\n    fn size(&self) -> usize;\n}\n\nimpl Sized2 for Vec<u8> {\n    fn size(&self) -> usize {\n        self.len()\n    }\n}\n",
        ),
        (
            "src/text.rs",
            "use crate::inner;\n\n/// Shouts.\npub fn shout(s: &str) -> String {\n    format!(\"{}{}\", s.to_uppercase(), \"!\".repeat(inner::twice(1) as usize))\n}\n\npub fn width(s: &str) -> usize {\n    crate::text::helper(s)\n}\n\nfn helper(s: &str) -> usize {\n    s.len()\n}\n",
        ),
        (
            "tests/text.rs",
            "use small_crate::text::shout;\n\n#[test]\nfn shouts() {\n    assert_eq!(shout(\"a\"), \"A!!\");\n}\n",
        ),
    ])
}

fn small_reference(extracted: &[&str]) -> Result<String, String> {
    let dir = small_crate();
    let index = crate::index::DefinitionIndex::build(dir.path(), &crate::index::IndexOptions::default()).unwrap();
    assert_eq!(root_crate_name(dir.path(), &index).unwrap(), "small_crate");
    let extracted = ids(extracted);
    let sources =
        Level2Sources { root: dir.path(), index: &index, extracted: &extracted, names: &[], package: "agent_code" };
    RustLevel2.reference(&sources)
}

/// `inner::twice` (a private module's function, `pub(super)`) is copied with a visibility
/// that means something at a crate root; `crate::text::helper` becomes the copy's name.
#[test]
fn paths_into_the_crate_become_the_copies_or_the_crate_s_public_paths() {
    let text = small_reference(&["src/text.rs::shout", "src/text.rs::width"]).unwrap();
    assert!(crate::parse_errors(Language::Rust, &text).is_empty(), "{text}");
    assert!(
        text.contains("pub(crate) fn twice(x: u32) -> u32 {\n    x * 2\n}"),
        "dedented, visibility widened: {text}"
    );
    assert!(text.contains("    helper(s)\n"), "{text}");
    assert!(text.contains("fn helper(s: &str) -> usize"), "{text}");
    assert!(!text.contains("crate::"), "{text}");
}

/// A method of the crate's trait implemented for a foreign type brings the trait, with its
/// impls.
#[test]
fn an_impl_for_a_foreign_type_brings_its_trait() {
    let text = small_reference(&["src/lib.rs::Vec.<Sized2>.size"]).unwrap();
    assert!(text.contains("pub trait Sized2 {") && text.contains("impl Sized2 for Vec<u8> {"), "{text}");
}

/// An impl of a trait the module imports (`use self::sealed::Keys;`) for `()`: the trait is
/// the crate's, through the `use`.
#[test]
fn a_trait_named_through_a_use_is_the_crate_s() {
    let dir = carve_testutil::temp_tree(&[
        ("Cargo.toml", "[package]\nname = \"sealed\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        (
            "src/lib.rs",
            "use self::sealed::Keys;\n\nmod sealed {\n    pub trait Keys {\n        fn keys(&self) -> usize;\n    }\n}\n\nimpl Keys for () {\n    fn keys(&self) -> usize {\n        0\n    }\n}\n",
        ),
        ("tests/keys.rs", "use sealed::Keys;\n\n#[test]\nfn none() {}\n"),
    ]);
    let index = crate::index::DefinitionIndex::build(dir.path(), &crate::index::IndexOptions::default()).unwrap();
    let extracted: BTreeSet<NodeId> = index.files["src/lib.rs"]
        .definitions
        .iter()
        .filter(|id| id.ends_with(".keys") && id.starts_with("src/lib.rs::()"))
        .cloned()
        .collect();
    assert_eq!(extracted.len(), 1, "{:?}", index.files["src/lib.rs"].definitions);
    let sources =
        Level2Sources { root: dir.path(), index: &index, extracted: &extracted, names: &[], package: "agent_code" };
    let text = RustLevel2.reference(&sources).unwrap();
    assert!(text.contains("pub trait Keys {") && text.contains("impl Keys for () {"), "{text}");
}

/// Integration tests that name the crate only in paths (`rand_lite::roll(..)`, no `use`: a
/// `use` is not needed since Rust 2018) call it by its name in `Cargo.toml` (`[lib]` over
/// `[package]`, `-` as `_`), and their paths are rewritten to the package. Tests that never
/// reach the library give no name.
#[test]
fn tests_that_name_the_crate_only_in_paths_call_it_by_its_manifest_name() {
    let files = [
        ("Cargo.toml", "[package]\nname = \"rand-lite\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        ("src/lib.rs", "/// A roll.\npub fn roll(n: u32) -> u32 {\n    n % 6\n}\n"),
        ("tests/smoke.rs", "#[test]\nfn rolls() {\n    assert!(rand_lite::roll(7) < 6);\n}\n"),
    ];
    let dir = carve_testutil::temp_tree(&files);
    let index = crate::index::DefinitionIndex::build(dir.path(), &crate::index::IndexOptions::default()).unwrap();
    assert_eq!(root_crate_name(dir.path(), &index).unwrap(), "rand_lite");
    assert_eq!(RustLevel2.package_import(dir.path(), &index, "agent_code").unwrap(), "agent_code");
    let extracted = ids(&["src/lib.rs::roll"]);
    let edits = RustLevel2.rewrite_test_imports(
        dir.path(),
        files[2].1,
        &index.files["tests/smoke.rs"],
        &index,
        &extracted,
        "agent_code",
    );
    let out = crate::edit::apply(files[2].1, &edits).unwrap();
    assert!(out.contains("assert!(agent_code::roll(7) < 6);"), "{out}");

    let unused = carve_testutil::temp_tree(&[
        files[0],
        files[1],
        ("tests/smoke.rs", "#[test]\nfn nothing() {\n    assert_eq!(1 + 1, 2);\n}\n"),
    ]);
    let index = crate::index::DefinitionIndex::build(unused.path(), &crate::index::IndexOptions::default()).unwrap();
    let err = root_crate_name(unused.path(), &index).unwrap_err();
    assert!(err.contains("no integration test"), "{err}");
}

/// `use dep::dep;` binds the name its own path starts with: the path's first segment is the
/// external crate, not the `use` itself (itoa's `use no_panic::no_panic;`: resolving it
/// through the same `use` again recursed until the stack overflowed).
#[test]
fn a_use_that_binds_the_name_its_path_starts_with_names_the_external_crate() {
    let dir = carve_testutil::temp_tree(&[
        ("Cargo.toml", "[package]\nname = \"np\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        ("src/lib.rs", "use dep::dep;\n\npub fn half(x: u32) -> u32 {\n    dep(x) / 2\n}\n"),
        ("tests/half.rs", "use np::half;\n\n#[test]\nfn halves() {\n    assert_eq!(half(4), 2);\n}\n"),
    ]);
    let index = crate::index::DefinitionIndex::build(dir.path(), &crate::index::IndexOptions::default()).unwrap();
    let extracted = ids(&["src/lib.rs::half"]);
    let sources =
        Level2Sources { root: dir.path(), index: &index, extracted: &extracted, names: &[], package: "agent_code" };
    let text = RustLevel2.reference(&sources).unwrap();
    assert!(text.contains("use dep::dep;"), "{text}");
    assert!(text.contains("pub fn half(x: u32) -> u32"), "{text}");
}

/// `fixtures/rust/dice`: the crate root names `Vec` through `alloc`, `bag` through `std`
/// (smol-rs/fastrand's `lib.rs` and `global_rng.rs`). Copying `rolls` and `bag::sides`
/// binds `Vec` once, through `std`; it was refused as two things of one name. The carried
/// doctests of the feature call `agent_code`.
#[test]
fn one_type_by_std_s_and_alloc_s_paths_is_one_import() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/rust/dice");
    let index = crate::index::DefinitionIndex::build(&root, &crate::index::IndexOptions::default()).unwrap();
    let extracted = ids(&["src/lib.rs::roll", "src/lib.rs::rolls", "src/bag.rs::sides"]);
    let sources =
        Level2Sources { root: &root, index: &index, extracted: &extracted, names: &[], package: "agent_code" };
    let text = RustLevel2.reference(&sources).unwrap();
    assert_eq!(text.matches("use std::vec::Vec;").count(), 1, "{text}");
    assert!(!text.contains("alloc::") && !text.contains("extern crate alloc"), "{text}");

    let f2p = ["dice::doctest::src/bag.rs - bag::sides".to_string(), "rolls::rolls_and_bags".to_string()];
    let carried = RustLevel2.carried_tests(&root, &index, &extracted, &f2p, "agent_code").unwrap().unwrap();
    assert_eq!(carried.path, "tests/carve_doctests.rs");
    assert_eq!(
        carried.ids,
        [(f2p[0].clone(), "carve_doctests::doctest_bag_sides".to_string())].into(),
        "only the doctest is carried"
    );
    assert!(carried.text.contains("let bag = agent_code::sides(&[4, 6]);"), "{}", carried.text);
    assert!(crate::parse_errors(Language::Rust, &carried.text).is_empty(), "{}", carried.text);
}

/// `fixtures/rust/dice`: `bag::sides` counts in a `ROLLED` static of a module-level
/// `std::thread_local!` (smol-rs/fastrand's `RNG`): the invocation is an item the reference
/// copies, once. `roll` names `weigh` of the optional dependency `gate` under its feature
/// (itoa's `no_panic`): its `use` keeps that `cfg`, which `agent_code` (no such feature, no
/// such dependency) leaves out.
#[test]
fn a_thread_local_static_is_copied_and_an_optional_dependency_s_use_keeps_its_cfg() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/rust/dice");
    let index = crate::index::DefinitionIndex::build(&root, &crate::index::IndexOptions::default()).unwrap();
    let extracted = ids(&["src/lib.rs::roll", "src/bag.rs::sides"]);
    let sources =
        Level2Sources { root: &root, index: &index, extracted: &extracted, names: &[], package: "agent_code" };
    let text = RustLevel2.reference(&sources).unwrap();
    assert!(crate::parse_errors(Language::Rust, &text).is_empty(), "{text}");
    assert_eq!(text.matches("std::thread_local! {").count(), 1, "{text}");
    assert!(text.contains("    static ROLLED: Cell<usize> = Cell::new(0);"), "{text}");
    assert!(text.contains("use std::cell::Cell;"), "{text}");
    assert!(text.contains("#[cfg(feature = \"gate\")] use gate::weigh;"), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("use gate")), "{text}");
}

/// A module-level macro's own tokens declare items (`static`, `static ref`, `pub struct`);
/// nested groups and other tokens do not.
#[test]
fn the_items_a_macro_invocation_declares() {
    let source = "lazy_static! {\n    pub static ref TABLE: Vec<fn(u8)> = { fn inner() {} Vec::new() };\n}\nbitflags! { pub struct Flags: u8 { const A = 1; } }\nimpl_it!(u8 as u16);\n";
    let mut parser = super::super::index::parse::new_parser();
    let tree = parser.parse(source, None).unwrap();
    let mut c = tree.root_node().walk();
    let found: Vec<(String, bool)> = tree
        .root_node()
        .named_children(&mut c)
        .filter(|n| n.kind() == "macro_invocation")
        .flat_map(|n| crate_items::macro_items(n, source))
        .map(|(name, _, public)| (name, public))
        .collect();
    assert_eq!(found, [("TABLE".to_string(), true), ("Flags".to_string(), true)]);
}

/// `fixtures/rust/dice`: `die!(d6, 6)` makes `pub fn d6() { roll(6) }` with the crate's own
/// macro (fastrand's `integer!(usize, …)` around `with_rng`). With `roll` in the feature,
/// `d6` goes with it: the reference copies the invocation after the macro, and the
/// integration test calls `agent_code::d6()`.
#[test]
fn an_item_the_crate_s_macro_makes_around_the_feature_goes_with_it() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/rust/dice");
    let index = crate::index::DefinitionIndex::build(&root, &crate::index::IndexOptions::default()).unwrap();
    let extracted = ids(&["src/lib.rs::roll"]);
    let sources =
        Level2Sources { root: &root, index: &index, extracted: &extracted, names: &[], package: "agent_code" };
    let text = RustLevel2.reference(&sources).unwrap();
    assert!(crate::parse_errors(Language::Rust, &text).is_empty(), "{text}");
    let (mac, call) = (text.find("macro_rules! die {"), text.find("die!(d6, 6);"));
    assert!(mac.is_some() && call.is_some() && mac < call, "{text}");
    let test = std::fs::read_to_string(root.join("tests/rolls.rs")).unwrap();
    let edits =
        RustLevel2.rewrite_test_imports(&root, &test, &index.files["tests/rolls.rs"], &index, &extracted, "agent_code");
    let out = crate::edit::apply(&test, &edits).unwrap();
    assert!(out.contains("assert_eq!(agent_code::d6(), 6);"), "{out}");
    assert!(out.contains("dice::bag::sides(&[2, 3])"), "{out}");
    let note = RustLevel2.support_note(&sources).unwrap();
    assert!(note.contains("the tests call from the crate: `d6`."), "{note}");
}

/// fastrand's shape: `integer!(usize, …)` makes `pub fn usize` calling `with_rng`, which names
/// `Rng`, whose method is the feature. The generated item reaches the feature through
/// `with_rng` and goes with it.
#[test]
fn an_item_a_macro_makes_goes_with_the_feature_it_reaches_through_a_helper() {
    let dir = carve_testutil::temp_tree(&[
        ("Cargo.toml", "[package]\nname = \"gen\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        (
            "src/lib.rs",
            "pub struct Gen(u64);\n\nimpl Gen {\n    pub fn next(&mut self) -> u64 {\n        self.0 += 1;\n        self.0\n    }\n}\n\nfn with_gen<R>(f: impl FnOnce(&mut Gen) -> R) -> R {\n    f(&mut Gen(0))\n}\n\nmacro_rules! global {\n    ($t:ident) => {\n        pub fn $t() -> u64 {\n            with_gen(|g| g.next())\n        }\n    };\n}\n\nglobal!(next_global);\n\npub fn unrelated() -> u64 {\n    7\n}\n",
        ),
        (
            "tests/gen.rs",
            "use gen::Gen;\n\n#[test]\nfn one() {\n    let _ = Gen::next;\n    assert_eq!(gen::next_global(), 1);\n}\n",
        ),
    ]);
    let index = crate::index::DefinitionIndex::build(dir.path(), &crate::index::IndexOptions::default()).unwrap();
    let extracted = ids(&["src/lib.rs::Gen.next"]);
    let sources =
        Level2Sources { root: dir.path(), index: &index, extracted: &extracted, names: &[], package: "agent_code" };
    assert_eq!(reference::generated_names(&sources, "gen"), ["next_global".to_string()].into());
    let text = RustLevel2.reference(&sources).unwrap();
    assert!(text.contains("global!(next_global);") && text.contains("fn with_gen<R>"), "{text}");
    assert!(!text.contains("fn unrelated"), "{text}");
}
