// Copies the TextMate grammar in at build time, and (when one is built) the
// release `mirdsl` binary into server/ so the packaged extension ships it.
// MIRDSL_SERVER_BIN=path overrides the binary; MIRDSL_BUNDLE_SERVER=0 skips it.
import { copyFileSync, existsSync, mkdirSync, rmSync, chmodSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const ext = join(here, '..');
const repo = join(ext, '..', '..');
mkdirSync(join(ext, 'syntaxes'), { recursive: true });
copyFileSync(join(repo, 'grammar', 'textmate', 'mindir.tmLanguage.json'), join(ext, 'syntaxes', 'mindir.tmLanguage.json'));
console.log('copied grammar/textmate/mindir.tmLanguage.json -> syntaxes/');
copyFileSync(join(repo, 'grammar', 'textmate', 'mindspore-ir.tmLanguage.json'), join(ext, 'syntaxes', 'mindspore-ir.tmLanguage.json'));
console.log('copied grammar/textmate/mindspore-ir.tmLanguage.json -> syntaxes/');

const serverDir = join(ext, 'server');
rmSync(serverDir, { recursive: true, force: true });
const bin = process.env.MIRDSL_SERVER_BIN || join(repo, 'target', 'release', 'mirdsl');
if (process.env.MIRDSL_BUNDLE_SERVER !== '0' && existsSync(bin)) {
  mkdirSync(serverDir, { recursive: true });
  copyFileSync(bin, join(serverDir, 'mirdsl'));
  chmodSync(join(serverDir, 'mirdsl'), 0o755);
  console.log(`bundled ${bin} -> server/mirdsl`);
} else {
  console.log('no server binary bundled (build one with `cargo build --release -p mirdsl`)');
}
