"""Hostile plan text and config values, generated: control characters, huge numbers, nesting.

Whatever the input, the outcome is pinned: a document or config is either accepted (and then
holds no control character a terminal would obey) or refused with BatonError — one line per
problem, none of them carrying a raw control character — never another exception, a
traceback or a hang.
"""

from __future__ import annotations

import json
import re

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baton_tui.cli import main
from baton_tui.config import load_config
from baton_tui.core.errors import BatonError
from baton_tui.plan.model import MAX_ID, parse_text

# What a terminal would obey: C0 but tab/newline, DEL, C1, bidi overrides (and CR alone).
OBEYED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
CONTROLS = st.one_of(st.characters(min_codepoint=0, max_codepoint=0x1F),
                     st.characters(min_codepoint=0x7F, max_codepoint=0x9F),
                     st.sampled_from(["\u202e", "\u2066", "\u2028"]))
FIELDS = ["goal", "title", "prompt", "check", "model", "scope", "skills", "question"]


def base_doc() -> dict:
    return {"version": 1, "goal": "Sample goal",
            "questions": [{"question": "Which?", "recommendation": "this"}],
            "tasks": [{"id": 1, "title": "First", "prompt": "Do it.", "player": "script",
                       "check": "true", "scope": ["src/a.py"]},
                      {"id": 2, "title": "Second", "player": "anthropic", "model": "m",
                       "depends_on": [1], "skills": ["tdd"]}]}


def put(doc: dict, field: str, value: object) -> None:
    """Set `field` somewhere it lives in the document."""
    if field == "goal":
        doc["goal"] = value
    elif field == "question":
        doc["questions"][0]["question"] = value
    elif field in ("scope", "skills"):
        doc["tasks"][0 if field == "scope" else 1][field] = [value]
    elif field == "model":
        doc["tasks"][1]["model"] = value
    else:
        doc["tasks"][0][field] = value


def refused_cleanly(text: str) -> list[str]:
    """parse_text's outcome: [] when accepted, else its lines (checked to be clean)."""
    try:
        parse_text(text, "p.json")
    except BatonError as exc:
        assert exc.code == 2 and exc.lines
        for line in exc.lines:
            assert not OBEYED.search(line) and "\n" not in line, line
        return exc.lines
    return []


def quick(n: int) -> settings:
    return settings(max_examples=n, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


@quick(300)
@given(field=st.sampled_from(FIELDS), before=st.text(max_size=20), bad=CONTROLS,
       after=st.text(max_size=20))
def test_plan_text_with_control_characters(field, before, bad, after):
    doc = base_doc()
    value = (before + bad + after).strip() or bad
    put(doc, field, value)
    lines = refused_cleanly(json.dumps(doc))
    multiline = field in ("goal", "prompt", "check", "question")
    allowed = "\t\n\r" if multiline else "\t"
    one_line_breaks = "" if multiline else "\n\r\u2028\u2029"
    if any((OBEYED.match(c) and c not in allowed) or c in one_line_breaks for c in value):
        assert lines, (field, value)  # refused (why: the control character, or what it made)


@quick(150)
@given(where=st.sampled_from(["id", "dep"]),
       number=st.one_of(st.integers(MAX_ID + 1, 10**40), st.integers(-(10**40), 0)))
def test_huge_and_negative_task_ids(where, number):
    doc = base_doc()
    if where == "id":
        doc["tasks"][0]["id"] = number
    else:
        doc["tasks"][1]["depends_on"] = [number]
    assert refused_cleanly(json.dumps(doc))


@quick(60)
@given(field=st.sampled_from(FIELDS + ["tasks", "depends_on"]),
       depth=st.one_of(st.integers(2, 50), st.integers(900, 1100), st.integers(5000, 50_000)),
       kind=st.sampled_from("[{"))
def test_nesting_anywhere(field, depth, kind):
    doc = base_doc()
    put_at = "tasks" if field == "tasks" else field
    marker = "__NEST__"
    if put_at == "depends_on":
        doc["tasks"][1]["depends_on"] = marker
    elif put_at == "tasks":
        doc["tasks"] = marker
    else:
        put(doc, put_at, marker)
    opener, closer = ("[", "]") if kind == "[" else ('{"a":', "}")
    nest = opener * depth + "1" + closer * depth
    assert refused_cleanly(json.dumps(doc).replace(json.dumps(marker), nest))


def test_cli_refuses_each_hostile_document_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    docs = []
    for field in FIELDS:
        doc = base_doc()
        put(doc, field, "x\x1b]0;pwned\x07y")
        docs.append(json.dumps(doc))
    deep = base_doc()
    deep["tasks"][0]["id"] = 10**20
    docs += [json.dumps(deep), '{"version": 1, "tasks": ' + "[" * 100_000]
    for n, text in enumerate(docs):
        path = tmp_path / f"{n}.json"
        path.write_text(text)
        assert main(["plan", "--from", str(path)]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and "\x1b" not in err and "\x07" not in err, err
    assert not (tmp_path / ".baton").exists()


# -- config values --------------------------------------------------------------------------
hostile_text = st.builds(lambda a, c, b: a + c + b, st.text(max_size=8), CONTROLS,
                         st.text(max_size=8))
hostile_number = st.one_of(st.integers(-(10**30), 10**30), st.floats(allow_nan=True,
                                                                      allow_infinity=True))
KEYS = [("planner",), ("autonomy",), ("limits", "max_parallel"), ("limits", "stall"),
        ("limits", "max_wait"), ("limits", "checkpoint_wait"), ("limits", "retries"),
        ("worktree", "setup"), ("checks", "run"), ("players", "default"),
        ("players", "codex", "bin"), ("players", "codex", "max_parallel"),
        ("players", "custom", "mine", "command")]


def nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


@quick(250)
@given(key=st.sampled_from(KEYS + [("worktree", "copy"), ("players", "codex", "env", "X")]),
       value=st.one_of(hostile_text, hostile_number, st.integers(1, 2000).map(nested),
                       st.lists(hostile_text, max_size=3)))
def test_config_values_are_accepted_or_one_clean_line(tmp_path_factory, key, value):
    root = tmp_path_factory.mktemp("cfg")
    raw: dict = {}
    node = raw
    for part in key[:-1]:
        node = node.setdefault(part, {})
    node[key[-1]] = value
    try:
        (root / "baton.toml").write_text(tomli_w.dumps(raw))
    except (ValueError, TypeError, RecursionError):
        return  # not expressible as TOML
    try:
        config = load_config(root).config
    except BatonError as exc:
        assert exc.code == 2 and exc.lines
        for line in exc.lines:
            assert not OBEYED.search(line), line
        return
    limits = config.limits
    for seconds in (limits.stall, limits.max_wait, limits.checkpoint_wait):
        assert seconds == seconds and seconds != float("inf")  # no nan, no inf gets through
    assert limits.stall > 0
    for pattern in config.worktree.copy_:
        assert not pattern.startswith(("/", "~")) and ".." not in pattern.split("/")


@pytest.mark.parametrize("text", [
    "[limits]\nstall = nan\n", "[limits]\nstall = -inf\n", "[limits]\nmax_wait = inf\n",
    "[limits]\nmax_parallel = 100000000000000000000000\n", 'planner = "a\\u0000b"\n',
    "x = " + "[" * 3000 + "]" * 3000 + "\n", "[worktree]\ncopy = ['~/.aws/credentials']\n",
])
def test_config_edge_cases_refused(tmp_path, text):
    (tmp_path / "baton.toml").write_text(text)
    with pytest.raises(BatonError) as caught:
        load_config(tmp_path)
    assert len(caught.value.lines) == 1 and not OBEYED.search(caught.value.lines[0])
