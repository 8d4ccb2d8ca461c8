"""Aider research that runs commands: rounds of Aider, its proposed commands run by its `/run`.

Aider has no shell tool, and headless (`--yes-always`) it never runs a command its reply
proposes: that confirmation needs an explicit yes. Its own `/run` does run one, adding the
output to the chat. So a research task on Aider runs as rounds, at most `ROUNDS`: Aider
answers; when its reply proposes commands in a ```bash block and does not report yet, the next
round restores the chat, has Aider `/run` each command (`--load`, in its throwaway worktree,
where what they write is discarded) and asks it to go on with their output in view. A reply
with a `BATON:` line, or one that proposes nothing, ends the task; this module exits as the
last Aider did. The planner never runs this way (it reads the person's own checkout).

Usage: python -m baton_tui.players.aider_research FOLDER -- AIDER_ARGV… (the first round's;
its `--message-file` is replaced by each later round's message). The reply is read from
Aider's chat history file (never the prompt or a command's output); every round's output is
this process's output, so Baton reads them as one log.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from baton_tui.paths import write_private

ROUNDS = 5
FENCE = re.compile(r"^```(?:bash|sh|shell|console)\s*$(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
REPORT = re.compile(r"^\s*BATON:\s*(done|failed)\b", re.IGNORECASE | re.MULTILINE)
CONTINUE = ("Aider ran the commands you proposed; their output is in the chat above. Go on "
            "with the research: propose more commands the same way, or end your reply with the "
            "`BATON: done <findings>` line (or `BATON: failed <reason>`).")
HOW = ("\n\nYou can run commands (the tests, a linter) in this task's throwaway worktree: put "
       "them in a ```bash block, one a line, and end that reply there, without a BATON line. "
       "Aider runs them and shows you their output; what they write here is discarded.")


def proposed(reply: str) -> list[str]:
    """The commands a reply proposes (```bash blocks; a leading `$ ` is a prompt, not part of
    the command), unless it already reports."""
    if REPORT.search(reply):
        return []
    commands = []
    for block in FENCE.findall(reply):
        for line in block.splitlines():
            line = line.strip().removeprefix("$ ").strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def last_reply(history: str) -> str:
    """Aider's last reply in its chat history file: after the last `#### ` line (what it was
    asked), without its own `> ` notes — never the prompt, nor a command's output."""
    lines = history.splitlines()
    asked = max((i for i, line in enumerate(lines) if line.startswith("#### ")), default=-1)
    return "\n".join(line for line in lines[asked + 1:] if not line.startswith(">"))


def _with_message(argv: list[str], message: Path, extra: list[str]) -> list[str]:
    out = list(argv)
    out[out.index("--message-file") + 1] = str(message)
    return [*out, *extra]


def _run(argv: list[str]) -> int:
    """One Aider round; its output is ours (the attempt's log)."""
    return subprocess.run(argv, stdin=subprocess.DEVNULL).returncode


def main(args: list[str]) -> int:
    if "--" not in args or args.index("--") != 1:
        print("usage: aider_research FOLDER -- AIDER_ARGV…", file=sys.stderr)
        return 2
    folder, argv = Path(args[0]), args[2:]
    history = Path(argv[argv.index("--chat-history-file") + 1])
    code = _run(argv)
    for round_no in range(2, ROUNDS + 1):
        try:
            commands = proposed(last_reply(history.read_text(encoding="utf-8")))
        except OSError:
            commands = []
        if code != 0 or not commands:
            break
        load = write_private(folder / f"aider-run-{round_no}.txt",
                             "".join(f"/run {c}\n" for c in commands))
        message = write_private(folder / f"aider-continue-{round_no}.md", CONTINUE)
        restore = [] if "--restore-chat-history" in argv else ["--restore-chat-history"]
        code = _run(_with_message(argv, message, [*restore, "--load", str(load)]))
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
