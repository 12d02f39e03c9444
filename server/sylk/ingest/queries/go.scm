; Sylk tags for Go (grown from tree-sitter-go's queries/tags.scm).
; Convention: see sylk/symbols.py. When two patterns match the same node and
; name, the earlier pattern wins, so specific patterns come first.

(function_declaration
  name: (identifier) @name) @definition.function

; func (p *Point[T]) Move() -> container Point
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @container
        (pointer_type (type_identifier) @container)
        (generic_type type: (type_identifier) @container)
        (pointer_type (generic_type type: (type_identifier) @container))
      ]))
  name: (field_identifier) @name) @definition.method

(method_declaration
  name: (field_identifier) @name) @definition.method

; --- types ---------------------------------------------------------------------

(type_spec
  name: (type_identifier) @name
  type: (struct_type)) @definition.struct

(type_spec
  name: (type_identifier) @name
  type: (interface_type)) @definition.interface

(type_spec
  name: (type_identifier) @name) @definition.type

(type_alias
  name: (type_identifier) @name) @definition.type

(field_declaration
  name: (field_identifier) @name) @definition.field

; embedded field: struct { io.Reader }
(field_declaration
  !name
  type: [
    (type_identifier) @name
    (qualified_type name: (type_identifier) @name)
    (pointer_type (type_identifier) @name)
    (pointer_type (qualified_type name: (type_identifier) @name))
  ]) @definition.field

(method_elem
  name: (field_identifier) @name) @definition.method

; --- package-level constants and variables -------------------------------------

(source_file
  (const_declaration
    (const_spec
      name: (identifier) @name) @definition.constant))

(source_file
  (var_declaration
    (var_spec
      name: (identifier) @name) @definition.variable))

(source_file
  (var_declaration
    (var_spec_list
      (var_spec
        name: (identifier) @name) @definition.variable)))
