; TypeScript names that may refer to definitions. The indexer drops the names that
; declare something (definition names, import and export specifiers) and resolves the
; rest through scopes and ES imports (languages/src/typescript/link.rs).
;
; Captures:
;   @reference         a bare name: value or type
;   @reference.object  the object of `obj.member` / `Ns.Type` (its kind decides how the
;                      member is looked up: `this`, a name, or anything else)
;   @reference.member  the member name

(identifier) @reference
(type_identifier) @reference
(shorthand_property_identifier) @reference

(member_expression
  object: (_) @reference.object
  property: (property_identifier) @reference.member)

(nested_type_identifier
  module: (_) @reference.object
  name: (type_identifier) @reference.member)
