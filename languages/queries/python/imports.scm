; Python import statements, one match per imported name (matches of one statement are
; grouped by the statement node in Rust).
;
; Captures:
;   @import         `import a.b, c as d`            (one match per module)
;   @import.from    `from .m import x, y as z`      (one match per name)
;   @import.future  `from __future__ import x`
;   @module         the dotted module of a plain import
;   @from           the module of a from-import as written (`.m`, `..`, `pkg.m`)
;   @name           an imported name
;   @alias          its `as` alias
;   @item           the whole item (`a.b as c`, `y as z`, `*`), for per-name spans
;   @wildcard       `*`

(import_statement
  name: [
    (dotted_name) @module
    (aliased_import
      name: (dotted_name) @module
      alias: (identifier) @alias)
  ] @item) @import

(import_from_statement
  module_name: (_) @from
  name: [
    (dotted_name) @name
    (aliased_import
      name: (dotted_name) @name
      alias: (identifier) @alias)
  ] @item) @import.from

(import_from_statement
  module_name: (_) @from
  (wildcard_import) @item @wildcard) @import.from

(future_import_statement
  name: [
    (dotted_name) @name
    (aliased_import
      name: (dotted_name) @name
      alias: (identifier) @alias)
  ] @item) @import.future
