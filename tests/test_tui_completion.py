"""Shell completion for `baton` (argcomplete): the shell code, and real bash completing."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BATON = str(Path(sys.executable).with_name("baton"))


def ask(line: str) -> list[str]:
    """What `baton` answers a completing shell for `line` (argcomplete's fd 8 protocol)."""
    env = {"COMP_LINE": line, "COMP_POINT": str(len(line)), "_ARGCOMPLETE": "1",
           "_ARGCOMPLETE_IFS": "\n", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(["bash", "-c", f"'{BATON}' 8>&1 9>/dev/null"], env=env,
                         capture_output=True, text=True, timeout=60)
    return out.stdout.split()


def test_commands_options_and_choices_complete():
    assert ask("baton han") == ["handoff"]
    assert set(ask("baton handoff ")) >= {"review", "merge"}
    assert ask("baton plan --sk") == ["--skill"]
    assert set(ask("baton plan --skill ")) == {"grilling", "to-spec"}
    assert set(ask("baton completion ")) >= {"bash", "zsh", "fish"}


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_shell_code(shell):
    out = subprocess.run([BATON, "completion", shell], capture_output=True, text=True)
    assert out.returncode == 0 and "baton" in out.stdout and "_ARGCOMPLETE" in out.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_itself_completes_after_eval():
    script = (f'eval "$(\'{BATON}\' completion bash)"; COMP_WORDS=(baton dem); COMP_CWORD=1; '
              f'COMP_LINE="baton dem"; COMP_POINT=9; _python_argcomplete \'{BATON}\'; '
              'echo "${COMPREPLY[@]}"')
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["demo"], out.stderr
