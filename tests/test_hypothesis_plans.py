"""Generated plan documents (well over 1,000 in all): valid ones round-trip through
`parse_document`/`dump` and through `baton plan --from` → `baton plan --json`; invalid ones
(unknown keys, cycles, missing deps, unknown players, wrong types) give exit 2 with one clear
line per problem, no traceback, and leave the stored plan untouched.

The bulk runs in-process (`baton_tui.cli.main`) so it stays fast; a sample runs the real CLI
in a subprocess."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from baton_tui.cli import main
from baton_tui.config import Config
from baton_tui.core.errors import BatonError
from baton_tui.paths import find_repo
from baton_tui.plan.model import parse_document, parse_text
from baton_tui.plan.validate import ensure_valid
from baton_tui.players.registry import Catalog

SKILLS = ["debug", "grilling", "review", "tdd", "to-spec", "verify"]
ANY_MODEL_PLAYERS = ["claude-code", "codex", "opencode", "gemini", "cursor-agent", "goose", "amp",
                     "anthropic", "openai"]
CATALOG = Catalog.from_config(Config())


def fixture_ok(n: int) -> settings:
    """Settings for a test that reuses one function-scoped repo across its examples."""
    return settings(max_examples=n, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


ALPHABET = "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 -_.,:;!?'\"()[]{}/\\$`|&<>*é ß→✓中\t"
line_text = st.text(ALPHABET, min_size=1, max_size=40)
titles = line_text.filter(lambda s: s.strip() != "")
prompts = st.text(ALPHABET + "\n", max_size=120)
scope_entry = st.from_regex(r"\A[a-z_]{1,8}(/[a-z_]{1,8}){0,2}(\.py|/\*\*|/\*\.md)?\Z")


ANY_MODEL = ["sonnet", "opus", "gpt-5", "gemini-2.5-pro", "o3", "local/qwen"]


@st.composite
def valid_task(draw, task_id: int, earlier: list[int]) -> dict:
    """A task the player catalog accepts (the catalog is asked, so this follows it as it grows)."""
    player = draw(st.sampled_from([*ANY_MODEL_PLAYERS, "aider", "script"]))
    adapter = CATALOG.players[player]
    modes = ["build", "manual"] + (["research"] if adapter.research else [])
    mode = draw(st.sampled_from(modes))
    task: dict = {"id": task_id, "title": draw(titles), "player": player}
    if draw(st.booleans()):
        task["prompt"] = draw(prompts)
    if player == "script":
        task["check"] = draw(line_text.filter(lambda s: s.strip() != ""))
    else:
        catalog = adapter.catalog()
        task["model"] = draw(st.one_of(st.none(), st.sampled_from(
            list(catalog) if catalog else ANY_MODEL)))
        if adapter.efforts:
            task["effort"] = draw(st.sampled_from([None, *adapter.efforts]))
        if draw(st.booleans()):
            task["check"] = draw(st.one_of(st.none(), line_text))
    task["mode"] = mode
    if earlier:
        task["depends_on"] = draw(st.lists(st.sampled_from(earlier), unique=True, max_size=3))
    task["skills"] = draw(st.lists(st.sampled_from(SKILLS), unique=True, max_size=3))
    task["scope"] = draw(st.lists(scope_entry, max_size=3))
    if adapter.checkpoints or mode == "manual":
        task["checkpoint"] = draw(st.booleans())
    # drop some optional keys entirely, so defaults are exercised too
    for key in ("skills", "scope", "mode"):
        if draw(st.booleans()) and (key != "mode" or mode == "build"):
            task.pop(key, None)
    return task


@st.composite
def valid_doc(draw) -> dict:
    n = draw(st.integers(1, 8))
    ids = draw(st.lists(st.integers(1, 50), min_size=n, max_size=n, unique=True))
    tasks = []
    for i, task_id in enumerate(ids):
        tasks.append(draw(valid_task(task_id, ids[:i])))
    doc = {"version": 1, "goal": draw(titles), "tasks": tasks}
    if draw(st.booleans()):
        doc["autonomy"] = draw(st.sampled_from(["guarded", "watch", "autopilot"]))
    if draw(st.booleans()):
        doc["questions"] = draw(st.lists(st.fixed_dictionaries(
            {"question": titles, "recommendation": line_text},
            optional={"answer": st.one_of(st.none(), line_text)}), max_size=3))
    return doc


WRONG_TYPES = [
    ("task", "id", "1"), ("task", "id", 2.0), ("task", "id", True), ("task", "title", 5),
    ("task", "depends_on", "1"), ("task", "checkpoint", "yes"), ("task", "checkpoint", 1),
    ("task", "skills", "tdd"), ("task", "scope", "src"), ("task", "effort", 3),
    ("task", "mode", ["build"]), ("task", "player", None), ("task", "prompt", ["a"]),
    ("doc", "goal", 3), ("doc", "version", "1"), ("doc", "tasks", {}), ("doc", "autonomy", 1),
    ("doc", "questions", "why?"),
]


@st.composite
def invalid_doc(draw) -> tuple[dict, str, str]:
    """A valid document with exactly one problem; returns (doc, kind, expected fragment)."""
    doc = draw(valid_doc())
    tasks = doc["tasks"]
    kind = draw(st.sampled_from(["unknown-key", "unknown-task-key", "cycle", "self-dep",
                                 "missing-dep", "unknown-player", "wrong-type", "bad-effort",
                                 "escaping-scope", "multiline-title", "unknown-skill"]))
    t = draw(st.sampled_from(tasks))
    key = draw(st.from_regex(r"\A[a-z][a-z_]{0,12}\Z"))
    if kind == "unknown-key":
        assume(key not in doc and key not in ("version", "goal", "autonomy", "questions", "tasks"))
        doc[key] = draw(st.integers())
        return doc, kind, f"{key}: unknown key"
    if kind == "unknown-task-key":
        from baton_tui.plan.model import Task
        assume(key not in Task.model_fields)
        t[key] = "x"
        return doc, kind, f".{key}: unknown key"
    if kind == "cycle":
        assume(len(tasks) >= 2)
        first, last = tasks[0], tasks[-1]
        last["depends_on"] = sorted(set(last.get("depends_on", [])) | {first["id"]})
        first["depends_on"] = [last["id"]]
        return doc, kind, "form a cycle"
    if kind == "self-dep":
        t["depends_on"] = [*t.get("depends_on", []), t["id"]]
        return doc, kind, f"task {t['id']}: depends on itself"
    if kind == "missing-dep":
        t["depends_on"] = [*t.get("depends_on", []), 999]
        return doc, kind, f"task {t['id']}: depends on task 999, which does not exist"
    if kind == "unknown-player":
        name = draw(st.from_regex(r"\A[a-z][a-z0-9-]{2,12}\Z"))
        assume(name not in CATALOG.players)
        t["player"] = name
        return doc, kind, f"task {t['id']}: unknown player {name!r}"
    if kind == "wrong-type":
        where, field, value = draw(st.sampled_from(WRONG_TYPES))
        (t if where == "task" else doc)[field] = value
        return doc, kind, f"{field}: "
    if kind == "bad-effort":
        value = draw(st.text(min_size=1, max_size=10).filter(
            lambda s: s not in ("low", "medium", "high")))
        t["effort"] = value
        return doc, kind, ".effort: input should be 'low', 'medium' or 'high'"
    if kind == "escaping-scope":
        t["scope"] = [draw(st.sampled_from(["/etc", "../up", "a/../../b", "~/x"]))]
        return doc, kind, "must be a path inside the repository"
    if kind == "multiline-title":
        t["title"] = draw(titles) + "\n" + draw(titles)
        return doc, kind, "title must be one line"
    t["skills"] = ["no-such-skill"]
    return doc, kind, "unknown skill 'no-such-skill'"


def check(raw: dict, source: str = "p.json"):
    """What `baton plan --from` does before storing: schema, then whole-plan rules."""
    return ensure_valid(parse_document(raw, source), CATALOG, set(SKILLS), source)


# --- pure: parse / validate / dump -------------------------------------------------------

@settings(max_examples=400, deadline=None)
@given(valid_doc())
def test_valid_documents_round_trip(raw):
    doc = check(raw)
    dumped = doc.dump()
    again = check(json.loads(json.dumps(dumped)))
    assert again.dump() == dumped
    assert [t["id"] for t in dumped["tasks"]] == [t["id"] for t in raw["tasks"]]
    for src, out in zip(raw["tasks"], dumped["tasks"]):
        assert out["title"] == src["title"].strip()
        assert out["depends_on"] == src.get("depends_on", [])
        assert out["player"] == src["player"]
        assert out["mode"] == src.get("mode", "build")
        assert out["skills"] == src.get("skills", [])
    assert parse_text(json.dumps(raw), "p.json").dump() == dumped


@settings(max_examples=400, deadline=None)
@given(invalid_doc())
def test_invalid_documents_give_one_clear_line(case):
    raw, kind, fragment = case
    with pytest.raises(BatonError) as info:
        check(raw)
    err = info.value
    assert err.code == 2
    assert len(err.lines) == 1, (kind, err.lines)
    line = err.lines[0]
    assert "\n" not in line and line.startswith("p.json: ")
    assert fragment in line, (kind, line)


# --- in-process CLI: the stored plan --------------------------------------------------------

def snapshot(root: Path) -> list[tuple]:
    path = find_repo(root).store_path
    if not path.exists():
        return []
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT id, slug, doc, revision, archived, approved FROM plans "
                            "ORDER BY id").fetchall()


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@fixture_ok(250)
@given(case=st.one_of(valid_doc().map(lambda d: (d, None, None)), invalid_doc()))
def test_cli_in_process_loads_valid_and_refuses_invalid(repo, capsys, case):
    raw, kind, fragment = case
    path = repo / "p.json"
    path.write_text(json.dumps(raw))
    before = snapshot(repo)
    code, out, err = run(capsys, "plan", "--from", "p.json")
    if kind is None:
        assert code == 0, err
        code, out, err = run(capsys, "plan", "--json")
        assert code == 0, err
        assert json.loads(out) == check(raw).dump()
        after = snapshot(repo)
        assert len(after) == len(before) + 1 and after[-1][4] == 0
    else:
        assert code == 2
        lines = err.splitlines()
        assert len(lines) == 1, (kind, lines)
        assert lines[0].startswith("baton: p.json: ") and fragment in lines[0]
        assert "Traceback" not in err and out == ""
        assert snapshot(repo) == before


@fixture_ok(150)
@given(text=st.one_of(st.text(max_size=80), st.binary(max_size=80).map(
    lambda b: b.decode("latin-1")), st.from_regex(r"\A\{.{0,40}\Z")))
def test_cli_in_process_garbage_is_one_line(repo, capsys, text):
    try:
        decoded = json.loads(text)
    except ValueError:
        decoded = None
    assume(not (isinstance(decoded, dict) and decoded.get("version") == 1))
    (repo / "p.json").write_text(text, encoding="utf-8", errors="surrogatepass")
    before = snapshot(repo)
    code, out, err = run(capsys, "plan", "--from", "p.json")
    assert code == 2
    lines = err.splitlines()
    assert len(lines) >= 1 and all(line.startswith("baton: p.json") for line in lines)
    assert "Traceback" not in err
    if decoded is None or not isinstance(decoded, dict):
        assert len(lines) == 1
    assert snapshot(repo) == before


# --- the real CLI, a sample ---------------------------------------------------------------------

@fixture_ok(24)
@given(case=st.one_of(valid_doc().map(lambda d: (d, None, None)), invalid_doc()))
def test_real_cli_sample(repo, case):
    raw, kind, fragment = case
    (repo / "p.json").write_text(json.dumps(raw))
    before = snapshot(repo)
    result = subprocess.run([sys.executable, "-m", "baton_tui", "plan", "--from", "p.json",
                             "--json"], cwd=repo, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in result.stderr
    if kind is None:
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout) == check(raw).dump()
        stored = json.loads(snapshot(repo)[-1][2])
        assert stored == check(raw).dump()
    else:
        assert result.returncode == 2
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and fragment in lines[0], (kind, lines)
        assert snapshot(repo) == before
