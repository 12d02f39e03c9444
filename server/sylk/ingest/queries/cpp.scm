; Sylk tags for C++ (grown from tree-sitter-cpp's queries/tags.scm).
; Convention: see sylk/symbols.py. When two patterns match the same node and
; name, the earlier pattern wins, so specific patterns come first. Like ctags'
; default kinds, free functions are definitions; prototypes are not symbols,
; but member function declarations inside a class body are (methods).

; --- out-of-class member definitions: Foo::Foo(), void ns::Foo::bar() ---------

; One pattern per kind, the name's forms as alternatives: tree-sitter analyses each
; pattern's steps when the query is compiled, and fewer patterns compile faster.

(function_definition
  declarator: [
    (function_declarator declarator: [
      (qualified_identifier
        scope: [(namespace_identifier) @container (template_type name: (type_identifier) @container)]
        name: (identifier) @name)
      (qualified_identifier name: (qualified_identifier
        scope: [(namespace_identifier) @container (template_type name: (type_identifier) @container)]
        name: (identifier) @name))
    ])
    (pointer_declarator declarator: (function_declarator declarator: [
      (qualified_identifier
        scope: [(namespace_identifier) @container (template_type name: (type_identifier) @container)]
        name: (identifier) @name)
      (qualified_identifier name: (qualified_identifier
        scope: [(namespace_identifier) @container (template_type name: (type_identifier) @container)]
        name: (identifier) @name))
    ]))
    (reference_declarator (function_declarator declarator: [
      (qualified_identifier
        scope: [(namespace_identifier) @container (template_type name: (type_identifier) @container)]
        name: (identifier) @name)
      (qualified_identifier name: (qualified_identifier
        scope: [(namespace_identifier) @container (template_type name: (type_identifier) @container)]
        name: (identifier) @name))
    ]))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: [
      (qualified_identifier
        scope: [(namespace_identifier) @container (template_type name: (type_identifier) @container)]
        name: (identifier) @name)
      (qualified_identifier name: (qualified_identifier
        scope: [(namespace_identifier) @container (template_type name: (type_identifier) @container)]
        name: (identifier) @name))
    ])))
  ]
  (#eq? @container @name)) @definition.constructor

(function_definition
  declarator: [
    (function_declarator declarator: [
      (qualified_identifier
        scope: [(namespace_identifier) @container (template_type name: (type_identifier) @container)]
        name: [(identifier) (destructor_name) (operator_name)] @name)
      (qualified_identifier name: (qualified_identifier
        scope: [(namespace_identifier) @container (template_type name: (type_identifier) @container)]
        name: [(identifier) (destructor_name) (operator_name)] @name))
    ])
    (pointer_declarator declarator: (function_declarator declarator: [
      (qualified_identifier
        scope: [(namespace_identifier) @container (template_type name: (type_identifier) @container)]
        name: [(identifier) (destructor_name) (operator_name)] @name)
      (qualified_identifier name: (qualified_identifier
        scope: [(namespace_identifier) @container (template_type name: (type_identifier) @container)]
        name: [(identifier) (destructor_name) (operator_name)] @name))
    ]))
    (reference_declarator (function_declarator declarator: [
      (qualified_identifier
        scope: [(namespace_identifier) @container (template_type name: (type_identifier) @container)]
        name: [(identifier) (destructor_name) (operator_name)] @name)
      (qualified_identifier name: (qualified_identifier
        scope: [(namespace_identifier) @container (template_type name: (type_identifier) @container)]
        name: [(identifier) (destructor_name) (operator_name)] @name))
    ]))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: [
      (qualified_identifier
        scope: [(namespace_identifier) @container (template_type name: (type_identifier) @container)]
        name: [(identifier) (destructor_name) (operator_name)] @name)
      (qualified_identifier name: (qualified_identifier
        scope: [(namespace_identifier) @container (template_type name: (type_identifier) @container)]
        name: [(identifier) (destructor_name) (operator_name)] @name))
    ])))
  ]) @definition.method

; --- functions (inside a class body the engine makes them methods) -------------

(function_definition
  declarator: [
    (function_declarator declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)
    (pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))
    (reference_declarator (function_declarator declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)))
  ]) @definition.function

; --- member declarations inside a class body ------------------------------------

(field_declaration_list
  (declaration
    declarator: (function_declarator
      declarator: (identifier) @name)) @definition.constructor)

(field_declaration_list
  (declaration
    declarator: (function_declarator
      declarator: [(destructor_name) (operator_name)] @name)) @definition.method)

(field_declaration
  declarator: [
    (function_declarator declarator: [(field_identifier) (destructor_name) (operator_name)] @name)
    (pointer_declarator declarator: (function_declarator declarator: [(field_identifier) (destructor_name) (operator_name)] @name))
    (reference_declarator (function_declarator declarator: [(field_identifier) (destructor_name) (operator_name)] @name))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: [(field_identifier) (destructor_name) (operator_name)] @name)))
  ]) @definition.method

(field_declaration
  declarator: [
    (field_identifier) @name
    (pointer_declarator declarator: (field_identifier) @name)
    (pointer_declarator declarator: (pointer_declarator declarator: (field_identifier) @name))
    (reference_declarator (field_identifier) @name)
    (array_declarator declarator: (field_identifier) @name)
    (function_declarator
      declarator: (parenthesized_declarator (pointer_declarator declarator: (field_identifier) @name)))
  ]) @definition.field

; --- types ------------------------------------------------------------------------

(class_specifier
  name: [
    (type_identifier) @name
    (template_type name: (type_identifier) @name)
    (qualified_identifier name: (type_identifier) @name)
  ]
  body: (field_declaration_list)) @definition.class

(struct_specifier
  name: [
    (type_identifier) @name
    (template_type name: (type_identifier) @name)
    (qualified_identifier name: (type_identifier) @name)
  ]
  body: (field_declaration_list)) @definition.struct

(union_specifier
  name: (type_identifier) @name
  body: (field_declaration_list)) @definition.union

(enum_specifier
  name: [
    (type_identifier) @name
    (qualified_identifier name: (type_identifier) @name)
  ]
  body: (enumerator_list)) @definition.enum

(enumerator
  name: (identifier) @name) @definition.enum_member

(namespace_definition
  name: [(namespace_identifier) (nested_namespace_specifier)] @name) @definition.namespace

(alias_declaration
  name: (type_identifier) @name) @definition.type

; include: _c_types

; --- namespace-scope variables -------------------------------------------------------

; include: _c_variables

; (and C++'s references: int& r = x;)
[
  (translation_unit (declaration declarator: (init_declarator declarator: (reference_declarator (identifier) @name))) @definition.variable)
  (preproc_if (declaration declarator: (init_declarator declarator: (reference_declarator (identifier) @name))) @definition.variable)
  (preproc_ifdef (declaration declarator: (init_declarator declarator: (reference_declarator (identifier) @name))) @definition.variable)
  (preproc_else (declaration declarator: (init_declarator declarator: (reference_declarator (identifier) @name))) @definition.variable)
  (preproc_elif (declaration declarator: (init_declarator declarator: (reference_declarator (identifier) @name))) @definition.variable)
]

(declaration_list
  (declaration
    declarator: [
      (identifier) @name
      (init_declarator declarator: (identifier) @name)
      (init_declarator declarator: (pointer_declarator declarator: (identifier) @name))
      (init_declarator declarator: (array_declarator declarator: (identifier) @name))
      (init_declarator declarator: (reference_declarator (identifier) @name))
      (pointer_declarator declarator: (identifier) @name)
      (array_declarator declarator: (identifier) @name)
    ]) @definition.variable)

; namespace { ... }: what it defines stays in the file (visibility.py)
(namespace_definition
  !name
  body: (declaration_list) @local)
