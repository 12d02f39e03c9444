; Where an identifier is not code, or is called (ingest.occurrences).
(comment) @comment
(string_content) @string
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
; [receiver selector:arg more:arg]: the selector's first keyword (a method's name in the
; tags query), not the later ones
(message_expression
  receiver: (_)
  .
  method: (identifier) @call)
