; Folding for the MindIR DSL: graph bodies, `if` branches and multi-line bracketed lists.
; (Editors fold a node only when it spans more than one line.)

[
  (graph_body)
  (block)
  (parameters)
  (argument_list)
  (tuple)
  (tuple_type)
  (tensor_literal)
] @fold
