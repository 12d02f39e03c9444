; Where an identifier is not code, or is called (ingest.occurrences).
(comment) @comment
(pod) @comment
(string_content) @string
(heredoc_content) @string
; f(x), f x, $obj->m(x), Class->m; a qualified Foo::f(x) is left out (the mark would
; fall on `Foo`, the first word of the name)
(function_call_expression function: (function) @call (#not-match? @call "::|^&"))
(function_call_expression function: (function (varname) @call) (#not-match? @call "::"))
(ambiguous_function_call_expression function: (function) @call (#not-match? @call "::"))
(method_call_expression method: (method) @call (#not-match? @call "^\\$"))
