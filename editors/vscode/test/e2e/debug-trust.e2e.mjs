// Workspace trust in code-server (real VS Code 1.99.3): run.sh starts a second
// code-server with trust on (`security.workspace.trust.enabled`) and no startup
// prompt (`security.workspace.trust.startupPrompt: never`), so the folder opens
// untrusted, in Restricted Mode. Run Graph (the lens) asks with the
// extension's own question; Debug (the lens) with VS Code's, which every
// debug session start asks in an untrusted folder ("Debugging executes build
// tasks and program code from your workspace"); the extension asks too if
// the folder is still untrusted after it. Declining runs nothing; accepting runs.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { openWorkbench, norm, ROOT, SHOTS, WS } from './harness.mjs';

for (const f of ['debug.mir', 'helpers.mir', 'train.mir']) {
  copyFileSync(join(ROOT, 'crates/dap/tests/data', f), join(WS, f));
}

/** Clicks the code lens `title` just above the line that starts with `header`. */
async function clickLens(title, header) {
  const handle = await page.waitForFunction(([title, header]) => {
    for (const ed of document.querySelectorAll('.monaco-editor')) {
      const line = [...ed.querySelectorAll('.view-line')]
        .find((l) => l.textContent.replace(/\u00a0/g, ' ').startsWith(header));
      if (!line) continue;
      const top = line.getBoundingClientRect().top;
      let best = null;
      for (const a of ed.querySelectorAll('.codelens-decoration a')) {
        const t = a.getBoundingClientRect().top;
        if (a.textContent.includes(title) && t < top && (!best || t > best.getBoundingClientRect().top)) best = a;
      }
      if (best) {
        const r = best.getBoundingClientRect();
        return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
      }
    }
    return null;
  }, [title, header]);
  const at = await handle.jsonValue();
  // A real click: Monaco handles lens clicks through its mouse events.
  await page.mouse.click(at.x, at.y);
}

/** Waits for a modal dialog; returns its text. */
async function dialog() {
  const box = page.locator('.monaco-dialog-box').first();
  await box.waitFor();
  return norm(await box.textContent());
}

/** Presses the dialog's button whose label matches `label`. */
async function press(label) {
  await page.locator('.monaco-dialog-box .monaco-button', { hasText: label }).first().click();
  await page.locator('.monaco-dialog-box').first().waitFor({ state: 'hidden' });
}

/** The text of the Output panel (the Run Graph channel), or ''. */
async function panelText() {
  return page.evaluate(() => {
    const p = document.querySelector('.part.panel');
    return p ? p.textContent.replace(/\u00a0/g, ' ') : '';
  });
}

const { page, step, finish, gotoLine, openFile, palette } = await openWorkbench({ shotPrefix: 'trust-', what: 'workspace trust checks' });

await step('the folder opens in Restricted Mode', async () => {
  await page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).first().waitFor();
  await openFile('debug.mir');
  // The extension works in Restricted Mode: its server answers (the lenses).
  await page.locator('.codelens-decoration a', { hasText: 'Debug' }).first().waitFor();
});

await step('Run Graph asks first, and declining runs nothing', async () => {
  await clickLens('Run', 'graph main(');
  const text = await dialog();
  if (!/not trusted/.test(text)) throw new Error(`dialog: ${text}`);
  await page.screenshot({ path: join(SHOTS, 'trust-run-dialog.png') });
  await press('Cancel');
  // Nothing ran: accepting the next one gives the only run in the output.
  await clickLens('Run', 'graph main(');
  await dialog();
  await press('Run');
  await page.waitForFunction(() => {
    const p = document.querySelector('.part.panel');
    return p && p.textContent.replace(/\u00a0/g, ' ').includes('main finished');
  });
  const out = await panelText();
  const runs = out.split('▶').length - 1;
  if (runs !== 1) throw new Error(`${runs} runs in the output: ${out.slice(0, 400)}`);
});

await step('Debug asks first, and declining starts no session', async () => {
  await gotoLine(23, 3);
  await palette('Debug: Toggle Breakpoint');
  await page.locator('.editor-group-container.active .codicon-debug-breakpoint').first().waitFor();
  await clickLens('Debug', 'graph main(');
  // VS Code's own question: starting a debug session asks for trust.
  const text = await dialog();
  if (!/trust the authors/.test(text) || !/Debugging executes/.test(text)) throw new Error(`dialog: ${text}`);
  await page.screenshot({ path: join(SHOTS, 'trust-debug-dialog.png') });
  await press('Cancel');
  // A declined start leaves no session: the next, accepted, is the only one.
  await clickLens('Debug', 'graph main(');
  await dialog();
  await press('Trust Folder & Continue');
  await page.locator('.debug-toolbar').first().waitFor();
  await page.locator('.debug-view-content .monaco-list-row', { hasText: 'min=1 max=1' }).first().waitFor();
  const sessions = await page.locator('.debug-call-stack .monaco-list-row .session').count();
  const threads = await page.locator('.debug-call-stack .monaco-list-row .thread').count();
  if (sessions > 1 || threads > 1) throw new Error(`${sessions} sessions, ${threads} threads`);
  await palette('Debug: Continue');
  await page.locator('.debug-toolbar').first().waitFor({ state: 'hidden' });
});

await finish();
