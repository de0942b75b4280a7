//! vitest / jest / node:test ids (`path > describe > test`) to the blocks they name.

use crate::index::{DefinitionIndex, NodeId};

/// vitest/jest/node:test `path > describe > test`: the block with those titles.
pub(crate) fn js_test(index: &DefinitionIndex, path: &str, rest: &str) -> Result<Vec<NodeId>, String> {
    let Some(file) = index.files.get(path) else {
        return Err(format!("{path} is not an indexed file"));
    };
    let qual = rest.split(" > ").collect::<Vec<_>>().join(".");
    let found: Vec<NodeId> = crate::interface::named_in_file(index, file, &qual)
        .into_iter()
        .filter(|id| index.get(id).is_some_and(|d| d.is_test))
        .collect();
    if found.is_empty() {
        return Err(format!(
            "{path} has no `describe`/`it`/`test` block titled `{rest}` with a literal title (tests made by \
             `.each`, loops or computed titles have no block of their own; remove the whole file instead)"
        ));
    }
    Ok(found)
}
