"use strict";
(() => {
  // web/rpc.ts
  var RpcFailure = class extends Error {
    constructor(code, message, data) {
      super(message);
      this.code = code;
      this.data = data;
      this.name = "RpcFailure";
    }
  };
  var RpcClient = class {
    constructor(send) {
      this.send = send;
    }
    next = 1;
    pending = /* @__PURE__ */ new Map();
    listeners = /* @__PURE__ */ new Set();
    closed = null;
    request(method, params) {
      if (this.closed) return Promise.reject(this.closed);
      const id = this.next++;
      return new Promise((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        try {
          this.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
        } catch (err) {
          this.pending.delete(id);
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    }
    onNotification(listener) {
      this.listeners.add(listener);
      return () => this.listeners.delete(listener);
    }
    /** One line (or frame) from the server. A line that is not JSON-RPC is ignored. */
    receive(line) {
      const text = line.trim();
      if (!text) return;
      let message;
      try {
        message = JSON.parse(text);
      } catch {
        return;
      }
      if ("method" in message) {
        const n = { method: message.method, params: message.params ?? {} };
        for (const listener of this.listeners) listener(n);
        return;
      }
      if (message.id === null || message.id === void 0) return;
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
    close(reason) {
      this.closed = new Error(reason);
      for (const waiting of this.pending.values()) waiting.reject(this.closed);
      this.pending.clear();
    }
  };

  // web/state.ts
  var OUTPUT_LINES = 6;
  var MAX_STEPS = 200;
  function initialState() {
    return {
      connected: false,
      messages: [],
      questions: null,
      plan: null,
      approved: false,
      running: false,
      selected: null,
      players: [],
      cards: [],
      summary: null,
      handoff: null,
      conflict: null,
      confirm: null,
      busy: null,
      saving: false,
      planner: { working: false, steps: [], thinking: "", text: "" }
    };
  }
  function reduce(state, action) {
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
        return {
          ...base,
          questions: null,
          planner: { working: true, steps: [], thinking: "", text: "" }
        };
      }
      case "plannerStep": {
        const steps = [...state.planner.steps, action.step].slice(-MAX_STEPS);
        return { ...state, planner: { ...state.planner, steps } };
      }
      case "plannerText":
        return { ...state, planner: { ...state.planner, text: state.planner.text + action.delta } };
      case "plannerThinking":
        return {
          ...state,
          planner: { ...state.planner, thinking: state.planner.thinking + action.delta }
        };
      case "drafted": {
        let next = { ...state, planner: { ...state.planner, working: false } };
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
        return { ...state, cards: state.cards.map((c) => c.id === action.task ? { ...c, output: [...c.output, ...action.lines].slice(-OUTPUT_LINES) } : c) };
      case "checkpoint":
        return { ...state, cards: state.cards.map((c) => c.id === action.task ? { ...c, state: "checkpoint", checkpoint: { what: action.what, evidence: action.evidence } } : c) };
      case "select":
        return { ...state, selected: action.id };
      case "move":
        return { ...state, selected: moved(state, action.delta) };
      case "handoff":
        return { ...state, handoff: {
          files: action.files,
          tasks: action.tasks,
          base: action.base,
          head: action.head
        } };
      case "merged": {
        const note = action.merged.length ? `merged ${action.merged.map((n) => `task ${n}`).join(", ")} onto your branch` : "nothing new to merge";
        if (!action.conflict) return { ...say(state, "baton", note), conflict: null };
        const next = action.merged.length ? say(state, "baton", note) : state;
        return {
          ...say(next, "error", `task ${action.conflict.id} stopped at a conflict in ${action.conflict.files.join(", ")}: ${action.conflict.command}`),
          conflict: action.conflict
        };
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
  function say(state, role, text) {
    return { ...state, messages: [...state.messages, { role, text }] };
  }
  function withPlan(state, given) {
    const plan = given && state.plan ? keepUnchanged(state.plan, given) : given;
    const ids = plan ? plan.tasks.map((t) => t.id) : [];
    const selected = state.selected !== null && ids.includes(state.selected) ? state.selected : ids[0] ?? null;
    return { ...state, plan, selected };
  }
  function keepUnchanged(old, plan) {
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
  function withStatus(state, status) {
    const old = new Map(state.cards.map((c) => [c.id, c]));
    const cards = status.tasks.map((t) => {
      const before = old.get(t.id);
      const card = {
        id: t.id,
        title: t.title,
        player: t.player,
        mode: t.mode,
        state: t.state,
        flags: (t.flags ?? []).map((f) => ({ kind: String(f.kind ?? ""), detail: String(f.detail ?? "") })),
        checkpoint: t.checkpoint ? {
          what: String(t.checkpoint.what ?? ""),
          evidence: t.checkpoint.evidence ? String(t.checkpoint.evidence) : null
        } : null,
        lastReport: t.last_report ?? t.summary ?? t.reason ?? null,
        output: before ? before.output : []
      };
      return before && sameCard(before, card) ? before : card;
    });
    const running = Boolean(status.conductor && status.conductor.pid);
    return {
      ...state,
      cards,
      running,
      approved: status.plan ? status.plan.approved : false,
      summary: summaryText(status.summary) ?? state.summary
    };
  }
  function summaryText(summary) {
    if (!summary) return null;
    if (typeof summary.text === "string") return summary.text;
    const bits = Object.entries(summary).filter(([, v]) => typeof v === "string" || typeof v === "number").map(([k, v]) => `${k.replace(/_/g, " ")}: ${typeof v === "number" && !Number.isInteger(v) ? v.toFixed(1) : v}`);
    return bits.length ? bits.join(" · ") : null;
  }
  function sameCard(a, b) {
    return a.state === b.state && a.title === b.title && a.player === b.player && a.lastReport === b.lastReport && JSON.stringify(a.flags) === JSON.stringify(b.flags) && JSON.stringify(a.checkpoint) === JSON.stringify(b.checkpoint);
  }
  function moved(state, delta) {
    const tasks = state.plan ? state.plan.tasks : [];
    if (!tasks.length) return null;
    const at = tasks.findIndex((t) => t.id === state.selected);
    const index = Math.max(0, Math.min(tasks.length - 1, (at < 0 ? 0 : at) + delta));
    return tasks[index].id;
  }
  function selectedTask(state) {
    if (!state.plan || state.selected === null) return null;
    return state.plan.tasks.find((t) => t.id === state.selected) ?? null;
  }
  function choices(state, task) {
    const names = [...state.players].sort((a, b) => Number(b.ready) - Number(a.ready)).map((p) => p.name);
    if (!names.includes(task.player)) names.unshift(task.player);
    const player = state.players.find((p) => p.name === task.player);
    return {
      players: names,
      models: player?.models ?? [],
      efforts: player?.efforts ?? [],
      anyModel: Boolean(player && (player.models === null || player.models === void 0))
    };
  }
  var NO_STATUS_CHANGE = /* @__PURE__ */ new Set(["task.progress"]);
  function changesStatus(kind) {
    return !NO_STATUS_CHANGE.has(kind);
  }
  function readyForHandoff(state) {
    return state.cards.some((c) => c.state === "landed") && !state.cards.some((c) => ON_ITS_WAY.has(c.state));
  }
  var ON_ITS_WAY = /* @__PURE__ */ new Set(["draft", "queued", "running", "checkpoint"]);
  function handoffTasks(sections) {
    return sections.filter((t) => typeof t.id === "number").map((t) => ({ id: t.id, title: typeof t.title === "string" ? t.title : "" }));
  }
  function planKey(key, ctrl) {
    if (ctrl) return key === "e" ? { kind: "field", field: "effort" } : null;
    switch (key) {
      case "j":
      case "ArrowDown":
        return { kind: "move", delta: 1 };
      case "k":
      case "ArrowUp":
        return { kind: "move", delta: -1 };
      case "PageDown":
        return { kind: "move", delta: 10 };
      case "PageUp":
        return { kind: "move", delta: -10 };
      case "Home":
        return { kind: "first" };
      case "End":
        return { kind: "last" };
      case "t":
        return { kind: "field", field: "title" };
      case "e":
        return { kind: "field", field: "prompt" };
      case "R":
        return { kind: "field", field: "player" };
      case "o":
        return { kind: "field", field: "model" };
      case "M":
        return { kind: "field", field: "mode" };
      case "d":
        return { kind: "field", field: "depends_on" };
      case "s":
        return { kind: "field", field: "skills" };
      case "S":
        return { kind: "field", field: "scope" };
      case "c":
        return { kind: "field", field: "check" };
      case "w":
        return { kind: "field", field: "runner" };
      case "C":
        return { kind: "toggleCheckpoint" };
      case "n":
        return { kind: "add" };
      case "D":
        return { kind: "remove" };
      case "a":
        return { kind: "approve" };
      case "E":
        return { kind: "run" };
      case "x":
        return { kind: "stop" };
      case "r":
        return { kind: "retry" };
      case "T":
        return { kind: "take" };
      case "H":
        return { kind: "handoff" };
      default:
        return null;
    }
  }
  function fieldText(task, field) {
    switch (field) {
      case "depends_on":
        return (task.depends_on ?? []).join(", ");
      case "skills":
        return (task.skills ?? []).join(", ");
      case "scope":
        return (task.scope ?? []).join(", ");
      case "mode":
        return task.mode ?? "build";
      case "title":
        return task.title;
      case "prompt":
        return task.prompt ?? "";
      case "player":
        return task.player;
      case "model":
        return task.model ?? "";
      case "effort":
        return task.effort ?? "";
      case "check":
        return task.check ?? "";
      case "runner":
        return task.runner ?? "";
    }
  }
  function fieldValue(field, text) {
    const items = text.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
    switch (field) {
      case "depends_on":
        return items.map((s) => Number(s));
      case "skills":
      case "scope":
        return items;
      case "model":
      case "effort":
      case "check":
      case "runner":
        return text.trim() === "" ? null : text.trim();
      default:
        return text;
    }
  }

  // web/app.ts
  function upToWords(state, task) {
    const order = state.handoff ? state.handoff.tasks.map((t) => t.id) : [];
    const at = task === null ? -1 : order.indexOf(task);
    const merged = new Set(state.cards.filter((c) => c.state === "merged").map((c) => c.id));
    const ids = at < 0 ? [] : order.slice(0, at + 1).filter((id) => !merged.has(id));
    if (ids.length <= 1) return `task ${task}`;
    return `tasks ${ids.join(", ")} (up to task ${task})`;
  }
  var STATUS_EVERY_MS = 150;
  var App = class {
    constructor(conn, render) {
      this.conn = conn;
      this.render = render;
      conn.onNotification((n) => this.notified(n));
      conn.onClose((reason) => this.dispatch({ type: "disconnected", reason }));
    }
    state = initialState();
    statusInFlight = false;
    statusAgain = false;
    landedSeen = -1;
    editsInFlight = 0;
    statusTimer = null;
    editRefused = false;
    /** How many times every edit in flight has been answered (the benchmark's and tests' hook). */
    editsSettled = 0;
    get editing() {
      return this.editsInFlight > 0;
    }
    dispatch(action) {
      this.state = reduce(this.state, action);
      this.render(this.state);
    }
    async start() {
      await this.guard("connecting", async () => {
        this.dispatch({ type: "connected" });
        const [players, plan] = await Promise.all([
          this.conn.request("players/list", {}),
          this.conn.request("plan/get", {})
        ]);
        this.dispatch({ type: "players", players: players.players });
        this.dispatch({ type: "plan", plan: plan.plan });
        await this.conn.request("events/subscribe", {
          cursor: (await this.conn.request("status/get", {})).cursor ?? 0,
          output: true
        });
        await this.refreshStatus();
      });
    }
    /** The composer's text: a goal when there is no pending question, else the answer. */
    async send(text) {
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
    async answer(text, recommended = false) {
      const words = text.trim();
      if (!words && !recommended) return;
      await this.guard("planning", async () => {
        this.dispatch({
          type: "plannerStarted",
          goal: null,
          answer: recommended ? "(the recommendations)" : words
        });
        this.drafted(await this.conn.request(
          "plan/answer",
          recommended ? { recommended: true } : { answer: words }
        ));
        await this.refreshStatus();
      }, () => this.dispatch({ type: "drafted", questions: null, plan: this.state.plan }));
    }
    drafted(answer) {
      const questions = answer.status === "questions" && answer.questions?.length ? answer.questions : null;
      this.dispatch({
        type: "drafted",
        questions,
        plan: answer.plan ?? this.state.plan,
        failed: answer.status === "failed" ? answer.message ?? "the planner failed" : void 0
      });
    }
    /** An edit is painted at once (the person sees their key press land); the server's plan
     * then replaces it — only the answer to the newest edit in flight, since an older one would
     * paint a value the person has already changed. A refused edit shows the plan as it stands. */
    async edit(id, field, raw) {
      const value = typeof raw === "boolean" ? raw : fieldValue(field, raw);
      this.dispatch({ type: "edited", id, field, value });
      this.editsInFlight++;
      this.dispatch({ type: "saving", on: true });
      let failed = false;
      await this.guard(null, async () => {
        const answer = await this.conn.request("task/edit", { id, field, value });
        if (this.editsInFlight === 1 && !this.editRefused) this.dispatch({ type: "plan", plan: answer.plan });
      }, () => {
        failed = true;
      });
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
    async addTask(title) {
      const player = this.state.players.find((p) => p.ready)?.name ?? this.state.plan?.tasks[0]?.player ?? "claude-code";
      await this.guard(null, async () => {
        const added = await this.conn.request("task/add", { title, player });
        this.dispatch({ type: "plan", plan: added.plan });
        this.dispatch({ type: "select", id: added.id });
      });
    }
    async removeTask(id) {
      await this.guard(null, async () => {
        const answer = await this.conn.request("task/remove", { id });
        this.dispatch({ type: "plan", plan: answer.plan });
      });
    }
    /** Ask before an action that cannot be taken back; `confirmed` then does it. */
    ask(action, task = null) {
      const words = {
        approve: ["Approve the whole plan? Build tasks start only when you run it.", "Approve"],
        run: ["Run the approved plan now? Each task works in its own worktree.", "Yes, run"],
        merge: ["Merge every landed task onto your branch, in plan order?", "Merge"],
        mergeUpTo: [`Merge ${upToWords(this.state, task)} onto your branch, in merge order?`, "Merge"],
        discard: [`Discard task ${task} and its branch? Its work is thrown away.`, "Yes, discard"],
        stop: ["Pause the run? Running tasks stop where they are; Run… continues it.", "Yes, pause"],
        stopTask: [`Stop task ${task}? Its branch is kept; Retry starts it again.`, "Yes, stop"],
        newPlan: ["Archive this plan and start a new one?", "Yes, start over"]
      };
      const [question, yes] = words[action];
      const confirm = { action, task, question, yes };
      this.dispatch({ type: "ask", confirm });
    }
    async confirmed() {
      const confirm = this.state.confirm;
      this.dispatch({ type: "settle" });
      if (!confirm) return;
      const id = confirm.task ?? 0;
      switch (confirm.action) {
        case "approve":
          return this.approve();
        case "run":
          return this.run();
        case "merge":
          return this.merge();
        case "mergeUpTo":
          return this.merge(id);
        case "discard":
          return this.simple(() => this.conn.request("task/discard", { id }));
        case "stop":
          return this.simple(() => this.conn.request("run/stop", {}));
        case "stopTask":
          return this.simple(() => this.conn.request("task/stop", { id }));
        case "newPlan":
          return this.simple(async () => {
            await this.conn.request("plan/new", {});
            this.dispatch({ type: "plan", plan: null });
          });
      }
    }
    cancel() {
      this.dispatch({ type: "settle" });
    }
    async approve() {
      await this.guard("approving", async () => {
        const answer = await this.conn.request("plan/approve", {});
        this.dispatch({
          type: "say",
          role: "baton",
          text: ["plan approved", ...answer.warnings ?? []].join("\n")
        });
        await this.refreshStatus();
      });
    }
    async run() {
      await this.guard("starting the run", async () => {
        const answer = await this.conn.request("run/start", {});
        this.dispatch({
          type: "say",
          role: "baton",
          text: answer.started ? "the run started" : "the run is already going"
        });
        await this.refreshStatus();
      });
    }
    async merge(upTo) {
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
    async retry(id, feedback) {
      await this.simple(() => this.conn.request("task/retry", feedback ? { id, feedback } : { id }));
    }
    async done(id) {
      await this.simple(() => this.conn.request("task/done", { id }));
    }
    async checkpoint(id, answer) {
      await this.simple(() => this.conn.request("checkpoint/answer", { id, answer }));
    }
    async take(id) {
      await this.guard(null, () => this.conn.take(id));
    }
    async openDiff(path) {
      await this.guard(null, () => this.conn.openDiff(path));
    }
    async refreshPlayers() {
      await this.guard("detecting players", async () => {
        const answer = await this.conn.request("players/list", { refresh: true });
        this.dispatch({ type: "players", players: answer.players });
        const ready = answer.players.filter((p) => p.ready).map((p) => p.name);
        this.dispatch({
          type: "say",
          role: "baton",
          text: `players ready: ${ready.length ? ready.join(", ") : "none"}`
        });
      });
    }
    async review() {
      await this.guard(null, async () => {
        const answer = await this.conn.request("handoff/review", {});
        this.dispatch({
          type: "handoff",
          files: answer.files,
          tasks: handoffTasks(answer.tasks),
          base: answer.base,
          head: answer.head
        });
      });
    }
    /** A `status/get` within STATUS_EVERY_MS, however many events ask for one meanwhile: with
     * agents streaming, events come many times a second, and each status of a large plan is
     * work for the server and the page that a key press would wait behind. */
    statusSoon() {
      if (this.statusTimer !== null) return;
      this.statusTimer = setTimeout(() => {
        this.statusTimer = null;
        void this.refreshStatus().catch(() => void 0);
      }, STATUS_EVERY_MS);
    }
    /** `status/get`, at most one in flight: notifications that arrive meanwhile ask for one more. */
    async refreshStatus() {
      if (this.statusInFlight) {
        this.statusAgain = true;
        return;
      }
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
    notified(n) {
      switch (n.method) {
        case "planner/step":
          this.dispatch({ type: "plannerStep", step: {
            kind: n.params.tool ?? n.params.kind,
            text: n.params.text
          } });
          break;
        case "planner/text":
          this.dispatch({ type: "plannerText", delta: n.params.delta });
          break;
        case "planner/thinking":
          this.dispatch({ type: "plannerThinking", delta: n.params.delta });
          break;
        case "question":
          this.dispatch({ type: "questions", questions: n.params.questions });
          break;
        case "checkpoint":
          this.dispatch({
            type: "checkpoint",
            task: n.params.task,
            what: n.params.what,
            evidence: n.params.evidence ?? null
          });
          break;
        case "task/output":
          this.dispatch({ type: "output", task: n.params.task, lines: n.params.lines });
          break;
        case "event":
          if (changesStatus(n.params.kind)) this.statusSoon();
          break;
        case "lagged":
          void this.conn.request("events/subscribe", { cursor: n.params.cursor }).then(() => this.refreshStatus()).catch(() => void 0);
          break;
      }
    }
    async simple(act) {
      await this.guard(null, async () => {
        await act();
        await this.refreshStatus();
      });
    }
    /** Runs one action; a refusal becomes one line in the conversation, and `after` restores
     * what the action had begun to show. */
    async guard(busy, act, after) {
      if (busy) this.dispatch({ type: "busy", what: busy });
      try {
        await act();
      } catch (err) {
        const text = err instanceof RpcFailure || err instanceof Error ? err.message : String(err);
        this.dispatch({ type: "say", role: "error", text });
        if (after) {
          try {
            await after();
          } catch {
          }
        }
      } finally {
        if (busy) this.dispatch({ type: "busy", what: null });
      }
    }
  };

  // web/view.ts
  function h(tag, attrs = {}, ...children) {
    const el = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === null || value === void 0 || value === false) continue;
      if (name === "className") el.className = String(value);
      else el.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children) {
      if (child === null || child === void 0 || child === false) continue;
      el.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return el;
  }
  function button(label, onClick, attrs = {}) {
    const b = h("button", { type: "button", ...attrs }, label);
    b.addEventListener("click", onClick);
    return b;
  }
  var TEXT_FIELDS = [
    ["title", "Title"],
    ["depends_on", "Depends on"],
    ["skills", "Skills"],
    ["scope", "Scope"],
    ["check", "Check"],
    ["runner", "Runner"]
  ];
  var MODES = ["build", "research", "manual"];
  function onlyOutputChanged(a, b) {
    return a.output !== b.output && Object.keys(b).every((key) => key === "output" || a[key] === b[key]);
  }
  var STARTED = /* @__PURE__ */ new Set([
    "running",
    "done",
    "landed",
    "merged",
    "failed",
    "paused",
    "checkpoint",
    "parked",
    "discarded"
  ]);
  var View = class {
    constructor(root) {
      this.root = root;
    }
    app;
    last = null;
    planHeadKey = "";
    pending = null;
    rows = /* @__PURE__ */ new Map();
    cardEls = /* @__PURE__ */ new Map();
    editorFor = null;
    editorPlayers = null;
    /** Called after each paint (the benchmark's and tests' hook). */
    painted = null;
    status = h("span", { id: "status", role: "status" });
    conversation = h("div", {
      id: "conversation",
      role: "log",
      "aria-live": "polite",
      "aria-label": "Conversation"
    });
    messages = h("div", { id: "messages" });
    planner = h("section", { id: "planner", "aria-label": "Planner at work", hidden: true });
    questions = h("section", { id: "questions", "aria-label": "Planner's questions", hidden: true });
    cards = h("section", { id: "cards", "aria-label": "Run", hidden: true });
    handoff = h("section", { id: "handoff", "aria-label": "Handoff", hidden: true });
    plan = h("section", { id: "plan", "aria-label": "Plan", hidden: true });
    planHead = h("div", { className: "plan-head" });
    planList = h("div", {
      id: "plan-list",
      role: "listbox",
      tabindex: 0,
      "aria-label": "Plan tasks (j/k to move, single keys to edit)"
    });
    editor = h("form", { id: "task-editor", "aria-label": "Selected task" });
    confirm = h("div", {
      id: "confirm",
      role: "alertdialog",
      "aria-modal": "false",
      hidden: true
    });
    goal = h("textarea", {
      id: "composer-input",
      rows: 2,
      placeholder: "Type a goal for Baton to plan… (Enter sends)",
      "aria-label": "Goal or answer"
    });
    bind(app) {
      this.app = app;
      const refresh = button(
        "Refresh players",
        () => void app.refreshPlayers(),
        { id: "refresh-players", "aria-label": "Refresh players (detect agents again)" }
      );
      const header = h("header", {}, h("strong", {}, "Baton"), this.status, refresh);
      this.conversation.append(this.messages, this.planner, this.questions);
      const scroll = h("div", { id: "scroll" }, this.conversation, this.cards, this.handoff);
      const send = button("Send", () => this.sendComposer(), { "aria-label": "Send" });
      const composer = h("div", { id: "composer" }, this.goal, send);
      this.goal.addEventListener("keydown", (e) => {
        if (e.key === "Enter" && !e.shiftKey) {
          e.preventDefault();
          this.sendComposer();
        }
      });
      this.plan.append(this.planHead, this.planList, this.editor);
      this.planList.addEventListener("keydown", (e) => this.planKeys(e));
      this.planList.addEventListener("click", (e) => {
        const row = e.target.closest("[data-task]");
        if (row) app.dispatch({ type: "select", id: Number(row.dataset.task) });
      });
      this.editor.addEventListener("submit", (e) => e.preventDefault());
      this.root.replaceChildren(header, scroll, this.plan, this.confirm, composer);
      document.addEventListener("keydown", (e) => {
        if (e.key === "Escape" && this.last?.confirm) {
          e.preventDefault();
          app.cancel();
        }
      });
    }
    focusComposer() {
      this.goal.focus();
    }
    /** Paint on the next frame, once however many changes came in. */
    schedule(state) {
      const first = this.pending === null;
      this.pending = state;
      if (first) requestAnimationFrame(() => this.flush());
    }
    flush() {
      const state = this.pending;
      this.pending = null;
      if (state) this.paint(state);
    }
    paint(s) {
      const p = this.last;
      if (!p || p.connected !== s.connected || p.busy !== s.busy || p.plan !== s.plan || p.approved !== s.approved || p.running !== s.running) this.paintStatus(s);
      if (!p || p.messages !== s.messages) this.paintMessages(s);
      if (!p || p.planner !== s.planner) this.paintPlanner(s);
      if (!p || p.questions !== s.questions || p.busy !== s.busy) this.paintQuestions(s);
      if (!p || p.plan !== s.plan || p.approved !== s.approved || p.running !== s.running || p.cards !== s.cards || p.busy !== s.busy) this.paintPlanHead(s);
      if (!p || p.plan !== s.plan || p.selected !== s.selected) this.paintRows(s, !p || p.selected !== s.selected);
      if (!p || p.saving !== s.saving) this.plan.setAttribute("aria-busy", s.saving ? "true" : "false");
      if (!p || p.plan !== s.plan || p.selected !== s.selected || p.players !== s.players || p.cards !== s.cards) this.paintEditor(s);
      if (!p || p.cards !== s.cards || p.summary !== s.summary) this.paintCards(s);
      if (!p || p.handoff !== s.handoff || p.busy !== s.busy || p.cards !== s.cards) this.paintHandoff(s);
      if (!p || p.confirm !== s.confirm) this.paintConfirm(s);
      this.last = s;
      if (this.painted) this.painted();
    }
    paintStatus(s) {
      const bits = [s.connected ? "" : "not connected"];
      if (s.busy) bits.push(`${s.busy}…`);
      else if (s.running) bits.push("running");
      else if (s.plan) bits.push(s.approved ? "approved" : "draft — approve to build");
      this.status.textContent = bits.filter(Boolean).join(" · ");
    }
    paintMessages(s) {
      const have = this.messages.children.length;
      if (have > s.messages.length) this.messages.replaceChildren();
      for (const m of s.messages.slice(this.messages.children.length)) {
        this.messages.append(h(
          "div",
          { className: `msg ${m.role}` },
          h("span", { className: "who" }, m.role === "you" ? "You" : m.role === "planner" ? "Planner" : m.role === "error" ? "Refused" : "Baton"),
          h("p", {}, m.text)
        ));
      }
      this.conversation.scrollTop = this.conversation.scrollHeight;
    }
    paintPlanner(s) {
      const pl = s.planner;
      this.planner.hidden = !pl.working;
      if (!pl.working) {
        this.planner.replaceChildren();
        return;
      }
      const steps = h(
        "ol",
        { className: "steps", "aria-label": "Planner steps" },
        ...pl.steps.map((st) => h("li", {}, h("code", {}, st.kind), " ", st.text))
      );
      const thinking = pl.thinking ? h("details", { className: "thinking" }, h("summary", {}, "Thinking"), h("pre", {}, pl.thinking)) : null;
      this.planner.replaceChildren(h("div", { className: "live" }, "Planner working…"), steps);
      if (thinking) this.planner.append(thinking);
      if (pl.text) this.planner.append(h("p", { className: "planner-text" }, pl.text));
    }
    paintQuestions(s) {
      const qs = s.questions;
      this.questions.hidden = !qs;
      if (!qs) {
        this.questions.replaceChildren();
        return;
      }
      const box = h("textarea", {
        id: "answer",
        rows: 2,
        "aria-label": "Your answer",
        placeholder: qs[0]?.recommendation ?? ""
      });
      const items = qs.map((q) => h(
        "li",
        {},
        h("p", { className: "q" }, q.question),
        h("p", { className: "rec" }, "Recommended: ", h("em", {}, q.recommendation))
      ));
      const answer = button(
        "Answer",
        () => box.value.trim() ? void this.app.answer(box.value) : void this.app.answer("", true),
        { "aria-label": "Send the answer" }
      );
      const take = button(
        "Take the recommendation",
        () => void this.app.answer("", true),
        { "aria-label": "Take the recommendation for every open question" }
      );
      box.addEventListener("keydown", (e) => {
        if (e.key === "Enter" && !e.shiftKey) {
          e.preventDefault();
          answer.click();
        }
      });
      if (s.busy) {
        answer.disabled = true;
        take.disabled = true;
      }
      this.questions.replaceChildren(
        h("h3", {}, "The planner asks"),
        h("ol", {}, ...items),
        box,
        h("div", { className: "row" }, answer, take)
      );
    }
    paintPlanHead(s) {
      this.plan.hidden = !s.plan;
      if (!s.plan) {
        this.planHead.replaceChildren();
        this.planHeadKey = "";
        return;
      }
      const started = s.cards.some((c) => STARTED.has(c.state));
      const finished = s.cards.length > 0 && s.cards.every((c) => ["done", "landed", "merged", "discarded"].includes(c.state));
      const key = JSON.stringify([s.plan.goal, s.approved, s.running, s.busy, started, finished]);
      if (key === this.planHeadKey) return;
      this.planHeadKey = key;
      const approve = button(
        "Approve…",
        () => this.app.ask("approve"),
        { id: "approve", "aria-label": "Approve… the whole plan" }
      );
      approve.disabled = s.approved || started || Boolean(s.busy);
      const run = button("Run…", () => this.app.ask("run"), { id: "run", "aria-label": "Run… the approved plan" });
      run.disabled = !s.approved || s.running || finished || Boolean(s.busy);
      const stop = button("Pause", () => this.app.ask("stop"), { "aria-label": "Pause the run" });
      stop.disabled = !s.running;
      this.planHead.replaceChildren(
        h("h2", {}, "Plan: ", s.plan.goal || "(no goal)"),
        h("div", { className: "row" }, approve, run, stop)
      );
    }
    /** The plan's rows, keyed by task; `reveal`: the selection moved, so it is scrolled to
     * (only then: scrolling lays the whole list out, which an edit need not wait for). */
    paintRows(s, reveal) {
      const tasks = s.plan ? s.plan.tasks : [];
      const keep = new Set(tasks.map((t) => t.id));
      for (const [id, row] of this.rows) if (!keep.has(id)) {
        row.el.remove();
        this.rows.delete(id);
      }
      let before = this.planList.firstElementChild;
      for (const task of tasks) {
        const selected = task.id === s.selected;
        let row = this.rows.get(task.id);
        if (!row || row.task !== task || row.selected !== selected) {
          const el = this.row(task, selected);
          if (row) {
            if (before === row.el) before = el;
            row.el.replaceWith(el);
          }
          row = { task, selected, el };
          this.rows.set(task.id, row);
        }
        if (row.el !== before) this.planList.insertBefore(row.el, before);
        before = row.el.nextElementSibling;
      }
      if (s.selected !== null) this.planList.setAttribute("aria-activedescendant", `task-${s.selected}`);
      if (reveal) this.rows.get(s.selected ?? -1)?.el.scrollIntoView?.({ block: "nearest" });
    }
    row(t, selected) {
      const bits = [
        t.player,
        t.model,
        t.effort,
        t.mode !== "build" ? t.mode : null,
        t.depends_on && t.depends_on.length ? `after ${t.depends_on.join(",")}` : null,
        t.checkpoint ? "checkpoint" : null,
        t.check ? "check" : null
      ].filter(Boolean).join(" · ");
      return h(
        "div",
        {
          className: selected ? "task selected" : "task",
          role: "option",
          id: `task-${t.id}`,
          "aria-selected": selected ? "true" : "false",
          "data-task": t.id
        },
        h("span", { className: "id" }, `${t.id}`),
        h("span", { className: "title" }, t.title),
        h("span", { className: "meta" }, bits)
      );
    }
    paintEditor(s) {
      const task = selectedTask(s);
      if (task === this.editorFor && s.players === this.editorPlayers) return;
      this.editorFor = task;
      this.editorPlayers = s.players;
      if (!task) {
        this.editor.replaceChildren();
        return;
      }
      const card = s.cards.find((c) => c.id === task.id);
      const frozen = Boolean(card && STARTED.has(card.state) && !["paused", "failed"].includes(card.state));
      const offer = choices(s, task);
      const edit = (field, value) => void this.app.edit(task.id, field, value);
      const fields = [];
      const labelled = (field, text, control) => {
        control.id = `field-${field}`;
        control.dataset.field = field;
        control.addEventListener("keydown", (e) => {
          if (e.key === "Escape") {
            e.preventDefault();
            this.planList.focus();
          }
        });
        fields.push(h("label", { for: control.id }, text), control);
      };
      const select = (field, text, options, current, empty, why = () => null) => {
        const el = h(
          "select",
          { "aria-label": `${text} of task ${task.id}` },
          ...empty !== null ? [h("option", { value: "" }, empty)] : [],
          ...options.map((o) => {
            const reason = o === current ? null : why(o);
            return h(
              "option",
              { value: o, disabled: reason !== null },
              reason === null ? o : `${o} — ${reason}`
            );
          })
        );
        if (current && !options.includes(current)) el.append(h("option", { value: current }, current));
        el.value = current;
        el.disabled = frozen && !["player", "model", "effort"].includes(field);
        el.addEventListener("change", () => edit(field, el.value));
        labelled(field, text, el);
      };
      const title = h("input", { type: "text", "aria-label": `Title of task ${task.id}` });
      title.value = task.title;
      title.disabled = frozen;
      title.addEventListener("change", () => edit("title", title.value));
      labelled("title", "Title", title);
      const prompt = h("textarea", { rows: 4, "aria-label": `Prompt of task ${task.id}` });
      prompt.value = task.prompt ?? "";
      prompt.disabled = frozen;
      prompt.addEventListener("change", () => edit("prompt", prompt.value));
      labelled("prompt", "Prompt", prompt);
      select("player", "Player", offer.players, task.player, null, (name) => {
        const p = s.players.find((x) => x.name === name);
        return p && !p.ready ? `not ready: ${p.reason ?? "not installed"}` : null;
      });
      if (offer.anyModel) {
        const model = h("input", {
          type: "text",
          placeholder: "(player's default)",
          "aria-label": `Model of task ${task.id}`
        });
        model.value = task.model ?? "";
        model.addEventListener("change", () => edit("model", model.value));
        labelled("model", "Model", model);
      } else {
        select("model", "Model", offer.models, task.model ?? "", "(player's default)");
      }
      select("effort", "Effort", offer.efforts, task.effort ?? "", "(player's default)");
      select("mode", "Mode", MODES, task.mode ?? "build", null);
      for (const [field, text] of TEXT_FIELDS.slice(1)) {
        const el = h("input", { type: "text", "aria-label": `${text} of task ${task.id}` });
        el.value = fieldText(task, field);
        el.disabled = frozen;
        el.addEventListener("change", () => edit(field, el.value));
        labelled(field, text, el);
      }
      const cp = h("input", { type: "checkbox", "aria-label": `Checkpoint for task ${task.id}` });
      cp.checked = Boolean(task.checkpoint);
      cp.disabled = frozen;
      cp.addEventListener("change", () => edit("checkpoint", cp.checked));
      labelled("checkpoint", "Checkpoint", cp);
      const remove = button(
        "Remove task",
        () => void this.app.removeTask(task.id),
        { "aria-label": `Remove task ${task.id}` }
      );
      remove.disabled = frozen;
      this.editor.replaceChildren(
        h("h3", {}, `Task ${task.id}`),
        h("div", { className: "grid" }, ...fields),
        h("div", { className: "row" }, remove)
      );
    }
    paintCards(s) {
      const shown = s.cards.some((c) => STARTED.has(c.state));
      this.cards.hidden = !shown;
      if (!shown) {
        this.cards.replaceChildren();
        this.cardEls.clear();
        return;
      }
      if (!this.cards.firstElementChild) this.cards.append(h("h2", {}, "Run"));
      const keep = new Set(s.cards.map((c) => c.id));
      for (const [id, c] of this.cardEls) if (!keep.has(id)) {
        c.el.remove();
        this.cardEls.delete(id);
      }
      for (const card of s.cards) {
        const had = this.cardEls.get(card.id);
        if (had && had.card === card) continue;
        if (had && onlyOutputChanged(had.card, card) && this.paintOutput(had.el, card)) {
          had.card = card;
          continue;
        }
        const el = this.card(card);
        if (had) had.el.replaceWith(el);
        else this.cards.append(el);
        this.cardEls.set(card.id, { card, el });
      }
      let summary = this.cards.querySelector(".summary");
      if (s.summary) {
        if (!summary) {
          summary = h("p", { className: "summary" });
          this.cards.append(summary);
        }
        summary.textContent = s.summary;
      } else summary?.remove();
    }
    /** A card's output lines written into its `<pre>` in place; false when it has none yet
     * (the card is drawn whole). */
    paintOutput(el, c) {
      const pre = el.querySelector("pre.output");
      if (!pre || !c.output.length) return false;
      pre.textContent = c.output.join("\n");
      return true;
    }
    card(c) {
      const actions = [];
      if (["failed", "paused", "parked"].includes(c.state)) {
        actions.push(button("Retry", () => void this.app.retry(c.id), { "aria-label": `Retry task ${c.id}` }));
      }
      if (c.state === "running") {
        actions.push(button("Stop…", () => this.app.ask("stopTask", c.id), { "aria-label": `Stop task ${c.id}` }));
      }
      if (c.mode === "build" && !["merged", "discarded", "draft", "queued"].includes(c.state)) {
        actions.push(button(
          "Take",
          () => void this.app.take(c.id),
          { "aria-label": `Take task ${c.id} over in a terminal` }
        ));
      }
      if (!["merged", "discarded", "running"].includes(c.state)) {
        actions.push(button("Discard…", () => this.app.ask("discard", c.id), { "aria-label": `Discard task ${c.id}` }));
      }
      const cp = c.checkpoint && c.state === "checkpoint" ? h(
        "div",
        { className: "checkpoint", role: "group", "aria-label": `Checkpoint of task ${c.id}` },
        h("p", {}, "Checkpoint: ", c.checkpoint.what),
        c.checkpoint.evidence ? h("pre", {}, c.checkpoint.evidence) : null,
        button("Yes, go on", () => void this.app.checkpoint(c.id, "yes"), { "aria-label": `Yes: task ${c.id} may go on` }),
        button("No", () => void this.app.checkpoint(c.id, "no"), { "aria-label": `No: task ${c.id} stops` })
      ) : null;
      return h(
        "article",
        {
          className: `card state-${c.state}`,
          "data-card": c.id,
          "data-state": c.state,
          "data-mode": c.mode,
          "aria-label": `Task ${c.id}: ${c.title}, ${c.state}`
        },
        h(
          "div",
          { className: "card-head" },
          h("span", { className: "id" }, `${c.id}`),
          h("span", { className: "title" }, c.title),
          h("span", { className: "badge" }, c.state)
        ),
        h("div", { className: "meta" }, `${c.player} · ${c.mode}`),
        c.flags.length ? h("ul", { className: "flags" }, ...c.flags.map((f) => h("li", {}, `${f.kind}: ${f.detail}`))) : null,
        cp,
        c.lastReport ? h("p", { className: "report" }, c.lastReport) : null,
        c.output.length ? h("pre", { className: "output" }, c.output.join("\n")) : null,
        actions.length ? h("div", { className: "row" }, ...actions) : null
      );
    }
    paintHandoff(s) {
      const hd = s.handoff;
      this.handoff.hidden = !hd;
      if (!hd) {
        this.handoff.replaceChildren();
        return;
      }
      const files = hd.files.map((f) => h(
        "li",
        {},
        button(
          f.path,
          () => void this.app.openDiff(f.path),
          { className: "file", "aria-label": `Open the diff of ${f.path}` }
        ),
        h("span", { className: "stat" }, ` +${f.added} −${f.deleted}`),
        h("span", { className: "meta" }, ` tasks ${f.tasks.join(", ")}`)
      ));
      const merge = button(
        "Merge all…",
        () => this.app.ask("merge"),
        { id: "merge-all", "aria-label": "Merge all… landed tasks onto your branch" }
      );
      merge.disabled = Boolean(s.busy) || hd.files.length === 0;
      const state = new Map(s.cards.map((c) => [c.id, c.state]));
      const tasks = hd.tasks.map((t) => {
        const merged = state.get(t.id) === "merged";
        const upTo = button(
          "Merge up to here…",
          () => this.app.ask("mergeUpTo", t.id),
          { className: "merge-up-to", "aria-label": `Merge up to task ${t.id}… (the landed tasks before it too)` }
        );
        upTo.disabled = merged || Boolean(s.busy);
        return h(
          "li",
          { "data-handoff-task": t.id },
          h("span", { className: "id" }, `${t.id}`),
          " ",
          h("span", { className: "title" }, t.title),
          " ",
          h("span", { className: "badge" }, merged ? "merged" : "landed"),
          " ",
          merged ? null : upTo
        );
      });
      this.handoff.replaceChildren(
        h("h2", {}, "Handoff"),
        h("p", { className: "meta" }, `${hd.files.length} files changed`),
        h("ul", { className: "files", "aria-label": "Changed files" }, ...files),
        h("h3", {}, "Landed tasks, in merge order"),
        h("ol", { className: "handoff-tasks", "aria-label": "Landed tasks, in merge order" }, ...tasks),
        h("div", { className: "row" }, merge)
      );
    }
    paintConfirm(s) {
      const c = s.confirm;
      this.confirm.hidden = !c;
      if (!c) {
        this.confirm.replaceChildren();
        return;
      }
      const yes = button(c.yes, () => void this.app.confirmed(), { className: "primary" });
      const no = button("Cancel", () => this.app.cancel());
      this.confirm.setAttribute("aria-label", c.question);
      this.confirm.replaceChildren(h("p", {}, c.question), h("div", { className: "row" }, yes, no));
      yes.focus();
    }
    sendComposer() {
      const text = this.goal.value;
      if (!text.trim()) return;
      this.goal.value = "";
      void this.app.send(text);
    }
    planKeys(e) {
      const key = planKey(e.key, e.ctrlKey || e.metaKey);
      if (!key) return;
      e.preventDefault();
      const s = this.app.state;
      const task = selectedTask(s);
      switch (key.kind) {
        case "move":
          this.app.dispatch({ type: "move", delta: key.delta });
          break;
        case "first":
          this.app.dispatch({ type: "move", delta: -1e9 });
          break;
        case "last":
          this.app.dispatch({ type: "move", delta: 1e9 });
          break;
        case "field":
          this.flush();
          this.editor.querySelector(`[data-field="${key.field}"]`)?.focus();
          break;
        case "toggleCheckpoint":
          if (task) void this.app.edit(task.id, "checkpoint", !task.checkpoint);
          break;
        case "add":
          void this.app.addTask("New task");
          break;
        case "remove":
          if (task) void this.app.removeTask(task.id);
          break;
        case "approve":
          this.app.ask("approve");
          break;
        case "run":
          this.app.ask("run");
          break;
        case "stop":
          this.app.ask("stop");
          break;
        case "retry":
          if (task) void this.app.retry(task.id);
          break;
        case "take":
          if (task) void this.app.take(task.id);
          break;
        case "handoff":
          void this.app.review();
          break;
      }
      this.flush();
    }
  };

  // web/diff.ts
  function lineDiff(left, right) {
    const a = left === "" ? [] : left.replace(/\n$/, "").split("\n");
    const b = right === "" ? [] : right.replace(/\n$/, "").split("\n");
    if (a.length * b.length > 4e6) {
      return [...a.map((text) => ({ kind: "del", text })), ...b.map((text) => ({ kind: "add", text }))];
    }
    const n = a.length, m = b.length;
    const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i2 = n - 1; i2 >= 0; i2--) {
      for (let j2 = m - 1; j2 >= 0; j2--) {
        lcs[i2][j2] = a[i2] === b[j2] ? lcs[i2 + 1][j2 + 1] + 1 : Math.max(lcs[i2 + 1][j2], lcs[i2][j2 + 1]);
      }
    }
    const out = [];
    let i = 0, j = 0;
    while (i < n && j < m) {
      if (a[i] === b[j]) {
        out.push({ kind: "same", text: a[i] });
        i++;
        j++;
      } else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push({ kind: "del", text: a[i++] });
      else out.push({ kind: "add", text: b[j++] });
    }
    while (i < n) out.push({ kind: "del", text: a[i++] });
    while (j < m) out.push({ kind: "add", text: b[j++] });
    return out;
  }

  // web/browser-main.ts
  var SocketConnection = class _SocketConnection {
    rpc;
    closes = [];
    show = () => void 0;
    constructor(socket) {
      this.rpc = new RpcClient((line) => socket.send(line));
      socket.addEventListener("message", (e) => this.rpc.receive(String(e.data)));
      socket.addEventListener("close", () => {
        this.rpc.close("the connection to baton closed");
        for (const c of this.closes) c("the connection to baton closed: reload the page when `baton web` runs again");
      });
    }
    static open(url) {
      return new Promise((resolve, reject) => {
        const socket = new WebSocket(url);
        socket.addEventListener("open", () => resolve(new _SocketConnection(socket)), { once: true });
        socket.addEventListener("error", () => reject(new Error(`cannot reach ${url.split("?")[0]}`)), { once: true });
      });
    }
    request(method, params) {
      return this.rpc.request(method, params);
    }
    onNotification(listener) {
      this.rpc.onNotification(listener);
    }
    onClose(listener) {
      this.closes.push(listener);
    }
    async openDiff(path) {
      const file = await this.rpc.request("handoff/file", { path });
      const lines = lineDiff(file.left ?? "", file.right ?? "");
      const pre = h(
        "pre",
        { className: "diff", "aria-label": `Diff of ${path}`, tabindex: 0 },
        ...lines.map((l) => h("span", { className: l.kind }, `${l.kind === "add" ? "+" : l.kind === "del" ? "-" : " "} ${l.text}
`))
      );
      this.show(`${path}: your branch → landed`, pre);
    }
    async take(id) {
      const cmd = await this.rpc.request("task/take", { id });
      const words = cmd.argv.map((a) => /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`).join(" ");
      this.show(`Take task ${id} over: run this in a terminal`, h("pre", { tabindex: 0 }, `cd ${cmd.cwd}
${words}`));
    }
    async openFile(path) {
      this.show(`Open ${path} in your editor to resolve the conflict`, h("code", {}, path));
    }
  };
  async function main() {
    const params = new URLSearchParams(location.search);
    const token = params.get("token") ?? "";
    const theme = params.get("theme");
    document.body.classList.add("browser");
    if (theme === "light" || theme === "dark") document.body.classList.add(`theme-${theme}`);
    const root = document.getElementById("app");
    const view = new View(root);
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    let conn;
    try {
      conn = await SocketConnection.open(`${scheme}://${location.host}/rpc?token=${encodeURIComponent(token)}`);
    } catch (err) {
      root.textContent = String(err instanceof Error ? err.message : err);
      return;
    }
    const panel = h("section", { id: "viewer", "aria-label": "Viewer", hidden: true });
    conn.show = (title, body) => {
      const close = h("button", { type: "button" }, "Close");
      close.addEventListener("click", () => {
        panel.hidden = true;
        panel.replaceChildren();
      });
      panel.replaceChildren(h("h2", {}, title), body, close);
      panel.hidden = false;
      body.focus?.();
    };
    const app = new App(conn, (s) => view.schedule(s));
    view.bind(app);
    view.handoff.after(panel);
    await conn.rpc.request("initialize", {
      protocol: 1,
      client: { name: "baton-web", version: "0.1.0" },
      interactive: true
    });
    window.batonApp = app;
    window.batonView = view;
    await app.start();
  }
  void main();
})();
