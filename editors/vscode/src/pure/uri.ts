// Pure helpers for the virtual IR / gradient documents and node lookups.

export const IR_SCHEME = 'mirdsl-ir';

export type IrKind = 'ir' | 'gradient';

export interface IrTarget {
  /** The source document's URI, as a string. */
  source: string;
  graph: string;
  kind: IrKind;
}

/**
 * The virtual document for a graph's IR: `mirdsl-ir:/test_f.ir.mir?<source>`.
 * The path ends in `.mir`, so the view gets the language's highlighting.
 */
export function irUriString(t: IrTarget): string {
  const name = `${t.graph}.${t.kind === 'gradient' ? 'grad' : 'ir'}.mir`;
  const query = new URLSearchParams({ source: t.source, graph: t.graph, kind: t.kind }).toString();
  return `${IR_SCHEME}:/${encodeURIComponent(name)}?${query}`;
}

/** Reads back what [`irUriString`] wrote, from a URI's query part. */
export function parseIrQuery(query: string): IrTarget | undefined {
  const q = new URLSearchParams(query);
  const source = q.get('source');
  const graph = q.get('graph');
  const kind = q.get('kind');
  if (!source || !graph || (kind !== 'ir' && kind !== 'gradient')) return undefined;
  return { source, graph, kind };
}

export interface LspRange {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

/**
 * The source range of a node clicked in the graph view. Ids the server did not
 * list fall back to their base (`n5.g1`, a copy of `n5` in graph 1, gives `n5`).
 */
export function nodeRange(nodes: Record<string, LspRange> | undefined, id: string): LspRange | undefined {
  if (!nodes) return undefined;
  if (nodes[id]) return nodes[id];
  const base = id.split('.')[0];
  return nodes[base];
}

/** The key of one graph view: one per document and graph. */
export function panelKey(source: string, graph: string): string {
  return `${source}#${graph}`;
}
