; Go imports: one match per import spec, with its optional name (alias, `.` or `_`).

(import_spec name: (_)? @alias path: (_) @path) @import
