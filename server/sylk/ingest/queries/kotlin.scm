; Sylk tags for Kotlin (tree-sitter-kotlin 1.x, the tree-sitter-grammars one).
; Convention: see sylk/symbols.py. When two patterns match the same node and
; name, the earlier pattern wins, so specific patterns come first.
; Annotations sit in the declaration's own (modifiers), so a definition's
; range starts at its first annotation.

; interface I / fun interface I
(class_declaration
  "interface"
  name: (identifier) @name) @definition.interface

; enum class E { A, B }
(class_declaration
  name: (identifier) @name
  (enum_class_body)) @definition.enum

; class, data/value/sealed/annotation/inner class
(class_declaration
  name: (identifier) @name) @definition.class

; object O, companion object Named: singletons, classes here
(object_declaration
  name: (identifier) @name) @definition.class

(companion_object
  name: (identifier) @name) @definition.class

(enum_entry
  .
  (identifier) @name) @definition.enum_member

; fun f(), fun T.ext(): methods when directly in a class body
(function_declaration
  name: (identifier) @name) @definition.function

; constructor(x: Int) : this(...): named by its keyword
(secondary_constructor
  "constructor" @name) @definition.constructor

(type_alias
  type: (identifier) @name) @definition.type

; const val X = 1 at the top level or in an object / class body
(source_file
  (property_declaration
    (modifiers
      (property_modifier) @_const)
    (variable_declaration
      (identifier) @name)
    (#eq? @_const "const")) @definition.constant)

(class_body
  (property_declaration
    (modifiers
      (property_modifier) @_const)
    (variable_declaration
      (identifier) @name)
    (#eq? @_const "const")) @definition.constant)

; val/var at the top level or in a class body (never a local in a function)
(source_file
  (property_declaration
    (variable_declaration
      (identifier) @name)) @definition.property)

(class_body
  (property_declaration
    (variable_declaration
      (identifier) @name)) @definition.property)

(enum_class_body
  (property_declaration
    (variable_declaration
      (identifier) @name)) @definition.property)

; class A(val x: Int, var y: Int): constructor properties (not plain parameters)
(class_parameter
  ["val" "var"]
  .
  (identifier) @name) @definition.property
