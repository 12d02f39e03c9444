; Sylk tags for Bash (written for tree-sitter-bash 0.25).
; Convention: see sylk/symbols.py. When two patterns match the same node and
; name, the earlier pattern wins, so specific patterns come first.
; Functions anywhere (a function defined inside another is global once it runs);
; variables only at the top level of the file (not `local` ones, not in functions).
; Aliases are not captured: the grammar keeps `name=` as one word (`alias ll='ls -l'`).

(function_definition
  name: (word) @name) @definition.function

; readonly X=1, declare -r X=1, typeset -r X=1
(program
  (declaration_command
    "readonly"
    (variable_assignment
      name: (variable_name) @name) @definition.constant))

(program
  (declaration_command
    (word) @_flag
    (variable_assignment
      name: (variable_name) @name) @definition.constant)
  (#match? @_flag "^-[a-zA-Z]*r"))

; export X=1, declare X=1, X=1
(program
  (declaration_command
    (variable_assignment
      name: (variable_name) @name) @definition.variable))

(program
  (variable_assignment
    name: (variable_name) @name) @definition.variable)
