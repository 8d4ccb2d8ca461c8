"""The v1 plan document and its tasks: what the schema accepts and what it refuses."""

from __future__ import annotations

import json

import pytest

from baton_tui.core.errors import BatonError
from baton_tui.plan.model import PlanDocument, Task, parse_document, parse_text


def task(**over):
    base = {"id": 1, "title": "Do a thing", "prompt": "do it", "player": "claude-code"}
    base.update(over)
    return base


def doc(*tasks, **over):
    base = {"version": 1, "goal": "A goal", "tasks": list(tasks) or [task()]}
    base.update(over)
    return base


def rejected(raw) -> BatonError:
    with pytest.raises(BatonError) as info:
        parse_document(raw, "p.json")
    assert info.value.code == 2
    for line in info.value.lines:
        assert "\n" not in line and line.startswith("p.json: ")
    return info.value


def test_full_task_round_trips():
    raw = doc(task(model="sonnet", effort="medium", mode="build", depends_on=[], skills=["tdd"],
                   scope=["src/limiter.py"], checkpoint=True, check="pytest -q"),
              questions=[{"question": "Which DB?", "recommendation": "sqlite", "answer": "pg"}],
              autonomy="watch")
    parsed = parse_document(raw)
    assert parsed.dump() == parse_document(parsed.dump()).dump()
    t = parsed.task(1)
    assert (t.model, t.effort, t.checkpoint, t.check) == ("sonnet", "medium", True, "pytest -q")
    assert parsed.autonomy == "watch"
    assert parsed.questions[0].answer == "pg"


def test_defaults_are_filled():
    t = parse_document(doc(task())).task(1)
    assert t.mode == "build" and t.model is None and t.effort is None
    assert t.depends_on == [] and t.skills == [] and t.scope == [] and not t.checkpoint
    assert parse_document(doc()).autonomy == "guarded"


def test_unknown_key_in_task_is_named():
    err = rejected(doc(task(colour="red")))
    assert err.lines == ["p.json: tasks[0] (task 1).colour: unknown key"]


def test_unknown_top_level_key():
    err = rejected(doc(extra=1))
    assert err.lines == ["p.json: extra: unknown key"]


def test_unknown_question_key():
    err = rejected(doc(questions=[{"question": "q", "why": "x"}]))
    assert any("questions[0].why: unknown key" in line for line in err.lines)


@pytest.mark.parametrize("title", ["two\nlines", "cr\rhere", "   ", ""])
def test_title_must_be_one_nonblank_line(title):
    err = rejected(doc(task(title=title)))
    assert len(err.lines) == 1 and "title" in err.lines[0]


def test_title_is_stripped():
    assert parse_document(doc(task(title="  padded  "))).task(1).title == "padded"


@pytest.mark.parametrize("effort", ["extreme", "LOW", "", 3])
def test_effort_values(effort):
    err = rejected(doc(task(effort=effort)))
    assert "effort" in err.lines[0]


@pytest.mark.parametrize("effort", ["low", "medium", "high", None])
def test_effort_accepted(effort):
    assert parse_document(doc(task(effort=effort))).task(1).effort == effort


@pytest.mark.parametrize("mode", ["build", "research", "manual"])
def test_mode_accepted(mode):
    assert parse_document(doc(task(mode=mode))).task(1).mode == mode


@pytest.mark.parametrize("mode", ["deploy", "Build", None])
def test_mode_refused(mode):
    err = rejected(doc(task(mode=mode)))
    assert "mode" in err.lines[0]


@pytest.mark.parametrize("scope", ["/etc/passwd", "../outside", "src/../../x", "~/secrets",
                                   "a\\..\\..\\b", " "])
def test_scope_must_stay_inside_repo(scope):
    err = rejected(doc(task(scope=["src/ok.py", scope])))
    assert "scope" in err.lines[0] and "inside the repository" in err.lines[0]


@pytest.mark.parametrize("scope", ["src/*.py", "docs/**", "a..b/c", ".github/workflows/ci.yml"])
def test_scope_inside_repo_accepted(scope):
    assert parse_document(doc(task(scope=[scope]))).task(1).scope == [scope]


def test_duplicate_deps_refused():
    err = rejected(doc(task(id=1), task(id=2, depends_on=[1, 1])))
    assert err.lines == ["p.json: tasks[1] (task 2).depends_on: depends_on lists a task twice"]


def test_duplicate_skills_refused():
    err = rejected(doc(task(skills=["tdd", "tdd"])))
    assert "skills lists a skill twice" in err.lines[0]


@pytest.mark.parametrize("bad", [0, -1, "1", 1.5, None])
def test_id_must_be_positive_int(bad):
    err = rejected(doc(task(id=bad)))
    assert ".id:" in err.lines[0]


def test_version_must_be_1():
    assert "version" in rejected(doc(version=2)).lines[0]


def test_missing_required_keys_each_get_a_line():
    err = rejected({"version": 1, "tasks": [{"id": 1}]})
    joined = "\n".join(err.lines)
    assert "goal: missing required key" in joined
    assert "tasks[0] (task 1).title: missing required key" in joined
    assert "tasks[0] (task 1).player: missing required key" in joined
    assert len(err.lines) == 3


def test_empty_task_list_refused():
    assert "tasks" in rejected(doc(tasks=[])).lines[0]


def test_blank_model_and_check_become_none():
    t = parse_document(doc(task(model="  ", check=""))).task(1)
    assert t.model is None and t.check is None


def test_parse_text_broken_json_is_one_line():
    with pytest.raises(BatonError) as info:
        parse_text('{"version": 1,', "p.json")
    assert info.value.code == 2
    assert info.value.lines == [info.value.message]
    assert info.value.message.startswith("p.json: not valid JSON")


def test_parse_text_non_object():
    with pytest.raises(BatonError, match="must be a JSON object"):
        parse_text("[1, 2]", "p.json")


def test_task_lookup_unknown_id():
    parsed = parse_document(doc(task(id=1), task(id=4)))
    with pytest.raises(BatonError, match=r"no task 9 in the plan \(tasks: 1, 4\)"):
        parsed.task(9)


def test_deps_mapping_and_dump_is_json():
    parsed = parse_document(doc(task(id=1), task(id=2, depends_on=[1])))
    assert parsed.deps() == {1: [], 2: [1]}
    assert json.loads(json.dumps(parsed.dump())) == parsed.dump()
    assert isinstance(parsed, PlanDocument) and isinstance(parsed.tasks[0], Task)
