; TypeScript imports and exports. Statements are captured whole; the indexer reads their
; clauses (default, namespace and named imports; export lists; `export *`).
;
; Captures:
;   @import   an `import … from "…"` / `import "…"` statement
;   @export   an `export` statement that is not a declaration (`export { a as b }`,
;             `export … from "…"`, `export default x`)

(import_statement source: (string)) @import
(export_statement !declaration) @export

; CommonJS: `const x = require("./m")`, `const { a, b: c } = require("./m")`, and
; `module.exports = …` / `exports.name = …` at the top level.
;   @require   the declaration statement
;   @cjs       the assignment statement
(lexical_declaration
  (variable_declarator
    value: (call_expression
      function: (identifier) @require.fn
      arguments: (arguments . (string) .)))
  (#eq? @require.fn "require")) @require
(variable_declaration
  (variable_declarator
    value: (call_expression
      function: (identifier) @require.fn
      arguments: (arguments . (string) .)))
  (#eq? @require.fn "require")) @require
(program
  (expression_statement
    (assignment_expression
      left: (member_expression object: (_) @cjs.object)
      (#match? @cjs.object "^(module\\.)?exports$|^module$"))) @cjs)
