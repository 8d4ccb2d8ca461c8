"""End to end, keys only: the real `baton demo --tui` in tmux, from a typed goal through the
planner's question, an edit, approval, a run on the scripted players, a conflict with the
person's own commit, its resolution in the shell the app suspends into, to a merged handoff.

The screen is read with `tmux capture-pane`; every step is keys sent with `tmux send-keys`
(the person's own commit is typed into a second tmux window, as they would).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

BIN = Path(sys.executable).parent


class Tmux:
    def __init__(self, socket: str, env: dict[str, str]):
        self.socket, self.env = socket, env

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True,
                              text=True, env=self.env, timeout=30).stdout

    def keys(self, target: str, *keys: str, literal: bool = False) -> None:
        self.run("send-keys", "-t", target, *(["-l"] if literal else []), *keys)
        time.sleep(0.15)

    def type(self, target: str, text: str) -> None:
        self.keys(target, text, literal=True)

    def screen(self, target: str) -> str:
        return self.run("capture-pane", "-p", "-t", target)

    def wait(self, target: str, words: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.screen(target)
            if words in shown:
                return shown
            time.sleep(0.3)
        raise AssertionError(f"{words!r} never showed; the screen:\n{self.screen(target)}")


def test_goal_to_merged_handoff_with_a_conflict_keys_only(tmp_path, isolated_env):
    home = isolated_env
    demo = tmp_path / "demo"
    repo = demo / "textstats"
    env = {"HOME": str(home), "PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin", "TERM": "xterm-256color",
           "SHELL": "/bin/sh", "LANG": "C.UTF-8", "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
           "GIT_CONFIG_NOSYSTEM": "1", "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_DATA_HOME": str(home / ".local" / "share"), "PS1": "$ "}
    tmux = Tmux(f"baton-e2e-{tmp_path.name}", env)
    tmux.run("new-session", "-d", "-s", "e2e", "-x", "120", "-y", "40", "-n", "app",
             "/bin/sh")
    try:
        app = "e2e:app"
        tmux.type(app, f"baton demo --tui --dir {demo} --keep")
        tmux.keys(app, "Enter")
        tmux.wait(app, "Say what you want built")
        tmux.type(app, "Add word and line counts")
        tmux.keys(app, "Enter")
        tmux.wait(app, "recommended: both", timeout=90)
        tmux.keys(app, "Enter")  # take the recommendation
        tmux.wait(app, "6 tasks", timeout=90)
        # An edit: task 6's title (cards go in dependency order: 1 2 3 4 6 5).
        for _ in range(4):
            tmux.keys(app, "j")
        tmux.keys(app, "t")
        tmux.wait(app, "title of #6")
        tmux.keys(app, "C-u")
        tmux.type(app, "Document the CLI")
        tmux.keys(app, "Enter")
        tmux.wait(app, "Document the CLI")
        tmux.keys(app, "a")
        tmux.wait(app, "5 build tasks on anthropic")
        tmux.keys(app, "Enter")
        tmux.wait(app, "· approved ·")
        # The person commits their own README on main meanwhile (a second window).
        tmux.run("new-window", "-d", "-t", "e2e", "-n", "me", "/bin/sh")
        tmux.type("e2e:me", f"cd {repo} && printf '# textstats\\n\\nMine, not the agent.\\n' "
                            "> README.md && git commit -qam 'my README' && echo COMMITTED")
        tmux.keys("e2e:me", "Enter")
        tmux.wait("e2e:me", "COMMITTED")
        tmux.keys(app, "E")
        tmux.wait(app, "landed task(s)", timeout=240)  # the handoff opens by itself
        tmux.keys(app, "M")
        tmux.wait(app, "merge onto main?", timeout=30)
        tmux.keys(app, "y")
        tmux.wait(app, "stopped at task 6", timeout=60)
        tmux.keys(app, "s")  # the app suspends into /bin/sh, the merge started in the repo
        tmux.wait(app, "Edit those files", timeout=30)
        tmux.type(app, "printf '# textstats\\n\\nMine, and the usage.\\n' > README.md && "
                       "git add README.md && git commit -q --no-edit && exit")
        tmux.keys(app, "Enter")
        tmux.wait(app, "landed work is on main", timeout=60)
        tmux.keys(app, "Escape")
        tmux.wait(app, "merged", timeout=30)
        tmux.keys(app, "q")
        tmux.wait(app, "the sample is kept at", timeout=30)
    finally:
        tmux.run("kill-server")
    status = json.loads(subprocess.run([str(BIN / "baton"), "status", "--json"], cwd=repo,
                                       capture_output=True, text=True, env=env).stdout)
    assert status["plan"]["state"] == "merged"
    assert {t["id"]: t["state"] for t in status["tasks"]} == {
        1: "done", 2: "merged", 3: "merged", 4: "merged", 5: "merged", 6: "merged"}
    assert (repo / "README.md").read_text() == "# textstats\n\nMine, and the usage.\n"
    tests = subprocess.run(["python3", "-m", "unittest", "-q"], cwd=repo, capture_output=True,
                           text=True)
    assert tests.returncode == 0, tests.stderr
