; Where an identifier is not code, or is called (ingest.occurrences).
(line_comment) @comment
(block_comment) @comment
(string_content) @string
; f(x), f { }, A(1)
(call_expression
  .
  (identifier) @call)
; o.m(x), o?.m(x), super.m()
(call_expression
  .
  (navigation_expression
    (identifier) @call .))
; class A : B(1): the superclass constructor
(delegation_specifier
  (constructor_invocation
    (user_type
      (identifier) @call .)))
