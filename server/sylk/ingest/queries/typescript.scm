; Sylk tags for TypeScript and TSX (grown from tree-sitter-typescript's and
; tree-sitter-javascript's queries/tags.scm). Must compile against both the
; typescript and the tsx grammar. Convention: see sylk/symbols.py. When two
; patterns match the same node and name, the earlier pattern wins.

; --- types -------------------------------------------------------------------

(class_declaration
  name: (type_identifier) @name) @definition.class

(abstract_class_declaration
  name: (type_identifier) @name) @definition.class

(class
  name: (type_identifier) @name) @definition.class

(variable_declarator
  name: (identifier) @name
  value: (class)) @definition.class

(interface_declaration
  name: (type_identifier) @name) @definition.interface

(type_alias_declaration
  name: (type_identifier) @name) @definition.type

(enum_declaration
  name: (identifier) @name) @definition.enum

(enum_body
  name: (property_identifier) @name @definition.enum_member)

(enum_body
  name: (string (string_fragment) @name) @definition.enum_member)

(enum_body
  (enum_assignment
    name: [
      (property_identifier) @name
      (string (string_fragment) @name)
    ]) @definition.enum_member)

(internal_module
  name: [(identifier) (nested_identifier)] @name) @definition.namespace

(module
  name: [(identifier) (nested_identifier)] @name) @definition.module

(module
  name: (string (string_fragment) @name)) @definition.module

; --- members -------------------------------------------------------------------

(method_definition
  name: (property_identifier) @name
  (#eq? @name "constructor")) @definition.constructor

(method_definition
  name: [(property_identifier) (private_property_identifier) (string) (computed_property_name) (number)] @name) @definition.method

(method_signature
  name: [(property_identifier) (private_property_identifier) (string) (computed_property_name) (number)] @name) @definition.method

(abstract_method_signature
  name: [(property_identifier) (private_property_identifier) (string) (computed_property_name) (number)] @name) @definition.method

(public_field_definition
  name: [(property_identifier) (private_property_identifier) (string) (computed_property_name) (number)] @name) @definition.property

(property_signature
  name: [(property_identifier) (private_property_identifier) (string) (computed_property_name) (number)] @name) @definition.property

; --- functions -----------------------------------------------------------------

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

(function_signature
  name: (identifier) @name) @definition.function

(function_expression
  name: (identifier) @name) @definition.function

(generator_function
  name: (identifier) @name) @definition.function

(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

(assignment_expression
  left: (member_expression
    object: (member_expression
      object: (identifier) @container
      property: (property_identifier) @_proto)
    property: (property_identifier) @name)
  right: [(arrow_function) (function_expression) (generator_function)]
  (#eq? @_proto "prototype")) @definition.method
; include: _ecmascript

; --- module- and namespace-level variables --------------------------------------

(program
  [
    (lexical_declaration
      kind: "const"
      (variable_declarator name: (identifier) @name) @definition.constant)
    (export_statement
      (lexical_declaration
        kind: "const"
        (variable_declarator name: (identifier) @name) @definition.constant))
    (ambient_declaration
      (lexical_declaration
        kind: "const"
        (variable_declarator name: (identifier) @name) @definition.constant))
  ])

(internal_module
  body: (statement_block
    [
      (lexical_declaration
        kind: "const"
        (variable_declarator name: (identifier) @name) @definition.constant)
      (export_statement
        (lexical_declaration
          kind: "const"
          (variable_declarator name: (identifier) @name) @definition.constant))
    ]))

(module
  body: (statement_block
    [
      (lexical_declaration
        kind: "const"
        (variable_declarator name: (identifier) @name) @definition.constant)
      (export_statement
        (lexical_declaration
          kind: "const"
          (variable_declarator name: (identifier) @name) @definition.constant))
    ]))

(program
  [
    (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable)
    (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable)
    (export_statement
      [
        (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable)
        (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable)
      ])
    (ambient_declaration
      [
        (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable)
        (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable)
      ])
  ])

(internal_module
  body: (statement_block
    [
      (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable)
      (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable)
      (export_statement
        [
          (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable)
          (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable)
        ])
    ]))

(module
  body: (statement_block
    [
      (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable)
      (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable)
      (export_statement
        [
          (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable)
          (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable)
        ])
    ]))

; interface I { new (x: number): I }
(construct_signature
  "new" @name) @definition.constructor

; --- names the module exports without defining them here (visibility.py) ---------

; export { a, b as c } (not a re-export: export { a } from "./m")
(export_statement
  !source
  (export_clause
    (export_specifier
      name: (identifier) @exports)))

; export default a; export = a (TypeScript)
(export_statement
  (identifier) @exports)

; module.exports = a / { a, b: c, d() {} }
(expression_statement
  (assignment_expression
    left: (member_expression
      object: (identifier) @_module
      property: (property_identifier) @_exports)
    right: [
      (identifier) @exports
      (object (shorthand_property_identifier) @exports)
      (object (pair key: (property_identifier) @exports))
      (object (pair value: (identifier) @exports))
      (object (method_definition name: (property_identifier) @exports))
    ])
  (#eq? @_module "module")
  (#eq? @_exports "exports"))
