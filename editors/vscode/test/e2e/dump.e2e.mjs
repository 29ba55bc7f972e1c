// A MindSpore compile dump (*.ir, language mindspore-ir) in a real VS Code
// (code-server 4.99.4 / VS Code 1.99.3) driven through Chromium: the checked-in
// stages of a tiny network (testdata/irdumps/tiny, MindSpore 2.10). Run by
// run.sh, which sets the environment. Every check runs even if an earlier one
// failed; the summary says which passed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openWorkbench, norm, SHOTS } from './harness.mjs';

const DUMPS = join(process.env.MIRDSL_E2E_WS, 'irdumps/tiny/dump');

const STAGE = 'hwopt_comm_after_kernel_select_kernel_graph0_0112.ir';
const BEFORE = 'hwopt_cpu_custom_optimization_after_graph_0_0106.ir';
/** The 1-based line and column of `needle` in a stage of the fixture. */
function where(file, needle, shift = 0) {
  const lines = readFileSync(join(DUMPS, file), 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(needle));
  if (i < 0) throw new Error(`no ${needle} in ${file}`);
  return { line: i + 1, col: lines[i].indexOf(needle) + 1 + shift };
}

const { page, step, finish, activeTab, cursorAt, gotoLine, openFile, palette, webviewFrame } = await openWorkbench({ shotPrefix: 'dump-', what: 'compile-dump checks' });

await step('a dump opens as mindspore-ir with the server running and no diagnostics', async () => {
  await openFile(STAGE);
  await page.locator('.statusbar-item', { hasText: 'MindSpore IR dump' }).first().waitFor();
  await page.locator('.statusbar-item:has(.codicon-check)', { hasText: 'mirdsl' }).first().waitFor();
  // The outline is served: the server has answered for this document.
  await page.keyboard.press('Control+Shift+O');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: '@kernel_graph0' }).first().waitFor();
  const rows = await page.locator('.quick-input-list .monaco-list-row').allTextContents();
  for (const want of ['%para2_block.fc.weight', '%para3_x', '@kernel_graph0']) {
    if (!rows.some((r) => norm(r).includes(want))) throw new Error(`outline lacks ${want}: ${rows.join(' | ')}`);
  }
  await page.keyboard.press('Escape');
  const squiggles = await page.locator('.editor-group-container.active .squiggly-error, .editor-group-container.active .squiggly-warning').count();
  if (squiggles !== 0) throw new Error(`${squiggles} squiggles on a dump`);
});

await step('hover shows the dumped type, the scope, the schema and the user\'s line', async () => {
  const at = where(STAGE, '%4(CNode_96)', 1);
  await gotoLine(at.line, at.col);
  await palette('Show or Focus Hover');
  const hover = page.locator('.monaco-hover .hover-contents', { hasText: 'act-ReLU' }).first();
  await hover.waitFor();
  const text = norm(await hover.textContent());
  for (const want of ['ReLU', '(<Tensor[Float32], (2, 3)>)', 'Default/block-Block/act-ReLU/ReLU-op0', 'model.py:24', 'MindSpore 2.10']) {
    if (!text.includes(want)) throw new Error(`hover lacks ${want}: ${text.slice(0, 400)}`);
  }
  await page.screenshot({ path: join(SHOTS, 'dump-hover.png'), clip: { x: 0, y: 0, width: 1280, height: 600 } });
  // The frame is a link that opens the script at that line (the model.py next
  // to the dump folder: the dump was made elsewhere).
  // The hover can close before the click (seen once in a full run): show it again.
  const link = page.locator('.monaco-hover a', { hasText: 'model.py:24' }).first();
  for (let i = 0; ; i++) {
    try {
      await link.click({ timeout: 10_000 });
      break;
    } catch (e) {
      if (i >= 2) throw e;
      await gotoLine(at.line, at.col);
      await palette('Show or Focus Hover');
    }
  }
  await activeTab('model.py');
  await cursorAt(24);
});

await step('go to definition of a node from its use', async () => {
  await openFile(STAGE);
  const use = where(STAGE, 'PrimFunc_ReLU(%3)', 'PrimFunc_ReLU('.length + 1);
  await gotoLine(use.line, use.col);
  await page.keyboard.press('F12');
  await cursorAt(where(STAGE, '%3(x) = PrimFunc_BiasAdd').line);
});

await step('semantic tokens: a weight is a static variable, a primitive a library function', async () => {
  const w = where(STAGE, '%para2_block.fc.weight, UMonad', 2);
  await gotoLine(w.line, w.col);
  await palette('Developer: Inspect Editor Tokens and Scopes');
  const widget = page.locator('.token-inspect-widget');
  await widget.locator('text=semantic token type').first().waitFor();
  let t = norm(await widget.textContent());
  if (!/semantic token type\s*variable/.test(t) || !/modifiers\s*static/.test(t)) throw new Error(`weight: ${t.slice(0, 300)}`);
  await page.keyboard.press('Escape');
  const p = where(STAGE, 'PrimFunc_MatMul', 3);
  await gotoLine(p.line, p.col);
  await palette('Developer: Inspect Editor Tokens and Scopes');
  await widget.locator('text=semantic token type').first().waitFor();
  await page.waitForFunction(() => /semantic token type\s*function/.test(
    (document.querySelector('.token-inspect-widget')?.textContent ?? '').replace(/\u00a0/g, ' ')));
  t = norm(await widget.textContent());
  if (!/modifiers\s*defaultLibrary/.test(t)) throw new Error(`primitive: ${t.slice(0, 300)}`);
  await page.keyboard.press('Escape');
});

let graph;
await step('the graph view of the subgraph, grouped by scope, collapses and leads to the source', async () => {
  await gotoLine(where(STAGE, '%1(x) = PrimFunc_MatMul').line, 3);
  await palette('MindSpore IR: Show Graph');
  graph = await webviewFrame('svg.mirdsl-graph[data-graph="@kernel_graph0"]');
  await graph.waitForSelector('g.cluster[data-graph="scope:Default/block-Block/fc-Dense"]');
  const titles = await graph.$$eval('[data-node] > title', (els) => els.map((e) => e.textContent));
  if (!titles.some((t) => t.includes('PrimFunc_Mul(%4'))) throw new Error(`no Mul node: ${titles.join(' | ').slice(0, 300)}`);
  await page.screenshot({ path: join(SHOTS, 'dump-graph-view.png') });
  await graph.click('g.cluster[data-graph="scope:Default/block-Block"] > .cluster-label');
  await graph.waitForSelector('g.cluster.collapsed[data-graph="scope:Default/block-Block"]');
  await graph.click('g.cluster.collapsed[data-graph="scope:Default/block-Block"] > .cluster-label');
  await graph.waitForFunction(() => !document.querySelector('g.cluster.collapsed'));
  // n3 is the BiasAdd.
  await graph.click('[data-node="n3"]');
  await cursorAt(where(STAGE, '%3(x) = PrimFunc_BiasAdd').line);
});

await step('Compare with Previous Pass shows the structural diff', async () => {
  await palette('View: Close All Editor Groups');
  await openFile(STAGE);
  await palette('MindSpore IR: Compare with Previous Pass');
  await page.locator('.tab[aria-label*="hwopt_cpu_custom_optimization_after_graph_0_0106 → "]').first().waitFor();
  await page.waitForFunction(() => [...document.querySelectorAll('.monaco-editor .view-line')]
    .some((l) => l.textContent.replace(/\u00a0/g, ' ').includes('- %5 = PrimFunc_Muls(%4, F32(2))')));
  await page.screenshot({ path: join(SHOTS, 'dump-compare.png') });
});

await step('a node followed to the previous stage and back', async () => {
  await palette('View: Close All Editor Groups');
  await openFile(STAGE);
  const add = where(STAGE, '%6(CNode_98) = PrimFunc_Add', 1);
  await gotoLine(add.line, add.col);
  await palette('MindSpore IR: Follow Node to Previous Stage');
  await activeTab(BEFORE);
  await cursorAt(where(BEFORE, '%6(CNode_98) = PrimFunc_Add').line);
  await palette('MindSpore IR: Follow Node to Next Stage');
  await activeTab(STAGE);
  await cursorAt(add.line);
});

await step('a node followed to its next change, past a stage that leaves it as it is', async () => {
  const FIRST = '22_backend_pass_0077.ir';
  await palette('View: Close All Editor Groups');
  await openFile(FIRST);
  const add = where(FIRST, '%6(CNode_88) = PrimFunc_Add', 1);
  await gotoLine(add.line, add.col);
  await palette('MindSpore IR: Follow Node to Its Next Change');
  await activeTab(STAGE);
  await cursorAt(where(STAGE, '%6(CNode_98) = PrimFunc_Add').line);
});

await step('code lenses on a dump: Compare with previous pass, Show graph', async () => {
  await palette('View: Close All Editor Groups');
  await openFile(STAGE);
  await gotoLine(1, 1); // VS Code reopens the file where the last step left it
  const compare = page.locator('.codelens-decoration a', { hasText: 'Compare with previous pass' }).first();
  await compare.waitFor();
  await compare.click();
  await page.locator('.tab[aria-label*="hwopt_cpu_custom_optimization_after_graph_0_0106 → "]').first().waitFor();
  const show = page.locator('.codelens-decoration a', { hasText: 'Show graph' }).first();
  await show.waitFor();
  await show.click();
  await webviewFrame('svg.mirdsl-graph[data-graph="@kernel_graph0"] g.cluster');
});

await finish();
