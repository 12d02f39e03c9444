; Where an identifier is not code, or is called (ingest.occurrences).
(comment) @comment
(string_content) @string
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
