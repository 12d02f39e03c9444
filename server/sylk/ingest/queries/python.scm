; Sylk tags for Python (grown from tree-sitter-python's queries/tags.scm).
; Convention: see sylk/symbols.py.

(class_definition
  name: (identifier) @name
  body: (block . (expression_statement (string) @doc)?)) @definition.class

(function_definition
  name: (identifier) @name
  body: (block . (expression_statement (string) @doc)?)) @definition.function

; f = lambda x: ... (before the constant and field patterns: earlier patterns win)
(expression_statement
  (assignment
    left: (identifier) @name
    right: (lambda))) @definition.function

; Module-level constants: UPPER_CASE = ...
(module
  (expression_statement
    (assignment
      left: (identifier) @name
      (#match? @name "^[A-Z][A-Z0-9_]*$"))) @definition.constant)

; Class attributes: x = ... / x: int = ... directly in a class body
(class_definition
  body: (block
    (expression_statement
      (assignment
        left: (identifier) @name)) @definition.field))
