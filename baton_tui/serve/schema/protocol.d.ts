// Generated from baton_tui/serve/wire.py by `baton serve --typescript`. Do not edit.
// Baton app-server protocol 1: JSON-RPC 2.0, one object per line.

export type ProtocolVersion = 1;

export interface AddParams {
  title: string;
  player: string;
  mode?: Mode;
  depends_on?: number[];
  prompt?: string;
  check?: string | null;
}

export interface AddResult {
  /** the current plan, or null when there is none */
  plan: Plan | null;
  approved?: boolean;
  slug?: string | null;
  id: number;
  [key: string]: unknown;
}

export interface AnswerParams {
  /** the answer to the first open question (or to `number`) */
  answer?: string | null;
  /** which question (1-based) */
  number?: number | null;
  /** take the recommendation for every question still open */
  recommended?: boolean;
}

export interface ApproveResult {
  approved?: true;
  base_branch?: string | null;
  base_commit?: string | null;
  warnings?: string[];
  [key: string]: unknown;
}

/** How much the person supervises a run (DESIGN.md, "Supervision"). */
export type Autonomy = "guarded" | "watch" | "autopilot";

export interface Capabilities {
  methods: string[];
  notifications: string[];
  transports: string[];
  interactive: boolean;
  [key: string]: unknown;
}

export interface CheckpointAnswerParams {
  id: number;
  answer: "yes" | "no";
}

export interface CheckpointNote {
  task: number;
  what: string;
  evidence?: string | null;
  [key: string]: unknown;
}

export interface ClientInfo {
  /** the client's name, such as `vscode` or `acp` */
  name: string;
  version?: string | null;
  [key: string]: unknown;
}

export interface Conflict {
  id: number;
  branch: string;
  files: string[];
  command: string;
  [key: string]: unknown;
}

export interface DeltaNote {
  delta: string;
  [key: string]: unknown;
}

export interface DiscardParams {
  id: number;
  with_dependents?: boolean;
}

export interface DiscardResult {
  discarded: number[];
  /** task id -> the ref its last state is kept under */
  kept_under: Record<string, string | null>;
  [key: string]: unknown;
}

export interface DraftParams {
  goal: string;
  skill?: "grilling" | "to-spec" | null;
  /** archive a current plan that has open work */
  new?: boolean;
}

export interface DraftResult {
  status: "questions" | "plan" | "failed";
  /** the open questions */
  questions?: Question[];
  plan?: Plan | null;
  slug?: string | null;
  message?: string;
  [key: string]: unknown;
}

export interface EditParams {
  id: number;
  field: "title" | "prompt" | "player" | "model" | "effort" | "mode" | "depends_on" | "skills" | "scope" | "branch" | "checkpoint" | "check" | "runner";
  /** the new value: text; a list for depends_on, skills and scope; a boolean for checkpoint; null (or "") for the player's default model, effort or no check */
  value: unknown;
}

/** No params. */
export interface Empty {
}

export interface EventNote {
  /** increases with each event; resume from it */
  cursor: number;
  /** `task.landed`, `plan.approved` … (the store's event kinds) */
  kind: string;
  plan: number | null;
  task: number | null;
  /** seconds since the epoch */
  at: number;
  data: Record<string, unknown>;
  [key: string]: unknown;
}

export interface FileParams {
  path: string;
}

export interface FileSides {
  path: string;
  /** the file on the person's branch (null: not there) */
  left: string | null;
  /** the file with the landed work (null: deleted) */
  right: string | null;
  binary?: boolean;
  [key: string]: unknown;
}

export interface InitializeParams {
  /** the protocol version the client speaks (this one is 1) */
  protocol: number;
  client?: ClientInfo | null;
  /** true only for a person's own UI: plan/approve, handoff/merge and task/discard are refused on any other connection */
  interactive?: boolean;
}

export interface InitializeResult {
  protocol: number;
  /** Baton's version */
  baton: string;
  capabilities: Capabilities;
  /** the repository (or folder) this server works in */
  repo: string;
  [key: string]: unknown;
}

export interface LaggedNote {
  /** the last event sent; call events/subscribe with it */
  cursor: number;
  [key: string]: unknown;
}

export interface LogParams {
  task: number;
  /** a byte offset returned by the last call */
  cursor?: number;
}

export interface LogResult {
  /** redacted output lines */
  lines: string[];
  cursor: number;
  /** bytes cut from a long log before the cursor */
  cut?: number;
  player?: string | null;
  [key: string]: unknown;
}

export interface MergeParams {
  /** merge up to this task only */
  upTo?: number | null;
}

export interface MergeResult {
  merged: number[];
  already: number[];
  onto: string;
  conflict: Conflict | null;
  not_landed: number[];
  notes: string[];
  [key: string]: unknown;
}

/** What a task is allowed to do. */
export type Mode = "build" | "research" | "manual";

export interface NewPlanResult {
  archived: boolean;
  [key: string]: unknown;
}

/** Done; nothing more to say. */
export interface Ok {
  ok?: true;
  [key: string]: unknown;
}

export interface OutputNote {
  task: number;
  lines: string[];
  steps?: OutputStep[];
  /** lines coalesced away (the log keeps them) */
  dropped?: number;
  [key: string]: unknown;
}

export interface OutputStep {
  kind: string;
  text: string;
  detail?: string;
  [key: string]: unknown;
}

/** The plan document, version 1 (as `baton plan --json` prints it). */
export interface Plan {
  version?: 1;
  goal: string;
  autonomy?: Autonomy;
  questions?: Question[];
  tasks: Task[];
  [key: string]: unknown;
}

export interface PlanResult {
  /** the current plan, or null when there is none */
  plan: Plan | null;
  approved?: boolean;
  slug?: string | null;
  [key: string]: unknown;
}

export interface PlanStatus {
  goal: string;
  slug: string;
  approved: boolean;
  autonomy: string;
  state: string;
  stopped_by?: string | null;
  base_branch?: string | null;
  integration_branch?: string | null;
  [key: string]: unknown;
}

export interface PlannerStepNote {
  /** read, search, execute, edit, fetch, think or other */
  kind: string;
  tool?: string | null;
  text: string;
  detail?: string;
  /** the file or pattern the step names */
  path?: string | null;
  [key: string]: unknown;
}

export interface PlayerInfo {
  name: string;
  ready: boolean;
  reason?: string | null;
  version?: string | null;
  /** null: any model name */
  models?: string[] | null;
  default_model?: string | null;
  efforts?: string[];
  [key: string]: unknown;
}

export interface PlayersParams {
  /** detect again (a newly signed-in agent joins) */
  refresh?: boolean;
}

export interface PlayersResult {
  players: PlayerInfo[];
  [key: string]: unknown;
}

export interface Question {
  question: string;
  recommendation?: string;
  answer?: string | null;
  [key: string]: unknown;
}

export interface QuestionNote {
  questions: Question[];
  [key: string]: unknown;
}

export interface RetryParams {
  id: number;
  feedback?: string | null;
}

export interface RetryResult {
  queued?: true;
  /** null: it waits for the plan's approval */
  conductor: number | null;
  [key: string]: unknown;
}

export interface Review {
  /** the combined diff of landed tasks (or of `task`) */
  diff: string;
  files: ReviewFile[];
  tasks: Record<string, unknown>[];
  /** the person's branch the work merges onto */
  onto: string | null;
  /** the commit on the person's branch the diff starts from */
  base: string | null;
  /** the integration branch's tip */
  head: string | null;
  [key: string]: unknown;
}

export interface ReviewFile {
  path: string;
  added: number;
  deleted: number;
  tasks: number[];
  [key: string]: unknown;
}

export interface ReviewParams {
  task?: number | null;
}

export interface RunStartParams {
  until_failures?: number | null;
  deadline?: string | null;
}

export interface RunStartResult {
  started: boolean;
  /** the conductor's pid */
  conductor: number | null;
  [key: string]: unknown;
}

export interface RunStopResult {
  paused: boolean;
  [key: string]: unknown;
}

export interface RunnersResult {
  runners: Record<string, unknown>[];
  [key: string]: unknown;
}

/** `baton status --json`'s object. */
export interface Status {
  plan: PlanStatus | null;
  conductor: Record<string, unknown> | null;
  tasks: TaskStatus[];
  summary?: Record<string, unknown> | null;
  /** the newest event's cursor when this was read */
  cursor?: number;
  [key: string]: unknown;
}

export interface SubscribeParams {
  /** the last event's cursor the client has (0: every event); events after it arrive as `event` notifications, then live ones */
  cursor?: number;
  /** also send running tasks' output (task/output) */
  output?: boolean;
}

export interface SubscribeResult {
  /** the newest event's cursor now (replayed ones follow) */
  cursor: number;
  [key: string]: unknown;
}

/** What to run in a terminal to take the task over: the agent's own session resumed in the
 * worktree (or the person's shell), then `task/done` or `task/retry`. */
export interface TakeResult {
  argv: string[];
  cwd: string;
  player: string;
  session?: string | null;
  /** false: the player has no session to resume; argv is a shell */
  interactive: boolean;
  [key: string]: unknown;
}

/** A task as the plan document (version 1) holds it. */
export interface Task {
  id: number;
  title: string;
  prompt?: string;
  player: string;
  model?: string | null;
  effort?: string | null;
  mode?: Mode;
  depends_on?: number[];
  skills?: string[];
  scope?: string[];
  checkpoint?: boolean;
  check?: string | null;
  runner?: string;
  [key: string]: unknown;
}

export interface TaskParams {
  id: number;
}

/** One task in `status/get` (the same object as in `baton status --json`). */
export interface TaskStatus {
  id: number;
  title: string;
  player: string;
  mode: string;
  state: string;
  model?: string | null;
  effort?: string | null;
  depends_on?: number[];
  branch?: string | null;
  worktree?: string | null;
  reason?: string | null;
  progress?: string | null;
  checkpoint?: Record<string, unknown> | null;
  summary?: string | null;
  last_report?: string | null;
  flags?: Record<string, unknown>[];
  words?: string;
  needs_approval?: boolean;
  attempts?: number;
  runner?: string;
  [key: string]: unknown;
}

/** Every request: its params and result. */
export interface Methods {
  /** the handshake; first on every connection */
  "initialize": { params: InitializeParams; result: InitializeResult };
  /** the planner on a goal: questions or a plan */
  "plan/draft": { params: DraftParams; result: DraftResult };
  /** answer the planner's question */
  "plan/answer": { params: AnswerParams; result: DraftResult };
  /** the current plan */
  "plan/get": { params: Empty; result: PlanResult };
  /** archive the current plan (its work is kept) */
  "plan/new": { params: Empty; result: NewPlanResult };
  /** set one field of one task, by the rule book */
  "task/edit": { params: EditParams; result: PlanResult };
  /** add a task */
  "task/add": { params: AddParams; result: AddResult };
  /** remove a task that has not started */
  "task/remove": { params: TaskParams; result: PlanResult };
  /** approve the whole plan (interactive connections only) */
  "plan/approve": { params: Empty; result: ApproveResult };
  /** start (or attach to) the run */
  "run/start": { params: RunStartParams; result: RunStartResult };
  /** pause the running tasks; `run/start` resumes */
  "run/stop": { params: Empty; result: RunStopResult };
  /** queue a task again (with feedback) */
  "task/retry": { params: RetryParams; result: RetryResult };
  /** mark a manual or taken-over task done */
  "task/done": { params: TaskParams; result: Ok };
  /** discard a task's work (interactive connections only) */
  "task/discard": { params: DiscardParams; result: DiscardResult };
  /** stop a task's agent; the command to take it over */
  "task/take": { params: TaskParams; result: TakeResult };
  /** stop one task's agent (branch kept) */
  "task/stop": { params: TaskParams; result: Ok };
  /** answer a task's checkpoint */
  "checkpoint/answer": { params: CheckpointAnswerParams; result: Ok };
  /** the players, their models and efforts */
  "players/list": { params: PlayersParams; result: PlayersResult };
  /** the configured runners */
  "runners/list": { params: Empty; result: RunnersResult };
  /** the status snapshot, as `baton status --json` */
  "status/get": { params: Empty; result: Status };
  /** the combined diff of landed work */
  "handoff/review": { params: ReviewParams; result: Review };
  /** one file on the person's branch and landed */
  "handoff/file": { params: FileParams; result: FileSides };
  /** merge landed work onto the person's branch (interactive connections only) */
  "handoff/merge": { params: MergeParams; result: MergeResult };
  /** a task's output from a cursor */
  "log/read": { params: LogParams; result: LogResult };
  /** every event after a cursor, then live ones */
  "events/subscribe": { params: SubscribeParams; result: SubscribeResult };
}

/** Every notification the server sends: its params. */
export interface Notifications {
  "event": EventNote;
  "planner/step": PlannerStepNote;
  "planner/text": DeltaNote;
  "planner/thinking": DeltaNote;
  "question": QuestionNote;
  "checkpoint": CheckpointNote;
  "task/output": OutputNote;
  "lagged": LaggedNote;
}

export type MethodName = keyof Methods;
export type NotificationName = keyof Notifications;
export type ErrorCode = -32700 | -32600 | -32601 | -32602 | -32603 | -32001 | -32002 | -32003 | -32004 | -32005;

