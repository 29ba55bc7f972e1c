// MindSpore compile dumps (*.ir) among their folder's stages: the graph view
// of a subgraph (grouped by scope), "Compare with Previous Pass" (the
// structural diff `mirdsl diff` prints, from `mirdsl/dump/compare`) and a
// node followed to the next or previous stage, or to the next or previous
// stage that changes it (`mirdsl/dump/follow`).

import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { GraphView } from './graphView';
import { DIFF_SCHEME, diffUriString, dumpGraphAtLine } from './pure/dump';
import { LspRange } from './pure/uri';

function dumpEditor(): vscode.TextEditor | undefined {
  const e = vscode.window.activeTextEditor;
  if (e && e.document.languageId === 'mindspore-ir') return e;
  void vscode.window.showWarningMessage('mirdsl: open a MindSpore compile dump (.ir) first');
  return undefined;
}

function running(client: () => LanguageClient | undefined): LanguageClient | undefined {
  const c = client();
  if (c && c.isRunning()) return c;
  void vscode.window.showErrorMessage('mirdsl: the language server is not running (see "MindIR: Restart Server")');
  return undefined;
}

export function registerDumps(
  context: vscode.ExtensionContext,
  client: () => LanguageClient | undefined,
  log: vscode.OutputChannel,
): void {
  const diffs = new Map<string, string>();
  let count = 0;
  const follow = async (direction: 'next' | 'previous', untilChange = false) => {
    const e = dumpEditor();
    const c = e && running(client);
    if (!e || !c) return;
    try {
      const r = await c.sendRequest<{ uri: string; range: LspRange; found: boolean; message: string }>('mirdsl/dump/follow', {
        uri: e.document.uri.toString(),
        position: { line: e.selection.active.line, character: e.selection.active.character },
        direction,
        untilChange,
      });
      const range = new vscode.Range(r.range.start.line, r.range.start.character, r.range.end.line, r.range.end.character);
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(r.uri));
      const shown = await vscode.window.showTextDocument(doc, { selection: range, preview: false });
      shown.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      vscode.window.setStatusBarMessage(`mirdsl: ${r.message}`, 8000);
      if (!r.found) void vscode.window.showInformationMessage(`mirdsl: ${r.message}`);
    } catch (err) {
      void vscode.window.showWarningMessage(`mirdsl: ${(err as Error).message}`);
    }
  };
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, {
      provideTextDocumentContent: (uri) => diffs.get(uri.toString()) ?? '# the comparison is no longer available\n',
    }),
    vscode.commands.registerCommand('mirdsl.showDumpGraph', async (uriArg?: unknown, graphArg?: unknown) => {
      let doc: vscode.TextDocument | undefined;
      let line = 0;
      if (typeof uriArg === 'string') doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(uriArg));
      else {
        const e = dumpEditor();
        doc = e?.document;
        line = e?.selection.active.line ?? 0;
      }
      if (!doc || !running(client)) return;
      const graph = typeof graphArg === 'string' ? graphArg : dumpGraphAtLine(doc.getText(), line);
      if (!graph) {
        void vscode.window.showWarningMessage('mirdsl: the dump has no subgraph');
        return;
      }
      GraphView.show(context, client, log, doc.uri, graph);
    }),
    // The code lens passes the dump's URI; the palette uses the active editor.
    vscode.commands.registerCommand('mirdsl.comparePreviousPass', async (uriArg?: unknown) => {
      const source = typeof uriArg === 'string' ? uriArg : dumpEditor()?.document.uri.toString();
      const c = source && running(client);
      if (!source || !c) return;
      try {
        const r = await c.sendRequest<{ previous: string; text: string; changes: number }>('mirdsl/dump/compare', {
          uri: source,
        });
        const uri = vscode.Uri.parse(diffUriString(r.previous, source, ++count));
        diffs.set(uri.toString(), r.text);
        const doc = await vscode.workspace.openTextDocument(uri);
        await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: false, preserveFocus: true });
      } catch (err) {
        void vscode.window.showWarningMessage(`mirdsl: ${(err as Error).message}`);
      }
    }),
    vscode.commands.registerCommand('mirdsl.followNodeNext', () => follow('next')),
    vscode.commands.registerCommand('mirdsl.followNodePrevious', () => follow('previous')),
    // Past the stages that leave the node as it is.
    vscode.commands.registerCommand('mirdsl.followNodeNextChange', () => follow('next', true)),
    vscode.commands.registerCommand('mirdsl.followNodePreviousChange', () => follow('previous', true)),
  );
}
