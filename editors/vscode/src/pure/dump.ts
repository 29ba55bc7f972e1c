// Pure helpers for MindSpore compile dumps (*.ir, language mindspore-ir).

/** The subgraph whose block holds `line` (0-based), else the dump's entry, else its first. */
export function dumpGraphAtLine(text: string, line: number): string | undefined {
  const lines = text.split(/\r?\n/);
  for (let i = Math.min(line, lines.length - 1); i >= 0; i--) {
    const l = lines[i];
    if (l.startsWith('}') && i < line) break; // after a block's end: in no block
    const m = /^subgraph (@[^\s(]+)\(/.exec(l);
    if (m) return m[1];
  }
  const entry = /^# IR entry: (@\S+)/m.exec(text);
  if (entry) return entry[1];
  const first = /^subgraph (@[^\s(]+)\(/m.exec(text);
  return first ? first[1] : undefined;
}

/** The read-only document showing a structural diff: `mirdsl-dump-diff:/PREV ↔ THIS?n`. */
export const DIFF_SCHEME = 'mirdsl-dump-diff';

export function diffUriString(previous: string, current: string, n: number): string {
  const base = (u: string) => decodeURIComponent(u.replace(/[?#].*$/, '').split('/').pop() ?? u);
  const name = `${base(previous).replace(/\.ir$/, '')} → ${base(current).replace(/\.ir$/, '')}.diff.txt`;
  return `${DIFF_SCHEME}:/${encodeURIComponent(name)}?${n}`;
}
