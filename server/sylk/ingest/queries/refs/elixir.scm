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

; local calls f(x), by what holds them (arguments: below); the words of Elixir's
; definitions and special forms (`def`, `defmodule`, `if`, `case`, ...) are calls in the
; grammar but not here
(do_block (call target: (identifier) @call (#not-match? @call "^(def|defp|defmodule|defprotocol|defimpl|defmacro|defmacrop|defguard|defguardp|defdelegate|defstruct|defexception|defoverridable|defn|defnp|import|alias|require|use|if|unless|case|cond|with|for|try|receive|quote|unquote|unquote_splicing|fn)$")))
(else_block (call target: (identifier) @call (#not-match? @call "^(def|defp|defmodule|defprotocol|defimpl|defmacro|defmacrop|defguard|defguardp|defdelegate|defstruct|defexception|defoverridable|defn|defnp|import|alias|require|use|if|unless|case|cond|with|for|try|receive|quote|unquote|unquote_splicing|fn)$")))
(after_block (call target: (identifier) @call (#not-match? @call "^(def|defp|defmodule|defprotocol|defimpl|defmacro|defmacrop|defguard|defguardp|defdelegate|defstruct|defexception|defoverridable|defn|defnp|import|alias|require|use|if|unless|case|cond|with|for|try|receive|quote|unquote|unquote_splicing|fn)$")))
(rescue_block (call target: (identifier) @call (#not-match? @call "^(def|defp|defmodule|defprotocol|defimpl|defmacro|defmacrop|defguard|defguardp|defdelegate|defstruct|defexception|defoverridable|defn|defnp|import|alias|require|use|if|unless|case|cond|with|for|try|receive|quote|unquote|unquote_splicing|fn)$")))
(catch_block (call target: (identifier) @call (#not-match? @call "^(def|defp|defmodule|defprotocol|defimpl|defmacro|defmacrop|defguard|defguardp|defdelegate|defstruct|defexception|defoverridable|defn|defnp|import|alias|require|use|if|unless|case|cond|with|for|try|receive|quote|unquote|unquote_splicing|fn)$")))
(body (call target: (identifier) @call (#not-match? @call "^(def|defp|defmodule|defprotocol|defimpl|defmacro|defmacrop|defguard|defguardp|defdelegate|defstruct|defexception|defoverridable|defn|defnp|import|alias|require|use|if|unless|case|cond|with|for|try|receive|quote|unquote|unquote_splicing|fn)$")))
(block (call target: (identifier) @call (#not-match? @call "^(def|defp|defmodule|defprotocol|defimpl|defmacro|defmacrop|defguard|defguardp|defdelegate|defstruct|defexception|defoverridable|defn|defnp|import|alias|require|use|if|unless|case|cond|with|for|try|receive|quote|unquote|unquote_splicing|fn)$")))
(source (call target: (identifier) @call (#not-match? @call "^(def|defp|defmodule|defprotocol|defimpl|defmacro|defmacrop|defguard|defguardp|defdelegate|defstruct|defexception|defoverridable|defn|defnp|import|alias|require|use|if|unless|case|cond|with|for|try|receive|quote|unquote|unquote_splicing|fn)$")))
(pair (call target: (identifier) @call (#not-match? @call "^(def|defp|defmodule|defprotocol|defimpl|defmacro|defmacrop|defguard|defguardp|defdelegate|defstruct|defexception|defoverridable|defn|defnp|import|alias|require|use|if|unless|case|cond|with|for|try|receive|quote|unquote|unquote_splicing|fn)$")))
(dot (call target: (identifier) @call (#not-match? @call "^(def|defp|defmodule|defprotocol|defimpl|defmacro|defmacrop|defguard|defguardp|defdelegate|defstruct|defexception|defoverridable|defn|defnp|import|alias|require|use|if|unless|case|cond|with|for|try|receive|quote|unquote|unquote_splicing|fn)$")))
(interpolation (call target: (identifier) @call (#not-match? @call "^(def|defp|defmodule|defprotocol|defimpl|defmacro|defmacrop|defguard|defguardp|defdelegate|defstruct|defexception|defoverridable|defn|defnp|import|alias|require|use|if|unless|case|cond|with|for|try|receive|quote|unquote|unquote_splicing|fn)$")))
(tuple (call target: (identifier) @call (#not-match? @call "^(def|defp|defmodule|defprotocol|defimpl|defmacro|defmacrop|defguard|defguardp|defdelegate|defstruct|defexception|defoverridable|defn|defnp|import|alias|require|use|if|unless|case|cond|with|for|try|receive|quote|unquote|unquote_splicing|fn)$")))
(list (call target: (identifier) @call (#not-match? @call "^(def|defp|defmodule|defprotocol|defimpl|defmacro|defmacrop|defguard|defguardp|defdelegate|defstruct|defexception|defoverridable|defn|defnp|import|alias|require|use|if|unless|case|cond|with|for|try|receive|quote|unquote|unquote_splicing|fn)$")))
(map_content (call target: (identifier) @call (#not-match? @call "^(def|defp|defmodule|defprotocol|defimpl|defmacro|defmacrop|defguard|defguardp|defdelegate|defstruct|defexception|defoverridable|defn|defnp|import|alias|require|use|if|unless|case|cond|with|for|try|receive|quote|unquote|unquote_splicing|fn)$")))
(access_call (call target: (identifier) @call (#not-match? @call "^(def|defp|defmodule|defprotocol|defimpl|defmacro|defmacrop|defguard|defguardp|defdelegate|defstruct|defexception|defoverridable|defn|defnp|import|alias|require|use|if|unless|case|cond|with|for|try|receive|quote|unquote|unquote_splicing|fn)$")))
(bitstring (call target: (identifier) @call (#not-match? @call "^(def|defp|defmodule|defprotocol|defimpl|defmacro|defmacrop|defguard|defguardp|defdelegate|defstruct|defexception|defoverridable|defn|defnp|import|alias|require|use|if|unless|case|cond|with|for|try|receive|quote|unquote|unquote_splicing|fn)$")))
(call (call target: (identifier) @call (#not-match? @call "^(def|defp|defmodule|defprotocol|defimpl|defmacro|defmacrop|defguard|defguardp|defdelegate|defstruct|defexception|defoverridable|defn|defnp|import|alias|require|use|if|unless|case|cond|with|for|try|receive|quote|unquote|unquote_splicing|fn)$")))
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

; cond do f(x) -> ... end (a clause's left: patterns hold no calls, conditions do)
(stab_clause left: (arguments (call target: (identifier) @call)))

; x |> f
(binary_operator operator: "|>" right: (identifier) @call)
