; `__all__ = [...]`, `__all__ = (...)` and `__all__ += [...]`: one match per string entry.
;
; Captures:
;   @export  the contents of one string literal in the list or tuple
;   @_all    the `__all__` target (checked by the predicate)

(assignment
  left: (identifier) @_all
  right: [
    (list (string (string_content) @export))
    (tuple (string (string_content) @export))
  ]
  (#eq? @_all "__all__"))

(augmented_assignment
  left: (identifier) @_all
  right: [
    (list (string (string_content) @export))
    (tuple (string (string_content) @export))
  ]
  (#eq? @_all "__all__"))
