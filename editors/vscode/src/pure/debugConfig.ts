// Launch configurations for the `mirdsl` debug type, with the same default
// arguments as Run (`ones` for annotated tensors, 2 for symbolic dimensions).
// No VS Code imports.

import { defaultRunArgs, listGraphs } from './args';

export interface DebugConfig {
  type: string;
  request: string;
  name: string;
  program: string;
  entry?: string;
  args: Record<string, string>;
  dims: Record<string, number>;
  stopOnEntry: boolean;
}

/** A launch configuration debugging `graph` of the file `program` whose text is `text`. */
export function debugConfigFor(program: string, text: string, graph?: string): DebugConfig {
  const info = listGraphs(text).find((g) => g.name === graph);
  const run = defaultRunArgs(info?.params ?? []);
  return {
    type: 'mirdsl',
    request: 'launch',
    name: graph ? `Debug ${graph}` : 'Debug graph',
    program,
    ...(graph ? { entry: graph } : {}),
    args: run.args,
    dims: run.dims,
    stopOnEntry: false,
  };
}
