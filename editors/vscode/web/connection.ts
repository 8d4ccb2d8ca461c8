/**
 * What the web client needs from its host: protocol requests and notifications, and the few
 * things only a host can do (an editor opens a diff editor or a terminal; a browser shows the
 * diff or the command in the page). The VS Code webview and `baton web` each provide one.
 */
import type { AnyNotification, Method, Params, Result } from "./protocol";

export interface Connection {
  request<M extends Method>(method: M, params: Params<M>): Promise<Result<M>>;
  onNotification(listener: (n: AnyNotification) => void): void;
  onClose(listener: (reason: string) => void): void;
  /** Show one handoff file: landed work against the person's branch. */
  openDiff(path: string): Promise<void>;
  /** Take a task over: its agent's interactive command in a terminal. */
  take(id: number): Promise<void>;
  /** Open a file of the repository (the stop at a conflict). */
  openFile(path: string): Promise<void>;
}

/** Messages between the webview and the extension host (the host owns the `baton serve`
 * process; the webview never sees it). */
export type ToHost =
  | { kind: "ready" }
  | { kind: "request"; id: number; method: Method; params: unknown }
  | { kind: "openDiff"; id: number; path: string }
  | { kind: "take"; id: number; task: number }
  | { kind: "openFile"; id: number; path: string };

export type ToView =
  | { kind: "response"; id: number; result?: unknown; error?: { code: number; message: string } }
  | { kind: "notification"; notification: AnyNotification }
  | { kind: "closed"; reason: string }
  | { kind: "command"; name: "refreshPlayers" | "focusComposer" };
