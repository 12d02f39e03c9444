; Sylk tags for JavaScript (grown from tree-sitter-javascript's queries/tags.scm).
; Convention: see sylk/symbols.py. When two patterns match the same node and
; name, the earlier pattern wins, so specific patterns come first.

; --- classes ---------------------------------------------------------------

(class_declaration
  name: (identifier) @name) @definition.class

(class
  name: (identifier) @name) @definition.class

; const Foo = class {...}
(variable_declarator
  name: (identifier) @name
  value: (class)) @definition.class

; --- methods, constructors, fields -----------------------------------------

(method_definition
  name: (property_identifier) @name
  (#eq? @name "constructor")) @definition.constructor

(method_definition
  name: [(property_identifier) (private_property_identifier) (string) (computed_property_name) (number)] @name) @definition.method

(field_definition
  property: [(property_identifier) (private_property_identifier)] @name) @definition.field

; --- functions ---------------------------------------------------------------

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

(function_expression
  name: (identifier) @name) @definition.function

(generator_function
  name: (identifier) @name) @definition.function

; const f = () => {}, var g = function () {}
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

; Foo.prototype.bar = function () {}
(assignment_expression
  left: (member_expression
    object: (member_expression
      object: (identifier) @container
      property: (property_identifier) @_proto)
    property: (property_identifier) @name)
  right: [(arrow_function) (function_expression) (generator_function)]
  (#eq? @_proto "prototype")) @definition.method

; include: _ecmascript

; --- module-level variables --------------------------------------------------

(program
  (lexical_declaration
    kind: "const"
    (variable_declarator
      name: (identifier) @name) @definition.constant))

(program
  (export_statement
    (lexical_declaration
      kind: "const"
      (variable_declarator
        name: (identifier) @name) @definition.constant)))

(program
  [
    (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable)
    (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable)
    (export_statement
      [
        (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable)
        (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable)
      ])
  ])

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
