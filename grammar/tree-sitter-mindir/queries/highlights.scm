; Syntax highlighting for the MindIR DSL.
;
; The patterns are written so that no two of them capture the same node: the result is the
; same whether an editor lets the first matching pattern win (tree-sitter CLI, Helix) or
; the last one (Neovim).

; Comments and literals
; ---------------------

(comment) @comment

(integer) @number

(float) @number.float

(string) @string

(escape_sequence) @string.escape

[
  (true)
  (false)
] @boolean

(none) @constant.builtin

; Types
; -----

[
  (dtype)
  (string_type)
  (none_type)
] @type.builtin

(symbolic_dimension) @type

[
  (unknown_dimension)
  (any_rank)
] @constant.builtin

; Keywords
; --------

[
  "graph"
  "fn"
] @keyword.function

"param" @keyword

[
  "import"
  "as"
] @keyword.import

"return" @keyword.return

[
  "if"
  "else"
] @keyword.conditional

[
  "and"
  "or"
  "not"
] @keyword.operator

; Definitions
; -----------

; Graph names (top-level and nested).
(graph_definition
  name: (identifier) @function)

; Weights: the name of a `param` item, and any dotted name (`fc1.weight`), which in this
; language names a weight (a dotted graph name would also match here).
(param_definition
  name: (identifier) @variable.member)

((identifier) @variable.member
  (#match? @variable.member "\\."))

; Formal parameters of graphs and lambdas.
(parameter
  name: (identifier) @variable.parameter)

(keyword_argument
  name: (identifier) @variable.parameter)

; Local names bound by statements.
(binding
  name: (identifier) @variable)

(tuple_pattern
  (identifier) @variable)

(temporary) @variable

; Calls
; -----

; Primitives (`Add`, `MatMul`, ...) are capitalised; metafunctions and weight initialisers
; are built in too.
((call_expression
  callee: (identifier) @function.builtin)
  (#match? @function.builtin "^[A-Z][A-Za-z0-9_]*$"))

((call_expression
  callee: (identifier) @function.builtin)
  (#any-of? @function.builtin
    "grad" "value_and_grad" "vjp" "jvp" "hvp" "vmap" "jacfwd" "jacrev" "hessian"
    "checkpoint" "constant" "normal" "uniform" "load"))

((call_expression
  callee: (identifier) @function.call)
  (#not-match? @function.call "^[A-Z]")
  (#not-match? @function.call "\\.")
  (#not-any-of? @function.call
    "grad" "value_and_grad" "vjp" "jvp" "hvp" "vmap" "jacfwd" "jacrev" "hessian"
    "checkpoint" "constant" "normal" "uniform" "load"))

; `zeros` / `ones` weight initialisers.
((param_definition
  value: (identifier) @constant.builtin)
  (#any-of? @constant.builtin "zeros" "ones"))

; Operators and punctuation
; -------------------------

(binary_expression
  operator: [
    "+"
    "-"
    "*"
    "/"
    "@"
    "=="
    "!="
    "<"
    "<="
    ">"
    ">="
  ] @operator)

(unary_expression
  operator: "-" @operator)

[
  "="
  "->"
  "=>"
] @operator

[
  "("
  ")"
  "["
  "]"
  "{"
  "}"
] @punctuation.bracket

[
  ","
  ":"
  ";"
] @punctuation.delimiter
