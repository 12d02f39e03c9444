; Where an identifier is not code, or is called (ingest.occurrences).
(comment) @comment
(string_fragment) @string
(call_expression function: (identifier) @call)
(call_expression function: (member_expression property: (property_identifier) @call))
(new_expression constructor: (identifier) @call)
