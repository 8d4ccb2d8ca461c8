"""The proof plan: five real agent CLIs and a native task in one plan, to a clean handoff.

A research task on each of OpenCode, Gemini CLI and Aider studies the README (read-only, its
report handed on), then a build task on each of Claude Code, Codex, OpenCode, Gemini CLI and
Aider extends one file, each on top of the one before, and a native Anthropic task signs it;
`baton handoff merge` brings the lot onto the person's branch. The tasks form a chain because
the scripted server replays one script to whichever CLI asks next. `baton run` prints each
task's time and each player's total (`pytest -s`), so a slow CLI shows.
"""

from __future__ import annotations

import os

from conftest import git, write_plan
from helpers.real_cli_kit import NPM_BIN, PYPI_BIN, attempt_logs, events_of, run, worktree
from helpers.real_players import CLAUDE_CODE, PLAYERS

PROFILE = {p.name: p for p in PLAYERS}
RESEARCH = ("opencode", "gemini", "aider")
BUILD = ("claude-code", "codex", "opencode", "gemini", "aider")


def test_plan_mixing_five_clis_and_a_native_task_reaches_a_clean_handoff(server, baton, repo,
                                                                         tmp_path):
    for name in BUILD:
        PROFILE[name].require()
    tasks = [{"id": i, "title": f"Study readme {name}", "prompt": "What does README.md say?",
              "player": name, "mode": "research", "depends_on": [i - 1] if i > 1 else []}
             for i, name in enumerate(RESEARCH, 1)]
    first_build = len(tasks) + 1
    for i, name in enumerate(BUILD, first_build):
        tasks.append({"id": i, "title": f"Hello {name}", "prompt": "Add your line to hello.txt.",
                      "player": name, "mode": "build", "depends_on": [i - 1]})
    sign = len(tasks) + 1
    tasks.append({"id": sign, "title": "Sign hello", "prompt": "Append a signature.",
                  "player": "anthropic", "mode": "build", "depends_on": [sign - 1]})
    tasks[first_build - 1]["model"] = "sonnet"
    assert baton("plan", "--from", str(write_plan(tmp_path / "plan.json", tasks))).returncode == 0

    turns: list[dict] = []
    for i, name in enumerate(RESEARCH, 1):
        player = PROFILE[name]
        wt = worktree(repo, baton, i, "-research-1")
        turns += player.conversation(player.read(wt / "README.md"),
                                     player.report("done", f"{name}: README is one heading"),
                                     {"text": "Reported."})
    lines: list[str] = []
    for i, name in enumerate(BUILD, first_build):
        player = PROFILE[name]
        lines.append(f"from {name}")
        content = "".join(f"{line}\n" for line in lines)
        wt = worktree(repo, baton, i)
        edit = player.write(wt / "hello.txt", content) if name in ("claude-code", "aider") \
            else player.shell(f"printf 'from {name}\\n' >> hello.txt")
        turns += player.conversation(edit, player.report("done", f"{name} added its line"),
                                     {"text": "Reported."})
    turns += [
        {"tool": "edit_file", "input": {"path": "hello.txt", "old_string": "from aider\n",
                                        "new_string": "from aider\nsigned\n"}},
        {"tool": "baton_report", "input": {"status": "done", "summary": "signed"}},
        {"text": "Reported."},
    ]
    server.add_turns(turns)

    env: dict[str, str] = {}
    for profile in (*(PROFILE[n] for n in BUILD), CLAUDE_CODE):   # the native task: ANTHROPIC_*
        env.update(profile.env(server))
    env["PATH"] = f"{NPM_BIN}{os.pathsep}{PYPI_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    result = run(baton, env, timeout=900)
    assert result.returncode == 0, attempt_logs(repo)[-6000:]
    status = baton.json("status", "--json")
    assert [t["state"] for t in status["tasks"]] == ["done"] * 3 + ["landed"] * 6
    for i, name in enumerate(RESEARCH, 1):
        summaries = [e.get("data", e).get("summary") for e in events_of(baton, i)
                     if (e.get("kind") or e.get("type")) == "task.done"]
        assert summaries == [f"{name}: README is one heading"]
    first = next(r for r in server.requests if r.get("protocol") == "anthropic"
                 and r.get("turn") is not None)["json"]
    assert first["model"].startswith("claude-sonnet")      # the task's model reached the CLI
    assert git(repo, "status", "--porcelain") == ""
    merged = baton("handoff", "merge", env=env)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert (repo / "hello.txt").read_text() == "".join(f"{line}\n" for line in lines) + "signed\n"
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    assert not [p for p in git(repo, "ls-files").splitlines() if p.startswith(".aider")]
