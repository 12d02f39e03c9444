; Part of the OCaml tags queries for .ml (ocaml.scm) and .mli (ocaml_interface.scm),
; included where each says `; include: _ocaml`: what a signature and a structure share
; (modules, module types, types, constructors, fields, exceptions, val, external,
; classes and class types).

; --- modules ---------------------------------------------------------------------

; module M = struct ... end, module F (X : S) = ..., module M : sig ... end, module rec A ... and B
; (not `module _ = ...`, a module evaluated for its effects: tests)
(module_binding
  (module_name) @name
  (#not-eq? @name "_")) @definition.module

(module_type_definition
  (module_type_name) @name) @definition.interface

; --- types -----------------------------------------------------------------------

; exception E of t (before the constructor pattern: the same node)
(exception_definition
  (constructor_declaration
    (constructor_name) @name) @definition.type)

(type_binding
  name: (type_constructor) @name
  body: (record_declaration)) @definition.struct

(type_binding
  name: (type_constructor) @name
  body: (variant_declaration)) @definition.enum

(type_binding
  name: (type_constructor) @name) @definition.type

(constructor_declaration
  [(constructor_name) @name
   (parenthesized_operator (_) @name)]) @definition.enum_member

(field_declaration
  (field_name) @name) @definition.field

; --- values ----------------------------------------------------------------------

; val f : a -> b is a function, val x : t a value
(value_specification
  [(value_name) @name (parenthesized_operator (_) @name)]
  type: [(function_type) (polymorphic_type (function_type))]) @definition.function

(value_specification
  [(value_name) @name (parenthesized_operator (_) @name)]) @definition.variable

(external
  [(value_name) @name (parenthesized_operator (_) @name)]) @definition.function

; --- classes ---------------------------------------------------------------------

(class_binding
  (class_name) @name) @definition.class

(class_type_binding
  (class_type_name) @name) @definition.interface

(method_specification
  (method_name) @name) @definition.method
