// What every code-server e2e script shares: Chromium on the workbench, checks
// that all run and are summed up at the end, and the ways a person drives VS
// Code (the command palette, Quick Open, Go to Line). Run by run.sh, which
// sets MIRDSL_E2E_DEPS, MIRDSL_E2E_URL, MIRDSL_E2E_SHOTS and MIRDSL_E2E_WS.
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(join(process.env.MIRDSL_E2E_DEPS, 'package.json'));
const { chromium } = require('playwright-core');

export const URL = process.env.MIRDSL_E2E_URL;
export const SHOTS = process.env.MIRDSL_E2E_SHOTS;
export const WS = process.env.MIRDSL_E2E_WS;
/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../../..');
/** Text as a person reads it (VS Code renders spaces as no-break spaces). */
export const norm = (s) => (s ?? '').replace(/\u00a0/g, ' ');

/**
 * Opens the workbench at `url` (default: the one run.sh started) and returns
 * the page with the helpers bound to it. `shotPrefix` names the screenshots
 * of failed checks; `what` the summary line ("debug checks").
 */
export async function openWorkbench({ shotPrefix = '', what = 'checks', url = URL } = {}) {
  mkdirSync(SHOTS, { recursive: true });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(60_000);
  const results = [];

  /** Runs one check; a failure is recorded (with a screenshot) and the script goes on. */
  async function step(name, fn) {
    const t0 = Date.now();
    try {
      await fn();
      results.push({ name, ok: true });
      console.log(`ok   ${name} (${Date.now() - t0} ms)`);
    } catch (e) {
      results.push({ name, ok: false, why: e.message.split('\n')[0] });
      console.log(`FAIL ${name}: ${e.message.split('\n').slice(0, 3).join(' | ')}`);
      await page.screenshot({ path: join(SHOTS, `failed-${shotPrefix}${name.replace(/\W+/g, '-')}.png`) })
        .catch(() => {});
    }
  }

  /** Closes the browser, prints every check and exits 1 if any failed. */
  async function finish() {
    await browser.close();
    const passed = results.filter((r) => r.ok).length;
    const failed = results.length - passed;
    console.log('');
    for (const r of results) console.log(`${r.ok ? 'PASS' : 'FAIL'}  ${r.name}${r.ok ? '' : `  (${r.why})`}`);
    console.log(`${passed}/${results.length} ${what} passed, ${failed} failed`);
    process.exit(failed === 0 ? 0 : 1);
  }

  async function palette(command) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input.input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${command}`);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first().waitFor();
    await page.keyboard.press('Enter');
  }

  async function activeTab(name) {
    await page.locator(`.tab.active[aria-label*="${name}"]`).first().waitFor();
    await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().waitFor();
  }

  /** Quick Open: `name` becomes the active editor. */
  async function openFile(name) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input.input');
    await input.waitFor({ state: 'visible' });
    await input.fill(name);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor();
    await page.keyboard.press('Enter');
    await activeTab(name);
  }

  /** Waits until the status bar shows the cursor on `line`. */
  async function cursorAt(line) {
    await page.waitForFunction((l) => {
      const s = document.querySelector('[id="status.editor.selection"]');
      return s && s.textContent.includes(`Ln ${l},`);
    }, line);
  }

  async function gotoLine(line, col) {
    await palette('Go to Line/Column');
    await page.keyboard.type(`${line}:${col}`);
    await page.keyboard.press('Enter');
    await cursorAt(line);
  }

  /** The text of the active editor's visible lines (inlay hints included). */
  async function activeLines() {
    return page.evaluate(() => [...document.querySelectorAll('.editor-group-container.active .monaco-editor .view-line')]
      .map((l) => ({ top: parseFloat(l.style.top), text: l.textContent.replace(/\u00a0/g, ' ') }))
      .sort((a, b) => a.top - b.top).map((l) => l.text));
  }

  /** The webview frame holding `selector` (webviews load in nested frames). */
  async function webviewFrame(selector) {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      for (const f of page.frames()) {
        const el = await f.$(selector).catch(() => null);
        if (el) return f;
      }
      await page.waitForEvent('framenavigated', { timeout: 1000 }).catch(() => {});
    }
    throw new Error(`no webview frame with ${selector}`);
  }

  await page.goto(url);
  await page.locator('.monaco-workbench').waitFor();
  return { browser, page, results, step, finish, palette, activeTab, openFile, cursorAt, gotoLine, activeLines, webviewFrame };
}
