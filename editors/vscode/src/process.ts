/**
 * The `baton serve --stdio` process the extension talks to: found (setting, bundled binary,
 * PATH), started in the workspace folder, initialized, and ended with the extension.
 */
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { LineSplitter, RpcClient } from "../web/rpc";
import type { AnyNotification, Method, Params, Result } from "../web/protocol";

export interface Started { repo: string; baton: string }

/** Which `baton` to run: the `baton.path` setting, else the binary inside the extension,
 * else `baton` on PATH. */
export function batonCommand(setting: string, extensionPath: string, platform = process.platform): string {
  if (setting.trim()) return setting.trim();
  const bundled = path.join(extensionPath, "bin", platform === "win32" ? "baton.exe" : "baton");
  if (!fs.existsSync(bundled)) return "baton";
  if (platform !== "win32") {
    try {  // an unzipper that dropped the executable bit: the bundled binary is ours to run
      fs.accessSync(bundled, fs.constants.X_OK);
    } catch {
      fs.chmodSync(bundled, 0o755);
    }
  }
  return bundled;
}

export class BatonProcess {
  private child: ChildProcess | null = null;
  private rpc: RpcClient | null = null;
  private starting: Promise<Started> | null = null;
  private readonly notes = new Set<(n: AnyNotification) => void>();
  private readonly exits = new Set<(reason: string) => void>();

  constructor(private readonly command: () => string, private readonly cwd: () => string,
              private readonly env: () => Record<string, string>,
              private readonly log: (line: string) => void) {}

  onNotification(listener: (n: AnyNotification) => void): () => void {
    this.notes.add(listener);
    return () => this.notes.delete(listener);
  }

  onExit(listener: (reason: string) => void): () => void {
    this.exits.add(listener);
    return () => this.exits.delete(listener);
  }

  /** Starts the process once (again after it ended) and answers with its `initialize`. */
  start(): Promise<Started> {
    if (!this.starting) {
      this.starting = this.launch();
      this.starting.catch(() => { this.starting = null; });
    }
    return this.starting;
  }

  async request<M extends Method>(method: M, params: Params<M>): Promise<Result<M>> {
    await this.start();
    if (!this.rpc) throw new Error("baton is not running");
    return this.rpc.request(method, params);
  }

  private async launch(): Promise<Started> {
    const command = this.command();
    const cwd = this.cwd();
    this.log(`starting ${command} serve --stdio in ${cwd}`);
    const child = spawn(command, ["serve", "--stdio"], {
      cwd, env: { ...process.env, ...this.env() }, stdio: ["pipe", "pipe", "pipe"],
    });
    this.child = child;
    const rpc = new RpcClient((line) => { child.stdin?.write(line + "\n"); });
    this.rpc = rpc;
    rpc.onNotification((n) => { for (const l of this.notes) l(n); });
    const lines = new LineSplitter((line) => rpc.receive(line));
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => lines.push(chunk));
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => this.log(chunk.trimEnd()));
    const ended = new Promise<never>((_, reject) => {
      const fail = (reason: string) => {
        if (this.child === child) { this.child = null; this.rpc = null; this.starting = null; }
        rpc.close(reason);
        for (const l of this.exits) l(reason);
        reject(new Error(reason));
      };
      child.on("error", (err) => fail(`cannot start ${command}: ${err.message} (set baton.path)`));
      child.on("exit", (code, signal) => fail(`baton serve ended (${signal ?? `exit ${code}`})`));
    });
    ended.catch(() => undefined);
    const init = await Promise.race([
      rpc.request("initialize", { protocol: 1, client: { name: "vscode", version: "0.1.0" }, interactive: true }),
      ended,
    ]);
    return { repo: init.repo, baton: init.baton };
  }

  stop(): void {
    const child = this.child;
    this.child = null;
    this.rpc = null;
    this.starting = null;
    if (child && child.exitCode === null) {
      child.stdin?.end();
      child.kill("SIGTERM");
    }
  }
}
