; Where an identifier is not code, or is called (ingest.occurrences).
(comment) @comment
(interpreted_string_literal_content) @string
(raw_string_literal_content) @string
(call_expression function: (identifier) @call)
(call_expression function: (selector_expression field: (field_identifier) @call))
