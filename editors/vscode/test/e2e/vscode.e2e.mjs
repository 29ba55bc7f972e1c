// Drives code-server (real VS Code 1.99.3) in Chromium: opens testdata files and
// checks what a person would see. Run by run.sh, which sets the environment.
// Every check runs even if an earlier one failed; the summary says which passed.
import { join } from 'node:path';
import { openWorkbench, norm, SHOTS } from './harness.mjs';

const { page, step, finish, activeLines, gotoLine, openFile, palette, webviewFrame } = await openWorkbench({ shotPrefix: '', what: 'editor checks' });

await step('extension activates and the status bar shows the server running', async () => {
  await openFile('test_f.mir');
  await page.locator('.statusbar-item:has(.codicon-check)', { hasText: 'mirdsl' }).first().waitFor();
});

await step('error squiggle on a broken file', async () => {
  await openFile('e2e_error.mir');
  await page.locator('.editor-group-container.active .squiggly-error').first().waitFor();
  await page.screenshot({ path: join(SHOTS, 'error-squiggle.png'), clip: { x: 0, y: 0, width: 1280, height: 420 } });
});

await step('inlay hints show inferred shapes', async () => {
  await openFile('test_f.mir');
  await page.waitForFunction(() => [...document.querySelectorAll('.editor-group-container.active .view-line')]
    .some((l) => /^\s*a: f32\[3\] = x - 1/.test(l.textContent.replace(/\u00a0/g, ' '))));
  const lines = await activeLines();
  if (!lines.some((l) => /b: f32\[3\] = a \+ y/.test(l))) throw new Error(`lines: ${lines.join(' / ')}`);
});

await step('hover shows a shape', async () => {
  await gotoLine(8, 3);
  await palette('Show or Focus Hover');
  await page.locator('.monaco-hover .hover-contents', { hasText: 'f32[3]' }).first().waitFor();
  await page.screenshot({ path: join(SHOTS, 'hover-inlay-hints.png'), clip: { x: 0, y: 0, width: 900, height: 480 } });
  await page.keyboard.press('Escape');
});

await step('code lenses Run / Show graph / Show gradient above graphs', async () => {
  await page.locator('.codelens-decoration a', { hasText: 'Show graph' }).first().waitFor();
  const texts = await page.locator('.codelens-decoration a').allTextContents();
  for (const t of ['Run', 'Show graph', 'Show gradient']) {
    if (!texts.some((x) => x.includes(t))) throw new Error(`no lens ${t}: ${texts.join(', ')}`);
  }
});

let graph;
await step('Show Graph opens a webview with the SVG', async () => {
  await gotoLine(9, 3);
  await palette('MindIR: Show Graph');
  graph = await webviewFrame('#canvas svg [data-node]');
  await graph.waitForSelector('svg.mirdsl-graph[data-graph="test_f"]');
  const n = await graph.$$eval('[data-node]', (els) => els.length);
  const labels = await graph.$$eval('.edge-label', (els) => els.map((e) => e.textContent));
  if (n < 6) throw new Error(`only ${n} nodes`);
  if (!labels.includes('f32[3]')) throw new Error(`no shape on edges: ${labels}`);
  await page.screenshot({ path: join(SHOTS, 'graph-view.png') });
});

await step('clicking a graph node moves the cursor to its source', async () => {
  if (!graph) throw new Error('no graph view');
  // n10 is `c = b * %1` on line 11.
  await graph.click('[data-node="n10"]');
  await page.waitForFunction(() => {
    const s = document.querySelector('[id="status.editor.selection"]');
    return s && s.textContent.includes('Ln 11,');
  });
});

await step('the graph view follows edits', async () => {
  if (!graph) throw new Error('no graph view');
  const before = await graph.$$eval('[data-node]', (els) => els.length);
  await gotoLine(11, 13);
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await page.keyboard.type('d = Neg(c)');
  await graph.waitForFunction((b) => document.querySelectorAll('[data-node]').length > b, before);
  await graph.waitForFunction(() => [...document.querySelectorAll('[data-node] > title')]
    .some((t) => t.textContent.startsWith('d = Neg')));
  await palette('File: Revert File');
  await graph.waitForFunction((b) => document.querySelectorAll('[data-node]').length === b, before);
});

await step('clusters collapse by clicking their title', async () => {
  await openFile('hof.mir');
  await gotoLine(3, 3);
  await palette('MindIR: Show Graph');
  const f = await webviewFrame('svg.mirdsl-graph[data-graph="hof"] g.cluster');
  await f.click('g.cluster .cluster-label');
  await f.waitForSelector('g.cluster.collapsed');
  await f.click('g.cluster.collapsed .cluster-label');
  await f.waitForFunction(() => !document.querySelector('g.cluster.collapsed'));
});

await step('Show IR opens a read-only virtual document', async () => {
  await openFile('test_f.mir');
  await gotoLine(9, 3);
  await palette('MindIR: Show IR');
  await page.locator('.tab[aria-label*="test_f.ir.mir"]').first().waitFor();
  await page.waitForFunction(() => [...document.querySelectorAll('.monaco-editor .view-line')]
    .some((l) => l.textContent.replace(/\u00a0/g, ' ').includes('a = Sub(x, 1)')));
});

await step('Show Gradient opens the gradient program', async () => {
  await palette('MindIR: Show Gradient');
  await page.locator('.tab[aria-label*="test_f.grad.mir"]').first().waitFor();
  await page.waitForFunction(() => [...document.querySelectorAll('.monaco-editor .view-line')]
    .some((l) => /^graph /.test(l.textContent.replace(/\u00a0/g, ' '))));
});

await step('Run Graph prints the result in the output channel', async () => {
  await palette('View: Close All Editor Groups');
  await openFile('test_f.mir');
  await page.locator('.codelens-decoration a', { hasText: 'Run' }).first().waitFor();
  // Click the "▶ Run" lens just above `graph test_f`, in the same editor.
  const ok = await page.evaluate(() => {
    for (const ed of document.querySelectorAll('.monaco-editor')) {
      const line = [...ed.querySelectorAll('.view-line')]
        .find((l) => l.textContent.replace(/\u00a0/g, ' ').startsWith('graph test_f('));
      if (!line) continue;
      const top = line.getBoundingClientRect().top;
      let best = null;
      for (const a of ed.querySelectorAll('.codelens-decoration a')) {
        const t = a.getBoundingClientRect().top;
        if (a.textContent.includes('Run') && t < top && (!best || t > best.getBoundingClientRect().top)) best = a;
      }
      if (best) {
        const r = best.getBoundingClientRect();
        return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
      }
    }
    return null;
  });
  if (!ok) throw new Error('no Run lens above graph test_f');
  // A real click: Monaco handles lens clicks through its mouse events.
  await page.mouse.click(ok.x, ok.y);
  await page.waitForFunction(() => {
    const p = document.querySelector('.part.panel');
    return p && p.textContent.replace(/\u00a0/g, ' ').includes('test_f finished');
  });
  const text = norm(await page.locator('.part.panel').first().textContent());
  if (!text.includes('f32[3] = [0, 0, 0]')) throw new Error(`unexpected output: ${text.slice(0, 300)}`);
  await page.screenshot({ path: join(SHOTS, 'run-output.png') });
});

await step('Restart Server brings the server back', async () => {
  await palette('MindIR: Restart Server');
  await page.locator('.statusbar-item:has(.codicon-check)', { hasText: 'mirdsl' }).first().waitFor();
  await openFile('e2e_error.mir');
  await page.locator('.editor-group-container.active .squiggly-error').first().waitFor();
});

// A model whose layers live in another file (testdata/multifile, docs/language.md §10.1).
await step('a model split over files has no errors, and go to definition opens the library', async () => {
  await openFile('model.mir');
  await page.locator('.editor-group-container.active .view-lines', { hasText: 'import "layers.mir" as layers' }).first().waitFor();
  // Line 6: `  return cross_entropy(layers.mlp(x), labels)`: the cursor on `mlp`.
  await gotoLine(6, 33);
  const squiggles = await page.locator('.editor-group-container.active .squiggly-error').count();
  if (squiggles !== 0) throw new Error(`${squiggles} error squiggles in model.mir`);
  await page.keyboard.press('F12');
  await page.locator('.tab.active[aria-label*="layers.mir"]').first().waitFor();
  await page.waitForFunction(() => {
    const s = document.querySelector('[id="status.editor.selection"]');
    return s && s.textContent.includes('Ln 11,');
  });
  await page.screenshot({ path: join(SHOTS, 'definition-in-library.png') });
});

await step('the graph view draws a model whose layers live in another file', async () => {
  await openFile('model.mir');
  await gotoLine(14, 3);
  await palette('MindIR: Show Graph');
  const frame = await webviewFrame('svg.mirdsl-graph[data-graph="main"]');
  const text = await frame.$eval('svg.mirdsl-graph', (e) => e.textContent);
  if (!text.includes('layers.mlp')) throw new Error(`no layers.mlp in the graph: ${text.slice(0, 200)}`);
  await page.screenshot({ path: join(SHOTS, 'graph-view-multifile.png') });
});

await finish();
