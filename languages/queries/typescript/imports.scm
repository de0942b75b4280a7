; TypeScript imports and exports. Statements are captured whole; the indexer reads their
; clauses (default, namespace and named imports; export lists; `export *`).
;
; Captures:
;   @import   an `import … from "…"` / `import "…"` statement
;   @export   an `export` statement that is not a declaration (`export { a as b }`,
;             `export … from "…"`, `export default x`)

(import_statement source: (string)) @import
(export_statement !declaration) @export
