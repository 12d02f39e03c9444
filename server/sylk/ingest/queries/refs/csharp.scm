; Where an identifier is not code, or is called (ingest.occurrences).
(comment) @comment
(string_literal_content) @string
(verbatim_string_literal) @string
(string_content) @string
(invocation_expression function: (identifier) @call)
(invocation_expression function: (member_access_expression name: (identifier) @call))
(object_creation_expression type: (identifier) @call)
