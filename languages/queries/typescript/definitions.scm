; TypeScript (and TSX) definitions, at any depth. The indexer reads each captured node's
; fields itself (parameters, return type, heritage, modifiers), so patterns stay small.
;
; Captures (read by languages/src/typescript/parse.rs):
;   @definition.function   function declarations (generators included)
;   @definition.overload   an overload signature (`function f(a: string): string;`, or a
;                          `method_signature` in a class body); merged into the
;                          implementation that follows it
;   @definition.class      class declarations, abstract or not, and `const C = class {}`
;   @definition.method     methods, getters, setters, constructors, abstract methods
;   @definition.field      class fields whose value is an arrow function / function expression
;   @definition.property   every other class field
;   @definition.variable   `const f = () => …` / `let g = function () {…}`
;   @definition.interface, @definition.type, @definition.enum, @definition.namespace
;   @definition.test       a `describe`/`it`/`test` call with a title and a callback (only
;                          kept in test files)
;   @name                  the defined name (the title string for tests)
;   @callee                the called function of a test call

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(function_signature name: (identifier) @name) @definition.overload
(class_body (method_signature name: (_) @name) @definition.overload)

(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(variable_declarator name: (identifier) @name value: (class)) @definition.class

; Methods of classes only: object-literal methods are parts of a value, not definitions.
(class_body (method_definition name: (_) @name) @definition.method)
(class_body (abstract_method_signature name: (_) @name) @definition.method)
(public_field_definition
  name: (_) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.field
; Other class fields (`readonly id: string`, `count = 0`); the indexer drops those whose
; value is a function (the pattern above).
(class_body (public_field_definition name: (_) @name) @definition.property)

(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.variable

(interface_declaration name: (type_identifier) @name) @definition.interface
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(internal_module name: (_) @name body: (statement_block)) @definition.namespace
(module name: (identifier) @name body: (statement_block)) @definition.namespace

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
