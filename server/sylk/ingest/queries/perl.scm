; Sylk tags for Perl (written for tree-sitter-perl 2.0).
; Convention: see sylk/symbols.py. When two patterns match the same node and
; name, the earlier pattern wins, so specific patterns come first.
; `package Foo::Bar;` (statement form) is a module whose subs follow it without being
; nested in it: only `package Foo { ... }` and `class Foo { ... }` name a container.

(package_statement
  name: (package) @name) @definition.module

; perl 5.38 `class Point { field $x; method area { } }`
(class_statement
  name: (package) @name) @definition.class

(method_declaration_statement
  name: (bareword) @name) @definition.method

(subroutine_declaration_statement
  name: (bareword) @name) @definition.function

; use constant PI => 3.14;  use constant { A => 1, B => 2 };
(use_statement
  module: (package) @_m
  (list_expression
    .
    (autoquoted_bareword) @name)
  (#eq? @_m "constant")) @definition.constant

(use_statement
  module: (package) @_m
  (anonymous_hash_expression
    (list_expression
      (autoquoted_bareword) @name))
  (#eq? @_m "constant")) @definition.constant

; Moose / Moo / Mojo::Base attributes: has name => ...; has 'name' => ...
(expression_statement
  (ambiguous_function_call_expression
    function: (function) @_f
    arguments: [
      (list_expression
        .
        [
          (autoquoted_bareword) @name
          (string_literal (string_content) @name)
          (interpolated_string_literal (string_content) @name)
        ])
      (string_literal (string_content) @name)
      (interpolated_string_literal (string_content) @name)
    ])
  (#eq? @_f "has")) @definition.property

; package variables: our $VERSION = ...; our @ISA;
(source_file
  (expression_statement
    (assignment_expression
      left: (variable_declaration
        "our"
        variable: (_ (varname) @name)))) @definition.variable)

(source_file
  (expression_statement
    (variable_declaration
      "our"
      variable: (_ (varname) @name))) @definition.variable)
