; Sylk tags for C (grown from tree-sitter-c's queries/tags.scm).
; Convention: see sylk/symbols.py. Like ctags' default C kinds, functions are
; definitions; prototypes are not symbols.

(function_definition
  declarator: [
    (function_declarator declarator: (identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
    (function_declarator
      declarator: (parenthesized_declarator
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))))
  ]) @definition.function

; include: _c_records

; include: _c_types

; include: _c_variables
