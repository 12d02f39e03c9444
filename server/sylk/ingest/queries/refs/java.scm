; Where an identifier is not code, or is called (ingest.occurrences).
(line_comment) @comment
(block_comment) @comment
(string_fragment) @string
(method_invocation name: (identifier) @call)
(object_creation_expression type: (type_identifier) @call)
