"""`q` while agents run asks first: leaving is cheap, but the person should know what the
agents do without the app (go on in the conductor, or — in the demo — pause)."""

from __future__ import annotations

from textual.binding import Binding

from baton_tui.tui.screens.pickers import ConfirmModal

GOES_ON = ("They go on without the app, in Baton's conductor; `baton` opens the app on the "
           "run again, `baton status` reads it from any terminal.")


def quit_question(running: int, leaving: str | None = None) -> str:
    """What quitting does to the `running` agents (`leaving`: the front end's own words)."""
    agents = "1 agent is" if running == 1 else f"{running} agents are"
    return f"{agents} running. {leaving or GOES_ON}"


class QuitModal(ConfirmModal):
    """y, enter or q again quits; n or escape stays."""

    BINDINGS = [Binding("escape,n", "cancel", "stay", id="quit-no"),
                Binding("y,enter,q", "yes", "quit", id="quit-yes")]

    def __init__(self, running: int, leaving: str | None = None) -> None:
        super().__init__("quit Baton?", quit_question(running, leaving))
        self.hint = "q/y quit · n/esc stay"
