from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "elixir", "tree_sitter_elixir", "language", extensions=(".ex", ".exs"),
    query="elixir", refs="elixir",
    comments=("#",), decorators=("@",),
    keywords=frozenset(
        "true false nil when and or not in fn do end catch rescue after else def defp defmodule defprotocol "
        "defimpl defmacro defmacrop defguard defguardp defdelegate defstruct defexception defoverridable import "
        "alias require use if unless case cond with for try receive quote unquote unquote_splicing __MODULE__ "
        "__CALLER__ __ENV__ __DIR__ __STACKTRACE__".split()),
    exports=Exports(hidden=r"\b(?:defp|defmacrop|defguardp|defnp|typep)\b"),
    # ``alias Phoenix.Router.Route``: lib/phoenix/router/route.ex (each part in snake case)
    imports=Imports(patterns=(r"^\s*(?:alias|import|require|use)\s+([A-Z]\w*(?:\.[A-Z]\w*)*)",),
                    resolve="snake_dotted", suffixes=(".ex", ".exs")),
    package=Package("clause", r"^[ \t]*defmodule[ \t]+([A-Z][\w.]*)[ \t]+do\b"),
    tests=r"[^/]+_test\.exs",  # ExUnit
    clauses=True,  # def f(0), def f(n): one function
    qualified=".",  # defmodule Phoenix.Channel: Channel in Phoenix
)
