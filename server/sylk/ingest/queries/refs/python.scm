; Where an identifier is not code, or is called (ingest.occurrences): @comment and
; @string hold text; @call is the name a call expression calls.
(comment) @comment
(string_content) @string
(call function: (identifier) @call)
(call function: (attribute attribute: (identifier) @call))
