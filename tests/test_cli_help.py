"""The CLI explains itself: positionals say what they take, `handoff review|merge --help` are
not empty, the main help has examples; a mistyped command is one line with what was meant;
shell completion offers players, efforts and task ids where they go, not file names."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import write_plan


def test_positionals_say_what_they_take(repo, baton):
    out = re.sub(r"-\n\s+", "-", baton("task-player", "--help").stdout)  # argparse's wrapping
    assert "the task's id" in out
    for player in ("claude-code", "codex", "gemini", "aider", "cursor-agent", "script"):
        assert player in out
    assert "custom player" in out
    assert "low|medium|high" in baton("task-effort", "--help").stdout
    assert "build|research|manual" in baton("task-mode", "--help").stdout
    assert "on|off" in baton("task-checkpoint", "--help").stdout


@pytest.mark.parametrize("action, words", [("review", ["combined diff", "--task N", "--stat"]),
                                           ("merge", ["plan order", "first conflict", "Exit 0"])])
def test_handoff_actions_have_help(repo, baton, action, words):
    out = baton("handoff", action, "--help")
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    for word in words:
        assert word in text, text


def test_main_help_has_examples(repo, baton):
    out = baton("--help").stdout
    assert "examples:" in out and "baton plan --goal" in out and "baton task-player 2 codex" in out
    assert out.index("examples:") < out.index("exit codes:")


@pytest.mark.parametrize("typed, meant", [("stauts", "status"), ("handof", "handoff"),
                                          ("aprove", "approve")])
def test_unknown_command_is_one_line_with_what_was_meant(repo, baton, typed, meant):
    result = baton(typed)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert f"unknown command '{typed}'" in lines[0] and f"did you mean {meant}?" in lines[0]
    assert "attempt" not in lines[0] and "conductor" not in lines[0]


def test_unknown_command_without_a_close_one_and_after_options(repo, baton):
    result = baton("-C", str(repo), "xyzzy")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "baton: unknown command 'xyzzy' (`baton --help` lists them)"]
    # the internal commands still parse (Baton runs them itself)
    assert baton("conductor", "--help").returncode == 0


def test_a_usage_error_is_one_line(repo, baton):
    result = baton("autonomy", "sleepy")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "baton: autonomy: argument level: invalid choice: 'sleepy' (choose from 'guarded', "
        "'watch', 'autopilot') — `baton autonomy --help` says more"]


def complete(cwd, line: str) -> list[str]:
    """What the real `baton` answers a bash completing `line` (argcomplete's protocol)."""
    out = cwd / ".completions"
    env = {**os.environ, "_ARGCOMPLETE": "1", "COMP_LINE": line, "COMP_POINT": str(len(line)),
           "_ARGCOMPLETE_STDOUT_FILENAME": str(out), "_ARGCOMPLETE_IFS": "\n"}
    result = subprocess.run([sys.executable, "-m", "baton_tui"], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    words = out.read_text().split("\n")
    out.unlink()
    return [w.strip() for w in words if w.strip()]


def test_completion_offers_players_efforts_and_ids_not_files(repo, baton):
    (repo / "baton.toml").write_text('[players.custom.my-bot]\ncommand = ["true"]\n')
    (repo / "codex-notes.txt").write_text("a file a shell would otherwise offer\n")
    write_plan(repo / "p.json", [{"id": 1, "title": "a", "player": "codex"},
                                 {"id": 7, "title": "b", "player": "codex"}])
    assert baton("plan", "--from", "p.json").returncode == 0
    players = complete(repo, "baton task-player 1 ")
    assert {"claude-code", "codex", "aider", "script", "my-bot"} <= set(players)
    assert not any(name.endswith((".txt", ".json", ".md")) for name in players)
    assert complete(repo, "baton task-player 1 co") == ["codex"]
    assert [w for w in complete(repo, "baton task-effort 1 ") if not w.startswith("-")] == [
        "low", "medium", "high", "default"]
    assert "on" in complete(repo, "baton task-checkpoint 7 ")
    assert [w for w in complete(repo, "baton logs ") if not w.startswith("-")] == ["1", "7"]
    commands = complete(repo, "baton co")
    assert "completion" in commands and "conductor" not in commands


def test_every_argument_of_every_public_command_says_what_it_takes():
    """Each option and positional of each command in `baton --help` has a help line (the
    agents' `report` and `checkpoint` too: an agent reads their --help to use them)."""
    import argparse

    from baton_tui import cli

    parser = cli.build_parser()
    bare = []

    def walk(name: str, sub: argparse.ArgumentParser) -> None:
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child, child_parser in action.choices.items():
                    walk(f"{name} {child}", child_parser)
            elif not isinstance(action, argparse._HelpAction) and not action.help:
                bare.append(f"{name} {'/'.join(action.option_strings) or action.dest}")

    for name in parser.public_commands:
        walk(name, parser.commands[name])
    assert bare == [], bare
