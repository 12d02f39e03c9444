; Where an identifier is not code, or is called (ingest.occurrences).
; A definition's head (`def f(x)`, `def f(x) when g`, `@spec f(x) :: t`) is a call node
; too and must not count as a call: a local call directly inside a local call's
; arguments is marked only when the outer name is not a def-like word (the `_kw`
; capture only serves the predicate; it precedes `@call` in the pattern and in the
; text, so `@call` is the match's last capture, the one symbols._collect takes), and
; the left of an operator only for operators other than `when` and `::`.
(comment) @comment
(quoted_content) @string

; remote calls: Mod.f(x), mod.f(x), x |> Mod.f()
(call target: (dot right: (identifier) @call))

; local calls f(x), by what holds them (arguments: below)
(do_block (call target: (identifier) @call))
(else_block (call target: (identifier) @call))
(after_block (call target: (identifier) @call))
(rescue_block (call target: (identifier) @call))
(catch_block (call target: (identifier) @call))
(body (call target: (identifier) @call))
(block (call target: (identifier) @call))
(source (call target: (identifier) @call))
(pair (call target: (identifier) @call))
(dot (call target: (identifier) @call))
(interpolation (call target: (identifier) @call))
(tuple (call target: (identifier) @call))
(list (call target: (identifier) @call))
(map_content (call target: (identifier) @call))
(access_call (call target: (identifier) @call))
(bitstring (call target: (identifier) @call))
(call (call target: (identifier) @call))
(unary_operator operator: ["!" "-" "+" "&" "^" "not" "~~~"] operand: (call target: (identifier) @call))  ; (not @attr)

(binary_operator right: (call target: (identifier) @call))

(binary_operator
  left: (call target: (identifier) @call)
  operator: ["|>" "<>" "++" "--" "==" "!=" "===" "!==" "=~" "<" ">" "<=" ">=" "&&" "||" "and" "or" "in" "not in" "=" "+" "-" "*" "/" ".." "<-" "|" "=>" "|||" "&&&" "<<<" ">>>" "~>>" "<<~" "~>" "<~" "<~>" "<|>" "^^^" "**" "//" "+++" "---"])

(call
  target: (dot)
  (arguments (call target: (identifier) @call)))

(call
  target: (identifier) @_kw
  (arguments (call target: (identifier) @call))
  (#not-match? @_kw "^(def|defp|defmacro|defmacrop|defguard|defguardp|defdelegate|defn|defnp|spec|callback|macrocallback|type|typep|opaque)$"))

; x |> f
(binary_operator operator: "|>" right: (identifier) @call)
