; Sylk tags for OCaml interfaces, .mli (tree-sitter-ocaml, language_ocaml_interface).
; Convention: see sylk/symbols.py. A signature holds no `let`: every pattern is the
; part it shares with ocaml.scm.

; include: _ocaml
