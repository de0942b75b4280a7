; JavaScript definitions (.js, .jsx, .mjs, .cjs): the TypeScript patterns without types.
; Same captures as queries/typescript/definitions.scm.

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function

(class_declaration name: (identifier) @name) @definition.class
(variable_declarator name: (identifier) @name value: (class)) @definition.class

; Methods of classes only: object-literal methods are parts of a value, not definitions.
(class_body (method_definition name: (_) @name) @definition.method)
(field_definition
  property: (_) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.field
(class_body (field_definition property: (_) @name) @definition.property)

(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.variable

(call_expression
  function: [(identifier) (member_expression)] @callee
  arguments: (arguments
    .
    [(string) (template_string)] @name
    .
    [(arrow_function) (function_expression)])) @definition.test

; CommonJS: `exports.f = function () {…}`, `module.exports.f = () => …`.
(assignment_expression
  left: (member_expression
    object: (_) @cjs.object
    property: (property_identifier) @name)
  right: [(arrow_function) (function_expression) (generator_function)]
  (#match? @cjs.object "^(module\\.)?exports$")) @definition.variable
