; Where an identifier is not code, or is called (ingest.occurrences).
(comment) @comment
(string_content) @string
(multiline_string) @string
(call_expression
  function: (identifier) @call)
(call_expression
  function: (field_expression
    member: (identifier) @call))
