/**
 * The view's state and every change to it, as pure functions (no DOM, no protocol): the
 * renderer draws a `State`, the controller turns protocol answers and notifications into
 * `Action`s. Each reducer returns a new object for what changed and keeps the rest, so the
 * renderer repaints only the parts whose object changed.
 */
import type { Conflict, Plan, PlayerInfo, Question, ReviewFile, Status, Task, TaskStatus }
  from "./protocol";

export interface Message { role: "you" | "planner" | "baton" | "error"; text: string }
export interface Step { kind: string; text: string }
/** A landed task in the handoff, in merge order (what "merge up to here" counts along). */
export interface HandoffTask { id: number; title: string }

export interface Card {
  id: number;
  title: string;
  player: string;
  mode: string;
  state: string;
  flags: { kind: string; detail: string }[];
  checkpoint: { what: string; evidence: string | null } | null;
  lastReport: string | null;
  output: string[];
}

export type Confirmable = "approve" | "run" | "merge" | "mergeUpTo" | "discard" | "stop" | "stopTask" | "newPlan";

export interface Confirm { action: Confirmable; task: number | null; question: string; yes: string }

export interface State {
  connected: boolean;
  messages: Message[];
  planner: { working: boolean; steps: Step[]; thinking: string; text: string };
  questions: Question[] | null;
  plan: Plan | null;
  approved: boolean;
  running: boolean;
  selected: number | null;
  players: PlayerInfo[];
  cards: Card[];
  summary: string | null;
  handoff: { files: ReviewFile[]; tasks: HandoffTask[]; base: string | null; head: string | null } | null;
  conflict: Conflict | null;
  confirm: Confirm | null;
  busy: string | null;
  /** Edits painted but not yet answered by the server. */
  saving: boolean;
}

export const OUTPUT_LINES = 6;
export const MAX_STEPS = 200;

export function initialState(): State {
  return {
    connected: false, messages: [], questions: null, plan: null, approved: false,
    running: false, selected: null, players: [], cards: [], summary: null, handoff: null,
    conflict: null, confirm: null, busy: null, saving: false,
    planner: { working: false, steps: [], thinking: "", text: "" },
  };
}

export type Action =
  | { type: "connected" }
  | { type: "disconnected"; reason: string }
  | { type: "say"; role: Message["role"]; text: string }
  | { type: "plannerStarted"; goal: string | null; answer: string | null }
  | { type: "plannerStep"; step: Step }
  | { type: "plannerText"; delta: string }
  | { type: "plannerThinking"; delta: string }
  | { type: "drafted"; questions: Question[] | null; plan: Plan | null; failed?: string }
  | { type: "questions"; questions: Question[] }
  | { type: "plan"; plan: Plan | null }
  | { type: "edited"; id: number; field: string; value: unknown }
  | { type: "players"; players: PlayerInfo[] }
  | { type: "status"; status: Status }
  | { type: "output"; task: number; lines: string[] }
  | { type: "checkpoint"; task: number; what: string; evidence: string | null }
  | { type: "select"; id: number | null }
  | { type: "move"; delta: number }
  | { type: "handoff"; files: ReviewFile[]; tasks: HandoffTask[]; base: string | null; head: string | null }
  | { type: "merged"; merged: number[]; conflict: Conflict | null }
  | { type: "ask"; confirm: Confirm }
  | { type: "settle" }
  | { type: "busy"; what: string | null }
  | { type: "saving"; on: boolean };

export function reduce(state: State, action: Action): State {
  switch (action.type) {
    case "connected":
      return { ...state, connected: true };
    case "disconnected":
      return { ...say(state, "error", action.reason), connected: false, busy: null };
    case "say":
      return say(state, action.role, action.text);
    case "plannerStarted": {
      const text = action.goal ?? action.answer;
      const base = text ? say(state, "you", text) : state;
      return { ...base, questions: null,
               planner: { working: true, steps: [], thinking: "", text: "" } };
    }
    case "plannerStep": {
      const steps = [...state.planner.steps, action.step].slice(-MAX_STEPS);
      return { ...state, planner: { ...state.planner, steps } };
    }
    case "plannerText":
      return { ...state, planner: { ...state.planner, text: state.planner.text + action.delta } };
    case "plannerThinking":
      return { ...state,
               planner: { ...state.planner, thinking: state.planner.thinking + action.delta } };
    case "drafted": {
      let next: State = { ...state, planner: { ...state.planner, working: false } };
      if (state.planner.text.trim()) next = say(next, "planner", state.planner.text.trim());
      if (action.failed) next = say(next, "error", action.failed);
      if (action.questions && action.questions.length) {
        return { ...next, questions: action.questions };
      }
      return action.plan ? withPlan({ ...next, questions: null }, action.plan) : next;
    }
    case "questions":
      return { ...state, questions: action.questions };
    case "plan":
      return withPlan(state, action.plan);
    case "edited": {
      if (!state.plan || !state.plan.tasks.some((t) => t.id === action.id)) return state;
      const tasks = state.plan.tasks.map((t) => t.id === action.id ? { ...t, [action.field]: action.value } : t);
      return { ...state, plan: { ...state.plan, tasks } };
    }
    case "players":
      return { ...state, players: action.players };
    case "status":
      return withStatus(state, action.status);
    case "output":
      return { ...state, cards: state.cards.map((c) => c.id === action.task
        ? { ...c, output: [...c.output, ...action.lines].slice(-OUTPUT_LINES) } : c) };
    case "checkpoint":
      return { ...state, cards: state.cards.map((c) => c.id === action.task
        ? { ...c, state: "checkpoint", checkpoint: { what: action.what, evidence: action.evidence } }
        : c) };
    case "select":
      return { ...state, selected: action.id };
    case "move":
      return { ...state, selected: moved(state, action.delta) };
    case "handoff":
      return { ...state, handoff: { files: action.files, tasks: action.tasks, base: action.base,
                                    head: action.head } };
    case "merged": {
      const note = action.merged.length
        ? `merged ${action.merged.map((n) => `task ${n}`).join(", ")} onto your branch`
        : "nothing new to merge";
      if (!action.conflict) return { ...say(state, "baton", note), conflict: null };
      const next = action.merged.length ? say(state, "baton", note) : state;
      return { ...say(next, "error", `task ${action.conflict.id} stopped at a conflict in ` +
                      `${action.conflict.files.join(", ")}: ${action.conflict.command}`),
               conflict: action.conflict };
    }
    case "ask":
      return { ...state, confirm: action.confirm };
    case "settle":
      return { ...state, confirm: null };
    case "busy":
      return { ...state, busy: action.what };
    case "saving":
      return state.saving === action.on ? state : { ...state, saving: action.on };
  }
}

function say(state: State, role: Message["role"], text: string): State {
  return { ...state, messages: [...state.messages, { role, text }] };
}

function withPlan(state: State, given: Plan | null): State {
  const plan = given && state.plan ? keepUnchanged(state.plan, given) : given;
  const ids = plan ? plan.tasks.map((t) => t.id) : [];
  const selected = state.selected !== null && ids.includes(state.selected)
    ? state.selected : (ids[0] ?? null);
  return { ...state, plan, selected };
}

/** The new plan, with each task that did not change kept as the same object: after one
 * edit of a 1,000-task plan the view repaints one row, not a thousand. */
function keepUnchanged(old: Plan, plan: Plan): Plan {
  const before = new Map(old.tasks.map((t) => [t.id, t]));
  let same = old.tasks.length === plan.tasks.length && old.goal === plan.goal;
  const tasks = plan.tasks.map((t, i) => {
    const had = before.get(t.id);
    const kept = had && JSON.stringify(had) === JSON.stringify(t) ? had : t;
    if (kept !== old.tasks[i]) same = false;
    return kept;
  });
  return same ? old : { ...plan, tasks };
}

function withStatus(state: State, status: Status): State {
  const old = new Map(state.cards.map((c) => [c.id, c]));
  const cards = status.tasks.map((t: TaskStatus): Card => {
    const before = old.get(t.id);
    const card: Card = {
      id: t.id, title: t.title, player: t.player, mode: t.mode, state: t.state,
      flags: (t.flags ?? []).map((f) => ({ kind: String(f.kind ?? ""), detail: String(f.detail ?? "") })),
      checkpoint: t.checkpoint ? { what: String(t.checkpoint.what ?? ""),
                                   evidence: t.checkpoint.evidence ? String(t.checkpoint.evidence) : null } : null,
      lastReport: t.last_report ?? t.summary ?? t.reason ?? null,
      output: before ? before.output : [],
    };
    return before && sameCard(before, card) ? before : card;
  });
  const running = Boolean(status.conductor && status.conductor.pid);
  return { ...state, cards, running, approved: status.plan ? status.plan.approved : false,
           summary: summaryText(status.summary) ?? state.summary };
}

/** The run summary in a line: `status/get`'s summary object, its scalar fields. */
export function summaryText(summary: Record<string, unknown> | null | undefined): string | null {
  if (!summary) return null;
  if (typeof summary.text === "string") return summary.text;
  const bits = Object.entries(summary)
    .filter(([, v]) => typeof v === "string" || typeof v === "number")
    .map(([k, v]) => `${k.replace(/_/g, " ")}: ${typeof v === "number" && !Number.isInteger(v) ? v.toFixed(1) : v}`);
  return bits.length ? bits.join(" · ") : null;
}

function sameCard(a: Card, b: Card): boolean {
  return a.state === b.state && a.title === b.title && a.player === b.player
    && a.lastReport === b.lastReport && JSON.stringify(a.flags) === JSON.stringify(b.flags)
    && JSON.stringify(a.checkpoint) === JSON.stringify(b.checkpoint);
}

function moved(state: State, delta: number): number | null {
  const tasks = state.plan ? state.plan.tasks : [];
  if (!tasks.length) return null;
  const at = tasks.findIndex((t) => t.id === state.selected);
  const index = Math.max(0, Math.min(tasks.length - 1, (at < 0 ? 0 : at) + delta));
  return tasks[index].id;
}

/** The selected task of the plan, if any. */
export function selectedTask(state: State): Task | null {
  if (!state.plan || state.selected === null) return null;
  return state.plan.tasks.find((t) => t.id === state.selected) ?? null;
}

/** What the pickers offer for a task: the players the machine has (ready first), and the
 * models and efforts of the task's player as `players/list` reports them. */
export function choices(state: State, task: Task): { players: string[]; models: string[]; efforts: string[]; anyModel: boolean } {
  const names = [...state.players].sort((a, b) => Number(b.ready) - Number(a.ready))
    .map((p) => p.name);
  if (!names.includes(task.player)) names.unshift(task.player);
  const player = state.players.find((p) => p.name === task.player);
  return { players: names, models: player?.models ?? [], efforts: player?.efforts ?? [],
           anyModel: Boolean(player && (player.models === null || player.models === undefined)) };
}

/** Events that change nothing a status shows the page (a card's state, flags, report or the
 * run's summary): a progress line is already on its card through `task/output`. With agents
 * streaming they come several times a second, and a status of a large plan for each would be
 * work the person's next key press waits behind. */
const NO_STATUS_CHANGE = new Set(["task.progress"]);

/** Whether an `event` notification of this kind may change what `status/get` shows. */
export function changesStatus(kind: string): boolean {
  return !NO_STATUS_CHANGE.has(kind);
}

/** The handoff's turn: some build work has landed and nothing is still on its way (a failed,
 * paused or parked task waits on the person, who may merge what landed before it). */
export function readyForHandoff(state: State): boolean {
  return state.cards.some((c) => c.state === "landed")
    && !state.cards.some((c) => ON_ITS_WAY.has(c.state));
}

const ON_ITS_WAY = new Set(["draft", "queued", "running", "checkpoint"]);

/** The `tasks` of `handoff/review` (records of landed work, in merge order), as the view
 * lists them. */
export function handoffTasks(sections: Record<string, unknown>[]): HandoffTask[] {
  return sections.filter((t) => typeof t.id === "number")
    .map((t) => ({ id: t.id as number, title: typeof t.title === "string" ? t.title : "" }));
}

/** The plan's single keys (as the terminal app's): what a key press means when the plan list
 * has focus, or null. */
export type PlanKey =
  | { kind: "move"; delta: number } | { kind: "first" } | { kind: "last" }
  | { kind: "field"; field: EditableField } | { kind: "toggleCheckpoint" }
  | { kind: "add" } | { kind: "remove" } | { kind: "approve" } | { kind: "run" }
  | { kind: "stop" } | { kind: "retry" } | { kind: "take" } | { kind: "handoff" };

export type EditableField = "title" | "prompt" | "player" | "model" | "effort" | "mode"
  | "depends_on" | "skills" | "scope" | "check" | "runner";

export function planKey(key: string, ctrl: boolean): PlanKey | null {
  if (ctrl) return key === "e" ? { kind: "field", field: "effort" } : null;
  switch (key) {
    case "j": case "ArrowDown": return { kind: "move", delta: 1 };
    case "k": case "ArrowUp": return { kind: "move", delta: -1 };
    case "PageDown": return { kind: "move", delta: 10 };
    case "PageUp": return { kind: "move", delta: -10 };
    case "Home": return { kind: "first" };
    case "End": return { kind: "last" };
    case "t": return { kind: "field", field: "title" };
    case "e": return { kind: "field", field: "prompt" };
    case "R": return { kind: "field", field: "player" };
    case "o": return { kind: "field", field: "model" };
    case "M": return { kind: "field", field: "mode" };
    case "d": return { kind: "field", field: "depends_on" };
    case "s": return { kind: "field", field: "skills" };
    case "S": return { kind: "field", field: "scope" };
    case "c": return { kind: "field", field: "check" };
    case "w": return { kind: "field", field: "runner" };
    case "C": return { kind: "toggleCheckpoint" };
    case "n": return { kind: "add" };
    case "D": return { kind: "remove" };
    case "a": return { kind: "approve" };
    case "E": return { kind: "run" };
    case "x": return { kind: "stop" };
    case "r": return { kind: "retry" };
    case "T": return { kind: "take" };
    case "H": return { kind: "handoff" };
    default: return null;
  }
}

/** A field's text in the editor, and the value `task/edit` takes back from that text. */
export function fieldText(task: Task, field: EditableField): string {
  switch (field) {
    case "depends_on": return (task.depends_on ?? []).join(", ");
    case "skills": return (task.skills ?? []).join(", ");
    case "scope": return (task.scope ?? []).join(", ");
    case "mode": return task.mode ?? "build";
    case "title": return task.title;
    case "prompt": return task.prompt ?? "";
    case "player": return task.player;
    case "model": return task.model ?? "";
    case "effort": return task.effort ?? "";
    case "check": return task.check ?? "";
    case "runner": return task.runner ?? "";
  }
}

export function fieldValue(field: EditableField, text: string): string | number[] | string[] | null {
  const items = text.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
  switch (field) {
    case "depends_on": return items.map((s) => Number(s));
    case "skills": case "scope": return items;
    case "model": case "effort": case "check": case "runner":
      return text.trim() === "" ? null : text.trim();
    default: return text;
  }
}
