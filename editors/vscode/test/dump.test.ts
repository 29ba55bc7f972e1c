import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { diffUriString, dumpGraphAtLine, DIFF_SCHEME } from '../src/pure/dump';

const DUMP = `# IR entry: @2_main_1
# Params:
%para1_x: <Tensor[Float32], (2)> : [2]

subgraph attr:
subgraph @1_helper_2(%para2_y) {
  %0(CNode_1) = PrimFunc_Neg(%para2_y)
      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)
  Return(%0)
}

subgraph @2_main_1() {
  %0(CNode_3) = call @1_helper_2(%para1_x)
  Return(%0)
}
`;

test('the subgraph under a line, else the entry', () => {
  assert.equal(dumpGraphAtLine(DUMP, 6), '@1_helper_2');
  assert.equal(dumpGraphAtLine(DUMP, 5), '@1_helper_2');
  assert.equal(dumpGraphAtLine(DUMP, 9), '@1_helper_2');
  assert.equal(dumpGraphAtLine(DUMP, 13), '@2_main_1');
  assert.equal(dumpGraphAtLine(DUMP, 0), '@2_main_1');
  assert.equal(dumpGraphAtLine(DUMP, 10), '@2_main_1');
  assert.equal(dumpGraphAtLine('nothing here', 0), undefined);
});

test('the diff document is named after both stages', () => {
  const u = diffUriString('file:///d/dump/13_optimize_0068.ir', 'file:///d/dump/14_detach_backward_0069.ir', 3);
  assert.ok(u.startsWith(`${DIFF_SCHEME}:/`));
  assert.equal(decodeURIComponent(u.slice(DIFF_SCHEME.length + 2, u.indexOf('?'))), '13_optimize_0068 → 14_detach_backward_0069.diff.txt');
  assert.ok(u.endsWith('?3'));
});
