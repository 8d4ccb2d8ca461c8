"""The app reads `[keys]` alone before its first frame and validates the rest of the
configuration right after it: a broken configuration still ends `baton` with its one line
and exit code 2, and the keys are the merged ones."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from baton_tui.core.errors import BatonError
from baton_tui.workspace import Workspace

BIN = Path(sys.executable).parent


def _personal(home: Path, text: str) -> None:
    folder = home / ".config" / "baton"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text)


def test_keys_are_read_merged_without_pydantic(repo, isolated_env):
    (repo / "baton.toml").write_text('[keys]\napprove = "ctrl+a"\nquit = "ctrl+q"\n')
    _personal(isolated_env, '[keys]\napprove = "ctrl+b"\n')
    probe = ("import sys\nfrom baton_tui.workspace import Workspace\n"
             "keys = Workspace().keys()\n"
             "print(sorted(keys.items()), 'pydantic' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=repo, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == "[('approve', 'ctrl+b'), ('quit', 'ctrl+q')] False"
    ws = Workspace(repo)  # the same keys the validated configuration holds
    assert ws.keys() == dict(ws.config.keys) == {"approve": "ctrl+b", "quit": "ctrl+q"}
    ws.close()


def test_keys_that_are_not_strings_give_the_configurations_own_error(repo):
    (repo / "baton.toml").write_text("[keys]\napprove = 3\n")
    ws = Workspace(repo)
    with pytest.raises(BatonError, match="keys.approve"):
        ws.keys()
    ws.close()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_broken_configuration_still_ends_baton_with_its_one_line(repo, isolated_env):
    (repo / "baton.toml").write_text('[limits]\nmax_parallel = "4"\n')
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "TERM": "xterm-256color",
           "PS1": "$ "}
    socket = f"baton-config-{repo.parent.name}"
    tmux = ["tmux", "-L", socket]
    subprocess.run([*tmux, "new-session", "-d", "-s", "s", "-x", "120", "-y", "30", "-c",
                    str(repo), "/bin/sh"], env=env, check=True, timeout=30)
    try:
        subprocess.run([*tmux, "send-keys", "-t", "s", "-l", 'baton; echo "EXIT=$?"'],
                       env=env, check=True, timeout=30)
        subprocess.run([*tmux, "send-keys", "-t", "s", "Enter"], env=env, check=True,
                       timeout=30)
        deadline, screen = time.monotonic() + 60, ""
        while time.monotonic() < deadline and not re.search(r"EXIT=\d", screen):
            time.sleep(0.2)
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", "s"], env=env,
                                    capture_output=True, text=True, timeout=30).stdout
    finally:
        subprocess.run([*tmux, "kill-server"], env=env, timeout=30)
    assert "EXIT=2" in screen, screen
    said = [line for line in screen.splitlines() if line.startswith("baton: ")]
    assert len(said) == 1 and "baton.toml" in said[0] and "max_parallel" in said[0], screen
