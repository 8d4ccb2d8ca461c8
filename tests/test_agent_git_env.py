"""No agent writes outside its worktree when the person's shell points git elsewhere.

A person may run Baton with GIT_DIR / GIT_WORK_TREE / GIT_INDEX_FILE set (from a git hook, or
because they work that way). Git obeys those over the working directory, so an agent's
`git add` in its worktree would stage the person's checkout into the person's index. The
attempt shim drops them from every agent's environment. Here a custom player (the kind a
person writes as a shell script) and every real CLI (tests/helpers/real_players.py) work under
such an environment; the person's index, tree and branch stay as they were.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import write_plan
from helpers.core import git
from helpers.real_cli_kit import assert_contained, attempt_logs, run, task_of
from helpers.real_players import PLAYERS
from helpers.run_kit import load_plan, task, write_config

SHELL_WORK = ("echo work > made.txt && git add -A && git status --porcelain -- made.txt > status.txt && "
              "(env | grep -E '^GIT_(DIR|WORK_TREE|INDEX_FILE)=' > gitenv.txt || true)")


def redirecting_env(repo: Path) -> dict[str, str]:
    """The person's git variables, all aimed at their own checkout."""
    return {"GIT_DIR": str(repo / ".git"), "GIT_WORK_TREE": str(repo),
            "GIT_INDEX_FILE": str(repo / ".git" / "index"), "PWD": str(repo)}


def person_untouched(repo: Path, head: str) -> None:
    assert git(repo, "rev-parse", "HEAD") == head, "the person's branch moved"
    assert git(repo, "diff", "--cached", "--name-only") == "", "the person's index was staged"
    assert git(repo, "diff", "--name-only") == "", "the person's tracked files changed"
    for name in ("made.txt", "status.txt", "gitenv.txt"):
        assert not (repo / name).exists(), name


def test_a_custom_players_git_stays_in_its_worktree(repo, baton):
    write_config(repo, {"agent": ["sh", "-c", SHELL_WORK
                                  + ' && baton report done --summary "staged in my worktree"']})
    load_plan(baton, [task(1, "Stage")])
    head = git(repo, "rev-parse", "HEAD")
    result = baton("run", "--approve", env=redirecting_env(repo))
    assert result.returncode == 0, result.stdout + result.stderr
    status = baton.json("status", "--json")
    assert status["tasks"][0]["state"] == "landed", status["tasks"][0]
    person_untouched(repo, head)
    branch = f"baton/{status['plan']['slug']}/1-stage"
    # The agent's git saw its own worktree: its index held its file, and no GIT_* reached it.
    assert git(repo, "show", f"{branch}:status.txt") == "A  made.txt"
    assert git(repo, "show", f"{branch}:gitenv.txt") == ""
    assert git(repo, "show", f"{branch}:made.txt") == "work"


@pytest.fixture(params=PLAYERS, ids=lambda p: p.name)
def player(request):
    request.param.require()
    return request.param


def test_every_real_cli_stays_in_its_worktree_whatever_git_variables_it_inherits(
        player, server, baton, repo, tmp_path):
    """Each real CLI writes a relative file and (where it has a shell) runs git in its
    worktree, with the person's GIT_DIR / GIT_WORK_TREE / GIT_INDEX_FILE in its environment."""
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Git env", "prompt": "Create rel.txt.", "player": player.name,
         "mode": "build"}])
    assert baton("plan", "--from", str(plan)).returncode == 0
    head = git(repo, "rev-parse", "HEAD")
    server.add_turns(player.conversation(
        player.write(Path("rel.txt"), "relative\n"),
        player.shell(SHELL_WORK),
        player.shell('baton report done --summary "wrote under a redirecting git env"'),
        {"text": "Reported."}))
    result = run(baton, player.env(server, **redirecting_env(repo)))
    assert result.returncode == 0, attempt_logs(repo)[-4000:]
    assert task_of(baton, 1)["state"] == "landed"
    person_untouched(repo, head)
    branch = f"baton/{baton.json('status', '--json')['plan']['slug']}/1-git-env"
    assert_contained(repo, branch, "rel.txt")
    if "where.txt" in player.relative_files:   # a CLI with a shell ran the git commands
        assert "made.txt" in git(repo, "show", f"{branch}:status.txt")
        assert git(repo, "show", f"{branch}:gitenv.txt") == ""


def test_every_real_cli_works_for_a_person_with_no_git_identity(
        player, server, baton, repo, tmp_path):
    """A fresh machine: no user.name or user.email anywhere (an empty global config, no
    GIT_AUTHOR_* / GIT_COMMITTER_*), and the repository's git config read-only to agents.
    Aider, which commits nothing here but asks git who the person is, must not crash on it:
    every real CLI lands its task."""
    bare = tmp_path / "empty.gitconfig"
    bare.write_text("[init]\n\tdefaultBranch = main\n")
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "No identity", "prompt": "Create rel.txt.", "player": player.name,
         "mode": "build"}])
    assert baton("plan", "--from", str(plan)).returncode == 0
    server.add_turns(player.conversation(
        player.write(Path("rel.txt"), "relative\n"),
        player.shell('baton report done --summary "wrote it without an identity"'),
        {"text": "Reported."}))
    assert not {"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                "GIT_COMMITTER_EMAIL", "EMAIL"} & set(os.environ)
    assert "user." not in git(repo, "config", "--local", "--list")
    result = run(baton, player.env(server, GIT_CONFIG_GLOBAL=str(bare)))
    assert result.returncode == 0, attempt_logs(repo)[-4000:]
    assert task_of(baton, 1)["state"] == "landed"
    branch = f"baton/{baton.json('status', '--json')['plan']['slug']}/1-no-identity"
    assert_contained(repo, branch, "rel.txt")


IDENTITY_ONLY_IN_VARIABLES = {"GIT_AUTHOR_NAME": "Pat Person", "GIT_AUTHOR_EMAIL": "pat@example.org",
                              "GIT_COMMITTER_NAME": "Pat Person",
                              "GIT_COMMITTER_EMAIL": "pat@example.org"}
# As Aider does: ask git who the person is; finding no one, write an identity into the config.
ASKS_WHO = ('n=$(git config user.name) || { git config user.name Someone || exit 3; n=$(git '
            'config user.name); }; e=$(git config user.email); echo "$n <$e>" > who.txt && '
            'baton report done --summary "knew who I am"')


def test_an_identity_only_in_git_variables_reaches_an_agent_that_asks_git_config(
        repo, baton, tmp_path):
    """The person's identity lives only in GIT_AUTHOR_* / GIT_COMMITTER_* (CI, containers):
    no config file names them. An agent asking `git config user.name` gets theirs, and
    never tries to write the repository's (read-only) git config."""
    bare = tmp_path / "empty.gitconfig"
    bare.write_text("[init]\n\tdefaultBranch = main\n")
    write_config(repo, {"agent": ["sh", "-c", ASKS_WHO]})
    load_plan(baton, [task(1, "Who")])
    assert "user." not in git(repo, "config", "--local", "--list")
    result = baton("run", "--approve", env={**IDENTITY_ONLY_IN_VARIABLES,
                                            "GIT_CONFIG_GLOBAL": str(bare)})
    assert result.returncode == 0, result.stdout + result.stderr
    status = baton.json("status", "--json")
    assert status["tasks"][0]["state"] == "landed", status["tasks"][0]
    branch = f"baton/{status['plan']['slug']}/1-who"
    assert git(repo, "show", f"{branch}:who.txt") == "Pat Person <pat@example.org>"
    assert "user." not in git(repo, "config", "--local", "--list")
    assert git(repo, "log", "-1", "--format=%an <%ae>", branch) == "Pat Person <pat@example.org>"


def test_the_real_aider_works_for_an_identity_only_in_git_variables(server, baton, repo,
                                                                     tmp_path):
    """The same person, with the real Aider: it asks git who they are and must not crash
    writing the read-only git config; its task lands."""
    aider = next(p for p in PLAYERS if p.name == "aider")
    aider.require()
    bare = tmp_path / "empty.gitconfig"
    bare.write_text("[init]\n\tdefaultBranch = main\n")
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Identity in variables", "prompt": "Create rel.txt.",
         "player": "aider", "mode": "build"}])
    assert baton("plan", "--from", str(plan)).returncode == 0
    server.add_turns(aider.conversation(
        aider.write(Path("rel.txt"), "relative\n"),
        aider.shell('baton report done --summary "wrote it"'),
        {"text": "Reported."}))
    assert "user." not in git(repo, "config", "--local", "--list")
    result = run(baton, aider.env(server, GIT_CONFIG_GLOBAL=str(bare),
                                  **IDENTITY_ONLY_IN_VARIABLES))
    assert result.returncode == 0, attempt_logs(repo)[-4000:]
    assert task_of(baton, 1)["state"] == "landed"
    assert "Traceback" not in attempt_logs(repo)
    branch = f"baton/{baton.json('status', '--json')['plan']['slug']}/1-identity-in-variables"
    assert_contained(repo, branch, "rel.txt")
