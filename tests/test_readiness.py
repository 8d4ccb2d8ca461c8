"""Readiness everywhere: a task is never given to a player that cannot start here.

`task-player` and `task-add` refuse an unready player (exit 2, its reason and fix, the plan
unchanged); `plan --from` still loads a plan naming one and `status` marks those tasks;
`approve` refuses until each is moved, naming them; `players` and `doctor` treat an untrusted
repository's custom players as not ready, and `doctor` names the planner. Aider (not on PATH in
these tests) is the unready player; a custom player in the personal config is a ready one.
"""

from __future__ import annotations

import json
import sys

from conftest import write_plan

AGENT = ["python3", "-c", "print('hi')"]


def personal_config(tmp_path, body: str) -> dict[str, str]:
    path = tmp_path / "personal.toml"
    path.write_text(body)
    return {"BATON_CONFIG": str(path)}


MINE = f'[players.custom.mine]\ncommand = {json.dumps([sys.executable, "-c", "pass"])}\n'


def load(baton, tmp_path, tasks, env=None):
    plan = write_plan(tmp_path / "plan.json", tasks)
    out = baton("plan", "--from", str(plan), env=env)
    assert out.returncode == 0, out.stderr
    return out


def test_task_player_refuses_an_unready_player_and_leaves_the_plan(baton, tmp_path):
    env = personal_config(tmp_path, MINE)
    load(baton, tmp_path, [{"id": 1, "title": "A", "prompt": "a", "player": "script",
                            "check": "true"}], env)
    before = baton("plan", "--json", env=env).stdout
    out = baton("task-player", "1", "aider", env={**env, "PATH": "/usr/bin:/bin"})
    assert out.returncode == 2
    line = out.stderr.strip().splitlines()[-1]
    assert "player 'aider' is not ready here" in line and "aider not found on PATH" in line
    assert "pip install aider-chat" in line                       # the fix, on the same line
    assert baton("plan", "--json", env=env).stdout == before        # nothing changed
    assert baton("task-player", "1", "mine", env=env).returncode == 0  # a ready one is fine


def test_task_add_refuses_an_unready_player(baton, tmp_path):
    env = personal_config(tmp_path, MINE)
    load(baton, tmp_path, [{"id": 1, "title": "A", "prompt": "a", "player": "mine"}], env)
    out = baton("task-add", "--title", "B", "--player", "aider", env={**env, "PATH": "/usr/bin:/bin"})
    assert out.returncode == 2 and "player 'aider' is not ready here" in out.stderr
    assert len(baton.json("status", "--json")["tasks"]) == 1
    assert baton("task-add", "--title", "B", "--player", "mine", env=env).returncode == 0


def test_a_plan_naming_unready_players_loads_is_marked_and_cannot_be_approved(baton, tmp_path):
    env = {**personal_config(tmp_path, MINE), "PATH": "/usr/bin:/bin"}
    load(baton, tmp_path, [
        {"id": 1, "title": "Edit", "prompt": "a", "player": "aider"},
        {"id": 2, "title": "Own", "prompt": "b", "player": "mine"},
        {"id": 3, "title": "More", "prompt": "c", "player": "aider", "depends_on": [2]},
    ], env)
    status = baton.json("status", "--json")
    marks = {t["id"]: (t["player_ready"], t["player_problem"]) for t in status["tasks"]}
    assert marks[2] == (True, None)
    assert marks[1][0] is False and "aider not found on PATH" in marks[1][1]
    assert marks[3][0] is False
    text = baton("status").stdout
    assert "aider is not ready here" in text
    out = baton("approve", env=env)
    assert out.returncode == 2
    assert "tasks 1, 3 are on players that cannot start here" in out.stderr
    assert "player 'aider' is not ready here" in out.stderr
    assert baton.json("status", "--json")["plan"]["approved"] is False
    for task in ("1", "3"):
        assert baton("task-player", task, "mine", env=env).returncode == 0
    approved = baton("approve", env=env)
    assert approved.returncode == 0, approved.stderr
    assert all(t["player_ready"] for t in baton.json("status", "--json")["tasks"])


def test_untrusted_custom_players_are_not_ready_until_trusted(baton, repo):
    (repo / "baton.toml").write_text(
        f'[players.custom.repoagent]\ncommand = {json.dumps([sys.executable, "-c", "pass"])}\n')
    found = {p["name"]: p for p in baton.json("players", "--json")}
    assert found["repoagent"]["ready"] is False
    assert "not trusted" in found["repoagent"]["reason"]
    assert "baton trust" in found["repoagent"]["fix"]
    doctor = baton("doctor")
    assert "· repoagent:" in doctor.stdout and "baton trust" in doctor.stdout
    assert baton("trust").returncode == 0
    found = {p["name"]: p for p in baton.json("players", "--json")}
    assert found["repoagent"]["ready"] is True


def test_doctor_names_the_planner_and_fails_when_it_is_not_ready(baton, tmp_path):
    out = baton("doctor", env={"BATON_PLANNER": "aider", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 1, out.stdout
    assert "✗ planner: aider (from BATON_PLANNER) is not ready (aider not found on PATH" \
        in out.stdout
    env = personal_config(tmp_path, 'planner = "mine"\n' + MINE)
    ok = baton("doctor", env=env)
    assert "✓ planner: mine" in ok.stdout and ok.returncode == 0, ok.stdout


def test_a_checkpoint_task_is_never_given_to_aider(baton, tmp_path):
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Migrate", "prompt": "a", "player": "aider", "checkpoint": True}])
    out = baton("plan", "--from", str(plan))
    assert out.returncode == 2
    assert "player 'aider' cannot stop at a checkpoint" in out.stderr


def test_a_slow_version_never_makes_an_installed_cli_unready_and_a_kept_one_answers(
        tmp_path, monkeypatch):
    """A real CLI whose `--version` hangs past the deadline (as Gemini CLI's did under load):
    still ready; once it has answered, its version is kept for the same binary and answers
    without running it; a replaced binary is asked again."""
    import os

    from baton_tui.players import versions
    from baton_tui.players.gemini import GeminiPlayer

    folder, hang = tmp_path / "bin", tmp_path / "hang"
    folder.mkdir()
    cli = folder / "gemini"

    def install(said: str) -> None:
        cli.write_text(f"#!/bin/sh\n[ -e '{hang}' ] && exec sleep 600\necho '{said}'\n")
        cli.chmod(0o755)

    install("0.9.9-test")
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GEMINI_API_KEY", "k" * 24)
    player = GeminiPlayer()

    hang.touch()  # never answered yet, and now it hangs: given up on, but ready
    monkeypatch.setattr(versions, "DEADLINE", 2.0)
    first = player.detect()
    assert first.ready and first.version is None and first.path == str(cli), first
    monkeypatch.setattr(versions, "DEADLINE", 120.0)
    hang.unlink()
    assert player.detect().version == "0.9.9-test"
    hang.touch()  # it hangs again: the kept answer, without waiting on it at all
    again = player.detect()
    assert again.ready and again.version == "0.9.9-test", again
    hang.unlink()
    install("1.0.0-test")  # upgraded: the file changed, so it is asked again
    os.utime(cli, ns=(0, 0))  # a different stamp even within one clock tick
    assert player.detect().version == "1.0.0-test"
