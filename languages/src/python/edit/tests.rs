//! Tests of Python masking and the Level 2 rewrite, on small repositories indexed in memory
//! by the real indexer.

use std::collections::BTreeSet;
use std::process::Command;

use super::*;
use crate::Language;
use crate::edit::apply;
use crate::parse_errors;

pub(crate) fn index_of(sources: &[(&str, &str)]) -> DefinitionIndex {
    let owned: Vec<(String, Vec<u8>)> = sources.iter().map(|(p, s)| (p.to_string(), s.as_bytes().to_vec())).collect();
    let index = DefinitionIndex::from_sources(&owned);
    assert!(index.skipped.is_empty(), "{:?}", index.skipped);
    index
}

/// Mask `path` of the repository `sources` removing `ids`; checks the result parses.
fn masked(sources: &[(&str, &str)], path: &str, ids: &[&str]) -> String {
    let index = index_of(sources);
    let remove: BTreeSet<NodeId> = ids.iter().map(|s| s.to_string()).collect();
    for id in ids {
        assert!(index.definitions.contains_key(*id), "unknown id {id}: {:?}", index.definitions.keys());
    }
    let src = sources.iter().find(|(p, _)| *p == path).expect("file").1;
    let edits = mask_file(src, &index.files[path], &index, &remove).expect("mask");
    let out = apply(src, &edits).expect("apply");
    assert_eq!(parse_errors(Language::Python, &out), vec![], "masked output does not parse:\n{out}");
    out
}

const SHOP: &str = r#""""Shopping cart."""

import os
from dataclasses import dataclass


# Registry of all carts.
REGISTRY = {}


class Cart:
    """A cart."""

    def __init__(self):
        self.items = []

    def add(self, item):
        self.items.append(item)

    # Totals with discounts.
    def total(self, discount=0.0):
        return sum(self.items) * (1 - discount)

    def clear(self):
        self.items = []


# Registers a cart factory.
# Second comment line.
@dataclass
class Coupon:
    code: str

    def apply(self, cart):
        return cart.total(0.1)


def make_cart():
    return Cart()
"#;

#[test]
fn removes_a_method_of_a_class_whose_other_methods_stay() {
    insta::assert_snapshot!(masked(&[("shop.py", SHOP)], "shop.py", &["shop.py::Cart.total"]));
}

#[test]
fn removes_the_first_and_last_methods() {
    insta::assert_snapshot!(masked(
        &[("shop.py", SHOP)],
        "shop.py",
        &["shop.py::Cart.__init__", "shop.py::Cart.clear"]
    ));
}

#[test]
fn removes_a_whole_decorated_class_with_its_comments() {
    insta::assert_snapshot!(masked(&[("shop.py", SHOP)], "shop.py", &["shop.py::Coupon", "shop.py::Coupon.apply"]));
}

#[test]
fn class_left_without_methods_gets_pass_but_docstring_counts() {
    let src = "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n\n\nclass B:\n    \"\"\"Doc.\"\"\"\n\n    def f(self):\n        return 1\n\n\nx = 1\n";
    insta::assert_snapshot!(masked(&[("m.py", src)], "m.py", &["m.py::A.f", "m.py::A.g", "m.py::B.f"]));
}

const DECORATED: &str = r#"import functools

REGISTRY = {}


def register(fn):
    REGISTRY[fn.__name__] = fn
    return fn


# This one is registered at import time.
# It computes prices.
@register
@functools.lru_cache(maxsize=None)
def price(x):
    # inner comment
    return x * 2
    # trailing body comment


def other():
    return 1
"#;

#[test]
fn removes_a_decorated_function_with_comments_above() {
    insta::assert_snapshot!(masked(&[("m.py", DECORATED)], "m.py", &["m.py::price"]));
}

#[test]
fn removes_the_last_function_of_a_file() {
    insta::assert_snapshot!(masked(&[("m.py", DECORATED)], "m.py", &["m.py::other"]));
}

const CONDITIONAL: &str = r#"import sys

if sys.version_info >= (3, 8):
    def helper():
        return 1
else:
    def helper():
        return 2

try:
    import json

    def fast():
        return json
except ImportError:
    def fast():
        return None


def main():
    def inner(x):
        return x + 1

    return inner(2)


def only_nested():
    def inner():
        return 0
"#;

#[test]
fn removal_that_empties_if_and_try_blocks_leaves_pass() {
    let sources = [("m.py", CONDITIONAL)];
    let index = index_of(&sources);
    let ids: Vec<&str> =
        index.definitions.keys().filter(|k| k.contains("helper") || k.contains("fast")).map(|s| s.as_str()).collect();
    assert_eq!(ids.len(), 4, "{ids:?}");
    insta::assert_snapshot!(masked(&sources, "m.py", &ids));
}

#[test]
fn removes_nested_functions() {
    insta::assert_snapshot!(masked(&[("m.py", CONDITIONAL)], "m.py", &["m.py::main.inner", "m.py::only_nested.inner"]));
}

const PRICING: &str =
    "def total(xs):\n    return sum(xs)\n\n\ndef tax(x):\n    return x\n\n\ndef discount(x):\n    return x\n";

const CONSUMER: &str = r#"from typing import TYPE_CHECKING
from .pricing import total as t, tax, discount as d
from .pricing import (
    total,
    tax as tax2,
    discount,
)
from .pricing import (total, discount,
    tax)
from .pricing import total
import os; from .pricing import total

if TYPE_CHECKING:
    from .pricing import total as T

try:
    from .pricing import total
except ImportError:
    total = None


def uses():
    from .pricing import total, tax
    return tax


def sole():
    from .pricing import total
"#;

#[test]
fn drops_import_names_of_removed_definitions() {
    let sources = [
        ("pkg/__init__.py", "from .pricing import total, tax\n"),
        ("pkg/pricing.py", PRICING),
        ("pkg/consumer.py", CONSUMER),
    ];
    let out = masked(&sources, "pkg/consumer.py", &["pkg/pricing.py::total"]);
    let init = masked(&sources, "pkg/__init__.py", &["pkg/pricing.py::total"]);
    insta::assert_snapshot!(format!("# pkg/__init__.py\n{init}# pkg/consumer.py\n{out}"));
}

#[test]
fn attribute_assignments_of_a_removed_function_go_with_it() {
    // toolz/curried/exceptions.py: `merge.__doc__ = toolz.merge.__doc__` after the def.
    let src = "import toolz\n\n\ndef merge(d):\n    return d\n\n\ndef keep(d):\n    return d\n\n\nmerge.__doc__ = toolz.merge.__doc__\nkeep.__doc__ = toolz.keep.__doc__\nother.attr = merge\n";
    let out = masked(&[("m.py", src)], "m.py", &["m.py::merge"]);
    assert_eq!(
        out,
        "import toolz\n\n\ndef keep(d):\n    return d\n\n\nkeep.__doc__ = toolz.keep.__doc__\nother.attr = merge\n"
    );
}

#[test]
fn removes_gone_names_from_dunder_all() {
    let init = r#"from .pricing import total, tax as levy
from .pricing import discount

__all__ = [
    "total",
    "levy",  # the tax
    "discount",
]
__all__ += ("total", "other")
__all__ += ["total"]
"#;
    let sources = [("pkg/__init__.py", init), ("pkg/pricing.py", PRICING)];
    let out = masked(&sources, "pkg/__init__.py", &["pkg/pricing.py::total", "pkg/pricing.py::tax"]);
    insta::assert_snapshot!(out);
    let own = masked(
        &[("m.py", "__all__ = ['f', 'g']\n\n\ndef f():\n    pass\n\n\ndef g():\n    pass\n")],
        "m.py",
        &["m.py::g"],
    );
    assert_eq!(own, "__all__ = ['f']\n\n\ndef f():\n    pass\n");
}

#[test]
fn follows_re_exports_and_leaves_plain_imports_alone() {
    let sources = [
        ("pkg/__init__.py", "from .pricing import total, tax\n"),
        ("pkg/pricing.py", PRICING),
        ("app.py", "import pkg\nimport pkg.pricing\nfrom pkg import total, tax\n\nprint(tax)\n"),
    ];
    let out = masked(&sources, "app.py", &["pkg/pricing.py::total"]);
    assert_eq!(out, "import pkg\nimport pkg.pricing\nfrom pkg import tax\n\nprint(tax)\n");
}

#[test]
fn unaffected_file_gets_no_edits() {
    let sources = [("m.py", DECORATED), ("n.py", "x = 1\n")];
    let index = index_of(&sources);
    let remove: BTreeSet<NodeId> = ["m.py::price".to_string()].into();
    assert_eq!(mask_file("x = 1\n", &index.files["n.py"], &index, &remove).unwrap(), vec![]);
}

#[test]
fn stale_index_is_an_error_naming_the_file() {
    let index = index_of(&[("m.py", DECORATED)]);
    let remove: BTreeSet<NodeId> = ["m.py::price".to_string()].into();
    let err = mask_file("x = 1\n", &index.files["m.py"], &index, &remove).unwrap_err();
    assert!(err.to_string().contains("m.py"), "{err}");
}

fn py_compile_ok(source: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let f = dir.path().join("m.py");
    std::fs::write(&f, source).map_err(|e| e.to_string())?;
    let out = Command::new("python3")
        .args(["-c", "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')"])
        .arg(&f)
        .output()
        .map_err(|e| format!("python3 not available: {e}"))?;
    if out.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&out.stderr).into_owned()) }
}

const TRICKY: &str = "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\ndef first():\n    pass\n\nclass K:\n    # comment only\n    if True:\n        def a(self): return 1\n    else:\n        def a(self): return 2\n    def b(self):\n        with open('x') as f:\n            def inner(): return f\n        for i in range(3):\n            def loop_fn(): return i\n        else:\n            def loop_else(): return 0\n        return inner\n\n    @staticmethod\n    # between decorator and def\n    async def c(): \\\n        return 3\n\ndef m(x):\n    match x:\n        case 1:\n            def one(): return 1\n        case _:\n            def other(): return 2\n    return x\nx = 1; y = 2\n\tz = 3\n";

const TABS_CRLF: &str = "class T:\r\n\tdef a(self):\r\n\t\treturn 1\r\n\r\n\tdef b(self):\r\n\t\treturn 2\r\n\r\n\r\ndef f():\r\n\tpass\r\n";

#[carve_testutil::needs("python3")]
fn removing_any_single_definition_keeps_the_file_valid() {
    let tricky = TRICKY.replace("\n\tz = 3\n", "\n");
    for (name, src) in [
        ("shop.py", SHOP),
        ("m.py", DECORATED),
        ("c.py", CONDITIONAL),
        ("t.py", tricky.as_str()),
        ("crlf.py", TABS_CRLF),
    ] {
        let index = index_of(&[(name, src)]);
        for id in index.definitions.keys() {
            let out = masked(&[(name, src)], name, &[id]);
            assert!(!out.contains("\n\n\n\n"), "more than two blank lines after removing {id}:\n{out}");
            if let Err(e) = py_compile_ok(&out) {
                panic!("removing {id} gives code that does not compile: {e}\n{out}");
            }
        }
    }
}

#[test]
fn level2_rewrites_test_imports() {
    let test_src = r#"import pytest
import pkg
import pkg.pricing as pr
import pkg.pricing
from pkg import pricing
from pkg.pricing import total, tax as t
from pkg.pricing import (
    discount,
)


def test_total():
    assert total([1]) == 1
    assert pr.total([2]) == 2
    assert pkg.pricing.total([3]) == 3
    assert pricing.total([4]) == pr.tax(4)
    assert discount(1) == t(1)
    assert pkg.pricing.discount(5) == pkg.pricing.tax(5)
"#;
    let sources = [("pkg/__init__.py", ""), ("pkg/pricing.py", PRICING), ("tests/test_pricing.py", test_src)];
    let index = index_of(&sources);
    let extracted: BTreeSet<NodeId> =
        ["pkg/pricing.py::total".to_string(), "pkg/pricing.py::discount".to_string()].into();
    let edits =
        rewrite_imports_for_level2(test_src, &index.files["tests/test_pricing.py"], &index, &extracted, "agent_code");
    let out = apply(test_src, &edits).unwrap();
    assert_eq!(parse_errors(Language::Python, &out), vec![]);
    insta::assert_snapshot!(out);
}

/// Every Python file of the fixtures: removing any one definition, and all top-level ones
/// at once, gives text with no parse errors that `compile()` accepts (one interpreter for
/// all outputs).
#[carve_testutil::needs("python3")]
fn removing_definitions_of_fixture_files_keeps_them_valid() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/python/inventory");
    let index = DefinitionIndex::build(&root, &crate::index::IndexOptions::default()).expect("index");
    assert!(index.files.len() >= 5);
    let out_dir = tempfile::tempdir().unwrap();
    let mut written = Vec::new();
    for (path, file) in &index.files {
        let src = std::fs::read_to_string(root.join(path)).unwrap();
        let mut cases: Vec<BTreeSet<NodeId>> = file.definitions.iter().map(|d| [d.clone()].into()).collect();
        cases.push(file.definitions.iter().filter(|d| index.definitions[*d].parent.is_none()).cloned().collect());
        for (i, remove) in cases.iter().enumerate() {
            let edits = mask_file(&src, file, &index, remove).unwrap_or_else(|e| panic!("{path} {remove:?}: {e}"));
            let out = apply(&src, &edits).unwrap();
            assert_eq!(parse_errors(Language::Python, &out), vec![], "{path} minus {remove:?}:\n{out}");
            assert!(!out.contains("\n\n\n\n"), "{path} minus {remove:?} leaves 3+ blank lines:\n{out}");
            let f = out_dir.path().join(format!("{}_{i}.py", path.replace('/', "_")));
            std::fs::write(&f, &out).unwrap();
            written.push((f, format!("{path} minus {remove:?}")));
        }
    }
    let script = "import sys\nbad=[]\nfor p in sys.argv[1:]:\n    try:\n        compile(open(p).read(), p, 'exec')\n    except SyntaxError as e:\n        bad.append(f'{p}: {e}')\nprint('\\n'.join(bad))\nsys.exit(1 if bad else 0)\n";
    let o = Command::new("python3").arg("-c").arg(script).args(written.iter().map(|(f, _)| f)).output().unwrap();
    assert!(o.status.success(), "compile errors:\n{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn tricky_layouts() {
    let tricky = TRICKY.replace("\n\tz = 3\n", "\n");
    let index = index_of(&[("t.py", &tricky)]);
    let ids: Vec<&String> = index.definitions.keys().collect();
    assert!(ids.len() >= 12, "{ids:?}");
    let a: Vec<&str> = ids.iter().filter(|i| i.contains("K.a")).map(|s| s.as_str()).collect();
    let mut out = String::new();
    for remove in [vec!["t.py::K.c"], vec!["t.py::first"], a, vec!["t.py::m.one", "t.py::K.b.loop_else"]] {
        out.push_str(&format!("# minus {remove:?}\n{}\n", masked(&[("t.py", &tricky)], "t.py", &remove)));
    }
    out.push_str(&format!(
        "# crlf minus T.a\n{}",
        masked(&[("crlf.py", TABS_CRLF)], "crlf.py", &["crlf.py::T.a"]).replace('\r', "<CR>")
    ));
    insta::assert_snapshot!(out);
}

#[test]
fn an_import_of_a_submodule_that_loses_every_name_keeps_binding_the_submodule_in_a_package() {
    // toolz/curried/__init__.py: `from .exceptions import merge, merge_with` also binds
    // `exceptions`, which a later `del exceptions` needs.
    let exceptions = "def merge(d):\n    return d\n\n\ndef merge_with(f, d):\n    return d\n";
    let init = "from .exceptions import merge, merge_with\nfrom .core import keep\n\ndel exceptions\n";
    let core = "def keep(d):\n    return d\n";
    let sources = [("pkg/__init__.py", init), ("pkg/exceptions.py", exceptions), ("pkg/core.py", core)];
    let gone = ["pkg/exceptions.py::merge", "pkg/exceptions.py::merge_with"];
    let out = masked(&sources, "pkg/__init__.py", &gone);
    assert_eq!(out, "from . import exceptions\nfrom .core import keep\n\ndel exceptions\n");
    // Another import that still binds it: the emptied one just goes.
    let twice = "from .exceptions import merge\nfrom .exceptions import merge_with\n\ndel exceptions\n";
    let sources = [("pkg/__init__.py", twice), ("pkg/exceptions.py", exceptions)];
    let out = masked(&sources, "pkg/__init__.py", &["pkg/exceptions.py::merge"]);
    assert_eq!(out, "from .exceptions import merge_with\n\ndel exceptions\n");
    // Outside a package's `__init__.py` nothing is bound as a side effect.
    let module = "from .exceptions import merge\n\n\ndef use():\n    return 1\n";
    let sources = [("pkg/m.py", module), ("pkg/exceptions.py", exceptions)];
    let out = masked(&sources, "pkg/m.py", &["pkg/exceptions.py::merge"]);
    assert_eq!(out, "def use():\n    return 1\n");
}

#[test]
fn a_method_overriding_an_abstract_method_of_a_class_that_stays_is_stubbed() {
    let base = "from abc import ABC, abstractmethod\n\n\nclass Voice(ABC):\n    @abstractmethod\n    def say(self, text):\n        \"\"\"Say it.\"\"\"\n\n    @property\n    @abc.abstractmethod\n    def name(self):\n        ...\n";
    let echo = "from .base import Voice\n\n\nclass Echo(Voice):\n    @property\n    def name(self):\n        return \"echo\"\n\n    def say(self, text):\n        \"\"\"Twice.\"\"\"\n        twice = [text] * 2\n        return \" \".join(twice)\n\n    def extra(self):\n        return 1\n\n\nECHO = Echo()\n";
    let sources = [("pkg/__init__.py", ""), ("pkg/base.py", base), ("pkg/echo.py", echo)];
    let gone = ["pkg/echo.py::Echo.say", "pkg/echo.py::Echo.name", "pkg/echo.py::Echo.extra"];
    let out = masked(&sources, "pkg/echo.py", &gone);
    assert_eq!(
        out,
        "from .base import Voice\n\n\nclass Echo(Voice):\n    @property\n    def name(self):\n        raise NotImplementedError\n\n    def say(self, text):\n        \"\"\"Twice.\"\"\"\n        raise NotImplementedError\n\n\nECHO = Echo()\n"
    );
    // The class goes too: nothing is stubbed.
    let out = masked(&sources, "pkg/echo.py", &["pkg/echo.py::Echo", "pkg/echo.py::Echo.say"]);
    assert!(!out.contains("NotImplementedError") && !out.contains("class Echo"), "{out}");
}

/// Deleting an override of a base method that stays would hand its calls to the base method
/// (itsdangerous `URLSafeSerializerMixin.load_payload`): the override is stubbed. A method
/// no base defines, or whose base method goes too, is deleted.
#[test]
fn a_method_overriding_a_base_method_that_stays_is_stubbed() {
    let base =
        "class Packer:\n    def dump(self, v):\n        return str(v)\n\n    def load(self, t):\n        return t\n";
    let hex = "from .base import Packer\n\n\nclass Hex(Packer):\n    def dump(self, v):\n        return super().dump(v).encode().hex()\n\n    def load(self, t):\n        return bytes.fromhex(t).decode()\n\n    def extra(self):\n        return 1\n";
    let sources = [("pkg/__init__.py", ""), ("pkg/base.py", base), ("pkg/hex.py", hex)];
    let gone = ["pkg/hex.py::Hex.dump", "pkg/hex.py::Hex.load", "pkg/hex.py::Hex.extra", "pkg/base.py::Packer.load"];
    let out = masked(&sources, "pkg/hex.py", &gone);
    assert_eq!(
        out,
        "from .base import Packer\n\n\nclass Hex(Packer):\n    def dump(self, v):\n        raise NotImplementedError\n"
    );
    // The base class goes too: nothing to fall back to, so the overrides go.
    let out = masked(&sources, "pkg/hex.py", &["pkg/hex.py::Hex.dump", "pkg/base.py::Packer"]);
    assert!(!out.contains("NotImplementedError") && !out.contains("def dump"), "{out}");
}

/// Value bindings naming a removed definition go with it: a module-level statement (and its
/// name in `__all__`), a class attribute, an entry of a dict or list literal (its line, or
/// its text when it shares a line), the last statement of a class body (`pass` instead).
#[test]
fn value_bindings_of_removed_definitions_go_with_them() {
    let src = r#"__all__ = ["curry", "peekn", "keep"]


def curry(f):
    return f


def peekn(n, seq):
    return seq[:n]


def keep():
    pass


peekn = curry(peekn)
kept = curry(keep)
HANDLERS = [keep, peekn]


class _Prop:
    def __init__(self, name, func):
        self.func = func


class Stats:
    def _calc_mean(self):
        return 1

    mean = _Prop("mean", _calc_mean)

    def _calc_mode(self):
        return 2

    mode = _Prop("mode", _calc_mode)

    table = {
        # the mean
        "mean": _calc_mean,
        "mode": _calc_mode,  # the mode
    }


class Only:
    def f(self):
        pass

    g = f
"#;
    insta::assert_snapshot!(masked(
        &[("m.py", src)],
        "m.py",
        &["m.py::peekn", "m.py::Stats._calc_mode", "m.py::Only.f"]
    ));
}

/// A class body whose only statement is an annotated field binding a call that names a
/// removed definition (attrs `typing_tests/baseline.py`: `num: int =
/// attrs.field(validator=attrs.validators.ge(0))`) is left with `pass`, not empty.
#[test]
fn an_emptied_class_body_of_an_annotated_binding_gets_pass() {
    let validators = "def ge(n):\n    return n\n";
    let src = "from . import validators\n\n\ndef field(validator=None):\n    return validator\n\n\nclass Validated:\n    num: int = field(validator=validators.ge(0))\n\n\nclass Other:\n    pass\n";
    let sources = [("pkg/__init__.py", ""), ("pkg/validators.py", validators), ("pkg/m.py", src)];
    let out = masked(&sources, "pkg/m.py", &["pkg/validators.py::ge"]);
    assert!(out.contains("class Validated:\n    pass\n"), "{out}");
}

/// sortedcontainers' F2P tests include the doctests of `SortedList`'s methods, in the module
/// the package would replace: Level 2 is refused up front with the reason, not after its
/// empty package fails to fail (`level2-empty`).
#[test]
fn doctests_in_the_projects_modules_or_text_files_refuse_level2() {
    use crate::interface::Level2Packaging as _;
    let dir = tempfile::tempdir().unwrap();
    carve_testutil::write_files(
        dir.path(),
        &[
            ("p/__init__.py", ""),
            ("p/m.py", "def f():\n    \"\"\"\n    >>> f()\n    1\n    \"\"\"\n    return 1\n"),
            ("tests/test_m.py", "from p.m import f\n\ndef test_f():\n    assert f() == 1\n"),
        ],
    );
    let index = crate::index::DefinitionIndex::build(dir.path(), &Default::default()).unwrap();
    let l2 = super::level2::PythonLevel2;
    let test = ("tests/test_m.py::test_f".to_string(), "tests/test_m.py".to_string());
    assert_eq!(l2.tests_blocker(&index, std::slice::from_ref(&test)), None);
    let doctest = ("p/m.py::p.m.f".to_string(), "p/m.py".to_string());
    let reason = l2.tests_blocker(&index, &[test.clone(), doctest]).unwrap();
    assert!(reason.contains("`p/m.py::p.m.f` is a doctest in p/m.py") && !reason.contains("test_f"), "{reason}");
    let text = ("docs/usage.rst::usage.rst".to_string(), "docs/usage.rst".to_string());
    let reason = l2.tests_blocker(&index, &[text]).unwrap();
    assert!(reason.contains("is a doctest in the text file docs/usage.rst"), "{reason}");
}
