// Tests for the MindIR TextMate grammar (source.mindir).
// Run with `npm test` (= `node --test test/`) from grammar/textmate/.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import vsctm from 'vscode-textmate';
import oniguruma from 'vscode-oniguruma';

const here = dirname(fileURLToPath(import.meta.url));
const grammarDir = join(here, '..');
const testdataDir = join(here, '../../../testdata');
const grammarPath = join(grammarDir, 'mindir.tmLanguage.json');
const wasmPath = join(grammarDir, 'node_modules/vscode-oniguruma/release/onig.wasm');

// ---------------------------------------------------------------------------
// Loading

async function loadGrammar() {
  const wasm = readFileSync(wasmPath);
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) => {
      if (scopeName !== 'source.mindir') return null;
      return vsctm.parseRawGrammar(readFileSync(grammarPath, 'utf8'), grammarPath);
    },
  });
  const grammar = await registry.loadGrammar('source.mindir');
  assert.ok(grammar, 'grammar source.mindir failed to load');
  return grammar;
}

const grammar = await loadGrammar();

/** Tokenises `text` line by line; returns the lines with their tokens and the final state. */
function tokenize(text) {
  const lines = text.split(/\r?\n/);
  let state = vsctm.INITIAL;
  const out = [];
  for (const line of lines) {
    const startDepth = state.depth;
    const r = grammar.tokenizeLine(line, state, 0);
    const tokens = r.tokens.map((t) => ({
      text: line.slice(t.startIndex, t.endIndex),
      startIndex: t.startIndex,
      endIndex: t.endIndex,
      scopes: t.scopes,
    }));
    out.push({ line, tokens, startDepth, stoppedEarly: r.stoppedEarly });
    state = r.ruleStack;
  }
  return { lines: out, endState: state };
}

function listMirFiles(dir) {
  const files = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) files.push(...listMirFiles(p));
    else if (name.endsWith('.mir')) files.push(p);
  }
  return files;
}

const mirFiles = listMirFiles(testdataDir);
const cache = new Map();
function tokenizeFile(rel) {
  if (!cache.has(rel)) cache.set(rel, tokenize(readFileSync(join(testdataDir, rel), 'utf8')));
  return cache.get(rel);
}

const fmt = (tok) => `${JSON.stringify(tok.text)} [${tok.scopes.join(' ')}]`;

/**
 * Finds the `nth` token whose text is exactly `tokenText` on the first line that contains
 * `lineContains`. A token split in two (e.g. `fc1` `.weight`) is not found, on purpose.
 */
function findToken(lines, lineContains, tokenText, nth = 0) {
  const l = lines.find((x) => x.line.includes(lineContains));
  assert.ok(l, `no line contains ${JSON.stringify(lineContains)}`);
  const matches = l.tokens.filter((t) => t.text === tokenText);
  assert.ok(
    matches.length > nth,
    `no token #${nth} ${JSON.stringify(tokenText)} on line ${JSON.stringify(l.line)}; tokens: ` +
      l.tokens.map(fmt).join(', '),
  );
  return matches[nth];
}

const hasScope = (tok, sub) => tok.scopes.some((s) => s.includes(sub));

// ---------------------------------------------------------------------------
// The grammar file itself.

describe('grammar file', () => {
  const raw = JSON.parse(readFileSync(grammarPath, 'utf8'));

  function* walk(node, path) {
    if (Array.isArray(node)) {
      for (const [i, x] of node.entries()) yield* walk(x, `${path}[${i}]`);
    } else if (node && typeof node === 'object') {
      yield [node, path];
      for (const [k, v] of Object.entries(node)) yield* walk(v, `${path}.${k}`);
    }
  }

  test('has the expected scope name and file type', () => {
    assert.equal(raw.scopeName, 'source.mindir');
    assert.deepEqual(raw.fileTypes, ['mir']);
  });

  test('every regex compiles with Oniguruma', () => {
    let n = 0;
    for (const [node, path] of walk(raw, '$')) {
      for (const key of ['match', 'begin', 'end', 'while']) {
        if (typeof node[key] !== 'string') continue;
        n++;
        assert.doesNotThrow(() => new oniguruma.OnigScanner([node[key]]), `${path}.${key}: ${node[key]}`);
      }
    }
    assert.ok(n > 30, `only ${n} regexes found`);
  });

  test('every include names an existing repository rule, and every rule is used', () => {
    const used = new Set();
    for (const [node, path] of walk(raw, '$')) {
      if (typeof node.include !== 'string') continue;
      assert.ok(node.include.startsWith('#'), `${path}: external include ${node.include}`);
      const name = node.include.slice(1);
      assert.ok(name in raw.repository, `${path}: unknown include ${node.include}`);
      used.add(name);
    }
    for (const name of Object.keys(raw.repository)) {
      assert.ok(used.has(name), `repository rule ${name} is never included`);
    }
  });

  test('every scope name ends in .mindir', () => {
    for (const [node, path] of walk(raw, '$')) {
      for (const key of ['name', 'contentName']) {
        if (typeof node[key] !== 'string' || path === '$') continue;
        for (const scope of node[key].split(/\s+/)) {
          assert.match(scope, /^[a-z0-9-]+(\.[a-z0-9-]+)*\.mindir$/, `${path}.${key}: ${scope}`);
        }
      }
    }
  });
});

// ---------------------------------------------------------------------------
// (a) Every file tokenises, and every line's tokens cover the line exactly.

describe('every testdata file tokenises', () => {
  test('testdata has valid and broken .mir files', () => {
    assert.ok(mirFiles.length >= 5, `only ${mirFiles.length} .mir files under ${testdataDir}`);
    assert.ok(mirFiles.some((f) => f.includes('broken')), 'no broken/*.mir files found');
  });

  for (const file of mirFiles) {
    const rel = relative(testdataDir, file);
    test(`${rel}: tokens cover every line`, () => {
      const { lines } = tokenizeFile(rel);
      for (const [i, l] of lines.entries()) {
        const where = `${rel}:${i + 1}`;
        assert.equal(l.stoppedEarly, false, `${where}: tokenisation stopped early`);
        assert.ok(l.tokens.length > 0, `${where}: no tokens`);
        assert.equal(l.tokens[0].startIndex, 0, `${where}: first token does not start at 0`);
        for (let k = 1; k < l.tokens.length; k++) {
          assert.equal(
            l.tokens[k].startIndex,
            l.tokens[k - 1].endIndex,
            `${where}: gap or overlap before token ${k}`,
          );
        }
        for (const t of l.tokens) {
          assert.ok(t.endIndex > t.startIndex || l.line.length === 0, `${where}: empty token`);
          assert.equal(t.scopes[0], 'source.mindir', `${where}: token not rooted in source.mindir`);
        }
        assert.ok(
          l.tokens.at(-1).endIndex >= l.line.length,
          `${where}: tokens end at ${l.tokens.at(-1).endIndex}, line has ${l.line.length} chars`,
        );
        assert.equal(
          l.tokens.map((t) => t.text).join(''),
          l.line,
          `${where}: tokens do not reproduce the line`,
        );
      }
    });

    test(`${rel}: no region leaks past the end of an item`, () => {
      const { lines, endState } = tokenizeFile(rel);
      assert.equal(endState.depth, vsctm.INITIAL.depth, `${rel}: file ends inside a region`);
      for (const [i, l] of lines.entries()) {
        if (/^(graph|param)\b/.test(l.line)) {
          assert.equal(
            l.startDepth,
            vsctm.INITIAL.depth,
            `${rel}:${i + 1}: top-level item starts inside an unclosed region`,
          );
        }
      }
    });
  }
});

// ---------------------------------------------------------------------------
// (b) Specific tokens get specific scopes.
// [file, line contains, token text, expected scope substring, options {nth, not: [...]}]

const MLP = 'mlp.mir';
const TOUR = 'syntax_tour.mir';
const SCOPE_TABLE = [
  // mlp.mir: weights and their declarations
  [MLP, '# A model with weights', '#', 'punctuation.definition.comment'],
  [MLP, '# A model with weights', ' A model with weights and its training gradient.', 'comment.line.number-sign.mindir'],
  [MLP, 'param fc1.weight', 'param', 'keyword.declaration.param'],
  [MLP, 'param fc1.weight', 'fc1.weight', 'variable.other.constant.weight'],
  [MLP, 'param fc1.weight', ':', 'punctuation.separator.annotation'],
  [MLP, 'param fc1.weight', 'f32', 'support.type.dtype', { not: ['variable'] }],
  [MLP, 'param fc1.weight', 'f32', 'meta.type.tensor'],
  [MLP, 'param fc1.weight', '784', 'constant.numeric.integer'],
  [MLP, 'param fc1.weight', '=', 'keyword.operator.assignment'],
  [MLP, 'param fc1.weight', 'normal', 'support.function.initializer'],
  [MLP, 'param fc1.weight', 'std', 'variable.parameter.keyword-argument'],
  [MLP, 'param fc1.weight', '0.01', 'constant.numeric.float'],
  [MLP, 'param fc2.bias', 'fc2.bias', 'variable.other.constant.weight'],
  [MLP, 'param fc1.bias', 'zeros', 'support.function.initializer'],
  // mlp.mir: graphs, parameters, types
  [MLP, 'graph mlp(', 'graph', 'keyword.declaration.graph'],
  [MLP, 'graph mlp(', 'mlp', 'entity.name.function'],
  [MLP, 'graph mlp(', 'x', 'variable.parameter', { not: ['keyword-argument'] }],
  [MLP, 'graph mlp(', 'B', 'entity.name.type.dimension.symbolic'],
  [MLP, 'graph mlp(', '->', 'keyword.operator.arrow'],
  [MLP, 'graph mlp(', 'f32', 'meta.return-type', { nth: 1 }],
  [MLP, 'graph mlp(', 'f32', 'support.type.dtype', { nth: 1 }],
  [MLP, 'graph mlp(', '10', 'constant.numeric.integer'],
  [MLP, 'graph mlp(', '{', 'punctuation.section.block.begin'],
  [MLP, 'graph loss(', 'labels', 'variable.parameter'],
  [MLP, 'graph loss(', 'i32', 'support.type.dtype'],
  [MLP, 'graph loss(', '[', 'punctuation.section.shape.begin', { nth: 2 }],
  // mlp.mir: calls and arguments
  [MLP, 'h = ReLU(', 'ReLU', 'support.function.builtin'],
  [MLP, 'h = ReLU(', 'BiasAdd', 'support.function.builtin'],
  [MLP, 'h = ReLU(', 'MatMul', 'support.function.builtin'],
  [MLP, 'h = ReLU(', 'fc1.weight', 'variable.other.constant.weight'],
  [MLP, 'h = ReLU(', 'transpose_b', 'variable.parameter.keyword-argument'],
  [MLP, 'h = ReLU(', 'true', 'constant.language'],
  [MLP, 'h = ReLU(', 'h', 'variable.other.readwrite'],
  [MLP, 'h = ReLU(', '=', 'keyword.operator.assignment', { not: ['keyword-argument'] }],
  [MLP, 'h = ReLU(', ',', 'punctuation.separator.comma'],
  [MLP, 'SparseSoftmaxCrossEntropyWithLogits', 'SparseSoftmaxCrossEntropyWithLogits', 'support.function.builtin'],
  [MLP, 'SparseSoftmaxCrossEntropyWithLogits', 'return', 'keyword.control'],
  [MLP, 'logits = mlp(x)', 'mlp', 'entity.name.function'],
  [MLP, 'logits = mlp(x)', 'mlp', 'meta.function-call', { not: ['support.function'] }],
  [MLP, 'return grad(', 'grad', 'support.function.metafunction'],
  [MLP, 'return grad(', 'wrt', 'variable.parameter.keyword-argument'],
  [MLP, 'return grad(', 'fc2.bias', 'variable.other.constant.weight'],
  [MLP, 'return value_and_grad(', 'value_and_grad', 'support.function.metafunction'],
  // syntax_tour.mir: literals
  [TOUR, 's = "a', '"', 'punctuation.definition.string.begin'],
  [TOUR, 's = "a', 'a ', 'string.quoted.double.mindir'],
  [TOUR, 's = "a', '\\"', 'constant.character.escape', { nth: 0 }],
  [TOUR, 's = "a', '\\"', 'constant.character.escape', { nth: 1 }],
  [TOUR, 's = "a', '\\n', 'constant.character.escape'],
  [TOUR, 's = "a', '\\n', 'string.quoted.double'],
  [TOUR, 's = "a', 'quoted', 'string.quoted.double', { not: ['variable'] }],
  [TOUR, 'big = 1e9', '1e9', 'constant.numeric.float'],
  [TOUR, 'big = 1e9', '2.5e-3', 'constant.numeric.float'],
  [TOUR, 'big = 1e9', '42', 'constant.numeric.integer'],
  [TOUR, 'z = none', 'none', 'constant.language.none'],
  [TOUR, 'tru = true', 'true', 'constant.language.boolean'],
  [TOUR, 'tru = true', 'false', 'constant.language.boolean'],
  [TOUR, 'tru = true', ';', 'punctuation.terminator.statement'],
  [TOUR, 'param w:', '[', 'punctuation.section.brackets.begin', { nth: 1 }],
  [TOUR, 'param w:', '1.0', 'constant.numeric.float'],
  // syntax_tour.mir: weights and initialisers
  [TOUR, 'param b:', 'constant', 'support.function.initializer'],
  [TOUR, 'param u:', 'uniform', 'support.function.initializer'],
  [TOUR, 'param u:', 'low', 'variable.parameter.keyword-argument'],
  [TOUR, 'param u:', '-', 'keyword.operator.arithmetic'],
  [TOUR, 'param ones_w:', 'ones_w', 'variable.other.constant.weight'],
  [TOUR, 'param ones_w:', 'ones', 'support.function.initializer'],
  [TOUR, 'param ones_w:', 'f64', 'support.type.dtype'],
  // syntax_tour.mir: types
  [TOUR, 'graph types(', '?', 'constant.language.dimension.unknown'],
  [TOUR, 'graph types(', '*', 'constant.language.rank.unknown'],
  [TOUR, 'graph types(', '*', 'meta.type.tensor', { not: ['keyword.operator.arithmetic'] }],
  [TOUR, 'graph types(', 'i64', 'meta.type.tuple'],
  [TOUR, 'graph types(', 'bool', 'support.type.dtype'],
  [TOUR, 'graph types(', 'one', 'variable.parameter'],
  [TOUR, 'f: fn(', 'f', 'variable.parameter'],
  [TOUR, 'f: fn(', 'fn', 'storage.type.function'],
  [TOUR, 'f: fn(', 'fn', 'meta.type.function'],
  [TOUR, 'f: fn(', '->', 'keyword.operator.arrow', { nth: 0 }],
  [TOUR, 'f: fn(', 'f32', 'meta.type.function', { nth: 1 }],
  [TOUR, 'f: fn(', 'f32', 'support.type.dtype', { nth: 2 }],
  [TOUR, 'f: fn(', 'str', 'support.type.dtype'],
  [TOUR, 'f: fn(', 'none', 'support.type', { not: ['constant.language'] }],
  [TOUR, 'f: fn(', 'nothing', 'variable.parameter'],
  [TOUR, 'f: fn(', 'i64', 'meta.return-type'],
  [TOUR, 'c: bool', 'bool', 'support.type.dtype'],
  [TOUR, 'c: bool', 'bool', 'meta.type.annotation'],
  [TOUR, 'c: bool', 'c', 'variable.other.readwrite'],
  // syntax_tour.mir: operators and keywords
  [TOUR, 'a = x + y * 2.0', '+', 'keyword.operator.arithmetic'],
  [TOUR, 'a = x + y * 2.0', '*', 'keyword.operator.arithmetic'],
  [TOUR, 'a = x + y * 2.0', '/', 'keyword.operator.arithmetic'],
  [TOUR, 'a = x + y * 2.0', '@', 'keyword.operator.arithmetic.matmul'],
  [TOUR, 'a = x + y * 2.0', 'w', 'variable.other.readwrite'],
  [TOUR, 'c: bool', '<', 'keyword.operator.comparison'],
  [TOUR, 'c: bool', '<=', 'keyword.operator.comparison'],
  [TOUR, 'c: bool', '>=', 'keyword.operator.comparison'],
  [TOUR, 'c: bool', '==', 'keyword.operator.comparison'],
  [TOUR, 'c: bool', '!=', 'keyword.operator.comparison'],
  [TOUR, 'c: bool', 'and', 'keyword.operator.logical'],
  [TOUR, 'c: bool', 'or', 'keyword.operator.logical'],
  [TOUR, 'c: bool', 'not', 'keyword.operator.logical'],
  [TOUR, 'lam = fn(v)', 'fn', 'storage.type.function'],
  [TOUR, 'lam = fn(v)', 'v', 'variable.parameter', { nth: 0 }],
  [TOUR, 'lam = fn(v)', '=>', 'keyword.operator.arrow.lambda'],
  [TOUR, 'r = if c {', 'if', 'keyword.control.conditional'],
  [TOUR, '} else {', 'else', 'keyword.control.conditional'],
  [TOUR, '%t = Add(', '%t', 'variable.other.temporary', { nth: 0 }],
  [TOUR, '%t = Add(', '%u', 'variable.other.temporary'],
  [TOUR, '%t = Add(', 'Neg', 'support.function.builtin'],
  [TOUR, '%t = Add(', 'b', 'variable.other.readwrite'],
  [TOUR, 'q), axis=0)', 'axis', 'variable.parameter.keyword-argument'],
  [TOUR, 'q), axis=0)', 'q', 'variable.other.readwrite'],
  [TOUR, '(p, q) = (a, n)', '=', 'keyword.operator.assignment', { not: ['keyword-argument'] }],
  [TOUR, 'n = -x', '-', 'keyword.operator.arithmetic'],
  [TOUR, 'graph inner(v)', 'inner', 'entity.name.function'],
  [TOUR, 'graph inner(v)', 'v', 'variable.parameter', { nth: 0 }],
  [TOUR, 'k = inner(x)', 'inner', 'meta.function-call'],
  [TOUR, '(ReLU(r + lam(k)', 'lam', 'entity.name.function'],
  [TOUR, 'graph nested_in_branch', 'nested_in_branch', 'entity.name.function'],
  [TOUR, '# precedence', ' precedence: * / @ bind tighter than + -', 'comment.line.number-sign'],
  // Other files
  ['spec_examples.mir', '%1 = func(a, b)', '%1', 'variable.other.temporary'],
  ['spec_examples.mir', 'c = b * %1', '%1', 'variable.other.temporary'],
  ['spec_examples.mir', '%1 = func(a, b)', 'func', 'entity.name.function'],
  ['fibonacci.mir', 'graph fibonacci(n: i64) -> i64', 'n', 'variable.parameter'],
  ['fibonacci.mir', 'r = if n < 1', '<', 'keyword.operator.comparison'],
  ['fibonacci.mir', 'r = if n < 1', 'else', 'keyword.control.conditional', { nth: 1 }],
  ['fibonacci.mir', 'a = fibonacci(n - 1)', 'fibonacci', 'entity.name.function'],
  ['hof.mir', 'graph g(function, x)', 'function', 'variable.parameter'],
  ['hof.mir', 'graph g(function, x)', 'g', 'entity.name.function'],
  ['closure.mir', 'return func_inner', 'func_inner', 'variable.other.readwrite'],
  ['test_f.mir', 'return test_f(', '[', 'punctuation.section.brackets.begin'],
  // Broken files: errors are flagged and the rest of the file recovers.
  ['broken/garbage.mir', '$$$', '$$$', 'invalid.illegal'],
  ['broken/garbage.mir', 'graph ok(x)', 'ok', 'entity.name.function'],
  ['broken/missing_paren.mir', 'return Neg(y)', 'Neg', 'support.function.builtin'],
  ['broken/missing_paren.mir', 'graph g(y: f32[3])', 'g', 'entity.name.function'],
  ['broken/missing_paren.mir', 'graph g(y: f32[3])', 'y', 'variable.parameter'],
  ['broken/broken_statement.mir', 'graph g(y)', 'g', 'entity.name.function'],
  // Imports (spec §10).
  ['multifile/model.mir', 'import "layers.mir" as layers', 'import', 'keyword.control.import'],
  ['multifile/model.mir', 'import "layers.mir" as layers', '"layers.mir"', 'string.quoted.double.path'],
  ['multifile/model.mir', 'import "layers.mir" as layers', 'as', 'keyword.control.import.as'],
  ['multifile/model.mir', 'import "layers.mir" as layers', 'layers', 'entity.name.namespace'],
];

describe('specific tokens get specific scopes', () => {
  test('the table is large enough', () => {
    assert.ok(SCOPE_TABLE.length >= 30, `only ${SCOPE_TABLE.length} scope assertions`);
  });

  for (const [file, lineContains, tokenText, expected, opts = {}] of SCOPE_TABLE) {
    const nth = opts.nth ?? 0;
    const name = `${file}: ${JSON.stringify(tokenText)}${nth ? `#${nth}` : ''} in ${JSON.stringify(lineContains)} is ${expected}`;
    test(name, () => {
      const tok = findToken(tokenizeFile(file).lines, lineContains, tokenText, nth);
      assert.ok(hasScope(tok, expected), `expected ${expected}, got ${fmt(tok)}`);
      for (const bad of opts.not ?? []) {
        assert.ok(!hasScope(tok, bad), `did not expect ${bad}, got ${fmt(tok)}`);
      }
    });
  }
});

// ---------------------------------------------------------------------------
// (c) Comments and strings do not leak into each other.

describe('comments and strings', () => {
  const NON_COMMENT = ['keyword', 'storage', 'support', 'constant', 'string', 'variable', 'entity'];

  function assertOnlyComment(tokens, from, where) {
    const rest = tokens.filter((t) => t.startIndex >= from);
    assert.ok(rest.length > 0, `${where}: nothing after column ${from}`);
    for (const t of rest) {
      assert.ok(hasScope(t, 'comment.line.number-sign.mindir'), `${where}: not a comment: ${fmt(t)}`);
      for (const bad of NON_COMMENT) {
        assert.ok(!hasScope(t, bad), `${where}: comment token has a ${bad} scope: ${fmt(t)}`);
      }
    }
  }

  test('a comment full of keywords, types, calls and literals is only a comment', () => {
    const line =
      '# graph param return if else fn and or not true false none f32[B, 784] Add(x) grad(f) "s" 1e9 %1 fc1.weight -> =>';
    const { lines } = tokenize(line);
    assertOnlyComment(lines[0].tokens, 0, 'whole-line comment');
  });

  test('a trailing comment after code is only a comment', () => {
    const line = '  a = Add(x, y)  # return graph param if else and or not true "unterminated';
    const { lines, endState } = tokenize(line);
    const hash = line.indexOf('#');
    assertOnlyComment(lines[0].tokens, hash, 'trailing comment');
    assert.ok(hasScope(findToken(lines, 'a = Add', 'Add', 0), 'support.function.builtin'));
    assert.equal(endState.depth, vsctm.INITIAL.depth);
  });

  test('comments inside a graph header, a parameter list and call arguments', () => {
    const src = [
      'graph f(x: f32[3],  # graph param return',
      '        y) -> f32[3] {',
      '  z = Add(x,  # Neg(y) if else',
      '          y)',
      '  return z',
      '}',
    ].join('\n');
    const { lines, endState } = tokenize(src);
    assertOnlyComment(lines[0].tokens, lines[0].line.indexOf('#'), 'parameter-list comment');
    assertOnlyComment(lines[2].tokens, lines[2].line.indexOf('#'), 'call-argument comment');
    assert.ok(hasScope(findToken(lines, '        y) ->', 'y'), 'variable.parameter'));
    assert.ok(hasScope(findToken(lines, '        y) ->', 'f32'), 'meta.return-type'));
    assert.equal(endState.depth, vsctm.INITIAL.depth);
  });

  test('the comment in syntax_tour.mir line 13 holds only comment tokens', () => {
    const { lines } = tokenizeFile(TOUR);
    const l = lines.find((x) => x.line.includes('# precedence'));
    assertOnlyComment(l.tokens, l.line.indexOf('#'), 'syntax_tour.mir:13');
  });

  test('a string containing # is a string, not a comment', () => {
    const src = [
      's = "not # a comment" # a real comment',
      'param p: f32[2] = load("weights#1.npy", "key#2")',
      'y = F(x, mode="#same")',
    ].join('\n');
    const { lines, endState } = tokenize(src);
    for (const [i, l] of lines.entries()) {
      const hashes = [...l.line.matchAll(/#/g)].map((m) => m.index);
      for (const col of hashes) {
        const tok = l.tokens.find((t) => t.startIndex <= col && col < t.endIndex);
        const inString = l.line.slice(0, col).split('"').length % 2 === 0;
        if (inString) {
          assert.ok(hasScope(tok, 'string.quoted.double'), `line ${i + 1} col ${col}: ${fmt(tok)}`);
          assert.ok(!hasScope(tok, 'comment'), `line ${i + 1} col ${col}: ${fmt(tok)}`);
        } else {
          assert.ok(hasScope(tok, 'comment.line.number-sign'), `line ${i + 1} col ${col}: ${fmt(tok)}`);
        }
      }
    }
    // The string ends at its closing quote: what follows on the line is scoped as code again.
    assert.ok(hasScope(findToken(lines, 'param p', 'load'), 'support.function.initializer'));
    assert.ok(hasScope(findToken(lines, 'mode=', 'mode'), 'variable.parameter.keyword-argument'));
    assert.ok(hasScope(findToken(lines, 'mode=', ')'), 'punctuation.definition.arguments.end'));
    assert.equal(endState.depth, vsctm.INITIAL.depth);
  });

  test('an escaped quote does not end a string; an unterminated string stops at the end of its line', () => {
    const { lines, endState } = tokenize('s = "a \\" # still string\ngraph g(x) { return x }');
    const tok = findToken(lines, 's = "a', '\\"');
    assert.ok(hasScope(tok, 'constant.character.escape'));
    const still = lines[0].tokens.find((t) => t.text.includes('still'));
    assert.ok(hasScope(still, 'string.quoted.double') && !hasScope(still, 'comment'), fmt(still));
    assert.ok(hasScope(findToken(lines, 'graph g', 'g'), 'entity.name.function'));
    assert.equal(endState.depth, vsctm.INITIAL.depth);
  });

  test('an unknown escape is flagged', () => {
    const { lines } = tokenize('s = "bad \\q escape"');
    assert.ok(hasScope(findToken(lines, 's =', '\\q'), 'invalid.illegal'));
  });
});

// ---------------------------------------------------------------------------
// Keyword boundaries and other edge cases.

describe('edge cases', () => {
  test('keywords and dtypes inside longer identifiers are plain identifiers', () => {
    const { lines } = tokenize('  graphs = iffy + nothing + f32x + ones_like + returned + notes');
    for (const name of ['graphs', 'iffy', 'nothing', 'f32x', 'ones_like', 'returned', 'notes']) {
      const tok = findToken(lines, 'graphs', name);
      assert.ok(hasScope(tok, 'variable.other.readwrite'), fmt(tok));
    }
  });

  test('a primitive used as a value and a call of a call', () => {
    const { lines } = tokenize('  y = Partial(Add, x)\n  g = grad(f)(x, y)\n  t = vjp(f)');
    assert.ok(hasScope(findToken(lines, 'Partial', 'Add'), 'support.function.builtin'));
    assert.ok(hasScope(findToken(lines, 'grad(f)', 'grad'), 'support.function.metafunction'));
    assert.ok(hasScope(findToken(lines, 'vjp', 'vjp'), 'support.function.metafunction'));
  });

  test('the functional transforms are metafunctions', () => {
    const { lines } = tokenize(
      '  a = vmap(f, in_axes=(1, none), out_axes=1)(x, w)\n  b = jacfwd(f)(x)\n  c = jacrev(f, wrt=0)(x)\n' +
        '  d = hessian(f)(x)\n  e = checkpoint(f)(x)\n  g = jvp(f)(x, t)\n  h = hvp(f)(x, t)\n  k = vmapped(x)',
    );
    for (const name of ['vmap', 'jacfwd', 'jacrev', 'hessian', 'checkpoint', 'jvp', 'hvp']) {
      const tok = findToken(lines, `${name}(`, name);
      assert.ok(hasScope(tok, 'support.function.metafunction'), fmt(tok));
    }
    assert.ok(hasScope(findToken(lines, 'vmap(f, in_axes', 'in_axes'), 'variable.parameter.keyword-argument'));
    assert.ok(!hasScope(findToken(lines, 'vmapped', 'vmapped'), 'support.function'));
  });

  test('a local named like an initialiser is only an initialiser in a param declaration', () => {
    const { lines } = tokenize('  constant = normal + 1');
    assert.ok(!hasScope(findToken(lines, 'constant', 'constant'), 'support.function'));
    assert.ok(!hasScope(findToken(lines, 'constant', 'normal'), 'support.function'));
  });

  test('dotted weight names stay whole in type-annotated bindings and wrt tuples', () => {
    const { lines } = tokenize(
      'param block1.conv.weight: f32[4, 3, 3, 3] = load("w.safetensors", "conv")\n' +
        '  d = grad(f, wrt=(0, block1.conv.weight))(x)',
    );
    assert.ok(hasScope(findToken(lines, 'param', 'block1.conv.weight'), 'variable.other.constant.weight'));
    assert.ok(hasScope(findToken(lines, 'wrt=', 'block1.conv.weight'), 'variable.other.constant.weight'));
    assert.ok(hasScope(findToken(lines, 'wrt=', '0'), 'constant.numeric.integer'));
  });

  test('a called temporary, and a stray ? outside a shape', () => {
    const { lines } = tokenize('  y = %f(x, k=1) ? 2');
    const f = findToken(lines, 'y =', '%f');
    assert.ok(hasScope(f, 'variable.other.temporary') && hasScope(f, 'meta.function-call'), fmt(f));
    assert.ok(hasScope(findToken(lines, 'y =', 'k'), 'variable.parameter.keyword-argument'));
    assert.ok(hasScope(findToken(lines, 'y =', '?'), 'invalid.illegal'));
  });

  test('Cast with a dtype argument and a tensor-literal index', () => {
    const { lines } = tokenize('  y = Cast(x, f16)[0]');
    assert.ok(hasScope(findToken(lines, 'Cast', 'f16'), 'support.type.dtype'));
    assert.ok(hasScope(findToken(lines, 'Cast', '0'), 'constant.numeric.integer'));
  });
});
