//! Python's Level 2 reference solution: the feature's own code, run beside the project as the
//! task leaves it. For each module of the project that holds names the package must expose,
//! the original text of those definitions (a class taken whole in its entirety) is executed
//! in a copy of the masked module's namespace, so it finds what stays in the project (its
//! imports, helpers, exceptions: the same objects the tests use) and nothing of the feature
//! that the package does not bring itself. The project's files are not restored: a task
//! whose tests pass with this package passes with a package written from scratch, which
//! validation proves (`level2-reference`). A test that reaches the feature through the
//! project (`jwt.encode`, a module-level alias of a method) fails with it, and the task is
//! refused.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::index::{Definition, DefinitionIndex};

/// One module's part of the reference: its import name, path and the definitions' text.
struct Block<'a> {
    module: &'a str,
    path: &'a str,
    defs: Vec<&'a Definition>,
}

/// The module-level definitions named `name` in the module `module`, in source order: one,
/// or several when the name is defined again (`@overload` signatures, then the function
/// arrow's `get` runs; the last one is what the name is bound to).
fn top_definitions<'a>(index: &'a DefinitionIndex, module: &str, name: &str) -> Vec<&'a Definition> {
    let Some(file) = index.files.values().find(|f| f.module.as_deref() == Some(module)) else { return Vec::new() };
    file.definitions
        .iter()
        .filter_map(|id| index.definitions.get(id))
        .filter(|d| d.parent.is_none() && d.name == name && !d.is_test)
        .collect()
}

/// A Python string literal of `s` (double quotes; backslashes, quotes and control
/// characters escaped; other characters as they are, the file being UTF-8).
fn literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The loader the reference runs: each block's definitions in a copy of its module's
/// namespace, what the feature's blocks defined so far put in place of the project's copies;
/// a block that names, while it runs, what a later block defines (a base class, a default, an
/// annotation) runs again after the others.
const LOADER: &str = r#""""Reference solution: the feature's own code, run beside the project's modules as the task
leaves them (see carve's docs/formats.md, Level 2)."""

import builtins as _builtins
import importlib as _importlib
from abc import ABCMeta as _ABCMeta
from types import CellType as _CellType, FunctionType as _FunctionType, MemberDescriptorType as _MemberDescriptor

_FEATURE = {}
_HOMES = {}
_SPACES = []
# Where the project's modules must name a feature object its own code reaches through them.
_ATTRIBUTES = {}


def _share(space, name, value):
    # In place of nothing, or of the project's own copy of the definition.
    old = space.get(name)
    if old is None or getattr(old, "__module__", None) == _HOMES[name]:
        space[name] = value


_build_class = _builtins.__build_class__
# What `type` sets itself when a class's attribute is assigned (`__name__` must be a string).
_NOT_MEMBERS = ("__dict__", "__weakref__", "__module__", "__qualname__", "__slots__", "_abc_impl")
_TYPE_SET = {k for k, v in vars(type).items() if hasattr(type(v), "__set__")}
_TYPE_SET -= {"__doc__", "__annotations__", "__abstractmethods__", *_NOT_MEMBERS}


def _function_for(f, old):
    # `f` as the project's class needs it: zero-argument `super()` names the class through a
    # `__class__` cell, which must be `old`; the package's class keeps `f` as it is.
    code = getattr(f, "__code__", None)
    if code is None or "__class__" not in code.co_freevars:
        return f
    cells = list(f.__closure__)
    cells[code.co_freevars.index("__class__")] = _CellType(old)
    g = _FunctionType(code, f.__globals__, f.__name__, f.__defaults__, tuple(cells))
    g.__kwdefaults__, g.__qualname__, g.__doc__ = f.__kwdefaults__, f.__qualname__, f.__doc__
    g.__module__, g.__annotations__ = f.__module__, f.__annotations__
    g.__dict__.update(f.__dict__)
    return g


def _member_for(member, old):
    if isinstance(member, (staticmethod, classmethod)):
        return type(member)(_function_for(member.__func__, old))
    if type(member) is property:
        parts = (f and _function_for(f, old) for f in (member.fget, member.fset, member.fdel))
        return property(*parts, member.__doc__)
    return _function_for(member, old)


def _complete(module, name, value):
    # A class the project keeps, masked, gets the feature's members in place rather than
    # being replaced: its instances made at import (`Token = _TokenType()`) and its
    # subclasses in the project's own modules are of that class, and never see a copy.
    old = vars(_importlib.import_module(module)).get(name)
    if not isinstance(old, type) or not isinstance(value, type) or old is value:
        return value
    if type(old) not in (type, _ABCMeta) or type(value) is not type(old) or old.__bases__ != value.__bases__:
        return value
    if old.__module__ != module or old.__qualname__ != value.__qualname__:
        return value
    # Slots are the instances' layout, fixed when the class was made; a member `type` itself
    # sets (toolz's `Compose.__name__`, a property) can only be a new class's.
    if vars(old).get("__slots__") != vars(value).get("__slots__") or _TYPE_SET.intersection(vars(value)):
        return value
    for key, member in vars(value).items():
        if key not in _NOT_MEMBERS and not isinstance(member, _MemberDescriptor):
            setattr(old, key, _member_for(member, old))
    return old


def _builtins_completing(module):
    # Each class the block defines is completed as its statement ends, so the classes after it
    # derive from the project's class (sqlparse's `Identifier(TokenList)`): one hierarchy for
    # `isinstance`, and slots allow no change of base afterwards.
    def build_class(func, name, *bases, **kwargs):
        return _complete(module, name, _build_class(func, name, *bases, **kwargs))

    return {**vars(_builtins), "__build_class__": build_class}


def _run(module, path, names, source):
    space = dict(vars(_importlib.import_module(module)))
    # What it defines belongs to this package (pickle finds it here).
    space["__name__"] = __name__
    for name, value in _FEATURE.items():
        _share(space, name, value)
    space["__builtins__"] = _builtins_completing(module)
    exec(compile(source, path, "exec"), space)
    # Again: the block's own imports (a star import) may have bound the project's copies.
    for name, value in _FEATURE.items():
        _share(space, name, value)
    _SPACES.append(space)
    for name in names:
        _FEATURE[name], _HOMES[name] = space[name], module
        for other in _SPACES:
            _share(other, name, space[name])
        for home, attribute in _ATTRIBUTES.get(name, ()):
            home = _importlib.import_module(home)
            # In place of nothing, or of the project's own copy (a class it keeps, masked).
            old = getattr(home, attribute, None)
            if old is None or getattr(old, "__module__", None) == module:
                setattr(home, attribute, space[name])

"#;

const RUN_ALL: &str = r#"
while _BLOCKS:
    _left, _error = [], None
    for _block in _BLOCKS:
        try:
            _run(*_block)
        except (NameError, AttributeError) as _e:
            _left.append(_block)
            _error = _e
    if len(_left) == len(_BLOCKS):
        raise _error
    _BLOCKS = _left

"#;

/// The file's `from __future__ import …` lines: they change how the definitions compile
/// (`annotations` defers annotations that name what only type checkers import).
fn future_lines(text: &str) -> String {
    text.lines()
        .filter(|l| l.trim_start().starts_with("from __future__ import"))
        .map(|l| format!("{}\n", l.trim()))
        .collect()
}

/// The original file's module-level imports, each name bound only where the module's
/// namespace lacks it and where it still imports: the mask drops the imports only the
/// feature used (toolz's `recipes` lost `getter`), and a name of the feature is the
/// package's own.
fn import_lines(file: &crate::index::FileIndex, text: &str) -> String {
    let mut out = String::new();
    let mut guarded = |binding: &str, statement: &str| {
        let _ = write!(
            out,
            "if {} not in globals():\n    try:\n        {statement}\n    except ImportError:\n        pass\n",
            literal(binding)
        );
    };
    for imp in file.imports.iter().filter(|i| i.module_level && !i.is_directive()) {
        if imp.names.is_empty() {
            let Some(statement) = text.get(imp.span.start_byte..imp.span.end_byte) else { continue };
            let statement: String = statement.split_whitespace().collect::<Vec<_>>().join(" ");
            let binding = match statement.rsplit_once(" as ") {
                Some((_, alias)) if !statement.contains(',') => alias.trim().to_string(),
                _ => imp.module.split('.').next().unwrap_or(&imp.module).to_string(),
            };
            if !statement.contains(',') {
                guarded(&binding, &statement);
            }
            continue;
        }
        for n in &imp.names {
            let statement = match &n.alias {
                Some(a) => format!("from {} import {} as {a}", imp.module, n.name),
                None => format!("from {} import {}", imp.module, n.name),
            };
            match n.name.as_str() {
                "*" => guarded("__carve_star__", &statement),
                _ => guarded(n.alias.as_deref().unwrap_or(&n.name), &statement),
            }
        }
    }
    out
}

/// The blocks' modules in the order they run: a block after the blocks of the modules its
/// file imports (itsdangerous' `serializer.py` imports `Signer` from `signer.py` and makes it
/// a class attribute while its class body runs, which keeps the project's masked `Signer`
/// unless the package's exists by then), else by module name; an import cycle keeps the
/// name order for the rest.
fn import_order<'a>(index: &DefinitionIndex, blocks: &BTreeMap<&'a str, Block<'a>>) -> Vec<&'a str> {
    let path_module: BTreeMap<&str, &str> = blocks.values().map(|b| (b.path, b.module)).collect();
    let deps: BTreeMap<&str, Vec<&str>> = blocks
        .values()
        .map(|b| {
            let imports = index.files.get(b.path).map(|f| f.imports.as_slice()).unwrap_or(&[]);
            let mut on: Vec<&str> = imports
                .iter()
                .filter(|i| i.module_level)
                .filter_map(|i| i.resolved_path.as_deref().and_then(|p| path_module.get(p).copied()))
                .filter(|m| *m != b.module)
                .collect();
            on.sort();
            on.dedup();
            (b.module, on)
        })
        .collect();
    let mut order: Vec<&str> = Vec::new();
    while order.len() < blocks.len() {
        let ready = deps
            .iter()
            .filter(|(m, _)| !order.contains(m))
            .find(|(_, on)| on.iter().all(|d| order.contains(d)))
            .map(|(m, _)| *m);
        match ready {
            Some(m) => order.push(m),
            None => order.extend(deps.keys().filter(|m| !order.contains(m)).copied().collect::<Vec<_>>()),
        }
    }
    order
}

/// The names of the feature its own code reaches through another module's attribute
/// (`formatter.validate_options` in sqlparse's `format`, where `formatter` is the project's
/// module; `filters.SerializerUnicode`, which the package `filters` imports from a module of
/// its own; `sql.Statement`, a class the project keeps with a masked base): `(module,
/// attribute, name)` for the name's home and each module that imports it by name, sorted. The
/// reference binds each there in place of nothing or of the project's own copy, as soon as
/// the name is defined (later blocks may name it while they load). A package written from scratch calls its own functions; the project's code that
/// stays reaches the feature through the rewritten tests' bindings (`project_bindings`).
fn through_modules(
    index: &DefinitionIndex,
    blocks: &BTreeMap<&str, Block<'_>>,
    names: &[(String, String)],
) -> Vec<(String, String, String)> {
    let home = |id: &str| -> Option<(String, String)> {
        let d = index.get(id).filter(|d| d.parent.is_none())?;
        let module = index.files.get(&d.path)?.module.clone()?;
        Some((module, d.name.clone()))
    };
    let mut reached: BTreeMap<String, (String, String)> = BTreeMap::new();
    for block in blocks.values() {
        for d in &block.defs {
            let nested = format!("{}.", d.id);
            let inside = index.definitions.values().filter(|n| n.id == d.id || n.id.starts_with(&nested));
            for target in inside.flat_map(|n| n.references.iter()) {
                if let Some((module, name)) = home(target).filter(|(m, _)| m != block.module)
                    && names.iter().any(|(m, n)| *m == module && *n == name)
                {
                    reached.insert(target.clone(), (module, name));
                }
            }
        }
    }
    let mut out: std::collections::BTreeSet<(String, String, String)> =
        reached.values().map(|(m, n)| (m.clone(), n.clone(), n.clone())).collect();
    for file in index.files.values().filter(|f| !f.is_test && f.language == crate::Language::Python) {
        let Some(module) = &file.module else { continue };
        for imp in file.imports.iter().filter(|i| i.module_level) {
            for n in &imp.names {
                let Some(target) = super::super::resolve_imported_name(index, imp, n) else { continue };
                if let Some((_, name)) = reached.get(&target) {
                    out.insert((module.clone(), n.alias.clone().unwrap_or_else(|| n.name.clone()), name.clone()));
                }
            }
        }
    }
    out.into_iter().collect()
}

/// The reference `__init__.py` for `names` (`(module, name)`, sorted), reading the original
/// text under `root`.
pub fn standalone(
    root: &std::path::Path,
    index: &DefinitionIndex,
    names: &[(String, String)],
) -> Result<String, String> {
    let mut blocks: BTreeMap<&str, Block> = BTreeMap::new();
    for (module, name) in names {
        let defs = top_definitions(index, module, name);
        let Some(first) = defs.first() else {
            return Err(format!("`{name}` is not a module-level definition of `{module}` in the index"));
        };
        let block =
            blocks.entry(module.as_str()).or_insert_with(|| Block { module, path: &first.path, defs: Vec::new() });
        block.defs.extend(defs);
    }
    let mut out = String::from(LOADER);
    let attributes = through_modules(index, &blocks, names);
    if !attributes.is_empty() {
        out.push_str("\n# The feature's own code names these through the project's modules, which lack them.\n");
        out.push_str("_ATTRIBUTES.update({\n");
        let mut by_name: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for (module, attribute, name) in &attributes {
            by_name.entry(name).or_default().push(format!("({}, {})", literal(module), literal(attribute)));
        }
        for (name, homes) in by_name {
            let _ = writeln!(out, "    {}: [{}],", literal(name), homes.join(", "));
        }
        out.push_str("})\n");
    }
    out.push_str("\n_BLOCKS = [\n");
    let order = import_order(index, &blocks);
    for module in order {
        let Some(block) = blocks.get_mut(module) else { continue };
        block.defs.sort_by_key(|d| d.span.start_byte);
        let text = std::fs::read_to_string(root.join(block.path))
            .map_err(|e| format!("cannot read {} for the reference: {e}", block.path))?;
        let mut defined: Vec<String> = block.defs.iter().map(|d| literal(&d.name)).collect();
        defined.dedup();
        let _ = writeln!(out, "    ({}, {}, ({},), (", literal(block.module), literal(block.path), defined.join(", "));
        let mut code = future_lines(&text);
        if let Some(file) = index.files.get(block.path) {
            code.push_str(&import_lines(file, &text));
            code.push('\n');
        }
        for d in &block.defs {
            let body = text.get(d.span.start_byte..d.span.end_byte).ok_or_else(|| {
                format!("{} spans bytes {}..{} beyond {}", d.id, d.span.start_byte, d.span.end_byte, block.path)
            })?;
            code.push_str(body);
            code.push_str("\n\n\n");
        }
        for line in code.split_inclusive('\n') {
            let _ = writeln!(out, "        {}", literal(line));
        }
        out.push_str("    )),\n");
    }
    out.push_str("]\n");
    out.push_str(RUN_ALL);
    for (_, name) in names {
        let _ = writeln!(out, "{name} = _FEATURE[{}]", literal(name));
    }
    out.push_str("\n__all__ = [");
    out.push_str(&names.iter().map(|(_, n)| literal(n)).collect::<Vec<_>>().join(", "));
    out.push_str("]\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A package `p` whose module `p.m` is `text`, and its index.
    fn package_p_m(text: &str) -> (tempfile::TempDir, DefinitionIndex) {
        let dir = tempfile::tempdir().unwrap();
        carve_testutil::write_files(dir.path(), &[("p/m.py", text), ("p/__init__.py", "")]);
        let index = DefinitionIndex::build(dir.path(), &Default::default()).unwrap();
        (dir, index)
    }

    /// `tests/test_m.py`, whose text is `test`, as Level 2 rewrites it for `extracted`.
    fn rewritten_test(test: &str, index: &DefinitionIndex, extracted: &std::collections::BTreeSet<String>) -> String {
        let file = &index.files["tests/test_m.py"];
        let edits = super::super::rewrite_imports_for_level2(test, file, index, extracted, "agent_code");
        crate::edit::apply(test, &edits).unwrap()
    }

    /// `reference` as `agent_code/__init__.py` under `dir`, then `python3 -c code` there: it
    /// must succeed.
    fn run_package(dir: &std::path::Path, reference: &str, code: &str) {
        std::fs::create_dir_all(dir.join("agent_code")).unwrap();
        std::fs::write(dir.join("agent_code/__init__.py"), reference).unwrap();
        let out = std::process::Command::new("python3").args(["-c", code]).current_dir(dir).output().expect("python3");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    /// `p.m.api` and `p.n.twice` stay and call `helper`, which is the feature: the rewritten
    /// test binds the project's names of `helper` (in `p.m`, and where `p.n` imports it) to the
    /// package's, so the project's code that stays runs the package's `helper`. Without the
    /// binding, `api` finds no `helper` in the masked `p.m` (a `NameError`), and no package
    /// could pass; an empty package fails at the binding.
    #[test]
    fn code_that_stays_calls_the_package_s_objects_through_the_rewritten_tests() {
        let dir = tempfile::tempdir().unwrap();
        let m = "def helper(x):\n    return x * 2\n\n\ndef api(x):\n    return helper(x) + 1\n";
        let n = "from .m import helper\n\n\ndef twice(x):\n    return helper(helper(x))\n";
        let test = "from p.m import api, helper\nfrom p.n import twice\n\n\ndef test_api():\n    assert api(2) == 5\n    \
                    assert helper(1) == 2\n    assert twice(1) == 4\n";
        let files = [("p/__init__.py", ""), ("p/m.py", m), ("p/n.py", n), ("tests/test_m.py", test)];
        carve_testutil::write_files(dir.path(), &files);
        let index = DefinitionIndex::build(dir.path(), &Default::default()).unwrap();
        let extracted: std::collections::BTreeSet<String> = ["p/m.py::helper".to_string()].into();
        let bindings = super::super::project_bindings(&index, &extracted);
        let expected =
            [("p.m", "helper", "helper"), ("p.n", "helper", "helper")].map(|(a, b, c)| (a.into(), b.into(), c.into()));
        assert_eq!(bindings, expected);
        let rewritten = rewritten_test(test, &index, &extracted);
        let reference = standalone(dir.path(), &index, &[("p.m".into(), "helper".into())]).unwrap();
        // The project as the task leaves it: `helper` and the import of it gone.
        carve_testutil::write_files(
            dir.path(),
            &[
                ("p/m.py", "def api(x):\n    return helper(x) + 1\n"),
                ("p/n.py", "def twice(x):\n    return helper(helper(x))\n"),
                ("tests/test_m.py", &rewritten),
            ],
        );
        let run = "import sys; sys.path.insert(0, 'tests'); import test_m; test_m.test_api()";
        run_package(dir.path(), &reference, run);
        std::fs::write(dir.path().join("agent_code/__init__.py"), "").unwrap();
        let out = std::process::Command::new("python3").args(["-c", run]).current_dir(dir.path()).output().unwrap();
        assert!(!out.status.success(), "an empty package passes:\n{rewritten}");
    }

    /// `p.api.run` (the feature) calls `checks.validate` through the project's package
    /// `p.checks`, which imports it from `p.checks.core` (sqlparse's `format` calling
    /// `formatter.validate_options` and `filters.SerializerUnicode`); both are the feature, so
    /// the masked modules lack `validate`. The reference binds it in both, so the feature's own
    /// code runs; without the bindings `run` fails with an `AttributeError`.
    #[test]
    fn the_feature_s_names_its_code_reaches_through_a_module_are_bound_there() {
        let dir = tempfile::tempdir().unwrap();
        let api = "from p import checks\n\n\ndef run(x):\n    return checks.validate(x) * 2\n";
        let core = "def validate(x):\n    assert x > 0\n    return x\n\n\ndef other():\n    return 1\n";
        let files = [
            ("p/__init__.py", ""),
            ("p/api.py", api),
            ("p/checks/__init__.py", "from .core import validate, other\n"),
            ("p/checks/core.py", core),
        ];
        carve_testutil::write_files(dir.path(), &files);
        let index = DefinitionIndex::build(dir.path(), &Default::default()).unwrap();
        let names = [("p.api".to_string(), "run".to_string()), ("p.checks.core".to_string(), "validate".to_string())];
        let reference = standalone(dir.path(), &index, &names).unwrap();
        let bound = "    \"validate\": [(\"p.checks\", \"validate\"), (\"p.checks.core\", \"validate\")],\n";
        assert!(reference.contains(bound), "{reference}");
        assert!(!reference.contains("\"run\": ["), "only names reached through a module: {reference}");
        // The project as the task leaves it: both definitions gone, and the import of one.
        carve_testutil::write_files(
            dir.path(),
            &[
                ("p/api.py", "from p import checks\n"),
                ("p/checks/__init__.py", "from .core import other\n"),
                ("p/checks/core.py", "def other():\n    return 1\n"),
            ],
        );
        run_package(dir.path(), &reference, "import agent_code; assert agent_code.run(2) == 4");
    }

    /// `Base.size` is the feature, so the package takes `Base` whole; `Sub(Base)` stays, and
    /// the project's `make`, which stays, builds `Sub`s (sqlparse's engine building
    /// `Statement(TokenList)`): the package provides `Sub` too and the rewritten test binds
    /// the project's name to it, so `make` builds the package's `Sub`. Without it, `make`
    /// builds the project's `Sub`, whose masked base has no `size`, and no package could pass.
    #[test]
    fn a_subclass_the_project_builds_comes_from_the_package_too() {
        let dir = tempfile::tempdir().unwrap();
        let m = "class Base:\n    def __init__(self, n):\n        self.n = n\n\n    def size(self):\n        return self.n\n\n\n\
                 class Sub(Base):\n    def twice(self):\n        return Sub(self.n * 2)\n\n\ndef make(n):\n    return Sub(n)\n";
        let test = "from p.m import make\n\n\ndef test_make():\n    assert make(2).size() == 2\n";
        carve_testutil::write_files(dir.path(), &[("p/__init__.py", ""), ("p/m.py", m), ("tests/test_m.py", test)]);
        let index = DefinitionIndex::build(dir.path(), &Default::default()).unwrap();
        let extracted: std::collections::BTreeSet<String> = ["p/m.py::Base.size".to_string()].into();
        let classes = super::super::package_classes(&index, &extracted);
        assert_eq!(classes, ["p/m.py::Base".to_string(), "p/m.py::Sub".to_string()].into());
        let bindings = super::super::project_bindings(&index, &extracted);
        assert!(bindings.contains(&("p.m".into(), "Sub".into(), "Sub".into())), "{bindings:?}");
        let rewritten = rewritten_test(test, &index, &extracted);
        let names = [("p.m".to_string(), "Base".to_string()), ("p.m".to_string(), "Sub".to_string())];
        let reference = standalone(dir.path(), &index, &names).unwrap();
        let masked = "class Base:\n    def __init__(self, n):\n        self.n = n\n\n\nclass Sub(Base):\n    def twice(self):\n        \
                      return Sub(self.n * 2)\n\n\ndef make(n):\n    return Sub(n)\n";
        carve_testutil::write_files(dir.path(), &[("p/m.py", masked), ("tests/test_m.py", &rewritten)]);
        let run = "import sys; sys.path.insert(0, 'tests'); import test_m; test_m.test_make()";
        run_package(dir.path(), &reference, run);
    }

    /// The feature's `build` makes `m.Sub(n)` through the project's module, and `Sub` stays
    /// in the project deriving from `Base`, which the package takes whole (sqlparse's
    /// statement splitter building `sql.Statement`): the project's `p.m.Sub` exists, masked,
    /// and is replaced by the package's; without that `build` returns an object without `size`.
    #[test]
    fn the_project_s_own_copy_of_a_package_class_is_replaced_where_the_feature_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let m = "class Base:\n    def __init__(self, n):\n        self.n = n\n\n    def size(self):\n        return self.n\n\n\n\
                 class Sub(Base):\n    pass\n";
        let api = "from p import m\n\n\ndef build(n):\n    return m.Sub(n)\n";
        carve_testutil::write_files(dir.path(), &[("p/__init__.py", ""), ("p/m.py", m), ("p/api.py", api)]);
        let index = DefinitionIndex::build(dir.path(), &Default::default()).unwrap();
        let names = [
            ("p.api".to_string(), "build".to_string()),
            ("p.m".to_string(), "Base".to_string()),
            ("p.m".to_string(), "Sub".to_string()),
        ];
        let reference = standalone(dir.path(), &index, &names).unwrap();
        assert!(reference.contains("    \"Sub\": [(\"p.m\", \"Sub\")],\n"), "{reference}");
        let masked = "class Base:\n    def __init__(self, n):\n        self.n = n\n\n\nclass Sub(Base):\n    pass\n";
        carve_testutil::write_files(dir.path(), &[("p/m.py", masked), ("p/api.py", "from p import m\n")]);
        run_package(dir.path(), &reference, "import agent_code; assert agent_code.build(2).size() == 2");
    }

    /// `Kind.__contains__` and `Kind.__repr__` are the feature, so the package takes `Kind`
    /// whole; the project keeps `Kind`, masked, and made `ROOT` and `SPACE` of it at import
    /// (sqlparse's `tokens.py`: `Token = _TokenType()`, `Whitespace = Token.Text.Whitespace`),
    /// and its own `p.api.blank` asks `kind in SPACE`. The package's members go into the
    /// project's class, so those instances have them: a new class in its place (as before)
    /// left `SPACE` without `__contains__`, and `in` tested the tuple's items. `__repr__`'s
    /// `super()` then names the project's class. `Tag` has its own slots, so it is replaced.
    #[test]
    fn a_class_the_project_keeps_gets_the_package_s_members_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let members = "    def __contains__(self, item):\n        return item[:len(self)] == self\n\n\
                       \x20   def __repr__(self):\n        return 'Kind' + super().__repr__()\n\n";
        let kind = "class Kind(tuple):\n    def __getattr__(self, name):\n        new = Kind(self + (name,))\n        \
                    setattr(self, name, new)\n        return new\n\n";
        let rest = "\nclass Tag:\n    __slots__ = ('name', 'size')\n\n    def __init__(self, name):\n        self.name = name\n\n\n\
                    ROOT = Kind()\nSPACE = ROOT.Space\n";
        let api = "from p.kinds import SPACE\n\n\ndef blank(kind):\n    return kind in SPACE\n";
        let original = format!("{kind}{members}{rest}");
        let files = [("p/__init__.py", ""), ("p/kinds.py", original.as_str()), ("p/api.py", api)];
        carve_testutil::write_files(dir.path(), &files);
        let index = DefinitionIndex::build(dir.path(), &Default::default()).unwrap();
        let names = [("p.kinds".to_string(), "Kind".to_string()), ("p.kinds".to_string(), "Tag".to_string())];
        let reference = standalone(dir.path(), &index, &names).unwrap();
        let masked_rest = rest.replace("__slots__ = ('name', 'size')", "__slots__ = ('name',)");
        let masked = format!("{kind}{masked_rest}");
        carve_testutil::write_files(dir.path(), &[("p/kinds.py", &masked)]);
        let run = "import agent_code\nfrom p import kinds\nfrom p.api import blank\n\
                   assert agent_code.Kind is kinds.Kind is type(kinds.SPACE)\n\
                   assert blank(kinds.ROOT.Space.Tab) and not blank(kinds.ROOT.Word)\n\
                   assert repr(kinds.ROOT.Word) == \"Kind('Word',)\", repr(kinds.ROOT.Word)\n\
                   assert agent_code.Tag is not kinds.Tag and agent_code.Tag.__slots__ == ('name', 'size')\n";
        run_package(dir.path(), &reference, run);
    }

    /// `Node.describe` and `Leaf.describe` are the feature; the project keeps both classes,
    /// masked, and made `LEAF` at import. The package's `Leaf` derives from the package's
    /// `Node`, whose members went into the project's `Node`: it counts as the same base, so
    /// `Leaf`'s members go into the project's `Leaf` too, and `super()` in them names the
    /// project's classes while the package's own keep theirs (sqlparse's `TokenList(Token)`).
    /// `Twig(Node)`, which the project lost whole, derives from the project's `Node` (sqlparse's
    /// `Identifier(TokenList)`: two `TokenList`s made `isinstance` false in the grouping).
    #[test]
    fn a_kept_subclass_of_a_completed_class_is_completed_too() {
        let dir = tempfile::tempdir().unwrap();
        let node = "class Node:\n    def __init__(self, value):\n        self.value = value\n\n";
        let leaf = "\nclass Leaf(Node):\n    def __init__(self, value):\n        super().__init__(value)\n\n";
        let node_feature = "    def describe(self):\n        return f'node {self.value}'\n\n";
        let leaf_feature = "    def describe(self):\n        return 'leaf ' + super().describe()\n\n";
        let twig = "\nclass Twig(Node):\n    pass\n\n";
        let original = format!("{node}{node_feature}{leaf}{leaf_feature}{twig}\nLEAF = Leaf(1)\n");
        carve_testutil::write_files(dir.path(), &[("p/__init__.py", ""), ("p/tree.py", original.as_str())]);
        let index = DefinitionIndex::build(dir.path(), &Default::default()).unwrap();
        let names = ["Node", "Leaf", "Twig"].map(|n| ("p.tree".to_string(), n.to_string()));
        let reference = standalone(dir.path(), &index, &names).unwrap();
        carve_testutil::write_files(dir.path(), &[("p/tree.py", &format!("{node}{leaf}\nLEAF = Leaf(1)\n"))]);
        let run = "import agent_code\nfrom p import tree\nassert agent_code.Leaf is tree.Leaf\n\
                   assert tree.LEAF.describe() == 'leaf node 1'\nassert agent_code.Leaf(2).describe() == 'leaf node 2'\n\
                   assert isinstance(agent_code.Twig(3), tree.Node) and agent_code.Twig(3).describe() == 'node 3'\n";
        run_package(dir.path(), &reference, run);
    }

    /// `Compose.__name__` is a property of toolz's `Compose`, which the feature takes whole:
    /// setting it on the project's class fails ("can only assign string to
    /// Compose.__name__"), so such a class is replaced, as before, not completed.
    #[test]
    fn a_class_with_a_member_type_sets_itself_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let class = "class Compose:\n    def __init__(self, f):\n        self.f = f\n\n";
        let feature = "    @property\n    def __name__(self):\n        return self.f.__name__\n\n";
        carve_testutil::write_files(dir.path(), &[("p/__init__.py", ""), ("p/c.py", &format!("{class}{feature}"))]);
        let index = DefinitionIndex::build(dir.path(), &Default::default()).unwrap();
        let reference = standalone(dir.path(), &index, &[("p.c".to_string(), "Compose".to_string())]).unwrap();
        carve_testutil::write_files(dir.path(), &[("p/c.py", class)]);
        let run = "import agent_code\nfrom p import c\nassert agent_code.Compose is not c.Compose\n\
                   assert agent_code.Compose(len).__name__ == 'len'\n";
        run_package(dir.path(), &reference, run);
    }

    #[test]
    fn literals_escape_what_python_needs() {
        assert_eq!(literal("a \"b\" \\n\tc\n"), "\"a \\\"b\\\" \\\\n\\tc\\n\"");
        assert_eq!(literal("é\u{1}"), "\"é\\x01\"");
    }

    #[test]
    fn imports_are_bound_where_missing_and_still_there() {
        let text = "from __future__ import annotations\nimport os.path\nimport json as j\nfrom .a import b, c as d\nfrom .e import *\n\ndef f():\n    import sys\n";
        let (_dir, index) = package_p_m(text);
        let lines = import_lines(&index.files["p/m.py"], text);
        for (binding, statement) in [
            ("os", "import os.path"),
            ("j", "import json as j"),
            ("b", "from .a import b"),
            ("d", "from .a import c as d"),
            ("__carve_star__", "from .e import *"),
        ] {
            let block = format!("if \"{binding}\" not in globals():\n    try:\n        {statement}\n");
            assert!(lines.contains(&block), "{binding}: {lines}");
        }
        assert!(!lines.contains("sys") && !lines.contains("__future__"), "{lines}");
    }

    #[test]
    fn an_overloaded_function_comes_with_its_overloads_and_its_body() {
        let text = "from typing import overload\n\n@overload\ndef get(x: int) -> int: ...\n@overload\ndef get(x: str) -> str: ...\ndef get(x):\n    return x\n";
        let (dir, index) = package_p_m(text);
        let reference = standalone(dir.path(), &index, &[("p.m".into(), "get".into())]).unwrap();
        assert_eq!(reference.matches("\"def get(x):\\n\"").count(), 1, "{reference}");
        assert_eq!(reference.matches("\"@overload\\n\"").count(), 2, "{reference}");
        assert!(reference.contains("(\"p.m\", \"p/m.py\", (\"get\",), ("), "{reference}");
        // The package runs, and `get` is the function, not its last overload.
        run_package(dir.path(), &reference, "import agent_code; assert agent_code.get(3) == 3");
    }

    #[test]
    fn future_imports_come_along() {
        let text = "\"\"\"Doc.\"\"\"\n\nfrom __future__ import annotations\nimport os\n\ndef f() -> Later: ...\n";
        assert_eq!(future_lines(text), "from __future__ import annotations\n");
        assert_eq!(future_lines("import os\n"), "");
    }

    /// `p.a` makes the class `Signer` of `p.z` a class attribute while its class body runs (as
    /// itsdangerous' `Serializer.default_signer = Signer`): `p.z`'s block must run first, or
    /// the attribute keeps the project's (masked) `Signer`. By name, `p.a` would run first.
    #[test]
    fn a_block_runs_after_the_blocks_of_the_modules_it_imports() {
        let dir = tempfile::tempdir().unwrap();
        let a = "from .z import Signer\n\nclass Serializer:\n    signer = Signer\n\n    def sign(self, v):\n        \
                 return self.signer().sign(v)\n";
        let z = "class Signer:\n    def sign(self, v):\n        return f\"signed:{v}\"\n";
        carve_testutil::write_files(dir.path(), &[("p/__init__.py", ""), ("p/a.py", a), ("p/z.py", z)]);
        let index = DefinitionIndex::build(dir.path(), &Default::default()).unwrap();
        let names = [("p.a".to_string(), "Serializer".to_string()), ("p.z".to_string(), "Signer".to_string())];
        let reference = standalone(dir.path(), &index, &names).unwrap();
        let (z_at, a_at) = (reference.find("(\"p.z\"").unwrap(), reference.find("(\"p.a\"").unwrap());
        assert!(z_at < a_at, "{reference}");
        // The project as a task leaves it: `Signer.sign` masked. The package's `Serializer`
        // signs with the package's `Signer`.
        std::fs::write(dir.path().join("p/z.py"), "class Signer:\n    pass\n").unwrap();
        run_package(dir.path(), &reference, "import agent_code; assert agent_code.Serializer().sign(1) == 'signed:1'");
    }
}
