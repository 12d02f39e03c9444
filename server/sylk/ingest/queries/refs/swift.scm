; Where an identifier is not code, or is called (ingest.occurrences).
(comment) @comment
(multiline_comment) @comment
(line_str_text) @string
(multi_line_str_text) @string
(raw_str_part) @string
(raw_str_end_part) @string
(call_expression
  .
  (simple_identifier) @call)
(call_expression
  .
  (navigation_expression
    suffix: (navigation_suffix
      suffix: (simple_identifier) @call)))
