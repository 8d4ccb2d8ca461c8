"""An attempt's spec holds only keys `AttemptSpec` names: one a runner or the conductor
writes that the type does not know would be unchecked again (the runners' spec literals
are checked by mypy; what is noted later, key by key, is checked here on a real run)."""

from __future__ import annotations

import inspect
import typing

from baton_tui.store.attempt_spec import AttemptSpec, SpecKey
from helpers.scripted_kit import Scripted


def test_every_key_a_finished_attempt_holds_is_typed(repo):
    run = Scripted(repo)
    run.config(players=("a",))
    run.plan([{"id": 1, "title": "Edit", "prompt": "Edit.", "player": "a"},
              {"id": 2, "title": "Look", "prompt": "Look.", "player": "a", "mode": "research"}])
    assert run.run({"1": [{"write": "f.txt", "content": "x"}, {"commit": "f"},
                          {"report": "done", "summary": "ok"}],
                    "2": [{"report": "done", "summary": "looked"}]}) == 0
    plan = run.ws.store.current_plan()
    assert plan is not None
    attempts = run.ws.store.attempts(plan.id)
    assert len(attempts) == 2 and all(a.report for a in attempts)
    typed = set(typing.get_type_hints(AttemptSpec))
    for attempt in attempts:
        assert attempt.spec["cwd"] and attempt.spec["mode"] in ("build", "research")
        assert set(attempt.spec) <= typed, set(attempt.spec) - typed


def test_the_type_documents_each_key():
    """Every key says what it holds (a comment beside it in the source)."""
    source = inspect.getsource(AttemptSpec)
    for key in AttemptSpec.__annotations__:
        line = next(line for line in source.splitlines() if line.strip().startswith(f"{key}:"))
        assert "#" in line and len(line.split("#", 1)[1].strip()) > 5, key


def test_the_keys_a_note_may_set_are_the_typed_keys():
    assert set(typing.get_args(SpecKey)) == set(AttemptSpec.__annotations__)
