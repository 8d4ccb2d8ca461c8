/** The web client inside VS Code's webview: requests go to the extension host by message
 * (the host owns the `baton serve` process), and the host opens diffs and terminals. */
import { App } from "./app";
import type { Connection, ToHost, ToView } from "./connection";
import type { AnyNotification, Method, Params, Result } from "./protocol";
import { RpcFailure } from "./rpc";
import { View } from "./view";

declare function acquireVsCodeApi(): { postMessage(message: ToHost): void };

class WebviewConnection implements Connection {
  private readonly vscode = acquireVsCodeApi();
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly notes: ((n: AnyNotification) => void)[] = [];
  private readonly closes: ((reason: string) => void)[] = [];
  command: ((name: string) => void) | null = null;

  constructor() {
    window.addEventListener("message", (e: MessageEvent<ToView>) => this.receive(e.data));
  }

  private receive(m: ToView): void {
    if (m.kind === "response") {
      const w = this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id);
      if (m.error) w.reject(new RpcFailure(m.error.code, m.error.message));
      else w.resolve(m.result);
    } else if (m.kind === "notification") {
      for (const n of this.notes) n(m.notification);
    } else if (m.kind === "closed") {
      for (const c of this.closes) c(m.reason);
    } else if (m.kind === "command" && this.command) {
      this.command(m.name);
    }
  }

  private call(make: (id: number) => ToHost): Promise<unknown> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.vscode.postMessage(make(id));
    });
  }

  request<M extends Method>(method: M, params: Params<M>): Promise<Result<M>> {
    return this.call((id) => ({ kind: "request", id, method, params })) as Promise<Result<M>>;
  }
  onNotification(listener: (n: AnyNotification) => void): void { this.notes.push(listener); }
  onClose(listener: (reason: string) => void): void { this.closes.push(listener); }
  async openDiff(path: string): Promise<void> { await this.call((id) => ({ kind: "openDiff", id, path })); }
  async take(task: number): Promise<void> { await this.call((id) => ({ kind: "take", id, task })); }
  async openFile(path: string): Promise<void> { await this.call((id) => ({ kind: "openFile", id, path })); }
  ready(): void { this.vscode.postMessage({ kind: "ready" }); }
}

const root = document.getElementById("app") as HTMLElement;
const conn = new WebviewConnection();
const view = new View(root);
const app = new App(conn, (s) => view.schedule(s));
view.bind(app);
conn.command = (name) => {
  if (name === "refreshPlayers") void app.refreshPlayers();
  if (name === "focusComposer") view.focusComposer();
};
conn.ready();
void app.start();
