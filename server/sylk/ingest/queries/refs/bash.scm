; Where an identifier is not code, or is called (ingest.occurrences).
(comment) @comment
(string_content) @string
(raw_string) @string
(ansi_c_string) @string
(heredoc_body) @string
; the command a line runs: `make_widget arg`, `x | make_widget`, `if make_widget; then`
(command name: (command_name (word) @call))
