import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { irUriString, nodeRange, panelKey, parseIrQuery } from '../src/pure/uri';
import { resolveServerPath } from '../src/pure/server';

test('IR document URIs round-trip and end in .mir', () => {
  const t = { source: 'file:///w/a b/test_f.mir', graph: 'test_f', kind: 'gradient' as const };
  const s = irUriString(t);
  assert.match(s, /^mirdsl-ir:\/test_f\.grad\.mir\?/);
  assert.deepEqual(parseIrQuery(s.split('?')[1]), t);
  assert.equal(parseIrQuery('source=x&graph=g&kind=bogus'), undefined);
  assert.equal(parseIrQuery(''), undefined);
});

test('node ranges fall back to the base id', () => {
  const r = { start: { line: 1, character: 2 }, end: { line: 1, character: 5 } };
  assert.equal(nodeRange({ n5: r }, 'n5'), r);
  assert.equal(nodeRange({ n5: r }, 'n5.g1'), r);
  assert.equal(nodeRange({ n5: r }, 'n6'), undefined);
  assert.equal(nodeRange(undefined, 'n5'), undefined);
  assert.equal(panelKey('file:///a.mir', 'f'), 'file:///a.mir#f');
});

test('server path: setting, then bundled, then PATH', () => {
  const base = { extensionPath: '/ext', platform: 'linux', home: '/home/u', workspaceFolder: '/ws' };
  assert.deepEqual(resolveServerPath({ ...base, setting: '~/bin/mirdsl', exists: () => false }), { command: '/home/u/bin/mirdsl', source: 'setting' });
  assert.deepEqual(resolveServerPath({ ...base, setting: '${workspaceFolder}/target/debug/mirdsl', exists: () => false }).command, '/ws/target/debug/mirdsl');
  assert.deepEqual(resolveServerPath({ ...base, setting: 'target/debug/mirdsl', exists: () => false }).command, '/ws/target/debug/mirdsl');
  assert.deepEqual(resolveServerPath({ ...base, setting: '', exists: (p) => p === '/ext/server/mirdsl' }), { command: '/ext/server/mirdsl', source: 'bundled' });
  assert.deepEqual(resolveServerPath({ ...base, setting: undefined, exists: () => false }), { command: 'mirdsl', source: 'path' });
});
