; Go definitions: top-level functions, methods and type declarations (struct, interface,
; named types, aliases). Only direct children of the file: Go has no nested named
; declarations that other files can reach.

(source_file
  (function_declaration name: (identifier) @name) @function)

(source_file
  (method_declaration receiver: (parameter_list) @receiver name: (field_identifier) @name) @method)

(source_file
  (type_declaration (type_spec name: (type_identifier) @name type: (_) @type) @type_spec) @type_declaration)

(source_file
  (type_declaration (type_alias name: (type_identifier) @name type: (_) @type) @type_spec) @type_declaration)
