// Debugging graphs: the `mirdsl` debug type (the adapter is `mirdsl dap`),
// launch configurations filled in from the editor, a "Debug" code lens on
// each top-level graph beside the server's "Run", and workspace trust:
// running a program may read files (`load()`) and write them, so in an
// untrusted workspace Run and Debug ask first.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import { resolveServerPath } from './pure/server';
import { graphAtLine, listGraphs } from './pure/args';
import { debugConfigFor } from './pure/debugConfig';

export const DEBUG_TYPE = 'mirdsl';

/** Whether running a program is allowed: yes in a trusted workspace, else the user says. */
export async function allowRun(what: string): Promise<boolean> {
  if (vscode.workspace.isTrusted) return true;
  const choice = await vscode.window.showWarningMessage(
    `This workspace is not trusted. ${what} runs the program, which may read files (load()) and write them. Run it anyway?`,
    { modal: true },
    'Run',
  );
  return choice === 'Run';
}

class Factory implements vscode.DebugAdapterDescriptorFactory {
  constructor(private readonly context: vscode.ExtensionContext) {}
  createDebugAdapterDescriptor(): vscode.DebugAdapterDescriptor {
    const server = resolveServerPath({
      setting: vscode.workspace.getConfiguration('mirdsl').get<string>('server.path'),
      extensionPath: this.context.extensionPath,
      workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
      platform: process.platform,
      home: os.homedir(),
      exists: (p) => fs.existsSync(p),
    });
    return new vscode.DebugAdapterExecutable(server.command, ['dap']);
  }
}

class Configurations implements vscode.DebugConfigurationProvider {
  async resolveDebugConfiguration(
    _folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration,
  ): Promise<vscode.DebugConfiguration | undefined> {
    // F5 without a launch.json: debug the active file's graph under the cursor.
    if (!config.type && !config.request && !config.name) {
      const editor = vscode.window.activeTextEditor;
      if (editor?.document.languageId === 'mindspore-ir') {
        // A MindSpore compile dump: the adapter imports it; its parameters
        // get `ones`, and it stops at the first statement, since breakpoints
        // go in the imported text, which exists only once it runs.
        const name = editor.document.uri.path.split('/').pop();
        Object.assign(config, {
          type: DEBUG_TYPE, request: 'launch', name: `Debug ${name}`,
          program: editor.document.uri.fsPath, stopOnEntry: true,
        });
      }
      if (!editor || editor.document.languageId !== 'mindir') return config.type ? this.allowed(config) : config;
      const text = editor.document.getText();
      const graphs = listGraphs(text);
      const here = graphAtLine(text, editor.selection.active.line) ?? graphs[graphs.length - 1]?.name;
      Object.assign(config, debugConfigFor(editor.document.uri.fsPath, text, here));
    }
    if (!config.program) {
      const editor = vscode.window.activeTextEditor;
      if (editor) config.program = editor.document.uri.fsPath;
    }
    if (!config.program) {
      await vscode.window.showErrorMessage('mirdsl: the launch configuration names no `program`.');
      return undefined;
    }
    return this.allowed(config);
  }

  /** `config` once the user allows running (workspace trust), with the device setting. */
  private async allowed(config: vscode.DebugConfiguration): Promise<vscode.DebugConfiguration | undefined> {
    if (!(await allowRun('Debugging'))) return undefined;
    if (vscode.workspace.getConfiguration('mirdsl').get<string>('run.device') && !config.device) {
      config.device = vscode.workspace.getConfiguration('mirdsl').get<string>('run.device');
    }
    return config;
  }
}

class Lenses implements vscode.CodeLensProvider {
  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    return listGraphs(doc.getText()).map((g) => {
      const range = new vscode.Range(g.line, 0, g.line, 0);
      return new vscode.CodeLens(range, {
        title: '$(debug-alt) Debug',
        command: 'mirdsl.debug',
        arguments: [doc.uri.toString(), g.name],
      });
    });
  }
}

async function debugGraph(uriArg?: unknown, graphArg?: unknown): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const uri = typeof uriArg === 'string' ? vscode.Uri.parse(uriArg) : editor?.document.uri;
  if (!uri) return;
  const doc = await vscode.workspace.openTextDocument(uri);
  const text = doc.getText();
  let graph = typeof graphArg === 'string' ? graphArg : undefined;
  if (!graph && editor) graph = graphAtLine(text, editor.selection.active.line);
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  await vscode.debug.startDebugging(folder, debugConfigFor(uri.fsPath, text, graph));
}

export function registerDebugging(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, new Factory(context)),
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, new Configurations()),
    vscode.languages.registerCodeLensProvider({ language: 'mindir' }, new Lenses()),
    vscode.commands.registerCommand('mirdsl.debug', debugGraph),
  );
}
