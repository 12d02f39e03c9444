; Where an identifier is not code, or is called (ingest.occurrences).
(comment) @comment
(string_content) @string
(function_call name: (identifier) @call)
(function_call name: (dot_index_expression field: (identifier) @call))
(function_call name: (method_index_expression method: (identifier) @call))
