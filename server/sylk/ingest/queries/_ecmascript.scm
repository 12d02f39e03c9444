; Part of the JavaScript and TypeScript tags queries (included where each says
; `; include: _ecmascript`): definitions by assignment and the module pattern.
; module.exports.f = function () {}, exports.g = () => {}, f = function () {}
(assignment_expression
  left: [
    (identifier) @name
    (member_expression property: (property_identifier) @name)
  ]
  right: [(arrow_function) (function_expression) (generator_function)]) @definition.function

; { m: function () {}, n: () => {} }
(pair
  key: [
    (property_identifier) @name
    (string (string_fragment) @name)
    (number) @name
  ]
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.method

; Module pattern / transpiled classes: var Foo = (function () { ... }());
(variable_declarator
  name: (identifier) @name
  value: [
    (call_expression function: (parenthesized_expression (function_expression)))
    (parenthesized_expression (call_expression function: (function_expression)))
  ]) @definition.variable

(assignment_expression
  left: [
    (identifier) @name
    (member_expression property: (property_identifier) @name)
  ]
  right: [
    (call_expression function: (parenthesized_expression (function_expression)))
    (parenthesized_expression (call_expression function: (function_expression)))
  ]) @definition.variable

; Foo.prototype.bar = baz;
(assignment_expression
  left: (member_expression
    object: (member_expression
      object: (identifier) @container
      property: (property_identifier) @_proto)
    property: (property_identifier) @name)
  (#eq? @_proto "prototype")) @definition.property
