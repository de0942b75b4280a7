; Python name uses, and the identifiers that are not uses.
;
; The Rust side (languages/src/python/index/parse.rs) walks the tree once: it takes every
; identifier and every maximal attribute chain `a.b.c` rooted at an identifier as a
; candidate use (the parts of a chain, `a`, `b`, `a.b`, and the names of a `dotted_name`
; are not uses: the chain stands for them), and runs these patterns only on nodes of their
; root kind. It keeps every candidate and every `@reference.*` capture that is not also
; captured as `@ignore`/`@local.*` and does not lie inside an `@ignore.range`, and
; attributes it to the innermost definition by byte position. Every pattern must start
; with a named node kind.
;
; Captures:
;   @reference.dotted a dotted name used as a value: the class of a `case C(...)` pattern
;   @reference.pattern a dotted name in a `case` pattern: a value when dotted
;                     (`case Color.RED`), a capture binding when a single name (`case x`)
;   @local.parameter  a parameter name of a `def` (local to that function)
;   @local.assign     a name bound by assignment, `for`, `with … as`, `except … as`, `:=`
;   @local.global     a name declared `global`/`nonlocal` (not local to the scope)
;   @ignore           an identifier that names something rather than using it
;   @ignore.range     a statement whose identifiers are never uses (imports)

; Parameters of functions.
(parameters (identifier) @local.parameter)
(parameters (default_parameter name: (identifier) @local.parameter))
(parameters (typed_parameter (identifier) @local.parameter))
(parameters (typed_default_parameter name: (identifier) @local.parameter))
(parameters (list_splat_pattern (identifier) @local.parameter))
(parameters (dictionary_splat_pattern (identifier) @local.parameter))
(parameters (typed_parameter (list_splat_pattern (identifier) @local.parameter)))
(parameters (typed_parameter (dictionary_splat_pattern (identifier) @local.parameter)))

; Parameters of lambdas: not uses; they do not shadow names of the enclosing function.
(lambda_parameters (identifier) @ignore)
(lambda_parameters (default_parameter name: (identifier) @ignore))
(lambda_parameters (list_splat_pattern (identifier) @ignore))
(lambda_parameters (dictionary_splat_pattern (identifier) @ignore))

; Bindings.
(assignment left: (identifier) @local.assign)
(assignment left: (pattern_list (identifier) @local.assign))
(assignment left: (tuple_pattern (identifier) @local.assign))
(assignment left: (list_pattern (identifier) @local.assign))
(augmented_assignment left: (identifier) @local.assign)
(for_statement left: (identifier) @local.assign)
(for_statement left: (pattern_list (identifier) @local.assign))
(for_statement left: (tuple_pattern (identifier) @local.assign))
(as_pattern_target (identifier) @local.assign)
(as_pattern_target (tuple (identifier) @local.assign))
(as_pattern_target (list (identifier) @local.assign))
(named_expression name: (identifier) @local.assign)

; Comprehension variables: stores, scoped to the comprehension.
(for_in_clause left: (identifier) @ignore)
(for_in_clause left: (pattern_list (identifier) @ignore))
(for_in_clause left: (tuple_pattern (identifier) @ignore))

(global_statement (identifier) @local.global)
(nonlocal_statement (identifier) @local.global)

; Names that are not uses.
(function_definition name: (identifier) @ignore)
(class_definition name: (identifier) @ignore)
(keyword_argument name: (identifier) @ignore)

(import_statement) @ignore.range
(import_from_statement) @ignore.range
(future_import_statement) @ignore.range

; `match` patterns: class patterns and dotted value patterns are uses, names bind.
(class_pattern (dotted_name) @reference.dotted)
(case_pattern (dotted_name) @reference.pattern)
(keyword_pattern . (identifier) @ignore)
(splat_pattern (identifier) @local.assign)
(as_pattern (case_pattern) (identifier) @local.assign)
