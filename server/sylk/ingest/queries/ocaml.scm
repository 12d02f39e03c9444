; Sylk tags for OCaml implementations, .ml (tree-sitter-ocaml, language_ocaml).
; Convention: see sylk/symbols.py. When two patterns match the same node and
; name, the earlier pattern wins, so specific patterns come first.
; Only a structure's own `let`s are definitions (file level, module bodies, and the
; items of an extension such as `[%%template ...]`): a `let ... in` inside an
; expression is local.

; let f x = ..., let f = fun x -> ..., let f = function ..., let ( +! ) a b = ...
(compilation_unit
  (value_definition
    (let_binding
      pattern: [(value_name) @name (parenthesized_operator (_) @name)]
      (parameter)) @definition.function))

(compilation_unit
  (value_definition
    (let_binding
      pattern: [(value_name) @name (parenthesized_operator (_) @name)]
      body: [(fun_expression) (function_expression)]) @definition.function))

(structure
  (value_definition
    (let_binding
      pattern: [(value_name) @name (parenthesized_operator (_) @name)]
      (parameter)) @definition.function))

(attribute_payload
  (value_definition
    (let_binding
      pattern: [(value_name) @name (parenthesized_operator (_) @name)]
      (parameter)) @definition.function))

(structure
  (value_definition
    (let_binding
      pattern: [(value_name) @name (parenthesized_operator (_) @name)]
      body: [(fun_expression) (function_expression)]) @definition.function))

(attribute_payload
  (value_definition
    (let_binding
      pattern: [(value_name) @name (parenthesized_operator (_) @name)]
      body: [(fun_expression) (function_expression)]) @definition.function))

; let x = ... : a value
(compilation_unit
  (value_definition
    (let_binding
      pattern: [(value_name) @name (parenthesized_operator (_) @name)]) @definition.variable))

(structure
  (value_definition
    (let_binding
      pattern: [(value_name) @name (parenthesized_operator (_) @name)]) @definition.variable))

(attribute_payload
  (value_definition
    (let_binding
      pattern: [(value_name) @name (parenthesized_operator (_) @name)]) @definition.variable))

; let x : t = ... (a typed pattern)
(compilation_unit
  (value_definition
    (let_binding
      pattern: (typed_pattern pattern: (value_name) @name)) @definition.variable))

(structure
  (value_definition
    (let_binding
      pattern: (typed_pattern pattern: (value_name) @name)) @definition.variable))

(attribute_payload
  (value_definition
    (let_binding
      pattern: (typed_pattern pattern: (value_name) @name)) @definition.variable))



; objects: methods and instance variables
(method_definition
  (method_name) @name) @definition.method

(instance_variable_definition
  (instance_variable_name) @name) @definition.field

; include: _ocaml
