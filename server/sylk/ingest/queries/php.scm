; Sylk tags for PHP (tree-sitter-php, language_php).
; Convention: see sylk/symbols.py. When two patterns match the same node and
; name, the earlier pattern wins, so specific patterns come first.
; Attributes (#[...]) are children of the declarations they annotate, so a
; definition's range starts at its first attribute. A namespace is no symbol
; (like a Java package): namespace_definition is read as the file's package.

(class_declaration
  name: (name) @name) @definition.class

(interface_declaration
  name: (name) @name) @definition.interface

(trait_declaration
  name: (name) @name) @definition.trait

(enum_declaration
  name: (name) @name) @definition.enum

(enum_case
  name: (name) @name) @definition.enum_member

(method_declaration
  name: (name) @name
  (#eq? @name "__construct")) @definition.constructor

(method_declaration
  name: (name) @name) @definition.method

(function_definition
  name: (name) @name) @definition.function

; const X = 1; (namespace level and class constants), one symbol per element
(const_declaration
  (const_element
    (name) @name) @definition.constant)

; define('X', 1) at the top of a file or inside a namespace block / if
(expression_statement
  (function_call_expression
    function: (name) @_define
    arguments: (arguments
      .
      (argument
        (string
          (string_content) @name)))
    (#eq? @_define "define"))) @definition.constant

; public int $x = 1, $y;  (the name without its $)
(property_declaration
  (property_element
    name: (variable_name
      (name) @name)) @definition.property)

; public function __construct(private int $x): promoted properties, members
; of the class (or trait), not of the constructor
(class_declaration
  name: (name) @container
  body: (declaration_list
    (method_declaration
      parameters: (formal_parameters
        (property_promotion_parameter
          name: (variable_name
            (name) @name)) @definition.property))))

(trait_declaration
  name: (name) @container
  body: (declaration_list
    (method_declaration
      parameters: (formal_parameters
        (property_promotion_parameter
          name: (variable_name
            (name) @name)) @definition.property))))

(method_declaration
  parameters: (formal_parameters
    (property_promotion_parameter
      name: (variable_name
        (name) @name)) @definition.property))
