/** Inside code-server's real extension host, against a real `baton serve` (the scripted
 * planner and players of the demo): the command, the view, and the protocol round trip from
 * goal to merge, with the diff editor opened on a handoff file. */
import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as vscode from "vscode";
import type { BatonApi } from "../../src/extension";

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, seconds = 90): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("Baton in the extension host", function () {
  let api: BatonApi;
  const folder = () => vscode.workspace.workspaceFolders![0].uri.fsPath;

  before(async () => {
    const ext = vscode.extensions.getExtension<BatonApi>("baton.baton");
    assert.ok(ext, "the extension baton.baton is installed");
    api = await ext.activate();
  });

  it("Baton: Open reveals the Baton view", async () => {
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes("baton.open"));
    await vscode.commands.executeCommand("baton.open");
    await until("the webview view", async () => api.viewResolved());
  });

  it("lists the players with their models", async () => {
    const { players } = await api.request("players/list", {});
    const native = players.find((p) => p.name === "anthropic");
    assert.ok(native && native.ready, JSON.stringify(players));
    assert.ok(native.models && native.models.length > 0, JSON.stringify(native));
  });

  it("drafts through a question, edits, approves, runs, reviews and merges", async () => {
    const asked = await api.request("plan/draft", { goal: "add word and line counts" });
    assert.ok(asked.questions && asked.questions.length === 1, JSON.stringify(asked));
    assert.match(asked.questions[0].recommendation ?? "", /both/);
    const drafted = await api.request("plan/answer", { answer: "both" });
    assert.ok(drafted.plan, JSON.stringify(drafted));
    assert.equal(drafted.plan.tasks.length, 6);
    const edited = await api.request("task/edit", { id: 6, field: "title", value: "Document the CLI" });
    assert.equal(edited.plan?.tasks.find((t) => t.id === 6)?.title, "Document the CLI");
    await api.request("plan/approve", {});
    await api.request("run/start", {});
    const status = await until("every build task landed", async () => {
      const s = await api.request("status/get", {});
      const open = s.tasks.filter((t) => t.state !== (t.mode === "research" ? "done" : "landed"));
      assert.ok(!s.tasks.some((t) => t.state === "failed"), JSON.stringify(s.tasks));
      return open.length === 0 ? s : null;
    }, 240);
    assert.equal(status.tasks.filter((t) => t.state === "landed").length, 5);
    const review = await api.request("handoff/review", {});
    const file = review.files.find((f) => f.path === "textstats/words.py");
    assert.ok(file, JSON.stringify(review.files.map((f) => f.path)));
    await api.openDiff(file.path);
    await until("the diff editor", async () => {
      const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
      return tab && tab.input instanceof vscode.TabInputTextDiff
        && tab.input.modified.path.endsWith("textstats/words.py");
    }, 30);
    const merged = await api.request("handoff/merge", {});
    assert.equal(merged.conflict, null);
    assert.ok(merged.merged.length >= 5);
    const log = execFileSync("git", ["log", "--format=%s", "main"], { cwd: folder(), encoding: "utf8" });
    for (const n of [2, 3, 4, 5, 6]) assert.match(log, new RegExp(`Merge task ${n}:`));
  });
});
