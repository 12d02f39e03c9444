; Sylk tags for Zig (tree-sitter-zig 1.1).
; Convention: see sylk/symbols.py. When two patterns match the same node and
; name, the earlier pattern wins, so specific patterns come first.
; Zig types are values: `const Foo = struct { ... };` names the struct, and a
; generic type is a function returning one (`fn List(comptime T: type) type {
; return struct { ... }; }`): such a function is the struct, so the functions
; of the returned struct are its methods. A file is itself a struct: its
; top-level fields are fields. Only container-level (file or struct body)
; constants and variables are symbols, not locals. The variable's name is its
; first named child (`extern "c" var` puts the library string before it).

; const Foo = struct/enum/union/opaque/error{...};
(variable_declaration
  "const"
  .
  (identifier) @name
  (struct_declaration)) @definition.struct

(variable_declaration
  "const"
  .
  (identifier) @name
  (enum_declaration)) @definition.enum

(variable_declaration
  "const"
  .
  (identifier) @name
  (union_declaration)) @definition.union

(variable_declaration
  "const"
  .
  (identifier) @name
  (error_set_declaration)) @definition.enum

(variable_declaration
  "const"
  .
  (identifier) @name
  (opaque_declaration)) @definition.type

; fn Foo(comptime T: type) type { ... return struct { ... }; }
(function_declaration
  name: (identifier) @name
  body: (block
    (expression_statement
      (return_expression
        (struct_declaration))))) @definition.struct

(function_declaration
  name: (identifier) @name
  body: (block
    (expression_statement
      (return_expression
        (union_declaration))))) @definition.union

(function_declaration
  name: (identifier) @name
  body: (block
    (expression_statement
      (return_expression
        (enum_declaration))))) @definition.enum

(function_declaration
  name: (identifier) @name) @definition.function

; (`_` marks a non-exhaustive enum: no member)
(enum_declaration
  (container_field
    name: (identifier) @name
    (#not-eq? @name "_")) @definition.enum_member)

(error_set_declaration
  (identifier) @name @definition.enum_member)

(container_field
  name: (identifier) @name
  (#not-eq? @name "_")) @definition.field

; Container-level constants and variables (not function locals).
(source_file
  (variable_declaration
    "const"
    .
    (identifier) @name) @definition.constant)

(source_file
  (variable_declaration
    "var"
    .
    (identifier) @name) @definition.variable)

(struct_declaration
  (variable_declaration
    "const"
    .
    (identifier) @name) @definition.constant)

(struct_declaration
  (variable_declaration
    "var"
    .
    (identifier) @name) @definition.variable)

(union_declaration
  (variable_declaration
    "const"
    .
    (identifier) @name) @definition.constant)

(union_declaration
  (variable_declaration
    "var"
    .
    (identifier) @name) @definition.variable)

(enum_declaration
  (variable_declaration
    "const"
    .
    (identifier) @name) @definition.constant)

(enum_declaration
  (variable_declaration
    "var"
    .
    (identifier) @name) @definition.variable)

(opaque_declaration
  (variable_declaration
    "const"
    .
    (identifier) @name) @definition.constant)

(opaque_declaration
  (variable_declaration
    "var"
    .
    (identifier) @name) @definition.variable)
