/**
 * @file Tree-sitter grammar for the MindIR DSL (`.mir` files, language id `mindir`).
 *
 * The language contract is the project's language reference (sections 1-5): items
 * (`param`, `graph`), types, graph bodies in A-normal form and expressions.
 *
 * Newlines are significant: a statement ends at the end of its line unless the line ends
 * inside an open `(`/`[` or after a binary operator or a comma. The external scanner
 * (`src/scanner.c`) emits a `_newline` token only where the grammar can end a statement
 * here; everywhere else (inside brackets, after an operator or a comma) a newline is
 * plain whitespace.
 */

/* eslint-disable arrow-parens, camelcase */
/// <reference types="tree-sitter-cli/dsl" />
// @ts-check

const PREC = {
  lambda: 0,
  or: 1,
  and: 2,
  compare: 3,
  additive: 4,
  multiplicative: 5,
  unary: 6,
  postfix: 7,
};

const DTYPES = ['bool', 'i8', 'i16', 'i32', 'i64', 'u8', 'f16', 'bf16', 'f32', 'f64'];

/**
 * Zero or more `rule`s separated by commas, with an optional trailing comma.
 * @param {RuleOrLiteral} rule
 */
function commaSep(rule) {
  return optional(commaSep1(rule));
}

/**
 * One or more `rule`s separated by commas, with an optional trailing comma.
 * @param {RuleOrLiteral} rule
 */
function commaSep1(rule) {
  return seq(rule, repeat(seq(',', rule)), optional(','));
}

/**
 * A parenthesised tuple of `rule`s: `()`, `(a,)`, `(a, b)` or `(a, b,)` — but not `(a)`.
 * @param {RuleOrLiteral} rule
 */
function tupleOf(rule) {
  return seq(
    '(',
    optional(choice(
      seq(rule, ','),
      seq(rule, repeat1(seq(',', rule)), optional(',')),
    )),
    ')',
  );
}

module.exports = grammar({
  name: 'mindir',

  externals: $ => [$._newline],

  extras: $ => [/[ \t\r\n\f\uFEFF]/, $.comment],

  word: $ => $.identifier,

  supertypes: $ => [$._item, $._statement, $._expression, $._type, $._dimension],

  conflicts: $ => [
    // In an `if` block, `(a, b)` may start a destructuring statement `(a, b) = e` or be
    // the block's final value; only the token after `)` tells.
    [$._expression, $._pattern],
    [$.tuple, $.tuple_pattern],
    // In an `if` block, a call may be a statement (one that updates weights) or the
    // block's final value; only what follows it tells.
    [$.expression_statement, $._expression],
  ],

  rules: {
    source_file: $ => repeat(choice($._item, $._terminator)),

    _terminator: $ => choice($._newline, ';'),

    // ----------------------------------------------------------------------------------
    // Items

    _item: $ => choice($.import_declaration, $.param_definition, $.graph_definition),

    // `import "PATH"` or `import "PATH" as NAME` (spec §10).
    import_declaration: $ => seq(
      'import',
      field('path', $.string),
      optional(seq('as', field('alias', $.identifier))),
    ),

    param_definition: $ => seq(
      'param',
      field('name', $.identifier),
      ':',
      field('type', $._type),
      '=',
      field('value', $._expression),
    ),

    graph_definition: $ => seq(
      'graph',
      field('name', $.identifier),
      field('parameters', $.parameters),
      optional(seq('->', field('return_type', $._type))),
      field('body', $.graph_body),
    ),

    parameters: $ => seq('(', commaSep($.parameter), ')'),

    parameter: $ => seq(
      field('name', $._name),
      optional(seq(':', field('type', $._type))),
      // An attribute parameter's default (composite primitive definitions).
      optional(seq('=', field('default', $._expression))),
    ),

    graph_body: $ => seq(
      '{',
      repeat($._terminator),
      repeat(seq($._statement, repeat1($._terminator))),
      optional($._statement),
      '}',
    ),

    // ----------------------------------------------------------------------------------
    // Statements

    _statement: $ => choice(
      $.binding,
      $.destructuring,
      $.graph_definition,
      $.return_statement,
      $.expression_statement,
    ),

    // A call whose value is not used: one that updates weights (`Assign(w, v)`).
    expression_statement: $ => field('value', $.call_expression),

    binding: $ => seq(
      field('name', $._name),
      optional(seq(':', field('type', $._type))),
      '=',
      field('value', $._expression),
    ),

    destructuring: $ => seq(
      field('pattern', $.tuple_pattern),
      '=',
      field('value', $._expression),
    ),

    tuple_pattern: $ => tupleOf($._pattern),

    _pattern: $ => choice($.identifier, $.temporary, $.tuple_pattern),

    return_statement: $ => seq('return', field('value', $._expression)),

    // ----------------------------------------------------------------------------------
    // Types

    _type: $ => choice(
      $.dtype,
      $.tensor_type,
      $.tuple_type,
      $.function_type,
      $.string_type,
      $.none_type,
    ),

    dtype: _ => choice(...DTYPES),

    tensor_type: $ => seq(field('dtype', $.dtype), field('shape', $.shape)),

    shape: $ => seq('[', commaSep($._dimension), ']'),

    _dimension: $ => choice(
      $.integer,
      alias($.identifier, $.symbolic_dimension),
      $.unknown_dimension,
      $.any_rank,
    ),

    unknown_dimension: _ => '?',

    any_rank: _ => '*',

    tuple_type: $ => tupleOf($._type),

    function_type: $ => seq(
      'fn',
      field('parameters', $.type_list),
      '->',
      field('return_type', $._type),
    ),

    type_list: $ => seq('(', commaSep($._type), ')'),

    string_type: _ => 'str',

    none_type: _ => 'none',

    // ----------------------------------------------------------------------------------
    // Expressions

    _expression: $ => choice(
      $.identifier,
      $.temporary,
      $.integer,
      $.float,
      $.string,
      $.true,
      $.false,
      $.none,
      $.tuple,
      $.parenthesized_expression,
      $.tensor_literal,
      $.call_expression,
      $.index_expression,
      $.unary_expression,
      $.binary_expression,
      $.if_expression,
      $.lambda,
    ),

    tuple: $ => tupleOf($._expression),

    parenthesized_expression: $ => seq('(', $._expression, ')'),

    tensor_literal: $ => seq('[', commaSep($._expression), ']'),

    call_expression: $ => prec(PREC.postfix, seq(
      field('callee', $._expression),
      field('arguments', $.argument_list),
    )),

    argument_list: $ => seq('(', commaSep(choice($._expression, $.keyword_argument)), ')'),

    keyword_argument: $ => seq(
      field('name', $.identifier),
      '=',
      field('value', $._expression),
    ),

    index_expression: $ => prec(PREC.postfix, seq(
      field('value', $._expression),
      '[',
      field('index', $._expression),
      ']',
    )),

    unary_expression: $ => prec(PREC.unary, seq(
      field('operator', choice('-', 'not')),
      field('operand', $._expression),
    )),

    binary_expression: $ => {
      /** @type {[number, RuleOrLiteral][]} */
      const table = [
        [PREC.or, 'or'],
        [PREC.and, 'and'],
        [PREC.compare, choice('==', '!=', '<', '<=', '>', '>=')],
        [PREC.additive, choice('+', '-')],
        [PREC.multiplicative, choice('*', '/', '@')],
      ];
      return choice(...table.map(([p, operator]) => prec.left(p, seq(
        field('left', $._expression),
        field('operator', operator),
        field('right', $._expression),
      ))));
    },

    if_expression: $ => seq(
      'if',
      field('condition', $._expression),
      field('consequence', $.block),
      'else',
      field('alternative', choice($.if_expression, $.block)),
    ),

    block: $ => seq(
      '{',
      repeat($._terminator),
      repeat(seq($._statement, repeat1($._terminator))),
      field('value', $._expression),
      repeat($._terminator),
      '}',
    ),

    lambda: $ => prec.right(PREC.lambda, seq(
      'fn',
      field('parameters', $.parameters),
      '=>',
      field('body', $._expression),
    )),

    // ----------------------------------------------------------------------------------
    // Tokens

    _name: $ => choice($.identifier, $.temporary),

    identifier: _ => /[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*/,

    temporary: _ => /%[A-Za-z0-9_]+/,

    integer: _ => /[0-9]+/,

    float: _ => token(choice(
      /[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?/,
      /[0-9]+[eE][+-]?[0-9]+/,
    )),

    string: $ => seq(
      '"',
      repeat(choice($.string_content, $.escape_sequence)),
      token.immediate('"'),
    ),

    string_content: _ => token.immediate(prec(1, /[^"\\\n]+/)),

    escape_sequence: _ => token.immediate(/\\["\\nt]/),

    true: _ => 'true',

    false: _ => 'false',

    none: _ => 'none',

    comment: _ => token(seq('#', /[^\n]*/)),
  },
});
