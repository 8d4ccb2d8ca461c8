/**
 * The protocol's types, from the declarations `baton serve --typescript` generates
 * (baton_tui/serve/schema/protocol.d.ts, never edited by hand), with the few helpers the
 * client needs to tie a method to its params and result and a notification to its params.
 */
import type { Methods, MethodName, Notifications, NotificationName } from "../../../baton_tui/serve/schema/protocol";

export type {
  Conflict, DraftResult, Plan, PlayerInfo, Question, ReviewFile, Status, Task, TaskStatus,
} from "../../../baton_tui/serve/schema/protocol";
export type { Methods, Notifications, NotificationName };

export type Method = MethodName;
export type Params<M extends Method> = Methods[M]["params"];
export type Result<M extends Method> = Methods[M]["result"];

export interface RpcError { code: number; message: string; data?: unknown }

/** A notification as the client hands it on: its name and its params, tied together. */
export type AnyNotification = { [N in NotificationName]: { method: N; params: Notifications[N] } }[NotificationName];
