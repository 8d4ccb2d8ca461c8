"""Generated configurations (well over 1,000 cases across baton.toml and the personal file):
valid ones load with the right precedence (personal over project, documented environment
over both); invalid ones give exactly one clear line naming the file, the key and the problem."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
import tomli_w
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from baton_tui.config import BUILTIN_PLAYERS, load_config
from baton_tui.core.errors import BatonError



def examples(n: int) -> settings:
    """Settings for a test that reuses one function-scoped tmp dir across its examples."""
    return settings(max_examples=n, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
BUILTINS = [p for p in BUILTIN_PLAYERS if p != "script"]
words = st.text("abcdefghij-_ ./", min_size=1, max_size=12)
argv = st.lists(words, min_size=1, max_size=3)
custom_names = st.from_regex(r"\A[a-z0-9][a-z0-9_-]{0,10}\Z").filter(
    lambda n: n not in BUILTIN_PLAYERS and n not in ("default", "research", "custom"))
durations = st.one_of(st.integers(0, 10**6), st.floats(0, 1e6, allow_nan=False),
                      st.builds(lambda n, u: f"{n}{u}", st.integers(0, 500),
                                st.sampled_from(["", "s", "m", "h", "d"])))
env_tables = st.dictionaries(st.from_regex(r"\A[A-Z][A-Z0-9_]{0,8}\Z"), words, max_size=2)
# A stall of 0 would switch the limit off: refused, like paths `copy` would read outside the repo.
stalls = durations.filter(lambda d: d not in (0, 0.0) and not str(d).startswith("0"))
copy_paths = st.from_regex(r"\A[a-z_][a-z0-9_.-]{0,8}(/[a-z_][a-z0-9_-]{0,8}){0,2}(/\*)?\Z")


def optional(**fields) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries({}, optional=fields)


limits = optional(max_parallel=st.integers(1, 64), max_wait=durations, stall=stalls,
                  checkpoint_wait=durations, retries=st.integers(0, 10))
player_settings = optional(bin=words, env=env_tables, max_parallel=st.integers(1, 9),
                           models=st.lists(words, max_size=3))
custom_player = st.fixed_dictionaries({"command": argv}, optional={
    "research_command": argv, "resume_command": argv, "env": env_tables,
    "max_parallel": st.integers(1, 9)})


@st.composite
def players_table(draw) -> dict:
    table = draw(optional(default=st.sampled_from(BUILTINS), research=st.sampled_from(BUILTINS)))
    for name in draw(st.lists(st.sampled_from(BUILTINS), unique=True, max_size=3)):
        table[name] = draw(player_settings)
    customs = draw(st.dictionaries(custom_names, custom_player, max_size=2))
    if customs:
        table["custom"] = customs
    return table


valid_config = optional(
    planner=st.sampled_from(BUILTINS), autonomy=st.sampled_from(["guarded", "watch", "autopilot"]),
    players=players_table(), limits=limits,
    worktree=optional(copy=st.lists(copy_paths, max_size=3), setup=words),
    checks=optional(run=words),
    keys=st.dictionaries(st.from_regex(r"\A[a-z_]{1,10}\Z"), words, max_size=3))

# (path inside the file, a bad value, what the line must say)
BAD_VALUES = [
    (("planner",), 3, "input should be a valid string"),
    (("autonomy",), "yolo", "input should be 'guarded', 'watch' or 'autopilot'"),
    (("limits", "max_parallel"), 0, "greater than or equal to 1"),
    (("limits", "max_parallel"), 65, "less than or equal to 64"),
    (("limits", "max_parallel"), True, "valid integer"),
    (("limits", "max_parallel"), "4", "valid integer"),
    (("limits", "retries"), 11, "less than or equal to 10"),
    (("limits", "max_wait"), "soon", "duration"),
    (("limits", "stall"), -1, "must not be negative"),
    (("limits", "stall"), 0, "must be more than 0"),
    (("limits", "stall"), "0s", "must be more than 0"),
    (("limits", "stall"), float("nan"), "finite"),
    (("limits", "max_wait"), float("inf"), "finite"),
    (("limits", "checkpoint_wait"), "9999d", "at most ten years"),
    (("limits", "max_wait"), 10**400, "finite"),
    (("worktree", "copy"), ["../secrets"], "inside the repository"),
    (("worktree", "copy"), ["/etc/passwd"], "inside the repository"),
    (("worktree", "copy"), ["~/.ssh/id_ed25519"], "inside the repository"),
    (("limits", "checkpoint_wait"), [1], "duration"),
    (("worktree", "copy"), ".env", "valid list"),
    (("worktree", "setup"), ["npm", "ci"], "valid string"),
    (("checks", "run"), 1, "valid string"),
    (("keys", "approve"), 1, "valid string"),
    (("players", "codex", "max_parallel"), 0, "greater than or equal to 1"),
    (("players", "codex", "models"), "gpt", "valid list"),
    (("players", "codex", "env"), {"A": 1}, "valid string"),
    (("players", "custom", "mine", "command"), [], "at least 1 item"),
    (("players", "custom", "mine", "command"), "agent", "valid list"),
    (("players", "default"), 7, "valid string"),
    (("limits",), 5, "valid dictionary"),
    (("players",), "codex", "valid dictionary"),
]


@st.composite
def invalid_config(draw) -> tuple[dict, str, str]:
    """A valid config with exactly one problem: (raw, key fragment, problem fragment)."""
    raw = draw(valid_config)
    kind = draw(st.sampled_from(["unknown-key", "bad-value", "unknown-player", "custom-name",
                                 "missing-command"]))
    if kind == "unknown-key":
        section = draw(st.sampled_from([(), ("limits",), ("worktree",), ("checks",),
                                        ("players", "codex"), ("players", "custom", "mine")]))
        key = draw(st.from_regex(r"\A[a-z][a-z_]{0,10}\Z"))
        node = raw
        for part in section:
            node = node.setdefault(part, {} if part != "mine" else {"command": ["x"]})
        from baton_tui import config as c
        model = {(): c.Config, ("limits",): c.LimitsConfig, ("worktree",): c.WorktreeConfig,
                 ("checks",): c.ChecksConfig, ("players", "codex"): c.PlayerSettings,
                 ("players", "custom", "mine"): c.CustomPlayer}[section]
        names = {f.alias or n for n, f in model.model_fields.items()} | set(model.model_fields)
        assume(key not in names and key not in node)
        node[key] = 1
        shown = ".".join(("players", "settings", "codex") if section == ("players", "codex")
                         else section)
        return raw, (shown + "." if shown else "") + key, "unknown key"
    if kind == "bad-value":
        path, value, problem = draw(st.sampled_from(BAD_VALUES))
        node = raw
        for part in path[:-1]:
            if not isinstance(node.get(part), dict):
                node[part] = {} if part != "mine" else {"command": ["x"]}
            node = node[part]
        node[path[-1]] = value
        shown = ".".join(path).replace("players.codex.", "players.settings.codex.")
        if path == ("players", "codex", "env"):
            shown += ".A"
        return raw, shown, problem
    if kind == "unknown-player":
        name = draw(custom_names)
        raw.setdefault("players", {})[name] = {"bin": "x"}
        return raw, "players", f"unknown player {name!r}"
    if kind == "custom-name":
        name = draw(st.sampled_from(["Mine", "my agent", "-x", "codex", "default", "UPPER"]))
        raw.setdefault("players", {}).setdefault("custom", {})[name] = {"command": ["x"]}
        return raw, "players.custom", repr(name)
    raw.setdefault("players", {}).setdefault("custom", {})["mine"] = {"research_command": ["x"]}
    return raw, "players.custom.mine.command", "missing required key"


@contextmanager
def environ(values: dict[str, str]):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def write(path: Path, raw: dict | None) -> None:
    if raw is None:
        path.unlink(missing_ok=True)
    else:
        path.write_text(tomli_w.dumps(raw))


def expected(project: dict, personal: dict, path: tuple[str, ...], default):
    for raw in (personal, project):
        node = raw
        for part in path:
            if not isinstance(node, dict) or part not in node:
                break
            node = node[part]
        else:
            return node
    return default


@pytest.fixture
def places(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    return root, root / "baton.toml", tmp_path / "personal.toml"


ENV_CHOICES = optional(BATON_PLANNER=st.sampled_from(BUILTINS),
                       BATON_AUTONOMY=st.sampled_from(["guarded", "watch", "autopilot"]),
                       BATON_MAX_PARALLEL=st.integers(1, 64).map(str),
                       BATON_TASK=words, BATON_STATE=words, BATON_LIMITS=words,
                       BATON_STALL=words, BATON_NONCE=words)


@examples(500)
@given(project=valid_config, personal=valid_config, env=ENV_CHOICES)
def test_valid_configs_load_with_precedence(places, project, personal, env):
    root, project_path, personal_path = places
    write(project_path, project)
    write(personal_path, personal)
    with environ({"BATON_CONFIG": str(personal_path), **env}):
        cfg = load_config(root).config
    from baton_tui.config import parse_duration

    assert cfg.planner == env.get("BATON_PLANNER") or cfg.planner == expected(
        project, personal, ("planner",), "claude-code")
    assert cfg.autonomy == env.get("BATON_AUTONOMY", expected(project, personal, ("autonomy",),
                                                              "guarded"))
    want_parallel = env.get("BATON_MAX_PARALLEL")
    assert cfg.limits.max_parallel == (int(want_parallel) if want_parallel else expected(
        project, personal, ("limits", "max_parallel"), 4))
    for key, default in (("max_wait", 3600.0), ("stall", 900.0), ("checkpoint_wait", 20.0)):
        assert getattr(cfg.limits, key) == parse_duration(
            expected(project, personal, ("limits", key), default))
    assert cfg.checks.run == expected(project, personal, ("checks", "run"), None)
    assert cfg.worktree.setup == expected(project, personal, ("worktree", "setup"), None)
    for name in set(project.get("players", {}).get("custom", {})) | set(
            personal.get("players", {}).get("custom", {})):
        assert cfg.players.custom[name].command == expected(
            project, personal, ("players", "custom", name, "command"), None)


@examples(500)
@given(case=invalid_config(), other=valid_config, in_personal=st.booleans())
def test_invalid_config_is_exactly_one_clear_line(places, case, other, in_personal):
    raw, key, problem = case
    root, project_path, personal_path = places
    write(personal_path if in_personal else project_path, raw)
    write(project_path if in_personal else personal_path, other)
    with environ({"BATON_CONFIG": str(personal_path)}):
        with pytest.raises(BatonError) as info:
            load_config(root)
    err = info.value
    assert err.code == 2
    assert len(err.lines) == 1, err.lines
    line = err.lines[0]
    label = str(personal_path) if in_personal else "baton.toml"
    assert line.startswith(f"{label}: {key}"), (line, key)
    assert problem in line, (line, problem)
    assert "\n" not in line


@examples(120)
@given(text=st.text("[]=\"'abc.123 \n#{},", max_size=40))
def test_arbitrary_toml_text_never_tracebacks(places, text):
    root, project_path, personal_path = places
    project_path.write_text(text)
    personal_path.unlink(missing_ok=True)
    try:
        load_config(root)
    except BatonError as err:
        assert err.code == 2
        assert len(err.lines) == 1 and "baton.toml" in err.lines[0]


@examples(16)
@given(case=invalid_config(), in_personal=st.booleans())
def test_real_cli_sample(repo, case, in_personal):
    raw, key, problem = case
    personal = repo.parent / "personal.toml"
    write(personal if in_personal else repo / "baton.toml", raw)
    write(repo / "baton.toml" if in_personal else personal, None)
    result = subprocess.run([sys.executable, "-m", "baton_tui", "players"], cwd=repo,
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "BATON_CONFIG": str(personal)})
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert key in lines[0] and problem in lines[0]
    assert (str(personal) if in_personal else "baton.toml") in lines[0]
