; JavaScript names that may refer to definitions; see queries/typescript/references.scm.

(identifier) @reference
(shorthand_property_identifier) @reference

(member_expression
  object: (_) @reference.object
  property: (property_identifier) @reference.member)
