; JavaScript imports and exports; see queries/typescript/imports.scm.

(import_statement source: (string)) @import
(export_statement !declaration) @export
