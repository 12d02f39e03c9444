; Where an identifier is not code, or is called (ingest.occurrences).
(comment) @comment
(haddock) @comment
(string) @string
(apply function: (variable) @call)
(apply function: (qualified id: (variable) @call))
(apply function: (constructor) @call)
(apply function: (qualified id: (constructor) @call))
; x `f` y
(infix operator: (infix_id [(variable) @call (qualified id: (variable) @call)]))
; f $ x
(infix
  left_operand: [(variable) @call (qualified id: (variable) @call)]
  operator: (operator) @_op
  (#eq? @_op "$"))
