; Scopes and definitions for the MindIR DSL.

; Scopes: every graph is a scope, and so are lambdas and the branches of `if` (which lower
; to nested graphs).
[
  (graph_definition)
  (lambda)
  (block)
] @local.scope

; Definitions
; -----------

; Weights (top-level `param` items).
(param_definition
  name: (identifier) @local.definition)

; Formal parameters.
(parameter
  name: (_) @local.definition)

; Names bound in a body.
(binding
  name: (_) @local.definition)

(tuple_pattern
  [
    (identifier)
    (temporary)
  ] @local.definition)

; A graph's name belongs to the enclosing scope (Neovim honours the `scope` property).
(graph_definition
  name: (identifier) @local.definition.function
  (#set! definition.function.scope "parent"))

; References
; ----------

(identifier) @local.reference

(temporary) @local.reference
