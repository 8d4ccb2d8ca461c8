"""Readable steps from each player's own event stream (recorded lines of the real CLIs)."""

from __future__ import annotations

import json

from test_player_parsing import CLAUDE_OK, CODEX_429, CODEX_MCP, CODEX_OK

from helpers.tui_support import planned, ws

from baton_tui.players.base import Player
from baton_tui.players.builtin import player_named
from baton_tui.players.decoding import JsonDecoder, Said
from baton_tui.players.steps import Step, StepReader


def reader(player: str) -> StepReader:
    """A step reader for a player name, as the façade's `step_reader` makes one."""
    return player_named(player).step_reader()

__all__ = ["planned", "ws"]


def read(player: str, text: str) -> list[Step]:
    r = reader(player)
    return [s for line in text.strip().splitlines() for s in r.feed(line)]


def test_claude_code_said_tool_with_file_and_the_end():
    got = read("claude-code", CLAUDE_OK)
    assert [s.kind for s in got] == ["note", "said", "file", "said", "result"]
    assert got[0].text == "started · model claude-opus-4-8[1m]"
    assert got[2].text == "Write /tmp/exp/repo/a.txt"
    assert got[4].text == "finished (2 turns)" and got[4].ok


def test_claude_code_bash_exit_and_failed_tool_by_call_id():
    lines = [
        {"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest -q"}},
            {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "x.py"}}]}},
        {"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "3 passed"},
            {"type": "tool_result", "tool_use_id": "t2", "is_error": True,
             "content": [{"type": "text", "text": "File does not exist."}]}]}},
    ]
    got = read("claude-code", "\n".join(map(json.dumps, lines)))
    assert [(s.kind, s.text) for s in got] == [
        ("command", "$ pytest -q"), ("tool", "Read x.py"), ("result", "exit 0"),
        ("error", "Read failed: File does not exist.")]
    assert got[2].detail == "3 passed"


def test_codex_commands_with_exit_status_messages_and_warnings():
    got = read("codex", CODEX_OK)
    texts = [s.text for s in got]
    assert texts[0] == "started"
    assert texts[1].startswith("warning: Model metadata")
    assert "$ /bin/bash -c 'printf hi > a.txt' → exit 0" in texts
    assert texts[-2:] == ["All done.", "finished (20314 tokens)"]
    assert [s.kind for s in read("codex", CODEX_429)][-2:] == ["error", "error"]
    mcp = read("codex", CODEX_MCP)
    assert mcp == [Step("tool", "baton_report wrote hello.txt (mcp)")]


def test_native_players():
    lines = [{"type": "init", "provider": "anthropic", "model": "claude-x"},
             {"type": "text", "text": "Reading the package.\nThen writing."},
             {"type": "tool", "name": "write_file", "summary": "textstats/words.py", "ok": True},
             {"type": "tool", "name": "run_command", "summary": "python3 -m unittest",
              "ok": False, "output": "exit 1: FAILED (errors=1)"},
             {"type": "error", "status": 429, "message": "slow down"},
             {"type": "result", "stop": "end_turn"}]
    got = read("anthropic", "\n".join(map(json.dumps, lines)))
    assert [(s.kind, s.text) for s in got] == [
        ("note", "started · anthropic claude-x"), ("said", "Reading the package."),
        ("file", "write_file textstats/words.py"), ("command", "$ python3 -m unittest"),
        ("error", "error: API error 429: slow down"), ("result", "finished (end_turn)")]
    assert got[1].detail == "Then writing." and got[3].ok is False
    assert got[3].detail == "exit 1: FAILED (errors=1)"


def test_generic_fallback_for_unknown_players_and_plain_text():
    lines = ['{"type":"tool_use","tool_name":"write_file","parameters":{"file_path":"a.py"}}',
             '{"type":"message","role":"assistant","content":"Hello there"}',
             "Applied edit to hello.txt", "", '{"type":"step_start"}']
    got = read("my-agent", "\n".join(lines))
    assert [(s.kind, s.text) for s in got] == [
        ("file", "write_file a.py"), ("said", "Hello there"),
        ("note", "Applied edit to hello.txt")]


def test_a_new_player_reads_its_output_with_its_own_decoder():
    class ToyDecoder(JsonDecoder):
        def decode(self, event):
            return [Said(event["say"])]

    class ToyPlayer(Player):
        name = "toy"

        def decoder(self):
            return ToyDecoder()

    toy = ToyPlayer()
    assert [s for s in toy.step_reader().feed('{"say": "hi"}')] == [Step("said", "hi")]
    assert toy.parses_output and toy.progress('{"say": "hi"}') == "hi"
    assert not Player().parses_output and Player().progress('{"say": "hi"}') is None


def test_the_planner_chat_never_echoes_its_json_answer():
    from baton_tui.planner.drafting import chat_line

    answer = json.dumps({"questions": [{"question": "Keep Redis \u2014 or not?",
                                        "recommendation": "keep"}]})
    line = json.dumps({"type": "assistant", "message": {"content": [
        {"type": "text", "text": "Here is what I need to know:\n" + answer}]}})
    got = [chat_line(s) for s in reader("claude-code").feed(line)]
    assert got == ["Here is what I need to know:"]
    bare = json.dumps({"type": "text", "text": answer})
    assert [chat_line(s) for s in reader("anthropic").feed(bare)] == ["wrote its answer"]
    assert chat_line(Step("note", "Reading additional input from stdin...")) is None
    read_call = json.dumps({"type": "tool", "name": "read_file", "summary": "README.md"})
    assert [chat_line(s) for s in reader("openai").feed(read_call)] == ["read_file README.md"]


class TestDetailSteps:
    """The task detail shows the agent's steps; `o` shows the raw output instead."""

    def test_steps_files_touched_and_the_raw_toggle(self, planned):
        from helpers.tui_support import drive, wait_for

        from baton_tui.plan.current import current
        from baton_tui.tui.screens.task_detail import TaskDetail

        plan_id = current(planned).row.id
        log = planned.root.parent / "attempt.log"
        log.write_text(CLAUDE_OK.strip() + "\nnot json at all\n")
        planned.store.new_attempt(plan_id, 1, "nonce", "claude-code", {}, str(log))
        planned.store.append(plan_id, 1, "task.started", {})

        async def script(pilot, app, seen):
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, TaskDetail))
            view = app.screen.query_one("#steps")
            await wait_for(pilot, lambda: view.count >= 6)
            shown = "\n".join(line.text for line in view.lines)
            assert "✎ Write /tmp/exp/repo/a.txt" in shown
            assert "✓ finished (2 turns)" in shown and "{" not in shown
            touched = str(app.screen.query_one("#touched").render())
            assert touched == "files touched: /tmp/exp/repo/a.txt"
            await pilot.press("r")  # r: raw output (o is the plan's model key)
            raw = app.screen.query_one("Log")
            assert raw.display and not view.display
            assert raw.lines[-1] == "not json at all"
            await pilot.press("r")
            assert view.display

        drive(planned, script)
