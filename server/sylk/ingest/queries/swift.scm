; Sylk tags for Swift (tree-sitter-swift 0.7).
; Convention: see sylk/symbols.py. When two patterns match the same node and
; name, the earlier pattern wins, so specific patterns come first.
; class/struct/enum/actor/extension are all class_declaration, told apart by
; declaration_kind; an extension names no new type: it is a scope whose
; functions are methods of the extended type.

(class_declaration
  declaration_kind: "class"
  name: (type_identifier) @name) @definition.class

(class_declaration
  declaration_kind: "actor"
  name: (type_identifier) @name) @definition.class

(class_declaration
  declaration_kind: "struct"
  name: (type_identifier) @name) @definition.struct

(class_declaration
  declaration_kind: "enum"
  name: (type_identifier) @name) @definition.enum

(class_declaration
  declaration_kind: "extension"
  name: (user_type) @name) @scope

(protocol_declaration
  name: (type_identifier) @name) @definition.interface

; `name:` also labels the return type: the function's own name is an identifier
; or an operator (`static func ==`).
(function_declaration
  name: (simple_identifier) @name) @definition.function

(function_declaration
  name: _ @name
  (#match? @name "^[-/=+!*%<>&|^~?.]")) @definition.function

(protocol_function_declaration
  name: (simple_identifier) @name) @definition.function

(protocol_function_declaration
  name: _ @name
  (#match? @name "^[-/=+!*%<>&|^~?.]")) @definition.function

(init_declaration
  name: "init" @name) @definition.constructor

(deinit_declaration
  "deinit" @name) @definition.method

(subscript_declaration
  "subscript" @name) @definition.method

(typealias_declaration
  name: (type_identifier) @name) @definition.type

(associatedtype_declaration
  name: (type_identifier) @name) @definition.type

(macro_declaration
  (simple_identifier) @name) @definition.macro

(enum_entry
  name: (simple_identifier) @name) @definition.enum_member

; Stored and computed properties of a type (locals inside bodies are not symbols).
(class_body
  (property_declaration
    name: (pattern
      bound_identifier: (simple_identifier) @name)) @definition.property)

(enum_class_body
  (property_declaration
    name: (pattern
      bound_identifier: (simple_identifier) @name)) @definition.property)

(protocol_body
  (protocol_property_declaration
    name: (pattern
      bound_identifier: (simple_identifier) @name)) @definition.property)

; Globals: `let` is a constant, `var` a variable.
(source_file
  (property_declaration
    (value_binding_pattern
      mutability: "let")
    name: (pattern
      bound_identifier: (simple_identifier) @name)) @definition.constant)

(source_file
  (property_declaration
    (value_binding_pattern
      mutability: "var")
    name: (pattern
      bound_identifier: (simple_identifier) @name)) @definition.variable)
