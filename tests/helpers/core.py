"""The basics most tests share: the repository root, `git`, the real `baton` CLI, plan files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def git_logging_shim(where: Path) -> tuple[Path, Path]:
    """A folder holding a `git` that logs each command line to the returned log file, then
    runs the real git: put the folder first on PATH to count the git processes a run starts."""
    real = shutil.which("git")
    assert real, "git is not installed"
    folder = where / "git-shim"
    folder.mkdir()
    log = where / "git-commands.log"
    (folder / "git").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    (folder / "git").chmod(0o755)
    return folder, log


class BatonCLI:
    """The real `baton` command in a subprocess, as a person (or a pipeline) runs it."""

    def __init__(self, cwd: Path):
        self.cwd = cwd

    def __call__(self, *args: str, input: str | None = None, timeout: float = 120,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "baton_tui", *args], cwd=self.cwd,
                              input=input, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, **(env or {})})

    def json(self, *args: str) -> object:
        result = self(*args)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)


def write_plan(path: Path, tasks: list[dict], goal: str = "Sample goal", **extra) -> Path:
    """Write a v1 plan document and return its path."""
    path.write_text(json.dumps({"version": 1, "goal": goal, "tasks": tasks, **extra}))
    return path
