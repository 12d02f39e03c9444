; Where an identifier is not code, or is called (ingest.occurrences).
(comment) @comment
(string_content) @string
(heredoc_body) @string
(nowdoc_string) @string
; foo(), \Ns\foo()
(function_call_expression function: (name) @call)
(function_call_expression function: (qualified_name (name) @call))
; $o->m(), $o?->m(), A::m()
(member_call_expression name: (name) @call)
(nullsafe_member_call_expression name: (name) @call)
(scoped_call_expression name: (name) @call)
; new A(), new \Ns\A()
(object_creation_expression (name) @call)
(object_creation_expression (qualified_name (name) @call))
