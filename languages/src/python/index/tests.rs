//! Unit tests of the Python index, and golden snapshots of a multi-module sample
//! (`languages/tests/data/python/sample`: src layout, re-exports, `__all__`, decorators,
//! property setters, async, positional-only/keyword-only parameters, nested functions and
//! classes, conditional redefinitions, test files).

use std::path::{Path, PathBuf};

use super::{index_source, index_sources};
use crate::index::{
    Definition, DefinitionIndex, DefinitionKind, IndexError, IndexOptions, LoadReference, LoadRole, ParameterKind,
};

fn sample_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/python/sample")
}

fn sample() -> DefinitionIndex {
    DefinitionIndex::build(&sample_root(), &IndexOptions::default()).expect("sample indexes")
}

fn repo(files: &[(&str, &str)]) -> DefinitionIndex {
    let sources: Vec<(String, Vec<u8>)> = files.iter().map(|(p, s)| (p.to_string(), s.as_bytes().to_vec())).collect();
    DefinitionIndex::from_sources(&sources)
}

fn def<'a>(index: &'a DefinitionIndex, id: &str) -> &'a Definition {
    index.get(id).unwrap_or_else(|| panic!("no {id} in {:?}", index.definitions.keys().collect::<Vec<_>>()))
}

fn loads(index: &DefinitionIndex, id: &str) -> Vec<(String, LoadRole)> {
    def(index, id).load_references.iter().map(|LoadReference { target, role }| (target.clone(), *role)).collect()
}

#[test]
fn sample_index_snapshot() {
    let index = sample();
    assert!(index.skipped.is_empty(), "{:?}", index.skipped);
    insta::assert_snapshot!("sample_summary", carve_testutil::index_summary(&index));
    insta::assert_json_snapshot!("sample_index", index);
}

#[test]
fn sample_facts() {
    let index = sample();
    let geometry = &index.files["src/shapes/geometry.py"];
    assert_eq!(geometry.module.as_deref(), Some("shapes.geometry"));
    assert_eq!(index.files["src/shapes/__init__.py"].module.as_deref(), Some("shapes"));
    assert!(index.files["tests/conftest.py"].is_test);
    assert!(def(&index, "tests/conftest.py::circle").is_test);
    assert!(!def(&index, "src/shapes/geometry.py::Circle").is_test);

    // Property getter and setter share a qualname: both get `@L<def line>`.
    let getter = def(&index, "src/shapes/geometry.py::Circle.radius@L33");
    assert_eq!(getter.kind, DefinitionKind::Method);
    assert_eq!(getter.span.start_line, 32, "decorator included");
    assert_eq!(loads(&index, "src/shapes/geometry.py::Circle.radius@L37"), [(getter.id.clone(), LoadRole::Decorator)]);
    assert!(index.get("src/shapes/geometry.py::Circle.radius").is_none());

    let load = def(&index, "src/shapes/io/reader.py::load");
    assert!(load.signature.is_async);
    assert_eq!(load.signature.text, r#"async def load(path: str, *args, encoding="utf-8", **kwargs) -> list"#);
    assert_eq!(load.docstring.as_deref(), Some("Load every shape of a file.\n\nOne shape per line."));
    let kinds: Vec<ParameterKind> = load.signature.parameters.iter().map(|p| p.kind).collect();
    assert_eq!(
        kinds,
        [
            ParameterKind::PositionalOrKeyword,
            ParameterKind::VarPositional,
            ParameterKind::KeywordOnly,
            ParameterKind::VarKeyword
        ]
    );

    // Re-export chain: `from shapes import load` -> shapes/__init__ -> shapes/io/__init__ -> reader.
    let conftest_import = &index.files["tests/conftest.py"].imports[1];
    assert_eq!(conftest_import.resolved_path.as_deref(), Some("src/shapes/__init__.py"));
    assert_eq!(conftest_import.names[0].target.as_deref(), Some("src/shapes/geometry.py::Circle"));
    assert!(index.files["src/shapes/__init__.py"].exported.contains(&"src/shapes/io/reader.py::load".to_string()));

    let square = def(&index, "src/shapes/geometry.py::Square");
    assert_eq!(square.signature.bases, ["Shape", "metaclass=type"]);
    assert_eq!(square.signature.decorators, [r#"register("square")"#]);
    let children: Vec<&str> = index.children("src/shapes/geometry.py::Square").map(|d| d.name.as_str()).collect();
    assert_eq!(children, ["__init__", "area", "unit", "from_sides"]);
}

#[test]
fn index_source_single_file() {
    let src = "class A:\n    def f(self):\n        return self.g()\n\n    def g(self):\n        def inner():\n            return self.f\n        return inner\n";
    let (file, defs) = index_source("pkg/a.py", src.as_bytes()).unwrap();
    assert_eq!(file.module.as_deref(), Some("pkg.a"));
    assert_eq!(file.lines, 8);
    assert_eq!(file.definitions, ["pkg/a.py::A", "pkg/a.py::A.f", "pkg/a.py::A.g", "pkg/a.py::A.g.inner"]);
    assert_eq!(defs[1].references, ["pkg/a.py::A.g"]);
    assert_eq!(defs[3].kind, DefinitionKind::Function);
    assert_eq!(defs[3].references, ["pkg/a.py::A.f"], "self from the enclosing method");
    assert_eq!(defs[3].parent.as_deref(), Some("pkg/a.py::A.g"));
    let body = defs[1].body.unwrap();
    assert_eq!(&src[body.start_byte..body.end_byte], "return self.g()");
}

#[test]
fn syntax_errors_and_bad_utf8_are_skipped_with_file_and_line() {
    let err = index_source("pkg/bad.py", b"def ok():\n    pass\n\ndef bad(:\n    pass\n").unwrap_err();
    match &err {
        IndexError::Syntax { path, line, .. } => assert_eq!((path.as_str(), *line), ("pkg/bad.py", 4)),
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().starts_with("pkg/bad.py:4:"), "{err}");
    let err = index_source("pkg/latin.py", b"x = 1\ny = '\xe9'\n").unwrap_err();
    assert!(matches!(err, IndexError::InvalidUtf8 { line: 2, .. }), "{err:?}");

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("good.py"), "from bad import f\n\ndef g():\n    return f()\n").unwrap();
    std::fs::write(dir.path().join("bad.py"), "def f(:\n").unwrap();
    std::fs::write(dir.path().join("latin.py"), b"s = '\xff'\n").unwrap();
    let index = DefinitionIndex::build(dir.path(), &IndexOptions::default()).unwrap();
    assert_eq!(index.files.keys().collect::<Vec<_>>(), ["good.py"]);
    let skipped: Vec<(&str, bool)> =
        index.skipped.iter().map(|s| (s.path.as_str(), s.reason.contains(":1:"))).collect();
    assert_eq!(skipped, [("bad.py", true), ("latin.py", true)]);
    assert_eq!(index.files["good.py"].imports[0].resolved_path.as_deref(), Some("bad.py"));
    assert!(def(&index, "good.py::g").references.is_empty());
}

#[test]
fn scopes_shadowing_and_globals() {
    let index = repo(&[(
        "m.py",
        "def helper(): pass\n\
         def other(): pass\n\
         def uses(helper, x=other):\n    return helper()\n\
         def assigns():\n    other = 1\n    return other\n\
         def declares_global():\n    global other\n    other = 2\n    return other\n\
         def lam():\n    return list(map(lambda helper: helper, []))\n\
         def calls():\n    helper()\n    return [other for _ in ()]\n",
    )]);
    assert!(def(&index, "m.py::uses").references.is_empty(), "parameter shadows");
    assert_eq!(loads(&index, "m.py::uses"), [("m.py::other".to_string(), LoadRole::DefaultOrAnnotation)]);
    assert!(def(&index, "m.py::assigns").references.is_empty(), "assignment makes it local");
    assert_eq!(def(&index, "m.py::declares_global").references, ["m.py::other"]);
    assert_eq!(def(&index, "m.py::calls").references, ["m.py::helper", "m.py::other"]);
    // Lambda parameters are not uses; their uses over-approximate to the global.
    assert_eq!(def(&index, "m.py::lam").references, ["m.py::helper"]);
}

#[test]
fn class_body_bases_decorators_and_inheritance() {
    let index = repo(&[
        ("pkg/__init__.py", "from .base import Base\nfrom .deco import *\n"),
        (
            "pkg/base.py",
            "class Base:\n    def run(self):\n        return self.step()\n    def step(self):\n        pass\n",
        ),
        (
            "pkg/deco.py",
            "__all__ = ['tag']\n__all__ += ['mark']\ndef tag(f):\n    return f\ndef mark(f):\n    return f\ndef _hidden(): pass\n",
        ),
        (
            "pkg/impl.py",
            "from pkg import Base, tag\nimport pkg.base as pb\n\n\
             def factory(): return 1\n\n\
             class Impl(pb.Base):\n    value = factory()\n    alias = tag\n\n    @tag\n    def go(self):\n        return self.run()\n\n\
             def build():\n    @tag\n    def inner(): pass\n    class Local(Base):\n        x = factory()\n    return Impl.go, inner, Local\n",
        ),
    ]);
    assert_eq!(index.files["pkg/deco.py"].exported, ["pkg/deco.py::tag", "pkg/deco.py::mark"]);
    assert_eq!(loads(&index, "pkg/impl.py::Impl"), [("pkg/base.py::Base".to_string(), LoadRole::BaseClass),]);
    let bound: Vec<(&str, &str)> = index.files["pkg/impl.py"]
        .value_bindings
        .iter()
        .flat_map(|b| b.targets.iter().map(move |t| (b.name.as_str(), t.target.as_str())))
        .collect();
    assert_eq!(
        bound,
        [("value", "pkg/impl.py::factory"), ("alias", "pkg/deco.py::tag"), ("x", "pkg/impl.py::factory")],
        "class attributes bound from definitions are value bindings, not class-body references"
    );
    assert_eq!(loads(&index, "pkg/impl.py::Impl.go"), [("pkg/deco.py::tag".to_string(), LoadRole::Decorator)]);
    assert_eq!(def(&index, "pkg/impl.py::Impl.go").references, ["pkg/base.py::Base.run"], "inherited method via self");
    assert_eq!(def(&index, "pkg/base.py::Base.run").references, ["pkg/base.py::Base.step"]);
    // A nested definition's decorator and bases run when the enclosing function runs.
    assert_eq!(
        def(&index, "pkg/impl.py::build").references,
        [
            "pkg/base.py::Base",
            "pkg/deco.py::tag",
            "pkg/impl.py::Impl.go",
            "pkg/impl.py::build.Local",
            "pkg/impl.py::build.inner"
        ]
    );
    assert_eq!(loads(&index, "pkg/impl.py::build.Local"), [("pkg/base.py::Base".to_string(), LoadRole::BaseClass)]);
}

#[test]
fn conditional_imports_and_cycles_terminate() {
    let index = repo(&[
        ("a.py", "from b import f\n\ndef g():\n    return f()\n"),
        ("b.py", "from a import f\n"),
        (
            "c.py",
            "try:\n    from fast import h\nexcept ImportError:\n    def h(): pass\n\nh()\n\ndef k():\n    return h()\n",
        ),
        ("d.py", "def h(): pass\nh()\nfrom fast import h\nh()\n"),
    ]);
    assert_eq!(index.files["a.py"].imports[0].names[0].target, None);
    assert!(def(&index, "a.py::g").references.is_empty());
    assert_eq!(def(&index, "c.py::k").references, ["c.py::h"], "the last binding wins in nested bodies");
    let lines: Vec<usize> = index.files["d.py"].module_references.iter().map(|r| r.line).collect();
    assert_eq!(lines, [2], "module code sees the binding in effect at its position");
}

#[test]
fn setting_an_attribute_of_a_definition_is_not_a_use_of_it() {
    let index = repo(&[("m.py", "def f(): pass\ndef g(): pass\nf.__doc__ = g.__doc__\nx = f\n")]);
    let refs: Vec<(&str, usize)> =
        index.files["m.py"].module_references.iter().map(|r| (r.target.as_str(), r.line)).collect();
    assert_eq!(refs, [("m.py::g", 3)], "the target `f.__doc__` keeps nothing, its value does");
    let x = &index.files["m.py"].value_bindings[0];
    assert_eq!((x.name.as_str(), x.targets[0].target.as_str(), x.targets[0].line), ("x", "m.py::f", 4));
}

/// A module-level name bound to `Class()` holds an instance: `encode = _obj.encode` names
/// the method (pyjwt's `encode = _jwt_global_obj.encode`, which the package's `__init__`
/// imports), so the mask cannot take the method and leave the alias.
#[test]
fn a_module_instance_of_a_class_resolves_its_methods() {
    let api = r#"class Client:
    def encode(self): pass
    def decode(self): pass
    def create(cls): pass

def factory(): pass

_obj = Client()
encode = _obj.encode
_made = Client.create()
made = _made.decode
_twice = Client()
_twice = factory()
twice = _twice.decode

def run():
    return _obj.decode()
"#;
    let index = repo(&[
        ("pkg/__init__.py", "from .api import encode\n"),
        ("pkg/api.py", api),
        ("pkg/user.py", "from .api import _obj\n\ndef go():\n    return _obj.decode()\n"),
    ]);
    let bindings: Vec<(&str, Vec<&str>, Vec<&str>)> = index.files["pkg/api.py"]
        .value_bindings
        .iter()
        .map(|b| {
            (
                b.name.as_str(),
                b.targets.iter().map(|t| t.target.as_str()).collect(),
                b.named_by.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        bindings,
        [
            ("_obj", vec!["pkg/api.py::Client"], vec!["pkg/api.py", "pkg/api.py::run", "pkg/user.py"]),
            ("encode", vec!["pkg/api.py::Client.encode"], vec!["pkg/__init__.py"]),
            ("_made", vec!["pkg/api.py::Client.create"], vec!["pkg/api.py"]),
            ("_twice", vec!["pkg/api.py::Client"], vec!["pkg/api.py"]),
            ("_twice", vec!["pkg/api.py::factory"], vec!["pkg/api.py"]),
        ],
        "`made` and `twice` name nothing: a factory's result and a name bound twice hold no known class"
    );
    assert_eq!(def(&index, "pkg/api.py::run").references, ["pkg/api.py::Client.decode"]);
    assert_eq!(def(&index, "pkg/user.py::go").references, ["pkg/api.py::Client.decode"]);
}

/// Statements and entries that name definitions only to bind a value, and who names what
/// they bind.
#[test]
fn value_bindings_and_the_code_that_names_them() {
    let core = r#"def peek(): pass
def curry(f): return f

peekn = curry(peek)
used = curry(peek)
CONST = 3
__call__ = peek

def main():
    return used()

class Stats:
    def _calc_mode(self): pass
    mode = property(_calc_mode)
    table = {
        'a': _calc_mode,  # mode
        'b': curry,
    }
    tag: dict = {'x': curry}
    if True:
        late = curry(peek)

def reader(s):
    return s.mode
"#;
    let other = "from pkg.core import used as u, peek\nimport pkg.core\n\ndef f():\n    return pkg.core.peekn\n";
    let index = repo(&[
        ("pkg/__init__.py", ""),
        ("pkg/core.py", core),
        ("pkg/other.py", other),
        ("pkg/unrelated.py", "def g(s):\n    return s.table, s.peekn\n"),
    ]);
    let bindings: Vec<(usize, &str, bool, Option<&str>, Vec<&str>, Vec<&str>)> = index.files["pkg/core.py"]
        .value_bindings
        .iter()
        .map(|b| {
            (
                b.span.start_line,
                b.name.as_str(),
                b.entry,
                b.class.as_deref(),
                b.targets.iter().map(|t| t.target.as_str()).collect(),
                b.named_by.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        bindings,
        [
            (4, "peekn", false, None, vec!["pkg/core.py::curry", "pkg/core.py::peek"], vec!["pkg/other.py::f"]),
            (
                5,
                "used",
                false,
                None,
                vec!["pkg/core.py::curry", "pkg/core.py::peek"],
                vec!["pkg/core.py::main", "pkg/other.py"]
            ),
            (
                14,
                "mode",
                false,
                Some("pkg/core.py::Stats"),
                vec!["pkg/core.py::Stats._calc_mode"],
                vec!["pkg/core.py::reader"]
            ),
            (16, "table", true, Some("pkg/core.py::Stats"), vec!["pkg/core.py::Stats._calc_mode"], vec![]),
            (17, "table", true, Some("pkg/core.py::Stats"), vec!["pkg/core.py::curry"], vec![]),
            (19, "tag", true, Some("pkg/core.py::Stats"), vec!["pkg/core.py::curry"], vec![]),
        ],
        "no binding for a constant, a dunder, or a statement in a nested block; `s.table` in a file \
         that does not import core.py is no use"
    );
    // What a binding names is not a module-level or class-body reference of its own; a dunder
    // (`__call__ = peek`) is used implicitly, so it stays a module-level reference.
    let refs: Vec<(&str, usize)> =
        index.files["pkg/core.py"].module_references.iter().map(|r| (r.target.as_str(), r.line)).collect();
    assert_eq!(refs, [("pkg/core.py::peek", 7)]);
    assert_eq!(
        loads(&index, "pkg/core.py::Stats"),
        [
            ("pkg/core.py::curry".to_string(), LoadRole::ClassBody),
            ("pkg/core.py::peek".to_string(), LoadRole::ClassBody)
        ],
        "the annotation of `tag` and the statement in `if` stay class-body references"
    );
}

#[test]
fn imports_in_detail() {
    let src = "from __future__ import annotations\nimport os.path, json as j\nfrom . import sibling\nfrom .sibling import (a as b,\n    c)\n\ndef f():\n    from .sibling import c as d\n    return d()\n";
    let index =
        repo(&[("pkg/__init__.py", ""), ("pkg/main.py", src), ("pkg/sibling.py", "def a(): pass\ndef c(): pass\n")]);
    let f = &index.files["pkg/main.py"];
    let modules: Vec<(&str, Option<&str>, bool)> =
        f.imports.iter().map(|i| (i.module.as_str(), i.resolved_path.as_deref(), i.module_level)).collect();
    assert_eq!(
        modules,
        [
            ("__future__", None, true),
            ("os.path", None, true),
            ("json", None, true),
            (".", Some("pkg/__init__.py"), true),
            (".sibling", Some("pkg/sibling.py"), true),
            (".sibling", Some("pkg/sibling.py"), false),
        ]
    );
    assert_eq!(f.imports[1].span, f.imports[2].span, "one Import per module of `import a, b`");
    let names = &f.imports[4].names;
    assert_eq!(names[0].alias.as_deref(), Some("b"));
    assert_eq!(names[0].target.as_deref(), Some("pkg/sibling.py::a"));
    assert_eq!(&src[names[0].span.start_byte..names[0].span.end_byte], "a as b");
    assert_eq!(names[1].span.start_line, 5);
    assert_eq!(def(&index, "pkg/main.py::f").references, ["pkg/sibling.py::c"]);
}

#[test]
fn docstrings_are_unquoted_and_dedented() {
    let src = "def a():\n    '''Single.'''\n\ndef b():\n    # comment first\n    \"\"\"\n    Title.\n\n        Indented.\n    \"\"\"\n\ndef c():\n    f'not {a} doc'\n\ndef d():\n    x = 1\n    'not first'\n\nclass E:\n    \"tab\\tand quote \\\" ok\"\n";
    let (_, defs) = index_source("m.py", src.as_bytes()).unwrap();
    let docs: Vec<Option<&str>> = defs.iter().map(|d| d.docstring.as_deref()).collect();
    assert_eq!(docs, [Some("Single."), Some("Title.\n\n    Indented."), None, None, Some("tab     and quote \" ok")]);
}

#[test]
fn multi_line_headers_and_kinds() {
    let src = "@a\n@b.c(1,\n      2)\nasync def f(\n    x: int,  # the x\n    *,\n    y: 'T' = None,\n) -> dict[str, int]:\n    pass\n\nclass K(\n    object,\n):\n    @staticmethod\n    def s(x): pass\n    if True:\n        def m(self): pass\n";
    let (_, defs) = index_source("m.py", src.as_bytes()).unwrap();
    let f = &defs[0];
    assert_eq!(f.span.start_line, 1);
    assert_eq!(f.def_line, 4);
    assert_eq!(f.signature.decorators, ["a", "b.c(1,\n      2)"]);
    assert_eq!(f.signature.text, "async def f(\n    x: int,  # the x\n    *,\n    y: 'T' = None,\n) -> dict[str, int]");
    assert_eq!(f.signature.returns.as_deref(), Some("dict[str, int]"));
    assert_eq!(f.signature.parameters[1].kind, ParameterKind::KeywordOnly);
    assert_eq!(f.signature.parameters[1].annotation.as_deref(), Some("'T'"));
    assert_eq!(defs[1].signature.text, "class K(\n    object,\n)");
    assert_eq!(defs[1].signature.bases, ["object"]);
    let kinds: Vec<(&str, DefinitionKind)> = defs.iter().map(|d| (d.qualname.as_str(), d.kind)).collect();
    assert_eq!(
        kinds,
        [
            ("f", DefinitionKind::Function),
            ("K", DefinitionKind::Class),
            ("K.s", DefinitionKind::Method),
            ("K.m", DefinitionKind::Method)
        ]
    );
}

#[test]
fn in_memory_and_on_disk_agree() {
    let root = sample_root();
    let mut sources = Vec::new();
    for f in crate::walk::source_files(&root, &[], &[]).unwrap().files {
        let bytes = std::fs::read(root.join(&f.path)).unwrap();
        sources.push((f.path, bytes));
    }
    assert_eq!(DefinitionIndex::from_sources(&sources), sample());
    assert_eq!(index_sources(&sources).files.len(), sources.len());
}

#[test]
fn star_imports_and_deep_hierarchies_stay_linear() {
    // A ring of modules star-importing each other, and a diamond-rich class hierarchy.
    let mut files: Vec<(String, String)> = Vec::new();
    let n: usize = 40;
    for i in 0..n {
        let mut src = format!("from m{} import *\nfrom m{} import *\n", (i + 1) % n, (i + 2) % n);
        src.push_str(&format!(
            "class C{i}({}):\n    def f{i}(self):\n        return self.missing(), self.f0()\n",
            if i == 0 { "object".to_string() } else { format!("C{}, C{}", i - 1, i.saturating_sub(2)) }
        ));
        src.push_str(&format!("def g{i}():\n    return len(unknown_{i})\n"));
        files.push((format!("m{i}.py"), src));
    }
    let borrowed: Vec<(&str, &str)> = files.iter().map(|(p, s)| (p.as_str(), s.as_str())).collect();
    let start = std::time::Instant::now();
    let index = repo(&borrowed);
    assert!(start.elapsed() < std::time::Duration::from_secs(20), "took {:?}", start.elapsed());
    assert_eq!(def(&index, "m5.py::C5.f5").references, ["m0.py::C0.f0"]);
    assert_eq!(
        loads(&index, "m3.py::C3"),
        [("m1.py::C1".to_string(), LoadRole::BaseClass), ("m2.py::C2".to_string(), LoadRole::BaseClass)]
    );
}

#[test]
fn bom_and_crlf() {
    let src = "\u{feff}def f():\r\n    \"\"\"Title.\r\n\r\n    Body.\r\n    \"\"\"\r\n    return g()\r\n\r\ndef g():\r\n    pass\r\n";
    let (file, defs) = index_source("m.py", src.as_bytes()).unwrap();
    assert_eq!(file.lines, 9);
    assert_eq!(defs[0].docstring.as_deref(), Some("Title.\n\nBody."));
    assert_eq!(defs[0].references, ["m.py::g"]);
    assert_eq!((defs[0].span.start_line, defs[0].span.end_line), (1, 6));
}

#[test]
fn match_patterns() {
    let src = "import enum\nclass Color(enum.Enum):\n    RED = 1\nclass Point:\n    pass\ndef rest(): pass\n\ndef f(p):\n    match p:\n        case Point(x=0):\n            return 1\n        case Color.RED:\n            return 2\n        case [rest, *others]:\n            return rest\n        case str() as Point:\n            return Point\n";
    let (_, defs) = index_source("m.py", src.as_bytes()).unwrap();
    let f = defs.iter().find(|d| d.name == "f").unwrap();
    // `rest` and the second `Point` are capture bindings: local to f, so they shadow.
    assert_eq!(f.references, ["m.py::Color"]);
}

#[test]
fn pep695_type_parameters() {
    let src = "def first[T](xs: list[T]) -> T:\n    return xs[0]\n\nclass Box[T: int]:\n    pass\n";
    let (_, defs) = index_source("m.py", src.as_bytes()).unwrap();
    assert_eq!(defs[0].signature.type_parameters.as_deref(), Some("[T]"));
    assert_eq!(defs[0].signature.text, "def first[T](xs: list[T]) -> T");
    assert_eq!(defs[1].signature.type_parameters.as_deref(), Some("[T: int]"));
}

#[test]
fn calls_whose_value_is_discarded_are_recorded_when_every_use_is_one() {
    let src = "class C:\n    def run(self, h):\n        if h:\n            self.check(h)\n        self.log(h)\n        x = self.log(h)\n        alg.verify(h)\n        await self.flush()\n        self.helper.go()\n\n    def check(self, h):\n        pass\n\n    def log(self, h):\n        return h\n\n    async def flush(self):\n        pass\n\n    def helper(self):\n        pass\n";
    let index = crate::index::DefinitionIndex::from_sources(&[("m.py".to_string(), src.as_bytes().to_vec())]);
    let calls = &index.files["m.py"].discarded_calls;
    let got: Vec<(Option<&str>, &str, usize)> =
        calls.iter().map(|c| (c.target.as_deref(), c.name.as_str(), c.span.start_line)).collect();
    // `log` is also used for its value, `helper` only as an object.
    assert_eq!(
        got,
        [(Some("m.py::C.check"), "check", 4), (None, "verify", 7), (Some("m.py::C.flush"), "flush", 8)],
        "{calls:#?}"
    );
    assert!(calls.iter().all(|c| c.caller == "m.py::C.run"));
}

#[test]
fn a_call_whose_value_only_the_next_if_tests_is_recorded_with_that_if_and_what_only_it_names() {
    let src = "class W(Warning):\n    pass\n\ndef length(k):\n    return None\n\ndef encode(alg, k):\n    msg = alg.check_key_length(k)\n    if msg:\n        warn(msg, W)\n    n = length(k)\n    if n:\n        pass\n    return n\n\ndef decode(alg, k):\n    msg = alg.check_key_length(k)\n    if msg:\n        pass\n    else:\n        return k\n";
    let index = crate::index::DefinitionIndex::from_sources(&[("m.py".to_string(), src.as_bytes().to_vec())]);
    let calls = &index.files["m.py"].discarded_calls;
    let got: Vec<(&str, &str, bool, usize, usize, Vec<&str>)> = calls
        .iter()
        .map(|c| {
            let names = c.names.iter().map(String::as_str).collect();
            (c.caller.as_str(), c.name.as_str(), c.tested, c.span.start_line, c.span.end_line, names)
        })
        .collect();
    // `n` is returned too, and `decode`'s `if` has an `else`: neither value is only tested.
    assert_eq!(got, [("m.py::encode", "check_key_length", true, 8, 10, vec!["m.py::W"])], "{calls:#?}");
}

/// Test configuration naming definitions by dotted path: recorded with their line, and
/// `removable` only where the line is one list entry alone (a TOML array element, an ini
/// continuation line), which the mask can take out without breaking the file.
#[test]
fn test_configuration_names_are_recorded_and_lone_list_entries_are_removable() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src/pkg")).unwrap();
    std::fs::write(
        root.join("src/pkg/warnings.py"),
        "class KeyWarning(Warning):\n    pass\n\nclass Other(Warning):\n    pass\n",
    )
    .unwrap();
    std::fs::write(
        root.join("pyproject.toml"),
        "[tool.pytest.ini_options]\nfilterwarnings = [\n    \"error\",\n    \"ignore::pkg.warnings.KeyWarning\",\n]\nmarkers = [\"x: ignore::pkg.warnings.Other\"]\n",
    )
    .unwrap();
    std::fs::write(root.join("setup.cfg"), "[tool:pytest]\nfilterwarnings =\n    ignore::pkg.warnings.Other\n")
        .unwrap();
    let index = DefinitionIndex::build(root, &IndexOptions::default()).expect("indexes");
    let got: Vec<(&str, usize, &str, bool)> =
        index.config_references.iter().map(|r| (r.path.as_str(), r.line, r.target.as_str(), r.removable)).collect();
    assert_eq!(
        got,
        [
            ("pyproject.toml", 4, "src/pkg/warnings.py::KeyWarning", true),
            ("pyproject.toml", 6, "src/pkg/warnings.py::Other", false),
            ("setup.cfg", 3, "src/pkg/warnings.py::Other", true),
        ]
    );
}

/// pytest's doctest ids name the definition whose docstring holds them; a module's doctest
/// and a test function have none.
#[test]
fn a_doctest_id_names_the_definition_that_holds_it() {
    let tree = "class Node:\n    def dump(self):\n        \"\"\">>> 1\n1\"\"\"\n\n\ndef dump():\n    pass\n";
    let index = repo(&[("src/pkg/tree.py", tree), ("tests/test_tree.py", "def test_dump():\n    pass\n")]);
    let owner = |t: &str| crate::doctest_owner(&index, t);
    assert_eq!(owner("src/pkg/tree.py::pkg.tree.Node.dump").as_deref(), Some("src/pkg/tree.py::Node.dump"));
    assert_eq!(owner("src/pkg/tree.py::pkg.tree.dump").as_deref(), Some("src/pkg/tree.py::dump"));
    assert_eq!(owner("src/pkg/tree.py::pkg.tree.Node").as_deref(), Some("src/pkg/tree.py::Node"));
    assert_eq!(owner("src/pkg/tree.py::pkg.tree"), None);
    assert_eq!(owner("tests/test_tree.py::test_dump"), None);
}

/// The `feature` protection policy tells a test's fixtures and set-up from its own code.
#[test]
fn fixtures_set_up_methods_and_conftest_code_are_test_fixtures() {
    let index = repo(&[
        (
            "tests/test_a.py",
            "import pytest\n\n@pytest.fixture(scope=\"module\")\ndef cart():\n    return 1\n\n\
             def helper():\n    return 2\n\nclass TestA:\n    def setUp(self):\n        pass\n\n    def test_a(self):\n        pass\n",
        ),
        ("tests/conftest.py", "def make():\n    return 3\n"),
    ]);
    let fixture = |id: &str| crate::is_test_fixture(&index, id);
    assert!(fixture("tests/test_a.py::cart"));
    assert!(fixture("tests/test_a.py::TestA.setUp"));
    assert!(fixture("tests/conftest.py::make"));
    assert!(!fixture("tests/test_a.py::helper"));
    assert!(!fixture("tests/test_a.py::TestA.test_a"));
    assert!(!fixture("tests/test_a.py::nope"));
}
