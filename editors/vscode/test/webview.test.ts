import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { escapeHtml, graphHtml, graphReplyToMessage, handleViewMessage, makeNonce } from '../src/pure/webview';

const r = { start: { line: 3, character: 2 }, end: { line: 3, character: 9 } };

test('messages from the page are validated', () => {
  assert.deepEqual(handleViewMessage({ type: 'ready' }, {}), { kind: 'sendCurrent' });
  assert.deepEqual(handleViewMessage({ type: 'reveal', node: 'n4' }, { n4: r }), { kind: 'reveal', range: r, node: 'n4' });
  assert.deepEqual(handleViewMessage({ type: 'reveal', node: 'n4.g2' }, { n4: r }), { kind: 'reveal', range: r, node: 'n4.g2' });
  assert.deepEqual(handleViewMessage({ type: 'reveal', node: 'zz' }, { n4: r }), { kind: 'unknownNode', node: 'zz' });
  assert.equal(handleViewMessage({ type: 'reveal', node: 42 }, {}).kind, 'ignore');
  assert.equal(handleViewMessage({ type: 'reveal', node: 'x'.repeat(500) }, {}).kind, 'ignore');
  assert.equal(handleViewMessage(null, {}).kind, 'ignore');
  assert.equal(handleViewMessage('ready', {}).kind, 'ignore');
  assert.equal(handleViewMessage({ type: 'eval', code: '1' }, {}).kind, 'ignore');
  assert.deepEqual(handleViewMessage({ type: 'rendered', version: 3, nodes: 8 }, {}), { kind: 'rendered', version: 3, nodes: 8 });
});

test('graph replies become page messages: SVG, else DOT, else an error', () => {
  assert.deepEqual(graphReplyToMessage({ svg: '<svg/>', dot: 'digraph{}' }, 'f', 1), { type: 'update', graph: 'f', svg: '<svg/>', version: 1 });
  assert.deepEqual(graphReplyToMessage({ svg: null, dot: 'digraph{}' }, 'f', 2), { type: 'dot', graph: 'f', dot: 'digraph{}', version: 2 });
  assert.equal(graphReplyToMessage(null, 'f', 3).type, 'error');
  assert.equal(graphReplyToMessage({}, 'f', 3).type, 'error');
});

test('the page has a strict CSP with the nonce, and escapes the title', () => {
  const nonce = makeNonce(() => 0.5);
  assert.equal(nonce.length, 32);
  const html = graphHtml({ cspSource: 'vscode-resource:', nonce, scriptUri: 's.js', styleUri: 's.css', title: '<f>' });
  assert.match(html, new RegExp(`script-src 'nonce-${nonce}'`));
  assert.match(html, /default-src 'none'/);
  assert.match(html, /<script nonce="[A-Za-z0-9]{32}" src="s.js">/);
  assert.ok(html.includes('&lt;f&gt;') && !html.includes('<f>'));
  assert.equal(escapeHtml(`"'&`), '&quot;&#39;&amp;');
});
