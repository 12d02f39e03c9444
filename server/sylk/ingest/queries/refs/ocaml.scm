; Where an identifier is not code, or is called (ingest.occurrences). Shared by
; ocaml and ocaml_interface (both grammars know these nodes).
(comment) @comment
(string_content) @string
(quoted_string_content) @string
; f x, M.f x
(application_expression function: (value_path (value_name) @call))
; x |> f, x |> M.f
(infix_expression
  operator: (rel_operator) @_op
  right: (value_path (value_name) @call)
  (#eq? @_op "|>"))
; f @@ x
(infix_expression
  left: (value_path (value_name) @call)
  operator: (concat_operator) @_op
  (#eq? @_op "@@"))
; obj#m
(method_invocation (method_name) @call)
; new c
(new_expression (class_path (class_name) @call))
