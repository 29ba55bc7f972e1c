import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  defaultRunArgs, describeRun, formatRunResult, graphAtLine, listGraphs, parseRunArgs, splitTopLevel, symbolicDims,
} from '../src/pure/args';

const SRC = `# a comment with graph fake(x) {
param fc1.weight: f32[128, 784] = normal(std=0.01, seed=1)

graph func(x, y) {
  ret = x / y
  return ret
}

graph test_f(x: f32[3], y: f32[3]) -> f32[3] {
  graph inner(z) { return z }
  s = "graph nope(q) {"
  return x
}

graph mlp(x: f32[B, 784], labels: i32[B]) {
  return x
}
`;

test('listGraphs finds top-level graphs with their parameters, not nested or commented ones', () => {
  const gs = listGraphs(SRC);
  assert.deepEqual(gs.map((g) => [g.name, g.line]), [['func', 3], ['test_f', 8], ['mlp', 14]]);
  assert.deepEqual(gs[0].params, [{ name: 'x', type: '' }, { name: 'y', type: '' }]);
  assert.deepEqual(gs[1].params, [{ name: 'x', type: 'f32[3]' }, { name: 'y', type: 'f32[3]' }]);
  assert.deepEqual(gs[2].params, [{ name: 'x', type: 'f32[B, 784]' }, { name: 'labels', type: 'i32[B]' }]);
});

test('graphAtLine picks the graph around the cursor', () => {
  assert.equal(graphAtLine(SRC, 0), undefined);
  assert.equal(graphAtLine(SRC, 4), 'func');
  assert.equal(graphAtLine(SRC, 10), 'test_f');
  assert.equal(graphAtLine(SRC, 99), 'mlp');
});

test('symbolic dimensions come from annotations', () => {
  assert.deepEqual(symbolicDims(listGraphs(SRC)[2].params), ['B']);
  assert.deepEqual(symbolicDims([{ name: 'x', type: 'f32[?, *, 3]' }]), []);
});

test('defaults fill tensors and set symbols', () => {
  const g = listGraphs(SRC);
  assert.deepEqual(defaultRunArgs(g[1].params), { args: { x: 'ones', y: 'ones' }, dims: {} });
  assert.deepEqual(defaultRunArgs(g[2].params, 'random', 4), { args: { x: 'random', labels: 'random' }, dims: { B: 4 } });
  assert.deepEqual(defaultRunArgs(g[0].params).args, { x: '1.0', y: '1.0' });
});

test('parseRunArgs reads names, positions, tensors and dimensions', () => {
  const p = listGraphs(SRC)[2].params;
  assert.deepEqual(parseRunArgs('x=[[1.0, 2.0]], B=1', p), { args: { x: '[[1.0, 2.0]]', labels: 'ones' }, dims: { B: 1 } });
  assert.deepEqual(parseRunArgs('1="labels.npy"', p).args.labels, '"labels.npy"');
  assert.deepEqual(parseRunArgs('', p), defaultRunArgs(p));
  assert.throws(() => parseRunArgs('q=1.0', p), /not a parameter/);
  assert.throws(() => parseRunArgs('x', p), /NAME=VALUE/);
  assert.throws(() => parseRunArgs('x=', p), /no value/);
});

test('splitTopLevel keeps brackets and strings whole', () => {
  assert.deepEqual(splitTopLevel('a=[1, 2], b=(3, 4), c="x, y"'), ['a=[1, 2]', 'b=(3, 4)', 'c="x, y"']);
  assert.deepEqual(splitTopLevel(''), []);
});

test('run results read well', () => {
  assert.equal(formatRunResult({ dtype: 'f32', shape: [3], data: [1, 2, 3] }), 'f32[3] = [1, 2, 3]');
  assert.equal(formatRunResult({ dtype: 'i64', value: 5 }), 'i64 5');
  assert.equal(formatRunResult(null), 'none');
  assert.match(formatRunResult([{ dtype: 'i64', value: 4 }, { dtype: 'i64', value: 5 }]), /tuple of 2\)\n  \[0\] i64 4\n  \[1\] i64 5/);
  assert.match(formatRunResult({ dtype: 'f32', shape: [100], data: Array(100).fill(0) }, 3), /0, 0, 0, … \(100 values\)/);
  assert.equal(describeRun('f', { args: { x: 'ones' }, dims: { B: 2 } }, 'cpu'), 'f(x=ones) [B=2] on cpu');
});
