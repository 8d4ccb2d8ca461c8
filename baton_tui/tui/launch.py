"""Build the App (one factory for the CLI and the tests) and run it."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, Callable

from baton_tui import api
from baton_tui.tui import bindings
from baton_tui.tui.app import BatonApp
from baton_tui.tui.engine_planner import EnginePlanner
from baton_tui.tui.planner_port import Planner

if TYPE_CHECKING:
    from baton_tui.api import Workspace

# Textual hands each frame to a writer thread, which needs the interpreter's lock to write it
# to the terminal. While the UI thread goes on with the work a frame leaves (the cards drawn
# ahead, the key bar), the writer waited Python's default switch interval, 5 ms, for its turn:
# every key's paint reached the terminal up to 5 ms after it was composed. 1 ms bounds that wait.
FRAME_HANDOFF = 0.001


def make_app(ws: Workspace | None = None, *, planner: Planner | None = None,
             clock: Callable[[], float] = time.time, poll_interval: float = 0.25,
             blink: bool = True, follow_logs: bool = True, detect_players: bool = True,
             shell: Callable[[Any, str], int] | None = None, auto_handoff: bool = True,
             leaving: str | None = None):
    """The BatonApp for `ws` (default: the repository around the current directory).

    Key remapping comes from `[keys]` in the config; unknown binding ids are reported
    on stderr rather than ignored.
    """
    ws = ws or api.open_workspace()
    keys = ws.keys()  # the rest of the configuration is validated after the first frame
    unknown = bindings.unknown_keys(keys)
    if unknown:
        print(f"baton: [keys] names unknown key ids: {', '.join(unknown)} "
              f"(see `?` in the app for the ids)", file=sys.stderr)
    return BatonApp(ws, planner=planner, clock=clock, poll_interval=poll_interval, blink=blink,
                    follow_logs=follow_logs, detect_players=detect_players,
                    keymap=bindings.keymap_from_config(keys), shell=shell,
                    auto_handoff=auto_handoff, leaving=leaving)


def run_app(leaving: str | None = None) -> int:
    """`baton` with no command: open the app; quitting leaves a run going in its conductor
    (`leaving`: what quitting does instead, said before quitting while agents run)."""
    ws = api.open_workspace()
    app = make_app(ws, planner=EnginePlanner(ws.root), leaving=leaving)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(FRAME_HANDOFF)
    try:
        result = app.run()
        if app.config_error is not None:  # found after the first frame: said as it would be
            raise app.config_error         # before it (one line, exit code 2)
    finally:
        sys.setswitchinterval(switch)
        app.ws.close()
    return int(result or 0) if app.return_code in (None, 0) else int(app.return_code)
