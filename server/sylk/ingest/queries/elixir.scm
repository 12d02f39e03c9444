; Sylk tags for Elixir (written for tree-sitter-elixir 0.3).
; Convention: see sylk/symbols.py. When two patterns match the same node and
; name, the earlier pattern wins, so specific patterns come first.
; Everything is a call in this grammar: `def f(x) do ... end` is a call of `def`
; whose first argument is the head `f(x)`. A module's name is its whole alias
; (`defmodule Phoenix.Router do` -> `Phoenix.Router`), so functions inside get it as
; their container. (Note: `#not-any-of?` does not filter in py-tree-sitter 0.26: use
; `#not-match?` for negations.)

; --- modules -------------------------------------------------------------------

(call
  target: (identifier) @_kw
  (arguments . (alias) @name)
  (#eq? @_kw "defmodule")) @definition.module

(call
  target: (identifier) @_kw
  (arguments . (alias) @name)
  (#eq? @_kw "defprotocol")) @definition.interface

; defimpl Proto, for: Type -> a module named after the protocol
(call
  target: (identifier) @_kw
  (arguments . (alias) @name)
  (#eq? @_kw "defimpl")) @definition.module

; --- functions and macros ------------------------------------------------------

; def f(x), def f(x) when g
(call
  target: (identifier) @_kw
  (arguments
    .
    [
      (call target: (identifier) @name)
      (binary_operator
        left: (call target: (identifier) @name)
        operator: "when")
    ])
  (#any-of? @_kw "defmacro" "defmacrop" "defguard" "defguardp")) @definition.macro

(call
  target: (identifier) @_kw
  (arguments
    .
    [
      (call target: (identifier) @name)
      (binary_operator
        left: (call target: (identifier) @name)
        operator: "when")
    ])
  (#any-of? @_kw "def" "defp" "defdelegate" "defn" "defnp")) @definition.function

; def f, do: ...  /  def f when g, do: ...  (no parentheses, arity 0)
(call
  target: (identifier) @_kw
  (arguments
    .
    [
      (identifier) @name
      (binary_operator
        left: (identifier) @name
        operator: "when")
    ])
  (#any-of? @_kw "defmacro" "defmacrop" "defguard" "defguardp")) @definition.macro

(call
  target: (identifier) @_kw
  (arguments
    .
    [
      (identifier) @name
      (binary_operator
        left: (identifier) @name
        operator: "when")
    ])
  (#any-of? @_kw "def" "defp" "defdelegate" "defn" "defnp")) @definition.function

; operators: def a <~> b, defmacro left ~> right, def !x
(call
  target: (identifier) @_kw
  (arguments
    .
    [
      (binary_operator
        left: (identifier)
        operator: _ @name
        right: (identifier))
      (binary_operator
        left: (binary_operator
          left: (identifier)
          operator: _ @name
          right: (identifier))
        operator: "when")
      (unary_operator
        operator: _ @name
        operand: (identifier))
    ])
  (#any-of? @_kw "def" "defp" "defmacro" "defmacrop")) @definition.function

; --- types and callbacks (module attributes) -----------------------------------

(unary_operator
  operator: "@"
  operand: (call
    target: (identifier) @_kw
    (arguments
      .
      [
        (binary_operator
          left: [
            (identifier) @name
            (call target: (identifier) @name)
          ]
          operator: "::")
        (identifier) @name
        (call target: (identifier) @name)
      ]))
  (#any-of? @_kw "type" "typep" "opaque")) @definition.type

(unary_operator
  operator: "@"
  operand: (call
    target: (identifier) @_kw
    (arguments
      .
      [
        (binary_operator
          left: [
            (identifier) @name
            (call target: (identifier) @name)
          ]
          operator: "::")
        (binary_operator
          left: (binary_operator
            left: [
              (identifier) @name
              (call target: (identifier) @name)
            ]
            operator: "::")
          operator: "when")
      ]))
  (#any-of? @_kw "callback" "macrocallback")) @definition.function
