/**
 * The web client's controller: person's intents in, protocol requests out, answers and
 * notifications turned into state changes. No DOM here (the view calls these methods), so the
 * same controller runs in the VS Code webview, in a browser, and in node's tests.
 */
import type { Connection } from "./connection";
import { RpcFailure } from "./rpc";
import type { AnyNotification, DraftResult } from "./protocol";
import {
  type Action, type Confirm, type Confirmable, type EditableField, type State,
  changesStatus, fieldValue, handoffTasks, initialState, readyForHandoff, reduce,
} from "./state";

/** "tasks 1, 3 (up to task 3)": what merging up to `task` brings, from the handoff's list. */
function upToWords(state: State, task: number | null): string {
  const order = state.handoff ? state.handoff.tasks.map((t) => t.id) : [];
  const at = task === null ? -1 : order.indexOf(task);
  const merged = new Set(state.cards.filter((c) => c.state === "merged").map((c) => c.id));
  const ids = at < 0 ? [] : order.slice(0, at + 1).filter((id) => !merged.has(id));
  if (ids.length <= 1) return `task ${task}`;
  return `tasks ${ids.join(", ")} (up to task ${task})`;
}

/** The shortest wait between two status refreshes that events ask for. */
export const STATUS_EVERY_MS = 150;

export class App {
  state: State = initialState();
  private statusInFlight = false;
  private statusAgain = false;
  private landedSeen = -1;
  private editsInFlight = 0;
  private statusTimer: ReturnType<typeof setTimeout> | null = null;
  private editRefused = false;
  /** How many times every edit in flight has been answered (the benchmark's and tests' hook). */
  editsSettled = 0;
  get editing(): boolean { return this.editsInFlight > 0; }

  constructor(private readonly conn: Connection, private readonly render: (s: State) => void) {
    conn.onNotification((n) => this.notified(n));
    conn.onClose((reason) => this.dispatch({ type: "disconnected", reason }));
  }

  dispatch(action: Action): void {
    this.state = reduce(this.state, action);
    this.render(this.state);
  }

  async start(): Promise<void> {
    await this.guard("connecting", async () => {
      this.dispatch({ type: "connected" });
      const [players, plan] = await Promise.all([
        this.conn.request("players/list", {}), this.conn.request("plan/get", {})]);
      this.dispatch({ type: "players", players: players.players });
      this.dispatch({ type: "plan", plan: plan.plan });
      await this.conn.request("events/subscribe", { cursor: (await this.conn.request("status/get", {})).cursor ?? 0,
                                                     output: true });
      await this.refreshStatus();
    });
  }

  /** The composer's text: a goal when there is no pending question, else the answer. */
  async send(text: string): Promise<void> {
    const words = text.trim();
    if (!words) return;
    if (this.state.questions) return this.answer(words);
    await this.guard("planning", async () => {
      this.dispatch({ type: "plannerStarted", goal: words, answer: null });
      this.drafted(await this.conn.request("plan/draft", { goal: words }));
      await this.refreshStatus();
    }, () => this.dispatch({ type: "drafted", questions: null, plan: this.state.plan }));
  }

  /** Answer the planner's open question in words, or (`recommended`) take the
   * recommendation for every question still open. */
  async answer(text: string, recommended = false): Promise<void> {
    const words = text.trim();
    if (!words && !recommended) return;
    await this.guard("planning", async () => {
      this.dispatch({ type: "plannerStarted", goal: null,
                      answer: recommended ? "(the recommendations)" : words });
      this.drafted(await this.conn.request("plan/answer",
                                           recommended ? { recommended: true } : { answer: words }));
      await this.refreshStatus();
    }, () => this.dispatch({ type: "drafted", questions: null, plan: this.state.plan }));
  }

  private drafted(answer: DraftResult): void {
    const questions = answer.status === "questions" && answer.questions?.length ? answer.questions : null;
    this.dispatch({ type: "drafted", questions, plan: answer.plan ?? this.state.plan,
                    failed: answer.status === "failed" ? answer.message ?? "the planner failed" : undefined });
  }

  /** An edit is painted at once (the person sees their key press land); the server's plan
   * then replaces it — only the answer to the newest edit in flight, since an older one would
   * paint a value the person has already changed. A refused edit shows the plan as it stands. */
  async edit(id: number, field: EditableField | "checkpoint", raw: string | boolean): Promise<void> {
    const value = typeof raw === "boolean" ? raw : fieldValue(field as EditableField, raw);
    this.dispatch({ type: "edited", id, field, value });
    this.editsInFlight++;
    this.dispatch({ type: "saving", on: true });
    let failed = false;
    await this.guard(null, async () => {
      const answer = await this.conn.request("task/edit", { id, field, value });
      if (this.editsInFlight === 1 && !this.editRefused) this.dispatch({ type: "plan", plan: answer.plan });
    }, () => { failed = true; });
    this.editsInFlight--;
    if (failed) this.editRefused = true;
    if (this.editsInFlight === 0) {
      if (this.editRefused) {
        this.editRefused = false;
        await this.guard(null, async () => {
          const plan = await this.conn.request("plan/get", {});
          this.dispatch({ type: "plan", plan: plan.plan });
        });
      }
      this.editsSettled++;
      this.dispatch({ type: "saving", on: false });
      this.statusSoon();
    }
  }

  async addTask(title: string): Promise<void> {
    const player = this.state.players.find((p) => p.ready)?.name
      ?? this.state.plan?.tasks[0]?.player ?? "claude-code";
    await this.guard(null, async () => {
      const added = await this.conn.request("task/add", { title, player });
      this.dispatch({ type: "plan", plan: added.plan });
      this.dispatch({ type: "select", id: added.id });
    });
  }

  async removeTask(id: number): Promise<void> {
    await this.guard(null, async () => {
      const answer = await this.conn.request("task/remove", { id });
      this.dispatch({ type: "plan", plan: answer.plan });
    });
  }

  /** Ask before an action that cannot be taken back; `confirmed` then does it. */
  ask(action: Confirmable, task: number | null = null): void {
    const words: Record<Confirmable, [string, string]> = {
      approve: ["Approve the whole plan? Build tasks start only when you run it.", "Approve"],
      run: ["Run the approved plan now? Each task works in its own worktree.", "Yes, run"],
      merge: ["Merge every landed task onto your branch, in plan order?", "Merge"],
      mergeUpTo: [`Merge ${upToWords(this.state, task)} onto your branch, in merge order?`, "Merge"],
      discard: [`Discard task ${task} and its branch? Its work is thrown away.`, "Yes, discard"],
      stop: ["Pause the run? Running tasks stop where they are; Run… continues it.", "Yes, pause"],
      stopTask: [`Stop task ${task}? Its branch is kept; Retry starts it again.`, "Yes, stop"],
      newPlan: ["Archive this plan and start a new one?", "Yes, start over"],
    };
    const [question, yes] = words[action];
    const confirm: Confirm = { action, task, question, yes };
    this.dispatch({ type: "ask", confirm });
  }

  async confirmed(): Promise<void> {
    const confirm = this.state.confirm;
    this.dispatch({ type: "settle" });
    if (!confirm) return;
    const id = confirm.task ?? 0;
    switch (confirm.action) {
      case "approve": return this.approve();
      case "run": return this.run();
      case "merge": return this.merge();
      case "mergeUpTo": return this.merge(id);
      case "discard": return this.simple(() =>
        this.conn.request("task/discard", { id }));
      case "stop": return this.simple(() => this.conn.request("run/stop", {}));
      case "stopTask": return this.simple(() => this.conn.request("task/stop", { id }));
      case "newPlan": return this.simple(async () => {
        await this.conn.request("plan/new", {});
        this.dispatch({ type: "plan", plan: null });
      });
    }
  }

  cancel(): void { this.dispatch({ type: "settle" }); }

  private async approve(): Promise<void> {
    await this.guard("approving", async () => {
      const answer = await this.conn.request("plan/approve", {});
      this.dispatch({ type: "say", role: "baton",
                      text: ["plan approved", ...(answer.warnings ?? [])].join("\n") });
      await this.refreshStatus();
    });
  }

  private async run(): Promise<void> {
    await this.guard("starting the run", async () => {
      const answer = await this.conn.request("run/start", {});
      this.dispatch({ type: "say", role: "baton",
                      text: answer.started ? "the run started" : "the run is already going" });
      await this.refreshStatus();
    });
  }

  private async merge(upTo?: number): Promise<void> {
    await this.guard("merging", async () => {
      const answer = await this.conn.request("handoff/merge", upTo ? { upTo } : {});
      this.dispatch({ type: "merged", merged: answer.merged, conflict: answer.conflict });
      for (const note of answer.notes) this.dispatch({ type: "say", role: "baton", text: note });
      if (answer.conflict && answer.conflict.files.length) {
        await this.conn.openFile(answer.conflict.files[0]);
      }
      await this.refreshStatus();
      await this.review();
    });
  }

  async retry(id: number, feedback?: string): Promise<void> {
    await this.simple(() =>
      this.conn.request("task/retry", feedback ? { id, feedback } : { id }));
  }

  async done(id: number): Promise<void> {
    await this.simple(() => this.conn.request("task/done", { id }));
  }

  async checkpoint(id: number, answer: "yes" | "no"): Promise<void> {
    await this.simple(() => this.conn.request("checkpoint/answer", { id, answer }));
  }

  async take(id: number): Promise<void> { await this.guard(null, () => this.conn.take(id)); }
  async openDiff(path: string): Promise<void> { await this.guard(null, () => this.conn.openDiff(path)); }

  async refreshPlayers(): Promise<void> {
    await this.guard("detecting players", async () => {
      const answer = await this.conn.request("players/list", { refresh: true });
      this.dispatch({ type: "players", players: answer.players });
      const ready = answer.players.filter((p) => p.ready).map((p) => p.name);
      this.dispatch({ type: "say", role: "baton",
                      text: `players ready: ${ready.length ? ready.join(", ") : "none"}` });
    });
  }

  async review(): Promise<void> {
    await this.guard(null, async () => {
      const answer = await this.conn.request("handoff/review", {});
      this.dispatch({ type: "handoff", files: answer.files, tasks: handoffTasks(answer.tasks),
                      base: answer.base, head: answer.head });
    });
  }

  /** A `status/get` within STATUS_EVERY_MS, however many events ask for one meanwhile: with
   * agents streaming, events come many times a second, and each status of a large plan is
   * work for the server and the page that a key press would wait behind. */
  private statusSoon(): void {
    if (this.statusTimer !== null) return;
    this.statusTimer = setTimeout(() => {
      this.statusTimer = null;
      void this.refreshStatus().catch(() => undefined);
    }, STATUS_EVERY_MS);
  }

  /** `status/get`, at most one in flight: notifications that arrive meanwhile ask for one more. */
  async refreshStatus(): Promise<void> {
    if (this.statusInFlight) { this.statusAgain = true; return; }
    this.statusInFlight = true;
    try {
      do {
        this.statusAgain = false;
        const status = await this.conn.request("status/get", {});
        this.dispatch({ type: "status", status });
      } while (this.statusAgain);
    } finally {
      this.statusInFlight = false;
    }
    const landed = this.state.cards.filter((c) => c.state === "landed").length;
    if (readyForHandoff(this.state) && landed !== this.landedSeen) {
      this.landedSeen = landed;
      await this.review();
    }
  }

  private notified(n: AnyNotification): void {
    switch (n.method) {
      case "planner/step":
        this.dispatch({ type: "plannerStep", step: { kind: n.params.tool ?? n.params.kind,
                                                     text: n.params.text } });
        break;
      case "planner/text": this.dispatch({ type: "plannerText", delta: n.params.delta }); break;
      case "planner/thinking": this.dispatch({ type: "plannerThinking", delta: n.params.delta }); break;
      case "question": this.dispatch({ type: "questions", questions: n.params.questions }); break;
      case "checkpoint":
        this.dispatch({ type: "checkpoint", task: n.params.task, what: n.params.what,
                        evidence: n.params.evidence ?? null });
        break;
      case "task/output": this.dispatch({ type: "output", task: n.params.task, lines: n.params.lines }); break;
      case "event": if (changesStatus(n.params.kind)) this.statusSoon(); break;
      case "lagged":
        void this.conn.request("events/subscribe", { cursor: n.params.cursor })
          .then(() => this.refreshStatus()).catch(() => undefined);
        break;
    }
  }

  private async simple(act: () => Promise<unknown>): Promise<void> {
    await this.guard(null, async () => { await act(); await this.refreshStatus(); });
  }

  /** Runs one action; a refusal becomes one line in the conversation, and `after` restores
   * what the action had begun to show. */
  private async guard(busy: string | null, act: () => Promise<void>,
                      after?: () => void | Promise<void>): Promise<void> {
    if (busy) this.dispatch({ type: "busy", what: busy });
    try {
      await act();
    } catch (err) {
      const text = err instanceof RpcFailure || err instanceof Error ? err.message : String(err);
      this.dispatch({ type: "say", role: "error", text });
      if (after) {
        try { await after(); } catch { /* the refusal is already shown */ }
      }
    } finally {
      if (busy) this.dispatch({ type: "busy", what: null });
    }
  }
}
