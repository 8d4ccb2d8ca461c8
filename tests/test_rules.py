"""The rule book: for every action × every task state × approval, the CLI's refusal and the
TUI's reason for a dimmed key are the same sentence — because both ask `rules.why_not`.

Each case is a real git repository and store: the task is put in its state with the same
events the engine writes, then the real command runs in-process (`cli.main`).
"""

from __future__ import annotations

import json

import pytest

from baton_tui import api
from baton_tui.api import Action, State
from baton_tui.cli import main
from baton_tui.tui.bindings import RULE_OF
from baton_tui.tui.widgets.header import header_text

from conftest import write_plan

# The events that put task 1 in each state (as the engine writes them).
REACH: dict[State, list[tuple[str, dict]]] = {
    State.DRAFT: [],
    State.QUEUED: [("task.queued", {})],
    State.RUNNING: [("task.started", {"attempt": 1})],
    State.DONE: [("task.started", {}), ("task.done", {"summary": "s"})],
    State.LANDED: [("task.started", {}), ("task.done", {}), ("task.landed", {"commit": "c"})],
    State.MERGED: [("task.started", {}), ("task.landed", {}), ("task.merged", {})],
    State.PAUSED: [("task.started", {}), ("task.paused", {"reason": "usage limit"})],
    State.CHECKPOINT: [("task.started", {}), ("task.checkpoint", {"what": "drop a table"})],
    State.FAILED: [("task.started", {}), ("task.failed", {"reason": "boom"})],
    State.PARKED: [("task.started", {}), ("task.failed", {}), ("task.parked", {})],
    State.DISCARDED: [("task.started", {}), ("task.failed", {}), ("task.discarded", {})],
}

# Each action as the person types it. Actions that can start a conductor when allowed are
# only run when the rule book refuses them (a refused command changes nothing).
CLI: dict[Action, list[str]] = {
    Action.EDIT_TITLE: ["task-title", "1", "Another title"],
    Action.EDIT_PROMPT: ["task-prompt", "1", "--text", "Another prompt"],
    Action.EDIT_PLAYER: ["task-player", "1", "{player}"],
    Action.EDIT_MODEL: ["task-model", "1", "default"],
    Action.EDIT_EFFORT: ["task-effort", "1", "default"],
    Action.EDIT_MODE: ["task-mode", "1", "build"],
    Action.EDIT_DEPS: ["task-deps", "1", ""],
    Action.EDIT_SKILLS: ["task-skills", "1", ""],
    Action.EDIT_SCOPE: ["task-scope", "1", "src/*"],
    Action.EDIT_CHECK: ["task-check", "1", "true"],
    Action.EDIT_CHECKPOINT: ["task-checkpoint", "1", "off"],
    Action.REMOVE_TASK: ["task-remove", "1"],
    Action.STOP_TASK: ["stop", "1"],
    Action.RETRY_TASK: ["retry", "1"],
    Action.DONE: ["done", "1"],
    Action.DISCARD: ["discard", "1"],
    Action.ANSWER_CHECKPOINT: ["checkpoint-answer", "1", "yes"],
    Action.RUN: ["run", "--detach"],
}
STARTS_A_CONDUCTOR = {Action.STOP_TASK, Action.RETRY_TASK, Action.DONE,
                      Action.ANSWER_CHECKPOINT, Action.RUN}


def _player(mode: str) -> str:
    return "anthropic" if mode == "research" else "script"  # script has no research profile


def _plan(repo, mode: str, approved: bool, state: State):
    write_plan(repo / "plan.json", [
        {"id": 1, "title": "Subject", "player": _player(mode), "mode": mode, "check": "true"},
        {"id": 2, "title": "After", "player": "script", "check": "true", "depends_on": [1]},
    ])
    assert main(["plan", "--from", str(repo / "plan.json")]) == 0
    ws = api.open_workspace()
    if approved:
        api.approve(ws)
    plan_id = ws.store.current_plan().id
    for kind, data in REACH[state]:
        ws.store.append(plan_id, 1, kind, data)
    return ws


def _cli(capsys, argv: list[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("approved", [True, False], ids=["approved", "not-approved"])
@pytest.mark.parametrize("mode", ["build", "manual", "research"])
@pytest.mark.parametrize("state", list(REACH), ids=str)
def test_cli_refusal_is_the_tuis_reason(repo, capsys, state, mode, approved):
    ws = None
    for action, argv in CLI.items():
        ws = ws or _plan(repo, mode, approved, state)
        snap = api.snapshot(ws.store)
        tui_reason = api.why_not(action, snap, snap.task(1), api.player_facts(ws))
        if tui_reason is None and action in STARTS_A_CONDUCTOR:
            continue
        code, err = _cli(capsys, [a.format(player=_player(mode)) for a in argv])
        if tui_reason is not None:  # refused: the same sentence, and nothing changed
            assert (code, err) == (2, f"baton: {tui_reason}\n"), (action, state, mode)
            continue
        assert code == 0, (action, state, mode, err)
        ws.close()  # the allowed edit changed the plan: start the next action afresh
        _reset(repo)
        ws = None


def _reset(repo) -> None:
    """A fresh store for the next action (the plan is loaded again from plan.json)."""
    ws = api.open_workspace()
    path = ws.paths.store_path
    ws.close()
    for suffix in ("", "-wal", "-shm"):
        target = path.with_name(path.name + suffix)
        if target.exists():
            target.unlink()


def test_every_key_of_the_plan_pane_is_judged_by_the_rule_book():
    from baton_tui.tui import bindings

    plan_actions = {b.action.removeprefix("app.") for b in bindings.PLAN}
    moves = {a for a in plan_actions if a.startswith("cursor")}  # j/k, pages, home/end
    assert moves == {"cursor(1)", "cursor(-1)", "cursor_page(1)", "cursor_page(-1)",
                     "cursor_to(0)", "cursor_to(-1)"}
    judged = plan_actions - {"swap_focus", bindings.EDIT_MENU} - moves  # `e`: by each field's rule
    assert judged == set(RULE_OF)


def test_a_key_without_a_task_says_so_and_no_plan_says_how_to_make_one():
    empty = api.snapshot_empty()
    assert api.why_not(Action.STOP_TASK, empty) == api.NO_PLAN
    assert api.why_not(Action.APPROVE, empty) == api.NO_PLAN


# --- one plan word everywhere ------------------------------------------------------------

PLAN_WORDS = {
    "draft": ([], False, None),
    "approved": ([], True, None),
    "waiting": ([(1, "task.started", {}), (1, "task.paused", {"reason": "limit"})], True, None),
    "failed": ([(1, "task.started", {}), (1, "task.failed", {"reason": "x"})], True, None),
    "complete": ([(t, k, {}) for t in (1, 2) for k in ("task.started", "task.landed")], True,
                 None),
    "merged": ([(t, k, {}) for t in (1, 2) for k in ("task.started", "task.landed",
                                                     "task.merged")], True, None),
    # every task landed, but the run-level check failed: the plan failed
    "failed-check": ([(t, k, {}) for t in (1, 2) for k in ("task.started", "task.landed")],
                     True, 1),
}


@pytest.mark.parametrize("name", list(PLAN_WORDS))
def test_status_text_json_header_and_board_agree_on_the_plan_word(repo, capsys, name):
    events, approved, check_exit = PLAN_WORDS[name]
    ws = _plan(repo, "build", approved, State.DRAFT)
    plan_id = ws.store.current_plan().id
    for task_id, kind, data in events:
        ws.store.append(plan_id, task_id, kind, data)
    if check_exit is not None:
        ws.store.append(plan_id, None, "run.check", {"head": "h", "exit": check_exit})
    word = name.split("-")[0]
    capsys.readouterr()
    assert main(["status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["plan"]["state"] == word
    main(["status"])
    assert f" · {word} · " in capsys.readouterr().out.splitlines()[0]
    board = api.snapshot_reader().read(ws.store)  # what the TUI's poller hands the board
    assert board.state == word
    assert f"· {word} ·" in header_text("repo", board).plain
