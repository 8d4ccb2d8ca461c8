"""End to end, keys only: the real `baton demo --tui` in tmux, from a typed goal through the
planner's question, an edit, approval, a run on the scripted players, a conflict with the
person's own commit, its resolution in the shell the app suspends into, to a merged handoff.

The screen is read with `tmux capture-pane`; every step is keys sent with `tmux send-keys`
(the person's own commit is typed into a second tmux window, as they would). At 120×40 and at
80×24, each key the flow needs is the one the screen shows beside what it does — in the key bar
(footer), a dialog's hint, or the help screen (`?`) for a key the bar has no room for — never a
key known in advance.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

BIN = Path(sys.executable).parent
# A key as the screen shows it -> as tmux sends it.
TMUX_KEYS = {"enter": "Enter", "⏎": "Enter", "esc": "Escape", "tab": "Tab", "space": "Space"}


def tmux_key(shown: str) -> str:
    if shown.startswith("^") and len(shown) == 2:
        return f"C-{shown[1].lower()}"
    if shown.startswith("ctrl+"):
        return f"C-{shown.removeprefix('ctrl+')}"
    return TMUX_KEYS.get(shown.lower(), shown)


def key_beside(text: str, does: str) -> str | None:
    """The key shown just before `does` in a key bar ("  a approve  ") or a dialog's hint
    ("─ enter approve · esc cancel ─"), if any."""
    found = re.search(r"(?:^\s?|\s\s|· |─ )(\S+) " + re.escape(does) + r"(?=\s\s|\s*$| ·| ─)",
                      text)
    return tmux_key(found.group(1)) if found else None


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

    def footer(self, target: str) -> str:
        lines = self.screen(target).rstrip("\n").splitlines()
        return lines[-1] if lines else ""

    def key_for(self, target: str, does: str, timeout: float = 30.0) -> str:
        """The key the footer shows for `does` (waiting for it to show)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            key = key_beside(self.footer(target), does)
            if key:
                return key
            time.sleep(0.3)
        raise AssertionError(f"no key for {does!r} in the footer; the screen:\n"
                             f"{self.screen(target)}")

    def press_for(self, target: str, does: str) -> None:
        self.keys(target, self.key_for(target, does))

    def key_from_help(self, target: str, does: str) -> str:
        """A key the footer has no room for: `?` (shown in the footer) lists every key, a
        row each ("  t       title …", "  j, ↓    down …"), paged through until `does` shows."""
        self.press_for(target, "help")
        self.wait(target, "remap by id")
        row = re.compile(r"│\s+([^\s,]+)(?:,\s\S+)*\s{2,}" + re.escape(does) + r"(?=\s)")
        for _ in range(8):
            shown = self.screen(target)
            found = row.search(shown)
            if found:
                break
            self.keys(target, "PageDown")
        self.keys(target, "Escape")
        # Gone before the next key: an escape with a key right behind it reads as alt+key.
        self.wait(target, "remap by id", gone=True)
        assert found, f"no key for {does!r} in the help screen:\n{shown}"
        return tmux_key(found.group(1))

    def hint_key(self, target: str, does: str) -> str:
        """The key a dialog's hint (on its bottom border: "enter approve · esc cancel")
        shows for `does`."""
        shown = self.screen(target)
        hints = [line for line in shown.splitlines() if "╯" in line and " · " in line]
        key = next((k for line in hints if (k := key_beside(line, does))), None)
        assert key, f"no key for {does!r} in a dialog's hint:\n{shown}"
        return key

    def wait(self, target: str, words: str, timeout: float = 60.0, gone: bool = False) -> str:
        """Until `words` show (or, `gone`, no longer show)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.screen(target)
            if (words in shown) != gone:
                return shown
            time.sleep(0.3)
        raise AssertionError(f"{words!r} never {'went' if gone else 'showed'}; the screen:\n"
                             f"{self.screen(target)}")


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_goal_to_merged_handoff_with_a_conflict_keys_only(tmp_path, isolated_env, size):
    home = isolated_env
    demo = tmp_path / "demo"
    repo = demo / "textstats"
    env = {"HOME": str(home), "PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin", "TERM": "xterm-256color",
           "SHELL": "/bin/sh", "LANG": "C.UTF-8", "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
           "GIT_CONFIG_NOSYSTEM": "1", "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_DATA_HOME": str(home / ".local" / "share"), "PS1": "$ "}
    # One tmux server per test: both sizes may run at once on two workers, and their
    # tmp_path names are alike, so the socket is named by the worker's process too.
    tmux = Tmux(f"baton-e2e-{os.getpid()}-{tmp_path.name}", env)
    tmux.run("new-session", "-d", "-s", "e2e", "-x", str(size[0]), "-y", str(size[1]), "-n", "app",
             "/bin/sh")
    try:
        app = "e2e:app"
        tmux.type(app, f"baton demo --tui --dir {demo} --keep")
        tmux.keys(app, "Enter")
        tmux.wait(app, "Say what you want")
        tmux.type(app, "Add word and line counts")
        tmux.keys(app, "Enter")
        tmux.wait(app, "recommended", timeout=90)
        tmux.keys(app, "Enter")  # take the recommendation
        tmux.wait(app, "6 tasks", timeout=90)
        # An edit: task 6's title (cards go in dependency order: 1 2 3 4 6 5).
        down, title = tmux.key_from_help(app, "down"), tmux.key_from_help(app, "title")
        for _ in range(4):
            tmux.keys(app, down)
        tmux.keys(app, title)
        tmux.wait(app, "title of #6")
        tmux.keys(app, "C-u")
        tmux.type(app, "Document the CLI")
        tmux.keys(app, tmux.hint_key(app, "save"))
        tmux.wait(app, "Document the CLI")
        tmux.press_for(app, "approve")
        tmux.wait(app, "5 build tasks on anthropic")
        tmux.keys(app, tmux.hint_key(app, "approve"))
        tmux.wait(app, "approved")
        # The person commits their own README on main meanwhile (a second window).
        tmux.run("new-window", "-d", "-t", "e2e", "-n", "me", "/bin/sh")
        tmux.type("e2e:me", f"cd {repo} && printf '# textstats\\n\\nMine, not the agent.\\n' "
                            "> README.md && git commit -qam 'my README' && echo COMMITTED")
        tmux.keys("e2e:me", "Enter")
        tmux.wait("e2e:me", "COMMITTED")
        tmux.press_for(app, "run")
        tmux.wait(app, "landed tasks", timeout=240)  # the handoff opens by itself
        tmux.press_for(app, "merge all")
        tmux.wait(app, "merge onto main?", timeout=30)
        tmux.keys(app, tmux.hint_key(app, "yes"))
        tmux.wait(app, "stopped at task 6", timeout=60)
        # the app suspends into /bin/sh, the merge started in the repo
        tmux.press_for(app, "resolve in a shell")
        tmux.wait(app, "Edit those files", timeout=30)
        tmux.type(app, "printf '# textstats\\n\\nMine, and the usage.\\n' > README.md && "
                       "git add README.md && git commit -q --no-edit && exit")
        tmux.keys(app, "Enter")
        tmux.wait(app, "landed work is on main", timeout=60)
        tmux.press_for(app, "back")
        tmux.wait(app, "merged", timeout=30)
        tmux.press_for(app, "quit")
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
