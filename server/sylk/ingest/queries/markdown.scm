; Sylk tags for Markdown (block grammar of tree-sitter-markdown).
; Convention: see sylk/symbols.py. Each ATX section is a heading named by its
; heading text, so nested sections give containers; setext headings do not open
; sections in this grammar and are headings of their own.

(section
  (atx_heading
    heading_content: (inline) @name)) @definition.heading

(setext_heading
  heading_content: (paragraph (inline) @name)) @definition.heading
