"""Run a command that sees some files of the checkout as empty: the planner's view.

A planning CLI loads the repository's instruction files (AGENTS.md, CLAUDE.md, GEMINI.md …)
as its own orders, and not every CLI lets Baton turn that off (Gemini CLI 0.61 only adds to
its context file names). The planner reads them as data, quoted in its prompt; the CLI itself
gets an empty file at each of their paths — bind-mounted in a mount namespace of its own
(`readonly.enter`), so nothing changes for anyone else. Where namespaces are not available it
says so on stderr (in the planner's log) and runs the command as it is.

    python -m baton_tui.runners.masked EMPTY PATH... -- COMMAND...

A process of its own, not a `preexec_fn`: the planner runs on a thread of the app or of
`baton serve`, and forking a threaded process into ctypes and mount calls is not safe.
"""

from __future__ import annotations

import os
import sys

from baton_tui.runners import readonly


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") < 1 or argv.index("--") == len(argv) - 1:
        print("usage: python -m baton_tui.runners.masked EMPTY PATH... -- COMMAND...",
              file=sys.stderr)
        return 2
    split = argv.index("--")
    empty, paths, command = argv[0], argv[1:split], argv[split + 1:]
    if paths:
        why = readonly.available()
        try:
            if why:
                raise OSError(why)
            readonly.enter({"rw": [], "ro": [], "masks": paths, "empty": [empty]})
        except OSError as exc:
            print(f"baton: the repository's instruction files stay visible to the planning CLI "
                  f"({exc}); its prompt says they are data", file=sys.stderr, flush=True)
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"baton: cannot start {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
