"""Real git repositories for the gitops tests (no mocks, real subprocesses).

Imported by tests/test_gitops_*.py. Every test gets an isolated git environment: an empty HOME,
an empty global config and no system config, and no identity in the environment — so the tests
never depend on the machine's git setup, and Baton's own fallback identity is what commits.
The helpers' own commits (building fixtures) pass a test identity explicitly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TEST_IDENTITY = {
    "GIT_AUTHOR_NAME": "Tester",
    "GIT_AUTHOR_EMAIL": "tester@example.com",
    "GIT_COMMITTER_NAME": "Tester",
    "GIT_COMMITTER_EMAIL": "tester@example.com",
}


@pytest.fixture(autouse=True)
def isolated_git(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    cfg = tmp_path / "empty-gitconfig"
    cfg.write_text("")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for k in [*TEST_IDENTITY, "EMAIL", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"]:
        monkeypatch.delenv(k, raising=False)
    yield


def g(repo, *args: str, check: bool = True, identity: bool = True) -> str:
    """Run git for the test itself (fixture building and assertions)."""
    env = dict(os.environ)
    if identity:
        env.update(TEST_IDENTITY)
    proc = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {proc.stderr}")
    return proc.stdout.strip()


def write(root, rel: str, text: str) -> Path:
    p = Path(root) / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def make_repo(path, files: dict[str, str] | None = None, branch: str = "main") -> Path:
    """A repo with one commit holding ``files`` on ``branch``."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    g(path, "init", "-q", "-b", branch)
    for rel, text in (files or {"README.md": "hello\n"}).items():
        write(path, rel, text)
    g(path, "add", "-A")
    g(path, "commit", "-q", "-m", "initial")
    return path


def commit_on(repo, branch: str, files: dict[str, str | None], message: str,
              start: str | None = None) -> str:
    """Commit ``files`` (None deletes) on ``branch`` (created from ``start``) via a throwaway
    worktree, leaving the main checkout where it was. Returns the commit."""
    repo = Path(repo)
    if start is not None:
        g(repo, "branch", branch, start)
    wt = repo.parent / f"wt-{branch.replace('/', '-')}-{len(list(repo.parent.iterdir()))}"
    g(repo, "worktree", "add", "-q", str(wt), branch)
    try:
        for rel, text in files.items():
            if text is None:
                g(wt, "rm", "-q", rel)
            else:
                write(wt, rel, text)
        g(wt, "add", "-A")
        g(wt, "commit", "-q", "-m", message)
        return g(wt, "rev-parse", "HEAD")
    finally:
        g(repo, "worktree", "remove", "--force", str(wt))


def snapshot_files(root) -> dict[str, bytes]:
    """Every file under ``root`` except .git internals, for "nothing changed" assertions."""
    root = Path(root)
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if rel.parts[0] == ".git" or not p.is_file():
            continue
        out[rel.as_posix()] = p.read_bytes()
    return out


def all_refs(repo) -> dict[str, str]:
    out = g(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    return dict(line.split(" ", 1) for line in out.splitlines() if line)


INTEG = "baton/plan/integration"


def landing_repo(tmp_path: Path, monkeypatch) -> Path:
    """A repository of one commit for landing tests: an identity of its own in its config
    (a name with the crud git trims around it), the plan's integration branch, git's event
    trace on (`git_started`), and nothing learnt yet of who commits (`commit_object`)."""
    from baton_tui.gitops import commit_object

    commit_object._LEARNT.clear()
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    g(repo, "config", "user.name", "  Ann Person. ")
    g(repo, "config", "user.email", "ann@example.com")
    g(repo, "branch", INTEG)
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(tmp_path / "trace.json"))
    return repo


def git_started(tmp_path: Path, command: str) -> int:
    """How many git processes with `command` in their argv git's event trace saw start."""
    trace = tmp_path / "trace.json"
    events = [json.loads(line) for line in trace.read_text().splitlines()] \
        if trace.exists() else []
    return sum(1 for e in events if e.get("event") == "start" and command in e["argv"])


class Spawned:
    """Counts git processes started through gitops (every call goes through subprocess.run)."""

    def __init__(self, monkeypatch):
        self.argvs: list[list[str]] = []
        real = subprocess.run

        def counting(argv, *args, **kwargs):
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if argv and argv[0] == "git" and caller.startswith("baton_tui."):
                self.argvs.append(list(argv))
            return real(argv, *args, **kwargs)

        monkeypatch.setattr(subprocess, "run", counting)  # gitops calls it so

    def commands(self) -> list[str]:
        """Each process's git command, past its `-c` settings."""
        names = []
        for argv in self.argvs:
            words = argv[1:]
            while len(words) > 2 and words[0] == "-c":
                words = words[2:]
            names.append(words[0])
        return names

    def __len__(self):
        return len(self.argvs)
