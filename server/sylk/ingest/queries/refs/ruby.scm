; Where an identifier is not code, or is called (ingest.occurrences).
(comment) @comment
(string_content) @string
(call method: (identifier) @call)
