/*
 * External scanner for the MindIR DSL tree-sitter grammar.
 *
 * It produces one token, `_newline`, which ends a statement. The token is produced only
 * when the parser could end a statement at this point (the parser says so through
 * `valid_symbols`); inside `(`/`[`, after a binary operator or after a comma no state
 * accepts it, so there the newline is left to the internal lexer, which skips it as
 * whitespace. This is exactly the language's rule: "A statement ends at the end of its
 * line, unless the line ends inside an open `(` or `[`, or after a binary operator or a
 * comma."
 *
 * The scanner is stateless.
 */

#include "tree_sitter/parser.h"

enum TokenType {
  NEWLINE,
};

void *tree_sitter_mindir_external_scanner_create(void) { return NULL; }

void tree_sitter_mindir_external_scanner_destroy(void *payload) { (void)payload; }

unsigned tree_sitter_mindir_external_scanner_serialize(void *payload, char *buffer) {
  (void)payload;
  (void)buffer;
  return 0;
}

void tree_sitter_mindir_external_scanner_deserialize(void *payload, const char *buffer,
                                                     unsigned length) {
  (void)payload;
  (void)buffer;
  (void)length;
}

bool tree_sitter_mindir_external_scanner_scan(void *payload, TSLexer *lexer,
                                              const bool *valid_symbols) {
  (void)payload;
  if (!valid_symbols[NEWLINE]) {
    return false;
  }
  // Skip horizontal whitespace; a comment or any other character ends the search (a
  // comment is an extra: the scanner is asked again at the newline that follows it).
  while (lexer->lookahead == ' ' || lexer->lookahead == '\t' || lexer->lookahead == '\r' ||
         lexer->lookahead == '\f') {
    lexer->advance(lexer, true);
  }
  if (lexer->lookahead == '\n') {
    lexer->advance(lexer, false);
    lexer->mark_end(lexer);
    lexer->result_symbol = NEWLINE;
    return true;
  }
  return false;
}
