; Sylk tags for Lua (written for tree-sitter-lua 0.5).
; Convention: see sylk/symbols.py. When two patterns match the same node and
; name, the earlier pattern wins, so specific patterns come first.
; Lua has no classes: a table is a module or, with `:` methods, a class. Functions
; declared on a table (`function M.f`, `function Obj:m`) name it as their container.

; function Obj:m() / function a.b:m()
(function_declaration
  name: (method_index_expression
    table: (_) @container
    method: (identifier) @name)) @definition.method

; function M.f() / function a.b.f()
(function_declaration
  name: (dot_index_expression
    table: (_) @container
    field: (identifier) @name)) @definition.function

; function f() / local function f()
(function_declaration
  name: (identifier) @name) @definition.function

; local f = function() end (the whole declaration: its `local` hides it)
(variable_declaration
  (assignment_statement
    (variable_list
      .
      name: (identifier) @name)
    (expression_list
      .
      value: (function_definition)))) @definition.function

; M.f = function() end, f = function() end (statements of a chunk or a block; the
; `local` form is above)
(chunk
  (assignment_statement
    (variable_list
      .
      name: (dot_index_expression
        table: (_) @container
        field: (identifier) @name))
    (expression_list
      .
      value: (function_definition))) @definition.function)

(chunk
  (assignment_statement
    (variable_list
      .
      name: (identifier) @name)
    (expression_list
      .
      value: (function_definition))) @definition.function)

(block
  (assignment_statement
    (variable_list
      .
      name: (dot_index_expression
        table: (_) @container
        field: (identifier) @name))
    (expression_list
      .
      value: (function_definition))) @definition.function)

(block
  (assignment_statement
    (variable_list
      .
      name: (identifier) @name)
    (expression_list
      .
      value: (function_definition))) @definition.function)

; { f = function() end }
(field
  name: (identifier) @name
  value: (function_definition)) @definition.function

; { ["key"] = function() end }
(field
  name: (string content: (string_content) @name)
  value: (function_definition)) @definition.function

; top-level tables: `local Picker = {}` (a class by convention when CamelCase),
; `local M = {}`, `local H = {}`, `config = { ... }` (variables)
(chunk
  (variable_declaration
    (assignment_statement
      (variable_list
        .
        name: (identifier) @name)
      (expression_list
        .
        value: (table_constructor))) @definition.class)
  (#match? @name "^[A-Z][A-Za-z0-9_]*[a-z]"))

(chunk
  (assignment_statement
    (variable_list
      .
      name: (identifier) @name)
    (expression_list
      .
      value: (table_constructor))) @definition.class
  (#match? @name "^[A-Z][A-Za-z0-9_]*[a-z]"))

; `local Foo = setmetatable({}, ...)`, `local Foo = Base:extend()` (class libraries)
(chunk
  (variable_declaration
    (assignment_statement
      (variable_list
        .
        name: (identifier) @name)
      (expression_list
        .
        value: (function_call
          name: [
            (identifier) @_f
            (method_index_expression method: (identifier) @_f)
            (dot_index_expression field: (identifier) @_f)
          ]))) @definition.class)
  (#match? @name "^[A-Z][A-Za-z0-9_]*[a-z]")
  (#any-of? @_f "setmetatable" "extend" "new" "class"))

(chunk
  (variable_declaration
    (assignment_statement
      (variable_list
        .
        name: (identifier) @name)
      (expression_list
        .
        value: (table_constructor))) @definition.variable))

(chunk
  (assignment_statement
    (variable_list
      .
      name: (identifier) @name)
    (expression_list
      .
      value: (table_constructor))) @definition.variable)
