; Where an identifier is not code, or is called (ingest.occurrences).
(comment) @comment
(string_content) @string
(raw_string_content) @string
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
(call_expression function: (qualified_identifier name: (identifier) @call))
(call_expression function: (template_function name: (identifier) @call))
(new_expression type: (type_identifier) @call)
