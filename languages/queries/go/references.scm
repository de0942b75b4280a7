; Go names a definition can use, and the local bindings that shadow package-level names.

; Plain names: functions, types, package-level values of the same package.
(identifier) @use
(type_identifier) @use

; `x.Name`: a package member when `x` is an import, else a field or method of a value.
(selector_expression operand: (_) @operand field: (field_identifier) @member)

; `pkg.Type` in type positions.
(qualified_type package: (package_identifier) @package name: (type_identifier) @qualified)

; Local bindings (inside a definition they shadow package-level names).
(parameter_declaration name: (identifier) @local)
(variadic_parameter_declaration name: (identifier) @local)
(short_var_declaration left: (expression_list (identifier) @local))
(range_clause left: (expression_list (identifier) @local))
(var_spec name: (identifier) @local)
(const_spec name: (identifier) @local)
(type_parameter_declaration name: (identifier) @local)
(type_spec name: (type_identifier) @local)
(labeled_statement label: (label_name) @local)

; Locals whose type is written next to them, for `x.Method` resolution.
(parameter_declaration name: (identifier) @typed_name type: (_) @typed_type)
(var_spec name: (identifier) @typed_name type: (_) @typed_type)
(short_var_declaration
  left: (expression_list . (identifier) @typed_name)
  right: (expression_list . [
    (composite_literal type: (_) @typed_type)
    (unary_expression operand: (composite_literal type: (_) @typed_type))
  ]))
