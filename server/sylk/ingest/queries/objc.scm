; Sylk tags for Objective-C (tree-sitter-objc 3.0, .m files).
; Convention: see sylk/symbols.py. When two patterns match the same node and
; name, the earlier pattern wins, so specific patterns come first.
; A method's name is its selector's first keyword (`initWithName:session:` is
; `initWithName`): the full selector is no one node. A class is defined by its
; @interface and its @implementation (the @interface is mostly in a .h file);
; a category or class extension (`@interface Foo (Bar)`, `@interface Foo ()`)
; names no new type: a scope whose methods are Foo's. The grammar cannot parse
; `typedef NS_ENUM(...) {...}`, and what follows one nests under an ERROR: so
; the patterns below do not depend on their parent being the translation unit.

(class_interface
  .
  (identifier) @name
  category: (_)) @scope

(class_interface
  .
  (identifier) @name
  "(") @scope

(class_interface
  .
  (identifier) @name) @definition.class

(class_implementation
  .
  (identifier) @name
  category: (_)) @scope

(class_implementation
  .
  (identifier) @name) @definition.class

(protocol_declaration
  .
  (identifier) @name) @definition.interface

(method_definition
  .
  (method_type)?
  .
  (identifier) @name) @definition.method

(method_declaration
  .
  (method_type)?
  .
  (identifier) @name) @definition.method

(property_declaration
  (struct_declaration
    (struct_declarator
      [
        (identifier) @name
        (pointer_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (pointer_declarator declarator: (identifier) @name))
        (function_declarator
          declarator: (parenthesized_declarator
            (block_pointer_declarator declarator: (identifier) @name)))
        (pointer_declarator
          declarator: (function_declarator
            declarator: (parenthesized_declarator
              (block_pointer_declarator declarator: (identifier) @name))))
      ]))) @definition.property

(instance_variable
  (struct_declaration
    (struct_declarator
      [
        (identifier) @name
        (pointer_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (pointer_declarator declarator: (identifier) @name))
      ]))) @definition.field

; C: functions, types, macros, file-scope variables.
(function_definition
  declarator: [
    (function_declarator declarator: (identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
  ]
  ; (`#if` between `if {...}` and `else if (...) {...}` makes the latter look like a function)
  (#not-match? @name "^(if|else|while|for|switch|do|return)$")) @definition.function

; include: _c_records

(type_definition
  declarator: [
    (type_identifier) @name
    (pointer_declarator declarator: (type_identifier) @name)
    (function_declarator
      declarator: (parenthesized_declarator
        [
          (pointer_declarator declarator: (type_identifier) @name)
          (block_pointer_declarator declarator: (type_identifier) @name)
        ]))
    ; typedef NSString * (^Block)(id x);
    (pointer_declarator
      declarator: (function_declarator
        declarator: (parenthesized_declarator
          [
            (pointer_declarator declarator: (type_identifier) @name)
            (block_pointer_declarator declarator: (type_identifier) @name)
          ])))
  ]) @definition.type

; (typedefs of other shapes, and macros)
; include: _c_types

; File-scope variables: a declaration at the top, in an @implementation
; (`static char kKey;` between its methods), or inside #if blocks.

; include: _c_variables

(implementation_definition
  (declaration
    declarator: [
      (identifier) @name
      (init_declarator declarator: (identifier) @name)
      (init_declarator declarator: (pointer_declarator declarator: (identifier) @name))
      (init_declarator declarator: (array_declarator declarator: (identifier) @name))
      (pointer_declarator declarator: (identifier) @name)
      (array_declarator declarator: (identifier) @name)
    ]) @definition.variable)
