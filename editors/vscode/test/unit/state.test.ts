/** The web client's state: reducers, pickers, single keys and field parsing, with no DOM. */
import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import type { Plan, Status } from "../../web/protocol";
import {
  OUTPUT_LINES, changesStatus, choices, fieldText, fieldValue, handoffTasks, initialState, planKey, readyForHandoff, reduce,
  selectedTask,
} from "../../web/state";
import { lineDiff } from "../../web/diff";

const plan: Plan = {
  version: 1, goal: "count words",
  tasks: [
    { id: 1, title: "Survey", prompt: "read", player: "anthropic", mode: "research" },
    { id: 2, title: "Words", prompt: "add words", player: "anthropic", depends_on: [1], skills: ["tdd"] },
    { id: 3, title: "Lines", prompt: "add lines", player: "codex", effort: "high" },
  ],
};

function status(states: Record<number, string>, conductor: Status["conductor"] = null): Status {
  return {
    plan: { goal: plan.goal, slug: "count-words", approved: true, autonomy: "guarded", state: "running" },
    conductor,
    tasks: plan.tasks.map((t: Plan["tasks"][number]) => ({ id: t.id, title: t.title, player: t.player, mode: t.mode ?? "build",
                                    state: states[t.id] ?? "queued" })),
  };
}

describe("planner conversation", () => {
  it("shows the goal, live steps and thinking, then the question", () => {
    let s = reduce(initialState(), { type: "plannerStarted", goal: "count words", answer: null });
    assert.deepEqual(s.messages, [{ role: "you", text: "count words" }]);
    assert.equal(s.planner.working, true);
    s = reduce(s, { type: "plannerStep", step: { kind: "read", text: "core.py" } });
    s = reduce(s, { type: "plannerThinking", delta: "the package " });
    s = reduce(s, { type: "plannerThinking", delta: "is small" });
    s = reduce(s, { type: "plannerText", delta: "Reading first." });
    assert.equal(s.planner.steps.length, 1);
    assert.equal(s.planner.thinking, "the package is small");
    const q = [{ question: "both counts?", recommendation: "both" }];
    s = reduce(s, { type: "drafted", questions: q, plan: null });
    assert.equal(s.planner.working, false);
    assert.deepEqual(s.questions, q);
    assert.deepEqual(s.messages.at(-1), { role: "planner", text: "Reading first." });
    assert.equal(s.plan, null);
  });

  it("an answer clears the question and a plan selects its first task", () => {
    let s = reduce(initialState(), { type: "questions", questions: [{ question: "q", recommendation: "r" }] });
    s = reduce(s, { type: "plannerStarted", goal: null, answer: "both" });
    assert.equal(s.questions, null);
    assert.deepEqual(s.messages.at(-1), { role: "you", text: "both" });
    s = reduce(s, { type: "drafted", questions: null, plan });
    assert.equal(s.plan, plan);
    assert.equal(s.selected, 1);
  });
});

describe("plan selection and keys", () => {
  it("paints an edit at once, one task changed, and takes the server's plan over it", () => {
    let s = reduce(initialState(), { type: "plan", plan });
    const before = s.plan!;
    s = reduce(s, { type: "edited", id: 3, field: "checkpoint", value: true });
    assert.equal(s.plan!.tasks[2].checkpoint, true);
    assert.equal(s.plan!.tasks[0], before.tasks[0], "the other tasks are the same objects");
    assert.equal(reduce(s, { type: "edited", id: 99, field: "title", value: "x" }), s, "no such task: nothing");
    const answered = { ...plan, tasks: plan.tasks.map((t: Plan["tasks"][number]) => (t.id === 3 ? { ...t, checkpoint: false } : t)) };
    s = reduce(s, { type: "plan", plan: answered });
    assert.equal(s.plan!.tasks[2].checkpoint, false, "the server's word is the last");
  });

  it("moves within the plan and keeps the selection across a new plan", () => {
    let s = reduce(initialState(), { type: "plan", plan });
    s = reduce(s, { type: "move", delta: 1 });
    assert.equal(selectedTask(s)?.id, 2);
    s = reduce(s, { type: "move", delta: 10 });
    assert.equal(s.selected, 3);
    s = reduce(s, { type: "move", delta: -1e9 });
    assert.equal(s.selected, 1);
    s = reduce(s, { type: "select", id: 3 });
    const edited = { ...plan, tasks: plan.tasks.map((t: Plan["tasks"][number]) => (t.id === 3 ? { ...t, title: "Lines!" } : t)) };
    s = reduce(s, { type: "plan", plan: edited });
    assert.equal(s.selected, 3);
    const fewer = { ...plan, tasks: plan.tasks.slice(0, 2) };
    assert.equal(reduce(s, { type: "plan", plan: fewer }).selected, 1);
  });

  it("keeps unchanged tasks as the same objects (one row repaints after an edit)", () => {
    const s = reduce(initialState(), { type: "plan", plan });
    const copy = JSON.parse(JSON.stringify(plan)) as Plan;
    copy.tasks[2].effort = "low";
    const next = reduce(s, { type: "plan", plan: copy });
    assert.equal(next.plan?.tasks[0], s.plan?.tasks[0]);
    assert.equal(next.plan?.tasks[1], s.plan?.tasks[1]);
    assert.notEqual(next.plan?.tasks[2], s.plan?.tasks[2]);
    assert.equal(next.plan?.tasks[2].effort, "low");
    const again = reduce(next, { type: "plan", plan: JSON.parse(JSON.stringify(copy)) as Plan });
    assert.equal(again.plan, next.plan, "an identical plan keeps the very same object");
  });

  it("maps the terminal app's single keys", () => {
    assert.deepEqual(planKey("j", false), { kind: "move", delta: 1 });
    assert.deepEqual(planKey("ArrowUp", false), { kind: "move", delta: -1 });
    assert.deepEqual(planKey("R", false), { kind: "field", field: "player" });
    assert.deepEqual(planKey("o", false), { kind: "field", field: "model" });
    assert.deepEqual(planKey("e", true), { kind: "field", field: "effort" });
    assert.deepEqual(planKey("e", false), { kind: "field", field: "prompt" });
    assert.deepEqual(planKey("C", false), { kind: "toggleCheckpoint" });
    assert.deepEqual(planKey("a", false), { kind: "approve" });
    assert.deepEqual(planKey("E", false), { kind: "run" });
    assert.equal(planKey("z", false), null);
    assert.equal(planKey("j", true), null);
  });
});

describe("pickers", () => {
  it("offer the player's own models and efforts, ready players first", () => {
    let s = reduce(initialState(), { type: "plan", plan });
    s = reduce(s, { type: "players", players: [
      { name: "codex", ready: false, reason: "not signed in", version: null, models: ["gpt-5"], efforts: ["low", "high"] },
      { name: "anthropic", ready: true, reason: null, version: "1", models: ["claude-sonnet-4-5"], efforts: [] },
    ] });
    const two = choices(s, plan.tasks[1]);
    assert.deepEqual(two.players, ["anthropic", "codex"]);
    assert.deepEqual(two.models, ["claude-sonnet-4-5"]);
    const three = choices(s, plan.tasks[2]);
    assert.deepEqual(three.efforts, ["low", "high"]);
    const custom = choices(s, { ...plan.tasks[0], player: "my-agent" });
    assert.equal(custom.players[0], "my-agent");
    assert.deepEqual(custom.models, []);
  });

  it("turn the editor's text into task/edit values and back", () => {
    assert.deepEqual(fieldValue("depends_on", "1, 2,"), [1, 2]);
    assert.deepEqual(fieldValue("depends_on", ""), []);
    assert.deepEqual(fieldValue("scope", "src/*, tests/x.py"), ["src/*", "tests/x.py"]);
    assert.equal(fieldValue("model", ""), null);
    assert.equal(fieldValue("effort", "high"), "high");
    assert.equal(fieldValue("title", "  a title "), "  a title ");
    assert.equal(fieldText(plan.tasks[1], "depends_on"), "1");
    assert.equal(fieldText(plan.tasks[1], "skills"), "tdd");
    assert.equal(fieldText(plan.tasks[0], "model"), "");
    assert.equal(fieldText(plan.tasks[2], "mode"), "build");
  });
});

describe("run cards", () => {
  it("follow status, keep unchanged cards, and cap output lines", () => {
    let s = reduce(initialState(), { type: "plan", plan });
    s = reduce(s, { type: "status", status: status({ 1: "running" }, { pid: 42 }) });
    assert.equal(s.running, true);
    assert.equal(s.approved, true);
    const [one, two] = s.cards;
    s = reduce(s, { type: "output", task: 1, lines: Array.from({ length: 10 }, (_, i) => `line ${i}`) });
    assert.equal(s.cards[0].output.length, OUTPUT_LINES);
    assert.equal(s.cards[0].output.at(-1), "line 9");
    assert.equal(s.cards[1], two);
    const withOutput = s.cards[0];
    s = reduce(s, { type: "status", status: status({ 1: "running" }, { pid: 42 }) });
    assert.equal(s.cards[0], withOutput, "an unchanged card keeps its object (no repaint)");
    s = reduce(s, { type: "status", status: status({ 1: "done" }, null) });
    assert.notEqual(s.cards[0], one);
    assert.equal(s.cards[0].state, "done");
    assert.deepEqual(s.cards[0].output, withOutput.output, "output survives a state change");
    assert.equal(s.running, false);
  });

  it("shows a checkpoint with its evidence", () => {
    let s = reduce(initialState(), { type: "status", status: status({ 2: "running" }) });
    s = reduce(s, { type: "checkpoint", task: 2, what: "drop the table", evidence: "3 rows" });
    assert.equal(s.cards[1].state, "checkpoint");
    assert.deepEqual(s.cards[1].checkpoint, { what: "drop the table", evidence: "3 rows" });
  });

  it("is ready for the handoff when the work is in", () => {
    let s = reduce(initialState(), { type: "status", status: status({ 1: "done", 2: "landed", 3: "running" }) });
    assert.equal(readyForHandoff(s), false);
    s = reduce(s, { type: "status", status: status({ 1: "done", 2: "landed", 3: "landed" }) });
    assert.equal(readyForHandoff(s), true);
  });

  it("offers the handoff beside a task that waits on the person, not beside one at work", () => {
    let s = reduce(initialState(), { type: "status", status: status({ 1: "landed", 2: "failed", 3: "checkpoint" }) });
    assert.equal(readyForHandoff(s), false);
    s = reduce(s, { type: "status", status: status({ 1: "landed", 2: "failed", 3: "paused" }) });
    assert.equal(readyForHandoff(s), true);
  });

  it("keeps the landed tasks of the review in merge order", () => {
    assert.deepEqual(handoffTasks([{ id: 3, title: "Three", files: [] }, { id: 1, title: "One" }, { title: "no id" }]),
                     [{ id: 3, title: "Three" }, { id: 1, title: "One" }]);
  });
});

describe("confirmations and merges", () => {
  it("asks, settles, and reports a conflict", () => {
    let s = reduce(initialState(), { type: "ask", confirm: { action: "merge", task: null, question: "Merge?", yes: "Merge" } });
    assert.equal(s.confirm?.yes, "Merge");
    s = reduce(s, { type: "settle" });
    assert.equal(s.confirm, null);
    s = reduce(s, { type: "merged", merged: [2], conflict: { id: 3, branch: "baton/x/3-lines", files: ["a.py"], command: "git merge baton/x/3-lines" } });
    assert.equal(s.conflict?.id, 3);
    assert.match(s.messages.at(-2)?.text ?? "", /merged task 2/);
    assert.match(s.messages.at(-1)?.text ?? "", /task 3 stopped at a conflict in a\.py: git merge/);
  });

  it("a dropped connection is said once and stops the busy marker", () => {
    let s = reduce(initialState(), { type: "connected" });
    s = reduce(s, { type: "busy", what: "planning" });
    s = reduce(s, { type: "disconnected", reason: "baton serve ended (exit 1)" });
    assert.equal(s.connected, false);
    assert.equal(s.busy, null);
    assert.deepEqual(s.messages, [{ role: "error", text: "baton serve ended (exit 1)" }]);
  });
});

describe("line diff", () => {
  it("keeps common lines and marks the rest", () => {
    assert.deepEqual(lineDiff("a\nb\nc\n", "a\nc\nd\n"), [
      { kind: "same", text: "a" }, { kind: "del", text: "b" }, { kind: "same", text: "c" },
      { kind: "add", text: "d" }]);
    assert.deepEqual(lineDiff("", "x\n"), [{ kind: "add", text: "x" }]);
  });
});

describe("which events ask for a status", () => {
  it("a progress line does not (its card has it as output); a state change or a flag does", () => {
    assert.equal(changesStatus("task.progress"), false);
    for (const kind of ["task.started", "task.landed", "task.flagged", "task.usage", "plan.edited"]) {
      assert.equal(changesStatus(kind), true, kind);
    }
  });
});
