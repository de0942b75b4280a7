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

/// The module-level definition `name` of the module `module`.
fn top_definition<'a>(index: &'a DefinitionIndex, module: &str, name: &str) -> Option<&'a Definition> {
    let file = index.files.values().find(|f| f.module.as_deref() == Some(module))?;
    file.definitions
        .iter()
        .filter_map(|id| index.definitions.get(id))
        .find(|d| d.parent.is_none() && d.name == name && !d.is_test)
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

/// The reference `__init__.py` for `names` (`(module, name)`, sorted), reading the original
/// text under `root`.
pub fn standalone(
    root: &std::path::Path,
    index: &DefinitionIndex,
    names: &[(String, String)],
) -> Result<String, String> {
    let mut blocks: BTreeMap<&str, Block> = BTreeMap::new();
    for (module, name) in names {
        let d = top_definition(index, module, name)
            .ok_or_else(|| format!("`{name}` is not a module-level definition of `{module}` in the index"))?;
        blocks.entry(module.as_str()).or_insert_with(|| Block { module, path: &d.path, defs: Vec::new() }).defs.push(d);
    }
    let mut out = String::from(
        "\"\"\"Reference solution: the feature's own code, run beside the project's modules as the task\n\
         leaves them (see carve's docs/formats.md, Level 2).\"\"\"\n\n\
         import importlib as _importlib\n\n\n\
         def _run(module, path, source):\n    \
         space = dict(vars(_importlib.import_module(module)))\n    \
         exec(compile(source, path, \"exec\"), space)\n    \
         return space\n\n",
    );
    let mut spaces = Vec::new();
    for (i, block) in blocks.values_mut().enumerate() {
        block.defs.sort_by_key(|d| d.span.start_byte);
        let text = std::fs::read_to_string(root.join(block.path))
            .map_err(|e| format!("cannot read {} for the reference: {e}", block.path))?;
        let _ = writeln!(out, "\n_s{i} = _run({}, {}, (", literal(block.module), literal(block.path));
        for d in &block.defs {
            let code = text.get(d.span.start_byte..d.span.end_byte).ok_or_else(|| {
                format!("{} spans bytes {}..{} beyond {}", d.id, d.span.start_byte, d.span.end_byte, block.path)
            })?;
            for line in format!("{code}\n\n\n").split_inclusive('\n') {
                let _ = writeln!(out, "    {}", literal(line));
            }
        }
        out.push_str("))\n");
        spaces.push(format!("_s{i}"));
    }
    out.push_str("\n# Each module's definitions see the others' (as the original imported them), in place of\n# the project's copies of the same definitions.\n_FEATURE = {\n");
    for (i, block) in blocks.values().enumerate() {
        for d in &block.defs {
            let _ = writeln!(out, "    {}: _s{i}[{}],", literal(&d.name), literal(&d.name));
        }
    }
    out.push_str("}\n");
    let _ = writeln!(
        out,
        "for _space in ({},):\n    for _name, _value in _FEATURE.items():\n        \
         _old = _space.get(_name)\n        \
         if _old is None or getattr(_old, \"__module__\", None) == getattr(_value, \"__module__\", None):\n            \
         _space[_name] = _value\n",
        spaces.join(", ")
    );
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

    #[test]
    fn literals_escape_what_python_needs() {
        assert_eq!(literal("a \"b\" \\n\tc\n"), "\"a \\\"b\\\" \\\\n\\tc\\n\"");
        assert_eq!(literal("é\u{1}"), "\"é\\x01\"");
    }
}
