"""An agent's working directory is its worktree, whatever PWD the person's shell hands on.

Real CLIs are proven in tests/test_real_players.py; this is the same promise for any agent a
person brings (a custom player is often a shell script, and scripts trust $PWD).
"""

from __future__ import annotations

import sys

from helpers.core import git
from helpers.run_kit import load_plan, task, write_config


def test_a_custom_players_pwd_is_its_worktree(repo, baton):
    # Not a shell script: sh itself resets a PWD that is not its directory; programs do not.
    agent = [sys.executable, "-c", "import os, subprocess; pwd = os.environ['PWD']; "
             "open(os.path.join(pwd, 'where.txt'), 'w').write(pwd); "
             "subprocess.run(['baton', 'report', 'done', '--summary', 'wrote it'], check=True)"]
    write_config(repo, {"agent": agent})
    load_plan(baton, [task(1, "Where")])
    result = baton("run", "--approve", env={"PWD": str(repo), "OLDPWD": str(repo)})
    assert result.returncode == 0, result.stdout + result.stderr
    status = baton.json("status", "--json")
    assert status["tasks"][0]["state"] == "landed"
    assert not (repo / "where.txt").exists()
    where = git(repo, "show", f"baton/{status['plan']['slug']}/1-where:where.txt")
    assert where == status["tasks"][0]["worktree"]
