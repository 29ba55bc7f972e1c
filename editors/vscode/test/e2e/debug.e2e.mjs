// Debugging in code-server (real VS Code 1.99.3): the "Debug" code lens and
// `mirdsl dap`. Stops at a breakpoint, shows a tensor in the Variables view,
// evaluates in the Debug Console, runs to the cursor and continues to the end. Run by run.sh
// after vscode.e2e.mjs, with the same environment.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openWorkbench, ROOT, SHOTS, WS } from './harness.mjs';

for (const f of ['debug.mir', 'helpers.mir', 'train.mir', 'scoped_net.ir', 'scoped_net.safetensors']) {
  copyFileSync(join(ROOT, 'crates/dap/tests/data', f), join(WS, f));
}

/** A launch.json debugging MindSpore's compile dump of nested cells (an `.ir`). */
function writeLaunchJson() {
  mkdirSync(join(WS, '.vscode'), { recursive: true });
  writeFileSync(join(WS, '.vscode', 'launch.json'), JSON.stringify({
    version: '0.2.0',
    configurations: [{
      type: 'mirdsl', request: 'launch', name: 'Debug the scoped_net dump',
      program: '${workspaceFolder}/scoped_net.ir', args: { x: '[[1.0, -2.0, 0.5]]' },
      loadWeights: 'scoped_net.safetensors', stopOnEntry: true,
    }],
  }, null, 2));
}

/** Waits until the Call Stack shows the frame `name` at `file`:`line`. */
function at(name, file, line) {
  const where = `${file.replace(/\./g, '\\.')}\\s*${line}:`;
  return page.waitForFunction(([name, where]) => [...document.querySelectorAll('.debug-call-stack .monaco-list-row')]
    .some((r) => r.textContent.includes(name) && new RegExp(where).test(r.textContent.replace(/\u00a0/g, ' '))),
  [name, where]);
}

const { page, step, finish, gotoLine, openFile, palette } = await openWorkbench({ shotPrefix: '', what: 'debug checks' });

await step('a Debug code lens sits beside Run', async () => {
  await openFile('debug.mir');
  await page.locator('.codelens-decoration a', { hasText: 'Debug' }).first().waitFor();
});

await step('a breakpoint stops the run and the Variables view shows a tensor', async () => {
  await gotoLine(23, 3);
  await palette('Debug: Toggle Breakpoint');
  await page.locator('.editor-group-container.active .codicon-debug-breakpoint').first().waitFor();
  // The cursor is in `main`: Debug Graph launches it with x = ones.
  await palette('MindIR: Debug Graph');
  await page.locator('.debug-toolbar').first().waitFor();
  await page.locator('.debug-top-stack-frame-line, .debug-top-stack-frame-column').first().waitFor();
  const x = page.locator('.debug-view-content .monaco-list-row', { hasText: 'min=1 max=1' }).first();
  await x.waitFor();
  const text = (await x.textContent()).replace(/\u00a0/g, ' ');
  if (!text.includes('f32[2, 3]') && !text.includes('nan=0')) throw new Error(`x: ${text}`);
  const frames = await page.locator('.debug-call-stack .monaco-list-row').allTextContents();
  if (!frames.some((f) => f.includes('main') && f.includes('debug.mir'))) throw new Error(`stack: ${frames.join(' / ')}`);
  // Expanding x lists its rows as slices.
  await x.click();
  await page.locator('.debug-view-content .monaco-list-row', { hasText: '[1, :]' }).first().waitFor();
  await page.screenshot({ path: join(SHOTS, 'debug-breakpoint.png') });
});

await step('the Debug Console evaluates in the frame', async () => {
  await palette('Focus on Debug Console View');
  const input = page.locator('.repl-input-wrapper .monaco-editor textarea').first();
  await input.waitFor();
  await input.focus();
  await page.keyboard.type('ReduceSum(a)');
  await page.keyboard.press('Enter');
  await page.locator('.repl .monaco-list-row', { hasText: 'f32 12' }).first().waitFor();
  await page.screenshot({ path: join(SHOTS, 'debug-console.png') });
});

await step('run to cursor stops on the cursor\'s line', async () => {
  // VS Code sets a temporary breakpoint on `d = dense(...)` and continues.
  await palette('View: Focus Active Editor Group');
  await gotoLine(25, 3);
  await palette('Debug: Run to Cursor');
  await page.waitForFunction(() => [...document.querySelectorAll('.debug-call-stack .monaco-list-row')]
    .some((r) => /main/.test(r.textContent) && /debug\.mir\s*25:/.test(r.textContent.replace(/\u00a0/g, ' '))));
  const d = page.locator('.debug-view-content .monaco-list-row', { hasText: 'f32[2, 3]' });
  await d.first().waitFor();
  // The temporary breakpoint is gone: only line 23's is listed.
  const bps = await page.locator('.debug-breakpoints .monaco-list-row').allTextContents();
  const lines = bps.filter((b) => b.includes('debug.mir'));
  if (lines.length !== 1 || !lines[0].includes('23')) throw new Error(`breakpoints: ${bps.join(' / ')}`);
});

await step('continue runs to the end', async () => {
  await palette('Debug: Continue');
  await page.locator('.debug-toolbar').first().waitFor({ state: 'hidden' });
});

await step('F5 on an .ir dump debugs it from its first statement, with ones', async () => {
  // No launch.json yet: the extension makes the configuration.
  await openFile('scoped_net.ir');
  await page.locator('.editor-group-container.active .monaco-editor textarea').first().focus();
  await page.keyboard.press('F5');
  await page.locator('.debug-toolbar').first().waitFor();
  await at('main [block.fc]', 'scoped_net.mir', 9);
  await page.locator('.debug-view-content .monaco-list-row', { hasText: 'min=1 max=1' }).first().waitFor();
  await palette('Debug: Continue');
  await page.locator('.debug-toolbar').first().waitFor({ state: 'hidden' });
});

await step('an .ir dump: the stack and the hover name MindSpore\'s scopes', async () => {
  // F5 starts the launch.json's configuration once VS Code has read it.
  writeLaunchJson();
  await page.locator('.statusbar-item', { hasText: 'Debug the scoped_net dump' }).first().waitFor();
  await page.locator('.editor-group-container.active .monaco-editor textarea').first().focus();
  await page.keyboard.press('F5');
  await page.locator('.debug-toolbar').first().waitFor();
  // Stopped on entry in the imported text: `block.fc.x = MatMul(...)`, in the
  // scope Default/block-Block/fc-Dense.
  await page.locator('.debug-call-stack .monaco-list-row', { hasText: 'main [block.fc]' }).first().waitFor();
  await page.locator('.tab.active[aria-label*="scoped_net.mir"]').first().waitFor();
  await at('main [block.fc]', 'scoped_net.mir', 9);
  await palette('Debug: Step Over');
  await at('main [block.fc]', 'scoped_net.mir', 10);
  await palette('Debug: Step Over');
  await at('main [block.act]', 'scoped_net.mir', 11);
  // The debug hover on `x_1` of `block.fc.x_1` (line 10: `  block.fc.x_1 = BiasAdd(...)`).
  await palette('View: Focus Active Editor Group');
  await gotoLine(10, 13);
  await palette('Debug: Show Hover');
  const hover = page.locator('.debug-hover-widget', { hasText: 'MindSpore scope' }).first();
  await hover.waitFor();
  const text = (await hover.textContent()).replace(/\u00a0/g, ' ');
  if (!text.includes('MindSpore scope `block.fc`: f32[1, 3]')) throw new Error(`hover: ${text}`);
  await page.waitForFunction(() => {
    const h = document.querySelector('.debug-hover-widget');
    return h && getComputedStyle(h).opacity === '1';
  });
  await page.screenshot({ path: join(SHOTS, 'debug-scopes.png') });
  await page.keyboard.press('Escape');
  await palette('Debug: Continue');
  await page.locator('.debug-toolbar').first().waitFor({ state: 'hidden' });
});

await finish();
