; Where an identifier is not code, or is called (ingest.occurrences).
(comment) @comment
(block_comment) @comment
; the grammar has no node for a string's content: the whole literal (an
; interpolated one with its ${...} parts)
(string) @string
(interpolated_string) @string
; f(x), f[T](x), f { ... }
(call_expression
  function: (identifier) @call)
(call_expression
  function: (generic_function
    function: (identifier) @call))
; o.m(x), o.m[T](x), o m x
(call_expression
  function: (field_expression
    field: (identifier) @call))
(call_expression
  function: (generic_function
    function: (field_expression
      field: (identifier) @call)))
(infix_expression
  operator: (identifier) @call)
; new A(x)
(instance_expression
  (type_identifier) @call)
