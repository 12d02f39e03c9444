; Where an identifier is not code, or is called (ingest.occurrences).
(line_comment) @comment
(block_comment) @comment
(string_content) @string
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
(call_expression function: (scoped_identifier name: (identifier) @call))
(call_expression function: (generic_function function: (identifier) @call))
(call_expression function: (generic_function function: (field_expression field: (field_identifier) @call)))
(call_expression function: (generic_function function: (scoped_identifier name: (identifier) @call)))
(macro_invocation macro: (identifier) @call)
