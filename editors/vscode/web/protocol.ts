/**
 * The wire shapes of `baton serve` protocol 1, as the web client and the extension host use
 * them. Until the generated declarations (`baton serve --typescript`) are in the tree this is
 * a hand-written stand-in for them; every request's params and result are named here, so the
 * client never passes `any` across the protocol.
 */

export interface Question { question: string; recommendation: string; answer?: string | null }

export interface PlanTask {
  id: number;
  title: string;
  prompt: string;
  player: string;
  model?: string | null;
  effort?: string | null;
  mode?: string;
  depends_on?: number[];
  skills?: string[];
  scope?: string[];
  checkpoint?: boolean;
  check?: string | null;
  runner?: string | null;
  branch?: string | null;
}

export interface PlanDoc {
  version: number;
  goal: string;
  autonomy?: string;
  questions?: Question[];
  tasks: PlanTask[];
}

export interface Player {
  name: string;
  ready: boolean;
  reason: string | null;
  version: string | null;
  models: string[];
  efforts: string[];
}

export interface Flag { kind: string; detail: string; at?: string }

export interface StatusTask {
  id: number;
  title: string;
  player: string;
  mode: string;
  state: string;
  worktree?: string | null;
  last_report?: string | null;
  flags?: Flag[];
  checkpoint?: { what: string; evidence: string | null } | null;
  blocked_by?: number | null;
}

export interface Status {
  plan: { goal: string; slug?: string; approved: boolean; autonomy?: string;
          stopped_by?: string | null } | null;
  conductor: { pid: number } | null | number;
  tasks: StatusTask[];
  summary?: string | null;
}

export interface HandoffFile { path: string; added: number; removed: number; tasks: number[] }
export interface Conflict { task: number; files: string[]; hint: string }

export interface DraftResult { questions: Question[] | null; plan: PlanDoc | null }

/** Each request: its params and its result. */
export interface Methods {
  "initialize": {
    params: { protocol: number; client: { name: string; version: string }; interactive: boolean };
    result: { protocol: number; baton: string; capabilities: { methods: string[]; notifications: string[] };
              repo: string };
  };
  "plan/draft": { params: { goal: string; skill?: string }; result: DraftResult };
  "plan/answer": { params: { answer: string }; result: DraftResult };
  "plan/get": { params: Record<string, never>; result: { plan: PlanDoc | null } };
  "plan/new": { params: Record<string, never>; result: { archived: boolean } };
  "task/edit": { params: { id: number; field: string; value: unknown }; result: { plan: PlanDoc } };
  "task/add": { params: { title: string; player: string; mode?: string; depends_on?: number[];
                          prompt?: string };
                result: { id: number; plan: PlanDoc } };
  "task/remove": { params: { id: number }; result: { plan: PlanDoc } };
  "plan/approve": { params: Record<string, never>; result: { approved: boolean; notes: string[] } };
  "run/start": { params: Record<string, never>; result: { started: boolean; conductor: number | null } };
  "run/stop": { params: Record<string, never>; result: { paused: boolean } };
  "task/retry": { params: { id: number; feedback?: string }; result: Record<string, unknown> };
  "task/done": { params: { id: number }; result: Record<string, unknown> };
  "task/discard": { params: { id: number; with_dependents?: boolean }; result: Record<string, unknown> };
  "task/take": { params: { id: number }; result: { argv: string[]; cwd: string; env: Record<string, string> } };
  "checkpoint/answer": { params: { id: number; answer: "yes" | "no" }; result: Record<string, unknown> };
  "players/list": { params: { refresh?: boolean }; result: { players: Player[] } };
  "status/get": { params: Record<string, never>; result: Status };
  "handoff/review": { params: { task?: number };
                      result: { diff: string; files: HandoffFile[]; base: string; head: string } };
  "handoff/file": { params: { path: string }; result: { path: string; left: string | null; right: string | null } };
  "handoff/merge": { params: { upTo?: number }; result: { merged: number[]; conflict: Conflict | null } };
  "log/read": { params: { task: number; cursor?: number }; result: { lines: string[]; cursor: number } };
  "events/subscribe": { params: { cursor?: number }; result: { cursor: number } };
}

/** Each notification's params. */
export interface Notifications {
  "event": { cursor: number; kind: string; task: number | null; at: string; data: Record<string, unknown> };
  "planner/step": { tool: string; detail: string };
  "planner/text": { delta: string };
  "planner/thinking": { delta: string };
  "question": { questions: Question[] };
  "checkpoint": { task: number; what: string; evidence: string | null };
  "task/output": { task: number; lines: string[] };
  "lagged": { cursor: number };
}

export type Method = keyof Methods;
export type Params<M extends Method> = Methods[M]["params"];
export type Result<M extends Method> = Methods[M]["result"];
export type NotificationName = keyof Notifications;

export interface RpcError { code: number; message: string; data?: unknown }

/** A notification as the client hands it on: its name and its params, tied together. */
export type AnyNotification = { [N in NotificationName]: { method: N; params: Notifications[N] } }[NotificationName];
