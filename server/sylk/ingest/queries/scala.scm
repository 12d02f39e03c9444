; Sylk tags for Scala 2 and 3 (tree-sitter-scala).
; Convention: see sylk/symbols.py. When two patterns match the same node and
; name, the earlier pattern wins, so specific patterns come first.
; Annotations are children of the definitions they annotate, so a definition's
; range starts at its first annotation. A package clause is no symbol (read as
; the file's package); an object is a class here (a singleton), a package object
; a module.

(class_definition
  name: (identifier) @name) @definition.class

(object_definition
  name: (identifier) @name) @definition.class

(package_object
  name: (identifier) @name) @definition.module

(trait_definition
  name: (identifier) @name) @definition.trait

(enum_definition
  name: (identifier) @name) @definition.enum

(simple_enum_case
  name: (identifier) @name) @definition.enum_member

(full_enum_case
  name: (identifier) @name) @definition.enum_member

; def this(...) = this(...): an auxiliary constructor
(function_definition
  name: (identifier) @name
  (#eq? @name "this")) @definition.constructor

; def f(...) = ...: a method when directly in a class, object or trait body
(function_definition
  name: (identifier) @name) @definition.function

; def f(...): T (abstract)
(function_declaration
  name: (identifier) @name) @definition.function

; type T = ..., opaque type T, abstract type T
(type_definition
  name: (type_identifier) @name) @definition.type

; given intOrd: Ord[Int] with {...}
(given_definition
  name: (identifier) @name) @definition.property

; val/var members (class, object, trait, package object, top level in Scala 3,
; package blocks), never a local in a block
(template_body
  [(val_definition
     pattern: [
       (identifier) @name
       (identifiers (identifier) @name)
     ])
   (var_definition
     pattern: [
       (identifier) @name
       (identifiers (identifier) @name)
     ])
   (val_declaration
     name: (identifier) @name)
   (var_declaration
     name: (identifier) @name)] @definition.property)

(with_template_body
  [(val_definition
     pattern: [
       (identifier) @name
       (identifiers (identifier) @name)
     ])
   (var_definition
     pattern: [
       (identifier) @name
       (identifiers (identifier) @name)
     ])
   (val_declaration
     name: (identifier) @name)
   (var_declaration
     name: (identifier) @name)] @definition.property)

(compilation_unit
  [(val_definition
     pattern: [
       (identifier) @name
       (identifiers (identifier) @name)
     ])
   (var_definition
     pattern: [
       (identifier) @name
       (identifiers (identifier) @name)
     ])
   (val_declaration
     name: (identifier) @name)
   (var_declaration
     name: (identifier) @name)] @definition.property)

; class A(val x: Int, var y: Int) and every parameter of a case class
(class_parameter
  ["val" "var"]
  name: (identifier) @name) @definition.property

(class_definition
  "case"
  class_parameters: (class_parameters
    (class_parameter
      name: (identifier) @name) @definition.property))
