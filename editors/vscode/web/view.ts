/**
 * The DOM view: draws a `State` and turns clicks and keys into the controller's methods.
 * Each part is repainted only when its slice of the state is a new object (the reducers keep
 * what did not change), and plan rows are keyed by task, so a 1,000-task plan paints once and
 * a key press repaints one row. Colours come from VS Code's theme variables (view.css).
 */
import type { App } from "./app";
import type { Task } from "./protocol";
import {
  type Card, type EditableField, type State, choices, fieldText, planKey, selectedTask,
} from "./state";

type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K, attrs: Record<string, string | boolean | number | null | undefined> = {},
  ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "className") el.className = String(value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return el;
}

function button(label: string, onClick: () => void, attrs: Record<string, string> = {}): HTMLButtonElement {
  const b = h("button", { type: "button", ...attrs }, label);
  b.addEventListener("click", onClick);
  return b;
}

const TEXT_FIELDS: [EditableField, string][] = [
  ["title", "Title"], ["depends_on", "Depends on"], ["skills", "Skills"], ["scope", "Scope"],
  ["check", "Check"], ["runner", "Runner"],
];
const MODES = ["build", "research", "manual"];
/** Whether `b` is `a` with new output lines only (what streaming agents change, many times a
 * second): every other field the same, whatever fields a card gains. */
function onlyOutputChanged(a: Card, b: Card): boolean {
  return a.output !== b.output
    && (Object.keys(b) as (keyof Card)[]).every((key) => key === "output" || a[key] === b[key]);
}

const STARTED = new Set(["running", "done", "landed", "merged", "failed", "paused", "checkpoint",
                         "parked", "discarded"]);

export class View {
  private app!: App;
  private last: State | null = null;
  private planHeadKey = "";
  private pending: State | null = null;
  private rows = new Map<number, { task: Task; selected: boolean; el: HTMLElement }>();
  private cardEls = new Map<number, { card: Card; el: HTMLElement }>();
  private editorFor: Task | null = null;
  private editorPlayers: unknown = null;
  /** Called after each paint (the benchmark's and tests' hook). */
  painted: (() => void) | null = null;

  readonly status = h("span", { id: "status", role: "status" });
  readonly conversation = h("div", { id: "conversation", role: "log", "aria-live": "polite",
                                     "aria-label": "Conversation" });
  readonly messages = h("div", { id: "messages" });
  readonly planner = h("section", { id: "planner", "aria-label": "Planner at work", hidden: true });
  readonly questions = h("section", { id: "questions", "aria-label": "Planner's questions", hidden: true });
  readonly cards = h("section", { id: "cards", "aria-label": "Run", hidden: true });
  readonly handoff = h("section", { id: "handoff", "aria-label": "Handoff", hidden: true });
  readonly plan = h("section", { id: "plan", "aria-label": "Plan", hidden: true });
  readonly planHead = h("div", { className: "plan-head" });
  readonly planList = h("div", { id: "plan-list", role: "listbox", tabindex: 0,
                                 "aria-label": "Plan tasks (j/k to move, single keys to edit)" });
  readonly editor = h("form", { id: "task-editor", "aria-label": "Selected task" });
  readonly confirm = h("div", { id: "confirm", role: "alertdialog", "aria-modal": "false",
                                hidden: true });
  readonly goal = h("textarea", { id: "composer-input", rows: 2,
                                  placeholder: "Type a goal for Baton to plan… (Enter sends)",
                                  "aria-label": "Goal or answer" });

  constructor(private readonly root: HTMLElement) {}

  bind(app: App): void {
    this.app = app;
    const refresh = button("Refresh players", () => void app.refreshPlayers(),
                           { id: "refresh-players", "aria-label": "Refresh players (detect agents again)" });
    const header = h("header", {}, h("strong", {}, "Baton"), this.status, refresh);
    this.conversation.append(this.messages, this.planner, this.questions);
    const scroll = h("div", { id: "scroll" }, this.conversation, this.cards, this.handoff);
    const send = button("Send", () => this.sendComposer(), { "aria-label": "Send" });
    const composer = h("div", { id: "composer" }, this.goal, send);
    this.goal.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); this.sendComposer(); }
    });
    this.plan.append(this.planHead, this.planList, this.editor);
    this.planList.addEventListener("keydown", (e) => this.planKeys(e));
    this.planList.addEventListener("click", (e) => {
      const row = (e.target as HTMLElement).closest<HTMLElement>("[data-task]");
      if (row) app.dispatch({ type: "select", id: Number(row.dataset.task) });
    });
    this.editor.addEventListener("submit", (e) => e.preventDefault());
    this.root.replaceChildren(header, scroll, this.plan, this.confirm, composer);
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && this.last?.confirm) { e.preventDefault(); app.cancel(); }
    });
  }

  focusComposer(): void { this.goal.focus(); }

  /** Paint on the next frame, once however many changes came in. */
  schedule(state: State): void {
    const first = this.pending === null;
    this.pending = state;
    if (first) requestAnimationFrame(() => this.flush());
  }

  flush(): void {
    const state = this.pending;
    this.pending = null;
    if (state) this.paint(state);
  }

  paint(s: State): void {
    const p = this.last;
    if (!p || p.connected !== s.connected || p.busy !== s.busy || p.plan !== s.plan
        || p.approved !== s.approved || p.running !== s.running) this.paintStatus(s);
    if (!p || p.messages !== s.messages) this.paintMessages(s);
    if (!p || p.planner !== s.planner) this.paintPlanner(s);
    if (!p || p.questions !== s.questions || p.busy !== s.busy) this.paintQuestions(s);
    if (!p || p.plan !== s.plan || p.approved !== s.approved || p.running !== s.running
        || p.cards !== s.cards || p.busy !== s.busy) this.paintPlanHead(s);
    if (!p || p.plan !== s.plan || p.selected !== s.selected) this.paintRows(s, !p || p.selected !== s.selected);
    if (!p || p.saving !== s.saving) this.plan.setAttribute("aria-busy", s.saving ? "true" : "false");
    if (!p || p.plan !== s.plan || p.selected !== s.selected || p.players !== s.players
        || p.cards !== s.cards) this.paintEditor(s);
    if (!p || p.cards !== s.cards || p.summary !== s.summary) this.paintCards(s);
    if (!p || p.handoff !== s.handoff || p.busy !== s.busy || p.cards !== s.cards) this.paintHandoff(s);
    if (!p || p.confirm !== s.confirm) this.paintConfirm(s);
    this.last = s;
    if (this.painted) this.painted();
  }

  private paintStatus(s: State): void {
    const bits = [s.connected ? "" : "not connected"];
    if (s.busy) bits.push(`${s.busy}…`);
    else if (s.running) bits.push("running");
    else if (s.plan) bits.push(s.approved ? "approved" : "draft — approve to build");
    this.status.textContent = bits.filter(Boolean).join(" · ");
  }

  private paintMessages(s: State): void {
    const have = this.messages.children.length;
    if (have > s.messages.length) this.messages.replaceChildren();
    for (const m of s.messages.slice(this.messages.children.length)) {
      this.messages.append(h("div", { className: `msg ${m.role}` },
                             h("span", { className: "who" }, m.role === "you" ? "You" : m.role === "planner"
                               ? "Planner" : m.role === "error" ? "Refused" : "Baton"), h("p", {}, m.text)));
    }
    this.conversation.scrollTop = this.conversation.scrollHeight;
  }

  private paintPlanner(s: State): void {
    const pl = s.planner;
    this.planner.hidden = !pl.working;
    if (!pl.working) { this.planner.replaceChildren(); return; }
    const steps = h("ol", { className: "steps", "aria-label": "Planner steps" },
                    ...pl.steps.map((st) => h("li", {}, h("code", {}, st.kind), " ", st.text)));
    const thinking = pl.thinking
      ? h("details", { className: "thinking" }, h("summary", {}, "Thinking"), h("pre", {}, pl.thinking))
      : null;
    this.planner.replaceChildren(h("div", { className: "live" }, "Planner working…"), steps);
    if (thinking) this.planner.append(thinking);
    if (pl.text) this.planner.append(h("p", { className: "planner-text" }, pl.text));
  }

  private paintQuestions(s: State): void {
    const qs = s.questions;
    this.questions.hidden = !qs;
    if (!qs) { this.questions.replaceChildren(); return; }
    const box = h("textarea", { id: "answer", rows: 2, "aria-label": "Your answer",
                                placeholder: qs[0]?.recommendation ?? "" });
    const items = qs.map((q) => h("li", {}, h("p", { className: "q" }, q.question),
                                     h("p", { className: "rec" }, "Recommended: ", h("em", {}, q.recommendation))));
    const answer = button("Answer", () => box.value.trim() ? void this.app.answer(box.value) : void this.app.answer("", true),
                          { "aria-label": "Send the answer" });
    const take = button("Take the recommendation", () => void this.app.answer("", true),
                        { "aria-label": "Take the recommendation for every open question" });
    box.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); answer.click(); }
    });
    if (s.busy) { answer.disabled = true; take.disabled = true; }
    this.questions.replaceChildren(h("h3", {}, "The planner asks"), h("ol", {}, ...items), box,
                                   h("div", { className: "row" }, answer, take));
  }

  private paintPlanHead(s: State): void {
    this.plan.hidden = !s.plan;
    if (!s.plan) { this.planHead.replaceChildren(); this.planHeadKey = ""; return; }
    const started = s.cards.some((c) => STARTED.has(c.state));
    const finished = s.cards.length > 0
      && s.cards.every((c) => ["done", "landed", "merged", "discarded"].includes(c.state));
    // Output streaming into cards changes `cards` many times a second; the head only when
    // one of these does.
    const key = JSON.stringify([s.plan.goal, s.approved, s.running, s.busy, started, finished]);
    if (key === this.planHeadKey) return;
    this.planHeadKey = key;
    const approve = button("Approve…", () => this.app.ask("approve"),
                           { id: "approve", "aria-label": "Approve… the whole plan" });
    approve.disabled = s.approved || started || Boolean(s.busy);
    const run = button("Run…", () => this.app.ask("run"), { id: "run", "aria-label": "Run… the approved plan" });
    run.disabled = !s.approved || s.running || finished || Boolean(s.busy);
    const stop = button("Pause", () => this.app.ask("stop"), { "aria-label": "Pause the run" });
    stop.disabled = !s.running;
    this.planHead.replaceChildren(
      h("h2", {}, "Plan: ", s.plan.goal || "(no goal)"), h("div", { className: "row" }, approve, run, stop));
  }

  /** The plan's rows, keyed by task; `reveal`: the selection moved, so it is scrolled to
   * (only then: scrolling lays the whole list out, which an edit need not wait for). */
  private paintRows(s: State, reveal: boolean): void {
    const tasks = s.plan ? s.plan.tasks : [];
    const keep = new Set(tasks.map((t) => t.id));
    for (const [id, row] of this.rows) if (!keep.has(id)) { row.el.remove(); this.rows.delete(id); }
    let before: Element | null = this.planList.firstElementChild;
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

  private row(t: Task, selected: boolean): HTMLElement {
    const bits = [t.player, t.model, t.effort, t.mode !== "build" ? t.mode : null,
                  t.depends_on && t.depends_on.length ? `after ${t.depends_on.join(",")}` : null,
                  t.checkpoint ? "checkpoint" : null, t.check ? "check" : null].filter(Boolean).join(" · ");
    return h("div", { className: selected ? "task selected" : "task", role: "option", id: `task-${t.id}`,
                      "aria-selected": selected ? "true" : "false", "data-task": t.id },
             h("span", { className: "id" }, `${t.id}`), h("span", { className: "title" }, t.title),
             h("span", { className: "meta" }, bits));
  }

  private paintEditor(s: State): void {
    const task = selectedTask(s);
    if (task === this.editorFor && s.players === this.editorPlayers) return;
    this.editorFor = task;
    this.editorPlayers = s.players;
    if (!task) { this.editor.replaceChildren(); return; }
    const card = s.cards.find((c) => c.id === task.id);
    const frozen = Boolean(card && STARTED.has(card.state) && !["paused", "failed"].includes(card.state));
    const offer = choices(s, task);
    const edit = (field: EditableField | "checkpoint", value: string | boolean) =>
      void this.app.edit(task.id, field, value);
    const fields: HTMLElement[] = [];
    const labelled = (field: string, text: string, control: HTMLElement) => {
      control.id = `field-${field}`;
      control.dataset.field = field;
      control.addEventListener("keydown", (e) => {
        if ((e as KeyboardEvent).key === "Escape") { e.preventDefault(); this.planList.focus(); }
      });
      fields.push(h("label", { for: control.id }, text), control);
    };
    const select = (field: EditableField, text: string, options: string[], current: string, empty: string | null,
                    why: (o: string) => string | null = () => null) => {
      const el = h("select", { "aria-label": `${text} of task ${task.id}` },
                   ...(empty !== null ? [h("option", { value: "" }, empty)] : []),
                   ...options.map((o) => {
                     const reason = o === current ? null : why(o);
                     return h("option", { value: o, disabled: reason !== null },
                              reason === null ? o : `${o} — ${reason}`);
                   }));
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
    if (offer.anyModel) {  // the player takes any model name
      const model = h("input", { type: "text", placeholder: "(player's default)",
                                 "aria-label": `Model of task ${task.id}` });
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
    const remove = button("Remove task", () => void this.app.removeTask(task.id),
                          { "aria-label": `Remove task ${task.id}` });
    remove.disabled = frozen;
    this.editor.replaceChildren(h("h3", {}, `Task ${task.id}`), h("div", { className: "grid" }, ...fields),
                                h("div", { className: "row" }, remove));
  }

  private paintCards(s: State): void {
    const shown = s.cards.some((c) => STARTED.has(c.state));
    this.cards.hidden = !shown;
    if (!shown) { this.cards.replaceChildren(); this.cardEls.clear(); return; }
    if (!this.cards.firstElementChild) this.cards.append(h("h2", {}, "Run"));
    const keep = new Set(s.cards.map((c) => c.id));
    for (const [id, c] of this.cardEls) if (!keep.has(id)) { c.el.remove(); this.cardEls.delete(id); }
    for (const card of s.cards) {
      const had = this.cardEls.get(card.id);
      if (had && had.card === card) continue;
      if (had && onlyOutputChanged(had.card, card) && this.paintOutput(had.el, card)) {
        had.card = card;  // new lines only: the card's text node, not the card, changes
        continue;
      }
      const el = this.card(card);
      if (had) had.el.replaceWith(el); else this.cards.append(el);
      this.cardEls.set(card.id, { card, el });
    }
    let summary = this.cards.querySelector(".summary");
    if (s.summary) {
      if (!summary) { summary = h("p", { className: "summary" }); this.cards.append(summary); }
      summary.textContent = s.summary;
    } else summary?.remove();
  }

  /** A card's output lines written into its `<pre>` in place; false when it has none yet
   * (the card is drawn whole). */
  private paintOutput(el: HTMLElement, c: Card): boolean {
    const pre = el.querySelector<HTMLElement>("pre.output");
    if (!pre || !c.output.length) return false;
    pre.textContent = c.output.join("\n");
    return true;
  }

  private card(c: Card): HTMLElement {
    const actions: HTMLElement[] = [];
    if (["failed", "paused", "parked"].includes(c.state)) {
      actions.push(button("Retry", () => void this.app.retry(c.id), { "aria-label": `Retry task ${c.id}` }));
    }
    if (c.state === "running") {
      actions.push(button("Stop…", () => this.app.ask("stopTask", c.id), { "aria-label": `Stop task ${c.id}` }));
    }
    if (c.mode === "build" && !["merged", "discarded", "draft", "queued"].includes(c.state)) {
      actions.push(button("Take", () => void this.app.take(c.id),
                          { "aria-label": `Take task ${c.id} over in a terminal` }));
    }
    if (!["merged", "discarded", "running"].includes(c.state)) {
      actions.push(button("Discard…", () => this.app.ask("discard", c.id), { "aria-label": `Discard task ${c.id}` }));
    }
    const cp = c.checkpoint && c.state === "checkpoint"
      ? h("div", { className: "checkpoint", role: "group", "aria-label": `Checkpoint of task ${c.id}` },
          h("p", {}, "Checkpoint: ", c.checkpoint.what),
          c.checkpoint.evidence ? h("pre", {}, c.checkpoint.evidence) : null,
          button("Yes, go on", () => void this.app.checkpoint(c.id, "yes"), { "aria-label": `Yes: task ${c.id} may go on` }),
          button("No", () => void this.app.checkpoint(c.id, "no"), { "aria-label": `No: task ${c.id} stops` }))
      : null;
    return h("article", { className: `card state-${c.state}`, "data-card": c.id, "data-state": c.state, "data-mode": c.mode,
                          "aria-label": `Task ${c.id}: ${c.title}, ${c.state}` },
             h("div", { className: "card-head" }, h("span", { className: "id" }, `${c.id}`),
               h("span", { className: "title" }, c.title), h("span", { className: "badge" }, c.state)),
             h("div", { className: "meta" }, `${c.player} · ${c.mode}`),
             c.flags.length ? h("ul", { className: "flags" }, ...c.flags.map((f) => h("li", {}, `${f.kind}: ${f.detail}`))) : null,
             cp,
             c.lastReport ? h("p", { className: "report" }, c.lastReport) : null,
             c.output.length ? h("pre", { className: "output" }, c.output.join("\n")) : null,
             actions.length ? h("div", { className: "row" }, ...actions) : null);
  }

  private paintHandoff(s: State): void {
    const hd = s.handoff;
    this.handoff.hidden = !hd;
    if (!hd) { this.handoff.replaceChildren(); return; }
    const files = hd.files.map((f) => h("li", {}, button(f.path, () => void this.app.openDiff(f.path),
      { className: "file", "aria-label": `Open the diff of ${f.path}` }),
      h("span", { className: "stat" }, ` +${f.added} −${f.deleted}`),
      h("span", { className: "meta" }, ` tasks ${f.tasks.join(", ")}`)));
    const merge = button("Merge all…", () => this.app.ask("merge"),
                         { id: "merge-all", "aria-label": "Merge all… landed tasks onto your branch" });
    merge.disabled = Boolean(s.busy) || hd.files.length === 0;
    const state = new Map(s.cards.map((c) => [c.id, c.state]));
    const tasks = hd.tasks.map((t) => {
      const merged = state.get(t.id) === "merged";
      const upTo = button("Merge up to here…", () => this.app.ask("mergeUpTo", t.id),
                          { className: "merge-up-to", "aria-label": `Merge up to task ${t.id}… (the landed tasks before it too)` });
      upTo.disabled = merged || Boolean(s.busy);
      return h("li", { "data-handoff-task": t.id }, h("span", { className: "id" }, `${t.id}`), " ",
               h("span", { className: "title" }, t.title), " ",
               h("span", { className: "badge" }, merged ? "merged" : "landed"), " ", merged ? null : upTo);
    });
    this.handoff.replaceChildren(h("h2", {}, "Handoff"),
                                 h("p", { className: "meta" }, `${hd.files.length} files changed`),
                                 h("ul", { className: "files", "aria-label": "Changed files" }, ...files),
                                 h("h3", {}, "Landed tasks, in merge order"),
                                 h("ol", { className: "handoff-tasks", "aria-label": "Landed tasks, in merge order" }, ...tasks),
                                 h("div", { className: "row" }, merge));
  }

  private paintConfirm(s: State): void {
    const c = s.confirm;
    this.confirm.hidden = !c;
    if (!c) { this.confirm.replaceChildren(); return; }
    const yes = button(c.yes, () => void this.app.confirmed(), { className: "primary" });
    const no = button("Cancel", () => this.app.cancel());
    this.confirm.setAttribute("aria-label", c.question);
    this.confirm.replaceChildren(h("p", {}, c.question), h("div", { className: "row" }, yes, no));
    yes.focus();
  }

  private sendComposer(): void {
    const text = this.goal.value;
    if (!text.trim()) return;
    this.goal.value = "";
    void this.app.send(text);
  }

  private planKeys(e: KeyboardEvent): void {
    const key = planKey(e.key, e.ctrlKey || e.metaKey);
    if (!key) return;
    e.preventDefault();
    const s = this.app.state;
    const task = selectedTask(s);
    switch (key.kind) {
      case "move": this.app.dispatch({ type: "move", delta: key.delta }); break;
      case "first": this.app.dispatch({ type: "move", delta: -1e9 }); break;
      case "last": this.app.dispatch({ type: "move", delta: 1e9 }); break;
      case "field": this.flush(); this.editor.querySelector<HTMLElement>(`[data-field="${key.field}"]`)?.focus(); break;
      case "toggleCheckpoint": if (task) void this.app.edit(task.id, "checkpoint", !task.checkpoint); break;
      case "add": void this.app.addTask("New task"); break;
      case "remove": if (task) void this.app.removeTask(task.id); break;
      case "approve": this.app.ask("approve"); break;
      case "run": this.app.ask("run"); break;
      case "stop": this.app.ask("stop"); break;
      case "retry": if (task) void this.app.retry(task.id); break;
      case "take": if (task) void this.app.take(task.id); break;
      case "handoff": void this.app.review(); break;
    }
    this.flush();  // a key's own change is drawn now, not a frame later
  }
}
