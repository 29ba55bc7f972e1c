// Tests for the TextMate grammar of MindSpore's compile dumps (source.mindspore-ir,
// *.ir, language mindspore-ir) on a real dump (testdata/irdumps/hof_type_inference.ir,
// MindSpore 2.10). Run with `npm test` from grammar/textmate/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vsctm from 'vscode-textmate';
import oniguruma from 'vscode-oniguruma';

const here = dirname(fileURLToPath(import.meta.url));
const grammarPath = join(here, '..', 'mindspore-ir.tmLanguage.json');
const wasmPath = join(here, '..', 'node_modules/vscode-oniguruma/release/onig.wasm');
const dump = readFileSync(join(here, '../../../testdata/irdumps/hof_type_inference.ir'), 'utf8');

const wasm = readFileSync(wasmPath);
await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength)).catch(() => {});
const registry = new vsctm.Registry({
  onigLib: Promise.resolve({
    createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
    createOnigString: (s) => new oniguruma.OnigString(s),
  }),
  loadGrammar: async (scopeName) =>
    scopeName === 'source.mindspore-ir'
      ? vsctm.parseRawGrammar(readFileSync(grammarPath, 'utf8'), grammarPath)
      : null,
});
const grammar = await registry.loadGrammar('source.mindspore-ir');

/** The scopes of `needle`'s first character on the first line holding `line`. */
function scopesAt(line, needle) {
  let state = vsctm.INITIAL;
  for (const text of dump.split('\n')) {
    const r = grammar.tokenizeLine(text, state);
    state = r.ruleStack;
    if (text.includes(line)) {
      const at = text.indexOf(needle, text.indexOf(line));
      const tok = r.tokens.find((t) => t.startIndex <= at && at < t.endIndex);
      return tok.scopes;
    }
  }
  throw new Error(`no line holds ${line}`);
}

test('the dump tokenises: subgraphs, nodes, parameters, calls, types, comments', () => {
  assert.ok(grammar, 'grammar source.mindspore-ir loads');
  const has = (line, needle, scope) =>
    assert.ok(
      scopesAt(line, needle).some((s) => s.startsWith(scope)),
      `${needle} in ${line}: ${scopesAt(line, needle).join(' ')}`,
    );
  has('subgraph @3_g_21(', 'subgraph', 'keyword.other');
  has('subgraph @3_g_21(', '@3_g_21', 'entity.name.function');
  has('subgraph @3_g_21(', '%para10_x', 'variable.parameter');
  has('%0(CNode_15) = call @5_f_16', '%0', 'variable.other.definition');
  has('%0(CNode_15) = call @5_f_16', 'call', 'keyword.other');
  has('%0(CNode_15) = call @5_f_16', '@5_f_16', 'entity.name.function');
  has('%2(CNode_18) = call @4__mul_tensor_19(%0, %1)', '%1)', 'variable.other');
  has('# Fullname with scope: (Default/5_f_16-op0)', 'Default', 'entity.name.namespace');
  has('# In file examples/t4.py:11, 15~26', 'examples', 'string.unquoted.path');
  has('= PrimFunc_', 'PrimFunc_', 'support.function.primitive');
});
