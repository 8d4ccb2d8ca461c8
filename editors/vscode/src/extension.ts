/**
 * Baton in VS Code (and Cursor, VSCodium): an activity-bar view whose web client talks to a
 * `baton serve --stdio` process through this host, which also opens VS Code's diff editor
 * for handoff files, a terminal for a taken-over task, and the file of a merge conflict.
 */
import * as path from "node:path";
import * as vscode from "vscode";
import type { ToHost, ToView } from "../web/connection";
import type { Method, Params, Result } from "../web/protocol";
import { BatonProcess, batonCommand } from "./process";

const SCHEME = "baton-handoff";

/** What the extension hands to other extensions and its own tests. */
export interface BatonApi {
  request<M extends Method>(method: M, params: Params<M>): Promise<Result<M>>;
  viewResolved(): boolean;
  openDiff(path: string): Promise<void>;
}

class HandoffContents implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  set(uri: vscode.Uri, text: string): void { this.texts.set(uri.toString(), text); }
  provideTextDocumentContent(uri: vscode.Uri): string { return this.texts.get(uri.toString()) ?? ""; }
}

class BatonView implements vscode.WebviewViewProvider {
  view: vscode.WebviewView | null = null;
  private pendingCommands: ToView[] = [];

  constructor(private readonly extension: vscode.Uri, private readonly baton: BatonProcess,
              private readonly host: Host) {
    baton.onNotification((notification) => this.post({ kind: "notification", notification }));
    baton.onExit((reason) => this.post({ kind: "closed", reason }));
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.extension, "out");
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    view.webview.html = this.html(view.webview);
    view.webview.onDidReceiveMessage((m: ToHost) => void this.received(m));
    view.onDidDispose(() => { this.view = null; });
  }

  command(name: "refreshPlayers" | "focusComposer"): void {
    const message: ToView = { kind: "command", name };
    if (this.view) this.post(message); else this.pendingCommands.push(message);
  }

  private post(message: ToView): void { void this.view?.webview.postMessage(message); }

  private async received(m: ToHost): Promise<void> {
    if (m.kind === "ready") {
      for (const c of this.pendingCommands.splice(0)) this.post(c);
      return;
    }
    try {
      let result: unknown = null;
      if (m.kind === "request") {
        result = await this.baton.request(m.method, m.params as Params<typeof m.method>);
      } else if (m.kind === "openDiff") {
        await this.host.openDiff(m.path);
      } else if (m.kind === "take") {
        await this.host.take(m.task);
      } else if (m.kind === "openFile") {
        await this.host.openFile(m.path);
      }
      this.post({ kind: "response", id: m.id, result });
    } catch (err) {
      const e = err as { code?: number; message?: string };
      this.post({ kind: "response", id: m.id,
                  error: { code: typeof e.code === "number" ? e.code : -32000, message: e.message ?? String(err) } });
    }
  }

  private html(webview: vscode.Webview): string {
    const out = vscode.Uri.joinPath(this.extension, "out");
    const script = webview.asWebviewUri(vscode.Uri.joinPath(out, "webview.js"));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(out, "view.css"));
    const nonce = [...Array(24)].map(() => Math.floor(Math.random() * 36).toString(36)).join("");
    return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="${style}">
<title>Baton</title></head><body><main id="app" aria-label="Baton"></main>
<script nonce="${nonce}" src="${script}"></script></body></html>`;
  }
}

class Host {
  constructor(private readonly baton: BatonProcess, private readonly contents: HandoffContents,
              private readonly folder: () => string) {}

  async openDiff(file: string): Promise<void> {
    const answer = await this.baton.request("handoff/file", { path: file });
    const stamp = Date.now().toString(36);
    const left = vscode.Uri.from({ scheme: SCHEME, path: `/yours/${file}`, query: stamp });
    const right = vscode.Uri.from({ scheme: SCHEME, path: `/landed/${file}`, query: stamp });
    this.contents.set(left, answer.left ?? "");
    this.contents.set(right, answer.right ?? "");
    await vscode.commands.executeCommand("vscode.diff", left, right,
                                         `${file} (your branch ↔ landed)`, { preview: true });
  }

  async take(task: number): Promise<void> {
    const cmd = await this.baton.request("task/take", { id: task });
    const [shellPath, ...shellArgs] = cmd.argv;
    const terminal = vscode.window.createTerminal({ name: `Baton: task ${task}`, shellPath, shellArgs,
                                                    cwd: cmd.cwd });
    terminal.show();
  }

  async openFile(file: string): Promise<void> {
    const uri = vscode.Uri.file(path.resolve(this.folder(), file));
    await vscode.window.showTextDocument(uri, { preview: false });
  }
}

export function activate(context: vscode.ExtensionContext): BatonApi {
  const output = vscode.window.createOutputChannel("Baton");
  const folder = () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? process.cwd();
  const settings = () => vscode.workspace.getConfiguration("baton");
  const baton = new BatonProcess(
    () => batonCommand(settings().get<string>("path", ""), context.extensionPath),
    folder,
    (): Record<string, string> => {
      const planner = settings().get<string>("planner", "");
      return planner ? { BATON_PLANNER: planner } : {};
    },
    (line) => output.appendLine(line));
  const contents = new HandoffContents();
  const host = new Host(baton, contents, folder);
  const view = new BatonView(context.extensionUri, baton, host);
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  status.text = "$(checklist) Baton";
  status.tooltip = "Open the Baton view";
  status.command = "baton.open";
  status.show();
  context.subscriptions.push(
    output, status,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, contents),
    vscode.window.registerWebviewViewProvider("baton.view", view, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.commands.registerCommand("baton.open", async () => {
      await vscode.commands.executeCommand("workbench.view.extension.baton");
      await vscode.commands.executeCommand("baton.view.focus");
      view.command("focusComposer");
    }),
    vscode.commands.registerCommand("baton.refreshPlayers", () => view.command("refreshPlayers")),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("baton.path") || e.affectsConfiguration("baton.planner")) baton.stop();
    }),
    { dispose: () => baton.stop() },
  );
  return {
    request: (method, params) => baton.request(method, params),
    viewResolved: () => view.view !== null,
    openDiff: (file) => host.openDiff(file),
  };
}

export function deactivate(): void { /* the subscriptions stop the process */ }
