// The graph view's protocol and page, without `vscode`: the extension posts
// `ExtToView` messages, the page (media/graph.js) answers with `ViewToExt`.

import { LspRange, nodeRange } from './uri';

export type ExtToView =
  | { type: 'update'; graph: string; svg: string; version: number }
  | { type: 'dot'; graph: string; dot: string; version: number }
  | { type: 'error'; graph: string; message: string };

export type ViewToExt =
  | { type: 'ready' }
  | { type: 'reveal'; node: string }
  | { type: 'rendered'; version: number; nodes: number };

/** What the extension does about a message from the page. */
export type Action =
  | { kind: 'sendCurrent' }
  | { kind: 'reveal'; range: LspRange; node: string }
  | { kind: 'unknownNode'; node: string }
  | { kind: 'rendered'; version: number; nodes: number }
  | { kind: 'ignore'; why: string };

/** Validates a message from the page (it is untrusted input) and decides what to do. */
export function handleViewMessage(msg: unknown, nodes: Record<string, LspRange> | undefined): Action {
  if (typeof msg !== 'object' || msg === null) return { kind: 'ignore', why: 'not an object' };
  const m = msg as Record<string, unknown>;
  switch (m.type) {
    case 'ready':
      return { kind: 'sendCurrent' };
    case 'reveal': {
      if (typeof m.node !== 'string' || m.node.length === 0 || m.node.length > 200) {
        return { kind: 'ignore', why: 'bad node id' };
      }
      const range = nodeRange(nodes, m.node);
      return range ? { kind: 'reveal', range, node: m.node } : { kind: 'unknownNode', node: m.node };
    }
    case 'rendered':
      if (typeof m.version !== 'number' || typeof m.nodes !== 'number') return { kind: 'ignore', why: 'bad rendered' };
      return { kind: 'rendered', version: m.version, nodes: m.nodes };
    default:
      return { kind: 'ignore', why: `unknown type ${String(m.type)}` };
  }
}

/** The reply of `mirdsl/graph`, checked; what to post to the page. */
export function graphReplyToMessage(reply: unknown, graph: string, version: number): ExtToView {
  if (typeof reply !== 'object' || reply === null) {
    return { type: 'error', graph, message: 'the server sent no graph' };
  }
  const r = reply as Record<string, unknown>;
  if (typeof r.svg === 'string' && r.svg.includes('<svg')) return { type: 'update', graph, svg: r.svg, version };
  if (typeof r.dot === 'string') return { type: 'dot', graph, dot: r.dot, version };
  return { type: 'error', graph, message: 'the server sent neither SVG nor DOT' };
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The page: a toolbar, a status line and the drawing area; graph.js does the rest. */
export function graphHtml(o: { cspSource: string; nonce: string; scriptUri: string; styleUri: string; title: string }): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${o.cspSource} data:; style-src ${o.cspSource} 'unsafe-inline'; script-src 'nonce-${o.nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${o.styleUri}">
<title>${escapeHtml(o.title)}</title>
</head>
<body>
<div id="toolbar">
  <span id="title">${escapeHtml(o.title)}</span>
  <button id="fit" title="Fit to window">Fit</button>
  <button id="zoom-in" title="Zoom in">+</button>
  <button id="zoom-out" title="Zoom out">−</button>
  <button id="reset" title="Actual size">1:1</button>
  <button id="expand" title="Expand every cluster">Expand all</button>
  <span id="status"></span>
</div>
<div id="viewport"><div id="canvas"></div></div>
<script nonce="${o.nonce}" src="${o.scriptUri}"></script>
</body>
</html>`;
}

export function makeNonce(random: () => number = Math.random): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let i = 0; i < 32; i++) s += chars[Math.floor(random() * chars.length)];
  return s;
}
