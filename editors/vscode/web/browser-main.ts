/** The web client in a browser (`baton web`): JSON-RPC straight over the protocol's
 * WebSocket (same origin, the page's token); diffs and take-over commands shown in the page. */
import { App } from "./app";
import type { Connection } from "./connection";
import type { AnyNotification, Method, Params, Result } from "./protocol";
import { RpcClient } from "./rpc";
import { h, View } from "./view";
import { lineDiff } from "./diff";

class SocketConnection implements Connection {
  readonly rpc: RpcClient;
  private readonly closes: ((reason: string) => void)[] = [];
  show: (title: string, body: HTMLElement) => void = () => undefined;

  constructor(socket: WebSocket) {
    this.rpc = new RpcClient((line) => socket.send(line));
    socket.addEventListener("message", (e) => this.rpc.receive(String(e.data)));
    socket.addEventListener("close", () => {
      this.rpc.close("the connection to baton closed");
      for (const c of this.closes) c("the connection to baton closed: reload the page when `baton web` runs again");
    });
  }

  static open(url: string): Promise<SocketConnection> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.addEventListener("open", () => resolve(new SocketConnection(socket)), { once: true });
      socket.addEventListener("error", () => reject(new Error(`cannot reach ${url.split("?")[0]}`)), { once: true });
    });
  }

  request<M extends Method>(method: M, params: Params<M>): Promise<Result<M>> { return this.rpc.request(method, params); }
  onNotification(listener: (n: AnyNotification) => void): void { this.rpc.onNotification(listener); }
  onClose(listener: (reason: string) => void): void { this.closes.push(listener); }

  async openDiff(path: string): Promise<void> {
    const file = await this.rpc.request("handoff/file", { path });
    const lines = lineDiff(file.left ?? "", file.right ?? "");
    const pre = h("pre", { className: "diff", "aria-label": `Diff of ${path}`, tabindex: 0 },
                  ...lines.map((l) => h("span", { className: l.kind }, `${l.kind === "add" ? "+" : l.kind === "del" ? "-" : " "} ${l.text}\n`)));
    this.show(`${path}: your branch → landed`, pre);
  }

  async take(id: number): Promise<void> {
    const cmd = await this.rpc.request("task/take", { id });
    const words = cmd.argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`)).join(" ");
    this.show(`Take task ${id} over: run this in a terminal`, h("pre", { tabindex: 0 }, `cd ${cmd.cwd}\n${words}`));
  }

  async openFile(path: string): Promise<void> {
    this.show(`Open ${path} in your editor to resolve the conflict`, h("code", {}, path));
  }
}

async function main(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const token = params.get("token") ?? "";
  const theme = params.get("theme");
  document.body.classList.add("browser");
  if (theme === "light" || theme === "dark") document.body.classList.add(`theme-${theme}`);
  const root = document.getElementById("app") as HTMLElement;
  const view = new View(root);
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  let conn: SocketConnection;
  try {
    conn = await SocketConnection.open(`${scheme}://${location.host}/rpc?token=${encodeURIComponent(token)}`);
  } catch (err) {
    root.textContent = String(err instanceof Error ? err.message : err);
    return;
  }
  const panel = h("section", { id: "viewer", "aria-label": "Viewer", hidden: true });
  conn.show = (title, body) => {
    const close = h("button", { type: "button" }, "Close");
    close.addEventListener("click", () => { panel.hidden = true; panel.replaceChildren(); });
    panel.replaceChildren(h("h2", {}, title), body, close);
    panel.hidden = false;
    body.focus?.();
  };
  const app = new App(conn, (s) => view.schedule(s));
  view.bind(app);
  view.handoff.after(panel);
  await conn.rpc.request("initialize", { protocol: 1, client: { name: "baton-web", version: "0.1.0" },
                                          interactive: true });
  (window as unknown as { batonApp: App; batonView: View }).batonApp = app;
  (window as unknown as { batonApp: App; batonView: View }).batonView = view;
  await app.start();
}

void main();
