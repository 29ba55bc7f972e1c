// Read-only virtual documents with a graph's IR or gradient, from `mirdsl/ir`,
// refreshed when their source changes.

import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { IR_SCHEME, IrKind, irUriString, parseIrQuery } from './pure/uri';

export class IrDocuments implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly client: () => LanguageClient | undefined) {}

  register(): vscode.Disposable {
    return vscode.Disposable.from(
      vscode.workspace.registerTextDocumentContentProvider(IR_SCHEME, this),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.scheme === IR_SCHEME || e.contentChanges.length === 0) return;
        const source = e.document.uri.toString();
        if (this.timer) clearTimeout(this.timer);
        this.timer = setTimeout(() => {
          for (const d of vscode.workspace.textDocuments) {
            if (d.uri.scheme === IR_SCHEME && parseIrQuery(d.uri.query)?.source === source) this.changed.fire(d.uri);
          }
        }, 400);
      }),
    );
  }

  static uri(source: vscode.Uri, graph: string, kind: IrKind): vscode.Uri {
    return vscode.Uri.parse(irUriString({ source: source.toString(), graph, kind }));
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const t = parseIrQuery(uri.query);
    if (!t) return '# not a mirdsl IR document\n';
    const client = this.client();
    if (!client || !client.isRunning()) return '# the language server is not running\n';
    try {
      const r = await client.sendRequest<{ text?: string }>('mirdsl/ir', { uri: t.source, graph: t.graph, kind: t.kind });
      return r?.text ?? '# the server sent no text\n';
    } catch (e) {
      return `# cannot show the ${t.kind === 'gradient' ? 'gradient' : 'IR'} of ${t.graph}:\n# ${(e as Error).message.replace(/\n/g, '\n# ')}\n`;
    }
  }
}
