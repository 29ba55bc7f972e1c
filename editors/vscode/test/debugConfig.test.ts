import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { debugConfigFor } from '../src/pure/debugConfig';

const SRC = `param w: f32[3] = zeros

graph main(x: f32[B, 3], n) {
  return x
}
`;

test('a Debug lens launches the graph with Run\'s default arguments', () => {
  const c = debugConfigFor('/w/a.mir', SRC, 'main');
  assert.equal(c.type, 'mirdsl');
  assert.equal(c.request, 'launch');
  assert.equal(c.program, '/w/a.mir');
  assert.equal(c.entry, 'main');
  assert.deepEqual(c.args, { x: 'ones', n: '1.0' });
  assert.deepEqual(c.dims, { B: 2 });
});

test('without a graph the adapter picks the entry', () => {
  const c = debugConfigFor('/w/a.mir', SRC);
  assert.equal(c.entry, undefined);
  assert.deepEqual(c.args, {});
});
