"""The foundation's commands through the real CLI in a subprocess: bad input (exit 2, the
message on stderr, no traceback, the stored plan unchanged), the current-plan rules,
`status`, `log`, `trust`."""

from __future__ import annotations

import json
import sqlite3

import pytest

from baton_tui.paths import find_repo
from baton_tui.store.db import Store

from conftest import write_plan

TASKS = [
    {"id": 1, "title": "Schema", "prompt": "add the schema", "player": "claude-code",
     "model": "sonnet", "effort": "high", "skills": ["tdd"], "scope": ["src/schema.py"]},
    {"id": 2, "title": "API", "prompt": "add the api", "player": "codex", "depends_on": [1],
     "check": "pytest -q"},
    {"id": 3, "title": "Smoke", "player": "script", "check": "true", "depends_on": [2]},
]


def fails(result, *needles: str) -> str:
    """Exit 2, every needle on stderr, nothing on stdout, no traceback."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr
    for line in result.stderr.splitlines():
        assert line.startswith("baton: "), line
    return result.stderr


def start_task(task_id: int, kind: str = "task.started", data: dict | None = None) -> None:
    store = Store(find_repo().store_path)
    try:
        store.append(store.current_plan().id, task_id, kind, data or {})
    finally:
        store.close()


@pytest.fixture
def loaded(repo, baton):
    write_plan(repo / "p.json", TASKS, goal="Add rate limiting")
    result = baton("plan", "--from", "p.json")
    assert result.returncode == 0, result.stderr
    assert "add-rate-limiting" in result.stdout
    return repo


def test_load_and_print_round_trips(loaded, baton):
    doc = baton.json("plan", "--json")
    assert doc["version"] == 1 and doc["goal"] == "Add rate limiting"
    assert [t["id"] for t in doc["tasks"]] == [1, 2, 3]
    assert doc["tasks"][0]["model"] == "sonnet" and doc["tasks"][1]["depends_on"] == [1]
    # what plan --json prints, plan --from loads again unchanged
    (loaded / "again.json").write_text(json.dumps(doc))
    assert baton("plan", "--from", "again.json").returncode == 0
    assert baton.json("plan", "--json") == doc
    human = baton("plan")
    assert human.returncode == 0 and "Schema" in human.stdout and "not approved" in human.stdout


def test_status_says_approval_once(loaded, baton):
    first = baton("status").stdout.splitlines()[0]
    assert first.startswith("plan add-rate-limiting · draft · ") and first.endswith("not approved")
    assert baton("approve").returncode == 0
    first = baton("status").stdout.splitlines()[0]
    assert first.count("approved") == 1 and " · approved · " in first, first


def test_status_shape(loaded, baton):
    status = baton.json("status", "--json")
    assert set(status) >= {"plan", "conductor", "tasks"}
    assert status["plan"]["goal"] == "Add rate limiting"
    assert status["plan"]["slug"] == "add-rate-limiting"
    assert status["plan"]["approved"] is False
    assert status["plan"]["autonomy"] == "guarded"
    assert status["conductor"] is None
    for task in status["tasks"]:
        assert {"id", "title", "player", "mode", "state"} <= set(task)
        assert task["state"] == "draft"
    assert status["tasks"][0]["branch"] == "baton/add-rate-limiting/1-schema"
    plain = baton("status")
    assert plain.returncode == 0 and "add-rate-limiting" in plain.stdout


def test_status_and_log_without_a_store(repo, baton):
    result = baton("status", "--json")
    assert result.returncode == 0
    assert json.loads(result.stdout) == {"plan": None, "conductor": None, "tasks": [],
                                         "summary": None}
    assert baton("status").returncode == 0
    log = baton("log", "--json")
    assert log.returncode == 0 and log.stdout == ""
    assert not find_repo(repo).store_path.exists()  # reading never creates the store


def test_log_json_is_a_projection_of_events(loaded, baton):
    baton("approve")
    baton("task-title", "2", "Better API")
    lines = baton("log", "--json").stdout.splitlines()
    events = [json.loads(line) for line in lines]
    assert [e["kind"] for e in events] == ["plan.created", "plan.approved", "plan.edited",
                                           "plan.approval_voided"]
    assert [e["id"] for e in events] == sorted(e["id"] for e in events)
    assert events[2]["task"] == 2 and events[2]["data"]["value"] == "Better API"
    assert all({"id", "ts", "plan", "task", "kind"} <= set(e) for e in events)
    text = baton("log")
    assert text.returncode == 0 and "plan.approval_voided" in text.stdout


def test_approve(loaded, baton, repo):
    result = baton("approve")
    assert result.returncode == 0, result.stderr
    status = baton.json("status", "--json")
    assert status["plan"]["approved"] is True
    assert status["plan"]["base_branch"] == "main"
    assert len(status["plan"]["base_commit"]) == 40


# --- bad input ----------------------------------------------------------------------

def _stored(baton) -> dict:
    return baton.json("plan", "--json")


BAD_DOCS = {
    "malformed": ('{"version": 1, "goal": "x", "tasks": [', ["not valid JSON"]),
    "not-object": ('[1]', ["must be a JSON object"]),
    "unknown-key": (json.dumps({"version": 1, "goal": "x", "tasks": [
        {"id": 1, "title": "a", "player": "codex", "colour": "red"}]}),
        ["tasks[0] (task 1).colour: unknown key"]),
    "cycle": (json.dumps({"version": 1, "goal": "x", "tasks": [
        {"id": 1, "title": "a", "player": "codex", "depends_on": [2]},
        {"id": 2, "title": "b", "player": "codex", "depends_on": [1]}]}), ["form a cycle"]),
    "self-dep": (json.dumps({"version": 1, "goal": "x", "tasks": [
        {"id": 1, "title": "a", "player": "codex", "depends_on": [1]}]}), ["depends on itself"]),
    "unknown-player": (json.dumps({"version": 1, "goal": "x", "tasks": [
        {"id": 1, "title": "a", "player": "nobody"}]}), ["task 1: unknown player 'nobody'"]),
    "missing-dep": (json.dumps({"version": 1, "goal": "x", "tasks": [
        {"id": 1, "title": "a", "player": "codex", "depends_on": [5]}]}),
        ["task 1: depends on task 5, which does not exist"]),
    "rejected-model": (json.dumps({"version": 1, "goal": "x", "tasks": [
        {"id": 1, "title": "a", "player": "script", "model": "gpt-5", "check": "true"}]}),
        ["task 1: player 'script' runs no model"]),
    "catalog-model": (json.dumps({"version": 1, "goal": "x", "tasks": [
        {"id": 1, "title": "a", "player": "claude-code", "model": "gpt-5"}]}),
        ["task 1: player 'claude-code' cannot start model 'gpt-5'"]),
    "duplicate-id": (json.dumps({"version": 1, "goal": "x", "tasks": [
        {"id": 1, "title": "a", "player": "codex"}, {"id": 1, "title": "b", "player": "codex"}]}),
        ["task 1: duplicate id"]),
    "wrong-type": (json.dumps({"version": 1, "goal": "x", "tasks": [
        {"id": "1", "title": "a", "player": "codex"}]}), ["tasks[0].id: input should be"]),
    "bad-effort": (json.dumps({"version": 1, "goal": "x", "tasks": [
        {"id": 1, "title": "a", "player": "codex", "effort": "extreme"}]}), ["effort"]),
    "script-no-check": (json.dumps({"version": 1, "goal": "x", "tasks": [
        {"id": 1, "title": "a", "player": "script"}]}), ["needs a check command"]),
}


@pytest.mark.parametrize("name", sorted(BAD_DOCS))
def test_bad_plan_document_refused_and_store_untouched(loaded, baton, name):
    text, needles = BAD_DOCS[name]
    before = _stored(baton)
    (loaded / "bad.json").write_text(text)
    err = fails(baton("plan", "--from", "bad.json"), *needles)
    assert all(line.startswith("baton: bad.json: ") for line in err.splitlines())
    assert _stored(baton) == before
    assert baton.json("status", "--json")["plan"]["slug"] == "add-rate-limiting"


def test_bad_document_on_empty_repo_stores_nothing(repo, baton):
    (repo / "bad.json").write_text(BAD_DOCS["cycle"][0])
    fails(baton("plan", "--from", "bad.json"), "form a cycle")
    assert baton.json("status", "--json")["plan"] is None


def test_several_problems_one_line_each(loaded, baton):
    (loaded / "bad.json").write_text(json.dumps({"version": 1, "goal": "x", "tasks": [
        {"id": 1, "title": "a", "player": "nobody", "depends_on": [9]},
        {"id": 2, "title": "b", "player": "codex", "depends_on": [3]},
        {"id": 3, "title": "c", "player": "codex", "depends_on": [2]}]}))
    err = fails(baton("plan", "--from", "bad.json"))
    lines = err.splitlines()
    assert len(lines) == 3
    assert any("unknown player 'nobody'" in line for line in lines)
    assert any("depends on task 9" in line for line in lines)
    assert any("form a cycle" in line for line in lines)


def test_missing_file(repo, baton):
    fails(baton("plan", "--from", "nope.json"), "nope.json: no such file")


@pytest.mark.parametrize("argv,needles", [
    (["task-effort", "1", "extreme"], ["effort 'extreme' is not one of low, medium, high"]),
    (["task-deps", "1", "99"], ["task 1: depends on task 99, which does not exist"]),
    (["task-deps", "1", "3"], ["form a cycle"]),
    (["task-deps", "1", "x"], ["'x' is not a task id"]),
    (["task-checkpoint", "1", "maybe"], ["checkpoint takes on or off, not 'maybe'"]),
    (["task-title", "9", "x"], ["no task 9 in the plan (tasks: 1, 2, 3)"]),
    (["task-player", "9", "codex"], ["no task 9"]),
    (["task-remove", "9"], ["no task 9"]),
    (["task-player", "1", "nobody"], ["unknown player 'nobody'"]),
    (["task-model", "3", "gpt-5"], ["player 'script' runs no model"]),
    (["task-model", "1", "gpt-5"], ["player 'claude-code' cannot start model 'gpt-5'"]),
    (["task-mode", "1", "deploy"], ["mode 'deploy' is not one of build, research, manual"]),
    (["task-scope", "1", "../elsewhere"], ["inside the repository"]),
    (["task-skills", "1", "juggling"], ["unknown skill 'juggling'"]),
    (["task-mode", "3", "research"], ["player 'script' cannot run research tasks"]),
    (["task-check", "3", ""], ["player 'script' needs a check command"]),
    (["task-add", "--title", "x", "--player", "codex", "--deps", "42"], ["depends on task 42"]),
    (["task-add", "--title", "x", "--player", "nobody"], ["unknown player 'nobody'"]),
    (["task-remove", "1"], ["task 1 cannot be removed"]),
])
def test_bad_edit_refused_and_store_untouched(loaded, baton, argv, needles):
    baton("approve")
    before = _stored(baton)
    fails(baton(*argv), *needles)
    assert _stored(baton) == before
    assert baton.json("status", "--json")["plan"]["approved"] is True


def test_argparse_usage_error_is_exit_2(loaded, baton):
    result = baton("task-title", "one", "x")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "'one' is not a task id" in result.stderr


@pytest.mark.parametrize("argv", [["approve"], ["plan"], ["plan", "--json"],
                                  ["task-title", "1", "x"], ["task-remove", "1"]])
def test_commands_needing_a_plan_without_one(repo, baton, argv):
    fails(baton(*argv), "no plan yet")


# --- the current-plan rules ---------------------------------------------------------

def test_from_replaces_a_plan_that_has_not_started(loaded, baton):
    baton("approve")
    write_plan(loaded / "q.json", [{"id": 1, "title": "Other", "player": "codex"}],
               goal="Something else")
    result = baton("plan", "--from", "q.json")
    assert result.returncode == 0, result.stderr
    status = baton.json("status", "--json")
    assert status["plan"]["slug"] == "something-else"
    assert status["plan"]["approved"] is False
    assert [t["title"] for t in status["tasks"]] == ["Other"]
    kinds = [json.loads(line)["kind"] for line in baton("log", "--json").stdout.splitlines()]
    assert "plan.archived" in kinds


def test_from_refused_while_work_is_open(loaded, baton):
    baton("approve")
    start_task(1)
    write_plan(loaded / "q.json", [{"id": 1, "title": "Other", "player": "codex"}],
               goal="Something else")
    before = _stored(baton)
    fails(baton("plan", "--from", "q.json"), "add-rate-limiting", "tasks 1", "--new")
    assert _stored(baton) == before
    # done and landed work is still open: it is not merged yet
    start_task(1, "task.done")
    start_task(1, "task.landed")
    fails(baton("plan", "--from", "q.json"), "neither merged nor discarded")
    # merged or discarded work is not
    start_task(1, "task.merged")
    assert baton("plan", "--from", "q.json").returncode == 0
    assert baton.json("status", "--json")["plan"]["slug"] == "something-else"


def test_discarded_work_does_not_block(loaded, baton):
    start_task(2)
    start_task(2, "task.failed", {"reason": "boom"})
    write_plan(loaded / "q.json", [{"id": 1, "title": "Other", "player": "codex"}], goal="Next")
    fails(baton("plan", "--from", "q.json"), "tasks 2")
    start_task(2, "task.discarded")
    assert baton("plan", "--from", "q.json").returncode == 0


def test_new_archives_a_plan_with_open_work(loaded, baton):
    baton("approve")
    start_task(1)
    write_plan(loaded / "q.json", [{"id": 1, "title": "Other", "player": "codex"}],
               goal="Something else")
    result = baton("plan", "--from", "q.json", "--new")
    assert result.returncode == 0, result.stderr
    assert baton.json("status", "--json")["plan"]["slug"] == "something-else"
    with sqlite3.connect(find_repo(loaded).store_path) as conn:
        rows = conn.execute("SELECT slug, archived FROM plans ORDER BY id").fetchall()
    assert rows == [("add-rate-limiting", 1), ("something-else", 0)]


def test_slug_collisions_get_a_suffix(loaded, baton):
    for expected in ("add-rate-limiting-2", "add-rate-limiting-3"):
        assert baton("plan", "--from", "p.json").returncode == 0
        assert baton.json("status", "--json")["plan"]["slug"] == expected
    status = baton.json("status", "--json")
    assert status["tasks"][0]["branch"] == "baton/add-rate-limiting-3/1-schema"


# --- trust and a broken configuration ------------------------------------------------

def test_trust_records_hash_in_store_not_tree(repo, baton):
    (repo / "baton.toml").write_text('[checks]\nrun = "make test"\n')
    result = baton("trust")
    assert result.returncode == 0, result.stderr
    assert "checks.run" in result.stdout
    import hashlib

    digest = hashlib.sha256((repo / "baton.toml").read_bytes()).hexdigest()
    with Store(find_repo(repo).store_path) as store:
        assert store.trusted_hash(str(repo / "baton.toml")) == digest
    status = subprocess_git_status(repo)
    assert status == ["?? baton.toml"]  # nothing else was written to the working tree


def subprocess_git_status(repo) -> list[str]:
    import subprocess

    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo,
                         capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def test_trust_without_file(repo, baton):
    fails(baton("trust"), "no baton.toml to trust")


def test_trust_refuses_a_broken_file(repo, baton):
    (repo / "baton.toml").write_text("autonomy = 'yolo'\n")
    fails(baton("trust"), "baton.toml", "autonomy")
    assert not find_repo(repo).store_path.exists() or Store(
        find_repo(repo).store_path).trusted_hash(str(repo / "baton.toml")) is None


@pytest.mark.parametrize("text,key,problem", [
    ("planner = 3\n", "planner", "valid string"),
    ("autonomy = 'yolo'\n", "autonomy", "'guarded', 'watch' or 'autopilot'"),
    ("[limits]\nmax_parallel = 0\n", "limits.max_parallel", "greater than or equal to 1"),
    ("[limits]\nstall = 'soon'\n", "limits.stall", "duration"),
    ("[limits]\nbogus = 1\n", "limits.bogus", "unknown key"),
    ("[players.foo]\nbin = 'x'\n", "players", "unknown player 'foo'"),
    ("[players.custom.mine]\nresearch_command = ['x']\n", "players.custom.mine.command",
     "missing required key"),
    ("[worktree]\ncopy = '.env'\n", "worktree.copy", "valid list"),
    ("[limits\n", "", "not valid TOML"),
])
@pytest.mark.parametrize("command", [["players"], ["plan", "--from", "p.json"]])
def test_broken_project_config_is_one_line(repo, baton, text, key, problem, command):
    write_plan(repo / "p.json", TASKS)
    (repo / "baton.toml").write_text(text)
    err = fails(baton(*command), "baton.toml", key, problem)
    assert len(err.splitlines()) == 1
    assert baton.json("status", "--json")["plan"] is None


def test_broken_personal_config_names_its_path(repo, baton, isolated_env):
    personal = isolated_env / ".config" / "baton" / "config.toml"
    personal.parent.mkdir(parents=True)
    personal.write_text("[limits]\nretries = 99\n")
    err = fails(baton("players"), str(personal), "limits.retries", "less than or equal to 10")
    assert len(err.splitlines()) == 1
    other = repo.parent / "other.toml"
    other.write_text("colour = 'red'\n")
    err = fails(baton("players", env={"BATON_CONFIG": str(other)}), str(other), "colour",
                "unknown key")
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize("name,value,needle", [
    ("BATON_AUTONOMY", "yolo", "BATON_AUTONOMY"),
    ("BATON_MAX_PARALLEL", "many", "BATON_MAX_PARALLEL"),
    ("BATON_MAX_PARALLEL", "0", "BATON_MAX_PARALLEL"),
])
def test_bad_environment_value_is_one_line(repo, baton, name, value, needle):
    err = fails(baton("players", env={name: value}), needle, repr(value))
    assert len(err.splitlines()) == 1


def test_players_json_shape(repo, baton):
    players = baton.json("players", "--json")
    names = [p["name"] for p in players]
    assert "claude-code" in names and "script" in names
    for p in players:
        assert {"name", "ready", "reason", "version"} <= set(p)
        assert isinstance(p["ready"], bool)


def test_help_lists_public_commands_only_and_hidden_ones_still_parse(repo, baton):
    result = baton("--help")
    assert result.returncode == 0, result.stderr
    assert "SUPPRESS" not in result.stdout
    listed = {line.split()[0] for line in result.stdout.splitlines()
              if line.startswith("    ") and line.split()}
    assert {"plan", "status", "report", "mcp"} <= listed
    assert not listed & {"attempt", "conductor"}
    from baton_tui.cli import build_parser

    for argv in (["attempt", "7", "--state", "s.db"], ["conductor", "--root", "."]):
        for only in (None, argv[0]):
            args = build_parser(only).parse_args(argv)
            assert args.handler == f"agent:cmd_{argv[0]}"
    assert baton("conductor", "--help").returncode == 0


def test_doctor_reads_the_repository(repo, baton):
    out = baton("doctor").stdout
    assert "✓ repository on main at " in out
    assert "uncommitted changes" not in out
    (repo / "README.md").write_text("# changed\n")
    assert "· uncommitted changes to tracked files" in baton("doctor").stdout
    import subprocess

    subprocess.run(["git", "checkout", "-q", "--detach"], cwd=repo, check=True)
    assert "✗ HEAD is detached at " in baton("doctor").stdout


def test_a_command_leaves_with_all_its_output_and_its_exit_code(repo, baton):
    """`baton` skips the interpreter's teardown once a command returns (`cli._leave`): what
    it printed — here far more than a pipe holds — still arrives whole, every write it made
    is there for the next command, and its exit code is the process's."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    prompt = "Do the thing carefully. " * 40
    tasks = [{"id": i, "title": f"Task {i}", "prompt": prompt, "player": "script",
              "check": "true", "depends_on": [i - 1] if i > 1 else []} for i in range(1, 301)]
    write_plan(repo / "big.json", tasks, goal="A big plan")
    assert baton("plan", "--from", "big.json").returncode == 0
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    printed = subprocess.run([sys.executable, "-m", "baton_tui", "plan", "--json"], cwd=repo,
                             capture_output=True, text=True, timeout=60, env=buffered)
    assert printed.returncode == 0 and len(printed.stdout) > 256 * 1024
    assert printed.stdout.endswith("}\n")  # its last write too
    assert len(json.loads(printed.stdout)["tasks"]) == 300
    assert baton.json("status", "--json")["plan"]["goal"] == "A big plan"
    # The console script (`baton`, as installed) leaves the same way, with the same code.
    script = shutil.which("baton", path=str(Path(sys.executable).parent))
    assert script, "the baton console script is not installed beside this Python"
    refused = subprocess.run([script, "task-title", "999", "No such task"], cwd=repo,
                             capture_output=True, text=True, timeout=60, env=buffered)
    fails(refused, "999")


@pytest.mark.parametrize("argv, needle", [
    (["plan", "--goal", ""], "--goal is empty"),
    (["plan", "--goal", "   "], "--goal is empty"),
    (["plan", "--from", ""], "--from is empty"),
    (["plan", "--skill", "grilling"], "--skill grilling goes with --goal"),
    (["plan", "--new"], "--new goes with --goal or --from"),
    (["plan", "--new", "--json"], "--new goes with --goal or --from"),
])
def test_plan_options_that_would_do_nothing_are_refused(loaded, baton, argv, needle):
    """These printed the current plan as if nothing had been asked (an empty goal from a
    script's unset variable; `--new` alone archived nothing): now one line, exit 2, and the
    plan as it was."""
    before = baton.json("status", "--json")["plan"]
    result = baton(*argv)
    assert result.stdout == ""
    assert len(fails(result, needle).splitlines()) == 1
    assert baton.json("status", "--json")["plan"] == before


@pytest.mark.parametrize("argv, line", [
    (["task-title", "1", ""], "baton: task 1: title: string should have at least 1 character"),
    (["task-scope", "1", "../../etc/*"],
     "baton: task 1: scope: scope entry '../../etc/*' must be a path inside the repository"),
    (["task-add", "--title", "", "--player", "script"],
     "baton: task-add: task 4: title: string should have at least 1 character"),
])
def test_a_refused_edit_names_the_task_not_the_documents_layout(loaded, baton, argv, line):
    """An edit's problem reads `task 1: title: …`, as the other edits' do — not `edit:
    tasks[0] (task 1).title: …`, the plan document's layout, which the person never wrote."""
    before = baton.json("plan", "--json")
    result = baton(*argv)
    assert fails(result).splitlines() == [line]
    assert baton.json("plan", "--json") == before


@pytest.mark.parametrize("argv, line", [
    (["task-player", "1", "clade-code"], "baton: unknown player 'clade-code' — did you mean "
     "claude-code? (known: claude-code, codex"),
    (["task-add", "--title", "x", "--player", "codex-cli"], "baton: task-add: task 4: unknown "
     "player 'codex-cli' — did you mean codex? (known: claude-code"),
    (["task-player", "1", "zzz"], "baton: unknown player 'zzz' (known: claude-code"),
    (["plan", "--answer", "1"], "baton: --answer 1 needs the answer too: --answer 1 \"…\" (or "
     "--answer FILE of `N: text` lines)"),
])
def test_a_near_miss_is_told_what_was_meant(loaded, baton, argv, line):
    """A mistyped player names the closest one; `--answer 1` without its text says so rather
    than looking for a file called `1`. One line, exit 2, the plan unchanged."""
    before = baton.json("plan", "--json")
    lines = fails(baton(*argv)).splitlines()
    assert len(lines) == 1 and lines[0].startswith(line), lines
    assert baton.json("plan", "--json") == before
