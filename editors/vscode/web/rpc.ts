/**
 * A JSON-RPC 2.0 client over any line transport: the extension host feeds it the lines of
 * `baton serve --stdio`, the browser the frames of the protocol's WebSocket. Requests and
 * notifications are typed by `protocol.ts`.
 */
import type { AnyNotification, Method, Params, Result, RpcError } from "./protocol";

export class RpcFailure extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
    this.name = "RpcFailure";
  }
}

interface Pending { resolve: (value: unknown) => void; reject: (error: Error) => void }

type Incoming =
  | { jsonrpc: "2.0"; id: number; result: unknown }
  | { jsonrpc: "2.0"; id: number | null; error: RpcError }
  | { jsonrpc: "2.0"; method: string; params?: unknown };

export class RpcClient {
  private next = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Set<(n: AnyNotification) => void>();
  private closed: Error | null = null;

  constructor(private readonly send: (line: string) => void) {}

  request<M extends Method>(method: M, params: Params<M>): Promise<Result<M>> {
    if (this.closed) return Promise.reject(this.closed);
    const id = this.next++;
    return new Promise<Result<M>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      try {
        this.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
      } catch (err) {
        this.pending.delete(id);
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  onNotification(listener: (n: AnyNotification) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** One line (or frame) from the server. A line that is not JSON-RPC is ignored. */
  receive(line: string): void {
    const text = line.trim();
    if (!text) return;
    let message: Incoming;
    try {
      message = JSON.parse(text) as Incoming;
    } catch {
      return;
    }
    if ("method" in message) {
      const n = { method: message.method, params: message.params ?? {} } as AnyNotification;
      for (const listener of this.listeners) listener(n);
      return;
    }
    if (message.id === null || message.id === undefined) return;
    const waiting = this.pending.get(message.id);
    if (!waiting) return;
    this.pending.delete(message.id);
    if ("error" in message) {
      waiting.reject(new RpcFailure(message.error.code, message.error.message, message.error.data));
    } else {
      waiting.resolve(message.result);
    }
  }

  /** The connection ended: every waiting request fails with `reason`. */
  close(reason: string): void {
    this.closed = new Error(reason);
    for (const waiting of this.pending.values()) waiting.reject(this.closed);
    this.pending.clear();
  }
}

/** Splits a byte stream into lines (a chunk may end mid-line). */
export class LineSplitter {
  private buffer = "";
  constructor(private readonly onLine: (line: string) => void) {}
  push(chunk: string): void {
    this.buffer += chunk;
    let at = this.buffer.indexOf("\n");
    while (at >= 0) {
      const line = this.buffer.slice(0, at);
      this.buffer = this.buffer.slice(at + 1);
      if (line.trim()) this.onLine(line);
      at = this.buffer.indexOf("\n");
    }
  }
}
