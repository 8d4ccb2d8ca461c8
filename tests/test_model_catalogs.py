"""Model names are checked against each player's real catalog, through the CLI a person uses.

Codex: what `codex debug models` lists (its bundled list when it cannot answer) and OpenAI's
model families; a provider of the person's own is not judged. `openai`: the names the endpoint
at OPENAI_BASE_URL lists (no judgement when it does not answer), else OpenAI's names. Custom
players: their `models` list when the config has one, else any name. A refused name is one
line, exit 2, and the plan is left as it was.
"""

from __future__ import annotations

import json
import os
import socket

import pytest

from conftest import write_plan
from helpers.real_cli_kit import CODEX, NPM_BIN, require_cli
from helpers.real_players import AIDER_PLAYER, OPENCODE_PLAYER
from helpers.scripted_players import CursorAgent, Goose


def personal(tmp_path, body: str) -> dict[str, str]:
    path = tmp_path / "personal.toml"
    path.write_text(body)
    return {"BATON_CONFIG": str(path)}


def load(baton, tmp_path, player: str, env=None, model: str | None = None):
    task = {"id": 1, "title": "T", "prompt": "p", "player": player}
    if model:
        task["model"] = model
    return baton("plan", "--from", str(write_plan(tmp_path / "plan.json", [task])), env=env)


def test_codex_refuses_a_name_outside_its_catalog(baton, tmp_path):
    out = load(baton, tmp_path, "codex", model="nonsense-model")
    assert out.returncode == 2
    assert len([ln for ln in out.stderr.splitlines() if "nonsense-model" in ln]) == 1
    assert "player 'codex' cannot start model 'nonsense-model'" in out.stderr
    assert load(baton, tmp_path, "codex", model="gpt-6.2-sol").returncode == 0
    before = baton("plan", "--json").stdout
    out = baton("task-model", "1", "nonsense-model")
    assert out.returncode == 2 and "cannot start model" in out.stderr
    assert baton("plan", "--json").stdout == before


def test_the_real_codex_lists_its_own_catalog(baton, tmp_path, monkeypatch):
    require_cli(CODEX)
    env = {"PATH": f"{NPM_BIN}{os.pathsep}{os.environ['PATH']}"}
    monkeypatch.setenv("PATH", env["PATH"])   # this process asks the codex Baton will
    from baton_tui.players.codex import CodexPlayer

    catalog = CodexPlayer().catalog()
    assert "gpt-5.5" in catalog and len(catalog) >= 5, catalog
    assert load(baton, tmp_path, "codex", env=env, model=catalog[0]).returncode == 0
    out = baton("task-model", "1", "nonsense-model", env=env)
    assert out.returncode == 2 and "Codex's models: " + catalog[0] in out.stderr


def test_openai_takes_the_names_its_endpoint_serves(baton, tmp_path, server):
    env = {"OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": "k"}
    out = load(baton, tmp_path, "openai", env=env, model="nonsense-model")
    assert out.returncode == 2
    assert f"the endpoint at {server.url}/v1 serves: scripted-model" in out.stderr
    assert load(baton, tmp_path, "openai", env=env, model="scripted-model").returncode == 0
    asked = [r for r in server.requests if r["method"] == "GET" and r["path"] == "/v1/models"]
    assert len(asked) == 1     # the answer is cached: the second plan did not ask again
    listed = personal(tmp_path, '[players.openai]\nmodels = ["my-alias"]\n')
    assert baton("task-model", "1", "my-alias", env={**env, **listed}).returncode == 0


def test_openai_without_an_answer_cannot_judge_and_without_a_url_is_openais(baton, tmp_path):
    with socket.socket() as sock:          # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    env = {"OPENAI_BASE_URL": dead, "OPENAI_API_KEY": "k"}
    assert load(baton, tmp_path, "openai", env=env, model="local-llama").returncode == 0
    plain = {"OPENAI_BASE_URL": ""}
    out = baton("task-model", "1", "nonsense-model", env=plain)
    assert out.returncode == 2 and "OpenAI's models are named like" in out.stderr
    assert baton("task-model", "1", "gpt-5.4-mini", env=plain).returncode == 0


def test_custom_players_take_any_name_unless_their_config_lists_models(baton, tmp_path):
    command = json.dumps(["python3", "-c", "pass"])
    env = personal(tmp_path, f'[players.custom.free]\ncommand = {command}\n\n'
                             f'[players.custom.picky]\ncommand = {command}\n'
                             'models = ["fast", "thorough"]\n')
    assert load(baton, tmp_path, "free", env=env, model="nonsense-model").returncode == 0
    out = baton("task-player", "1", "picky", env=env)
    assert out.returncode == 0, out.stderr
    out = baton("task-model", "1", "nonsense-model", env=env)
    assert out.returncode == 2
    assert "player 'picky' cannot start model 'nonsense-model' (its models: fast, thorough)" \
        in out.stderr
    assert baton("task-model", "1", "thorough", env=env).returncode == 0


CATALOGUED = ["claude-code", "codex", "gemini", "aider", "amp", "cursor-agent", "goose",
              "opencode", "anthropic", "openai"]


@pytest.mark.parametrize("name", CATALOGUED)
def test_every_player_with_a_catalog_refuses_nonsense(name, baton, tmp_path, server):
    """`baton task-model N nonsense` is refused (exit 2, one line naming it, the plan left as
    it was) on every player whose catalog Baton can read: Cursor Agent's and OpenCode's come
    from the CLI itself (a replay, the real OpenCode), Aider's bare names from the installed
    Aider's model map, Goose's from its provider's names."""
    env: dict[str, str] = {"OPENAI_BASE_URL": ""}
    if name == "cursor-agent":
        env.update(CursorAgent(tmp_path).env())
    elif name == "goose":
        env.update(Goose(tmp_path).env())
    elif name == "opencode":
        OPENCODE_PLAYER.require()
        env.update(OPENCODE_PLAYER.env(server))
    elif name == "aider":                 # its bare names are the installed Aider's model map
        AIDER_PLAYER.require()
        env.update(AIDER_PLAYER.env(server))
    assert load(baton, tmp_path, name, env=env).returncode == 0
    before = baton("plan", "--json").stdout
    out = baton("task-model", "1", "nonsense", env=env)
    assert out.returncode == 2, out.stdout + out.stderr
    assert [ln for ln in out.stderr.splitlines() if "'nonsense'" in ln], out.stderr
    assert baton("plan", "--json").stdout == before


def test_a_name_baton_cannot_judge_is_let_through_with_the_reason(baton, tmp_path):
    """Codex with a provider of the person's own: any name, and editing and approving say
    why it was not checked (never silently)."""
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        'model_provider = "mine"\n[model_providers.mine]\nname = "Mine"\n'
        'base_url = "http://127.0.0.1:9/v1"\nenv_key = "MINE_KEY"\n')
    env = {"CODEX_HOME": str(codex_home), "MINE_KEY": "k"}
    assert load(baton, tmp_path, "codex", env=env, model="my-local-model").returncode == 0
    out = baton("task-model", "1", "another-local-model", env=env)     # at edit time
    assert out.returncode == 0 and "baton: note: task 1: your Codex config's model_provider " \
        "'mine' is your own, so model 'another-local-model' is not checked" in out.stderr
    out = baton("approve", env=env)
    assert out.returncode == 0, out.stderr
    assert ("task 1: your Codex config's model_provider 'mine' is your own, so model "
            "'another-local-model' is not checked") in out.stderr


def test_approve_says_one_unchecked_note_once_for_the_tasks_it_covers(baton, tmp_path):
    """Two tasks on the same player and model share one note: `approve` does not print the
    same sentence twice."""
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        'model_provider = "mine"\n[model_providers.mine]\nname = "Mine"\n'
        'base_url = "http://127.0.0.1:9/v1"\nenv_key = "MINE_KEY"\n')
    env = {"CODEX_HOME": str(codex_home), "MINE_KEY": "k"}
    tasks = [{"id": n, "title": f"T{n}", "prompt": "p", "player": "codex", "model": model}
             for n, model in ((1, "local-a"), (2, "local-a"), (3, "local-b"))]
    assert baton("plan", "--from", str(write_plan(tmp_path / "plan.json", tasks)),
                 env=env).returncode == 0
    out = baton("approve", env=env)
    assert out.returncode == 0, out.stderr
    notes = [ln for ln in out.stderr.splitlines() if "is not checked" in ln]
    assert len(notes) == 2, out.stderr
    assert notes[0].startswith("baton: warning: tasks 1, 2: ") and "'local-a'" in notes[0]
    assert notes[1].startswith("baton: warning: task 3: ") and "'local-b'" in notes[1]
