"""Model names and sign-in, as the real OpenCode and Gemini CLI see them.

OpenCode's catalog is what `opencode models` lists for this person's providers (a plan naming
another model is refused with exit 2 and nothing stored); Gemini CLI's is its own model list.
Without a provider (OpenCode) or a key or sign-in (Gemini), `baton players` says why and how.
"""

from __future__ import annotations

import json

import pytest

from conftest import write_plan
from helpers.real_players import GEMINI_PLAYER, OPENCODE_PLAYER


@pytest.mark.parametrize("player, good", [(OPENCODE_PLAYER, "scripted/scripted-model"),
                                          (GEMINI_PLAYER, "gemini-2.5-pro")],
                         ids=["opencode", "gemini"])
def test_a_model_the_cli_cannot_start_is_refused(player, good, server, baton, tmp_path):
    player.require()
    env = player.env(server)
    bad = write_plan(tmp_path / "bad.json", [{"id": 1, "title": "T", "prompt": "p",
                                              "player": player.name, "model": "nonsense-model"}])
    out = baton("plan", "--from", str(bad), env=env)
    assert out.returncode == 2 and "nonsense-model" in out.stderr, out.stderr
    assert baton("status", "--json", env=env).returncode == 0
    ok = write_plan(tmp_path / "ok.json", [{"id": 1, "title": "T", "prompt": "p",
                                            "player": player.name, "model": good}])
    out = baton("plan", "--from", str(ok), env=env)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("player, fix", [(OPENCODE_PLAYER, "opencode auth login"),
                                         (GEMINI_PLAYER, "GEMINI_API_KEY")],
                         ids=["opencode", "gemini"])
def test_not_signed_in_is_not_ready_and_says_how(player, fix, baton):
    path = player.require()
    env = {"PATH": f"{path.parent}:/usr/bin:/bin", "GEMINI_API_KEY": "", "GOOGLE_API_KEY": "",
           "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""}
    out = baton("players", "--json", env=env)
    entry = next(p for p in json.loads(out.stdout) if p["name"] == player.name)
    assert entry["ready"] is False and entry["version"], entry
    assert fix in entry["reason"] + (entry.get("fix") or ""), entry
