"""Numbers the CLI takes are refused when they would switch a limit off without a word (NaN,
infinity, a negative count), and the JSON Baton prints is always JSON — even from a store that
holds a number JSON cannot say."""

from __future__ import annotations

import json
import sqlite3

import pytest

from baton_tui.paths import find_repo

from conftest import write_plan


@pytest.fixture
def loaded(repo, baton):
    write_plan(repo / "p.json", [{"id": 1, "title": "Smoke", "player": "script", "check": "true"}])
    assert baton("plan", "--from", "p.json").returncode == 0
    return repo


def one_line_refusal(result, *needles: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("baton: "), result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.parametrize("argv, needle", [
    (["budget", "--cost", "nan"], "'nan' is not an amount"),
    (["budget", "--cost", "inf"], "'inf' is not an amount"),
    (["budget", "--cost", "-1"], "'-1' is not an amount"),
    (["budget", "--tokens", "-5"], "'-5' is not a whole number of 0 or more"),
    (["budget", "--tokens", "1e3"], "'1e3' is not a whole number"),
    (["run", "--until-failures", "-1"], "'-1' is not a whole number of 1 or more"),
    (["run", "--until-failures", "0"], "'0' is not a whole number of 1 or more"),
])
def test_bad_numbers_are_refused_in_one_line_and_change_nothing(loaded, baton, argv, needle):
    before = baton.json("status", "--json")
    one_line_refusal(baton(*argv), needle)
    after = baton.json("status", "--json")
    assert after["plan"]["budget"] == before["plan"]["budget"]
    assert after["conductor"] is None  # the run never started


@pytest.mark.parametrize("deadline", ["25:99", "soon", "2 fortnights"])
def test_a_bad_deadline_is_refused_before_the_plan_is_approved(loaded, baton, deadline):
    one_line_refusal(baton("run", "--approve", "--deadline", deadline),
                     f"--deadline: {deadline!r}", "clock time")
    after = baton.json("status", "--json")
    assert after["plan"]["approved"] is False and after["conductor"] is None


def test_good_budget_numbers_are_kept(loaded, baton):
    assert baton("budget", "--tokens", "5000", "--cost", "2.5").returncode == 0
    limits = baton.json("status", "--json")["plan"]["budget"]["limits"]
    assert limits["tokens"] == 5000 and limits["cost"] == 2.5


def strict(text: str) -> object:
    """Parse as a strict JSON reader would: NaN and Infinity are not JSON."""
    def refuse(word: str) -> None:
        raise AssertionError(f"{word} in JSON output")

    return json.loads(text, parse_constant=refuse)


def test_status_and_log_json_stay_json_when_the_store_holds_nan(loaded, baton):
    """A store written before the refusal (or by hand) holds NaN in a budget event and a
    task's report: `status --json` and `log --json` still print JSON, the number as null."""
    assert baton("budget", "--cost", "3").returncode == 0
    db = sqlite3.connect(find_repo(loaded).store_path)
    with db:
        db.execute("UPDATE plans SET options = json_set(options, '$.budget.cost', 'X')")
        db.execute("UPDATE plans SET options = replace(options, '\"X\"', 'NaN')")
        db.execute("INSERT INTO events (plan_id, task_id, kind, data, ts) "
                   "VALUES (1, 1, 'task.usage', '{\"tokens\": 5, \"cost\": Infinity}', 0)")
    db.close()
    out = baton("status", "--json")
    assert out.returncode == 0, out.stderr
    assert strict(out.stdout)["plan"]["budget"]["limits"]["cost"] is None
    log = baton("log", "--json")
    assert log.returncode == 0, log.stderr
    events = [strict(line) for line in log.stdout.splitlines()]
    assert any(e["kind"] == "task.usage" and e["data"]["cost"] is None for e in events)


def test_a_task_named_nan_keeps_its_title(loaded, baton):
    """The guard looks for NaN in the text; a title that says it is left as it is."""
    assert baton("task-title", "1", "Fix NaN and Infinity parsing").returncode == 0
    status = strict(baton("status", "--json").stdout)
    assert status["tasks"][0]["title"] == "Fix NaN and Infinity parsing"


def test_the_store_never_writes_nan(loaded):
    """What an agent reports (`report --cost nan` parses as a float) is stored as null."""
    from baton_tui.store.db import Store

    store = Store(find_repo(loaded).store_path)
    try:
        event = store.append(store.current_plan_id(), 1, "task.usage",
                             {"cost": float("nan"), "tokens": 3, "more": [float("-inf")]})
        text = store.conn.execute("SELECT data FROM events WHERE id = ?", (event,)).fetchone()[0]
    finally:
        store.close()
    assert strict(text) == {"cost": None, "tokens": 3, "more": [None]}


@pytest.mark.slow
def test_an_agents_report_with_bad_numbers_is_refused_in_one_line(repo, baton):
    """Inside a real task, `baton report … --tokens -5` (or a cost of nan, inf, -1) is refused
    with one line the agent reads, exit 2, and counts nothing; the good report after it counts."""
    from helpers.run_kit import events, load_plan, program, task, write_config

    write_config(repo, {"counter": program("bad_usage.py")})
    load_plan(baton, [task(1, "Counts", player="counter")], approve=True)
    result = baton("run", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    final = baton.json("status", "--json")["tasks"][0]
    assert final["state"] == "landed" and final["tokens"] == 7 and final["cost"] == 0.5, final
    log = baton("logs", "1").stdout
    said = [line for line in log.splitlines() if line.startswith("refused report exit status")]
    assert len(said) == 5, log
    for line, needle in zip(said, ["'-5' is not a whole number of 0 or more"] * 2
                            + [f"'{v}' is not an amount of 0 or more" for v in ("nan", "inf", "-1")]):
        assert line.startswith("refused report exit status: 2; said: baton: report: "), line
        assert needle in line and line.count("baton:") == 1, line
    usage = [e["data"] for e in events(baton) if e["kind"] == "task.usage"]
    assert usage == [{"attempt": usage[0]["attempt"], "tokens": 7, "cost": 0.5}], usage
