// Pure helpers for Run Graph: finding graphs and their parameters in the text,
// parsing the arguments a person types, and formatting results. No `vscode` import.

export interface GraphParam {
  name: string;
  /** The annotation as written (`f32[B, 784]`), or '' when unannotated. */
  type: string;
}

export interface GraphInfo {
  name: string;
  /** 0-based line of the `graph` keyword. */
  line: number;
  params: GraphParam[];
}

/** Blanks comments and string contents so scanning for brackets is safe. */
function stripCommentsAndStrings(text: string): string {
  let out = '';
  let inStr = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inStr) {
      if (c === '\\') { out += '  '; i++; continue; }
      if (c === '"') { inStr = false; out += c; continue; }
      out += c === '\n' ? '\n' : ' ';
      continue;
    }
    if (c === '"') { inStr = true; out += c; continue; }
    if (c === '#') {
      while (i < text.length && text[i] !== '\n') { out += ' '; i++; }
      if (i < text.length) out += '\n';
      continue;
    }
    out += c;
  }
  return out;
}

/** Splits on commas that are not nested in brackets. */
export function splitTopLevel(s: string, sep = ','): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  let inStr = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inStr) {
      cur += c;
      if (c === '\\' && i + 1 < s.length) { cur += s[++i]; continue; }
      if (c === '"') inStr = false;
      continue;
    }
    if (c === '"') { inStr = true; cur += c; continue; }
    if (c === '(' || c === '[' || c === '{') depth++;
    if (c === ')' || c === ']' || c === '}') depth--;
    if (c === sep && depth === 0) { parts.push(cur); cur = ''; continue; }
    cur += c;
  }
  if (cur.trim() !== '' || parts.length > 0) parts.push(cur);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

/** The top-level graphs of a document, in order, with their parameters. */
export function listGraphs(text: string): GraphInfo[] {
  const clean = stripCommentsAndStrings(text);
  const graphs: GraphInfo[] = [];
  let depth = 0;
  let line = 0;
  for (let i = 0; i < clean.length; i++) {
    const c = clean[i];
    if (c === '\n') { line++; continue; }
    if (c === '{') { depth++; continue; }
    if (c === '}') { depth = Math.max(0, depth - 1); continue; }
    if (depth !== 0 || c !== 'g' || !clean.startsWith('graph', i)) continue;
    if (i > 0 && /[A-Za-z0-9_.%]/.test(clean[i - 1])) continue;
    const m = /^graph\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(/.exec(clean.slice(i));
    if (!m) continue;
    // The parameter list, up to the matching ')'.
    let j = i + m[0].length;
    let pd = 1;
    const start = j;
    while (j < clean.length && pd > 0) {
      if (clean[j] === '(' || clean[j] === '[') pd++;
      if (clean[j] === ')' || clean[j] === ']') pd--;
      j++;
    }
    const inner = clean.slice(start, j - 1);
    const params = splitTopLevel(inner).map((p) => {
      const colon = p.indexOf(':');
      return colon < 0
        ? { name: p.trim(), type: '' }
        : { name: p.slice(0, colon).trim(), type: p.slice(colon + 1).replace(/\s+/g, ' ').trim() };
    });
    graphs.push({ name: m[1], line, params });
  }
  return graphs;
}

/** The top-level graph whose text holds `line` (0-based), or the last one before it. */
export function graphAtLine(text: string, line: number): string | undefined {
  let found: string | undefined;
  for (const g of listGraphs(text)) {
    if (g.line <= line) found = g.name;
  }
  return found;
}

/** Symbolic dimensions named in the parameters' annotations (`B` in `f32[B, 784]`). */
export function symbolicDims(params: GraphParam[]): string[] {
  const out: string[] = [];
  for (const p of params) {
    for (const m of p.type.matchAll(/\[([^\]]*)\]/g)) {
      for (const d of m[1].split(',')) {
        const t = d.trim();
        if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(t) && !out.includes(t)) out.push(t);
      }
    }
  }
  return out;
}

export interface RunRequestArgs {
  args: Record<string, string>;
  dims: Record<string, number>;
}

export type Fill = 'ones' | 'zeros' | 'random';

/** Every parameter filled the same way, every symbolic dimension set to `dim`. */
export function defaultRunArgs(params: GraphParam[], fill: Fill = 'ones', dim = 2): RunRequestArgs {
  const args: Record<string, string> = {};
  for (const p of params) {
    // Unannotated scalars cannot be shaped from an annotation: pass 1.
    args[p.name] = p.type === '' ? '1.0' : fill;
  }
  const dims: Record<string, number> = {};
  for (const d of symbolicDims(params)) dims[d] = dim;
  return { args, dims };
}

/**
 * Parses what a person types for Run Graph: `x=[1.0, 2.0], y=ones, B=4`.
 * A key that is a parameter's name (or its 0-based position) is an argument; any
 * other key with an integer value is a symbolic dimension. Parameters not given
 * take `fill`. Throws an Error with a readable message on bad input.
 */
export function parseRunArgs(input: string, params: GraphParam[], fill: Fill = 'ones'): RunRequestArgs {
  const base = defaultRunArgs(params, fill);
  const names = params.map((p) => p.name);
  for (const part of splitTopLevel(input)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new Error(`expected NAME=VALUE, got \`${part}\``);
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (value === '') throw new Error(`no value for \`${key}\``);
    if (names.includes(key)) {
      base.args[key] = value;
    } else if (/^\d+$/.test(key) && Number(key) < names.length) {
      base.args[names[Number(key)]] = value;
    } else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) && /^\d+$/.test(value)) {
      base.dims[key] = Number(value);
    } else {
      throw new Error(`\`${key}\` is not a parameter of the graph (${names.join(', ') || 'none'})`);
    }
  }
  return base;
}

/** One line describing a run: `test_f(x=ones, y=ones) [B=2] on cpu`. */
export function describeRun(graph: string, req: RunRequestArgs, device: string): string {
  const a = Object.entries(req.args).map(([k, v]) => `${k}=${v}`).join(', ');
  const d = Object.entries(req.dims).map(([k, v]) => `${k}=${v}`).join(', ');
  return `${graph}(${a})${d ? ` [${d}]` : ''} on ${device}`;
}

/** A run result (as `mirdsl run --format json` prints it) as readable text. */
export function formatRunResult(value: unknown, maxElems = 24, indent = ''): string {
  if (value === null || value === undefined) return 'none';
  if (Array.isArray(value)) {
    if (value.length === 0) return '()';
    const items = value.map((v, i) => `${indent}  [${i}] ${formatRunResult(v, maxElems, indent + '  ')}`);
    return `(tuple of ${value.length})\n${items.join('\n')}`;
  }
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (Array.isArray(o.shape) && Array.isArray(o.data)) {
      const data = o.data as unknown[];
      const shown = data.slice(0, maxElems).map((x) => String(x)).join(', ');
      const more = data.length > maxElems ? `, … (${data.length} values)` : '';
      return `${o.dtype}[${(o.shape as number[]).join(', ')}] = [${shown}${more}]`;
    }
    if ('value' in o) return `${o.dtype ?? ''} ${String(o.value)}`.trim();
    return JSON.stringify(value);
  }
  return String(value);
}
