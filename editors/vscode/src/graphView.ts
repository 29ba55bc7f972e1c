// The graph view: a webview per (document, graph) showing `mirdsl/graph`'s SVG,
// redrawn (debounced) as the document changes; clicking a node reveals its source.

import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { ExtToView, graphHtml, graphReplyToMessage, handleViewMessage, makeNonce } from './pure/webview';
import { LspRange, panelKey } from './pure/uri';

export class GraphView {
  private static views = new Map<string, GraphView>();
  private nodes: Record<string, LspRange> | undefined;
  private last: ExtToView | undefined;
  private version = 0;
  private timer: NodeJS.Timeout | undefined;
  private disposables: vscode.Disposable[] = [];

  static show(
    context: vscode.ExtensionContext,
    client: () => LanguageClient | undefined,
    log: vscode.OutputChannel,
    doc: vscode.Uri,
    graph: string,
  ): GraphView {
    const key = panelKey(doc.toString(), graph);
    const existing = GraphView.views.get(key);
    if (existing) {
      existing.panel.reveal(vscode.ViewColumn.Beside, true);
      existing.refresh();
      return existing;
    }
    const panel = vscode.window.createWebviewPanel(
      'mirdsl.graph',
      `Graph: ${graph}`,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [vscode.Uri.joinPath(context.extensionUri, 'media')] },
    );
    const view = new GraphView(context, client, log, panel, doc, graph, key);
    GraphView.views.set(key, view);
    return view;
  }

  /** Redraws every open view (after a server restart). */
  static refreshAll(): void {
    for (const v of GraphView.views.values()) v.refresh();
  }

  private constructor(
    context: vscode.ExtensionContext,
    private readonly client: () => LanguageClient | undefined,
    private readonly log: vscode.OutputChannel,
    readonly panel: vscode.WebviewPanel,
    private readonly doc: vscode.Uri,
    private readonly graph: string,
    private readonly key: string,
  ) {
    const media = (f: string) => panel.webview.asWebviewUri(vscode.Uri.joinPath(context.extensionUri, 'media', f)).toString();
    panel.webview.html = graphHtml({
      cspSource: panel.webview.cspSource,
      nonce: makeNonce(),
      scriptUri: media('graph.js'),
      styleUri: media('graph.css'),
      title: `${graph} — ${vscode.workspace.asRelativePath(doc)}`,
    });
    this.disposables.push(
      panel.webview.onDidReceiveMessage((m) => this.onMessage(m)),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.toString() === doc.toString() && e.contentChanges.length > 0) this.schedule();
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('mirdsl')) this.schedule();
      }),
    );
    panel.onDidDispose(() => this.dispose());
    this.refresh();
  }

  private schedule(): void {
    const ms = vscode.workspace.getConfiguration('mirdsl').get<number>('graph.debounceMs', 300);
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.refresh(), ms);
  }

  async refresh(): Promise<void> {
    const client = this.client();
    if (!client || !client.isRunning()) {
      this.post({ type: 'error', graph: this.graph, message: 'the language server is not running' });
      return;
    }
    const version = ++this.version;
    try {
      const reply = await client.sendRequest<unknown>('mirdsl/graph', { uri: this.doc.toString(), graph: this.graph });
      if (version !== this.version) return; // a newer request is on its way
      const r = reply as { nodes?: Record<string, LspRange> };
      const msg = graphReplyToMessage(reply, this.graph, version);
      if (msg.type !== 'error') this.nodes = r.nodes;
      this.post(msg);
    } catch (e) {
      if (version !== this.version) return;
      // Keep the last drawing; say why it is stale.
      this.post({ type: 'error', graph: this.graph, message: `cannot draw ${this.graph}: ${(e as Error).message}` });
    }
  }

  private post(msg: ExtToView): void {
    if (msg.type !== 'error') this.last = msg;
    void this.panel.webview.postMessage(msg);
  }

  private async onMessage(m: unknown): Promise<void> {
    const action = handleViewMessage(m, this.nodes);
    switch (action.kind) {
      case 'sendCurrent':
        if (this.last) void this.panel.webview.postMessage(this.last);
        break;
      case 'reveal': {
        const r = action.range;
        const range = new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
        const visible = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === this.doc.toString());
        const editor = await vscode.window.showTextDocument(this.doc, {
          viewColumn: visible?.viewColumn ?? vscode.ViewColumn.One,
          selection: range,
          preserveFocus: false,
        });
        editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
        break;
      }
      case 'unknownNode':
        this.log.appendLine(`graph view: no source range for node ${action.node}`);
        break;
      case 'rendered':
        this.log.appendLine(`graph view: ${this.graph} drawn (version ${action.version}, ${action.nodes} nodes)`);
        break;
      case 'ignore':
        break;
    }
  }

  private dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    GraphView.views.delete(this.key);
    for (const d of this.disposables) d.dispose();
  }
}
