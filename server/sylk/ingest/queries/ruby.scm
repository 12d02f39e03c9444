; Sylk tags for Ruby (grown from tree-sitter-ruby's queries/tags.scm).
; Convention: see sylk/symbols.py. When two patterns match the same node and
; name, the earlier pattern wins, so specific patterns come first.

(class
  name: [
    (constant) @name
    (scope_resolution name: (_) @name)
  ]) @definition.class

(module
  name: [
    (constant) @name
    (scope_resolution name: (_) @name)
  ]) @definition.module

; top-level def: a function
(program
  (method
    name: (_) @name) @definition.function)

(method
  name: (_) @name) @definition.method

; def self.create / def obj.m
(singleton_method
  name: (_) @name) @definition.method

(alias
  name: (_) @name) @definition.method

; VERSION = "1.0", Foo::BAR = 1
(assignment
  left: [
    (constant) @name
    (scope_resolution name: (constant) @name)
  ]) @definition.constant
