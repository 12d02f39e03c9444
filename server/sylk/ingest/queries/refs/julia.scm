; Where an identifier is not code, or is called (ingest.occurrences).
(line_comment) @comment
(block_comment) @comment
(string_literal (content) @string)
(command_literal (content) @string)
(prefixed_string_literal (content) @string)
; f(x), M.f(x), obj.f(x), f.(x), @m x
(call_expression . (identifier) @call)
(call_expression . (field_expression (identifier) @call .))
(broadcast_call_expression . (identifier) @call)
(broadcast_call_expression . (field_expression (identifier) @call .))
(macrocall_expression (macro_identifier (identifier) @call))
