"""`baton mcp --front` driven by the reference MCP client, as an assistant in an editor drives
it: list the tools, draft a plan with the scripted planner, answer its question, edit a task,
read the status, the diff and the logs of a real run — and find approving, running, merging
and discarding refused, with the person's exact command, and nothing done."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from helpers.run_kit import script_agent, toml_value

PLANNER = Path(__file__).parent / "planners" / "scripted_planner.py"
SIX = {"baton_plan", "baton_answer", "baton_edit_task", "baton_status", "baton_review",
       "baton_logs"}
PERSONS = {"baton_approve": "baton approve", "baton_run": "baton run",
           "baton_merge": "baton handoff merge", "baton_discard": "baton discard 1"}


def _setup(repo: Path, tmp: Path, baton) -> None:
    script = tmp / "planner-script.json"
    script.write_text(json.dumps([
        {"questions": [{"question": "Greet in English?", "recommendation": "yes"}]},
        {"version": 1, "goal": "say hello", "tasks": [
            {"id": 1, "title": "Write hello", "prompt": "Create hello.txt.", "player": "agent"}]},
    ]))
    planner = [sys.executable, str(PLANNER), str(script)]
    agent = script_agent(tmp, "agent", {"*": [
        {"print": "writing hello.txt"}, {"write": "hello.txt", "content": "hello\n"},
        {"report": "done", "summary": "wrote hello.txt"}]})
    (repo / "baton.toml").write_text(
        f'planner = "mine"\n[players.custom.mine]\ncommand = {toml_value(planner)}\n'
        f"research_command = {toml_value(planner)}\n"
        f"[players.custom.agent]\ncommand = {toml_value(agent)}\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=repo, check=True)
    assert baton("trust").returncode == 0


async def _session(repo: Path, steps):
    """Run `steps(call)` against one `baton mcp --front` started in `repo`."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "baton_tui", "mcp", "--front"],
                                   cwd=str(repo), env=dict(__import__("os").environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

            async def call(tool: str, **args) -> tuple[str, bool]:
                result = await session.call_tool(tool, args)
                return "".join(getattr(c, "text", "") for c in result.content), result.isError

            names = {t.name for t in (await session.list_tools()).tools}
            return names, await steps(call)


def test_an_assistant_plans_edits_and_reads_but_never_approves_runs_or_merges(repo, tmp_path,
                                                                              baton):
    _setup(repo, tmp_path, baton)

    async def drafting(call):
        said = {}
        said["plan"] = await call("baton_plan", goal="say hello")
        said["answer"] = await call("baton_answer", answer="yes, English")
        said["edit"] = await call("baton_edit_task", id=1, field="title", value="Write a greeting")
        said["bad_edit"] = await call("baton_edit_task", id=9, field="title", value="x")
        said["status"] = await call("baton_status")
        for tool in PERSONS:
            said[tool] = await call(tool, **({"task": 1} if tool == "baton_discard" else {}))
        return said

    names, said = asyncio.run(_session(repo, drafting))
    assert SIX <= names and set(PERSONS) <= names
    text, error = said["plan"]
    assert not error and "Greet in English?" in text and "Recommendation: yes" in text
    text, error = said["answer"]
    assert not error and "Write hello" in text and "not approved" in text
    assert "baton approve" in text
    assert said["edit"] == ('task 1: title = "Write a greeting". The plan is not approved: the '
                            "person approves it with `baton approve`.", False)
    assert said["bad_edit"][1] is True and "9" in said["bad_edit"][0]
    status = json.loads(said["status"][0])
    assert [t["title"] for t in status["tasks"]] == ["Write a greeting"]
    for tool, command in PERSONS.items():
        text, error = said[tool]
        assert error is True and f"`{command}`" in text and "Nothing was done" in text, tool
    # … and nothing was done: not approved, no conductor, no branch
    status = baton.json("status", "--json")
    assert status["plan"]["approved"] is False and status["conductor"] is None
    assert status["tasks"][0]["state"] == "draft"
    doc = baton.json("plan", "--json")
    assert doc["questions"][0]["answer"] == "yes, English"

    # The person approves and runs; the assistant reads the diff and the logs.
    run = baton("run", "--approve")
    assert run.returncode == 0, run.stderr

    async def reading(call):
        return {"review": await call("baton_review"), "one": await call("baton_review", task=1),
                "logs": await call("baton_logs", task=1),
                "merge": await call("baton_merge"),
                "no_logs": await call("baton_logs", task=7)}

    _, said = asyncio.run(_session(repo, reading))
    text, error = said["review"]
    assert not error and "+hello" in text and "hello.txt" in text
    assert "task 1: Write a greeting" in text and "`baton handoff merge`" in text
    assert not said["one"][1] and "+hello" in said["one"][0]
    text, error = said["logs"]
    assert not error and "writing hello.txt" in text
    assert said["merge"][1] is True
    assert said["no_logs"][1] is True
    # the merge was refused: the person's branch has no hello.txt
    assert not (repo / "hello.txt").exists()
    assert subprocess.run(["git", "cat-file", "-e", "main:hello.txt"], cwd=repo,
                          capture_output=True).returncode != 0
    assert baton.json("status", "--json")["tasks"][0]["state"] == "landed"


def test_the_registry_manifest_names_this_server_and_version():
    """server.json (the MCP registry's manifest) starts `baton mcp --front` of this release,
    and the README carries the `mcp-name` marker the registry checks a PyPI package by."""
    from baton_tui import __version__
    from helpers.core import ROOT

    manifest = json.loads((ROOT / "server.json").read_text())
    assert manifest["version"] == __version__
    package = manifest["packages"][0]
    assert (package["registryType"], package["identifier"], package["version"]) == \
        ("pypi", "baton-tui", __version__)
    assert [a.get("value") or a.get("name") for a in package["packageArguments"]] == \
        ["mcp", "--front"]
    assert package["transport"] == {"type": "stdio"}
    assert f"mcp-name: {manifest['name']}" in (ROOT / "README.md").read_text()
