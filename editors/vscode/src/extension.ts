// The MindIR DSL extension: starts `mirdsl lsp`, and adds the graph view, the IR
// and gradient views, Run Graph, Restart Server and a status bar item.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from 'vscode-languageclient/node';
import { allowRun, registerDebugging } from './debug';
import { registerDumps } from './dumps';
import { GraphView } from './graphView';
import { IrDocuments } from './irDocuments';
import { defaultRunArgs, describeRun, Fill, formatRunResult, graphAtLine, listGraphs, parseRunArgs, RunRequestArgs } from './pure/args';
import { resolveServerPath } from './pure/server';

let client: LanguageClient | undefined;
let status: vscode.StatusBarItem;
let log: vscode.OutputChannel;
let runOutput: vscode.OutputChannel;
let lastArgs = new Map<string, string>();

function config() {
  return vscode.workspace.getConfiguration('mirdsl');
}

function setStatus(state: 'starting' | 'running' | 'stopped' | 'failed', detail = ''): void {
  const icon = { starting: '$(sync~spin)', running: '$(check)', stopped: '$(circle-slash)', failed: '$(error)' }[state];
  status.text = `${icon} mirdsl`;
  status.tooltip = `MindIR language server: ${state}${detail ? ` — ${detail}` : ''}. Click for its log.`;
  status.backgroundColor = state === 'failed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  status.show();
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const server = resolveServerPath({
    setting: config().get<string>('server.path'),
    extensionPath: context.extensionPath,
    workspaceFolder: folder,
    platform: process.platform,
    home: os.homedir(),
    exists: (p) => fs.existsSync(p),
  });
  log.appendLine(`starting ${server.command} lsp (from ${server.source})`);
  // No `transport`: with TransportKind.stdio the client would append `--stdio`,
  // which `mirdsl lsp` does not take (it always serves stdio).
  const serverOptions: ServerOptions = {
    run: { command: server.command, args: ['lsp'] },
    debug: { command: server.command, args: ['lsp'] },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'mindir' },
      { scheme: 'untitled', language: 'mindir' },
      // MindSpore's compile dumps: outline, folding, navigation and hover.
      { scheme: 'file', language: 'mindspore-ir' },
    ],
    outputChannel: log,
    initializationOptions: {
      inlayHints: { enabled: config().get<boolean>('inlayHints.enabled', true) },
      // The code lenses' commands are this extension's (with its views): the
      // server then does not offer them as its own (workspace/executeCommand).
      clientCommands: ['mirdsl.run', 'mirdsl.showGraph', 'mirdsl.showGradient'],
    },
    synchronize: { configurationSection: 'mirdsl' },
    middleware: {
      provideInlayHints: (document, range, token, next) =>
        config().get<boolean>('inlayHints.enabled', true) ? next(document, range, token) : [],
    },
  };
  client = new LanguageClient('mirdsl', 'MindIR DSL', serverOptions, clientOptions);
  client.onDidChangeState((e) => {
    if (e.newState === State.Running) setStatus('running', server.command);
    else if (e.newState === State.Starting) setStatus('starting');
    else setStatus('stopped');
  });
  setStatus('starting');
  try {
    await client.start();
    setStatus('running', server.command);
  } catch (e) {
    setStatus('failed', (e as Error).message);
    log.appendLine(`the server did not start: ${(e as Error).message}`);
    void vscode.window.showErrorMessage(
      `mirdsl: cannot start \`${server.command} lsp\` (${(e as Error).message}). Set "mirdsl.server.path" to the mirdsl binary.`,
      'Open Settings',
    ).then((c) => c && vscode.commands.executeCommand('workbench.action.openSettings', 'mirdsl.server.path'));
  }
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) {
    try {
      await c.stop(2000);
    } catch {
      /* already stopped */
    }
  }
}

/** The target of a command: code lenses pass (uri, graph); the palette uses the cursor. */
async function target(uriArg?: unknown, graphArg?: unknown): Promise<{ doc: vscode.TextDocument; graph: string } | undefined> {
  let doc: vscode.TextDocument | undefined;
  if (typeof uriArg === 'string') doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(uriArg));
  else if (uriArg instanceof vscode.Uri) doc = await vscode.workspace.openTextDocument(uriArg);
  const editor = vscode.window.activeTextEditor;
  // Only real sources: not the IR / gradient views, which are mindir too.
  const isSource = (d: vscode.TextDocument) => d.languageId === 'mindir' && (d.uri.scheme === 'file' || d.uri.scheme === 'untitled');
  if (!doc && editor && isSource(editor.document)) doc = editor.document;
  if (!doc) doc = vscode.window.visibleTextEditors.map((e) => e.document).find(isSource);
  if (!doc) {
    void vscode.window.showWarningMessage('mirdsl: open a .mir file first');
    return undefined;
  }
  if (typeof graphArg === 'string' && graphArg !== '') return { doc, graph: graphArg };
  const text = doc.getText();
  const line = editor && editor.document === doc ? editor.selection.active.line : 0;
  const under = graphAtLine(text, line);
  if (under) return { doc, graph: under };
  const graphs = listGraphs(text).map((g) => g.name);
  if (graphs.length === 0) {
    void vscode.window.showWarningMessage('mirdsl: the file has no graph');
    return undefined;
  }
  const pick = graphs.length === 1 ? graphs[0] : await vscode.window.showQuickPick(graphs, { placeHolder: 'Which graph?' });
  return pick ? { doc, graph: pick } : undefined;
}

function needClient(): LanguageClient | undefined {
  if (client && client.isRunning()) return client;
  void vscode.window.showErrorMessage('mirdsl: the language server is not running (see "MindIR: Restart Server")');
  return undefined;
}

async function chooseRunArgs(doc: vscode.TextDocument, graph: string, ask: boolean): Promise<RunRequestArgs | undefined> {
  const info = listGraphs(doc.getText()).find((g) => g.name === graph);
  const params = info?.params ?? [];
  const fill: Fill = 'ones';
  if (params.length === 0 || !ask) return defaultRunArgs(params, fill);
  const key = `${doc.uri.toString()}#${graph}`;
  const previous = lastArgs.get(key);
  const sig = params.map((p) => (p.type ? `${p.name}: ${p.type}` : p.name)).join(', ');
  const items: (vscode.QuickPickItem & { fill?: Fill; custom?: boolean; again?: string })[] = [
    { label: 'ones', description: 'every tensor argument filled with ones (the default)', fill: 'ones' },
    { label: 'zeros', description: 'every tensor argument filled with zeros', fill: 'zeros' },
    { label: 'random', description: 'random values shaped from the annotations', fill: 'random' },
    { label: 'Enter arguments…', description: 'NAME=VALUE, … (literals, tensors, .npy paths; symbols like B=4)', custom: true },
  ];
  if (previous) items.unshift({ label: previous, description: 'last used', again: previous });
  const pick = await vscode.window.showQuickPick(items, { placeHolder: `Arguments for ${graph}(${sig})` });
  if (!pick) return undefined;
  try {
    if (pick.again) return parseRunArgs(pick.again, params);
    if (pick.fill) return defaultRunArgs(params, pick.fill);
    const input = await vscode.window.showInputBox({
      prompt: `Arguments for ${graph}(${sig})`,
      placeHolder: params.map((p) => `${p.name}=…`).join(', '),
      value: previous ?? '',
      validateInput: (v) => {
        try {
          parseRunArgs(v, params);
          return undefined;
        } catch (e) {
          return (e as Error).message;
        }
      },
    });
    if (input === undefined) return undefined;
    lastArgs.set(key, input);
    return parseRunArgs(input, params);
  } catch (e) {
    void vscode.window.showErrorMessage(`mirdsl: ${(e as Error).message}`);
    return undefined;
  }
}

async function runGraph(uriArg?: unknown, graphArg?: unknown, argsArg?: unknown): Promise<void> {
  const t = await target(uriArg, graphArg);
  const c = needClient();
  if (!t || !c) return;
  // Code lenses run with the defaults; the palette asks.
  const fromLens = typeof graphArg === 'string';
  let req: RunRequestArgs | undefined;
  if (typeof argsArg === 'string') {
    const info = listGraphs(t.doc.getText()).find((g) => g.name === t.graph);
    req = parseRunArgs(argsArg, info?.params ?? []);
  } else {
    req = await chooseRunArgs(t.doc, t.graph, !fromLens);
  }
  if (!req) return;
  if (!(await allowRun('Run Graph'))) return;
  const device = config().get<string>('run.device', 'cpu');
  runOutput.show(true);
  runOutput.appendLine(`▶ ${describeRun(t.graph, req, device)}`);
  const started = Date.now();
  try {
    const r = await c.sendRequest<{ result?: unknown }>('mirdsl/run', {
      uri: t.doc.uri.toString(),
      graph: t.graph,
      args: req.args,
      dims: req.dims,
      device,
    });
    runOutput.appendLine(formatRunResult(r?.result));
    runOutput.appendLine(`✓ ${t.graph} finished in ${Date.now() - started} ms`);
  } catch (e) {
    runOutput.appendLine(`✗ ${t.graph} failed: ${(e as Error).message}`);
  }
  runOutput.appendLine('');
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  log = vscode.window.createOutputChannel('MindIR Language Server');
  runOutput = vscode.window.createOutputChannel('MindIR Run');
  status = vscode.window.createStatusBarItem('mirdsl.status', vscode.StatusBarAlignment.Left, 10);
  status.name = 'MindIR language server';
  status.command = 'mirdsl.showServerLog';
  const irDocs = new IrDocuments(() => client);
  const showIr = async (kind: 'ir' | 'gradient', uriArg?: unknown, graphArg?: unknown) => {
    const t = await target(uriArg, graphArg);
    if (!t || !needClient()) return;
    const doc = await vscode.workspace.openTextDocument(IrDocuments.uri(t.doc.uri, t.graph, kind));
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: false, preserveFocus: true });
  };
  context.subscriptions.push(
    log,
    runOutput,
    status,
    irDocs.register(),
    vscode.commands.registerCommand('mirdsl.showServerLog', () => log.show()),
    vscode.commands.registerCommand('mirdsl.showGraph', async (uriArg?: unknown, graphArg?: unknown) => {
      const t = await target(uriArg, graphArg);
      if (!t || !needClient()) return;
      GraphView.show(context, () => client, log, t.doc.uri, t.graph);
    }),
    vscode.commands.registerCommand('mirdsl.showIr', (u?: unknown, g?: unknown) => showIr('ir', u, g)),
    vscode.commands.registerCommand('mirdsl.showGradient', (u?: unknown, g?: unknown) => showIr('gradient', u, g)),
    vscode.commands.registerCommand('mirdsl.run', runGraph),
    vscode.commands.registerCommand('mirdsl.restartServer', async () => {
      await stopClient();
      await startClient(context);
      GraphView.refreshAll();
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('mirdsl.server.path')) {
        await stopClient();
        await startClient(context);
      }
    }),
    { dispose: () => void stopClient() },
  );
  registerDebugging(context);
  registerDumps(context, () => client, log);
  await startClient(context);
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
