; Sylk tags for Haskell (tree-sitter-haskell).
; Convention: see sylk/symbols.py. When two patterns match the same node and
; name, the earlier pattern wins, so specific patterns come first.
;
; A function is its equations (``function`` or ``bind`` nodes), one symbol from the
; first to the last (``clauses``). Type signatures are definitions only inside a class
; (its methods) and in foreign imports.

; --- module --------------------------------------------------------------------

(header
  module: (module) @name) @definition.module

; --- top-level functions and values ---------------------------------------------
; every equation (languages/haskell.py ``clauses``: the equations of one function are one
; symbol, from the first to the last)

(declarations
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
    (function name: (prefix_id [(operator) (variable)] @name))
    (bind name: (prefix_id [(operator) (variable)] @name))
    (function (infix operator: (operator) @name))
    (function (infix operator: (infix_id (variable) @name)))
  ] @definition.function)

; --- types -----------------------------------------------------------------------

; data with one constructor is a struct; with several (a sum type), an enum
(declarations
  (data_type
    name: [(name) @name (prefix_id (_) @name)]
    constructors: (data_constructors . (data_constructor) .)) @definition.struct)

(declarations
  (data_type
    name: [(name) @name (prefix_id (_) @name)]
    constructors: (_)) @definition.enum)

(declarations
  (data_type
    name: [(name) @name (prefix_id (_) @name)]) @definition.type)

(declarations
  (newtype
    name: [(name) @name (prefix_id (_) @name)]) @definition.struct)

(type_synonym
  name: [(name) @name (prefix_id (_) @name)]) @definition.type

(type_family
  name: [(name) @name (prefix_id (_) @name)]) @definition.type

(data_family
  name: [(name) @name (prefix_id (_) @name)]) @definition.type

; constructors (a record's: its name only, so that its fields are the type's)
(data_constructor
  constructor: (prefix
    name: (constructor) @name)) @definition.constructor

(data_constructor
  constructor: (record
    name: (constructor) @name @definition.constructor))

(data_constructor
  constructor: (infix
    operator: (constructor_operator) @name)) @definition.constructor

(newtype_constructor
  name: (constructor) @name @definition.constructor)

(gadt_constructor
  name: (constructor) @name) @definition.constructor

(gadt_constructor
  names: (binding_list
    name: (constructor) @name)) @definition.constructor

(field
  name: (field_name
    (variable) @name)) @definition.field

(pattern_synonym
  (equation
    synonym: [
      (constructor) @name
      (apply function: (constructor) @name)
      (record constructor: (constructor) @name)
      (infix operator: (constructor_operator) @name)
    ])) @definition.constructor

; --- classes and instances ------------------------------------------------------

(class
  name: (name) @name) @definition.class

; class methods: their signatures (a default equation is not a second definition)
(class_declarations
  (signature
    name: [(variable) @name (prefix_id [(operator) (variable)] @name)]) @definition.function)

(class_declarations
  (signature
    names: (binding_list
      name: [(variable) @name (prefix_id [(operator) (variable)] @name)])) @definition.function)

; instance Show Foo, instance ToJSON (Maybe a), instance C T.Text: methods of the type
(instance
  patterns: (type_patterns
    .
    [
      (name) @name
      (qualified id: (name) @name)
      (parens type: [
        (name) @name
        (qualified id: (name) @name)
        (apply constructor: [(name) @name (qualified id: (name) @name)])
        (apply constructor: (apply constructor: [(name) @name (qualified id: (name) @name)]))
        (apply constructor: (apply constructor: (apply constructor: [(name) @name (qualified id: (name) @name)])))
      ])
    ])) @scope

; instance ToJSON [a], instance C (a, b), instance C a: methods of the class
(instance
  name: [(name) @name (qualified id: (name) @name)]
  patterns: (type_patterns
    .
    [(list) (tuple) (unit) (variable) (parens type: [(list) (tuple) (unit) (variable) (function)])])) @scope

; instance methods: every equation (one symbol per method, as above)
(instance_declarations
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
    (function name: (prefix_id [(operator) (variable)] @name))
    (bind name: (prefix_id [(operator) (variable)] @name))
    (function (infix operator: (operator) @name))
    (function (infix operator: (infix_id (variable) @name)))
  ] @definition.function)

; what the module's export list names (visibility: exported when listed)
(header exports: (exports export: (export variable: (_) @exports)))
(header exports: (exports export: (export type: (_) @exports)))
