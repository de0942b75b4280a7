; Python definitions: every function and class, at any depth (module level, in class
; bodies, nested in functions, inside if/try blocks).
;
; Captures (read by languages/src/python/index/parse.rs):
;   @definition.function / @definition.class  the `def`/`class` node itself; a
;                                             `decorated_definition` parent, if any, is the
;                                             definition's full span
;   @name        the defined name
;   @parameters  the parameter list (functions)
;   @returns     the return annotation (functions, optional)
;   @bases       the superclass argument list (classes, optional)
;   @type_parameters  PEP 695 type parameters `[T: int, *Ts]` (optional)
;   @body        the block

(function_definition
  name: (identifier) @name
  type_parameters: (type_parameter)? @type_parameters
  parameters: (parameters) @parameters
  return_type: (type)? @returns
  body: (block) @body) @definition.function

(class_definition
  name: (identifier) @name
  type_parameters: (type_parameter)? @type_parameters
  superclasses: (argument_list)? @bases
  body: (block) @body) @definition.class
