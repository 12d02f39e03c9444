; Sylk tags for Julia (tree-sitter-julia). A docstring above a definition is its doc
; (languages/julia.py ``doc_nodes``).
; Convention: see sylk/symbols.py. When two patterns match the same node and
; name, the earlier pattern wins, so specific patterns come first.
; Functions are methods of a generic function: `f(x::T)` defined outside a type
; is a function (container: its module), `Base.show(io, x::T)` is named show.
; An inner constructor (a function named as its struct, inside it) is a constructor.

; --- inner constructors --------------------------------------------------------

(struct_definition
  (type_head [(identifier) @_type (parametrized_type_expression . (identifier) @_type)])
  [
    (function_definition (signature [(call_expression . (identifier) @name) (where_expression . (call_expression . (identifier) @name))]))
    (assignment . [(call_expression . (identifier) @name) (where_expression . (call_expression . (identifier) @name))])
  ] @definition.constructor
  (#eq? @_type @name))

; --- definitions -----------------------------------------------------------------

(function_definition
  (signature
    [
    (call_expression
      .
      [(identifier) @name
       (field_expression (identifier) @name .)
       (parametrized_type_expression
         .
         [(identifier) @name
          (field_expression (identifier) @name .)])])
    (typed_expression . (call_expression
      .
      [(identifier) @name
       (field_expression (identifier) @name .)
       (parametrized_type_expression
         .
         [(identifier) @name
          (field_expression (identifier) @name .)])]))
    (where_expression . (call_expression
      .
      [(identifier) @name
       (field_expression (identifier) @name .)
       (parametrized_type_expression
         .
         [(identifier) @name
          (field_expression (identifier) @name .)])]))
    (where_expression . (typed_expression . (call_expression
      .
      [(identifier) @name
       (field_expression (identifier) @name .)
       (parametrized_type_expression
         .
         [(identifier) @name
          (field_expression (identifier) @name .)])])))
    (where_expression . (where_expression . (call_expression
      .
      [(identifier) @name
       (field_expression (identifier) @name .)
       (parametrized_type_expression
         .
         [(identifier) @name
          (field_expression (identifier) @name .)])])))
  ])) @definition.function

(function_definition
  (signature
    .
    [(identifier) @name
     (field_expression (identifier) @name .)]
    .)) @definition.function

(assignment
  .
  [
    (call_expression
      .
      [(identifier) @name
       (field_expression (identifier) @name .)
       (parametrized_type_expression
         .
         [(identifier) @name
          (field_expression (identifier) @name .)])])
    (typed_expression . (call_expression
      .
      [(identifier) @name
       (field_expression (identifier) @name .)
       (parametrized_type_expression
         .
         [(identifier) @name
          (field_expression (identifier) @name .)])]))
    (where_expression . (call_expression
      .
      [(identifier) @name
       (field_expression (identifier) @name .)
       (parametrized_type_expression
         .
         [(identifier) @name
          (field_expression (identifier) @name .)])]))
    (where_expression . (typed_expression . (call_expression
      .
      [(identifier) @name
       (field_expression (identifier) @name .)
       (parametrized_type_expression
         .
         [(identifier) @name
          (field_expression (identifier) @name .)])])))
    (where_expression . (where_expression . (call_expression
      .
      [(identifier) @name
       (field_expression (identifier) @name .)
       (parametrized_type_expression
         .
         [(identifier) @name
          (field_expression (identifier) @name .)])])))
  ]
  (operator) @_eq
  (#eq? @_eq "=")) @definition.function

(macro_definition
  (signature
    [
    (call_expression
      .
      [(identifier) @name
       (field_expression (identifier) @name .)
       (parametrized_type_expression
         .
         [(identifier) @name
          (field_expression (identifier) @name .)])])
    (typed_expression . (call_expression
      .
      [(identifier) @name
       (field_expression (identifier) @name .)
       (parametrized_type_expression
         .
         [(identifier) @name
          (field_expression (identifier) @name .)])]))
    (where_expression . (call_expression
      .
      [(identifier) @name
       (field_expression (identifier) @name .)
       (parametrized_type_expression
         .
         [(identifier) @name
          (field_expression (identifier) @name .)])]))
    (where_expression . (typed_expression . (call_expression
      .
      [(identifier) @name
       (field_expression (identifier) @name .)
       (parametrized_type_expression
         .
         [(identifier) @name
          (field_expression (identifier) @name .)])])))
    (where_expression . (where_expression . (call_expression
      .
      [(identifier) @name
       (field_expression (identifier) @name .)
       (parametrized_type_expression
         .
         [(identifier) @name
          (field_expression (identifier) @name .)])])))
  ])) @definition.macro

(struct_definition
  (type_head
    [(identifier) @name
     (parametrized_type_expression . (identifier) @name)
     (binary_expression . (identifier) @name)
     (binary_expression . (parametrized_type_expression . (identifier) @name))])) @definition.struct

(abstract_definition
  (type_head
    [(identifier) @name
     (parametrized_type_expression . (identifier) @name)
     (binary_expression . (identifier) @name)
     (binary_expression . (parametrized_type_expression . (identifier) @name))])) @definition.type

(primitive_definition
  (type_head
    [(identifier) @name
     (parametrized_type_expression . (identifier) @name)
     (binary_expression . (identifier) @name)
     (binary_expression . (parametrized_type_expression . (identifier) @name))])) @definition.type

(module_definition
  name: (identifier) @name) @definition.module

(const_statement
  (assignment
    .
    [(identifier) @name
     (typed_expression . (identifier) @name)
     (operator) @name])) @definition.constant

; struct fields: a, a::T, a::T = default (@kwdef), const a::T
(struct_definition
  (identifier) @name @definition.field)

(struct_definition
  (typed_expression
    .
    (identifier) @name) @definition.field)

(struct_definition
  (assignment
    .
    [(identifier) @name (typed_expression . (identifier) @name)]) @definition.field)

(struct_definition
  (const_statement
    (assignment . [(identifier) @name (typed_expression . (identifier) @name)])) @definition.field)

; @enum Color red green: the enum and its values
(macrocall_expression
  (macro_identifier (identifier) @_m)
  (macro_argument_list
    .
    [(identifier) @name (typed_expression . (identifier) @name)])
  (#eq? @_m "enum")) @definition.enum

(macrocall_expression
  (macro_identifier (identifier) @_m)
  (macro_argument_list
    (_)
    .
    (identifier) @name @definition.enum_member)
  (#eq? @_m "enum"))

; module-level globals: x = 1, global x = 1
(source_file
  (assignment
    .
    [(identifier) @name (typed_expression . (identifier) @name)]) @definition.variable)

(module_definition
  (assignment
    .
    [(identifier) @name (typed_expression . (identifier) @name)]) @definition.variable)

(global_statement
  (assignment
    .
    [(identifier) @name (typed_expression . (identifier) @name)])) @definition.variable

; what the module exports (visibility: exported when listed)
(export_statement (identifier) @exports)
(public_statement (identifier) @exports)
