// Where the `mirdsl` binary is: the setting, else the one shipped in the
// extension (`server/mirdsl`), else `mirdsl` on PATH.

import * as path from 'node:path';

export interface ServerPathInputs {
  setting: string | undefined;
  extensionPath: string;
  workspaceFolder?: string;
  platform: string;
  home?: string;
  exists: (p: string) => boolean;
}

export function resolveServerPath(i: ServerPathInputs): { command: string; source: 'setting' | 'bundled' | 'path' } {
  let s = (i.setting ?? '').trim();
  if (s !== '') {
    if (s.startsWith('~/') && i.home) s = path.join(i.home, s.slice(2));
    if (i.workspaceFolder) s = s.replace(/\$\{workspaceFolder\}/g, i.workspaceFolder);
    if (!path.isAbsolute(s) && s.includes('/') && i.workspaceFolder) s = path.join(i.workspaceFolder, s);
    return { command: s, source: 'setting' };
  }
  const exe = i.platform === 'win32' ? 'mirdsl.exe' : 'mirdsl';
  const bundled = path.join(i.extensionPath, 'server', exe);
  if (i.exists(bundled)) return { command: bundled, source: 'bundled' };
  return { command: exe, source: 'path' };
}
