"""`baton serve` driven as a separate process, as an editor or a browser would: from a goal to
the merge over stdio, the same protocol over the Unix socket and the WebSocket, two clients at
once, reconnecting from a cursor, and the person's approval kept to interactive clients.

The planner is a scripted program (tests/planners/), the players Baton's demo agent: real
processes, a real git repository, the real store.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.run_kit import script_agent
from helpers.serve_kit import ListeningServer, StdioServer, socket_client, websocket_client

PLANNER = Path(__file__).parent / "planners" / "scripted_planner.py"

pytestmark = pytest.mark.slow


def plan_doc() -> dict:
    task = {"player": "agent", "mode": "build", "prompt": "write it"}
    return {"version": 1, "goal": "two notes", "tasks": [
        {"id": 1, "title": "first note", **task, "scope": ["one.txt"]},
        {"id": 2, "title": "second note", **task, "depends_on": [1], "scope": ["two.txt"]}]}


@pytest.fixture
def project(repo, baton, tmp_path):
    """A repository whose trusted baton.toml names a scripted planner (one question, then the
    plan) and a scripted agent (task 1 writes one.txt, task 2 two.txt)."""
    script = tmp_path / "planner.json"
    script.write_text(json.dumps([
        {"questions": [{"question": "Plain text or Markdown?", "recommendation": "plain text"}]},
        plan_doc()]))
    planner = [sys.executable, str(PLANNER), str(script)]
    agent = script_agent(tmp_path, "notes", {
        "1": [{"print": "writing one"}, {"write": "one.txt", "content": "one\n"},
              {"report": "done", "summary": "wrote one.txt"}],
        "2": [{"print": "writing two"}, {"write": "two.txt", "content": "two\n"},
              {"report": "done", "summary": "wrote two.txt"}]})
    (repo / "baton.toml").write_text(
        'planner = "mine"\n'
        f"[players.custom.mine]\ncommand = {json.dumps(planner)}\n"
        f"research_command = {json.dumps(planner)}\n"
        f"[players.custom.agent]\ncommand = {json.dumps(agent)}\n"
        '[limits]\nstall = "60s"\n')
    assert baton("trust").returncode == 0
    return repo


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                          check=True).stdout


def test_goal_to_merge_over_stdio(project, baton):
    server = StdioServer(project)
    c = server.client
    try:
        hello = c.initialize()
        assert hello["protocol"] == 1 and "plan/draft" in hello["capabilities"]["methods"]
        assert hello["repo"] == str(project)
        assert c.call("events/subscribe", {"cursor": 0})["cursor"] >= 0
        assert c.call("plan/get")["plan"] is None

        asked = c.call("plan/draft", {"goal": "two notes"})
        assert asked["status"] == "questions"
        assert asked["questions"][0]["question"] == "Plain text or Markdown?"
        note = c.wait_note("question")
        assert note["questions"][0]["recommendation"] == "plain text"
        steps = c.notes("planner/step")
        assert any("reading the repository" in s["text"] for s in steps), steps

        drafted = c.call("plan/answer", {"answer": "plain text, please"})
        assert drafted["status"] == "plan"
        assert [t["title"] for t in drafted["plan"]["tasks"]] == ["first note", "second note"]
        assert drafted["plan"]["questions"][0]["answer"] == "plain text, please"

        edited = c.call("task/edit", {"id": 2, "field": "title", "value": "the second note"})
        assert edited["plan"]["tasks"][1]["title"] == "the second note"
        edited = c.call("task/edit", {"id": 2, "field": "check", "value": "test -f two.txt"})
        assert edited["plan"]["tasks"][1]["check"] == "test -f two.txt"
        c.wait_event("plan.edited")
        refused = c.error("task/edit", {"id": 2, "field": "depends_on", "value": [2]})
        assert refused["code"] == -32001 and "2" in refused["message"]
        bad = c.error("task/edit", {"id": 2, "field": "colour", "value": "red"})
        assert bad["code"] == -32602

        approved = c.call("plan/approve")
        assert approved["approved"] is True and approved["base_branch"] == "main"
        started = c.call("run/start")
        assert started["started"] is True and isinstance(started["conductor"], int)
        c.wait_event("task.landed", 1)
        c.wait_event("task.landed", 2)
        output = c.wait_note("task/output", lambda p: any("writing" in line for line in p["lines"]))
        assert output["task"] in (1, 2)
        assert c.call("log/read", {"task": 1, "cursor": 0})["lines"]

        status = c.call("status/get")
        assert [t["state"] for t in status["tasks"]] == ["landed", "landed"]
        review = c.call("handoff/review")
        assert {f["path"]: f["tasks"] for f in review["files"]} == {"one.txt": [1], "two.txt": [2]}
        assert "+one" in review["diff"] and review["onto"] == "main"
        sides = c.call("handoff/file", {"path": "two.txt"})
        assert sides == {"path": "two.txt", "left": None, "right": "two\n", "binary": False}
        assert c.error("handoff/file", {"path": "../etc/passwd"})["code"] == -32001

        merged = c.call("handoff/merge")
        assert merged["merged"] == [1, 2] and merged["conflict"] is None
        assert (project / "one.txt").read_text() == "one\n"
        assert (project / "two.txt").read_text() == "two\n"
        assert "two.txt" in git(project, "log", "--name-only", "--format=%s", "main")
        cursors = [e["cursor"] for e in c.events()]
        assert cursors == sorted(set(cursors)), "every event once, in order"
    finally:
        assert server.close() == 0, "".join(server.stderr)


def test_approval_merge_and_discard_only_on_interactive_connections(project, baton):
    assert baton("plan", "--from", "-", input=json.dumps(plan_doc())).returncode == 0
    server = StdioServer(project)
    c = server.client
    try:
        c.initialize(interactive=False, name="assistant")
        for method, params in (("plan/approve", None), ("handoff/merge", {}),
                               ("task/discard", {"id": 1})):
            error = c.error(method, params)
            assert error["code"] == -32004, error
            assert "person" in error["message"] and "baton" in error["message"]
        assert baton.json("status", "--json")["plan"]["approved"] is False
        assert c.call("task/edit", {"id": 1, "field": "prompt", "value": "write one.txt"})
    finally:
        server.close()


def test_handshake_refuses_an_unknown_protocol_and_calls_before_it(project):
    server = StdioServer(project)
    c = server.client
    try:
        early = c.error("status/get")
        assert early["code"] == -32005 and "initialize" in early["message"]
        wrong = c.error("initialize", {"protocol": 7, "interactive": True})
        assert "protocol 7" in wrong["message"] and "1" in wrong["message"]
        assert wrong["data"] == {"supported": [1]}
        c.initialize()
        assert c.call("status/get")["plan"] is None
    finally:
        server.close()


def test_unix_socket_two_clients_see_the_same_events(project, baton, tmp_path):
    path = tmp_path / "baton.sock"
    server = ListeningServer(project, "--socket", str(path))
    try:
        assert str(path) in server.first_line
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        app, sock_a = socket_client(path)
        editor, sock_b = socket_client(path)
        app.initialize()
        editor.initialize(name="editor")
        for client in (app, editor):
            client.call("events/subscribe", {"cursor": 0})
        assert baton("plan", "--from", "-", input=json.dumps(plan_doc())).returncode == 0
        app.call("task/edit", {"id": 1, "field": "title", "value": "the first note"})
        for client in (app, editor):
            client.wait_event("plan.created")
            client.wait_event("plan.edited")
        assert [e["cursor"] for e in app.events()] == [e["cursor"] for e in editor.events()]
        sock_a.close()   # one client leaves; the other goes on
        assert editor.call("plan/get")["plan"]["tasks"][0]["title"] == "the first note"
        sock_b.close()
    finally:
        server.stop()
    assert not path.exists()


def test_reconnect_from_a_cursor_misses_nothing_and_repeats_nothing(project, baton, tmp_path):
    assert baton("plan", "--from", "-", input=json.dumps(plan_doc())).returncode == 0
    first = StdioServer(project)
    first.client.initialize()
    first.client.call("events/subscribe", {"cursor": 0})
    first.client.wait_event("plan.created")
    seen = [e["cursor"] for e in first.client.events()]
    first.close()   # the connection is lost
    for title in ("a", "b", "c"):   # the world goes on without it
        assert baton("task-title", "1", title).returncode == 0
    second = StdioServer(project)
    c = second.client
    try:
        c.initialize()
        c.call("events/subscribe", {"cursor": seen[-1]})
        edits = c.wait(lambda: [e for e in c.events() if e["kind"] == "plan.edited"][2:] and c.events())
        cursors = [e["cursor"] for e in edits]
        assert cursors[0] == seen[-1] + 1 and cursors == sorted(set(cursors))
        assert not set(cursors) & set(seen)
        c.call("task/edit", {"id": 1, "field": "title", "value": "live"})
        edited = c.wait(lambda: [e for e in c.events() if e["kind"] == "plan.edited"][3:])
        assert [e["data"]["value"] for e in edited] == ["live"]
    finally:
        second.close()


def test_websocket_needs_the_token_and_a_trusted_origin(project, tmp_path):
    from websockets.exceptions import InvalidStatus

    server = ListeningServer(project, "--listen", "ws://127.0.0.1:0")
    try:
        url = server.first_line
        assert url.startswith("ws://127.0.0.1:") and "?token=" in url
        token = url.split("?token=", 1)[1]
        state = Path(subprocess.run([sys.executable, "-c", "from baton_tui import api; "
                                     "print(api.state_dir())"], cwd=project, capture_output=True,
                                    text=True).stdout.strip())
        written = state / "serve-token"
        assert written.read_text().strip() == token
        assert stat.S_IMODE(written.stat().st_mode) == 0o600
        base = url.split("?", 1)[0]
        with pytest.raises(InvalidStatus) as wrong:
            websocket_client(base + "?token=nope")
        assert wrong.value.response.status_code == 401
        with pytest.raises(InvalidStatus) as foreign:
            websocket_client(url, origin="http://evil.example")
        assert foreign.value.response.status_code == 403
        client, ws = websocket_client(url, origin=base.replace("ws://", "http://").rstrip("/"))
        client.initialize()
        assert client.call("status/get")["tasks"] == []
        ws.close()
    finally:
        assert server.stop() in (0, -15)


def test_listen_refuses_an_address_beyond_loopback(project):
    result = subprocess.run([sys.executable, "-m", "baton_tui", "serve", "--listen",
                             "ws://0.0.0.0:0"], cwd=project, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert "loopback" in result.stderr and "--allow-remote" in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_json_rpc_library_that_is_not_batons_drives_it(project, baton):
    """jsonrpcclient (PyPI) builds the requests and reads the answers, over the WebSocket."""
    from jsonrpcclient import Ok, parse_json, request_json
    from websockets.sync.client import connect

    assert baton("plan", "--from", "-", input=json.dumps(plan_doc())).returncode == 0
    server = ListeningServer(project, "--listen", "ws://127.0.0.1:0")
    try:
        with connect(server.first_line) as ws:
            ws.send(request_json("initialize", params={"protocol": 1, "interactive": True}))
            hello = parse_json(ws.recv())
            assert isinstance(hello, Ok) and hello.result["protocol"] == 1
            ws.send(request_json("task/edit", params={"id": 2, "field": "scope",
                                                      "value": ["two.txt", "docs/*.md"]}))
            edited = parse_json(ws.recv())
            assert isinstance(edited, Ok)
            assert edited.result["plan"]["tasks"][1]["scope"] == ["two.txt", "docs/*.md"]
    finally:
        server.stop()
    assert baton.json("plan", "--json")["tasks"][1]["scope"] == ["two.txt", "docs/*.md"]


def test_committed_schema_and_typescript_match_the_models():
    folder = Path(__file__).resolve().parents[1] / "baton_tui" / "serve" / "schema"
    for flag, name in (("--schema", "protocol.schema.json"), ("--typescript", "protocol.d.ts")):
        made = subprocess.run([sys.executable, "-m", "baton_tui", "serve", flag],
                              capture_output=True, text=True, check=True, timeout=120).stdout
        assert made == (folder / name).read_text(), (
            f"{name} drifted from baton_tui/serve/wire.py: regenerate it with "
            f"`baton serve {flag} > baton_tui/serve/schema/{name}`")
    schema = json.loads((folder / "protocol.schema.json").read_text())
    pinned = {"plan/draft", "plan/answer", "plan/get", "plan/new", "task/edit", "task/add",
              "task/remove", "plan/approve", "run/start", "run/stop", "task/retry", "task/done",
              "task/discard", "task/take", "checkpoint/answer", "players/list", "runners/list",
              "status/get", "handoff/review", "handoff/merge", "log/read", "events/subscribe"}
    assert pinned <= set(schema["methods"])
    assert {"event", "planner/step", "planner/text", "planner/thinking", "task/output",
            "question", "checkpoint", "lagged"} <= set(schema["notifications"])
    assert all(schema["methods"][m]["interactive"] for m in ("plan/approve", "handoff/merge",
                                                               "task/discard"))


if os.name != "posix":  # pragma: no cover
    pytest.skip("Unix sockets and process groups", allow_module_level=True)


def test_every_other_request_over_the_socket(repo, baton, tmp_path):
    """The rest of the protocol on one plan: add and remove a task, players and runners, a
    checkpoint asked and answered, a task taken over and done by hand, a stopped task, a run
    paused, a task discarded, the plan archived."""
    from helpers.run_kit import load_plan, task, write_config

    agent = script_agent(tmp_path, "mix", {
        "1": [{"checkpoint": "drop the old table", "evidence": "DROP TABLE old;"},
              {"write": "one.txt", "content": "one\n"}, {"report": "done", "summary": "one"}],
        "2": [{"print": "working"}, {"hang": True}],
        "3": [{"print": "working"}, {"hang": True}],
        "4": [{"print": "working"}, {"hang": True}]})
    write_config(repo, {"agent": agent})
    load_plan(baton, [task(1, checkpoint=True), task(2), task(3), task(4)])
    path = tmp_path / "s.sock"
    server = ListeningServer(repo, "--socket", str(path))
    c, sock = socket_client(path)
    try:
        c.initialize()
        c.call("events/subscribe", {"cursor": 0})
        added = c.call("task/add", {"title": "by hand", "player": "agent", "mode": "manual"})
        assert added["id"] == 5 and added["plan"]["tasks"][-1]["mode"] == "manual"
        assert [t["id"] for t in c.call("task/remove", {"id": 5})["plan"]["tasks"]] == [1, 2, 3, 4]
        players = {p["name"]: p for p in c.call("players/list", {"refresh": True})["players"]}
        assert players["agent"]["ready"] is True and players["agent"]["models"] is None
        assert "claude-code" in players and players["claude-code"]["efforts"]
        assert [r["name"] for r in c.call("runners/list")["runners"]] == ["local"]

        c.call("plan/approve")
        c.call("run/start")
        asked = c.wait_note("checkpoint", lambda p: p["task"] == 1)
        assert asked["what"] == "drop the old table" and "DROP TABLE" in asked["evidence"]
        c.wait_event("task.started", 2)
        c.wait_event("task.started", 3)
        c.call("checkpoint/answer", {"id": 1, "answer": "yes"})
        c.wait_event("task.landed", 1)

        taken = c.call("task/take", {"id": 2})
        assert taken["interactive"] is False and Path(taken["cwd"]).is_dir()
        assert taken["argv"] and taken["player"] == "agent"
        c.wait(lambda: c.call("status/get")["tasks"][1]["state"] == "paused")
        (Path(taken["cwd"]) / "two.txt").write_text("by hand\n")
        c.call("task/done", {"id": 2})
        c.wait_event("task.landed", 2)

        c.call("task/stop", {"id": 4})
        c.wait(lambda: c.call("status/get")["tasks"][3]["state"] in ("failed", "paused"))
        assert c.call("run/stop")["paused"] is True
        c.wait(lambda: c.call("status/get")["tasks"][2]["state"] == "paused")
        queued = c.call("task/retry", {"id": 4, "feedback": "try again"})
        assert queued["queued"] is True
        c.wait_event("task.started", 4)  # it runs again (and hangs again, as scripted)
        c.call("run/stop")
        c.wait(lambda: c.call("status/get")["conductor"] is None)
        for victim in (3, 4):
            gone = c.call("task/discard", {"id": victim})
            assert gone["discarded"] == [victim]
        states = [t["state"] for t in c.call("status/get")["tasks"]]
        assert states == ["landed", "landed", "discarded", "discarded"]
        assert c.call("plan/new") == {"archived": True}
        assert c.call("plan/get")["plan"] is None
        assert c.call("plan/new") == {"archived": False}
        c.wait_event("plan.archived")  # (events go out beside the answers, not before them)
        kinds = {e["kind"] for e in c.events()}
        assert {"task.checkpoint", "task.checkpoint_answered", "task.discarded",
                "plan.archived"} <= kinds
    finally:
        sock.close()
        server.stop()
